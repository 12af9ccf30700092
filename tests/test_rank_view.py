"""analysis.rank_view on ranks 0 and 1 of a real 128-rank NCCL job recorded on A100 GPUs
(data/recorded/, by the HTA project): kernel time per rank, and who waited in each collective."""

import pytest

from analysis.rank_view import TOGETHER_US, collective_kernel_waits, rank_kernel_time
from analysis.recorded import load_recorded


@pytest.fixture(scope="module")
def ranks():
    return {r: load_recorded(f"rank{r}") for r in (0, 1)}


def test_kernel_time_per_rank_and_per_step(ranks):
    whole = rank_kernel_time(ranks)
    assert list(whole.index) == [0, 1] and (whole["collective_kernels"] > 0).all()
    assert (whole["compute_us"] + whole["collective_us"] == whole["kernel_us"]).all()
    steps = [rank_kernel_time(ranks, step=s) for s in sorted(ranks[0].steps["step"])]
    # every kernel of these traces was launched inside one of the two recorded steps
    assert (sum(s["kernels"] for s in steps) == whole["kernels"]).all()
    assert sum(s["kernel_us"] for s in steps).to_numpy() == pytest.approx(whole["kernel_us"].to_numpy())


def test_who_waited_in_the_collectives(ranks):
    waits = collective_kernel_waits(ranks)
    assert waits.groupby("rank").size().nunique() == 1  # the n-th collective of each rank, paired
    together = waits[waits["together"]]
    assert len(together) > 0 and (together["end_spread_us"] <= TOGETHER_US).all()
    for _, pair in together.groupby("index"):
        assert (pair["wait_us"] == 0).sum() >= 1  # the last to arrive waited for nobody
        assert (pair["wait_us"] <= pair["device_us"]).all()  # nobody waited longer than it sat in the kernel
    assert waits.loc[~waits["together"], "wait_us"].isna().all()  # no wait claimed where they did not end together
    assert set(ranks[0].steps["step"]) == set(ranks[1].steps["step"])


def test_arrival_chance_in_words_says_always_where_chance_makes_it_certain():
    from analysis.rank_view import ArrivalOrder

    certain = ArrivalOrder(last_counts={0: 2, 1: 1}, steps=3, chance=1.0)
    assert certain.chance_text() == "random order always puts some rank last that often with 2 ranks and 3 steps"
    rare = ArrivalOrder(last_counts={0: 4, 1: 0}, steps=4, chance=0.125)
    assert rare.chance_text() == "random order does that in 12% of runs"
