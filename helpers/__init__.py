"""Helpers for the TorchNeuron profiling notebook series.

Importing this package imports nothing heavy: the first cell of every notebook must be able to
import `helpers.kernel_check` in a kernel that lacks torch and say which environment to select.
Each module has one job:

- kernel_check: is this kernel the series' environment? (stdlib only)
- errors:       the series' own exceptions, each carrying the fix
- params:       validation of the papermill parameters cell
- backend:      neuron / cuda / cpu selection and what differs between them
- neuron:       the documented torch-neuronx profiler objects and output layout
- profiling:    one profiled loop over torch.profiler.schedule, the same on every backend
- measure:      wall-clock timing (median of N) with the backend's synchronize
- rmsnorm:      the RMSNorm variants under study and their input checks
- traces:       Chrome-trace loading and per-step analysis (lanes, gaps, counts)
- metrics:      what each notebook publishes for tests and for the run folder
- plotting:     plot defaults and the series' charts
"""
