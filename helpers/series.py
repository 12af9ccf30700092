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
                 "lists NeuronCores with neuron-ls", "lists the GPU or CPU", cpu_seconds=4.3),
    NotebookInfo("01_profiler_setup", "profiler, schedule, synchronize, overhead",
                 "NeuronConfig + NeuronProfiler, PrivateUse1 activity, Neuron profile folder",
                 "same loop without the Neuron exporter; the Neuron code is shown as text", cpu_seconds=8.0),
    NotebookInfo("02_naive_rmsnorm", "naive RMSNorm: ops, memory, gaps",
                 "one NEFF execution per op (eager)", "kernels on cuda, ATen ops on cpu", cpu_seconds=14.3),
    NotebookInfo("03_fused_rms_norm", "torch.rms_norm",
                 "one NEFF per shape (documented)", "one fused kernel on cuda; same ops as naive on cpu", cpu_seconds=20.1),
    NotebookInfo("04_torch_compile", "torch.compile: cold vs warm, graphs, breaks",
                 "backend='neuron': one NEFF per graph", "Inductor: generated C++ (cpu) or Triton (cuda)", cpu_seconds=31.1),
    NotebookInfo("05_compare_variants", "all variants, two shapes, copy floor",
                 "device time from the timer; Neuron profile per variant", "same table and chart", cpu_seconds=32.1),
    NotebookInfo("06_reading_traces", "lanes, gaps, dispatch chain, Neuron Explorer",
                 "Neuron Explorer walkthrough on the real profile", "Perfetto UI; what Neuron Explorer would show", cpu_seconds=13.1),
)

