"""Notebook 08's launcher: bad launches refused with their fix, the failure path reported by
rank with nothing left running, and the documented Neuron recipe (CONTRACT: not run here); 08's
job read back for appendix A5, and a job A5 cannot check refused with the fix."""

import itertools
import json
import os
import socket
import types

import numpy as np
import pytest
import torch
import torch.distributed as dist

from helpers.errors import BackendUnavailableError, ParameterError, SeriesError
from helpers.metrics import metric, write_metrics
from analysis.contention import Contention
from analysis.rank_view import arrival_order, chance_some_rank_last, collective_waits
from lesson.ranks import (
    arrival_parts,
    arrival_parts_line,
    rank_cpu_waits,
    ranks_contention,
    check_launch,
    last_arrival_lines,
    load_rank_job,
    neuron_recipe_lines,
    neuron_torchrun_recipe,
    slow_step_wait_line,
)
from series_tools.run_series import select_notebooks

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


def _alternating_steps(last_without_extra_work: list[int]) -> pd.DataFrame:
    """Two ranks; rank 1 arrives last on every odd (straggling) step, the given rank on the even ones."""
    rows = []
    for i, late in enumerate(last_without_extra_work):
        for step, last in ((2 * i, late), (2 * i + 1, 1)):
            rows += [
                {
                    "rank": r,
                    "step": step,
                    "straggling": bool(step % 2),
                    "start": 0.0,
                    "compute_end": 9.0 if r == last else 5.0,
                    "collective_end": 10.0,
                }
                for r in (0, 1)
            ]
    return pd.DataFrame(rows)


def test_a_last_arrival_count_certain_by_counting_is_not_printed_as_a_probability():
    lines = last_arrival_lines(collective_waits(_alternating_steps([0, 1, 0, 1, 0])), slowest=1, ranks=2)
    assert lines[0] == "slow steps: rank 1 arrived last in 5 of 5"  # extra work on purpose: no chance beside it
    assert lines[1].startswith("without extra work, tied (within 0.1 ms) in 0 of 5; last: rank 0 in 3 of 5, rank 1 in 2 of 5 (")
    assert "always last at least 3 times: says nothing" in lines[1] and "probability" not in lines[1]
    rare = last_arrival_lines(collective_waits(_alternating_steps([0] * 5)), slowest=1, ranks=2)
    assert rare[1].startswith("without extra work, tied (within 0.1 ms) in 0 of 5; last: rank 0 in 5 of 5 (")
    label = "; a reading, not a finding (Exercise 2))"  # steps are not independent
    assert rare[1].endswith("last in all 5, if steps were independent: 0.06; 5 steps cannot give less" + label)  # 2 x 0.5**5
    four = last_arrival_lines(collective_waits(_alternating_steps([0, 0, 0, 0, 1])), slowest=1, ranks=2)
    assert four[1].endswith("chance of some rank last in 4 or more of 5, if steps were independent: 0.38" + label)  # 2 x 6/32
    # below the series' rule (0.05) too: the chance assumes independent steps, so it is never a finding
    # where the last rank also left the step before later on most off steps, the line says so
    steps = _alternating_steps([0, 0, 0, 0, 1])
    steps["collective_end"] += ((steps["step"] % 2 == 1) & (steps["rank"] == 0)) * 2.0  # rank 0 leaves odd steps later
    dependent = last_arrival_lines(collective_waits(steps), slowest=1, ranks=2)[1]
    assert dependent.endswith(  # the count, and "not independent" only as a reading
        "independent: 0.38; a reading: they may not be: on 3 of 4 off steps"
        " the last rank also left the previous step later (Exercise 2))"
    )
    # leaving the step before 0.1 ms later or less is a tie too, so it is not counted as later (0.05 ms was)
    steps["collective_end"] -= ((steps["step"] % 2 == 1) & (steps["rank"] == 0)) * 1.94  # rank 0 now 0.06 ms later
    tied = last_arrival_lines(collective_waits(steps), slowest=1, ranks=2)[1]
    assert "they may not be" not in tied and tied.endswith("; a reading, not a finding (Exercise 2))")
    # a lead of 0.1 ms or less is a tie: left out of the counts and of the chance (0.25 over 3 decided steps)
    close = _alternating_steps([0] * 5)
    close.loc[(close["step"].isin([4, 6])) & (close["rank"] == 1), "compute_end"] = 8.95  # 0.05 ms behind rank 0
    tied = last_arrival_lines(collective_waits(close), slowest=1, ranks=2)[1]
    assert tied.startswith("without extra work, tied (within 0.1 ms) in 2 of 5; last: rank 0 in 3 of 3 (")
    assert "last in all 3, if steps were independent: 0.25" in tied
    nine = last_arrival_lines(collective_waits(_alternating_steps([0] * 9 + [1])), slowest=1, ranks=2)
    assert nine[1].endswith("last in 9 or more of 10, if steps were independent: 0.02" + label)  # 2 x 11/1024, below 0.05


