"""Is this Jupyter kernel the series' environment? Standard library only.

The most common failure in workshops is a notebook opened in the wrong kernel. This module runs
before torch is imported, so it can say which environment to select instead of failing with
ModuleNotFoundError three cells later.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import sys

from .errors import SeriesError, install_error_display

KERNEL_NAME = "trainium-profiling"
SUPPORTED_TORCH = ("2.13.", "2.14.")  # 2.13 from requirements.txt, 2.14 with torch-neuronx 2.14.*

REGISTER_HELP = (
    f"select the kernel 'Python ({KERNEL_NAME})'. To create it: `make kernel` in the repository "
    f"(runs .venv/bin/python -m ipykernel install --user --name {KERNEL_NAME}); on a Neuron DLAMI: "
    "`source /opt/aws_neuronx_venv_torch_neuronx_2_14_0/bin/activate && pip install -r requirements-neuron.txt "
    f"&& python -m ipykernel install --user --name {KERNEL_NAME}`"
)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def kernel_problems() -> list[str]:
    """What this kernel lacks for the series (empty when it is fine)."""
    problems = []
    torch_version = _version("torch")
    if importlib.util.find_spec("torch") is None or torch_version is None:
        problems.append("torch is not installed")
    elif not torch_version.startswith(SUPPORTED_TORCH):
        problems.append(f"torch {torch_version} is installed; the series is pinned to 2.13 (2.14 with torch-neuronx)")
    for module in ("pandas", "matplotlib"):
        if importlib.util.find_spec(module) is None:
            problems.append(f"{module} is not installed")
    return problems


def check_kernel() -> None:
    """Raise SeriesError naming the kernel to select, or print a one-line description.

    Also installs the compact error display, so every later SeriesError reads as two lines.
    """
    install_error_display()
    problems = kernel_problems()
    if problems:
        raise SeriesError(
            f"This kernel ({sys.executable}) is not the series' environment: {'; '.join(problems)}.",
            REGISTER_HELP,
        )
    print(f"Kernel OK: {sys.executable} (Python {sys.version.split()[0]}, torch {_version('torch')})")
