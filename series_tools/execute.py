"""Execute one notebook with papermill on a kernel whose connection is encrypted and whose address
layout is fixed.

Every tool that runs notebooks (run, the tests, the benchmark) goes through `execute_notebook`, so a
notebook runs the same way everywhere.

Why the encryption: at every start, ipykernel warns that a kernel on TCP without encryption sends
code and outputs in plain text, and the warning lands in every `make run`. ipykernel 7 declares
CurveZMQ support in its kernelspec, and jupyter_client 8.10 provisions the keys when the manager's
`transport_encryption` is "auto". The warning goes because its cause goes. The other cure it names,
IPC transport, silences it too, but then Ctrl-C waited for the running cell to end (57.7 s measured
here); with Curve keys Ctrl-C ends a run in 0.7 s, as over plain TCP. `make lab` gives
JupyterLab's kernels the same keys (`--KernelManager.transport_encryption=auto`).

Why the fixed address layout: Linux places a process's libraries, heap and stack at random
addresses (ASLR), and where the code and data of a few-microsecond call land moves its time. Ten
fresh processes timing the 8x1024 naive RMSNorm against its copy, interleaved in one loop, gave
ratios spread over 9.7% (copy alone 14.2%); the same ten with ASLR off for the process, alternated
with them, 2.3% (copy 2.4%). Over whole runs of notebook 05 (benchmarks/ratio_benchmark.py, 8 runs
each way) the small shape's naive/copy ratio deviated from its median by up to 7.3% with ASLR and
3.8% without. So the kernel is started under `setarch <arch> -R`, which turns ASLR off
for that process only: every run of the series sees the same layout, and this cause of difference
between runs is gone. Others remain: in the same benchmark the small shape's torch.compile/copy
ratio still deviated by up to 6.5% (9.1% with ASLR). Where setarch is missing or refused (a container's seccomp profile may deny
the personality call) the kernel starts as usual; the environment record says which
(`address_layout`). `make lab` starts JupyterLab the same way.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import papermill as pm


@lru_cache(maxsize=1)
def fixed_layout_prefix() -> tuple[str, ...]:
    """`setarch <arch> -R`, where it runs here; () where it does not (not Linux, missing, refused)."""
    setarch = shutil.which("setarch")
    if setarch is None:
        return ()
    prefix = (setarch, platform.machine(), "-R")
    try:
        ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return prefix if ok else ()


def kernel_address_layout() -> str | None:
    """The layout `execute_notebook`'s kernels get: "fixed" where setarch -R runs, else this
    machine's (analysis.host.address_layout). For the run's own environment record, which
    the run's process writes outside any kernel."""
    from analysis.host import address_layout

    return "fixed" if fixed_layout_prefix() else address_layout()


@lru_cache(maxsize=2)  # one class per layout for every notebook of a process
def series_kernel_manager(fixed_layout: bool = True) -> type:
    """A kernel manager that starts the kernel with a fixed address layout (unless `fixed_layout` is
    False, as the ratio benchmark's comparison asks) and, where kernel and libzmq support it,
    provisions CurveZMQ keys.

    Without Curve support (an older jupyter_client or libzmq, as in some Neuron DLAMI venvs) the
    connection stays plain TCP, warning included.
    """
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    prefix = fixed_layout_prefix() if fixed_layout else ()
    encrypt = "transport_encryption" in AsyncKernelManager.class_trait_names() and zmq.has("curve")

    class SeriesKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            if encrypt:
                self.transport_encryption = "auto"  # keys only where the kernelspec declares "curve"

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            # setarch execs the kernel in its own process: the pid, and so Ctrl-C, are the kernel's
            return [*prefix, *super().format_kernel_cmd(extra_arguments)]

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            read_end, write_end = os.pipe()  # the kernel's stderr, relayed (`_relay_kernel_stderr`)
            try:
                await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": write_end})
            except BaseException:
                os.close(read_end)
                raise
            finally:
                os.close(write_end)
            threading.Thread(target=_relay_kernel_stderr, args=(read_end,), daemon=True).start()

    return SeriesKernelManager


