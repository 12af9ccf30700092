"""Notebook 02's bookkeeping: the share of a step its gaps take, and the op a copy ran in (its
metrics: lesson.published_metrics).

Why here: the line under the gaps table is plumbing, not the lesson; one call keeps 02 on the
profile.
"""

from __future__ import annotations

import math

import pandas as pd


def gap_share(steps: pd.DataFrame) -> tuple[float, str]:
    """The idle gaps' share of a step's busy + idle time, median over the recorded steps.

    Args:
        steps: `analysis.step_summary` of the profile (one row per recorded step).

    Returns:
        (the share, NaN where the backend's ops are not counted; the line to print under the gaps table).
    """
    share = float((steps["idle_total_us"] / (steps["busy_us"] + steps["idle_total_us"])).median())
    if math.isnan(share):
        return share, "gaps: not counted on this backend (its ops are not in the trace; notebook 06 reads its profile)"
    return share, f"gaps: {share:.1%} of a step's busy + idle time (median over {len(steps)} recorded steps)"


# The ops a dtype copy runs as (its allocation happens inside them): not the op that asked for it.
COPY_OPS = ("aten::_to_copy", "aten::to", "aten::empty", "aten::copy_")


def op_around(events: pd.DataFrame, ts: float, own: tuple[str, ...] = COPY_OPS) -> str:
    """The innermost op running at `ts` that is not one of `own`: for a `_to_copy` allocation, the
    op of the source that made the copy (exercise 1's answer: in which op, so in which dtype, `sum` adds).

    Args:
        events: analysis.trace.load_trace(...).events (columns name, ts, end, dur).
        ts: the moment, e.g. an allocation's `ts` from analysis.allocations_by_op.
        own: name prefixes to skip (the copy's own ops).

    Returns:
        The op's name; "?" where no other op was running.
    """
    from analysis.allocations import innermost_op

    return innermost_op(events, ts, own)
