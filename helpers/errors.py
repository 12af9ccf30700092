"""Exceptions that carry the fix.

A learner in a workshop should read one or two lines saying what went wrong and what to do,
not a traceback from inside torch. Every error the series raises on purpose is a SeriesError;
`install_error_display` (called by the first cell of every notebook) makes IPython show only its
message. Standard library only (analysis.errors is too): the kernel check imports this before torch.
"""

from __future__ import annotations

from typing import Any

from analysis.errors import SeriesError, TraceFileError  # noqa: F401  (the analysis library raises them too)


class ParameterError(SeriesError, ValueError):
    """A notebook parameter has the wrong type or an out-of-range value."""


class BackendUnavailableError(SeriesError, RuntimeError):
    """The requested backend cannot run in this environment."""


class DeviceBusyError(SeriesError, RuntimeError):
    """Another process holds the accelerator (the NeuronCores, typically)."""


class NeuronDriverError(SeriesError, RuntimeError):
    """The Neuron runtime cannot reach the driver (not a core held by another process)."""


class OutputDirError(SeriesError, OSError):
    """An output folder cannot be created or written."""


class InputError(SeriesError, ValueError):
    """A tensor, shape or dtype the operation cannot take."""


class DeviceMemoryError(SeriesError, MemoryError):
    """A shape too large for the memory of the device it would run on."""


class CompileError(SeriesError, RuntimeError):
    """torch.compile failed or broke the graph under fullgraph=True."""


def _show_series_error(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
    """IPython handler: a SeriesError shows as its message (problem + fix), without the traceback.

    IPython ignores the handler's return value, so the handler sends the error itself; the cell
    still fails, and papermill still stops and reports it.
    """
    stb = [f"{etype.__name__}: {value}"]
    shell._showtraceback(etype, value, stb)
    return stb


def install_error_display() -> None:
    """In IPython, show SeriesErrors as their message; elsewhere do nothing."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        return
    shell.set_custom_exc((SeriesError,), _show_series_error)
