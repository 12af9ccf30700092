"""Notebook 01's Neuron profiler set-up (NeuronConfig, NeuronProfiler as `on_trace_ready`),
repeated for the later notebooks, and the watch on the runtime's output for dropped events.

`neuron_profiler_setup` builds these objects for notebook 01 (one call in its cell), 02, 03 and
`lesson.profiling`. Nothing here has run on Trainium in this project's CI: it follows
the vendor documentation as recorded, fact by fact with its source and status, in
docs/NEURON_NOTES.md (the N<n> labels below). Where a fact is UNVERIFIED
(`correlate_device_time`), the code detects it at run time and reports what it found. The
contract tests in tests/test_neuron_contract.py check it against a FAKE torch_neuronx.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.neuron_log import report_dropped_events, run_capturing_native_output
from helpers.errors import SeriesError
from helpers.neuron_runtime import DEFAULT_MAX_EVENTS_PER_NC, NeuronSettings, neff_cache_dir
from helpers.neuron_runtime import current as current_settings


def accepts_keyword(callable_: Any, name: str) -> bool:
    """True only if `name` is an explicit parameter of `callable_`.

    A **kwargs catch-all is not proof that the keyword is understood, so it counts as no.
    """
    try:
        params = inspect.signature(callable_).parameters
    except (TypeError, ValueError):  # builtins and C extensions may have no signature
        return False
    param = params.get(name)
    return param is not None and param.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


@dataclass
class NeuronProfilerSetup:
    """The NeuronConfig and exporter for one profiled run, and what was detected."""

    config: Any
    exporter: Any
    config_kwargs: dict[str, Any]
    correlate_device_time: bool
    output_dir: Path
    max_events_per_nc: int = DEFAULT_MAX_EVENTS_PER_NC
    dropped_events: int = 0
    dropped_seen_at: list[str] = field(default_factory=list)  # outermost watched call that read it: step, export, exit
    _watching: bool = field(default=False, repr=False)

    def watch(self, where: str, fn: Any, *args: Any) -> Any:
        """fn(*args), reading the runtime's output back for a dropped-events warning (N23).

        The Neuron runtime dumps the profile when the profiler's Kineto session stops
        (TorchNeuron's session stop calls `nrt_inspect_stop`), which PyTorch does at the
        `prof.step()` that ends the active window, before `on_trace_ready`; where the warning is
        printed is not documented (N29), so the series watches that step, the export and the
        profiler's exit. A call inside another watched call is not read twice."""
        if self._watching:
            return fn(*args)
        self._watching = True
        try:
            result, text = run_capturing_native_output(fn, *args)
        finally:
            self._watching = False
        dropped = report_dropped_events(text, self.max_events_per_nc)
        if dropped:
            self.dropped_events += dropped
            self.dropped_seen_at.append(where)
        return result

    def export_trace(self, prof: Any) -> None:
        """`NeuronProfiler.export_trace(prof)` (N9), watched for dropped events (N23, N29)."""
        self.watch("export", self.exporter.export_trace, prof)

    def watch_exit(self, profiler: Any) -> Any:
        """`profiler` as a context manager whose exit is watched for dropped events (N29)."""
        return _WatchedExit(self, profiler)

    def watched(self, profiler: Any) -> Any:
        """`profiler` with the watches of `lesson.profiling.profile_steps` inside it, so that notebook
        01's loop is the documented one (`with profiler as prof: ... prof.step()`): the `prof.step()`
        that ends the active window and the profiler's exit run under `watch` (N23, N29); every
        other attribute is the profiler's own."""
        return _WatchedProfile(self, profiler)


class _WatchedExit:
    """A torch.profiler.profile whose __exit__ runs under NeuronProfilerSetup.watch."""

    def __init__(self, setup: NeuronProfilerSetup, profiler: Any) -> None:
        self.setup, self.profiler = setup, profiler

    def __enter__(self) -> Any:
        return self.profiler.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.setup.watch("exit", self.profiler.__exit__, *exc)


class _WatchedProfile(_WatchedExit):
    """A torch.profiler.profile whose window-ending step() and __exit__ run under NeuronProfilerSetup.watch.

    The step that ends the active window is the one called while the schedule's action is
    RECORD_AND_SAVE (PyTorch stops the session there, and the runtime dumps its profile); a
    profiler without `current_action` has every step watched (a nested watch is not read twice)."""

    def __enter__(self) -> Any:
        self.profiler.__enter__()
        return self

    def step(self) -> Any:
        action = getattr(self.profiler, "current_action", None)
        if action is None or action.name == "RECORD_AND_SAVE":
            return self.setup.watch("step", self.profiler.step)
        return self.profiler.step()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.profiler, name)


