"""Launching notebook 08's ranks with torchrun, and reading what they measured.

`launch` checks first (a collective backend for this device, a core per rank, a free port), then
runs `python -m torch.distributed.run ... -m lesson.rank_worker` in a process group of its own,
with a timeout. However it ends, nothing of it is left running: the group is killed if needed,
and `Launch.leftover` says whether anything survived (it must not). `load_rank_job` reads back the
job 08 ran, from its output folder in a run folder, for appendix A5, which checks it.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.contention import BUSY_WAITED_FRACTION, Contention, _percent, combined
from analysis.rank_view import arrival_order, chance_some_rank_last, rank_steps
from analysis.traces import Trace, load_trace
from helpers.errors import BackendUnavailableError, ParameterError, SeriesError
from helpers.metrics import metric

COLLECTIVE_BACKENDS = {"cpu": "gloo", "cuda": "nccl", "neuron": "neuron"}  # neuron: docs/NEURON_NOTES.md N30


@dataclass
class Launch:
    command: list[str]
    returncode: int | None  # None: killed at the timeout
    seconds: float
    out_dir: Path
    errors: dict[int, str] = field(default_factory=dict)  # rank -> first line of its error
    output_tail: str = ""
    leftover: bool = False  # a process of the launch still alive afterwards
    first_failure: int | None = None  # the rank whose error was written first: the root cause

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.errors


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def check_launch(ranks: int, device: str, port: int = 0, cores: int | None = None, devices: int | None = None) -> str:
    """The collective backend for `device`, or a clear error naming the fix."""
    import torch.distributed as dist

    collective = COLLECTIVE_BACKENDS[device]
    if not dist.is_available():
        raise BackendUnavailableError("this torch was built without torch.distributed", "install a torch build with it")
    if collective == "gloo" and not dist.is_gloo_available():
        raise BackendUnavailableError(
            "torch.distributed has no gloo backend here, which cpu ranks need",
            "install a torch build with gloo (the standard Linux wheels have it)",
        )
    if collective == "nccl" and not dist.is_nccl_available():
        raise BackendUnavailableError(
            "torch.distributed has no nccl backend here, which cuda ranks need",
            "install a CUDA build of torch, or run with BACKEND=cpu (gloo)",
        )
    cores = os.cpu_count() if cores is None else cores
    if device == "cpu" and ranks > cores:
        raise ParameterError(
            f"RANKS={ranks} needs a core per rank, and this machine has {cores}",
            f"use RANKS <= {cores}, e.g. `-p RANKS {min(2, cores)}`",
        )
    if device == "cuda" and devices is not None and ranks > devices:
        raise ParameterError(f"RANKS={ranks} needs a GPU per rank, and this machine has {devices}", f"use RANKS <= {devices}")
    if port and port_in_use(port):
        raise ParameterError(
            f"MASTER_PORT {port} is in use by another process", "pick another port, or leave MASTER_PORT = 0 for a free one"
        )
    return collective


def launch(
    out_dir: Path,
    ranks: int,
    device: str,
    *,
    port: int = 0,
    launch_timeout_s: float = 120,
    env: dict[str, str] | None = None,
    **worker_args: object,
) -> Launch:
    """Run `ranks` workers with torchrun; wait at most `launch_timeout_s`; leave nothing running."""
    collective = check_launch(ranks, device, port)
    out_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(ranks),
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(port),
        "-m",
        "lesson.rank_worker",
        "--out",
        str(out_dir),
        "--backend",
        collective,
        "--device",
        device,
    ]
    for key, value in worker_args.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        # one thread per rank, said explicitly (torchrun would set it and print a warning)
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
    )
    try:
        output, _ = proc.communicate(timeout=launch_timeout_s)
        returncode = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        returncode = None
    leftover = _group_alive(proc.pid)
    if leftover:  # a worker outlived torchrun: end it, and report that it had to be ended
        os.killpg(proc.pid, signal.SIGKILL)
    (out_dir / "launch.log").write_text(output)  # everything torchrun and the ranks printed
    error_files = sorted(out_dir.glob("rank*.error.txt"), key=lambda p: p.stat().st_mtime_ns)
    errors = {int(p.name.split(".")[0].removeprefix("rank")): p.read_text().splitlines()[0] for p in error_files}
    first = next(iter(errors), None)  # errors are in the order their files were written
    return Launch(
        command, returncode, time.perf_counter() - start, out_dir, errors, "\n".join(diagnostic_lines(output)), leftover, first
    )


# What a rank prints when it dies outside Python (no error file): a C++ exception, a signal
CRASH_MARKERS = ("terminate called", "what():", "Aborted", "Segmentation fault", "Fatal Python error")


def torchrun_exits(log: str) -> dict[int, str]:
    """torchrun's own closing report (the launch's `launch.log`), per rank: its exit code, and whether torchrun
    named it the root cause (its first observed failure). A rank torchrun stopped shows its signal (SIGTERM):
    what a script on a cluster gets, where the worker's own error files may be out of reach."""
    exits: dict[int, str] = {}
    root, rank = False, None
    for line in log.splitlines():
        root = root or line.startswith("Root Cause")
        if found := re.match(r"\s+rank\s*:\s*(\d+)", line):
            rank = int(found.group(1))
        elif (found := re.match(r"\s+exitcode\s*:\s*(-?\d+)", line)) and rank is not None:
            signal_name = re.search(r"\((SIG[A-Z]+)\)", line)
            exits[rank] = (
                ("root cause: " if root else "")
                + f"exit code {found.group(1)}"
                + (f" ({signal_name.group(1)})" if signal_name else "")
            )
    return exits


