"""Claims: the conclusions a notebook prints, recorded with the metrics they rest on.

A summary sentence such as "torch.compile is the fastest at the large shape" is generated from the
run's metrics; beside it the notebook records a claim, `Claim("min", [a, b, c], text)`, naming the
published metrics the sentence compares. `check_claims` re-evaluates every claim from the metrics
a notebook published, so the test suite (which runs the notebooks at two contrasting parameter
sets) fails if a sentence says what its own numbers do not: a hand-edited conclusion, a metric
renamed or changed after the sentence was written, a ranking taken from the wrong column.

Relations, over the `value` of each named metric (ratios also carry their per-round p10/p90):
- "min" / "max": the first metric is the smallest / largest of all named;
- "<": each named metric is smaller than the next (a ranking);
- "above 1" / "below 1": a paired ratio whose whole p10-p90 lies at least
  analysis.verdicts.RESOLUTION above / below 1 (measurable);
- "inconclusive": a paired ratio on neither side of 1 whose p10-p90 reaches past the margin or clears 1
  within it (the verdict "cannot tell apart, inconclusive"): not a finding that the two cost the same;
- "about 1": a paired ratio on neither side of 1 (a verdict's claim records it only for "no measurable
  difference", a p10-p90 inside the margin; earlier runs recorded it for inconclusive ratios too);
- "overlap": four metrics, two ranges (a's p10, a's p90, b's p10, b's p90) that overlap, touch or lie
  closer than analysis.verdicts.RESOLUTION (`ranges_apart`):
  a pair of figures not measured in pairs that the run cannot tell apart (analysis.verdicts.judge_ranges);
- "busy": no comparison at all: at least one named metric was timed while the machine was busy
  (its `contention` record, analysis.contention), so the sentence says "not measurable here".
"""

from __future__ import annotations

from typing import Any

from .contention import is_busy
from .verdicts import CANNOT_TELL, RELATIONS, Claim, about_one, ranges_apart
from .verdicts import relation_of as ratio_relation

__all__ = ["RELATIONS", "Claim", "check_claims", "ratio_relation"]


def _holds(relation: str, entries: list[dict[str, Any]]) -> bool:
    busy = any(is_busy(e.get("contention")) for e in entries)
    if relation == "busy":
        return busy
    if busy:  # a comparison drawn from a contaminated measurement never holds
        return False
    values = [e["value"] for e in entries]
    if relation == "min":
        return values[0] == min(values)
    if relation == "max":
        return values[0] == max(values)
    if relation == "<":
        return all(a < b for a, b in zip(values, values[1:]))
    if relation == "overlap":
        a10, a90, b10, b90 = values
        return not ranges_apart((a10, a90), (b10, b90))
    (entry,) = entries
    if relation == "inconclusive":
        return about_one(entry["p10"], entry["p90"]) == CANNOT_TELL
    return ratio_relation(entry["p10"], entry["p90"]) == relation


def check_claims(claims: list[dict[str, Any]], metrics: dict[str, dict[str, Any]]) -> list[str]:
    """Every claim whose relation does not hold on the published metrics, in words (empty: all hold)."""
    problems = []
    for c in claims:
        missing = [m for m in c["metrics"] if m not in metrics]
        if missing:
            problems.append(f"{c['text']!r} cites unpublished metric(s) {missing}")
            continue
        entries = [metrics[m] for m in c["metrics"]]
        if not _holds(c["relation"], entries):
            shown = ", ".join(f"{m}={metrics[m]['value']!r}" for m in c["metrics"])
            problems.append(f"{c['text']!r} claims {c['relation']} but the metrics say {shown}")
    return problems
