"""How much this machine's speed drifts within one process, with nothing else changing.

    python benchmarks/drift_benchmark.py [--seconds 60] [--tokens 4096] [--hidden 4096] [--backend cpu]

One process, one input, no compiles and no profiler: it times the naive RMSNorm and the copy
floor interleaved (analysis.timing.time_interleaved, 7 rounds) again and again for `--seconds`,
and prints per window the two medians and their paired ratio, then each one's largest deviation
from its median over the windows.

Why: the notebooks of one run time the same call minutes apart, and `make run` reports where
they disagree (series_tools.consistency). This says how much of such a disagreement the machine
alone produces. On this project's shared 2-core CI machine (2026-12-03, two runs of 60 s at the
default shape): the naive call's window medians deviated from their median by up to 11.3% and
12.5% (71.2-84.0 ms, 73.7-86.9 ms), the copy's by 10.2% and 5.7%, their paired ratio by 5.9% and
5.5%. So two notebooks timing the same call a minute apart can differ by 10% or more with
nothing wrong in either; ratios measured in one loop drift about half as much.
This is a benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import statistics
import time

from helpers.environment import configure_allocator

configure_allocator()  # the allocator setting the notebooks measure with, before torch loads

from helpers.backend import select_backend  # noqa: E402 (after the allocator setting)
from analysis.floor import copy_floor  # noqa: E402
from analysis.timing import paired_ratio, time_interleaved  # noqa: E402
from lesson.rmsnorm import make_inputs, rmsnorm_naive  # noqa: E402

EPS = 1e-6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args(argv)

    import torch

    backend = select_backend(args.backend)
    x, weight = make_inputs(args.tokens, args.hidden, "float32", backend, EPS)
    cases = {"naive": lambda: rmsnorm_naive(x, weight, EPS), "copy": lambda: copy_floor(x)}
    windows: list[tuple[float, float, float, float]] = []
    start = time.perf_counter()
    with torch.no_grad():
        while time.perf_counter() - start < args.seconds:
            timings = time_interleaved(cases, backend, repeats=7, warmup=1)
            ratio = paired_ratio(timings, "naive", "copy").median
            windows.append(
                (time.perf_counter() - start, timings["naive"].median_us / 1e3, timings["copy"].median_us / 1e3, ratio)
            )
    print(f"{backend.name}, {args.tokens}x{args.hidden} float32, {len(windows)} windows of 7 interleaved rounds")
    print(f"{'at s':>6} {'naive ms':>9} {'copy ms':>8} {'naive/copy':>11}")
    for at, naive, copy, ratio in windows:
        print(f"{at:6.1f} {naive:9.2f} {copy:8.2f} {ratio:11.2f}")
    print()
    for column, name in ((1, "naive median"), (2, "copy median"), (3, "naive/copy paired ratio")):
        values = [w[column] for w in windows]
        mid = statistics.median(values)
        worst = max(abs(v - mid) / mid for v in values)
        print(f"{name:24s} median {mid:8.2f}  range {min(values):.2f}-{max(values):.2f}  largest deviation {worst:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