def diagnostic_lines(output: str, tail: int = 15) -> list[str]:
    """The output's last `tail` lines, after any earlier line that says how a process crashed:
    torchrun's closing summary names the signal, but the line that says why comes long before it."""
    lines = output.strip().splitlines()
    crashes = [line for line in lines[:-tail] if any(marker in line for marker in CRASH_MARKERS)]
    return crashes[:10] + lines[-tail:]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class RanksContention(Contention):
    """The ranks' combined counters. Each timed block is one rank's profiled steps, so every line that prints
    them names a rank: "this process" read as the notebook's kernel, which did not run the steps."""

    def seen(self, short: bool = False, whose: str = "the") -> str:
        if short and self.waited_fraction is not None and self.waited_fraction >= BUSY_WAITED_FRACTION:
            # the share itself, rounded to the BUSY side, and the line it reached: an "at most" bound cannot say BUSY
            share = _percent(self.waited_fraction)
            return f"a rank's CPU run-queue delay was {share} of its profiled steps, at or over the {BUSY_WAITED_FRACTION:.0%} BUSY line"
        return (
            super().seen(short, whose).replace("this process", "a rank").replace(" timed blocks,", " timed blocks, one per rank,")
        )


def ranks_contention(out_dir: Path) -> tuple[Contention | None, str]:
    """The ranks' CPU contention over their profiled steps, each rank's own counters (its `rank<N>.json`),
    combined: BUSY when any rank's is; with the machine line that says so (a rank's wait, not this kernel's)."""
    from analysis.verdicts import machine_line

    paths = [p for p in out_dir.glob("rank*.json") if p.name.removeprefix("rank").removesuffix(".json").isdigit()]
    contention = combined([Contention(**json.loads(p.read_text())["contention"]) for p in sorted(paths)])
    if contention is not None:  # combined builds a plain Contention: its lines name a rank (RanksContention)
        contention = RanksContention(**{f: getattr(contention, f) for f in contention.__dataclass_fields__})
    line = machine_line({"ranks": contention}, "each rank ran its profiled steps") if contention else ""
    # every rank's CPU wait, rounded up as metrics.json's "at most" is, and which rank BUSY is judged on
    waited = rank_cpu_waits(out_dir)
    if contention and contention.busy is False and waited:
        each = ", ".join(f"rank {r} {_percent(f, up=True)}" for r, f in sorted(waited.items()))
        line = f"quiet, under the {BUSY_WAITED_FRACTION:.0%} BUSY line: CPU run-queue delay at most {each} of the profiled steps"
        worst = max(waited, key=waited.get)  # a pass by under a point is said to be one, with one number
        if waited[worst] > BUSY_WAITED_FRACTION - 0.01:
            line = (
                f"just under the {BUSY_WAITED_FRACTION:.0%} BUSY line: rank {worst}'s CPU run-queue delay"
                f" was at most {_percent(waited[worst], up=True)} of its profiled steps"
            )
    return contention, line


def rank_cpu_waits(out_dir: Path) -> dict[int, float]:
    """Each rank's CPU wait (the share of its profiled steps it waited for a CPU), from its `rank<N>.json`: 08's
    machine line prints them all, and its exchange line names the CPU as a candidate only for the rank that waited more."""
    records = {int(p.name[4:-5]): json.loads(p.read_text()) for p in out_dir.glob("rank*.json") if p.name[4:-5].isdigit()}
    return {
        r: c["contention"]["waited_fraction"] for r, c in records.items() if c["contention"].get("waited_fraction") is not None
    }


def neuron_torchrun_recipe(ranks: int, script: str = "your_script.py", vendor_variables: bool = True) -> str:
    """The vendor's documented torchrun launch for profiling on Trainium (N30): one NeuronCore per
    rank, console output of rank 0 only, and every rank writing its own profile folder
    (`<dir>/<instance>_pid_<pid>/`). The host-collective variables (TORCH_NEURONX_ENABLE_HOST_CC,
    TORCH_NEURONX_ENABLE_ASYNC_NRT) belong to another example of the vendor's and are not part of it.

    `env -u NEURON_RT_VISIBLE_CORES` first: TorchNeuron's distributed backend sets
    NEURON_RT_VISIBLE_CORES to each rank's LOCAL_RANK only where it is unset, so a shell that
    inherited a workshop seat's value would put every rank on that one core. `vendor_variables=False` leaves
    out the example's NEURON_RT_NUM_CORES and NEURON_RT_VIRTUAL_CORE_SIZE (what they do under torchrun is UNVERIFIED):
    the form notebook 08 prints, resting on TorchNeuron's per-rank core alone."""
    vendor = f"NEURON_RT_NUM_CORES={ranks} NEURON_RT_VIRTUAL_CORE_SIZE=2 " if vendor_variables else ""
    return (
        "env -u NEURON_RT_VISIBLE_CORES "
        f"{vendor}"
        f"torchrun --nproc_per_node {ranks} --rdzv_backend c10d --rdzv_endpoint localhost:29500 "
        f"--local-ranks-filter 0 --tee 3 {script}"
    )


