"""Execute one notebook with papermill on a kernel whose connection is encrypted.

Every tool that runs notebooks (run, the tests, the benchmark) goes through `execute_notebook`, so a
notebook runs the same way everywhere.

Why the encryption: at every start, ipykernel warns that a kernel on TCP without encryption sends
code and outputs in plain text, and the warning lands in every `make run`. ipykernel 7 declares
CurveZMQ support in its kernelspec, and jupyter_client 8.10 provisions the keys when the manager's
`transport_encryption` is "auto". The warning goes because its cause goes. The other cure it names,
IPC transport, silences it too, but then Ctrl-C waited for the running cell to end (57.7 s measured
here); with Curve keys Ctrl-C ends a run in 0.7 s, as over plain TCP. `make lab` gives
JupyterLab's kernels the same keys (`--KernelManager.transport_encryption=auto`).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import papermill as pm


@lru_cache(maxsize=1)  # one class for every notebook of a process
def encrypted_kernel_manager() -> type | None:
    """A kernel manager that provisions CurveZMQ keys where kernel and libzmq support them.

    None where this jupyter_client or libzmq cannot (an older Neuron DLAMI venv): papermill's
    default manager is used, and the kernel runs as before, warning included.
    """
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    if "transport_encryption" not in AsyncKernelManager.class_trait_names() or not zmq.has("curve"):
        return None

    class EncryptedKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.transport_encryption = "auto"  # keys only where the kernelspec declares "curve"

    return EncryptedKernelManager


def execute_notebook(source: Path, executed: Path, parameters: dict[str, Any], cwd: Path,
                     timeout_s: int | None = None, progress_bar: bool = False) -> None:
    """Run `source` with `parameters` into `executed` (kernel python3); errors are papermill's."""
    manager = encrypted_kernel_manager()
    pm.execute_notebook(str(source), str(executed), parameters=parameters, kernel_name="python3", cwd=str(cwd),
                        execution_timeout=timeout_s, progress_bar=progress_bar, log_output=False,
                        **({"kernel_manager_class": manager} if manager else {}))