def test_slow_step_wait_line_names_the_later_start_only_where_the_wait_exceeds_the_extra_work():
    steps = _alternating_steps([0] * 5)  # rank 1 arrives at 9, rank 0 at 5: a 4 ms wait
    late = steps.assign(
        start=steps["start"].where(steps["rank"] == 0, 1.0), compute_end=steps["compute_end"] + 1.0 * steps["rank"]
    )
    line = slow_step_wait_line(collective_waits(late), slowest=1, straggler_ms=3)
    assert line == (
        "slow steps (medians): rank 0 waited 5.0 ms (rank 1 was set to add 3 ms), rank 1 itself 0.0 ms\n"
        "slow steps' step-start gaps (+ = rank 1 later) 1.00 to 1.00 ms, largest at step 1"
    )
    early, level = (late["rank"] == 1) & (late["step"] == 1), (late["rank"] == 1) & (late["step"] == 3)
    mixed = late.assign(  # one slow step where rank 1 started 0.5 ms earlier, one 0.104 ms later
        start=late["start"].mask(early, -0.5).mask(level, 0.104),
        compute_end=late["compute_end"].mask(early, 8.5).mask(level, 8.104),
    )
    assert slow_step_wait_line(
        collective_waits(mixed), slowest=1, straggler_ms=3
    ).endswith(
        "slow steps' step-start gaps (+ = rank 1 later) -0.50 to 1.00 ms, largest at step 5"  # the lags' range, not their median alone
    )
    covered = slow_step_wait_line(collective_waits(late), slowest=1, straggler_ms=5)  # the wait does not exceed it
    assert covered.endswith("rank 0 waited 5.0 ms (rank 1 was set to add 5 ms), rank 1 itself 0.0 ms")
    same_start = slow_step_wait_line(collective_waits(steps), slowest=1, straggler_ms=3)  # 4 > 3, but no later start
    assert same_start.endswith("rank 1 itself 0.0 ms")


def test_contract_neuron_torchrun_recipe_is_the_documented_one():
    """The launch line of the vendor's PyTorch profiling example (docs/NEURON_NOTES.md N30); the two
    TORCH_NEURONX_ENABLE_* variables belong to its host-collective example, not to this launch."""
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


def test_neuron_recipe_lines_explain_the_neuron_parts_and_warn_a_seat_on_every_backend():
    """08 prints one command to launch, with every part in words (torchrun flags: CHEATSHEET): `env -u` alone, the
    vendor example's two variables (UNVERIFIED under torchrun) on a line of their own, never in the command; the
    workshop-seat warning on a cpu run too (instructors)."""
    lines = neuron_recipe_lines(2, active=10, straggler_rank=1, straggler_ms=20)
    assert neuron_torchrun_recipe(2, "-m lesson.rank_worker", vendor_variables=False) in lines[0] and "documented" not in lines[0]
    assert "NEURON_RT_NUM_CORES" not in lines[0] and lines[0].startswith(
        "The recipe (from the repository root, in the course's Python environment; UNVERIFIED: never run here): env -u "
    )
    assert lines[0].endswith(
        " --tee 3 -m lesson.rank_worker --out DIR --backend neuron --device neuron --active 10"
        " --straggler-rank 1 --straggler-ms 20"
    )  # one command to paste; section 4 needs slow steps
    assert not any("your_script.py" in line for line in lines)
    assert "waits = collective_waits(rank_steps(DIR)); plot_rank_steps(" in lines[-2]  # how to read the stamps after
    assert lines[-1].startswith("  expected: rank 1 arrives last on its slow steps")  # what to compare against
    assert not neuron_recipe_lines(2, 10, -1, 20)[-1].startswith("  expected")  # no straggler, no prediction
    unset = next(line for line in lines[1:] if "env -u NEURON_RT_VISIBLE_CORES" in line)  # the part a seat must change
    assert "In a shared workshop, the 2 ranks would take NeuronCores 0-1 from other students" in unset
    assert "the instructor runs it after class" in unset  # what a seat does instead
    vendor = next(line for line in lines[1:] if "NEURON_RT_NUM_CORES" in line)  # the example's, named as such
    assert "NEURON_RT_NUM_CORES=2 NEURON_RT_VIRTUAL_CORE_SIZE=2 (N30; under torchrun UNVERIFIED)" in vendor
    check = next(line for line in lines[1:] if line.startswith("  check:"))  # how to see the cores taken
    assert "`neuron-ls`" in check
    for flag in ("--nproc_per_node", "--rdzv_backend", "--rdzv_endpoint", "--local-ranks-filter", "--tee"):  # each in words
        assert any(flag in line for line in lines[1:]), flag


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


