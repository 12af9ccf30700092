"""Choose the backend (neuron, cuda or cpu) and hold what differs between them.

Every notebook runs on all three. What changes is small and lives here: the torch device, the
profiler activities, how to wait for the device, the key_averages column that holds device
time, and the torch.compile backend. The rest of the series reads these fields instead of
branching on the backend's name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.profiler import ProfilerActivity

from analysis.host import cpu_model_name, host_memory_available_bytes

from .environment import host_record, package_version
from .errors import BackendUnavailableError, ParameterError
from .neuron_runtime import neuron_installed
from .series import BACKEND_CHOICES

NEURON_VENV = "/opt/aws_neuronx_venv_torch_neuronx_2_14_0"
NEURON_INSTALL_FIX = (
    "needs a trn2/trn3 instance (TorchNeuron does not support trn1); without one use BACKEND=cpu or cuda. "
    f"On its Neuron DLAMI run `source {NEURON_VENV}/bin/activate` and select that kernel; "
    "without the DLAMI `pip install -r requirements-neuron.txt` (torch-neuronx==2.14.*, neuronx-cc==2.*; Python 3.12-3.14, N3)."
)


@dataclass(frozen=True)
class Backend:
    """What one backend needs for profiling and timing."""

    name: str
    activities: tuple[ProfilerActivity, ...]
    device_time_sort_key: str
    memory_sort_key: str  # key_averages().table(sort_by=...) for the memory this backend's tensors use
    compile_backend: str
    asynchronous: bool
    memory_device_type: int  # c10 DeviceType in the trace's [memory] events: CPU 0, CUDA 1, PrivateUse1 20
    reason: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def device(self) -> torch.device:
        """Built on use: `torch.device("neuron")` exists only once torch-neuronx has registered it."""
        return torch.device(self.name)

    def synchronize(self) -> None:
        """Wait until all queued device work is finished (a no-op on cpu, which never queues)."""
        if self.name == "neuron":
            torch.neuron.synchronize()
        elif self.name == "cuda":
            torch.cuda.synchronize()

    @property
    def has_device_timeline(self) -> bool:
        """True where the profiler records device activity apart from CPU ops."""
        return self.name in ("neuron", "cuda")

    def device_count(self) -> int:
        if self.name == "neuron":
            return int(torch.neuron.device_count())
        if self.name == "cuda":
            return torch.cuda.device_count()
        return 1

    def device_name(self) -> str:
        if self.name == "cuda":
            return torch.cuda.get_device_name(0)
        if self.name == "neuron":
            try:
                return str(torch.neuron.get_device_properties(0).name)
            except Exception:  # the property set is not documented for every SDK
                return "NeuronCore (name not reported by this torch-neuronx)"
        return cpu_model_name()

    def memory_free_bytes(self) -> int | None:
        """Free memory where this backend's tensors live, or None if it cannot be read."""
        if self.name == "cuda":
            free, _total = torch.cuda.mem_get_info()
            return int(free)
        if self.name == "neuron":
            try:
                total = torch.neuron.get_device_properties(0).total_memory
                # the Neuron allocator is asynchronous: without a synchronize a memory statistic shows only
                # the work the device has finished, not what is queued (docs/NEURON_NOTES.md N46)
                torch.neuron.synchronize()
                return int(total - torch.neuron.memory_allocated())
            except Exception:
                return None
        return host_memory_available_bytes()

    def claim_device(self) -> None:
        """Run one tiny op on the device now, so that a device held by another process fails
        here, with the fix, instead of deep inside the first lesson cell."""
        if self.name == "cpu":
            return
        try:
            torch.ones(1, device=self.name).add_(1)
            self.synchronize()
        except RuntimeError as exc:
            from .neuron import explain_runtime_error

            explained = explain_runtime_error(exc) if self.name == "neuron" else exc
            if explained is exc:
                raise
            raise explained from exc

    def describe(self) -> dict[str, Any]:
        """The environment record written beside every result: this backend's device, and the
        host's versions, machine, commit and date (`helpers.environment`)."""
        return {
            **host_record(),
            "backend": self.name,
            "reason": self.reason,
            "device_name": self.device_name(),
            "device_count": self.device_count(),
            "torch": torch.__version__,
            "cuda_runtime": torch.version.cuda,
            # every intra-op parallel region waits for all of these threads: with another process on
            # one of the CPUs, a small call waits for a parked thread (analysis/contention.py)
            "intra_op_threads": torch.get_num_threads(),
        }

    def describe_rows(self) -> list[tuple[str, Any, str]]:
        """`describe()` as (row, value, what it is) rows: the table notebook 00 shows a learner (the
        Neuron settings folded into one row off Trainium, whose value says so plainly: a reader took
        "(recorded in environment.json; ...)" as a value the table should have shown)."""
        from .environment import record_rows

        if self.name == "neuron":
            return record_rows(self.describe())
        rows = record_rows(self.describe(), folded=("neuron_settings",))
        plain = f"not applied on {self.name}; values in environment.json"
        return [(row, plain if row == "neuron_settings" else value, meaning) for row, value, meaning in rows]