_KERNEL_STDERR_QUIET = threading.Event()


def quiet_kernel_stderr(quiet: bool = True) -> None:
    """Drop what kernels write to stderr from now on (quiet=False: relay it again). For a runner
    that was interrupted: Ctrl-C reaches the kernel too, and a kernel whose runner is leaving
    prints a 20-line ZMQError traceback ("Socket operation on non-socket") while it shuts down;
    the runner prints one line."""
    if quiet:
        _KERNEL_STDERR_QUIET.set()
    else:
        _KERNEL_STDERR_QUIET.clear()


def _relay_kernel_stderr(fd: int) -> None:
    """Copy a kernel's stderr (its own warnings; cell output goes to the notebook) to this
    process's, line by line, until the kernel ends or `quiet_kernel_stderr` was called."""
    with os.fdopen(fd, "rb") as pipe:
        for line in pipe:
            if not _KERNEL_STDERR_QUIET.is_set():
                sys.stderr.write(line.decode(errors="replace"))
                sys.stderr.flush()


def execute_notebook(
    source: Path,
    executed: Path,
    parameters: dict[str, Any],
    cwd: Path,
    timeout_s: int | None = None,
    progress_bar: bool = False,
    fixed_layout: bool = True,
) -> None:
    """Run `source` with `parameters` into `executed` (kernel python3); errors are papermill's.

    papermill rewrites its output after every cell, so the notebook is executed into a hidden
    `.partial-<name>` beside `executed` and renamed into place when papermill is done, the failed
    ones included (their error cell is the report). Where the run is cut off (Ctrl-C, a full disk,
    a dead kernel), the last whole save is kept under the final name and a cut-off one is removed:
    a file under the final name is always a whole notebook.

    On cpu and cuda the kernel is stopped at once when the notebook ends (nbclient's "immediate"
    shutdown) rather than asked to exit: every output has reached the notebook by then, and the
    polite exit took 0.7 s a notebook, against 0.1 s (notebook 00, measured on the 2-core machine),
    some 10 s of a `make run`. On neuron, or where the backend is not named, the kernel exits by
    itself, so the Neuron runtime releases its NeuronCores the way its own shutdown does."""
    partial = executed.with_name(f".partial-{executed.name}")
    shutdown = "immediate" if parameters.get("BACKEND") in ("cpu", "cuda") else "graceful"
    try:
        pm.execute_notebook(
            str(source),
            str(partial),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(cwd),
            execution_timeout=timeout_s,
            progress_bar=progress_bar,
            log_output=False,
            kernel_manager_class=series_kernel_manager(fixed_layout),
            shutdown_kernel=shutdown,
        )
    finally:
        _keep_if_whole(partial, executed)


def _keep_if_whole(partial: Path, executed: Path) -> None:
    """Rename `partial` to `executed` if it is a whole notebook (it parses), else remove it."""
    if not partial.exists():
        return
    try:
        json.loads(partial.read_bytes())
    except (OSError, ValueError):
        partial.unlink(missing_ok=True)
        return
    os.replace(partial, executed)


def relink(nb: dict[str, Any], root: str = "../../..", was: str = "..") -> dict[str, Any]:
    """The markdown cells' links, made to work from another folder: a notebook links `../docs/...`
    from notebooks/ (`was`, the path from its folder to the repository root); its copy in a run
    folder or in docs/reference-runs/<name>/ reaches the root by `root` instead, so `](was/` becomes
    `](root/`.

    Args:
        nb: the notebook JSON; root: the path from the copy's folder to the repository root;
            was: the path the links use now.

    Returns:
        The notebook, its markdown links rewritten (code cells are left as written).
    """
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = cell["source"]
            fix = lambda text: text.replace(f"]({was}/", f"]({root}/")  # noqa: E731
            cell["source"] = [fix(line) for line in source] if isinstance(source, list) else fix(source)
    return nb
