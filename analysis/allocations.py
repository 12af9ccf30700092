"""Which op allocated what: the `[memory]` events of a step joined to the op running when each
allocation happened. Built on the trace model of `analysis.traces`.
"""

from __future__ import annotations

import pandas as pd

from .traces import Trace, representative_step


def innermost_op(events: pd.DataFrame, ts: float, skip: tuple[str, ...] = ()) -> str:
    """The innermost (shortest) op running at `ts` whose name starts with none of `skip`.

    Args:
        events: a trace's events (columns name, ts, end, dur).
        ts: the moment, e.g. an allocation's `ts`.
        skip: name prefixes to pass over (allocator calls, a copy's own ops).

    Returns:
        The op's name; "?" where no other op was running.
    """
    names = events["name"].astype(str)
    around = events[(events["ts"] <= ts) & (events["end"] >= ts) & ~names.str.startswith(skip)]
    return str(around.sort_values("dur")["name"].iloc[0]) if len(around) else "?"


def allocations_by_op(trace: Trace, step: int | None = None, memory_device_type: int | None = None) -> pd.DataFrame:
    """Each allocation of one step (the representative one by default), largest first: `ts`,
    `bytes`, and `op`, the innermost op running when it happened that is not an allocator call
    (`aten::empty*`), so a learner sees which op of the source asked for each tensor ("?" where none ran)."""
    if step is None:
        step = representative_step(trace)
    mem = trace.memory
    alloc = mem[(mem["bytes"] > 0) & (mem["step"] == step)]
    if memory_device_type is not None:
        alloc = alloc[alloc["device_type"] == memory_device_type]
    ops = trace.events[trace.events["step"] == step]
    skip = ("aten::empty", "ProfilerStep#")
    out = alloc[["ts", "bytes"]].assign(op=[innermost_op(ops, ts, skip) for ts in alloc["ts"]])
    return out.sort_values("bytes", ascending=False).reset_index(drop=True)