# ------------------------------------------------------------------ 08's job read back for A5
def write_rank_job(run_dir, ranks=2, active=4, straggler=1, backend="cpu"):
    """08's output folder as 08 writes it: each rank's stamps and trace (ProfilerStep, the worker's
    regions), then its metrics (the rank count, the launch's contention), written last."""
    folder = run_dir / "08_many_processes" / "ranks"
    folder.mkdir(parents=True)
    first = 3  # WAIT + WARMUP unrecorded steps before the first recorded one
    for r in range(ranks):
        steps, events = [], []
        for i, step in enumerate(range(first + active)):
            start = 100_000_000 * i
            slow = r == straggler and step % 2
            compute_end = start + (30 if slow else 10) * 1_000_000
            steps.append(
                {
                    "step": step,
                    "recorded": step >= first,
                    "straggling": bool(step % 2),
                    "start": start,
                    "compute_end": compute_end,
                    "collective_end": start + 35_000_000,
                }
            )
            if step >= first:
                us = start / 1000
                events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": us, "dur": 40_000})
                if slow:
                    events.append(
                        {"ph": "X", "cat": "user_annotation", "name": "straggler work", "ts": us + 10_000, "dur": 20_000}
                    )
                events.append({"ph": "X", "cat": "user_annotation", "name": "all_reduce", "ts": compute_end / 1000, "dur": 5_000})
        for e in events:
            e.update(pid=1, tid=1, args={})
        (folder / f"rank{r}.json").write_text(json.dumps({"rank": r, "steps": steps}))
        (folder / f"rank{r}.trace.json").write_text(json.dumps({"traceEvents": events}))
    busy = {"contention": Contention(3.0, None, 0.01, 0.0).record()}
    metrics = {"ranks": metric(ranks, "processes"), "rank0_compute_on_ms": metric(10.0, "ms", **busy)}
    write_metrics(folder.parent, "08_many_processes", backend, metrics)
    return folder


def test_08s_rank_job_is_read_back_with_its_parameters(tmp_path):
    folder = write_rank_job(tmp_path)
    job = load_rank_job(tmp_path, "cpu")
    assert job.folder == folder
    assert job.parameters == {"BACKEND": "cpu", "RANKS": 2, "ACTIVE": 4, "STRAGGLER_RANK": 1}
    assert len(job.steps) == 2 * 4 and set(job.steps["step"]) == {3, 4, 5, 6}  # the recorded steps only
    assert sorted(job.traces) == [0, 1] and len(job.traces[1].steps) == 4
    assert job.contention.busy is False and job.contention.wall_s == 3.0


def _stale_rank(folder):  # an earlier 08 with RANKS = 3 into the same folder left its rank 2
    (folder / "rank2.json").write_text((folder / "rank1.json").read_text())
    os.utime(folder / "rank2.json", (0, 0))


def _unfinished(folder):  # a later 08 rewrote the ranks' files and stopped before its metrics
    later = (folder.parent / "metrics.json").stat().st_mtime + 10
    os.utime(folder / "rank0.json", (later, later))


