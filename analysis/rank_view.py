"""Several ranks of one job, each from its own trace: kernel time per rank, and who waited in
each collective.

A collective kernel (NCCL's, on cuda) starts on each rank when that rank launches it and ends on
all of its members together, once the last member has arrived and the data has moved. So where
two ranks' n-th collective kernels end together, the rank that started earlier spent the
difference waiting for the later one. Where they do not end together, the two ranks were not
waiting for each other (in a job of many ranks, each may be exchanging with others whose traces
are not at hand), and no wait is attributed.

Times are put on one clock with each trace's `origin_us` (the trace's own timestamp for its time
0): ranks of one machine share the host clock. Traces are read by their attributes, as
`analysis.traces.load_trace` returns them.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .device_view import device_work

# Kernel names of collectives: NCCL (cuda), and the generic names other libraries use
COLLECTIVE_PATTERN = r"(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv"
# Two ranks' collective kernels that end within this many µs of each other ended together
TOGETHER_US = 500.0


def rank_kernel_time(traces: Mapping[int, Any], step: int | None = None,
                     collective: str = COLLECTIVE_PATTERN) -> pd.DataFrame:
    """Per rank: `kernels` and `kernel_us` (device kernels, durations summed), the part of it in
    collective kernels (`collective_kernels`, `collective_us`) and the rest (`compute_us`)."""
    rows = {}
    for rank, trace in traces.items():
        dev = device_work(trace, step=step)
        kernels = dev[dev["cat"].astype(str) == "kernel"]
        coll = kernels[kernels["name"].astype(str).str.contains(collective)]
        rows[rank] = {"kernels": len(kernels), "kernel_us": float(kernels["dur"].sum()),
                      "collective_kernels": len(coll), "collective_us": float(coll["dur"].sum())}
    out = pd.DataFrame.from_dict(rows, orient="index").rename_axis("rank")
    out["compute_us"] = out["kernel_us"] - out["collective_us"]
    return out


def collective_kernel_waits(traces: Mapping[int, Any], collective: str = COLLECTIVE_PATTERN,
                     together_us: float = TOGETHER_US) -> pd.DataFrame:
    """One row per rank and collective (the n-th collective kernel on each rank, in start order):
    `index`, `rank`, `name`, `start_us` and `end_us` on the shared clock (from the earliest trace's
    time 0), `device_us`,
    `end_spread_us` (latest minus earliest end over the ranks), `together` (spread within
    `together_us`), and `wait_us`: where together, the latest start over the ranks minus this
    rank's start (the time it sat in the collective before the last rank arrived); NaN otherwise.
    Collectives beyond the count of the rank with the fewest are left out."""
    per_rank = {}
    for rank, trace in traces.items():
        dev = device_work(trace)
        coll = dev[(dev["cat"].astype(str) == "kernel") & dev["name"].astype(str).str.contains(collective)]
        per_rank[rank] = coll.sort_values("ts").reset_index(drop=True)
    n = min((len(c) for c in per_rank.values()), default=0)
    first = min((float(getattr(t, "origin_us", 0.0)) for t in traces.values()), default=0.0)
    rows = []
    for rank, coll in per_rank.items():
        origin = float(getattr(traces[rank], "origin_us", 0.0)) - first
        for i in range(n):
            rows.append({"index": i, "rank": rank, "name": str(coll.at[i, "name"]),
                         "start_us": coll.at[i, "ts"] + origin, "end_us": coll.at[i, "end"] + origin,
                         "device_us": coll.at[i, "dur"]})
    out = pd.DataFrame(rows, columns=["index", "rank", "name", "start_us", "end_us", "device_us"])
    by = out.groupby("index")
    out["end_spread_us"] = by["end_us"].transform("max") - by["end_us"].transform("min")
    out["together"] = out["end_spread_us"] <= together_us
    out["wait_us"] = np.where(out["together"], by["start_us"].transform("max") - out["start_us"], np.nan)
    return out
