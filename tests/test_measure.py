"""The series' timer: interleaved samples, paired ratios and what they say about noise."""

import numpy as np
import pytest

from analysis.timing import PairedRatio, Timing, paired_ratio, time_interleaved, time_per_call


def test_interleaved_cases_take_turns_and_contexts_wrap_only_their_case(cpu_backend):
    order, entered = [], []

    class Counting:
        def __enter__(self):
            entered.append(order[-1] if order else None)

        def __exit__(self, *exc):
            return False

    cases = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    out = time_interleaved(cases, cpu_backend, contexts={"b": Counting}, repeats=4, warmup=1, max_inner=1)
    assert set(out) == {"a", "b"} and all(len(t.samples_us) == 4 for t in out.values())
    # after warm-up and the inner-count probe: one sample of each, in turn (timeit's measured
    # loop only: no untimed calls inside a round)
    timed = order[-8:]
    assert timed == ["a", "b"] * 4
    assert len(entered) == 4 and all(prev == "a" for prev in entered)  # entered before each b sample
    order.clear()
    time_interleaved(cases, cpu_backend, repeats=4, warmup=0, max_inner=1, alternate=True)
    assert order[-8:] == ["a", "b", "b", "a"] * 2  # odd rounds reversed: each case first as often (01)


def test_time_per_call_batches_short_calls(cpu_backend):
    t = time_per_call(lambda: None, cpu_backend, repeats=3, min_sample_s=0.001)
    assert t.inner > 1 and t.median_us > 0 and t.p10_us <= t.median_us <= t.p90_us


def test_a_sample_of_a_microsecond_call_lasts_about_min_sample_s(cpu_backend):
    # sized from one call, a sample of a call this short lasted a fraction of min_sample_s (one call's clock
    # reads counted as the call); sized from a batch, it lasts about min_sample_s
    x = list(range(50))
    t = time_per_call(lambda: sum(x), cpu_backend, repeats=5, min_sample_s=0.01, max_inner=100_000)
    assert t.inner * t.median_us * 1e-6 >= 0.006


def test_paired_ratio_is_taken_per_round():
    timings = {
        "slow": Timing("slow", np.array([200.0, 400.0, 220.0, 300.0, 260.0]), 1),
        "fast": Timing("fast", np.array([100.0, 200.0, 110.0, 150.0, 130.0]), 1),
    }
    r = paired_ratio(timings, "slow", "fast")
    # every round is exactly 2x, although the samples themselves spread by 2x
    assert r.median == pytest.approx(2.0) and r.p10 == pytest.approx(2.0) and r.p90 == pytest.approx(2.0)
    assert r.measurable and "2.00x the time of" in r.describe() and ": slower (" in r.describe()


def test_ratio_whose_spread_holds_one_is_no_measurable_difference():
    r = PairedRatio("a", "b", np.array([0.9, 1.05, 1.1, 0.97, 1.02]))
    assert not r.measurable
    assert r.describe().startswith("this run cannot tell a and b apart") and r.describe().endswith(
        "inconclusive, not a finding that they cost the same"
    )
    inside = PairedRatio("a", "b", np.array([0.97, 0.99, 1.0, 1.01, 1.03]))  # the whole spread within the margin
    assert inside.describe().startswith("no measurable difference between a and b: the whole p10-p90 lies within 5% of 1")


def test_faster_is_said_as_a_factor_above_one():
    r = PairedRatio("compiled", "naive", np.array([0.25, 0.26, 0.24, 0.255, 0.245]))
    assert r.median == pytest.approx(0.25)
    assert "4.00x faster" in r.describe()


def test_the_spread_names_what_was_paired():
    assert "per-round p10-p90" in PairedRatio("a", "b", np.array([2.0, 2.1, 1.9])).describe()
    assert "per-step p10-p90" in PairedRatio("a", "b", np.array([2.0, 2.1, 1.9]), pairing="step").describe()


def test_samples_run_with_the_kernels_intra_op_threads(cpu_backend):
    """torch.utils.benchmark.Timer would default to 1 thread; the series measures with the kernel's own setting."""
    import torch

    seen = []
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        time_interleaved({"a": lambda: seen.append(torch.get_num_threads())}, cpu_backend, repeats=2, warmup=0, max_inner=1)
    finally:
        torch.set_num_threads(before)
    assert set(seen) == {2}


def test_a_bound_near_one_prints_the_decimals_that_place_it():
    """A p10 of 1.0036 must not print as 1.00, which reads as a range holding 1.0."""
    text = PairedRatio("a", "b", np.array([1.0036] * 2 + [1.09] * 8)).describe()
    assert "p10-p90 1.004-1.09" in text and "reaches within 5% of it" in text
    assert "p10-p90 0.90-1.10" in PairedRatio("a", "b", np.array([0.9] * 2 + [1.1] * 8)).describe()


def test_p10_p90_are_mirrored_order_statistics_so_a_range_inverts_and_agrees_with_a_count():
    """An interpolated p10 of 0.58 beside "2 of 15 rounds under half", and 1/p10 of a ratio that was not the
    p90 of its inverse. The series' p10/p90 are samples, mirrored from both ends."""
    from analysis.timing import p10_p90

    rng = np.random.default_rng(0)
    for n in (3, 5, 10, 15, 16):
        rounds = rng.uniform(0.2, 1.2, n)
        lo, hi = p10_p90(rounds)
        assert lo in rounds and hi in rounds and lo <= hi
        inverse = p10_p90(1 / rounds)
        assert inverse == (1 / hi, 1 / lo)  # exactly: the same two rounds, swapped
        order = np.sort(rounds)
        assert (lo, hi) == (order[int(0.1 * (n - 1))], order[n - 1 - int(0.1 * (n - 1))])
    rounds = np.array([0.37, 0.4] + [0.9] * 13)  # 2 of 15 under half: the p10 is under half too
    assert p10_p90(rounds)[0] < 0.5
