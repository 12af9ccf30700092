"""The one verdict module: one rule for "measurable", one sentence per comparison.

Cases from the lesson-first issue are here by name: an inconclusive comparison is never stated
as a negative finding, ranges that touch are not "measurably after", a statement that held in
2 of 3 steps is not a rule, a busy block concludes nothing. One test re-checks the committed
reference run's own published claims by the same rule."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from analysis.claims import check_claims
from analysis.contention import Contention
from analysis.timing import PairedRatio
from analysis.verdicts import (
    apart_bounds,
    counted,
    decimals_apart,
    estimate,
    judge_ranges,
    judge_ratio,
    judge_steps,
    judge_timings,
    machine_line,
    ranges_apart,
    RESOLUTION,
    relation_of,
    verdict_table,
    withheld,
)

REFERENCE_RUNS = Path(__file__).resolve().parents[1] / "docs" / "reference-runs"
NEGATIVE_FINDINGS = ("does not explain", "did not make", "no effect", "is not the cause", "does not matter")


def test_the_rule_is_the_spread_against_the_band_around_one():
    assert relation_of(1.05, 1.2) == "above 1" and relation_of(0.5, 1 / 1.05) == "below 1"
    assert relation_of(0.99, 1.14) == "about 1" and relation_of(1.0, 1.0) == "about 1"


def test_a_spread_reaching_closer_to_one_than_runs_agree_on_is_no_measurable_difference():
    """The busy benchmark's flip (2026-12-06): 05's large-shape rms_norm / naive read 0.99 with a
    p10-p90 holding 1 on quiet runs and 0.98 (p10-p90 0.975-0.99) beside a spinning process; after
    the heap setting it read 0.95-0.96 from run to run, at a median rule's edge. A spread that reaches
    within RESOLUTION of 1 claims no side, however tight; only a whole spread beyond the band does."""
    assert RESOLUTION == pytest.approx(1.05)
    quiet = judge_ratio(PairedRatio("torch.rms_norm", "naive", np.linspace(0.975, 1.005, 9)))
    busy = judge_ratio(PairedRatio("torch.rms_norm", "naive", np.linspace(0.97, 0.99, 9)))
    assert quiet.kind == busy.kind == "no measurable difference" and quiet.relation == busy.relation == "about 1"
    above = judge_ratio(
        PairedRatio("static", "dynamic", np.array([1.01, 1.02, 1.03, 1.3, 1.32, 1.4, 1.6, 1.8, 1.9]))
    )  # 07: one side, not ranked
    assert above.kind == "no measurable difference" and "the p10-p90 lies above 1 but reaches within 5% of it" in above.sentence
    # both spreads lie inside the margin on both sides: "no measurable difference", said only there
    assert busy.word == quiet.word == "no measurable difference (p10-p90 within 5% of 1)"
    # not "cannot tell ... apart", the inconclusive verdict's words
    assert busy.sentence.startswith("no measurable difference between") and "whole p10-p90 lies within 5% of 1" in quiet.sentence
    assert above.word == "cannot tell apart, inconclusive (p10-p90 reaches within 5% of 1)" and above.sentence.endswith(
        "not a finding that they cost the same"
    )
    straddling = judge_ratio(PairedRatio("a", "b", np.linspace(0.90, 0.996, 9)))  # median 0.95, p90 inside the band
    assert straddling.kind == "no measurable difference" and relation_of(0.90, 0.996) == "about 1"
    clear = judge_ratio(PairedRatio("a", "b", np.linspace(1.06, 1.10, 9)))
    assert clear.kind == "slower" and relation_of(1.06, 1.10) == "above 1" and relation_of(1.04, 1.10) == "about 1"


def test_an_inconclusive_ratio_is_never_a_negative_finding():
    """02's two multiplications read 1.10 with p10-p90 0.99-1.14: the test cannot tell, and says how much it allows."""
    ratio = PairedRatio("... * weight", "x * rsqrt(...)", np.array([0.99] * 2 + [1.10] * 6 + [1.14] * 2))
    verdict = judge_ratio(ratio)
    assert verdict.kind == "no measurable difference" and not verdict.measurable
    # a spread past the margin is inconclusive, and says so: 07's "so no measurable difference here" beside a
    # median of 1.28 (p10-p90 0.91-1.86) read as "they cost the same"
    assert verdict.sentence.startswith("this run cannot tell") and verdict.sentence.endswith(
        "): inconclusive, not a finding that they cost the same"
    )
    assert (
        "no measurable difference" not in verdict.sentence
        and verdict.word == "cannot tell apart, inconclusive (p10-p90 holds 1 and reaches past the 5% margin)"
    )
    below, above = int(np.sum(ratio.per_round < 1)), int(np.sum(ratio.per_round > 1))  # counted, not "some ... others"
    assert f"the p10-p90 holds 1, with {below} of {ratio.per_round.size} rounds below 1, {above} above" in verdict.sentence
    assert not any(phrase in verdict.sentence for phrase in NEGATIVE_FINDINGS)
    assert verdict.relation == "inconclusive"  # the record says what the sentence says


