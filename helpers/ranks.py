"""Launching notebook 08's ranks with torchrun, and reading what they measured.

`launch` checks first (a collective backend for this device, a core per rank, a free port), then
runs `python -m torch.distributed.run ... -m helpers.rank_worker` in a process group of its own,
with a timeout. However it ends, nothing of it is left running: the group is killed if needed,
and `Launch.leftover` says whether anything survived (it must not).
"""
from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import BackendUnavailableError, ParameterError

COLLECTIVE_BACKENDS = {"cpu": "gloo", "cuda": "nccl", "neuron": "neuron"}  # neuron: docs/NEURON_NOTES.md N30


@dataclass
class Launch:
    command: list[str]
    returncode: int | None            # None: killed at the timeout
    seconds: float
    out_dir: Path
    errors: dict[int, str] = field(default_factory=dict)  # rank -> first line of its error
    output_tail: str = ""
    leftover: bool = False             # a process of the launch still alive afterwards
    first_failure: int | None = None   # the rank whose error was written first: the root cause

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
        raise BackendUnavailableError("torch.distributed has no gloo backend here, which cpu ranks need",
                                      "install a torch build with gloo (the standard Linux wheels have it)")
    if collective == "nccl" and not dist.is_nccl_available():
        raise BackendUnavailableError("torch.distributed has no nccl backend here, which cuda ranks need",
                                      "install a CUDA build of torch, or run with BACKEND=cpu (gloo)")
    cores = os.cpu_count() if cores is None else cores
    if device == "cpu" and ranks > cores:
        raise ParameterError(f"RANKS={ranks} needs a core per rank, and this machine has {cores}",
                             f"use RANKS <= {cores}, e.g. `-p RANKS {min(2, cores)}`")
    if device == "cuda" and devices is not None and ranks > devices:
        raise ParameterError(f"RANKS={ranks} needs a GPU per rank, and this machine has {devices}",
                             f"use RANKS <= {devices}")
    if port and port_in_use(port):
        raise ParameterError(f"MASTER_PORT {port} is in use by another process",
                             "pick another port, or leave MASTER_PORT = 0 for a free one")
    return collective


def launch(out_dir: Path, ranks: int, device: str, *, port: int = 0, launch_timeout_s: float = 120,
           env: dict[str, str] | None = None, **worker_args: object) -> Launch:
    """Run `ranks` workers with torchrun; wait at most `launch_timeout_s`; leave nothing running."""
    collective = check_launch(ranks, device, port)
    out_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks),
               "--master-addr", "127.0.0.1", "--master-port", str(port), "-m", "helpers.rank_worker",
               "--out", str(out_dir), "--backend", collective, "--device", device]
    for key, value in worker_args.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True,
                            # one thread per rank, said explicitly (torchrun would set it and print a warning)
                            env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})})
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
    return Launch(command, returncode, time.perf_counter() - start, out_dir, errors,
                  "\n".join(diagnostic_lines(output)), leftover, first)


# What a rank prints when it dies outside Python (no error file): a C++ exception, a signal
CRASH_MARKERS = ("terminate called", "what():", "Aborted", "Segmentation fault", "Fatal Python error")


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


def rank_steps(out_dir: Path) -> pd.DataFrame:
    """Every rank's recorded steps, times in ms from the earliest start (one clock for all ranks)."""
    rows = []
    for path in sorted(p for p in out_dir.glob("rank*.json") if p.name.removeprefix("rank").split(".")[0].isdigit()
                       and p.name.count(".") == 1):
        data = json.loads(path.read_text())
        rows += [{"rank": data["rank"], **s} for s in data["steps"] if s["recorded"]]
    steps = pd.DataFrame(rows)
    origin = steps["start"].min()
    for col in ("start", "compute_end", "collective_end"):
        steps[col] = (steps[col] - origin) / 1e6
    return steps.sort_values(["step", "rank"]).reset_index(drop=True)