def neuron_recipe_lines(ranks: int, active: int, straggler_rank: int, straggler_ms: float) -> list[str]:
    """`neuron_torchrun_recipe` with each part in plain words, for notebook 08 (not run there).

    Why: a reader going to a trn2 must know what every part of the command is for. The torchrun flags
    are PyTorch's own (as docs/CHEATSHEET.md glosses them; the rendezvous flags do what the lesson's
    --master-addr/--master-port do). The printed form is one command to launch, without the vendor example's
    NEURON_RT_NUM_CORES and NEURON_RT_VIRTUAL_CORE_SIZE: with NEURON_RT_VISIBLE_CORES unset, TorchNeuron gives each
    rank its local rank's core (N30, its source), while what the two variables do under torchrun is UNVERIFIED
    (per rank or for the job; the second is in no variable reference): one line names them as the example's, with no
    meaning no source here gives. The check line says how to see the cores the job took. The workshop-seat warning is
    printed on every backend: an instructor reads it on a cpu run before class (docs/INSTRUCTOR_GUIDE.md).

    The command ends in the notebook's own worker (`-m lesson.rank_worker`, as section 2 launches it) with its --active and
    straggler flags (without them section 4 found no slow steps): one command to paste, no placeholder to fill in.
    Then the calls that read the stamps afterwards.

    Args:
        ranks: how many ranks the recipe starts.
        active, straggler_rank, straggler_ms: the notebook's ACTIVE, STRAGGLER_RANK, STRAGGLER_MS.

    Returns:
        The recipe, then one line per part.
    """
    worker = (  # the notebook's own worker, as section 2 launches it (-m: run from the repository root)
        f"-m lesson.rank_worker --out DIR --backend neuron --device neuron --active {active}"
        f" --straggler-rank {straggler_rank} --straggler-ms {straggler_ms:g}"
    )
    return [
        f"The recipe (from the repository root, in the course's Python environment; UNVERIFIED: never run here): {neuron_torchrun_recipe(ranks, worker, vendor_variables=False)}",
        "  env -u NEURON_RT_VISIBLE_CORES: unset, TorchNeuron sets it to each rank's local rank (N30, its source); if inherited,"
        f" every rank lands on that one core. In a shared workshop, the {ranks} ranks would take NeuronCores 0-{ranks - 1}"
        " from other students: the instructor runs it after class.",
        f"  the vendor's example adds NEURON_RT_NUM_CORES={ranks} NEURON_RT_VIRTUAL_CORE_SIZE=2 (N30; under torchrun UNVERIFIED).",
        "  check: while it runs, `neuron-ls` lists the processes on each Neuron device and their commands (N52).",
        "  torchrun: --nproc_per_node, ranks per machine; --rdzv_backend, --rdzv_endpoint: where ranks meet;"
        " --local-ranks-filter 0 --tee 3: the console shows rank 0; every rank logs to files under --log-dir (unset: a temporary folder).",
        "  then, in a cell of this notebook after section 1:"
        " waits = collective_waits(rank_steps(DIR)); plot_rank_steps(plt.subplots()[1], waits, STRAGGLER_RANK).",
    ] + (  # what to look for: the prediction, not a recorded Neuron result
        [
            f"  expected: rank {straggler_rank} arrives last on its slow steps (steps marked * in the plot);"
            f" the other ranks wait about the {straggler_ms:g} ms set, give or take step-start gaps and compute differences."
        ]
        if straggler_rank >= 0 and straggler_ms > 0
        else []
    )


TIE_MS = 0.1  # arrivals or starts closer than this are read as ties, not as one rank later


