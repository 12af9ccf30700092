"""Lesson helpers for the TorchNeuron profiling notebook series: plumbing, not the lesson.

A notebook starts with `session = helpers.start("NN_name", globals())`. Importing this package
imports nothing heavy, so that `start` can check the kernel before torch is imported and tell a
learner in the wrong kernel which environment to select. Each module has one job:

- kernel_check: is this kernel the series' environment? (stdlib only)
- neuron_runtime: Neuron runtime settings applied before torch loads: core, profile mode (stdlib only)
- environment:  versions, machine, commit and date recorded beside every result (stdlib only)
- series:       the series' shared facts: notebooks, backends, dtypes, variants (stdlib only)
- errors:       the series' own exceptions, each carrying the fix (stdlib only)
- neuron_notes: docs/NEURON_NOTES.md read back for each notebook's "On Trainium" box and notes (stdlib only)
- params:       validation of the papermill parameters cell
- outputs:      run folders and atomic writes
- metrics:      the metrics.json layout: writing, reading, merging (no torch)
- notebook:     a notebook's session: backend, output folder, metrics, release of the device
- backend:      neuron / cuda / cpu selection and what differs between them
- neuron:       the Neuron runtime's messages (cores held, driver problems) turned into errors with their fix
- plotting:     plot defaults (the chart conventions and figures are analysis.figures)

The analysis (trace loading and per-step analysis, timing and the copy floor, claims, busy-machine
detection, recorded device data) is the library `analysis`, which these modules use and which
imports none of them. The code the notebooks teach (the RMSNorm variants, the profiled loop, the
programs run in another process) is the package `lesson`, which uses these modules; no module here
imports it. The command-line tools (run the series, compare runs, sweep shapes, student copies,
handouts) live in the separate package `series_tools`, which uses these modules; no module here imports it.

Notebooks import what they use from this one namespace (`from helpers import metric, ...`); the
names load their module on first use (PEP 562), like `start`.
"""

from __future__ import annotations

from typing import Any

from analysis.facade import lazy_namespace

# The facade: module -> the names notebooks use from it ("name=attribute" where the name differs).
_EXPORTS = {
    "backend": "Backend cuda_status neuron_status select_backend",
    "metrics": "error_metric metric quantity ratio_metric read_metrics timing_metric",
    "neuron_notes": "trainium_note",
    "neuron_runtime": "neff_cache_dir neuron_settings=current",
    "outputs": "run_inductor_cache",
    "series": "CPU_SECONDS_MEASURED_ON NOTEBOOKS VARIANT_KEYS",
}
__getattr__, __dir__, _names = lazy_namespace(__name__, globals(), _EXPORTS)
__all__ = [*_names, "start"]


def start(name: str, namespace: dict[str, Any]) -> Any:
    """Check the kernel, validate the notebook's parameters, choose the backend and open its session.

    `namespace` is the notebook's `globals()`: every UPPER_CASE name in it is a parameter (the
    parameters cell, or papermill's injected one) and is checked against the series' spec.
    """
    from .environment import configure_allocator, quiet_profiler_log
    from .kernel_check import check_kernel
    from .neuron_runtime import configure_neuron_runtime
    from .params import check_parameters, notebook_parameters
    from .plotting import tables_as_text

    # before torch is imported: helpers.environment.ALLOCATOR_SETTINGS, helpers.neuron_runtime
    configure_allocator()
    quiet_profiler_log()
    check_kernel()  # also makes IPython show a SeriesError as its message and fix
    tables_as_text()  # a styled table's words reach plain-text readers (and reading_time.py) too
    parameters = check_parameters(notebook_parameters(namespace))
    configure_neuron_runtime(parameters)
    from .notebook import start_session

    return start_session(name, namespace, parameters)
