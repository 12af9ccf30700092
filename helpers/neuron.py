"""The Neuron runtime's messages turned into errors with their fix: cores held by another
process (N7), driver problems (N8). The profiler set-up that notebook 01 teaches, repeated for the
later notebooks, is lesson.neuron_profiler; the folder it writes is read by analysis.neuron_profile.

Nothing here has run on Trainium in this project's CI: it follows the vendor documentation as
recorded, fact by fact with its source and status, in docs/NEURON_NOTES.md (the N<n> labels
below). tests/test_neuron_contract.py checks it against the documented messages.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from .errors import DeviceBusyError, NeuronDriverError, SeriesError

# N7: the documented runtime message when another process holds the NeuronCores:
#   NRT:nrt_allocate_neuron_cores NeuronCore(s) not available - Requested:nc1-nc1 Available:0
_BUSY_PATTERN = re.compile(r"nrt_allocate_neuron_cores.*NeuronCore\(s\) not available", re.IGNORECASE)
# N8: driver problems surface from nrt_init too (`NRT:nrt_init Unable to determine Neuron Driver
# version`): a different cause, with a different fix. Matched only when the busy message is absent.
_DRIVER_PATTERN = re.compile(r"nrt_init.*(driver|Unable to determine)|neuron driver", re.IGNORECASE)

BUSY_FIX = (
    "another process holds the NeuronCores: shut down the other notebook's kernel "
    "(Kernel > Shut Down Kernel) or end that process, then run again; `neuron-ls` shows "
    "which PID holds each device. To share one instance, give each kernel its own cores "
    "(NEURON_RT_VISIBLE_CORES, set before the runtime starts)"
)
DRIVER_FIX = (
    "the Neuron runtime could not talk to the Neuron driver: check that the driver is loaded "
    "(`lsmod | grep neuron`, `neuron-ls`), and that aws-neuronx-dkms matches the runtime; on a Neuron "
    "DLAMI a reboot after a driver update is often needed"
)


def neuron_ls_executable() -> str | None:
    """`neuron-ls` from PATH, else from the DLAMI's /opt/aws/neuron/bin (a workshop seat started by a
    hub under systemd has a PATH without it); None where neither has it."""
    from analysis.neuron_profile import NEURON_TOOLS_BIN  # /opt/aws/neuron/bin (N32)

    fallback = NEURON_TOOLS_BIN / "neuron-ls"
    return shutil.which("neuron-ls") or (str(fallback) if os.access(fallback, os.X_OK) else None)


def neuron_ls_output(max_lines: int = 20) -> str:
    """`neuron-ls` output (which process holds which device), or why it is not shown."""

    exe = neuron_ls_executable()
    if exe is None:
        return "(neuron-ls is neither on PATH nor in /opt/aws/neuron/bin here)"
    try:
        done = subprocess.run([exe], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(neuron-ls failed: {exc})"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return "\n".join(lines[:max_lines] + (["..."] if len(lines) > max_lines else []))


def explain_runtime_error(exc: BaseException) -> SeriesError | BaseException:
    """Turn the runtime's 'cannot allocate NeuronCores' errors into one clear line, followed by
    what `neuron-ls` says about who holds them.

    Any other error is returned unchanged, so that it is re-raised as it came.
    """
    text = str(exc)
    first_line = text.strip().splitlines()[0][:200] if text.strip() else type(exc).__name__
    if _BUSY_PATTERN.search(text):
        return DeviceBusyError(
            f"The Neuron runtime could not get NeuronCores ({first_line})", f"{BUSY_FIX}\n$ neuron-ls\n{neuron_ls_output()}"
        )
    if _DRIVER_PATTERN.search(text):
        return NeuronDriverError(f"The Neuron runtime could not start ({first_line})", DRIVER_FIX)
    return exc