def last_arrival_lines(waits: pd.DataFrame, slowest: int, ranks: int) -> list[str]:
    """Who arrived last at the all-reduce, on the steps with the straggler's extra work and without.

    The count without extra work comes with its chance: how likely random order is to make some rank
    last that often (a binomial tail, 1/R per step). The slow steps' count has none: there the straggler
    does extra work on purpose, so a chance beside it is noise beside the compute verdict.
    That chance is printed only where it can tell something: with R ranks over n steps some rank is
    last at least ceil(n/R) times by counting alone, so a probability of 1 there would read like a
    finding; the line says so instead. Where one rank was last in every step, the line says the
    chance cannot be smaller with this many steps, so 0.06 over 5 steps is not read as "not significant".
    Every printed chance is marked "a reading, not a finding": it takes the steps as independent draws, and they are
    not (a rank that left the previous all-reduce later started late; Exercise 2 splits the waits), so even a small chance does not show
    a rank is slow without extra work ("rank 0 in 4 of 5" is not read as rank 0 arriving last).
    A step without extra work where the last rank arrived no more than TIE_MS after the next is a tie: counted as
    tied, left out of the counts and of the chance (a 0.06 ms lead decides nothing).

    Args:
        waits: rows of analysis.collective_waits (rank, step, straggling, compute_end).
        slowest: the rank that computed longest on the steps with extra work.
        ranks: how many ranks ran.

    Returns:
        Two lines: the slowest rank's last arrivals on the slow steps, then every rank's without
        extra work, with its chance or that counting alone explains it.
    """

    def against_chance(order, count: int) -> str:
        floor = math.ceil(order.steps / ranks)
        if count <= floor:
            return f"with {ranks} ranks over {order.steps} steps some rank is always last at least {floor} times: says nothing"
        chance = chance_some_rank_last(order.steps, ranks, count)
        often = f"all {order.steps}" if count == order.steps else f"{count} or more of {order.steps}"
        # the chance assumes independent steps, and says so before the reading doubts it
        line = f"chance of some rank last in {often}, if steps were independent: {chance:.2f}"
        if count == order.steps:
            line += f"; {order.steps} steps cannot give less"
        # where the last rank also left the step before later on most off steps, the steps are not
        # independent, and the data says so beside the chance
        # the count is printed, and "not independent" only as a reading (a subset shows no more)
        left = arrival_parts(waits, steps=off_steps)[LEFT_LATER].dropna()
        later = int((left > TIE_MS).sum())  # a lead within TIE_MS is a tie, as the line says
        if later > len(left) / 2:
            return line + (
                f"; a reading: they may not be: on {later} of {len(left)} off steps"
                " the last rank also left the previous step later (Exercise 2)"
            )
        return line + "; a reading, not a finding (Exercise 2)"

    rest = waits[~waits["straggling"]]
    off_steps = set(rest["step"])
    lead = rest.groupby("step")["compute_end"].apply(lambda t: t.nlargest(2).diff().abs().iloc[-1] if len(t) > 1 else 0)
    decided = rest[rest["step"].isin(lead.index[lead > TIE_MS])]  # the last rank more than TIE_MS after the next
    on, off = arrival_order(waits[waits["straggling"]], ranks), arrival_order(decided, ranks)
    slow = on.last_counts.get(slowest, 0)
    first = f"slow steps: rank {slowest} arrived last in {slow} of {on.steps}"
    tied = f"without extra work, tied (within {TIE_MS:g} ms) in {len(off_steps) - off.steps} of {len(off_steps)}"
    if off.steps == 0:
        return [first, tied]
    counts = ", ".join(f"rank {r} in {n} of {off.steps}" for r, n in off.last_counts.items() if n)
    top = max(off.last_counts.values(), default=0)
    return [first, f"{tied}; last: {counts} ({against_chance(off, top)})"]


def _one_decimal(value: float) -> str:
    """A millisecond figure to one decimal, never "-0.0": a lag of -0.04 ms prints "0.0" (+ 0.0 turns -0.0 into 0.0)."""
    return f"{round(value, 1) + 0.0:.1f}"


def slow_step_wait_line(waits: pd.DataFrame, slowest: int, straggler_ms: float) -> str:
    """The answer to 08's "predict first": on the slow steps, the other ranks' wait against the extra work,
    and the straggler's own wait.

    Why the start is in it: a wait is the gap between two arrivals, and each arrival is a start plus
    a compute, so the others can wait longer than the extra work where the straggler also started
    its steps later (A5 section 2 reads why). That lag is printed as a count and a per-step range, since a
    median alone hides lags of both signs; the count takes the lags as the range prints them (0.01 ms) and counts
    those above 0.1 ms, so a printed 0.10 is never counted and a printed 0.11 always is (an unrounded
    0.0996 printed as 0.10 beside "0.1 ms or more in 0")
    Printed only where the wait exceeds the extra work and the median lag is positive.

    Args:
        waits: rows of analysis.collective_waits (rank, step, straggling, start, wait_ms).
        slowest: the rank that computed longest on the steps with extra work.
        straggler_ms: its extra work per slow step (0: none in this run).

    Returns:
        One line: medians over the slow steps, and where it applies the straggler's step-start gaps.
    """
    on = waits[waits["straggling"]]
    mine = on.loc[on["rank"] == slowest, ["step", "start", "wait_ms"]]
    rows = on[on["rank"] != slowest].merge(mine, on="step", suffixes=("", "_slowest"))
    others = sorted(rows["rank"].unique())
    who = f"rank {others[0]}" if len(others) == 1 else "the other ranks"
    wait, own = rows["wait_ms"].median(), mine["wait_ms"].median()
    lags = (rows["start_slowest"] - rows["start"]).groupby(rows["step"]).median()  # per step: how much later it started
    line = f"slow steps (medians): {who} waited {wait:.1f} ms (rank {slowest} was set to add {straggler_ms:g} ms)"
    line += f", rank {slowest} itself {own:.1f} ms"
    if straggler_ms > 0 and wait > straggler_ms and lags.median() > 0:
        shown = lags.round(2)  # as printed
        low, high = f"{shown.min():.2f}", f"{shown.max():.2f}"
        # no count of later starts: a gap comes from the previous step's exchange, not from this step's extra work
        line += f"\nslow steps' step-start gaps (+ = rank {slowest} later) {low} to {high} ms, largest at step {shown.idxmax()}"
    return line


