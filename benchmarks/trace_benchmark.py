"""Benchmark: load and analyse a Chrome trace of about 1,000,000 events.

    python benchmarks/trace_benchmark.py [--events 1000000] [--kind cuda|cpu] [--keep]

Generates a synthetic trace in the layout torch.profiler exports (ProfilerStep annotations,
cpu_op events, cuda_runtime launches, kernels linked by correlation id, ac2g flows, [memory]
instant events), then times `load_trace` and `step_summary`. The goal (issue 4) is at most 10 s
for 1,000,000 events on the project's 2-core machine. `--kind cpu` makes a trace with no device
lane, which exercises the cpu op-nesting analysis instead.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from analysis.traces import load_trace, step_summary


def synthetic_trace(n_events: int, kind: str) -> dict:
    """About n_events events: steps of 40 ops; on cuda each op launches one kernel."""
    per_op = 4 if kind == "cuda" else 2  # cuda: op, launch, kernel, flow pair ~ 4; cpu: op, child
    n_ops = n_events // per_op
    ops_per_step = 40
    events, ts, corr = [], 0.0, 0
    for step in range(n_ops // ops_per_step):
        step_start = ts
        step_events = []
        for i in range(ops_per_step):
            name = f"aten::op{i % 7}"
            step_events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 8.0,
                                "args": {"External id": corr}})
            if kind == "cuda":
                corr += 1
                step_events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                                    "ts": ts + 2, "dur": 4.0, "args": {"correlation": corr}})
                step_events.append({"ph": "X", "cat": "kernel", "name": f"kernel_{i % 7}", "pid": 0, "tid": 7,
                                    "ts": ts + 10, "dur": 5.0, "args": {"correlation": corr}})
                step_events.append({"ph": "s", "cat": "ac2g", "id": corr, "pid": 1, "tid": 1, "ts": ts + 2, "name": "ac2g"})
            else:
                step_events.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1,
                                    "ts": ts + 1, "dur": 1.0})
            ts += 10.0
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                       "ts": step_start, "dur": ts - step_start + 20})
        events.extend(step_events)
        events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts, "s": "t",
                       "args": {"Bytes": 4096, "Device Type": 1 if kind == "cuda" else 0}})
        ts += 30.0
    return {"schemaVersion": 1, "traceEvents": events}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--kind", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--keep", action="store_true", help="keep the generated trace file")
    args = parser.parse_args()

    fd, name = tempfile.mkstemp(suffix=".trace.json")
    os.close(fd)
    path = Path(name)
    data = synthetic_trace(args.events, args.kind)
    path.write_text(json.dumps(data))
    n = len(data["traceEvents"])
    del data
    size_mb = path.stat().st_size / 2**20

    start = time.perf_counter()
    trace = load_trace(path)
    loaded = time.perf_counter()
    summary = step_summary(trace)
    done = time.perf_counter()
    print(f"{args.kind} trace: {n:,} events, {size_mb:,.0f} MiB, {len(summary):,} steps")
    print(f"load_trace {loaded - start:.2f} s + step_summary {done - loaded:.2f} s = {done - start:.2f} s "
          f"(goal: <= 10 s for 1,000,000 events)")
    print(summary.head(3).to_string())
    if not args.keep:
        path.unlink()
    return 0 if done - start <= 10 or args.events > 1_000_000 else 1


if __name__ == "__main__":
    sys.exit(main())