def test_measurable_differences_name_the_factor_and_the_spread():
    slower = judge_ratio(PairedRatio("naive", "fused", np.array([1.9, 1.95, 2.0, 2.05, 2.1])))
    assert (
        slower.kind == "slower" and "took 2.00x the time of fused: slower (" in str(slower) and "per-round p10-p90" in str(slower)
    )
    faster = judge_ratio(PairedRatio("compiled", "naive", np.array([0.24, 0.245, 0.25, 0.255, 0.26])), faster="cheaper")
    assert faster.kind == "faster" and "4.00x cheaper" in str(faster) and faster.relation == "below 1"


def test_a_bound_near_one_prints_the_decimals_that_place_it():
    verdict = judge_ratio(PairedRatio("a", "b", np.array([1.0036] * 2 + [1.09] * 8)))  # clears 1, not the band
    assert "p10-p90 1.004-1.09" in str(verdict) and verdict.kind == "no measurable difference"
    edge = judge_ratio(PairedRatio("a", "b", np.array([1.0497] * 2 + [1.09] * 8)))  # not 1.05: inside the band
    assert "p10-p90 1.0497-1.09" in str(edge) and edge.kind == "no measurable difference"
    # a p10 that rounds to 0.950 (the "5% below 1" a reader takes the margin for) gets its fourth digit
    past = judge_ratio(PairedRatio("a", "b", np.array([0.9496] * 2 + [1.042] * 8)))
    assert "p10-p90 0.9496-1.0420" in str(past) and past.word.endswith("past the 5% margin)")
    beyond = judge_ratio(PairedRatio("a", "b", np.array([1.0503] * 2 + [1.09] * 8)))
    assert "p10-p90 1.0503-1.09" in str(beyond) and beyond.kind == "slower"
    assert decimals_apart(0.2503, 0.25) == "0.2503" and decimals_apart(0.2534, 0.25) == "0.253"
    assert decimals_apart(0.60, 0.25) == "0.60" and decimals_apart(0.25, 0.25) == "0.25"


def test_a_busy_block_concludes_nothing_whatever_it_reads():
    busy = Contention(1.0, 0.5, 0.6, 0.0)
    verdict = judge_ratio(PairedRatio("a", "b", np.array([3.0, 3.1, 3.2]), contention=busy))
    assert verdict.kind == "busy" and not verdict.measurable and verdict.relation == "busy"
    assert "concludes nothing" in str(verdict) and "slower" not in str(verdict)
    assert "waited for a CPU 50%" in verdict.seen


def test_ranges_that_touch_are_not_measurably_apart():
    """08 said 'the others measurably after it' where the ranges touched."""
    touching = judge_ranges("rank 1 exit", (10.0, 12.0), "rank 0 exit", (8.0, 10.0), unit="ms")
    # ranges wider than the margin: not told apart, and inconclusive (01's reader took the bare phrase for "equal")
    assert (
        touching.kind == "no measurable difference"
        and "the ranges touch: inconclusive, not a finding that they are equal (" in str(touching)
    )
    inside = judge_ranges("a", (10.0, 10.2), "b", (10.25, 10.4), unit="us")  # both whole ranges within 5%: the noise
    assert "no measurable difference between a and b: the ranges are 0.05 us (0.5%) from each other, under the 5% margin" in str(
        inside
    ) and "inconclusive" not in str(inside)
    assert inside.within_noise and inside.word == "no measurable difference (ranges within 5% of each other)"
    assert not touching.within_noise and touching.word == "inconclusive (the ranges touch)"
    assert str(touching).startswith("this run cannot tell rank 1 exit and rank 0 exit apart:")
    overlapping = judge_ranges("a", (1.0, 3.0), "b", (2.0, 4.0))
    assert "the ranges overlap: inconclusive" in str(overlapping)
    near = judge_ranges("rank 1 exit", (10.1, 12.0), "rank 0 exit", (8.0, 10.0), unit="ms")  # apart by 1%: not a finding
    assert near.kind == "no measurable difference" and near.word == "inconclusive (ranges not 5% apart)"
    assert "the ranges are 0.1 ms (1.0%) from each other, under the 5% margin" in str(near)
    # the inconclusive verdict's reason from the rule's own numbers; the noise verdict has none
    assert near.reason == "ranges not 5% apart, and together they span 50.0%, more than the 5% margin"
    assert inside.reason == "" and touching.reason.startswith("the ranges touch, and together they span 50.0%")
    apart = judge_ranges("rank 1 exit", (10.6, 12.0), "rank 0 exit", (8.0, 10.0), unit="ms")
    assert apart.kind == "slower" and "measurably above" in str(apart)
    # 01's exercise 2 (run 20261206T104608Z): ratio ranges 0.005 apart read "measurably above"
    assert judge_ranges("tiny", (1.070, 1.307), "lesson", (0.879, 1.065), decimals=2).kind == "no measurable difference"
    assert ranges_apart((1.070, 1.307), (0.879, 1.065)) == "" and ranges_apart((0.5, 0.9), (1.0, 2.0)) == "below"
    assert judge_ranges("a", (1.0, 2.0), "b", (3.0, 4.0)).kind == "faster"