START_GAP = "step-start gap (ms)"  # + = the last rank started later (08's Solutions say so)
LEFT_LATER = "left previous step later by (ms)"  # arrival_parts' column: the last rank against the first


def arrival_parts(waits: pd.DataFrame, steps: Any = None) -> pd.DataFrame:
    """Per step, the longest wait split into its two parts: the last rank's later start and its longer compute,
    beside how much later the last rank had left the step before's all-reduce.

    Why: an arrival is a start plus a compute, so the rank that computed longer need not arrive last;
    the rank that waited longest waited exactly (later start) + (longer compute) of the last rank,
    and either part can be negative. A later start has a cause on the page: the ranks need not leave an
    all-reduce together, and a rank starts its next step when it leaves (08's timeline shows it). Notebook
    08's exercise 2 reads which part decided each step, and why a rank started later.

    Args:
        waits: rows of analysis.collective_waits (rank, step, start, compute_ms, wait_ms, collective_end), every
            profiled step: the step before each split step is read from them.
        steps: the steps to split (default: every step of `waits`).

    Returns:
        One row per step: the rank that arrived last, the one that arrived first (it waited longest), that wait, and
        its two parts (ms), which add up to the wait; then how much later (ms) the last rank had left the step
        before's all-reduce than the first rank (NaN for the first profiled step).
    """
    left = waits.pivot(index="step", columns="rank", values="collective_end")  # when each rank left each step
    rows = []
    for step, group in waits.groupby("step"):
        if steps is not None and step not in set(steps):
            continue
        last = group.loc[group["wait_ms"].idxmin()]
        first = group.loc[group["wait_ms"].idxmax()]
        before = left.index[left.index < step]
        rows.append(
            {
                "step": step,
                "arrived last": int(last["rank"]),
                "arrived first": int(first["rank"]),
                "wait_ms": first["wait_ms"],
                START_GAP: last["start"] - first["start"],
                "computed longer by (ms)": last["compute_ms"] - first["compute_ms"],
                LEFT_LATER: (left.at[before.max(), last["rank"]] - left.at[before.max(), first["rank"]])
                if len(before)
                else float("nan"),
            }
        )
    return pd.DataFrame(rows).set_index("step")


def _waits_by_rank(parts: pd.DataFrame) -> str:
    """Each waiting rank's summed wait, and the step holding more than half of it with the late rank's leaving gap.

    Why not "rank X arrived last on N steps": on steps without extra work the last rank changes from step to step, and one
    step can hold nearly all the waiting (rank 0 "arrived last" on 3 of 5 steps, yet waited 4.0 of its 4.2 ms at
    one step, where rank 1 had left the step before's all-reduce 4.1 ms later); the sums say who waited, and where.
    That step's compute gap and leaving gap are printed side by side: either can make the wait, so neither is named its cause.
    """
    said = []
    top = parts.groupby("arrived first")["wait_ms"].sum().idxmax()  # the step named for the rank that waited most
    for rank, waits in parts.groupby("arrived first")["wait_ms"]:
        step = waits.idxmax()
        clause = f"rank {rank} waited {_one_decimal(waits.sum())} ms"
        if rank == top and waits[step] > waits.sum() / 2 and len(waits) > 1:
            clause += f", {_one_decimal(waits[step])} at step {step}"
            gap = parts.at[step, LEFT_LATER] if LEFT_LATER in parts else float("nan")
            if gap == gap and abs(gap) >= 0.05:  # not NaN: the step had a profiled step before
                # both parts named side by side, no cause claimed: leaving earlier shortens a wait, longer compute lengthens it
                late, more = parts.at[step, "arrived last"], parts.at[step, "computed longer by (ms)"]
                said_more = f"{_one_decimal(abs(more))} ms {'less' if more <= -0.05 else 'longer'}"  # no "-0.1 ms longer"
                clause += f" (rank {late} computed {said_more}, left step {step - 1}'s all-reduce"
                clause += f" {_one_decimal(abs(gap))} ms {'later' if gap > 0 else 'earlier'})"
        said.append(clause)
    return "; ".join(said)