def neuron_status() -> tuple[bool, str]:
    """Whether TorchNeuron can run here, and if not, why."""
    if not neuron_installed():
        return False, "torch-neuronx is not installed in this Python environment"
    if legacy := legacy_torch_neuronx(package_version("torch-neuronx")):
        return False, legacy
    try:
        import torch_neuronx  # noqa: F401  (registers `neuron` even with autoload off)
    except Exception as exc:  # a broken install must not stop cpu/cuda runs
        return False, f"torch-neuronx is installed but `import torch_neuronx` failed: {exc}"
    neuron = getattr(torch, "neuron", None)
    if neuron is None:
        return False, "torch-neuronx imported but torch.neuron is missing (version mismatch?)"
    try:
        available = bool(neuron.is_available())
    except RuntimeError as exc:
        from .neuron import explain_runtime_error

        raise explain_runtime_error(exc) from exc
    if not available:
        return False, "torch.neuron.is_available() is False: no NeuronCores visible (check `neuron-ls`)"
    return True, f"torch-neuronx {package_version('torch-neuronx')} sees NeuronCores"


NATIVE_TORCH_NEURONX = (2, 13)  # TorchNeuron (native `neuron` device): torch-neuronx 2.13.3.x and 2.14.x (N34)


def legacy_torch_neuronx(version: str | None) -> str:
    """Why this torch-neuronx is the legacy XLA-based library rather than TorchNeuron, or "" (N34).

    Both install as `torch-neuronx`; the vendor's check is `pip show torch-neuronx`: 2.14.x is
    the native backend, earlier versions (below the 2.13.3.x line of N3) the XLA-based library,
    which has no `neuron` device for this series to use."""
    try:
        major_minor = tuple(int(part) for part in (version or "").split(".")[:2])
    except ValueError:
        return ""
    if len(major_minor) < 2 or major_minor >= NATIVE_TORCH_NEURONX:
        return ""
    return (
        f"torch-neuronx {version} is the legacy XLA-based torch-neuronx, not native TorchNeuron "
        "(`pip show torch-neuronx`: 2.14.x is the native backend)"
    )


def cuda_status() -> tuple[bool, str]:
    if torch.cuda.is_available():
        return True, f"torch.cuda.is_available() is True ({torch.cuda.get_device_name(0)})"
    if torch.version.cuda is None:
        return False, f"this torch ({torch.__version__}) is a CPU-only build"
    return False, "torch.cuda.is_available() is False: no GPU visible to this CUDA build of torch"


