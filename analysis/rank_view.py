"""Several ranks of one job, each from its own trace: kernel time per rank, and who waited in
each collective.

A collective kernel (NCCL's, on cuda) starts on each rank when that rank launches it and ends on
all of its members together, once the last member has arrived and the data has moved. So where
two ranks' n-th collective kernels end together, the rank that started earlier spent the
difference waiting for the later one. Where they do not end together, the two ranks were not
waiting for each other (in a job of many ranks, each may be exchanging with others whose traces
are not at hand), and no wait is attributed.

The series' own ranks (notebook 08, lesson.ranks.launch) write their steps as JSON instead of
traces; `rank_steps`, `collective_waits` and `arrival_order` read those.

Times are put on one clock with each trace's `origin_us` (the trace's own timestamp for its time
0): ranks of one machine share the host clock. Traces are read by their attributes, as
`analysis.traces.load_trace` returns them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .device_view import device_work

# Kernel names of collectives: NCCL (cuda), and the generic names other libraries use
COLLECTIVE_PATTERN = r"(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv"
# Two ranks' collective kernels that end within this many µs of each other ended together
TOGETHER_US = 500.0


def rank_kernel_time(traces: Mapping[int, Any], step: int | None = None, collective: str = COLLECTIVE_PATTERN) -> pd.DataFrame:
    """Per rank: `kernels` and `kernel_us` (device kernels, durations summed), the part of it in
    collective kernels (`collective_kernels`, `collective_us`) and the rest (`compute_us`)."""
    rows = {}
    for rank, trace in traces.items():
        dev = device_work(trace, step=step)
        kernels = dev[dev["cat"].astype(str) == "kernel"]
        coll = kernels[kernels["name"].astype(str).str.contains(collective)]
        rows[rank] = {
            "kernels": len(kernels),
            "kernel_us": float(kernels["dur"].sum()),
            "collective_kernels": len(coll),
            "collective_us": float(coll["dur"].sum()),
        }
    out = pd.DataFrame.from_dict(rows, orient="index").rename_axis("rank")
    out["compute_us"] = out["kernel_us"] - out["collective_us"]
    return out


def collective_kernel_waits(
    traces: Mapping[int, Any], collective: str = COLLECTIVE_PATTERN, together_us: float = TOGETHER_US
) -> pd.DataFrame:
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
            rows.append(
                {
                    "index": i,
                    "rank": rank,
                    "name": str(coll.at[i, "name"]),
                    "start_us": coll.at[i, "ts"] + origin,
                    "end_us": coll.at[i, "end"] + origin,
                    "device_us": coll.at[i, "dur"],
                }
            )
    out = pd.DataFrame(rows, columns=["index", "rank", "name", "start_us", "end_us", "device_us"])
    by = out.groupby("index")
    out["end_spread_us"] = by["end_us"].transform("max") - by["end_us"].transform("min")
    out["together"] = out["end_spread_us"] <= together_us
    out["wait_us"] = np.where(out["together"], by["start_us"].transform("max") - out["start_us"], np.nan)
    return out


# ------------------------------------------------------------------ the series' own ranks (JSON step records)
def rank_steps(out_dir: Path) -> pd.DataFrame:
    """Every rank's recorded steps, times in ms from the earliest start (one clock for all ranks)."""
    rows = []
    for path in sorted(
        p for p in out_dir.glob("rank*.json") if p.name.removeprefix("rank").split(".")[0].isdigit() and p.name.count(".") == 1
    ):
        data = json.loads(path.read_text())
        rows += [{"rank": data["rank"], **s} for s in data["steps"] if s["recorded"]]
    steps = pd.DataFrame(rows)
    origin = steps["start"].min()
    for col in ("start", "compute_end", "collective_end"):
        steps[col] = (steps[col] - origin) / 1e6
    return steps.sort_values(["step", "rank"]).reset_index(drop=True)


def collective_waits(steps: pd.DataFrame) -> pd.DataFrame:
    """Per step and rank: compute, time in the all-reduce, and how much of it was waiting for the
    slowest rank (the last rank to arrive defines when the exchange can start)."""
    out = steps.copy()
    last_arrival = out.groupby("step")["compute_end"].transform("max")
    out["compute_ms"] = out["compute_end"] - out["start"]
    out["collective_ms"] = out["collective_end"] - out["compute_end"]
    out["wait_ms"] = last_arrival - out["compute_end"]
    out["exchange_ms"] = out["collective_ms"] - out["wait_ms"]
    return out[
        [
            "step",
            "rank",
            "straggling",
            "start",
            "compute_end",
            "collective_end",
            "compute_ms",
            "collective_ms",
            "wait_ms",
            "exchange_ms",
        ]
    ]


@dataclass
class ArrivalOrder:
    """Which rank arrived last at the all-reduce, counted over some steps, and how often random
    order would make one rank last at least that often.

    Why count arrivals instead of comparing the ranks' waits: a rank's wait is zero in every step
    it arrives last, by definition. With two ranks and no straggler, whichever rank happened to
    arrive last in every one of a few steps shows waits of exactly zero beside the other's
    milliseconds, and their p10-p90 ranges do not overlap, though nothing made it slower. With
    n steps that happens by chance in 2 * 2**-n of runs (1 in 4 for 3 steps)."""

    last_counts: dict[int, int]
    steps: int
    chance: float  # probability that random order puts some rank last in >= max(last_counts) steps

    @property
    def explained_by_chance(self) -> bool:
        return self.chance >= 0.05

    def chance_text(self) -> str:
        """How often random order does what was seen, in words: "random order does that in 13% of
        runs", or, where it always does (2 ranks, 3 steps: some rank is last in at least 2), says so,
        because "100% of runs" beside one rank's count reads as a claim about that rank."""
        if self.chance >= 0.995:
            return f"random order always puts some rank last that often with {len(self.last_counts)} ranks and {self.steps} steps"
        return f"random order does that in {self.chance:.0%} of runs"


def chance_some_rank_last(steps: int, ranks: int, at_least: int) -> float:
    """P(some rank is last in >= `at_least` of `steps` steps) when every rank is equally likely
    to arrive last in each step, exactly: 1 - P(every rank's count < at_least), from the
    multinomial's exponential generating function."""
    if at_least <= math.ceil(steps / ranks):
        return 1.0
    term = [1 / math.factorial(j) for j in range(min(at_least, steps + 1))]  # counts 0 .. at_least-1
    product = [1.0]
    for _ in range(ranks):
        product = [
            sum(product[i] * term[j - i] for i in range(len(product)) if 0 <= j - i < len(term))
            for j in range(min(steps, len(product) + len(term) - 2) + 1)
        ]
    below = math.factorial(steps) / ranks**steps * (product[steps] if steps < len(product) else 0.0)
    return max(0.0, 1.0 - below)


def arrival_order(waits: pd.DataFrame, ranks: int) -> ArrivalOrder:
    """Count the last arrival per step in `waits` (rows of collective_waits) and its chance."""
    last = waits.loc[waits.groupby("step")["compute_end"].idxmax(), "rank"]
    counts = {r: int((last == r).sum()) for r in range(ranks)}
    steps = int(waits["step"].nunique())
    return ArrivalOrder(counts, steps, chance_some_rank_last(steps, ranks, max(counts.values(), default=0)))