def arrival_parts_line(parts: pd.DataFrame, extra: tuple[int, float] | None = None) -> str:
    """Which part made up the waiting, in milliseconds summed over the steps of `arrival_parts`, and how much
    later the last rank had left the step before's all-reduce, summed the same way.

    Why sums, not a count of steps: a step where one part was larger by 0.1 ms would count as much as
    one where it was larger by 4 ms; the sums add up to the total wait, so they say where the time went.
    Without `extra` (steps with no work set), the plain answer is each rank's summed wait and the step holding most of
    it, with how much later the late rank had left the step before's all-reduce (`_waits_by_rank`): the later start's
    cause where the two agree; not a verdict.
    Every figure is its own sum rounded (a total built from rounded parts printed 9.5 for 9.44 ms); where the
    rounded parts do not add up to the rounded total, the line says "parts rounded".

    Args:
        parts: the table of `arrival_parts`.
        extra: (straggler rank, its extra work per step in ms), for steps that all had extra work: the compute
            share is then split into the work set (the straggler arriving last adds it, arriving first takes it
            away) and the rest (all other compute, the busy loop's overshoot included): where its steps differ in sign, the net alone; else naming
            the step that holds more than half of it (one unusual step is no ordinary difference).

    Returns:
        One line: the plain answer first (none with `extra`: 08 prints it just before), then the total wait, said
        in words as how much longer (or less) the last rank computed plus how much later (or earlier) it started (ms;
        where start gaps of both signs cancel, their later and earlier sums too, signed). Without `extra` it opens "in all, over the N off steps" (a sum read as one step's wait).
        Unjudged: it ends "not a verdict", or, where one part's sum of one sign reaches the larger net, that the steps
        cannot say which part is larger; where the larger part differs between steps, it says so before "not a verdict"
        (a net over 5 off steps, 4 ms compute at one and a 3 ms start gap at another, read as a finding).
    """
    start = parts[START_GAP].sum()
    compute = parts["computed longer by (ms)"].sum()
    gaps = parts[START_GAP]
    later, sooner = gaps[gaps > 0].sum(), gaps[gaps < 0].sum()  # a net alone hides gaps that cancel
    both = later >= 0.05 and sooner <= -0.05  # signed and said in words, not "(14.4 later, 0.1 earlier)"
    signed = f" (gaps: +{_one_decimal(later)} where it started later, -{_one_decimal(-sooner)} where earlier)" if both else ""
    net, shown_compute = float(_one_decimal(start)), float(_one_decimal(compute))  # each sum rounded, not rebuilt
    sums = [(net + shown_compute, compute + start)]  # (rounded parts added, the true total): where they differ, say so
    sums += [(float(_one_decimal(later)) - float(_one_decimal(-sooner)), start)] if signed else []
    split = ""
    if extra is not None:
        rank, ms = extra
        per_set = ms * ((parts["arrived last"] == rank).astype(float) - (parts["arrived first"] == rank).astype(float))
        rest = parts["computed longer by (ms)"] - per_set  # per step, the compute difference beside the work set
        more, less = rest[rest > 0].sum(), rest[rest < 0].sum()  # parts of both signs: a part can exceed the net
        big = (rest * (1 if rest.sum() >= 0 else -1)).idxmax()  # the step holding most of it, if one does
        where = f"; {_one_decimal(rest[big])} in step {big}" if abs(rest[big]) > abs(rest.sum()) / 2 > 0.05 else ""
        if more >= 0.05 and less <= -0.05:  # a net of two more sums packed the line past 4 numbers
            where = ""
        # the extra work is traced ("straggler work" regions): the split names the value set, the rest is all other compute
        steps = round(per_set.sum() / ms)  # net count of steps the work set adds (last) or takes away (first)
        split = f" (extra work {steps} x {ms:g} ms as set, not its traced time; the rest {_one_decimal(rest.sum())}{where})"
        sums.append((float(_one_decimal(per_set.sum())) + float(_one_decimal(rest.sum())), compute))
    # parts netted over steps hide which is larger (+4.0 compute, -3.8 gap in one step) where the other part's
    # gross sum of one sign reaches the larger net: then the line says the steps cannot tell which part is larger
    small = START_GAP if abs(start) < abs(compute) else "computed longer by (ms)"
    gross = max(parts[small].clip(lower=0).sum(), -parts[small].clip(upper=0).sum())
    undecided = gross >= max(abs(start), abs(compute)) > 0
    rounded = ", parts rounded" if any(_one_decimal(a) != _one_decimal(b) for a, b in sums) else ""
    # with `extra`, 08 prints who arrived last and the median wait just before (section 4): no opener
    opener = "" if extra is not None else f"in all, over the {len(parts)} off steps, " + _waits_by_rank(parts) + ". Why: "
    # the compute share is a net over the steps; where the last rank computed shorter on some, say on how many
    fewer = int((parts["computed longer by (ms)"].round(2) < 0).sum())  # every negative the table shows
    negative = list(parts.index[parts["computed longer by (ms)"].round(2) < 0])  # name the steps where few
    named = (
        f"step{'s' if fewer > 1 else ''} {' and '.join(map(str, negative))}" if fewer <= 2 else f"{fewer} of {len(parts)} steps"
    )
    shorter = f" (less on {named})" if fewer and extra is None else ""
    gap_larger = parts[START_GAP].abs() > parts["computed longer by (ms)"].abs()  # per step, which part is larger
    changes = "the larger part changes from step to step; " if gap_larger.any() and not gap_larger.all() else ""
    ending = (
        f"netted over the steps: which part is larger, {len(parts)} steps cannot say" if undecided else changes + "not a verdict"
    )
    waiting = sorted(parts["arrived first"].unique())  # the total is every waiting rank's, and says so
    whose = f" (ranks {(' and ' if len(waiting) == 2 else ', ').join(map(str, waiting))})" if len(waiting) > 1 else ""
    return (
        f"{opener}{_one_decimal(compute + start)} ms"
        f" waited{whose}: summed over the steps, the last-arriving ranks computed {_one_decimal(abs(compute))} ms {'less' if shown_compute < 0 else 'longer'}"
        f"{shorter}{split} and started {_one_decimal(abs(start))} ms {'earlier' if net < 0 else 'later'}{signed}{rounded}; {ending}"
    )


