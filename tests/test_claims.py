"""Claims: a conclusion is checked against the metrics it cites, and a wrong one is caught."""

import numpy as np
import pytest

from analysis.claims import Claim, check_claims, ratio_relation
from analysis.timing import PairedRatio
from analysis.verdicts import judge_ratio

METRICS = {  # as notebook 05 publishes them (values from a cpu run)
    "large_naive_over_copy": {"value": 3.26, "unit": "ratio", "p10": 3.2, "p90": 3.3},
    "large_rms_norm_over_copy": {"value": 3.24, "unit": "ratio", "p10": 3.2, "p90": 3.3},
    "large_compile_over_copy": {"value": 1.28, "unit": "ratio", "p10": 1.25, "p90": 1.31},
    "small_compile_speedup_over_naive": {"value": 0.47, "unit": "ratio", "p10": 0.44, "p90": 0.5},
}


def test_true_conclusions_hold():
    claims = [
        Claim(
            "min",
            ("large_compile_over_copy", "large_naive_over_copy", "large_rms_norm_over_copy"),
            "- Large shape: best torch.compile",
        ).record(),
        Claim("<", ("large_compile_over_copy", "large_rms_norm_over_copy", "large_naive_over_copy"), "rank").record(),
        Claim("below 1", ("small_compile_speedup_over_naive",), "naive faster at small").record(),
    ]
    assert check_claims(claims, METRICS) == []


def test_a_deliberately_wrong_conclusion_is_caught():
    wrong = Claim(
        "min", ("large_naive_over_copy", "large_compile_over_copy", "large_rms_norm_over_copy"), "- Large shape: best naive"
    ).record()
    (problem,) = check_claims([wrong], METRICS)
    assert "best naive" in problem and "large_naive_over_copy=3.26" in problem and "claims min" in problem


def test_a_comparison_inside_the_noise_must_say_so():
    inside = {"r": {"value": 1.03, "unit": "ratio", "p10": 0.97, "p90": 1.08}}
    assert ratio_relation(0.97, 1.08) == "about 1" and ratio_relation(1.01, 1.03) == "about 1"
    assert check_claims([Claim("above 1", ("r",), "3% slower").record()], inside)  # caught: within the spread
    assert check_claims([Claim("about 1", ("r",), "no measurable difference").record()], inside) == []


def test_a_claim_citing_an_unpublished_metric_is_caught():
    (problem,) = check_claims([Claim("max", ("nope", "large_naive_over_copy"), "x").record()], METRICS)
    assert "unpublished" in problem and "nope" in problem


def test_unknown_relation_is_refused():
    with pytest.raises(ValueError):
        Claim("faster", ("a",), "x")


def test_an_overlap_claim_holds_only_where_the_published_ranges_overlap_or_touch():
    """06 says "this run cannot tell naive and torch.rms_norm apart": the claim re-checks the ranges."""
    metrics = {k: {"value": v} for k, v in {"a10": 2.7, "a90": 3.0, "b10": 3.0, "b90": 3.4, "c10": 3.2, "d10": 3.1}.items()}
    touching = Claim("overlap", ("a10", "a90", "b10", "b90"), "cannot tell a and b apart").record()
    apart = Claim("overlap", ("a10", "a90", "c10", "b90"), "cannot tell a and c apart").record()
    near = Claim("overlap", ("a10", "a90", "d10", "b90"), "cannot tell a and d apart").record()  # 3% apart: within the margin
    assert check_claims([touching, near], metrics) == [] and len(check_claims([apart], metrics)) == 1


def test_an_inconclusive_ratio_records_inconclusive_not_about_1():
    """01 published "about 1" beside "inconclusive, not a finding that they cost the same"."""
    wide = {"r": {"value": 1.08, "unit": "ratio", "p10": 1.01, "p90": 1.13}}
    verdict = judge_ratio(PairedRatio("a", "b", np.array([1.01] * 2 + [1.08] * 6 + [1.13] * 2)))
    assert verdict.relation == "inconclusive" and check_claims([verdict.claim("r").record()], wide) == []
    inside = {"r": {"value": 1.0, "unit": "ratio", "p10": 0.99, "p90": 1.02}}
    assert check_claims([Claim("inconclusive", ("r",), "cannot tell").record()], inside)  # inside the margin: a finding
    assert check_claims([Claim("inconclusive", ("r",), "cannot tell").record()], {"r": {**wide["r"], "p10": 1.06}})
