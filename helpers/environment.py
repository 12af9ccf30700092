"""The environment record written beside every result: versions, machine, commit, date.

Standard library only, so that the kernel check can use it before torch is imported. The
backend adds its device fields (`Backend.describe`); everything else is probed here, once.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .series import REPO_ROOT


def package_version(dist: str) -> str | None:
    """Installed version of a distribution (e.g. "torch-neuronx"), None when absent."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def host_memory_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux); None elsewhere."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def cpu_model_name() -> str:
    """The CPU's marketing name from /proc/cpuinfo (Linux), else the architecture."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def instance_type() -> str | None:
    """The EC2 instance type where the machine reports it locally (DMI product name); never an ID."""
    try:
        name = Path("/sys/devices/virtual/dmi/id/product_name").read_text().strip()
    except OSError:
        return None
    return name or None


def git_commit() -> str | None:
    """HEAD of the series' repository, with "+dirty" when tracked files differ from it."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = out.stdout.strip()
    return (commit + ("+dirty" if dirty else "")) if out.returncode == 0 and commit else None


# Host-memory settings the series runs with. Every RMSNorm call allocates full-size tensors. glibc
# hands every block above its mmap threshold (at most 32 MiB unless set) back to the kernel when it
# is freed, so by default each call of a large RMSNorm page-faults fresh memory, and at smaller
# sizes the threshold moves with what was freed, so whether a call faults depends on what ran
# before it. PyTorch's caching allocators on cuda and neuron keep freed device memory for the next
# call instead. The series makes glibc do the same (HEAP_SETTINGS): blocks up to 1 GiB come from
# the heap, and up to 1 GiB of freed heap stays in the process. Measured on the project's 2-core CI
# VM, naive RMSNorm fp32 per call, glibc's defaults -> the series' settings:
# - 8192x4096: 1,728 page faults in every call, median 75-83 ms -> none after the first 3-6 calls,
#   median 52-66 ms; calls over 1.5x the median, out of 80: 7 and 3 -> 0 and 0 (on a VM that takes
#   back freed memory, `free_page_reporting_kib`, re-faulting it is what made those calls slow);
# - 1024x4096: 1,560 faults in every call, 11 ms, 40 ms for the first 6 calls -> none after the
#   first call, 7-8 ms.
# PyTorch's CPU allocator asks for 2 MiB pages when THP_MEM_ALLOC_ENABLE=1. That halved the cost of
# faulting fresh memory (8192x4096 naive: 152 ms with 4 KiB pages, 79 ms with 2 MiB), but with memory
# kept in the heap nothing is faulted per call, and the kernel merging the heap's pages into huge
# ones in the background made 3-5 of 80 calls take 7-8x the median. So the series leaves it off.
# An explicit value in the environment wins: THP_MEM_ALLOC_ENABLE=1 for huge pages, and
# MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ (glibc reads them at start) to leave the heap
# to glibc. Both must be in force before torch allocates; helpers.start applies them first.
ALLOCATOR_SETTINGS = {"THP_MEM_ALLOC_ENABLE": "0"}
HEAP_SETTINGS = {"mmap_threshold": 1 << 30, "trim_threshold": 1 << 30}  # mallopt takes a C int
_MALLOPT_PARAMS = {"mmap_threshold": -3, "trim_threshold": -1}  # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
HEAP_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
_heap_in_force: dict[str, int] | None = None


def quiet_profiler_log() -> str | None:
    """Set KINETO_LOG_LEVEL=6 before torch loads, where this machine has no accelerator.

    Kineto (torch.profiler's tracer) prints `USDT ... profiler_start` / `profiler_stop` lines at
    every profiled cell, at its highest log level, above ERROR: no level keeps kineto's errors and
    drops these lines, and 6 silences kineto entirely. Without a GPU or Trainium its errors concern
    tracers that are not there, so the series silences it; with one (an NVIDIA device node, or
    torch-neuronx installed) the lines stay, because there a tracer's error (CUPTI permissions, a
    device plugin failing) matters more than the noise. An explicit value in the environment wins.
    """
    from .neuron_runtime import neuron_installed

    accelerator = Path("/dev/nvidiactl").exists() or neuron_installed()
    if not accelerator:
        os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    return os.environ.get("KINETO_LOG_LEVEL")


def configure_allocator() -> dict[str, str]:
    """Apply ALLOCATOR_SETTINGS where the environment does not set them, and HEAP_SETTINGS
    (keep_freed_memory); return the variables in force.

    Effective only before torch's CPU allocator first runs (helpers.start calls it before
    importing torch; the Makefile exports the same setting to every command)."""
    for name, value in ALLOCATOR_SETTINGS.items():
        os.environ.setdefault(name, value)
    keep_freed_memory()
    return {name: os.environ[name] for name in ALLOCATOR_SETTINGS}