# What differs between the backends, in one table.
BACKEND_FIELDS: dict[str, dict[str, Any]] = {
    "neuron": dict(
        activities=(ProfilerActivity.CPU, ProfilerActivity.PrivateUse1),
        device_time_sort_key="self_privateuse1_time_total",
        compile_backend="neuron",
        memory_sort_key="self_device_memory_usage",
        asynchronous=True,
        memory_device_type=20,
    ),
    "cuda": dict(
        activities=(ProfilerActivity.CPU, ProfilerActivity.CUDA),
        device_time_sort_key="self_cuda_time_total",
        compile_backend="inductor",
        memory_sort_key="self_device_memory_usage",
        asynchronous=True,
        memory_device_type=1,
    ),
    "cpu": dict(
        activities=(ProfilerActivity.CPU,),
        device_time_sort_key="self_cpu_time_total",
        memory_sort_key="self_cpu_memory_usage",
        compile_backend="inductor",
        asynchronous=False,
        memory_device_type=0,
        notes=(
            "On cpu the device is the CPU: there is no separate device timeline, so the "
            "profiler's device-time columns are absent or empty and compute time is CPU time.",
        ),
    ),
}


def make_backend(name: str, reason: str) -> Backend:
    """Build the Backend record for a backend already known to be available."""
    if name not in BACKEND_FIELDS:
        raise ParameterError(
            f"BACKEND={name!r} is not a backend this series knows",
            f"use one of {', '.join(BACKEND_CHOICES)}",
        )
    return Backend(name=name, reason=reason, **BACKEND_FIELDS[name])


RUN_BACKEND_REASON = "SERIES_RUN_BACKEND_REASON"  # set by `make run` for the notebooks it executes


def run_reason(name: str) -> str:
    """How `make run` chose `name` for the whole run, or "": it resolves BACKEND=auto once and
    passes the result to each notebook, which would otherwise report "requested explicitly"."""
    chosen, _, reason = os.environ.get(RUN_BACKEND_REASON, "").partition("=")
    if chosen != name or not reason:
        return ""
    return f"auto, once for the whole run by make run: {reason.removeprefix('auto: ')}" if reason.startswith("auto") else reason


def select_backend(requested: str = "auto") -> Backend:
    """Honour an explicit BACKEND, or pick neuron, then cuda, then cpu.

    An explicit backend that cannot run is an error that names what is missing, never a silent
    fall-back: a regression check asked to run on neuron must not quietly measure a CPU.
    """
    if not isinstance(requested, str) or requested.strip().lower() not in BACKEND_CHOICES:
        raise ParameterError(
            f"BACKEND={requested!r} is not one of {', '.join(BACKEND_CHOICES)}",
            "pass e.g. `-p BACKEND cpu` to papermill, or BACKEND=cpu to make",
        )
    requested = requested.strip().lower()
    if requested == "neuron":
        ok, why = neuron_status()
        if not ok:
            raise BackendUnavailableError(f"BACKEND=neuron requested, but {why}", NEURON_INSTALL_FIX)
        return make_backend("neuron", run_reason("neuron") or f"requested explicitly; {why}")
    if requested == "cuda":
        ok, why = cuda_status()
        if not ok:
            raise BackendUnavailableError(
                f"BACKEND=cuda requested, but {why}",
                "run on a machine with an NVIDIA GPU and a CUDA build of torch 2.13.0, or use BACKEND=cpu",
            )
        return make_backend("cuda", run_reason("cuda") or f"requested explicitly; {why}")
    if requested == "cpu":
        return make_backend("cpu", run_reason("cpu") or "requested explicitly")

    neuron_ok, neuron_why = neuron_status()
    if neuron_ok:
        return make_backend("neuron", f"auto: {neuron_why}")
    cuda_ok, cuda_why = cuda_status()
    if cuda_ok:
        return make_backend("cuda", f"auto: neuron skipped ({neuron_why}); {cuda_why}")
    return make_backend("cpu", f"auto: neuron skipped ({neuron_why}); cuda skipped ({cuda_why})")
