"""Notebook 02's bookkeeping: the share of a step its gaps take (its metrics: lesson.published_metrics).

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