def _no_straggler(folder):
    for r in (0, 1):
        trace = folder / f"rank{r}.trace.json"
        kept = [e for e in json.loads(trace.read_text())["traceEvents"] if e["name"] != "straggler work"]
        trace.write_text(json.dumps({"traceEvents": kept}))


@pytest.mark.parametrize(
    "spoil,backend,problem,fix",
    [
        (None, "cpu", "no rank job of notebook 08", '--notebooks 08 A5"'),
        (_unfinished, "cpu", "did not finish its last run", '--notebooks 08 A5"'),
        (_stale_rank, "cpu", "rank0.json, rank1.json, rank2.json, and 08's metrics say RANKS = 2", '--notebooks 08 A5"'),
        (lambda folder: None, "cuda", "08 ran on cpu", '--notebooks 08 A5"'),
        (_no_straggler, "cpu", "0 straggling ranks", "STRAGGLER_RANK >= 0 and STRAGGLER_MS > 0"),
    ],
    ids=["missing", "unfinished", "stale-rank-file", "other-backend", "no-straggler"],
)
def test_a_rank_job_a5_cannot_check_is_refused_with_the_fix(tmp_path, spoil, backend, problem, fix):
    if spoil is not None:
        spoil(write_rank_job(tmp_path))
    with pytest.raises(SeriesError) as err:
        load_rank_job(tmp_path, backend)
    assert problem in err.value.problem and "\n" not in err.value.problem  # one line, then the fix
    assert fix in err.value.fix and "make run" in err.value.fix


def test_too_few_recorded_steps_are_refused_with_the_fix(tmp_path):
    write_rank_job(tmp_path, active=1)  # one recorded step: no step without the straggler to compare
    with pytest.raises(SeriesError) as err:
        load_rank_job(tmp_path)
    assert "with and without the straggler" in err.value.problem and "ACTIVE >= 2" in err.value.fix


def test_a5_alone_runs_the_notebooks_it_reads_first():
    for asked in (["A5"], ["A5", "08"]):
        assert [p.stem for p in select_notebooks(asked)] == [
            "07_shapes_and_recompiles",
            "08_many_processes",
            "A5_ranks_and_shapes_checks",
        ]


class _StandIn:
    """A model and a batch for train_step without a device: the batch's device type is all it reads."""

    def __init__(self, device_type: str):
        self.linear = torch.nn.Linear(4, 4)
        self.batch = types.SimpleNamespace(device=types.SimpleNamespace(type=device_type))

    def __call__(self, batch):
        return self.linear(torch.ones(2, 4))

    def parameters(self):
        return self.linear.parameters()


@pytest.mark.parametrize("device_type, syncs", [("neuron", 3), ("cuda", 3), ("cpu", 0)])
def test_train_step_synchronizes_a_queueing_device_before_every_stamp(monkeypatch, device_type, syncs):
    """TorchNeuron, like CUDA, runs asynchronously (docs/NEURON_NOTES.md N46): a stamp read before the
    device finished would put queued compute into the wait. cpu never queues, so it never synchronizes."""
    from lesson import rank_worker

    calls = []
    for name in ("cuda", "neuron"):
        monkeypatch.setattr(torch, name, types.SimpleNamespace(synchronize=lambda n=name: calls.append(n)), raising=False)
    monkeypatch.setattr(rank_worker.dist, "all_reduce", lambda grads: None)  # no process group: the exchange is not under test
    model = _StandIn(device_type)
    marks = rank_worker.train_step(model, model.batch, straggle_s=0.0)
    assert list(marks) == ["start", "compute_end", "collective_end"]
    assert calls == [device_type] * syncs


def test_the_worker_accepts_the_recipes_neuron_device_and_builds_it_without_an_index(monkeypatch, capsys):
    """08's printed recipe runs the worker with `--device neuron`; TorchNeuron's backend shows each rank
    one NeuronCore (N30), so the device carries no index. cpu and cuda are built as before."""
    from lesson import rank_worker

    args = rank_worker.parse_args(["--out", "d", "--backend", "neuron", "--device", "neuron"])
    assert (args.backend, args.device) == ("neuron", "neuron")
    assert rank_worker.parse_args(["--out", "d"]).device == "cpu"
    with pytest.raises(SystemExit):
        rank_worker.parse_args(["--out", "d", "--device", "tpu"])
    assert "neuron" in capsys.readouterr().err  # the refusal lists the choices, neuron among them
    assert rank_worker.rank_device("cpu", 1) == torch.device("cpu")
    assert rank_worker.rank_device("cuda", 1) == torch.device("cuda", 1)
    built = []  # this torch has no neuron device type: record what the worker asks for
    monkeypatch.setattr(rank_worker.torch, "device", lambda *a: built.append(a) or a)
    rank_worker.rank_device("neuron", 1)
    assert built == [("neuron",)]