def straggler_job_metrics(
    job: dict[str, Any], straggler: tuple[int, float], found: dict[str, Any], verdict: Any, failed: Any
) -> dict[str, Any]:
    """08's checks on its own job and the metrics it publishes, so that its bookkeeping does not sit in
    the lesson: every rank's trace holds its recorded steps, the planted straggler is the rank found
    slowest and the others waited longer than it (on a quiet launch), and a shown failure ended as 08
    says; then the claims its section 4 printed and the figures A5 and the regression checks read.

    Args:
        job: "traces" (rank -> Trace), "active" (ACTIVE), "ranks" (RANKS), "contention" (the ranks'
            Contention over their profiled steps, ranks_contention), "run" (the launch's result: its `seconds`).
        straggler: (STRAGGLER_RANK, STRAGGLER_MS) as set; a rank below 0 or no extra work plants none.
        found: "slowest" (the rank found slowest), "others" (the other ranks), "compute_on" and
            "wait_on" (rank -> median ms over the slow steps), "versus" (the PairedRatio of the slowest
            rank's compute over the slowest other's).
        verdict: section 4's first verdict (`judge_ratio` of `versus`).
        failed: the failure demonstration's result, or None where SHOW_FAILURE is False.

    Returns:
        name -> metric, ready for `session.publish` (rank<R>_compute_on_ms, rank<R>_wait_on_ms,
        straggler_compute_ratio, ranks, launch_s, straggler_identified, traces_loaded, claims, failure_*).

    Raises:
        AssertionError: where a check fails (the notebook's regression checks).
    """
    from analysis.verdicts import Claim
    from helpers.metrics import ratio_metric

    rank, extra_ms = straggler
    slowest, others, compute_on, wait_on = (found[k] for k in ("slowest", "others", "compute_on", "wait_on"))
    busy = job["contention"].busy
    assert all(len(t.steps) == job["active"] for t in job["traces"].values()), "a rank's trace does not hold its recorded steps"
    planted = rank >= 0 and extra_ms > 0
    if planted and not busy:
        assert slowest == rank, f"rank {slowest} looked slowest, not the straggler {rank}"
        assert all(wait_on[r] > wait_on[slowest] for r in others), "the others did not wait longer than the straggler"
    if failed is not None:
        assert failed.returncode not in (0, None) and failed.first_failure == job["ranks"] - 1 and not failed.leftover
    names = [f"rank{r}_compute_on_ms" for r in [slowest, *others]], [f"rank{r}_wait_on_ms" for r in [slowest, *others]]
    if not planted:  # no straggler: section 4 withheld its verdicts, so nothing is claimed
        claims = []
    elif busy:
        claims = [
            verdict.claim("straggler_compute_ratio"),
            Claim("busy", (*names[0], *names[1]), "not measurable here: the machine was busy"),
        ]
    else:
        claims = [
            verdict.claim("straggler_compute_ratio"),
            Claim("max", tuple(names[0]), f"rank {slowest} computed longest"),
            Claim("min", tuple(names[1]), f"rank {slowest} waited least"),
        ]
    note, record = "median over recorded steps with the straggler on", {"contention": job["contention"].record()}
    metrics = {
        f"rank{r}_{name}_on_ms": metric(float(medians[r]), "ms", note, **record)
        for name, medians in (("compute", compute_on), ("wait", wait_on))
        for r in range(job["ranks"])
    }
    metrics |= {
        "straggler_compute_ratio": ratio_metric(
            found["versus"], "per slow step: the slowest rank's compute over the slowest other's"
        ),
        "ranks": metric(job["ranks"], "processes"),
        "launch_s": metric(job["run"].seconds, "s"),
        "straggler_identified": metric(slowest, "rank"),
        "traces_loaded": metric(True, "bool"),
        "claims": metric([c.record() for c in claims], "claims", "section 4's verdicts"),
    }
    f = failed
    failure = {
        "exit_code": (f and f.returncode, "code"),
        "ranks_reported": (f and sorted(f.errors), "ranks"),
        "first_rank": (f and f.first_failure, "rank"),
        "left_running": (f and f.leftover, "bool"),
    }
    return metrics | {f"failure_{name}": metric(value, unit) for name, (value, unit) in failure.items()}