def test_apart_bounds_are_where_ranges_apart_flips_for_one_reading():
    """09 printed its cut-offs ("read only below x0.86 or above x1.13") from the rule by hand."""
    reference = (0.91, 1.07)
    below, above = apart_bounds(reference)
    assert below < reference[0] and above > reference[1]
    for cut, side, step in ((below, "below", -1), (above, "above", 1)):
        beyond, short = cut * (1 + step * 1e-9), cut * (1 - step * 1e-9)
        assert ranges_apart((beyond, beyond), reference) == side and ranges_apart((short, short), reference) == ""


def test_cut_off_miss_calls_a_reading_within_edge_of_a_cut_off_no_evidence():
    """ "vector bf16 x0.869 misses by 0.002" read as a finding, where a margin a point wider flips it."""
    from analysis.verdicts import EDGE, cut_off_miss

    cut_offs = (0.867, 1.124)
    assert cut_off_miss(0.869, cut_offs) == "at the edge: not evidence either way"
    assert cut_off_miss(1.120, cut_offs) == "at the edge: not evidence either way"
    assert cut_off_miss(0.867 + EDGE + 0.037, cut_offs) == "misses by 0.047"


def test_timings_from_separate_blocks_compare_by_range_and_a_busy_block_concludes_nothing():
    """01 read a 1-thread block that waited 50% beside 'leaving one CPU free absorbs one other process':
    a condition timed in its own block is judged against the quiet block by ranges, and a busy block by nothing."""
    from analysis.timing import Timing

    def timing(samples, contention=None):
        return Timing("t", np.asarray(samples, dtype=float), 1, contention)

    quiet = timing([10.0, 10.2, 10.5, 10.8, 11.0, 11.5], Contention(1.0, 0.0, 0.0, 0.0))
    slower = judge_timings(
        "one busy process", timing([14.0, 14.5, 15.0, 15.5, 16.0], Contention(1.0, 0.02, 0.4, 0.0)), "quiet", quiet
    )
    assert slower.kind == "slower" and "measurably above quiet" in str(slower)
    busy = judge_timings("one busy process", timing([9.0, 9.2, 9.5, 9.8, 10.0], Contention(1.0, 0.5, 0.5, 0.0)), "quiet", quiet)
    assert busy.kind == "busy" and not busy.measurable and "concludes nothing" in str(busy)
    assert "waited for a CPU 50%" in str(busy) and "faster" not in str(busy) and "below" not in str(busy)
    # a busy verdict still shows both spreads (A1 promised the steady state's p10-p90 and printed a median)
    assert "(p10-p90 9.0-10.0)" in str(busy) and f"(p10-p90 {quiet.p10_us:,.1f}-{quiet.p90_us:,.1f})" in str(busy)
    unknown = judge_timings("a", timing([10.8, 10.9, 11.0, 11.1, 11.2]), "quiet", quiet)  # no counters: judged by ranges alone
    assert unknown.kind == "no measurable difference"
    ratios = judge_timings(
        "at half width",
        timing([0.94, 0.945, 0.95, 0.955, 0.96]),
        "at full width",
        timing([1.02, 1.022, 1.025, 1.028, 1.03]),
        unit="x",
        decimals=2,
    )
    assert ratios.kind == "faster" and "0.94-0.96 x against 1.02-1.03 x" in str(ratios)  # not "0.9-1.0 x"


def test_a_reading_of_fewer_samples_than_a_range_needs_is_not_a_verdict():
    """01's exercise printed 'first recorded step (one sample) measurably above the other steps' from one
    step 3% above the others' p90: one reading has no spread, so it is placed, not judged."""
    from analysis.timing import Timing
    from analysis.verdicts import MIN_RANGE_SAMPLES

    others = Timing("others", np.array([4929.6, 4736.1, 4567.5, 4594.5, 4736.6]), 1)
    first = judge_timings("first recorded step", Timing("first", np.array([4986.9]), 1), "the other steps", others)
    assert first.kind == "withheld" and not first.measurable and "measurably" not in str(first)
    assert "read 4,986.9 us, higher than the p10-p90 of the other steps" in str(first) and "one reading" in str(first)
    assert first.row()["verdict"] == "withheld" and "too few" in first.row()["figure"]
    few = Timing("few", np.array([1.0, 2.0, 3.0, 4.0][: MIN_RANGE_SAMPLES - 1]), 1)
    assert judge_timings("a", others, "b", few).kind == "withheld"  # the reference's side counts too
    assert "inside" in str(judge_timings("c", Timing("c", np.array([4700.0]), 1), "the others", others))


