"""The environment record written beside every result: versions, machine, commit, date.

Standard library only, so that the kernel check can use it before torch is imported. The
backend adds its device fields (`Backend.describe`); everything else is probed here, once.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from analysis.contention import recent_pressure
from analysis.host import address_layout, free_page_reporting_kib, read_sys_text

from .series import REPO_ROOT


def package_version(dist: str) -> str | None:
    """Installed version of a distribution (e.g. "torch-neuronx"), None when absent."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def cxx_compiler() -> str:
    """The C++ compiler Inductor (`torch.compile` on cpu: notebooks 04, 05, 07) builds its kernels
    with, found on PATH; a seat without one fails at its first compile, so notebook 00 says so first.

    Why it reads `$CXX` rather than Inductor's config: that is where Inductor's default comes from
    (`torch._inductor.config.cpp.cxx` is (None, $CXX or "g++")), and importing Inductor to ask it
    took about 1 s in every notebook's first cell, most of which never compile. Where Inductor is
    already imported (a changed config), its setting is read."""
    config = sys.modules.get("torch._inductor.config")
    configured = getattr(getattr(config, "cpp", None), "cxx", None) if config is not None else None
    names = [name for name in configured or () if isinstance(name, str) and name]
    for name in (*names, os.environ.get("CXX", ""), "g++", "c++", "clang++"):
        found = shutil.which(name) if name else None
        if found:
            return found
    return "none found: install g++ (e.g. apt install g++) before notebooks 04, 05 and 07 on cpu"


def instance_type() -> str | None:
    """The EC2 instance type where the machine reports it locally (DMI product name); never an ID."""
    return read_sys_text("/sys/devices/virtual/dmi/id/product_name") or None


