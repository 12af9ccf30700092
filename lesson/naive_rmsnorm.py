"""Notebook 02's bookkeeping: the share of a step its gaps take, and the figures it publishes.

Why here: both are plumbing for the line under the gaps table and for `compare` and the regression
checks, not the lesson; one call each keeps 02 on the profile while the metric names stay the ones
the tests and earlier runs read.
"""

from __future__ import annotations

import math
from typing import Any

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


def naive_call_metrics(
    per_call: dict[str, Any],
    device_op_kind: str,
    timing: Any,
    x: Any,
    allocated_over_input: float,
    idle_share: float,
    error: float,
    tolerance: float,
    device_time: tuple[bool, str],
) -> dict[str, Any]:
    """Notebook 02's published metrics: its ops, allocations and gaps per call, time, error and
    whether device time was captured.

    Args:
        per_call: `analysis.per_call_summary` of the profile; device_op_kind: the trace's `device_op_kind`.
        timing: the `time_per_call` Timing; x: the input (names the timed quantity).
        allocated_over_input: allocated bytes per call over the input's; idle_share: `gap_share`'s share.
        error, tolerance: the max error against float64 and its tolerance.
        device_time: (captured, why) of `lesson.judge_device_time`.

    Returns:
        name -> metric (helpers.metric and kin), ready for `session.publish`.
    """
    from helpers.metrics import error_metric, metric, quantity, timing_metric

    units = {"device_ops_per_call": "ops", "allocations_per_call": "allocations", "allocated_bytes_per_call": "bytes"}
    units.update(busy_us_per_call="us", idle_gaps_per_call="gaps", idle_total_us_per_call="us")
    captured, why = device_time
    return {
        **{name.replace("idle_total", "idle"): metric(per_call[name], unit, device_op_kind) for name, unit in units.items()},
        "time_per_call_us": timing_metric(timing, of=quantity("naive", x)),
        "time_spread": metric(timing.spread, "ratio", "(p90-p10)/median"),
        "allocated_over_input": metric(allocated_over_input, "ratio"),
        "idle_share": metric(idle_share, "ratio", "idle gaps / (busy + idle), median over the recorded steps"),
        "max_error": error_metric(error, tolerance),
        "error_within_tolerance": metric(error <= tolerance, "bool", better="true"),
        "device_time_captured": metric(captured, "bool", why),
    }