def test_a_statement_about_steps_holds_only_in_every_step():
    """08 said '2 of 6 steps' beside '2 of 3 steps', and called 2 of 3 a finding."""
    assert judge_steps("the last to arrive also left last", 2, 3).kind == "does not hold"
    assert "in 2 of 3 steps of this run, not in every one" in str(judge_steps("the last to arrive also left last", 2, 3))
    assert judge_steps("x", 8, 8).kind == "holds" and "every one of the 8 steps" in str(judge_steps("x", 8, 8))
    # two steps are too few to call anything a rule: A5's "0 of 2 | does not hold" read as a finding
    two = judge_steps("x", 0, 2, "off step")
    assert two.kind == "withheld" and str(two) == "too few off steps for a rule (2; a verdict needs 5): x in 0 of 2 off steps"
    # A5 printed "rank 1 arrived last: in every one of the 4 collectives" where a range needs 5 readings
    four = judge_steps("rank 1 arrived last", 4, 4, "collective")
    assert (
        four.kind == "withheld"
        and str(four).startswith("too few collectives for a rule (4; a verdict needs 5): ")
        and "in 4 of 4 collectives" in str(four)
    )
    assert judge_steps("x", 5, 5).kind == "holds" and judge_steps("x", 3, 4).kind == "does not hold"
    assert two.row()["verdict"] == "withheld" and two.row()["value"] == "0 of 2" and two.relation == "about 1"
    # A5's "2 of 3 | does not hold" read as the opposite of "held in 2 of 3"
    assert judge_steps("x", 2, 3).row()["verdict"] == "not in every step" and judge_steps("x", 2, 3).relation == "about 1"
    assert judge_steps("x", 0, 5).row()["verdict"] == "does not hold"  # in none: the plain words are right
    # A2 printed "lay above the timer's p90: in 0 of 5 steps, not a rule of this run"
    assert str(judge_steps("x", 0, 5)) == "x: in none of the 5 steps" and judge_steps("x", 0, 5).kind == "does not hold"


def test_withheld_and_the_table():
    held = withheld("the large-shape ranking", "the copy floor failed its check")
    assert held.kind == "withheld" and "copy floor failed" in str(held) and not held.measurable
    table = verdict_table([held, judge_ratio(PairedRatio("a", "b", np.array([2.0] * 5)))])
    assert list(table.columns) == ["comparison", "figure", "value", "p10", "p90", "verdict"]
    assert list(table["verdict"]) == ["withheld", "slower"] and table["comparison"].iloc[1] == "a / b"
    assert table["figure"].iloc[1] == "median ratio" and table["value"].iloc[1] == pytest.approx(2.0)


def test_the_table_says_what_each_figure_is():
    """08 printed 'rank 0's wait / rank 1's wait | 20.543 | ... | slower' under 'median': a range
    verdict's midpoint in us read as a ratio, and its "slower" as a time."""
    ranges = judge_ranges("rank 0's wait", (18.142, 22.944), "rank 1's wait", (10.0, 12.0), unit="us")
    steps = judge_steps("the last to arrive also left last", 5, 5)
    row, step_row = verdict_table([ranges, steps]).to_dict("records")
    assert row["comparison"] == "rank 0's wait against rank 1's wait (p10-p90 10.0-12.0 us)" and "/" not in row["comparison"]
    assert row["figure"] == "subject's p10-p90 midpoint (us)" and row["value"] == pytest.approx(20.543)
    assert (row["p10"], row["p90"], row["verdict"]) == (pytest.approx(18.142), pytest.approx(22.944), "higher")
    assert judge_ranges("a", (1.0, 2.0), "b", (3.0, 4.0)).word == "lower"
    assert ranges.kind == "slower" and ranges.relation == "above 1"  # claims keep the kind
    assert step_row["value"] == "5 of 5" and step_row["figure"] == "steps it held in" and step_row["verdict"] == "holds"
    assert (step_row["p10"], step_row["p90"]) == ("", "")
    count = counted("one naive call", 11, "kernels", "a fused call", 2)
    assert verdict_table([count]).to_dict("records")[0]["figure"] == "count (kernels)"


def test_a_verdicts_claim_is_rechecked_against_the_metric():
    ratio = PairedRatio("naive", "fused", np.array([1.9, 2.0, 2.1]))
    record = {"value": ratio.median, "unit": "ratio", "p10": ratio.p10, "p90": ratio.p90}
    claim = judge_ratio(ratio).claim("naive_over_fused").record()
    assert check_claims([claim], {"naive_over_fused": record}) == []
    flipped = {**record, "p10": 0.9}  # the published spread now holds 1: the sentence no longer holds
    assert check_claims([claim], {"naive_over_fused": flipped})


