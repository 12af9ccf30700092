"""One value per quantity: the same variant, shape and dtype timed in several notebooks of one
run must agree within their p10-p90.

Notebooks name what each timing measures (`timing_metric(..., of="naive 8192x4096 float32")`), and
what each paired ratio compares (`ratio_metric(..., of="torch.rms_norm / naive 8192x4096 float32")`);
this groups a run's figures by that name and reports every group whose p10-p90 ranges do not all
overlap. A ratio and its inverse are one quantity (stored as "A / B" with A before B alphabetically).

A disagreement in time means either that a notebook changes what it measures (what ran before it:
the allocator's state, a profiler left on, memory held by earlier cells) or that the machine
changed between notebooks, which time the same call minutes apart:
`benchmarks/drift_benchmark.py` measures how much this machine drifts with nothing changing. The
paired ratios of the same notebooks help tell the two apart: a machine running slower during one
notebook slows both sides of a ratio alike, so where the times disagree and a ratio of that variant
agrees, the row says so.
"""

from __future__ import annotations

import re
from typing import Any

from analysis.contention import is_busy

RATIO = re.compile(r"^(\S+) / (\S+) (.+)$")  # "torch.rms_norm / naive 8192x4096 float32"


def canonical(quantity: str, median: float, p10: float, p90: float) -> tuple[str, float, float, float]:
    """The quantity's one spelling: a ratio "B / A" with A < B becomes "A / B", its figures inverted."""
    m = RATIO.match(quantity)
    if not m or m[1] <= m[2] or min(median, p10, p90) <= 0:
        return quantity, median, p10, p90
    return f"{m[2]} / {m[1]} {m[3]}", 1 / median, 1 / p90, 1 / p10


def timings_by_quantity(notebooks: dict[str, dict[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for notebook, metrics in notebooks.items():
        for name, entry in metrics.items():
            if entry.get("of") and entry.get("value") is not None and entry.get("p10") is not None:
                quantity, median, p10, p90 = canonical(entry["of"], entry["value"], entry["p10"], entry["p90"])
                groups.setdefault(quantity, []).append(
                    {
                        "notebook": notebook,
                        "metric": name,
                        "unit": entry.get("unit", "us"),
                        "median": median,
                        "p10": p10,
                        "p90": p90,
                        "busy": is_busy(entry.get("contention")),
                        "seen": (entry.get("contention") or {}).get("seen"),
                    }
                )
    return groups


def check_consistency(notebooks: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per quantity measured in more than one place: its figures, whether they agree (the
    highest p10 is not above the lowest p90: one value lies inside every range) and, for a time
    that disagrees, what the paired ratios of the same variant say."""
    rows = []
    for quantity, timings in sorted(timings_by_quantity(notebooks).items()):
        if len(timings) < 2:
            continue
        agree = max(t["p10"] for t in timings) <= min(t["p90"] for t in timings)
        medians = [t["median"] for t in timings]
        rows.append(
            {
                "quantity": quantity,
                "agree": agree,
                "timings": timings,
                "unit": timings[0]["unit"],
                "max_over_min": max(medians) / min(medians) if min(medians) > 0 else None,
                "busy": [t["notebook"] for t in timings if t.get("busy")],
            }
        )
    for row in rows:
        if not row["agree"] and not row["busy"] and not RATIO.match(row["quantity"]):
            row["diagnosis"] = diagnose(row, rows)
    return rows


def diagnose(time_row: dict[str, Any], rows: list[dict[str, Any]]) -> str | None:
    """What the ratios of the same variant and shape, measured in the same notebooks, say about a
    disagreeing time; None where no such ratio was measured in two of them."""
    variant, _, shape = time_row["quantity"].partition(" ")
    notebooks = {t["notebook"] for t in time_row["timings"]}
    related = [
        r
        for r in rows
        if (m := RATIO.match(r["quantity"]))
        and m[3] == shape
        and variant in (m[1], m[2])
        and len(notebooks & {t["notebook"] for t in r["timings"]}) >= 2
    ]
    if not related:
        return None
    steady = [r["quantity"] for r in related if r["agree"]]
    moved = [r["quantity"] for r in related if not r["agree"]]
    if steady and not moved:
        return (
            f"its paired ratios agree ({', '.join(steady)}): the variants moved together, as when the machine runs "
            "slower during one notebook (benchmarks/drift_benchmark.py measures how much)"
        )
    return (
        f"its paired ratios disagree too ({', '.join(moved)}): the variants moved apart, so look at what the "
        "notebooks run before the timing"
    )


def figure_style(unit: str, us_format: str = ",.1f") -> tuple[str, str]:
    """The format and suffix a figure of this unit is printed with: times in us, ratios as "N.NNNx"."""
    return (us_format, " us") if unit == "us" else (".3f", "x")


def disagreement_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per quantity whose figures disagree, for the console at the end of a run; a
    disagreement that involves a figure timed on a busy machine is a BUSY line: it concludes nothing."""
    lines = []
    for row in rows:
        if row["agree"]:
            continue
        digits, unit = figure_style(row["unit"], us_format=",.0f")
        figures = ", ".join(f"{t['median']:{digits}}{unit} ({t['notebook']})" for t in row["timings"])
        if row.get("busy"):
            seen = next(t["seen"] for t in row["timings"] if t.get("busy"))
            lines.append(
                f"BUSY: {row['quantity']} measured {figures}; the machine was busy while "
                f"{', '.join(row['busy'])} timed it ({seen}): no conclusion, re-run on a quiet machine"
            )
            continue
        lines.append(
            f"DISAGREE: {row['quantity']} measured {figures} ({row['max_over_min']:.2f}x from lowest to "
            "highest median): one quantity, different values"
            + (f"; {row['diagnosis']}" if row.get("diagnosis") else "")
            + "; see summary.md"
        )
    return lines


def _agreement(row: dict[str, Any], timing: dict[str, Any]) -> str:
    if timing.get("busy"):
        return "busy"
    return "yes" if row["agree"] else ("busy elsewhere" if row.get("busy") else "**NO**")


def format_consistency(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: one table row per figure, grouped by quantity; diagnoses below the table."""
    if not rows:
        return ["No quantity was measured in more than one notebook of this run."]
    lines = ["| quantity | notebook / metric | median | p10-p90 | agree |", "|---|---|---|---|---|"]
    for row in rows:
        digits, unit = figure_style(row["unit"])
        for t in row["timings"]:
            lines.append(
                f"| {row['quantity']} | {t['notebook']}/{t['metric']} | {t['median']:{digits}}{unit} | "
                f"{t['p10']:{digits}}-{t['p90']:{digits}}{unit} | {_agreement(row, t)} |"
            )
    notes = [f"- {row['quantity']}: {row['diagnosis']}." for row in rows if row.get("diagnosis")]
    notes += [
        f"- {row['quantity']}: timed while the machine was busy in {', '.join(row['busy'])}: no conclusion."
        for row in rows
        if row.get("busy") and not row["agree"]
    ]
    return lines + ([""] + notes if notes else [])
