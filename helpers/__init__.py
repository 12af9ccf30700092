"""Lesson helpers for the TorchNeuron profiling notebook series: plumbing, not the lesson.

A notebook starts with `session = helpers.start("NN_name", globals())`. Importing this package
imports nothing heavy, so that `start` can check the kernel before torch is imported and tell a
learner in the wrong kernel which environment to select. Each module has one job:

- kernel_check: is this kernel the series' environment? (stdlib only)
- neuron_runtime: Neuron runtime settings applied before torch loads: core, profile mode (stdlib only)
- environment:  versions, machine, commit and date recorded beside every result (stdlib only)
- series:       the series' shared facts: notebooks, backends, dtypes, variants (stdlib only)
- errors:       the series' own exceptions, each carrying the fix (stdlib only)
- neuron_notes: docs/NEURON_NOTES.md read back for each notebook's "On Trainium" box (stdlib only)
- params:       validation of the papermill parameters cell
- outputs:      run folders and atomic writes
- metrics:      the metrics.json layout: writing, reading, merging (no torch)
- notebook:     a notebook's session: backend, output folder, metrics, release of the device
- backend:      neuron / cuda / cpu selection and what differs between them
- neuron:       the documented torch-neuronx profiler set-up, and the runtime's messages turned into errors with their fix
- profiling:    the profiled loop of notebook 01 as a helper, for the repetitions after it
- rmsnorm:      the RMSNorm variants (source: the notebooks' `# @save` cells) and their input checks
- shapes:       notebook 07's request stream, strategies (source: its `# @save` cell) and per-call compiles
- ranks:        notebook 08's torchrun launch (checked, time-limited, nothing left running); analysis.rank_view reads its waits
- rank_worker:  one rank of notebook 08 (run by torchrun; `train_step` from its `# @save` cell)
- study:        one variant timed, profiled and checked the same way in every notebook
- recorded:     the real A100 traces shipped in data/recorded/ and the origin label their figures carry
- plotting:     plot defaults and the series' charts

The analysis (trace loading and per-step analysis, timing and the copy floor, claims, busy-machine
detection, recorded device data) is the library `analysis`, which these modules use and which
imports none of them. The command-line tools (run the series, compare runs, sweep shapes, student copies, handouts)
live in the separate package `series_tools`, which uses these modules; no module here imports it.
"""
from __future__ import annotations

from typing import Any


def start(name: str, namespace: dict[str, Any]) -> Any:
    """Check the kernel, validate the notebook's parameters, choose the backend and open its session.

    `namespace` is the notebook's `globals()`: every UPPER_CASE name in it is a parameter (the
    parameters cell, or papermill's injected one) and is checked against the series' spec.
    """
    from .environment import configure_allocator, quiet_profiler_log
    from .kernel_check import check_kernel
    from .neuron_runtime import configure_neuron_runtime
    from .params import check_parameters, notebook_parameters

    # before torch is imported: helpers.environment.ALLOCATOR_SETTINGS, helpers.neuron_runtime
    configure_allocator()
    quiet_profiler_log()
    check_kernel()  # also makes IPython show a SeriesError as its message and fix
    parameters = check_parameters(notebook_parameters(namespace))
    configure_neuron_runtime(parameters)
    from .notebook import start_session

    return start_session(name, namespace, parameters)