def _reference_metrics() -> dict:
    runs = sorted(REFERENCE_RUNS.glob("*/metrics.json"))
    if not runs:
        pytest.fail("no committed reference run under docs/reference-runs/ (make run && make publish)")
    return json.loads(runs[-1].read_text())["notebooks"]


def test_the_reference_runs_claims_hold_by_the_same_rule():
    notebooks = _reference_metrics()
    checked = 0
    for stem, metrics in notebooks.items():
        claims = (metrics.get("claims") or {}).get("value") or []
        assert check_claims(claims, metrics) == [], stem
        checked += len(claims)
    assert checked > 0


def test_judge_steps_names_where_the_steps_came_from():
    recorded = judge_steps("the device ran behind the host", 45, 49, "call", scope="these recorded traces")
    assert str(recorded).endswith("in 45 of 49 calls of these recorded traces, not in every one")
    assert str(judge_steps("x", 4, 5)).endswith("of this run, not in every one")  # the default is unchanged


def test_a_count_states_both_counts_and_their_ratio_and_nothing_more():
    v = counted("an NVIDIA H100, one naive call", 11, "full-size reads/writes", "a fused call", 2, "7 of them float32")
    assert (
        str(v) == "an NVIDIA H100, one naive call: 11 full-size reads/writes (7 of them float32) against 2 for a fused call, 5.5x"
    )
    assert v.kind == "count" and v.median == 11 and v.p10 == pytest.approx(5.5) and not v.measurable


def test_an_estimate_says_about_its_basis_and_what_it_cannot_show():
    v = estimate("a fused call", {"an NVIDIA H100": 16.7, "an AMD MI300X": 12.94}, "us", "a byte model", "launch gaps", 1)
    assert str(v) == (
        "a fused call: about 16.7 us on an NVIDIA H100, about 12.9 us on an AMD MI300X "
        "(estimated, not measured: a byte model; this estimate cannot show launch gaps)"
    )
    assert v.kind == "estimate" and v.median == pytest.approx(16.7) and not v.measurable


def test_machine_line_takes_a_contention_of_a_block_that_is_not_a_timing():
    busy, quiet = Contention(1.0, 0.5, 0.6, 0.0), Contention(1.0, 0.0, 0.0, 0.0)
    assert machine_line({"profile": busy}, block="profiling").startswith("BUSY: the machine was busy while profiling (")
    assert machine_line({"profile": busy}, block="profiling").endswith("comparisons drawn from that block conclude nothing")
    assert machine_line({"a": quiet, "b": busy}).endswith("comparisons drawn from these timings conclude nothing")
    assert machine_line({"profile": quiet}, block="profiling").startswith("quiet while profiling (")
    assert machine_line({"profile": None}, block="profiling") == (
        "CPU contention while profiling: not measured on this system (no /proc schedstat)"
    )


def test_ranges_of_too_few_samples_are_a_reading_not_a_verdict():
    """A5 printed "rank 0's compute_ms measurably above ...: 6.9-8.1 ms against 3.9-5.2 ms" from 3 steps
    a side, and 08's launch in the same run showed the opposite: 3 values have no spread to judge by."""
    from analysis.verdicts import MIN_RANGE_SAMPLES

    few = judge_ranges("on", (6.9, 8.1), "off", (3.9, 5.2), "ms", counts=(3, 3))
    assert few.kind == "withheld" and not few.measurable and "measurably" not in str(few)
    assert str(few).startswith("on read 6.9-8.1 ms, higher than the p10-p90 of off (3.9-5.2 ms): on is 3 readings")
    row = few.row()
    assert row["verdict"] == "withheld" and row["figure"] == "subject's p10-p90 midpoint (ms), too few samples"
    assert row["value"] == pytest.approx(7.5) and few.relation == "about 1"
    # the reference's side counts too; enough on both sides is judged as before
    assert "off is one reading" in str(judge_ranges("on", (6.9, 8.1), "off", (4.0, 4.0), "ms", counts=(9, 1)))
    enough = (MIN_RANGE_SAMPLES, MIN_RANGE_SAMPLES)
    assert judge_ranges("on", (6.9, 8.1), "off", (3.9, 5.2), "ms", counts=enough).kind == "slower"
    assert judge_ranges("on", (6.9, 8.1), "off", (3.9, 5.2), "ms").kind == "slower"  # no counts: as before