def keep_freed_memory() -> dict[str, int] | None:
    """Set HEAP_SETTINGS with glibc's mallopt, once per process (later calls only report); return
    them where glibc accepted both, None where this is not glibc, it refused, or the environment
    sets its own values (HEAP_ENVIRONMENT)."""
    global _heap_in_force
    if _heap_in_force is None and not any(name in os.environ for name in HEAP_ENVIRONMENT) \
            and platform.libc_ver()[0] == "glibc":
        import ctypes

        try:
            mallopt = ctypes.CDLL(None).mallopt
        except (OSError, AttributeError):
            return None
        mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
        if all(mallopt(_MALLOPT_PARAMS[name], value) == 1 for name, value in HEAP_SETTINGS.items()):
            _heap_in_force = dict(HEAP_SETTINGS)
    return _heap_in_force


def minor_page_faults() -> int | None:
    """Minor page faults of this process so far (getrusage), None where unavailable: memory a call
    touches for the first time (a fresh tensor from the kernel) is counted here."""
    try:
        import resource
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag: this process's address layout is not randomized


def address_layout() -> str | None:
    """"fixed" where this process runs without address-space randomization (started under
    `setarch -R`, as series_tools.execute starts every kernel, or ASLR off machine-wide),
    "randomized" otherwise; None off Linux. A few-microsecond call's time depends on where its
    code and data land (series_tools/execute.py gives the measurement), so runs compare best
    when both say "fixed"."""
    personality = _read_text("/proc/self/personality")
    if personality is None:
        return None
    if int(personality, 16) & ADDR_NO_RANDOMIZE or _read_text("/proc/sys/kernel/randomize_va_space") == "0":
        return "fixed"
    return "randomized"


VIRTIO_BALLOON_DEVICE = "0x0005"
VIRTIO_BALLOON_F_REPORTING = 5  # feature bit: the guest reports free pages, and the host takes them back


def free_page_reporting_kib(sys_root: Path = Path("/sys")) -> int | None:
    """The smallest free block (KiB) this virtual machine hands back to its host; None where it
    hands back none (no balloon device with free page reporting, or not a Linux VM).

    The host discards what is reported; when the guest reuses that memory, the host faults it back
    in, and the guest's page faults take longer. Measured on the project's 2-core CI VM (2 MiB
    blocks reported), with glibc's default heap settings, under which every call faults its
    tensors in: the 8192x4096 naive RMSNorm took 1.5-4.8x its median in 6 of 80 calls, twice,
    with reporting on, and in none of 80, twice, with reporting held off (system time rose, the
    number of page faults did not)."""
    for device in sorted((sys_root / "bus/virtio/devices").glob("*")):
        if _read_text(str(device / "device")) != VIRTIO_BALLOON_DEVICE:
            continue
        features = _read_text(str(device / "features")) or ""
        if features[VIRTIO_BALLOON_F_REPORTING:VIRTIO_BALLOON_F_REPORTING + 1] != "1":
            return None
        order = _read_text(str(sys_root / "module/page_reporting/parameters/page_reporting_order"))
        # without the parameter: the kernel's default, pageblock order (2 MiB with 4 KiB pages)
        return 4 << int(order) if order and order.isdigit() else 2048
    return None


def neuron_settings_record() -> dict[str, Any]:
    """The Neuron runtime settings of this kernel (helpers.neuron_runtime) and the variables in force."""
    from .neuron_runtime import COMPILE_DEBUG_SETTINGS, VISIBLE_CORES, current

    names = (VISIBLE_CORES, *COMPILE_DEBUG_SETTINGS, "TORCH_NEURONX_NEFF_CACHE_DIR", "NEURON_RT_INSPECT_ENABLE")
    return {**current().record(), "environment": {name: os.environ.get(name) for name in names}}


def host_record() -> dict[str, Any]:
    """Everything about this machine and checkout that does not depend on the backend."""
    return {
        "python": platform.python_version(),
        "torch_neuronx": package_version("torch-neuronx"),
        "neuronx_cc": package_version("neuronx-cc"),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "allocator_settings": {name: os.environ.get(name) for name in ALLOCATOR_SETTINGS},
        # the series' values, else the glibc variables the environment set, else null (glibc's defaults)
        "heap_settings": _heap_in_force or {n: os.environ[n] for n in HEAP_ENVIRONMENT if n in os.environ} or None,
        "kineto_log_level": os.environ.get("KINETO_LOG_LEVEL"),
        "neuron_settings": neuron_settings_record(),
        "address_layout": address_layout(),
        "free_page_reporting_kib": free_page_reporting_kib(),
        "transparent_hugepage": _read_text("/sys/kernel/mm/transparent_hugepage/enabled"),
        "instance_type": instance_type(),
        "git_commit": git_commit(),
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
