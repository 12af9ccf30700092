"""The copy floor's own check: a same-bytes triad judges whether the copy moved its bytes."""

import numpy as np
import pytest
import torch

from analysis.floor import check_floor, triad_probe
from analysis.timing import Timing


def timing(median_us: float, spread: float = 0.0) -> Timing:
    half = median_us * spread / 2
    return Timing("t", np.array([median_us - half] * 2 + [median_us] * 6 + [median_us + half] * 2), inner=1)


def test_floor_sound_when_copy_is_slower_than_the_triad_but_of_its_order():
    check = check_floor(timing(200.0), timing(100.0), bytes_moved=2_000_000, memory_bound=True)
    assert check.ok and check.copy_gb_per_s == pytest.approx(10.0) and check.copy_over_probe == pytest.approx(0.5)


def test_floor_flagged_when_copy_beats_the_triad_or_is_far_slower_or_noisy():
    too_fast = check_floor(timing(50.0), timing(100.0), 2_000_000, memory_bound=True)
    assert not too_fast.ok and "2.00x the triad" in too_fast.problems[0]
    assert not check_floor(timing(1000.0), timing(100.0), 2_000_000, memory_bound=True).ok
    noisy = check_floor(timing(100.0, spread=0.6), timing(100.0), 2_000_000, memory_bound=True)
    assert noisy.problems == ["the copy's spread is wide (0.60 > 0.25)"]


def test_floor_bandwidth_not_judged_where_overhead_bound():
    assert check_floor(timing(50.0), timing(100.0), 64, memory_bound=False).ok


def test_the_verdict_is_explained_with_the_checks_own_numbers():
    """A sound copy at half the triad's bandwidth says why that is sound: the accepted range, its ratio,
    the allocation it pays, and the spread; an overhead-bound shape says its bandwidth was not compared."""
    slow = check_floor(timing(200.0), timing(100.0), 2_000_000, memory_bound=True).explain(copy_into_over_probe=0.8)
    assert slow.startswith("sound:") and "0.25-1.5x (here 0.50x)" in slow and "reached 0.80x the triad" in slow
    assert "spread, 0.00, is within" in slow
    too_fast = check_floor(timing(50.0), timing(100.0), 2_000_000, memory_bound=True).explain()
    assert too_fast.startswith("FLAGGED:") and "(here 2.00x)" in too_fast and "memory it already had" not in too_fast
    small = check_floor(timing(50.0, spread=0.6), timing(100.0), 64, memory_bound=False).explain(0.9)
    assert small.startswith("FLAGGED:") and "not compared" in small and "0.60, is above the 0.25 allowed" in small


def test_triad_probe_moves_the_copys_bytes_without_allocating():
    x = torch.randn(30, 10)
    probe = triad_probe(x)
    out = probe()
    assert out.numel() == 200 and out.dtype == x.dtype  # 3 tensors x 200 elements = 2 x 300 elements
    assert probe().data_ptr() == out.data_ptr()  # the same output every call