def test_a_ratio_of_too_few_rounds_is_a_reading_not_a_verdict():
    """08 printed "rank 1 took 1.16x ... slower (per off step p10-p90 1.08-1.30)" from 3 off steps, while
    the ranges beside it, of the same 3 steps, were withheld: one rule, fewer than 5 is a reading."""
    from analysis.verdicts import MIN_RANGE_SAMPLES

    few = judge_ratio(PairedRatio("rank 1", "rank 0", np.array([1.08, 1.16, 1.30]), "off step"))
    assert few.kind == "withheld" and not few.measurable and "slower" not in str(few)
    assert str(few) == (
        "rank 1 / rank 0 read 1.16 (per off step p10-p90 1.08-1.30) over 3 off steps, too few for a spread "
        "(a verdict needs 5 off steps): a reading, not a verdict"
    )
    row = few.row()
    assert row["figure"] == "median ratio" and row["verdict"] == "withheld" and row["value"] == pytest.approx(1.16)
    # its claim re-checks the printed figures' side of 1, and holds on the metric it was published as
    metric = {"r": {"value": few.median, "unit": "ratio", "p10": few.p10, "p90": few.p90}}
    assert few.relation == "above 1" and check_claims([few.claim("r").record()], metric) == []
    assert judge_ratio(PairedRatio("a", "b", np.array([0.9, 1.1]))).relation == "about 1"
    enough = np.linspace(1.08, 1.30, MIN_RANGE_SAMPLES)
    assert judge_ratio(PairedRatio("rank 1", "rank 0", enough, "off step")).kind == "slower"
    # a busy block still says busy, however few its rounds
    busy = PairedRatio("a", "b", np.array([2.0, 2.1]), contention=Contention(1.0, 0.5, 0.5, 0.0))
    assert judge_ratio(busy).kind == "busy"


def test_a_reading_says_overlapping_unless_contained():
    """07 printed "step 4's compute read 2.9-3.7 ms, inside the p10-p90 of ... (2.8-3.1 ms)": it overlaps."""
    over = judge_ranges("step 4's compute", (2.9, 3.7), "the others", (2.8, 3.1), "ms", counts=(2, 4))
    assert "2.9-3.7 ms, overlapping the p10-p90 of the others (2.8-3.1 ms)" in str(over)
    assert "2 readings, too few for a spread (a verdict needs 5 readings): not a verdict" in str(over)
    inside = judge_ranges("s", (2.9, 3.0), "the others", (2.8, 3.1), "ms", counts=(2, 4))
    assert "2.9-3.0 ms, inside the p10-p90" in str(inside)


def test_the_table_never_shows_a_bare_negative():
    """07's table read "no measurable difference" for 1.55 (p10-p90 0.95-3.93): a negative finding."""
    wide = judge_ratio(PairedRatio("static", "dynamic", np.array([0.95] * 2 + [1.55] * 6 + [3.93] * 2)))
    assert (
        wide.kind == "no measurable difference"
        and wide.row()["verdict"] == "cannot tell apart, inconclusive (p10-p90 holds 1 and reaches past the 5% margin)"
    )
    assert judge_ranges("a", (1.0, 3.0), "b", (2.0, 4.0)).word == "inconclusive (the ranges overlap)"
    assert judge_ranges("a", (1.2, 4.2), "b", (0.8, 5.1)).word == "inconclusive (one range lies inside the other)"  # 08


def test_a_spread_that_holds_1_is_said_without_sizes():
    """07 printed "between 41% faster and 1% slower" (ratio 0.59) three lines above "1.69x faster":
    two sizes for one kind of effect. A spread that holds 1 now says only which way its rounds went."""
    verdict = judge_ratio(PairedRatio("a", "b", np.array([0.94] * 2 + [0.97] * 6 + [1.001] * 2)))
    # counted ("some faster and others slower" read as a balance where 2 of 15 set the p10)
    assert "the p10-p90 holds 1, with 8 of 10 rounds below 1, 2 above" in str(verdict) and "%" not in str(verdict)
    exact = judge_ratio(PairedRatio("a", "b", np.array([1.0] * 5 + [1.2] * 5)))
    assert "the p10-p90 touches 1" in str(exact)


def test_a_machine_line_names_the_span_when_only_pressure_was_measured():
    """08 printed "quiet while timing (some task on the machine waited 2% of it)": "it" had no duration."""
    pressure_only = Contention(4.9, None, 0.02, 0.0)
    assert (
        machine_line({"launch": pressure_only})
        == "quiet while timing (some task on the machine waited 2% of the 4.9 s; BUSY when the machine's tasks wait 10% or more)"
    )
    both = Contention(2.0, 0.01, 0.02, 0.0).seen()
    assert both == "a thread of this process waited for a CPU 1% of the 2.0 s; some task on the machine waited 2% of it"
    # lessons print the short form; appendix A1 asks for every counter
    busy = {"block": SimpleNamespace(contention=Contention(0.1, 0.4, 0.5, 0.0))}
    assert "some task" not in machine_line(busy) and "some task on the machine waited 50% of it" in machine_line(busy, full=True)


