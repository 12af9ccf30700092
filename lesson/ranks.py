"""Launching notebook 08's ranks with torchrun, and reading what they measured.

`launch` checks first (a collective backend for this device, a core per rank, a free port), then
runs `python -m torch.distributed.run ... -m lesson.rank_worker` in a process group of its own,
with a timeout. However it ends, nothing of it is left running: the group is killed if needed,
and `Launch.leftover` says whether anything survived (it must not).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from helpers.errors import BackendUnavailableError, ParameterError

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


def neuron_torchrun_recipe(ranks: int, script: str = "your_script.py") -> str:
    """The vendor's documented torchrun launch for profiling on Trainium (N30): one NeuronCore per
    rank, console output of rank 0 only, and every rank writing its own profile folder
    (`<dir>/<instance>_pid_<pid>/`). The host-collective variables (TORCH_NEURONX_ENABLE_HOST_CC,
    TORCH_NEURONX_ENABLE_ASYNC_NRT) belong to another example of the vendor's and are not part of it.

    `env -u NEURON_RT_VISIBLE_CORES` first: TorchNeuron's distributed backend sets
    NEURON_RT_VISIBLE_CORES to each rank's LOCAL_RANK only where it is unset, so a shell that
    inherited a workshop seat's value would put every rank on that one core."""
    return (
        "env -u NEURON_RT_VISIBLE_CORES "
        f"NEURON_RT_NUM_CORES={ranks} NEURON_RT_VIRTUAL_CORE_SIZE=2 "
        f"torchrun --nproc_per_node {ranks} --rdzv_backend c10d --rdzv_endpoint localhost:29500 "
        f"--local-ranks-filter 0 --tee 3 {script}"
    )