# ------------------------------------------------------------------ 08's job, read back for A5
RANK_NOTEBOOK = "08_many_processes"
RANK_JOB_FIX = 'run both into one folder: make run ARGS="--notebooks 08 A5", or run 08 with the OUT_DIR this notebook uses'


@dataclass
class RankJob:
    """The rank job notebook 08 ran in one run folder: every rank's stamps and trace, and the ranks'
    contention over their profiled steps, as 08 wrote them."""

    folder: Path  # 08's `ranks` folder: rank<N>.json (the stamps) and rank<N>.trace.json
    parameters: dict[str, Any]  # BACKEND, RANKS, ACTIVE, STRAGGLER_RANK: read off what 08 wrote
    steps: pd.DataFrame  # analysis.rank_steps of the folder: one row per rank and recorded step
    traces: dict[int, Trace]
    contention: Contention  # the ranks over their profiled steps, as 08's metrics recorded it (ranks_contention's)


def load_rank_job(run_dir: Path, backend: str | None = None) -> RankJob:
    """The rank job notebook 08 ran into the run folder `run_dir`.

    Why: appendix A5 checks the numbers 08 showed (who arrived last, the exchange, the clocks); a
    launch of its own would check another job. 08 keeps no record of its parameters, so they are read
    off what it wrote: RANKS from its metrics (the rank files must match them), ACTIVE from the
    recorded steps, STRAGGLER_RANK from the trace that holds "straggler work" regions.

    Args:
        run_dir: the run folder both notebooks write into.
        backend: the reading notebook's backend; 08's must be the same.

    Returns:
        RankJob.

    Raises:
        SeriesError: 08 has not run (or not finished) into this folder, ran on another backend, or ran
            a job A5 cannot check (no straggler, too few steps); the fix names the command that runs both."""
    out = Path(run_dir) / RANK_NOTEBOOK
    folder, metrics_path = out / "ranks", out / "metrics.json"
    numbered = {p: p.name.removeprefix("rank").removesuffix(".json") for p in folder.glob("rank*.json")}
    stamps = sorted((p for p, n in numbered.items() if n.isdigit()), key=lambda p: int(numbered[p]))
    if not (metrics_path.is_file() and stamps):
        raise SeriesError(
            f"no rank job of notebook 08 in {run_dir}: this appendix checks the job 08 ran in the same run folder", RANK_JOB_FIX
        )
    record = json.loads(metrics_path.read_text())
    metrics = record.get("notebooks", {}).get(RANK_NOTEBOOK, {})
    contention = metrics.get("rank0_compute_on_ms", {}).get("contention")
    if "ranks" not in metrics or contention is None or max(p.stat().st_mtime for p in stamps) > metrics_path.stat().st_mtime:
        raise SeriesError(
            f"notebook 08 did not finish its last run in {run_dir}: its ranks' files are not the ones its metrics judged",
            RANK_JOB_FIX,
        )
    ranks = int(metrics["ranks"]["value"])
    if backend is not None and record.get("backend") != backend:
        raise SeriesError(
            f"notebook 08 ran on {record.get('backend')} in {run_dir}, and this notebook on {backend}", RANK_JOB_FIX
        )
    if [p.name for p in stamps] != [f"rank{r}.json" for r in range(ranks)]:
        found = ", ".join(p.name for p in stamps)
        raise SeriesError(
            f"08's ranks folder holds {found}, and 08's metrics say RANKS = {ranks}: another run's files", RANK_JOB_FIX
        )
    steps = rank_steps(folder)
    per_rank = steps.groupby("rank")["step"].count()
    straggling = steps.drop_duplicates("step")["straggling"]
    if per_rank.nunique() != 1 or straggling.all() or not straggling.any():
        raise SeriesError(
            f"08's ranks recorded {dict(per_rank)} steps: this appendix needs steps with and without the straggler",
            'run 08 with ACTIVE >= 2: make run ARGS="--notebooks 08 A5"',
        )
    traces = {r: load_trace(folder / f"rank{r}.trace.json") for r in range(ranks)}
    stragglers = [r for r, t in traces.items() if (t.events["name"] == "straggler work").any()]
    if len(stragglers) != 1:
        raise SeriesError(
            f"08's job had {len(stragglers)} straggling ranks: this appendix compares the steps with and without one",
            'run 08 with STRAGGLER_RANK >= 0 and STRAGGLER_MS > 0 (its defaults): make run ARGS="--notebooks 08 A5"',
        )
    fields = ("wall_s", "waited_fraction", "pressure_fraction", "steal_fraction")
    return RankJob(
        folder=folder,
        parameters={
            "BACKEND": record.get("backend"),
            "RANKS": ranks,
            "ACTIVE": int(per_rank.iloc[0]),
            "STRAGGLER_RANK": stragglers[0],
        },
        steps=steps,
        traces=traces,
        contention=Contention(**{k: contention[k] for k in fields}),
    )