def test_ranges_that_are_apart_print_apart():
    """06 printed "naive 2.7-3.0 % host only against torch.rms_norm 3.0-3.2 %" beside "measurably below":
    the ends differed (2.97 < 3.04) but printed alike, so the reader saw the rule broken. The numbers now
    carry the decimals that show the gap; ranges whose ends print apart keep the decimals asked for."""
    apart = judge_ranges("naive", (0.81, 0.96), "torch.rms_norm", (1.02, 1.2), "x")  # 6% apart, alike at 1 decimal
    assert apart.kind == "faster" and "0.81-0.96 x against 1.02-1.20 x" in str(apart)
    near = judge_ranges("naive", (2.71, 2.97), "torch.rms_norm", (3.04, 3.22), "%")  # 2% apart: within the margin
    assert near.kind == "no measurable difference" and "(2.71-2.97 % against 3.04-3.22 %, p10-p90)" in str(near)
    plain = judge_ranges("naive", (2.71, 2.84), "torch.rms_norm", (3.04, 3.22), "%")
    assert "2.7-2.8 % against 3.0-3.2 % (p10-p90)" in str(plain)
    touching = judge_ranges("a", (1.0, 2.0), "b", (2.0, 3.0))  # equal ends: touching is not apart, 1 decimal suffices
    assert touching.kind == "no measurable difference" and "1.0-2.0 us against 2.0-3.0 us" in str(touching)


def test_a_range_that_is_not_a_p10_p90_says_what_it_is():
    """06 compares two factors whose ranges are quotients of p10-p90 ranges: the sentence names them so."""
    v = judge_ranges("step", (3.3, 3.7), "host-only time", (1.1, 1.6), "x", spread="quotients of the p10-p90 ranges")
    assert v.kind == "slower" and str(v).endswith("(quotients of the p10-p90 ranges)")


def test_a_range_row_shows_what_the_subject_was_set_against():
    """08's table showed rank 0's wait range beside "higher" but not rank 1's, which it was judged against;
    then it showed rank 1's as "(0.0-0.0 ms)", an end that is not zero printed as zero."""
    v = judge_ranges("rank 0's wait", (19.7, 20.07), "rank 1's wait", (0.01, 0.08), "ms")
    assert v.row()["comparison"] == "rank 0's wait against rank 1's wait (p10-p90 0.01-0.08 ms)"
    assert v.row()["verdict"] == "higher" and "against 0.01-0.08 ms" in str(v) and str(v).count("rank 1's wait") == 1
    assert "0.002-0.004 ms" in str(judge_ranges("a", (1.0, 2.0), "b", (0.002, 0.004), "ms"))


def test_a_range_row_shows_the_subjects_median_where_given():
    """08 patched the table after verdict_table: a range row's value was the midpoint of the subject's p10-p90
    (20.7 for a wait whose median was 20.3), and nothing said the value, p10 and p90 were the subject's while
    the comparison carried the reference's range. The median is the table's figure; the rule reads the ranges."""
    from analysis.timing import Timing

    given = judge_ranges("rank 0's wait", (20.0, 23.5), "rank 1's wait", (0.0, 0.0), "ms", counts=(5, 5), median=20.34)
    row = given.row()
    assert row["figure"] == "subject's median (ms)" and row["value"] == pytest.approx(20.34)
    assert (row["p10"], row["p90"]) == (pytest.approx(20.0), pytest.approx(23.5)) and row["verdict"] == "higher"
    assert str(given) == str(judge_ranges("rank 0's wait", (20.0, 23.5), "rank 1's wait", (0.0, 0.0), "ms"))
    few = judge_ranges("on", (6.9, 8.1), "off", (3.9, 5.2), "ms", counts=(3, 3), median=7.9).row()
    assert few["figure"] == "subject's median (ms), too few samples" and few["value"] == pytest.approx(7.9)
    # judge_timings has each side's median: its range rows show it
    steps = Timing("a", np.array([10.0, 11.0, 11.0, 11.0, 30.0]), 1)
    judged = judge_timings("a", steps, "b", Timing("b", np.array([1.0, 1.1, 1.2, 1.3, 1.4]), 1)).row()
    assert judged["figure"] == "subject's median (us)" and judged["value"] == pytest.approx(11.0)


def test_a_range_verdict_records_the_claim_its_sentence_makes():
    apart = judge_ranges("naive", (2.5, 2.8), "torch.rms_norm", (3.0, 3.2), "%")
    assert apart.ranges_claim("n", "r").relation == "<" and apart.ranges_claim("n", "r").metrics == ("n", "r")
    above = judge_ranges("torch.rms_norm", (3.0, 3.2), "naive", (2.5, 2.8), "%")
    assert above.ranges_claim("r", "n").metrics == ("n", "r")
    overlap = judge_ranges("naive", (2.7, 3.1), "torch.rms_norm", (3.0, 3.2), "%").ranges_claim("n", "r")
    assert overlap.relation == "overlap" and overlap.metrics == ("n_p10", "n_p90", "r_p10", "r_p90")


