"""One value per quantity: the same variant, shape and dtype timed in several notebooks of one
run must agree within their p10-p90.

Notebooks name what each timing measures (`timing_metric(..., of="naive 8192x4096 float32")`);
this groups a run's timings by that name and reports every group whose p10-p90 ranges do not
all overlap. A disagreement means either that a notebook changes what it measures (what ran
before it: the allocator's state, a profiler left on, memory held by earlier cells) or that the
machine changed between notebooks, which time the same call minutes apart:
`benchmarks/drift_benchmark.py` measures how much this machine drifts with nothing changing.
"""
from __future__ import annotations

from typing import Any


def timings_by_quantity(notebooks: dict[str, dict[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for notebook, metrics in notebooks.items():
        for name, entry in metrics.items():
            if entry.get("of") and entry.get("value") is not None and entry.get("p10") is not None:
                groups.setdefault(entry["of"], []).append(
                    {"notebook": notebook, "metric": name, "median": entry["value"], "p10": entry["p10"], "p90": entry["p90"]})
    return groups


def check_consistency(notebooks: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per quantity timed in more than one place: its timings, and whether they agree
    (the highest p10 is not above the lowest p90: one value lies inside every range)."""
    rows = []
    for quantity, timings in sorted(timings_by_quantity(notebooks).items()):
        if len(timings) < 2:
            continue
        agree = max(t["p10"] for t in timings) <= min(t["p90"] for t in timings)
        medians = [t["median"] for t in timings]
        rows.append({"quantity": quantity, "agree": agree, "timings": timings,
                     "max_over_min": max(medians) / min(medians) if min(medians) > 0 else None})
    return rows


def format_consistency(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: one table row per timing, grouped by quantity."""
    if not rows:
        return ["No quantity was timed in more than one notebook of this run."]
    lines = ["| quantity | notebook / metric | median us | p10-p90 us | agree |", "|---|---|---|---|---|"]
    for row in rows:
        for t in row["timings"]:
            lines.append(f"| {row['quantity']} | {t['notebook']}/{t['metric']} | {t['median']:,.1f} | "
                         f"{t['p10']:,.1f}-{t['p90']:,.1f} | {'yes' if row['agree'] else '**NO**'} |")
    return lines
