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


def host_record() -> dict[str, Any]:
    """Everything about this machine and checkout that does not depend on the backend."""
    return {
        "python": platform.python_version(),
        "torch": package_version("torch"),
        "torch_neuronx": package_version("torch-neuronx"),
        "neuronx_cc": package_version("neuronx-cc"),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "instance_type": instance_type(),
        "git_commit": git_commit(),
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
