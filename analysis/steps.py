"""Per profiler step: device operations, busy time, idle gaps between them, launch latency, CPU ops.

Device figures are those of the step's device window (`analysis.device_view.step_partition`):
from its first operation's start to the next step's first operation's start, so that summed over
steps they equal the whole trace's, also where the device runs behind the host. Built on the trace
model of `analysis.traces`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .device_view import launches, step_partition
from .traces import Trace, device_ops, representative_step


def step_summary(trace: Trace, memory_device_type: int | None = None) -> pd.DataFrame:
    """Per profiler step: device ops, busy time, idle gaps, launch latency, CPU ops (µs).

    `device_ops` counts the operations the step launched (`device_ops`). The time figures are
    those of the step's device window (`analysis.device_view.step_partition`, which defines it):
    `window_us` (its first operation's start to the next step's first operation's start),
    `busy_us` (time in the window with an operation running) and `idle_us` (the rest), which
    summed over steps equal the trace's; `idle_gaps`, `idle_total_us` and `idle_largest_us`
    describe the gaps between operations inside the window (on cpu: between the step's compute
    ops), `idle_before_next_us` the idle time before the next step's first operation
    (`idle_us` = `idle_total_us` + `idle_before_next_us`). A step without device work has no
    window (NaN); on neuron nothing is counted (NaN, not zero).

    Allocations count the [memory] events of `memory_device_type` (all devices when None).
    """
    ops = device_ops(trace)
    rows = pd.DataFrame(index=pd.Index(trace.steps["step"], name="step"))
    rows["step_us"] = trace.steps.set_index("step")["dur"]
    in_step = trace.events[trace.events["step"].notna()]
    rows["cpu_ops"] = in_step[in_step["cat"] == "cpu_op"].groupby("step").size()
    rows["device_ops"] = ops.groupby("step").size()
    windows, _ = step_partition(ops)
    for col in ("window_us", "busy_us", "idle_us", "idle_gaps", "idle_total_us", "idle_largest_us", "idle_before_next_us"):
        rows[col] = windows[col].reindex(rows.index).astype(float)
    rows["launch_latency_us"] = launch_latency(trace).groupby("step")["latency_us"].median()
    mem = trace.memory
    if len(mem):
        alloc = mem[(mem["bytes"] > 0) & mem["step"].notna()]
        if memory_device_type is not None:
            alloc = alloc[alloc["device_type"] == memory_device_type]
        rows["allocations"] = alloc.groupby("step").size()
        rows["allocated_bytes"] = alloc.groupby("step")["bytes"].sum()
    counts = ["cpu_ops"] + (["device_ops", "idle_gaps"] if trace.counts_device_ops else [])
    counts += ["allocations", "allocated_bytes"] if len(mem) else []
    rows[counts] = rows[counts].fillna(0).astype(int)
    if not trace.counts_device_ops:
        rows[["device_ops", "idle_gaps"]] = np.nan  # not counted, which is not zero
    return rows


def _one_step(trace: Trace, step: int | None) -> tuple[pd.DataFrame, int, float]:
    """The device ops of one step (the representative one by default), the step, and its start time."""
    ops = device_ops(trace)
    if step is None:
        step = representative_step(trace)
    starts = trace.steps.set_index("step")["ts"]
    return ops[ops["step"] == step], step, float(starts.get(step, 0.0))


def step_ops(trace: Trace, step: int | None = None) -> pd.DataFrame:
    """The device operations of one step (the representative one by default), times from that step's start."""
    one, _, start = _one_step(trace, step)
    out = one[["name", "lane", "ts", "dur"]].rename(columns={"dur": "duration_us"}).reset_index(drop=True)
    out["ts"] -= start
    return out.rename(columns={"ts": "start_us"})


def gap_table(trace: Trace, step: int | None = None, memory_device_type: int | None = None) -> pd.DataFrame:
    """Each idle gap between operations in one step's device window (`step_summary`'s `idle_gaps`;
    the representative step by default): the ops on either side (`after`: the one whose end opened
    it), when it started (from the step's start), its length, and the memory freed or allocated
    during it (which often explains a long gap)."""
    if step is None:
        step = representative_step(trace)
    ops = device_ops(trace)
    _, gaps = step_partition(ops)
    gaps = gaps[(gaps["step"] == step) & ~gaps["before_next"]]
    start = float(trace.steps.set_index("step")["ts"].get(step, 0.0))
    mem = trace.memory
    if memory_device_type is not None and len(mem):
        mem = mem[mem["device_type"] == memory_device_type]
    rows = []
    for g in gaps.itertuples():
        inside = mem[(mem["ts"] >= g.start) & (mem["ts"] < g.start + g.gap_us)]
        rows.append(
            {
                "after": ops.at[g.opened_by, "name"],
                "before": ops.at[g.closed_by, "name"],
                "start_us": g.start - start,
                "gap_us": g.gap_us,
                "freed_bytes": int(-inside.loc[inside["bytes"] < 0, "bytes"].sum()),
                "allocated_bytes": int(inside.loc[inside["bytes"] > 0, "bytes"].sum()),
            }
        )
    return pd.DataFrame(rows, columns=["after", "before", "start_us", "gap_us", "freed_bytes", "allocated_bytes"])


def launch_latency(trace: Trace) -> pd.DataFrame:
    """For each device op with a known launch: device start minus the runtime launch's start (µs).
    (`analysis.device_view.launches` has the same rows with host and device times beside.)"""
    joined = launches(trace).rename(columns={"launch": "name_launch", "launch_ts": "ts_launch"})
    return joined[["step", "name", "name_launch", "ts", "ts_launch", "latency_us"]]


def per_call_summary(trace: Trace, memory_device_type: int | None = None) -> dict[str, float]:
    """Medians over the recorded steps; each step of the series' profiled loops makes one call."""
    s = step_summary(trace, memory_device_type)
    med = s.median(numeric_only=True)
    out = {
        "device_ops_per_call": float(med["device_ops"]),
        "busy_us_per_call": float(med["busy_us"]),
        "idle_gaps_per_call": float(med["idle_gaps"]),
        "idle_total_us_per_call": float(med["idle_total_us"]),
        "idle_largest_us": float(med["idle_largest_us"]),
        "cpu_ops_per_call": float(med["cpu_ops"]),
        "step_us": float(med["step_us"]),
    }
    if "allocations" in s:
        out["allocations_per_call"] = float(med["allocations"])
        out["allocated_bytes_per_call"] = float(med["allocated_bytes"])
    return out
