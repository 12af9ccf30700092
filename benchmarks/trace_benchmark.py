"""Benchmark: the series' trace analysis and HTA's, side by side in one run, on a real trace
replicated to about 1,000,000 events.

    python benchmarks/trace_benchmark.py [--events 1000000] [--source FILE] [--keep]

The source (by default the largest recorded trace, data/recorded/, a training trace recorded on
an NVIDIA A100 by the HTA project) is copied end to end in time until the copies hold at least
`--events` events. Each copy is shifted past the one before and gets its own profiler-step
numbers, correlation ids, External ids, event indices and flow ids, so steps, launch-kernel links
and flows stay consistent and unique; metadata events are written once. The replica is plain
JSON in a temporary folder.

Each side then runs in its own fresh Python process, which times its work after its imports and
reports its peak resident memory (ru_maxrss):
- series: `analysis.traces.load_trace` + `step_summary`;
- HTA:    `TraceAnalysis` on the same file + `get_temporal_breakdown` (HTA parses in a forked
          worker process even for one rank; the larger of the two peaks is reported).

The goal (issue 30): the series in at most 0.3x HTA's time, and in at most 3x the file's size in
memory. Timings are read as the ratio within one run: the machine is shared.

The project's former synthetic benchmark trace is gone: HTA cannot read it (its kernels lack the
fields real traces carry), so it could not be timed side by side.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO_ROOT / "data" / "recorded" / "negative_queue_length_values_check__rank0.json.gz"
ID_ARGS = ("correlation", "External id", "Ev Idx")  # per-event ids in `args` that must stay unique
STEP_PREFIX = "ProfilerStep#"
TIME_GOAL, MEMORY_GOAL = 0.3, 3.0  # series/HTA wall time; series peak RSS / file size


def read_trace(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def replicate(source: Path, events: int, out: Path) -> int:
    """Write `source` copied end to end until at least `events` events (see the module
    docstring); returns the number of events written."""
    data = read_trace(source)
    raw = data.pop("traceEvents")
    metadata = [e for e in raw if e.get("ph") == "M"]
    timed = [e for e in raw if e.get("ph") != "M"]
    period = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed) + 1000
    ids = [e["args"][k] for e in timed if isinstance(e.get("args"), dict) for k in ID_ARGS if k in e["args"]]
    ids += [e["id"] for e in timed if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int)]
    id_span = max(ids, default=0) + 1
    step_numbers = [int(e["name"][len(STEP_PREFIX) :]) for e in timed if str(e.get("name", "")).startswith(STEP_PREFIX)]
    step_span = max(step_numbers, default=0) - min(step_numbers, default=0) + 1
    copies = max(1, math.ceil((events - len(metadata)) / len(timed)))

    def shifted(e: dict, k: int) -> dict:
        e = {**e, "ts": e["ts"] + k * period}
        if isinstance(e.get("args"), dict) and any(a in e["args"] for a in ID_ARGS):
            e["args"] = {a: v + k * id_span if a in ID_ARGS and isinstance(v, int) else v for a, v in e["args"].items()}
        if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int):
            e["id"] += k * id_span
        if str(e.get("name", "")).startswith(STEP_PREFIX):
            e["name"] = f"{STEP_PREFIX}{int(e['name'][len(STEP_PREFIX) :]) + k * step_span}"
        return e

    with out.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(data)[:-1] + (", " if data else "") + '"traceEvents": [')
        fh.write(", ".join(json.dumps(e) for e in metadata))
        for k in range(copies):
            fh.write(", " if metadata or k else "")
            fh.write(json.dumps([shifted(e, k) for e in timed])[1:-1])
        fh.write("]}")
    return len(metadata) + copies * len(timed)


def peak_rss_bytes() -> int:
    """The larger peak RSS of this process and of its waited-for children (Linux: KiB units)."""
    return 1024 * max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def run_series(path: Path) -> dict:
    from analysis.steps import step_summary
    from analysis.traces import load_trace

    start = time.perf_counter()
    summary = step_summary(load_trace(path))
    return {"seconds": time.perf_counter() - start, "what": f"{len(summary)} steps"}


def run_hta(path: Path) -> dict:
    import logging
    import warnings

    logging.getLogger("hta").setLevel(logging.ERROR)  # its per-parse timing lines
    warnings.filterwarnings("ignore")  # HTA 0.5.0 uses pandas keywords pandas 3.1 deprecates
    from hta.trace_analysis import TraceAnalysis

    start = time.perf_counter()
    analysis = TraceAnalysis(trace_files={0: str(path)}, trace_dir=str(path.parent))
    temporal = analysis.get_temporal_breakdown(visualize=False)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "what": f"idle {float(temporal['idle_time_pctg'].iloc[0]):.1f}% of rank 0's span"}


SIDES = {"series": run_series, "HTA": run_hta}


def measure(side: str, path: Path) -> dict:
    """Run one side in a fresh interpreter; its result line is JSON on stdout."""
    out = subprocess.run(
        [sys.executable, __file__, "--side", side, "--file", str(path)], cwd=REPO_ROOT, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(f"{side} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="at least this many events in the replica")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the trace to replicate")
    parser.add_argument("--keep", action="store_true", help="keep the replica (its path is printed)")
    parser.add_argument("--side", choices=sorted(SIDES), help=argparse.SUPPRESS)  # internal: one side, in a child
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.side:
        sys.path.insert(0, str(REPO_ROOT))
        result = SIDES[args.side](args.file)
        print(json.dumps({**result, "peak_rss_bytes": peak_rss_bytes()}))
        return 0

    folder = Path(tempfile.mkdtemp(prefix="trace_benchmark_"))
    path = folder / "replica.json"
    n = replicate(args.source, args.events, path)
    size = path.stat().st_size
    print(
        f"replica of {args.source.name}: {n:,} events, {size / 2**20:,.0f} MiB of plain JSON"
        + (f" at {path}" if args.keep else "")
    )
    results = {side: measure(side, path) for side in SIDES}
    print(f"{'side':8} {'wall s':>8} {'peak RSS MiB':>13} {'RSS/file':>9}  read")
    for side, r in results.items():
        print(f"{side:8} {r['seconds']:8.2f} {r['peak_rss_bytes'] / 2**20:13,.0f} {r['peak_rss_bytes'] / size:9.2f}  {r['what']}")
    time_ratio = results["series"]["seconds"] / results["HTA"]["seconds"]
    memory_ratio = results["series"]["peak_rss_bytes"] / size
    print(f"series/HTA time ratio {time_ratio:.2f} (goal <= {TIME_GOAL}: {'met' if time_ratio <= TIME_GOAL else 'not met'})")
    print(
        f"series peak RSS / file size {memory_ratio:.2f} "
        f"(goal <= {MEMORY_GOAL}: {'met' if memory_ratio <= MEMORY_GOAL else 'not met'})"
    )
    if not args.keep:
        path.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
