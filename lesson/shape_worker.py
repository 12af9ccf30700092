"""Notebook 07's second process: the same request stream served again in a fresh Python.

    python -m lesson.shape_worker --lengths 5 17 33 --buckets 64 --hidden 256 --out stream.json

first pays the process's one-off compile costs on an unrelated function, as notebook 07 does
(its seconds are written apart, as "warmup_s"), then runs every strategy of lesson.shapes over the
lengths in this new process and writes what it measured under "strategies" (compiles, compile
seconds, cache hits and misses per strategy); notebook 07 uses it to show what an on-disk cache
saves a second process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch
import torch._dynamo

from analysis.compiles import recompile_limit_name
from helpers.environment import steady_heap
from analysis.contention import spare_cpu_threads
from analysis.timing import time_once
from helpers.backend import select_backend
from lesson.rmsnorm import rmsnorm_naive
from lesson.shapes import make_strategies, run_stream


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lesson.shape_worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--buckets", type=int, nargs="+", required=True)
    parser.add_argument("--hidden", type=int, required=True)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--recompile-limit", type=int, default=8)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    # the kernel's thread policy (helpers.start): Inductor's generated code, and so its cache key,
    # depends on the thread count, and a process with other threads misses every cached graph
    torch.set_num_threads(spare_cpu_threads(torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")))
    steady_heap()  # the heap thresholds the notebooks time with (helpers.environment)
    backend = select_backend(args.backend)
    dtype = getattr(torch, args.dtype)
    weight = torch.ones(args.hidden, device=backend.device, dtype=dtype)
    setattr(torch._dynamo.config, recompile_limit_name(), args.recompile_limit)
    # the one-off costs of a process's first compile (loading the compiler, among others), paid on an
    # unrelated function as notebook 07 pays them, so that they are not charged to the first strategy
    warmup_s, _ = time_once(
        lambda: torch.compile(lambda t: t * 2 + 1, backend=backend.compile_backend)(torch.ones(3, device=backend.device)), backend
    )
    result = {}
    options = dict(dynamic_ok=backend.name != "neuron", pad_on_host=backend.name == "neuron")  # as notebook 07 serves it
    for name in make_strategies(rmsnorm_naive, backend.compile_backend, args.buckets, **options):
        torch._dynamo.reset()
        fn = make_strategies(rmsnorm_naive, backend.compile_backend, args.buckets, **options)[name]
        rows = run_stream(lambda x, fn=fn: fn(x, weight, 1e-6), args.lengths, args.hidden, dtype, backend)
        result[name] = {
            "compiles": sum(r["compiled"] for r in rows),
            "compile_s": sum(r["seconds"] for r in rows if r["compiled"]),
            "compile_seconds": [r["seconds"] for r in rows if r["compiled"]],  # each compile, in order
            "cache_hits": sum(r["cache_hits"] for r in rows),
            "cache_misses": sum(r["cache_misses"] for r in rows),
        }
    Path(args.out).write_text(json.dumps({"warmup_s": warmup_s, "strategies": result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
