"""Is this Jupyter kernel the series' environment? Standard library only.

The most common failure in workshops is a notebook opened in the wrong kernel. This module runs
before torch is imported, so it can say which environment to select instead of failing with
ModuleNotFoundError three cells later.
"""

from __future__ import annotations

import importlib.util
import sys

from .environment import package_version
from .errors import SeriesError, install_error_display
from .series import SUPPORTED_TORCH

KERNEL_NAME = "trainium-profiling"

REGISTER_HELP = (
    f"select the kernel 'Python ({KERNEL_NAME})'. To create it: `make kernel` in the repository "
    f"(runs .venv/bin/python -m ipykernel install --user --name {KERNEL_NAME}); on a Neuron DLAMI: "
    "`source /opt/aws_neuronx_venv_torch_neuronx_2_14_0/bin/activate && pip install -r requirements-neuron.txt "
    f"&& python -m ipykernel install --user --name {KERNEL_NAME}`"
)


def kernel_problems() -> list[str]:
    """What this kernel lacks for the series (empty when it is fine)."""
    problems = []
    torch_version = package_version("torch")
    if importlib.util.find_spec("torch") is None or torch_version is None:
        problems.append("torch is not installed")
    elif _older_than_supported(torch_version):
        problems.append(f"torch {torch_version} is installed; the series is pinned to 2.13 (2.14 with torch-neuronx)")
    for module in ("pandas", "matplotlib"):
        if importlib.util.find_spec(module) is None:
            problems.append(f"{module} is not installed")
    return problems


def _older_than_supported(version: str) -> bool:
    """True for a torch older than the oldest supported release. A newer one (a GPU machine's own
    build, say) runs the series, and the kernel check says it is not the pinned version."""

    def release(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split("+")[0].split(".")[:2] if p.isdigit())

    return release(version) < release(SUPPORTED_TORCH[0] + "0")


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
    torch_version = package_version("torch")
    print(f"Kernel OK: {sys.executable} (Python {sys.version.split()[0]}, torch {torch_version})")
    if not torch_version.startswith(SUPPORTED_TORCH):
        print(
            f"Note: torch {torch_version} is not a version the series is pinned to ({', '.join(v + 'x' for v in SUPPORTED_TORCH)}); "
            "it runs, and environment.json records it beside every result."
        )