def _job_inputs(busy: bool):
    from types import SimpleNamespace

    import pandas as pd

    from analysis.contention import Contention
    from analysis.timing import PairedRatio

    trace = SimpleNamespace(steps=[1, 2, 3, 4])
    contention = Contention(1.0, 0.5 if busy else 0.0, 0.0, None)
    job = {"traces": {0: trace, 1: trace}, "active": 4, "ranks": 2, "contention": contention, "run": SimpleNamespace(seconds=3.0)}
    versus = PairedRatio("rank 1", "rank 0", np.array([7.7, 8.1, 7.7, 7.7, 8.5]), "step", contention)
    found = {
        "slowest": 1,
        "others": pd.Index([0]),
        "compute_on": pd.Series({0: 3.0, 1: 23.4}),
        "wait_on": pd.Series({0: 20.5, 1: 0.1}),
        "versus": versus,
    }
    return job, found, versus


def test_straggler_job_metrics_claims_what_section_4_printed_and_checks_the_planted_rank():
    """08's bookkeeping, moved out of the lesson: the claims follow the launch's busy flag and the planted straggler."""
    import pytest

    from analysis.verdicts import judge_ratio
    from lesson.ranks import straggler_job_metrics

    job, found, versus = _job_inputs(busy=False)
    metrics = straggler_job_metrics(job, (1, 20.0), found, judge_ratio(versus), None)
    relations = [c["relation"] for c in metrics["claims"]["value"]]
    assert relations[1:] == ["max", "min"] and metrics["straggler_identified"]["value"] == 1
    assert metrics["rank1_compute_on_ms"]["value"] == 23.4 and metrics["failure_exit_code"]["value"] is None
    with pytest.raises(AssertionError, match="not the straggler 0"):
        straggler_job_metrics(job, (0, 20.0), found, judge_ratio(versus), None)  # the planted rank was not found slowest
    assert straggler_job_metrics(job, (-1, 0.0), found, judge_ratio(versus), None)["claims"]["value"] == []  # none planted
    busy_job, _, _ = _job_inputs(busy=True)
    busy = straggler_job_metrics(busy_job, (0, 20.0), found, judge_ratio(versus), None)  # busy: no check of which rank
    assert [c["relation"] for c in busy["claims"]["value"]][1] == "busy"