def collective_waits(steps: pd.DataFrame) -> pd.DataFrame:
    """Per step and rank: compute, time in the all-reduce, and how much of it was waiting for the
    slowest rank (the last rank to arrive defines when the exchange can start)."""
    out = steps.copy()
    last_arrival = out.groupby("step")["compute_end"].transform("max")
    out["compute_ms"] = out["compute_end"] - out["start"]
    out["collective_ms"] = out["collective_end"] - out["compute_end"]
    out["wait_ms"] = last_arrival - out["compute_end"]
    out["exchange_ms"] = out["collective_ms"] - out["wait_ms"]
    return out[["step", "rank", "straggling", "start", "compute_end", "collective_end", "compute_ms", "collective_ms", "wait_ms",
                "exchange_ms"]]


@dataclass
class ArrivalOrder:
    """Which rank arrived last at the all-reduce, counted over some steps, and how often random
    order would make one rank last at least that often.

    Why count arrivals instead of comparing the ranks' waits: a rank's wait is zero in every step
    it arrives last, by definition. With two ranks and no straggler, whichever rank happened to
    arrive last in every one of a few steps shows waits of exactly zero beside the other's
    milliseconds, and their p10-p90 ranges do not overlap, though nothing made it slower. With
    n steps that happens by chance in 2 * 2**-n of runs (1 in 4 for 3 steps)."""

    last_counts: dict[int, int]
    steps: int
    chance: float  # probability that random order puts some rank last in >= max(last_counts) steps

    @property
    def explained_by_chance(self) -> bool:
        return self.chance >= 0.05


def chance_some_rank_last(steps: int, ranks: int, at_least: int) -> float:
    """P(some rank is last in >= `at_least` of `steps` steps) when every rank is equally likely
    to arrive last in each step, exactly: 1 - P(every rank's count < at_least), from the
    multinomial's exponential generating function."""
    if at_least <= math.ceil(steps / ranks):
        return 1.0
    term = [1 / math.factorial(j) for j in range(min(at_least, steps + 1))]  # counts 0 .. at_least-1
    product = [1.0]
    for _ in range(ranks):
        product = [sum(product[i] * term[j - i] for i in range(len(product)) if 0 <= j - i < len(term))
                   for j in range(min(steps, len(product) + len(term) - 2) + 1)]
    below = math.factorial(steps) / ranks ** steps * (product[steps] if steps < len(product) else 0.0)
    return max(0.0, 1.0 - below)


def arrival_order(waits: pd.DataFrame, ranks: int) -> ArrivalOrder:
    """Count the last arrival per step in `waits` (rows of collective_waits) and its chance."""
    last = waits.loc[waits.groupby("step")["compute_end"].idxmax(), "rank"]
    counts = {r: int((last == r).sum()) for r in range(ranks)}
    steps = int(waits["step"].nunique())
    return ArrivalOrder(counts, steps, chance_some_rank_last(steps, ranks, max(counts.values(), default=0)))


def neuron_torchrun_recipe(ranks: int, script: str = "your_script.py") -> str:
    """The vendor's documented torchrun launch for profiling on Trainium (N30): one NeuronCore per
    rank, console output of rank 0 only, and every rank writing its own profile folder
    (`<dir>/<instance>_pid_<pid>/`), with the host collectives and asynchronous runtime of the
    documented multi-rank example.

    `env -u NEURON_RT_VISIBLE_CORES` first: TorchNeuron's distributed backend sets
    NEURON_RT_VISIBLE_CORES to each rank's LOCAL_RANK only where it is unset, so a shell that
    inherited a workshop seat's value would put every rank on that one core."""
    return (f"env -u NEURON_RT_VISIBLE_CORES TORCH_NEURONX_ENABLE_HOST_CC=1 TORCH_NEURONX_ENABLE_ASYNC_NRT=1 "
            f"NEURON_RT_NUM_CORES={ranks} NEURON_RT_VIRTUAL_CORE_SIZE=2 "
            f"torchrun --nproc_per_node {ranks} --rdzv_backend c10d --rdzv_endpoint localhost:29500 "
            f"--local-ranks-filter 0 --tee 3 {script}")