def git_commit() -> str | None:
    """HEAD of the series' repository, with "+dirty" when tracked files differ from it."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = out.stdout.strip()
    return (commit + ("+dirty" if dirty else "")) if out.returncode == 0 and commit else None


# Host-memory settings the series runs with. On a CPU, most of a large RMSNorm call is spent
# page-faulting its fresh full-size tensors (measured here at 8192x4096 fp32: a clone took 48.6 ms
# with 4 KiB pages and 23.3 ms with 2 MiB pages; the naive RMSNorm 152 ms and 79 ms). Whether the
# kernel backs them with huge pages otherwise depends on the machine's THP setting and its state,
# so the same call could measure twice as long in one notebook as in another. PyTorch's CPU
# allocator asks for huge pages (madvise) when THP_MEM_ALLOC_ENABLE=1; it reads the variable once,
# so it is set before torch is imported. An explicit value in the environment wins (set it to 0
# to measure the 4 KiB-page behaviour).
ALLOCATOR_SETTINGS = {"THP_MEM_ALLOC_ENABLE": "1"}

# The C library's heap (glibc) hands freed memory at the top of its heap back to the system once
# more than its trim threshold lies free there, and serves blocks above its mmap threshold from
# fresh mappings; both thresholds move as a program frees large blocks. A call that frees a few
# MiB of intermediates each time can then fault them back in on every call, or not, depending on
# what the process allocated before: measured in notebook 01 on this project's 2-core VM
# (2026-12-06), its first timed block ran at about 480 page faults per call and 3.5-3.8 ms, the same
# call after one profiled loop at 0 faults and 3.2 ms, and no warm-up or settling time changed
# the first state. Fixed thresholds (set with mallopt at start, before torch loads) keep every
# block in one state. Where the C library is not glibc, nothing is set and the record says so.
HEAP_SETTINGS = {"M_TRIM_THRESHOLD": (-1, 256 << 20), "M_MMAP_THRESHOLD": (-3, 64 << 20)}


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
    """Apply ALLOCATOR_SETTINGS where the environment does not set them; return what is in force.

    Effective only before torch's CPU allocator first runs (helpers.start calls it before
    importing torch; the Makefile exports the same setting to every command)."""
    for name, value in ALLOCATOR_SETTINGS.items():
        os.environ.setdefault(name, value)
    steady_heap()
    return {name: os.environ[name] for name in ALLOCATOR_SETTINGS}


_HEAP_APPLIED: dict[str, int] | None = None


def steady_heap() -> dict[str, int] | None:
    """Fix glibc's heap thresholds (HEAP_SETTINGS) in this process; return what was set, or None
    where the C library is not glibc (macOS, musl) or refuses. Idempotent."""
    global _HEAP_APPLIED
    if _HEAP_APPLIED is None and sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        import ctypes

        try:
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            return None
        applied = {name: value for name, (param, value) in HEAP_SETTINGS.items() if libc.mallopt(param, value) == 1}
        _HEAP_APPLIED = applied or None
    return _HEAP_APPLIED


def neuron_settings_record() -> dict[str, Any]:
    """The Neuron runtime settings of this kernel (helpers.neuron_runtime) and the variables in force."""
    from .neuron_runtime import COMPILE_DEBUG_SETTINGS, VISIBLE_CORES, current

    names = (VISIBLE_CORES, *COMPILE_DEBUG_SETTINGS, "TORCH_NEURONX_NEFF_CACHE_DIR", "NEURON_RT_INSPECT_ENABLE")
    names = tuple(name for name in names if not SECRET_NAME.search(name))  # never a credential's value
    return {**current().record(), "environment": {name: os.environ.get(name) for name in names}}


# One line per row of the environment record (host_record and Backend.describe), for the table a
# learner reads first (notebook 00): a row nobody can place is a row to ignore. A nested setting is
# shown as "parent.child"; a child without its own line takes its parent's.
RECORD_MEANINGS = {
    "python": "the Python version of this kernel",
    "torch_neuronx": "torch-neuronx (TorchNeuron), the Neuron backend of PyTorch; empty: not a Trainium environment",
    "neuronx_cc": "the Neuron compiler (it writes NEFF files, the compiled programs); empty: not a Trainium environment",
    "platform": "the operating system (its Linux version)",
    "cpu_count": "the CPUs this machine (or virtual machine) offers",
    "cxx_compiler": "the C++ compiler torch.compile's Inductor uses on cpu (notebooks 04, 05, 07); on Trainium neuronx-cc compiles instead",
    "allocator_settings": "PyTorch CPU allocator settings the series sets; THP_MEM_ALLOC_ENABLE=1 asks for huge pages for large "
    "tensors (cheat-sheet, Measurement machinery)",
    "heap_settings": "the C library's heap thresholds the series fixes (M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, bytes), so "
    "that a call's freed memory is not handed back and faulted in again in one timed block and not in the next",
    "kineto_log_level": "the profiler library's (Kineto) log level; 6 silences its start-up messages on a machine with no "
    "accelerator, where they say nothing the learner can act on",
    "neuron_settings": "the Neuron runtime settings of this kernel, used on Trainium only (the notebooks' Neuron parameters set them)",
    "neuron_settings.visible_cores": "the NeuronCore(s) this kernel reserves (NEURON_RT_VISIBLE_CORES); empty off Trainium",
    "neuron_settings.profile": "NEURON_PROFILE: what a Neuron profile records, device (NEFF + NTFF) or system (runtime events); auto took a workshop seat's setting, else device",
    "neuron_settings.environment": "a Neuron environment variable in force when the kernel started; empty: not set",
    "address_layout": "whether Linux placed this kernel's code and data at random addresses; fixed (setarch -R, as the "
    "series starts its kernels) is meant to make a few-microsecond call time the same in every process",
    "free_page_reporting_kib": "the smallest freed block this virtual machine hands back to its host; empty: none. A call "
    "that reuses such memory waits while the host gives it back",
    "cpu_pressure_avg10_at_start": "the share of the 10 s before the notebook started (read once, by helpers.start) in "
    "which some task waited for a CPU (Linux PSI): how busy the machine was",
    "transparent_hugepage": "Linux's huge-page policy; the bracketed word is in force ([madvise]: only where a program asks, as "
    "PyTorch does with THP_MEM_ALLOC_ENABLE=1)",
    "instance_type": "the cloud instance type where the machine reports one (e.g. a trn2 size); empty elsewhere",
    "git_commit": "the series' commit that produced this run",
    "date_utc": "when this record was taken",
    "backend": "the backend this run uses: neuron, cuda or cpu",
    "reason": "why that backend (the probes in the next table)",
    "device_name": "the device the timings ran on",
    "device_count": "how many such devices torch sees",
    "torch": "the PyTorch version",
    "cuda_runtime": "the CUDA version this torch was built with; empty: a CPU-only build",
    "intra_op_threads": "the threads one PyTorch op may use here (the series leaves one CPU free: appendix A1, section 4)",
}


def record_rows(record: dict[str, Any], folded: tuple[str, ...] = ()) -> list[tuple[str, Any, str]]:
    """The record as (row, value, what it is) rows, nested settings flattened to "parent.child", so
    that no value is cut off and every row carries its one-line meaning (RECORD_MEANINGS).

    A name in `folded` stays one row that points at environment.json instead of its settings: the
    Neuron settings are a dozen rows that mean nothing off Trainium."""
    rows = []

    def add(name: str, value: Any) -> None:
        if name in folded:
            rows.append((name, "(recorded in environment.json; applied on Trainium only)", RECORD_MEANINGS.get(name, "")))
            return
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                add(f"{name}.{key}", inner)
            return
        parts = name.split(".")
        meaning = next(
            (RECORD_MEANINGS[".".join(parts[:n])] for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in RECORD_MEANINGS), ""
        )
        rows.append((name, "" if value is None else value, meaning))  # None shows as empty, as the meanings say

    for name, value in record.items():
        add(name, value)
    return rows


_PRESSURE_AT_START: list[float | None] = []  # the first reading in this process


def pressure_at_start() -> float | None:
    """The CPU pressure read at this process's first record (helpers.start), kept for every later one.

    Read again, it would describe the moment of the later record, and the versions table of notebook 00
    would differ from the environment.json the same notebook wrote at its start.
    """
    if not _PRESSURE_AT_START:
        _PRESSURE_AT_START.append(recent_pressure())  # analysis.contention: how busy the machine was before anything ran
    return _PRESSURE_AT_START[0]


# A record written beside results is published (make publish) and shared: it must never carry a
# credential. Variables named like one (HF_TOKEN, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, ...) and the
# common token formats (Hugging Face, GitHub, AWS key ids, Slack, OpenAI-style keys) are replaced.
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY", re.IGNORECASE)
TOKEN_LIKE = re.compile(
    r"hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abpr]-[\w-]{10,}"
    r"|sk-[A-Za-z0-9_-]{20,}"
)
SECRET_PLACEHOLDER = "<secret>"


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """The values of the environment's variables named like a credential (8 characters or more:
    a shorter value could be an ordinary word), longest first."""
    environ = os.environ if environ is None else environ
    return sorted({v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True)


def redact_secrets(value: Any, secrets: list[str] | None = None) -> Any:
    """`value` (text or a JSON value) with every credential-named variable's value and every
    token-like string replaced by SECRET_PLACEHOLDER."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, SECRET_PLACEHOLDER)
        return TOKEN_LIKE.sub(SECRET_PLACEHOLDER, value)
    if isinstance(value, list):
        return [redact_secrets(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: redact_secrets(v, secrets) for k, v in value.items()}
    return value


def host_record() -> dict[str, Any]:
    """Everything about this machine and checkout that does not depend on the backend (credentials
    redacted: `redact_secrets`)."""
    return redact_secrets(
        {
            "python": platform.python_version(),
            "torch_neuronx": package_version("torch-neuronx"),
            "neuronx_cc": package_version("neuronx-cc"),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "cxx_compiler": cxx_compiler(),
            "allocator_settings": {name: os.environ.get(name) for name in ALLOCATOR_SETTINGS},
            "heap_settings": steady_heap() or "not set (the C library is not glibc)",
            "kineto_log_level": os.environ.get("KINETO_LOG_LEVEL"),
            "neuron_settings": neuron_settings_record(),
            "address_layout": address_layout(),
            "free_page_reporting_kib": free_page_reporting_kib(),
            "cpu_pressure_avg10_at_start": pressure_at_start(),
            "transparent_hugepage": read_sys_text("/sys/kernel/mm/transparent_hugepage/enabled"),
            "instance_type": instance_type(),
            "git_commit": git_commit(),
            "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
    )
