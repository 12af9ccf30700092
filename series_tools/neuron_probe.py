"""The observations `verify_neuron` needs, taken on real Trainium hardware.

Each call profiles one RMSNorm variant at a small shape (64 x 256, float32) with the series' own
loop (`lesson.profiling.profile_steps`: wait 0, warm-up 3, active 2), with a NeuronConfig built
as the series builds it (`lesson.neuron_profiler.neuron_config_kwargs`) and then changed only where the
check asks (correlate_device_time off, another capture core, a tiny event limit). Nothing here
runs off Trainium: the constructor asks for the neuron backend, which refuses with the fix.
"""

from __future__ import annotations

import contextlib
import dataclasses
import subprocess
from pathlib import Path
from typing import Any

from helpers.backend import select_backend
from analysis.neuron_profile import (
    explorer_accepting,
    export_system_events,
    find_neuron_artifacts,
    neuron_explorer_executable,
    system_event_cores,
)
from lesson.neuron_profiler import NeuronProfilerSetup, neuron_config_kwargs, op_by_op
from helpers.neuron_runtime import current as current_settings
from lesson.profiling import profile_steps
from analysis.traces import load_trace

from .observation import Observation

TOKENS, HIDDEN, EPS = 64, 256, 1e-6


class HardwareProbe:
    label = "Trainium, real hardware"

    def __init__(self) -> None:
        self.backend = select_backend("neuron")  # BackendUnavailableError (a SeriesError) elsewhere
        self.work_dir = Path("neuron-verify-profiles")
        self._runs = 0
        self._cache: dict[tuple, Observation] = {}

    def device_properties(self) -> dict[str, str]:
        import torch

        props = torch.neuron.get_device_properties(0)
        return {k: repr(getattr(props, k)) for k in dir(props) if not k.startswith("_")}

    def visible_cores(self) -> str:
        return current_settings().visible_cores or "0"

    def profile(
        self,
        variant: str,
        *,
        compiled: bool = False,
        correlate: bool = True,
        capture: str | None = None,
        max_events: int | None = None,
        deterministic: bool = False,
    ) -> Observation:
        key = (variant, compiled, correlate, capture, max_events, deterministic)
        if key not in self._cache:
            self._cache[key] = self._profile(*key)
        return self._cache[key]

    def _profile(
        self, variant: str, compiled: bool, correlate: bool, capture: str | None, max_events: int | None, deterministic: bool
    ) -> Observation:
        import torch
        from torch_neuronx.profiling import NeuronConfig, NeuronProfiler, ProfileMode

        from analysis.timing import time_once
        from lesson.rmsnorm import compile_rmsnorm, make_inputs, rmsnorm_torch, rmsnorm_naive

        self._runs += 1
        label = f"{self._runs:02d}-{variant}-{'compiled' if compiled else 'eager'}{'-deterministic' if deterministic else ''}"
        out = self.work_dir / label
        settings = current_settings()
        settings = dataclasses.replace(
            settings, visible_cores=capture or settings.visible_cores, max_events_per_nc=max_events or settings.max_events_per_nc
        )
        kwargs, correlate_passed = neuron_config_kwargs(out / "neuron", settings, ProfileMode, NeuronConfig)
        if not correlate and kwargs.pop("correlate_device_time", None) is not None:
            correlate_passed = False
        config = NeuronConfig(**kwargs)
        setup = NeuronProfilerSetup(
            config, NeuronProfiler(config), kwargs, correlate_passed, out / "neuron", settings.max_events_per_nc
        )
        x, w = make_inputs(TOKENS, HIDDEN, "float32", self.backend, EPS)
        fn = {"naive": rmsnorm_naive, "torch.rms_norm": rmsnorm_torch}[variant]
        if compiled:
            fn = compile_rmsnorm(fn, self.backend)
        # deterministic mode disables Adaptive Eager Execution (N40): the op-by-op chain, for check N41
        with torch.no_grad(), op_by_op() if deterministic else contextlib.nullcontext():
            first_s, _ = time_once(lambda: fn(x, w, EPS), self.backend)
            result = profile_steps(
                lambda: fn(x, w, EPS), self.backend, out, label=label, wait=0, warmup=3, active=2, neuron=setup
            )
        table = result.table  # lesson.profiling.key_averages_frame: self device time per op
        device_us = float(table["self_device_us"].fillna(0).sum()) if "self_device_us" in table else None
        found = find_neuron_artifacts(setup.output_dir, system_profile=settings.profile == "system")
        # the system events' core index is what capture_enabled_for_nc selects (N28): exported only where a
        # check asked for a capture core, since every export runs neuron-explorer over the profile
        export = export_system_events(setup.output_dir, out / "explorer") if capture is not None else None
        return Observation(
            variant=variant,
            compiled=compiled,
            correlate_passed=correlate_passed,
            device_time_us=device_us,
            categories=load_trace(result.trace_path, "neuron").category_lanes(),
            neffs=len(found.neffs),
            ntffs=len(found.ntffs),
            ntffs_nonempty=sum(1 for p in found.ntffs if p.stat().st_size > 0),
            layout_problems=[f"{p.sign}: {p.fix}" for p in found.problems] + found.notes,
            first_call_s=first_s,
            dropped_events=result.neuron_dropped_events,
            system_event_cores=None if export is None or export.events is None else system_event_cores(export.events),
            dropped_seen_at=tuple(setup.dropped_seen_at),
        )

    def explorer(self) -> dict[str, Any]:
        exe, path_note = neuron_explorer_executable()
        if exe is None:
            return {"version": "not installed"}
        version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
        accepts = [
            flag
            for flag in ("--output-format", "--output-file", "summary-json", "summary-text", "parquet")
            if explorer_accepting(flag)[0]
        ]
        capture_help = subprocess.run([exe, "capture", "--help"], capture_output=True, text=True, timeout=60)
        input_lines = [
            line.strip()
            for line in (capture_help.stdout + capture_help.stderr).splitlines()
            if "input" in line.lower() or "zero" in line.lower()
        ]
        return {
            "version": (version.stdout or version.stderr).strip() or "unknown",
            "accepts": accepts,
            # N50: what `capture --help` says about inputs, the only record of it on this machine
            "capture_inputs": " / ".join(input_lines[:6]) or "`capture --help` mentions no input option",
            **({"path": path_note} if path_note else {}),
        }