def neuron_config_kwargs(
    output_dir: Path, settings: NeuronSettings, profile_mode: Any, neuron_config: Any
) -> tuple[dict[str, Any], bool]:
    """The documented NeuronConfig keywords for this kernel's settings (N9, N10), and whether the
    undocumented `correlate_device_time` (N11) was added.

    `modes` follow NEURON_PROFILE ("system": RUNTIME only, no HBM reserved, N22); system-trace
    capture (ring buffers for runtime and hardware events, N10) is enabled for this kernel's core
    only (`capture_enabled_for_nc`, given the NEURON_RT_VISIBLE_CORES spec: whether it counts cores
    on the instance or within the process is UNVERIFIED, N28; it does not select device traces);
    `neff_cache_dir` names the NEFF cache, whose NEFFs the profiler copies into the profile folder
    on stop (N14). Optional keywords are passed only where the installed NeuronConfig declares them."""
    kwargs: dict[str, Any] = {
        "modes": [getattr(profile_mode, name) for name in settings.mode_names],
        "profile_output_dir": str(output_dir),
    }
    optional = {
        "max_events_per_nc": settings.max_events_per_nc,
        "capture_enabled_for_nc": settings.visible_cores,
        "neff_cache_dir": neff_cache_dir(),
    }
    for name, value in optional.items():
        if value is not None and accepts_keyword(neuron_config, name):
            kwargs[name] = value
    correlate = accepts_keyword(neuron_config, "correlate_device_time")
    if correlate:
        kwargs["correlate_device_time"] = True
    return kwargs, correlate


RUNTIME_FALSE = ("", "0", "false")  # the runtime's booleans: 0, 1, false, true, case-insensitive (N21)


def refuse_environment_capture() -> None:
    """Environment capture (`NEURON_RT_INSPECT_ENABLE=1`) must not be combined with torch.profiler (N21).

    The runtime reads booleans as 0/1/false/true, case-insensitively: "false" is off, as "0" is."""

    value = os.environ.get("NEURON_RT_INSPECT_ENABLE", "0")
    if value.strip().lower() not in RUNTIME_FALSE:
        raise SeriesError(
            f"NEURON_RT_INSPECT_ENABLE={value} is set: the Neuron docs say not to combine environment capture "
            "with torch.profiler",
            "unset NEURON_RT_INSPECT_ENABLE (and restart the kernel) to profile with torch.profiler, "
            "or capture with the environment variables alone, without torch.profiler",
        )


def neuron_profiler_setup(output_dir: Path, settings: NeuronSettings | None = None) -> NeuronProfilerSetup:
    """Build NeuronConfig and NeuronProfiler as the vendor documents (N9), for this kernel's
    settings (helpers.neuron_runtime: core, profile mode, event limit)."""
    refuse_environment_capture()
    if note := runtime_log_note():
        print(note)
    from torch_neuronx.profiling import NeuronConfig, NeuronProfiler, ProfileMode

    settings = settings or current_settings()
    kwargs, correlate = neuron_config_kwargs(output_dir, settings, ProfileMode, NeuronConfig)
    config = NeuronConfig(**kwargs)
    return NeuronProfilerSetup(
        config=config,
        exporter=NeuronProfiler(config),
        config_kwargs=kwargs,
        correlate_device_time=correlate,
        output_dir=output_dir,
        max_events_per_nc=settings.max_events_per_nc,
    )


def runtime_log_note() -> str:
    """Why a dropped-events warning might not reach this process's console, or "" (N29).

    The runtime logs at WARN to console and syslog by default; NEURON_RT_LOG_LOCATION and
    NEURON_RT_LOG_LEVEL change that, and the series reads the warning from the console only."""

    location = os.environ.get("NEURON_RT_LOG_LOCATION", "").strip().lower()
    level = os.environ.get("NEURON_RT_LOG_LEVEL", "").strip().upper()
    reasons = []
    if location and "console" not in location:
        reasons.append(f"NEURON_RT_LOG_LOCATION={location} (not console)")
    if level in ("ERROR", "FATAL", "OFF", "NONE"):
        reasons.append(f"NEURON_RT_LOG_LEVEL={level} (above WARN)")
    if not reasons:
        return ""
    return (
        f"NOTE: {' and '.join(reasons)}: a 'trace events were dropped' warning may not reach this console, "
        "so a truncated profile could go unreported. Fix: unset them, or set NEURON_RT_LOG_LOCATION=console "
        "and NEURON_RT_LOG_LEVEL=WARN, before torch loads"
    )


class op_by_op:
    """A `with` block in which TorchNeuron runs eager operators one by one (docs/NEURON_NOTES.md N40).

    TorchNeuron's Adaptive Eager Execution fuses queued eager operators "into single operators
    based on fusion heuristics"; its eager-mode FAQ says that calling
    `torch.use_deterministic_algorithms()` disables it. Inside this block deterministic algorithms
    are on, so a profile shows the op-by-op chain (one NEFF execution per ATen op is expected:
    UNVERIFIED, docs/NEURON_NOTES.md N41, which `make verify-neuron` checks); on leaving,
    the previous setting (and its warn_only flag) comes back. On cpu and cuda the block only sets
    PyTorch's deterministic mode, which changes nothing the series measures (a cuda op without a
    deterministic implementation raises, as PyTorch documents).
    """

    def __enter__(self) -> "op_by_op":
        import torch

        self._was = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
        torch.use_deterministic_algorithms(True)
        return self

    def __exit__(self, *exc: object) -> bool:
        import torch

        enabled, warn_only = self._was
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        return False