def test_arrival_parts_split_each_wait_into_the_later_start_and_the_longer_compute():
    """Arrival = start + compute: the rank that computed longer arrives first where it started early enough."""
    stamps = [  # (rank, step, start, compute_end): step 0 rank 0 computes longer (3 vs 2) but rank 1 starts 2 later
        (0, 0, 0.0, 3.0),
        (1, 0, 2.0, 4.0),
        (0, 1, 0.0, 5.0),  # step 1: rank 0 computes 4 longer, starts 1 earlier: rank 0 last
        (1, 1, 1.0, 2.0),
    ]
    left = {(0, 0): 6.0, (1, 0): 7.5, (0, 1): 6.0, (1, 1): 6.0}  # step 0: rank 1 leaves the all-reduce 1.5 later
    steps = pd.DataFrame(
        [
            {"rank": r, "step": s, "straggling": False, "start": a, "compute_end": e, "collective_end": left[r, s]}
            for r, s, a, e in stamps
        ]
    )
    parts = arrival_parts(collective_waits(steps))
    assert parts["arrived last"].tolist() == [1, 0]
    assert parts["arrived first"].tolist() == [0, 1]
    assert parts["wait_ms"].tolist() == pytest.approx([1.0, 3.0])
    assert parts["step-start gap (ms)"].tolist() == pytest.approx([2.0, -1.0])
    assert parts["computed longer by (ms)"].tolist() == pytest.approx([-1.0, 4.0])
    added = parts["step-start gap (ms)"] + parts["computed longer by (ms)"]
    assert added.tolist() == pytest.approx(parts["wait_ms"].tolist())
    # the step before: step 1's last rank (0) left step 0's all-reduce 1.5 ms before its first rank (1); step 0 has none
    assert parts["left previous step later by (ms)"].iloc[1] == pytest.approx(-1.5)
    assert parts["left previous step later by (ms)"].isna().iloc[0]
    assert arrival_parts_line(parts) == (  # who waited, summed per rank (not who arrived last most often)
        "in all, over the 2 off steps, rank 0 waited 1.0 ms; rank 1 waited 3.0 ms. Why: 4.0 ms waited (ranks 0 and 1): summed over the steps, the last-arriving ranks computed"
        " 3.0 ms longer (less on step 0) and started 1.0 ms later (gaps: +2.0 where it started later, -1.0 where earlier);"
        " the larger part changes from step to step; not a verdict"
    )  # step 0: the start gap (2.0) is larger, step 1: the compute (4.0)
    tiny = parts.assign(**{"computed longer by (ms)": [-0.01, 4.0]})  # every negative the table shows counts
    assert "(less on step 0)" in arrival_parts_line(tiny)
    twice = pd.concat([parts, parts.iloc[[1]].assign(wait_ms=0.5).rename(index={1: 2})])  # rank 1: 3.0 of 3.5 at step 1
    assert arrival_parts_line(twice).startswith(
        "in all, over the 3 off steps, rank 0 waited 1.0 ms; rank 1 waited 3.5 ms, 3.0 at step 1 (rank 0 computed 4.0 ms longer, left step 0's all-reduce 1.5 ms earlier)."
    )
    fewer = twice.assign(**{"computed longer by (ms)": [-1.0, -0.1, 4.0]})  # "computed 0.1 ms less", not "-0.1 ms longer"
    assert "(rank 0 computed 0.1 ms less, left step 0's all-reduce" in arrival_parts_line(fewer)
    only = arrival_parts(collective_waits(steps), steps=[1])  # the split steps chosen; the step before still read
    assert only.index.tolist() == [1] and only["left previous step later by (ms)"].iloc[0] == pytest.approx(-1.5)
    assert "the step before" not in arrival_parts_line(parts.drop(columns="left previous step later by (ms)"))
    behind = parts.assign(**{"step-start gap (ms)": [-2.0, -1.0]})
    assert " and started 3.0 ms earlier;" in arrival_parts_line(behind)
    tiny = parts.iloc[:1].assign(wait_ms=0.06, **{"step-start gap (ms)": -0.04, "computed longer by (ms)": 0.1})
    assert " and started 0.0 ms later; " in arrival_parts_line(tiny)  # -0.04 prints 0.0, not -0.0, and no "earlier"
    # a total built from rounded parts printed 9.5 for 9.44 ms: the true total, and "parts rounded" where they differ
    run = parts.iloc[:1].assign(wait_ms=1.74, **{"step-start gap (ms)": 1.35, "computed longer by (ms)": 0.39})
    line = arrival_parts_line(run)
    assert (
        "1.7 ms waited: summed over the steps, the last-arriving ranks computed 0.4 ms longer and started 1.4 ms later, parts rounded;"
        in line
    )
    assert ", parts rounded" not in arrival_parts_line(parts)  # 4.0 = 3.0 + 1.0 and 1.0 = 2.0 - 1.0: no note
    # +4.0 compute against -3.8 gap in one step; later gaps (5.6) reach the net compute (5.1): no larger part named
    netted = parts.assign(**{"step-start gap (ms)": [5.6, -3.8], "computed longer by (ms)": [1.1, 4.0]})
    assert arrival_parts_line(netted).endswith("; netted over the steps: which part is larger, 2 steps cannot say")


