"""Notebook 08's launcher: bad launches refused with their fix, the failure path reported by
rank with nothing left running, and the documented Neuron recipe (CONTRACT: not run here)."""

import itertools
import socket

import pytest
import torch.distributed as dist

from helpers.errors import BackendUnavailableError, ParameterError
from analysis.rank_view import arrival_order, chance_some_rank_last, collective_waits
from lesson.ranks import check_launch, neuron_torchrun_recipe

import pandas as pd


def test_more_ranks_than_cores_is_refused_with_the_fix():
    with pytest.raises(ParameterError) as err:
        check_launch(3, "cpu", cores=2)
    assert "needs a core per rank" in str(err.value) and "RANKS <= 2" in err.value.fix


def test_a_port_in_use_is_refused_with_the_fix():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(ParameterError) as err:
            check_launch(2, "cpu", port=s.getsockname()[1], cores=2)
    assert "in use" in str(err.value) and "MASTER_PORT = 0" in err.value.fix


def test_a_missing_collective_backend_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(dist, "is_gloo_available", lambda: False)
    with pytest.raises(BackendUnavailableError, match="no gloo backend"):
        check_launch(2, "cpu", cores=2)
    monkeypatch.setattr(dist, "is_nccl_available", lambda: False)
    with pytest.raises(BackendUnavailableError, match="BACKEND=cpu"):
        check_launch(1, "cuda", devices=1)


def test_waits_are_measured_against_the_last_arrival():
    steps = pd.DataFrame(
        {
            "rank": [0, 1, 0, 1],
            "step": [3, 3, 4, 4],
            "straggling": [True, True, False, False],
            "start": [0.0, 0.0, 50.0, 50.0],
            "compute_end": [10.0, 30.0, 60.0, 61.0],
            "collective_end": [33.0, 33.0, 63.0, 63.0],
        }
    )
    w = collective_waits(steps).set_index(["step", "rank"])
    assert w.loc[(3, 0), "wait_ms"] == 20.0 and w.loc[(3, 1), "wait_ms"] == 0.0
    assert w.loc[(3, 0), "exchange_ms"] == w.loc[(3, 1), "exchange_ms"] == 3.0


@pytest.mark.parametrize("steps,ranks", [(3, 2), (4, 2), (8, 2), (3, 3), (6, 3), (5, 4)])
def test_chance_of_one_rank_arriving_last_matches_counting_every_order(steps, ranks):
    orders = list(itertools.product(range(ranks), repeat=steps))
    for at_least in range(1, steps + 1):
        counted = sum(max(o.count(r) for r in range(ranks)) >= at_least for o in orders) / len(orders)
        assert chance_some_rank_last(steps, ranks, at_least) == pytest.approx(counted, abs=1e-12)


def test_arrival_order_counts_the_last_rank_of_each_step():
    steps = pd.DataFrame(
        {
            "rank": [0, 1] * 4,
            "step": [2, 2, 4, 4, 6, 6, 8, 8],
            "straggling": [False] * 8,
            "start": [0.0] * 8,
            "compute_end": [5.0, 6.0, 5.0, 7.0, 9.0, 8.0, 3.0, 4.0],
            "collective_end": [10.0] * 8,
        }
    )
    order = arrival_order(collective_waits(steps), ranks=2)
    assert order.last_counts == {0: 1, 1: 3} and order.steps == 4
    assert order.chance == pytest.approx(0.625) and order.explained_by_chance  # 3 of 4: chance does that often
    always = arrival_order(collective_waits(steps.assign(compute_end=[1.0, 9.0] * 4)), ranks=2)
    assert always.last_counts == {0: 0, 1: 4} and always.chance == pytest.approx(0.125)


def test_contract_neuron_torchrun_recipe_is_the_documented_one():
    """The launch line of the vendor's multi-rank profiling example (docs/NEURON_NOTES.md N30)."""
    recipe = neuron_torchrun_recipe(4)
    assert "TORCH_NEURONX_ENABLE_HOST_CC" not in recipe and "TORCH_NEURONX_ENABLE_ASYNC_NRT" not in recipe  # another example's
    for part in (
        "NEURON_RT_NUM_CORES=4",
        "NEURON_RT_VIRTUAL_CORE_SIZE=2",
        "torchrun --nproc_per_node 4",
        "--rdzv_backend c10d",
        "--local-ranks-filter 0",
        "--tee 3",
    ):
        assert part in recipe


def test_contract_torchrun_recipe_drops_an_inherited_visible_cores(monkeypatch):
    """N30: TorchNeuron's backend sets NEURON_RT_VISIBLE_CORES=LOCAL_RANK only where it is unset, so a
    seat's inherited value must not reach the ranks. The recipe's environment part is run here, with
    a Python that prints what a rank would see in place of torchrun."""
    import shlex
    import subprocess
    import sys

    words = shlex.split(neuron_torchrun_recipe(2))
    launcher = words[: words.index("torchrun")]
    monkeypatch.setenv("NEURON_RT_VISIBLE_CORES", "3")
    seen = subprocess.run(
        launcher + [sys.executable, "-c", "import os; print(os.environ.get('NEURON_RT_VISIBLE_CORES'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert seen == "None"


def test_a_crash_line_far_above_torchruns_summary_is_kept():
    from lesson.ranks import diagnostic_lines

    output = (
        ["[rank0] step 1"] * 5
        + ["terminate called after throwing an instance of 'gloo::IoException'", "  what():  Connection closed by peer"]
        + [f"summary {i}" for i in range(20)]
    )
    lines = diagnostic_lines("\n".join(output), tail=15)
    assert lines[:2] == output[5:7] and lines[2:] == output[-15:]
    assert diagnostic_lines("a\nb") == ["a", "b"]