def test_the_table_shows_judge_ratios_own_words():
    """08 passed slower="longer compute" and its table still read "slower"."""
    longer = judge_ratio(PairedRatio("rank 1", "rank 0", np.array([1.5] * 6)), "shorter compute", "longer compute")
    assert longer.kind == "slower" and longer.word == "longer compute" and longer.row()["verdict"] == "longer compute"
    assert judge_ratio(PairedRatio("a", "b", np.array([2.0] * 6))).word == "slower"


def test_a_ratio_prints_its_median_and_both_ends_at_one_precision():
    """04 printed "0.36x (per-round p10-p90 0.34-0.36)": a median that seemed to sit on its own p90;
    A1 printed "0.98-1.051", two ends at two precisions."""
    samples = np.array([0.342] * 2 + [0.350, 0.354, 0.356, 0.356, 0.358, 0.360] + [0.361] * 2)
    text = str(judge_ratio(PairedRatio("compiled", "naive", samples)))
    assert "took 0.356x the time" in text and "p10-p90 0.342-0.361" in text
    wide = str(judge_ratio(PairedRatio("a", "b", np.array([0.98] * 2 + [1.0] * 6 + [1.0512] * 2))))
    assert "p10-p90 0.980-1.051" in wide


def test_a_table_bound_is_never_rounded_onto_the_band_edge():
    """05's table printed p10 1.050 beside 'not measurable (p10-p90 reaches within 5% of 1)': it was 1.0498."""
    samples = np.array([1.0498] * 2 + [1.07, 1.075, 1.076, 1.076, 1.08, 1.09] + [1.109] * 2)
    row = judge_ratio(PairedRatio("torch.rms_norm", "naive", samples)).row()
    assert row["verdict"] == "cannot tell apart, inconclusive (p10-p90 reaches within 5% of 1)" and row["p10"] == 1.0498


def test_a_verdict_shown_by_a_notebook_cell_reads_as_its_sentence():
    """06's exercise 3 ends its cell in a Verdict: IPython shows the sentence, not the dataclass."""
    from IPython.lib.pretty import pretty

    v = withheld("the ranking", "the copy floor failed its check")
    assert pretty(v) == str(v) == "the ranking: withheld, the copy floor failed its check"


def test_a_pairing_of_two_words_is_not_hyphenated():
    """08 printed "median per off step rank 1 / rank 0" for its off-step ratio."""
    from analysis.timing import PairedRatio

    ratio = PairedRatio("rank 1", "rank 0", np.array([0.9, 1.0, 1.05, 0.95, 1.02]), "off step")
    said = str(judge_ratio(ratio))
    assert "per off step" in said and "per-off" not in said


def test_a_quiet_line_beside_other_tasks_over_the_threshold_says_whose_wait_counts():
    """06 printed "other tasks waited at most 11% ..." and then "BUSY from 10%" inside a quiet line: a reader saw a
    contradiction. The rule now names whose wait it counts."""
    line = machine_line({"step": Contention(0.05, 0.0, 0.11, 0.0)}, block="profiling")
    assert line.startswith("quiet while profiling (this process waited for a CPU 0%")
    assert "other tasks waited 11% of it, which BUSY does not count" in line
    assert line.endswith("; BUSY when this process waits 10% or more)")


def test_counted_prints_the_decimals_it_is_given():
    """08 printed summed kernel ms as whole numbers beside a table at one decimal: 302 - 195 read 107, not 106."""
    assert str(counted("rank 1", 135.5, "ms", "rank 0", 106.3)).startswith("rank 1: 136 ms against 106 for rank 0, 1.3x")
    assert "135.5 ms against 106.3 for rank 0, 1.3x" in str(counted("rank 1", 135.5, "ms", "rank 0", 106.3, decimals=1))


def test_a_faster_ratio_prints_the_decimals_that_give_back_its_factor():
    """04 printed "0.35x the time of naive: 2.89x faster": 1 / 0.35 is 2.86. The median now carries the decimals
    that give back the printed factor by hand."""
    sentence = str(judge_ratio(PairedRatio("torch.compile", "naive", np.array([0.340, 0.343, 0.346, 0.348, 0.351]))))
    shown, factor = sentence.split(" took ")[1].split("x the time")[0], sentence.split(": ")[1].split("x faster")[0]
    assert f"{1 / float(shown):.2f}" == factor, sentence


def test_a_gap_inside_the_margin_is_the_gap_between_the_ends_as_printed():
    """Ends printed 13.7 and 13.8 sat beside "the ranges lie 0.2 ... apart" (the unrounded gap)."""
    from analysis.verdicts import _why_not_apart

    line = _why_not_apart((13.84, 44.8), (3.3, 13.66), "% host only", ".1f")  # unrounded gap 0.18
    assert line.startswith("the ranges are 0.1 % host only (")