def test_arrival_parts_line_splits_the_compute_share_into_the_work_set_and_the_rest():
    """Step 0: rank 1 (the straggler, 1 ms set) arrives last: +1; step 1 it arrives first: -1; the rest is other difference."""
    parts = pd.DataFrame(
        {
            "arrived last": [1, 0],
            "arrived first": [0, 1],
            "wait_ms": [1.0, 3.0],
            "step-start gap (ms)": [2.0, -1.0],
            "computed longer by (ms)": [-1.0, 4.0],
        },
        index=pd.Index([0, 1], name="step"),
    )
    both = arrival_parts_line(parts, (1, 1.0))  # the rest: -2.0 in step 0, 5.0 in step 1: a part over the net 3.0
    assert "(extra work 0 x 1 ms as set, not its traced time; the rest 3.0)" in both
    assert " in step" not in both
    same = parts.assign(**{"computed longer by (ms)": [1.0, 2.0]})  # the rest 0.0 and 3.0: one sign, step 1 most
    assert "(extra work 0 x 1 ms as set, not its traced time; the rest 3.0; 3.0 in step 1)" in arrival_parts_line(same, (1, 1.0))
    one = arrival_parts_line(parts.iloc[:1], (1, 1.0))  # the straggler last: its 1 ms set, and -2.0 the rest
    assert "computed 1.0 ms less (extra work 1 x 1 ms as set, not its traced time; the rest -2.0; -2.0 in step 0)" in one
    spread = parts.assign(**{"computed longer by (ms)": [2.0, 0.0]})  # the rest 1.0 and 1.0: no step holds most
    assert "(extra work 0 x 1 ms as set, not its traced time; the rest 2.0)" in arrival_parts_line(spread, (1, 1.0))


def test_ranks_contention_is_the_worst_rank_and_names_a_rank(tmp_path):
    """Each rank's JSON holds its own counters over its profiled steps: BUSY when any rank's is; traces are not read."""
    for rank, waited in ((0, 0.01), (1, 0.4)):
        record = Contention(0.2, waited, 0.05, 0.0)
        (tmp_path / f"rank{rank}.json").write_text(json.dumps({"rank": rank, "steps": [], "contention": vars(record)}))
    (tmp_path / "rank0.trace.json").write_text("{}")
    contention, line = ranks_contention(tmp_path)
    assert contention.busy and contention.waited_fraction == 0.4
    assert line.startswith("BUSY") and "a rank's CPU run-queue delay" in line and "this process" not in line
    # each block is one rank's profiled steps: the short form (machine line, verdicts) says so, not "this process"
    busy = "a rank's CPU run-queue delay was 40% of its profiled steps, at or over the 10% BUSY line"  # the line it reached
    assert f"({busy})" in line
    assert busy == contention.seen(short=True)
    assert "of 2 timed blocks, one per rank, which" in contention.seen()  # the full form metrics.json records
    for rank, waited in ((0, 0.01), (1, 0.0801)):  # quiet 2 points below the limit prints the margin
        (tmp_path / f"rank{rank}.json").write_text(
            json.dumps({"rank": rank, "contention": vars(Contention(0.2, waited, 0.05, 0.0))})
        )
    # every rank's CPU wait, rounded up as metrics.json's "at most" (8.01% is 9%, never 8%)
    quiet = "quiet, under the 10% BUSY line: CPU run-queue delay at most rank 0 1% , rank 1 9% of the profiled steps"
    assert ranks_contention(tmp_path)[1] == quiet.replace(" ,", ",")
    assert "at most 9%" in ranks_contention(tmp_path)[0].seen()  # the same rounding as the metrics' bound
    (tmp_path / "rank1.json").write_text(json.dumps({"rank": 1, "contention": vars(Contention(0.2, 0.0993, 0.05, 0.0))}))
    near = "just under the 10% BUSY line: rank 1's CPU run-queue delay was at most 9.93% of its profiled steps"  # one number
    assert ranks_contention(tmp_path)[1] == near
    assert rank_cpu_waits(tmp_path) == {0: 0.01, 1: 0.0993}


def test_torchrun_exits_reads_the_root_cause_and_the_stopped_ranks_from_torchrun_s_report():
    from lesson.ranks import torchrun_exits

    log = """lesson.rank_worker FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-07_19:40:31
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 9513)  (SIGTERM)
  error_file: <N/A>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 9514)
  error_file: <N/A>
"""
    assert torchrun_exits(log) == {0: "exit code -15 (SIGTERM)", 1: "root cause: exit code 1"}
    assert torchrun_exits("no report") == {}
