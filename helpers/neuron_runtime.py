"""Neuron settings that must be in place before the Neuron runtime starts (stdlib only).

`import torch` loads torch-neuronx, whose runtime reads its environment once (docs/NEURON_NOTES.md
N1), so `helpers.start` applies these before torch is imported:

- one NeuronCore per notebook kernel (`NEURON_RT_VISIBLE_CORES`, N27): a kernel that took every
  core would lock out every other kernel on the instance, which is what breaks a workshop where
  learners share one trn2. The `NEURON_CORE` parameter picks the core; "auto" keeps a
  `NEURON_RT_VISIBLE_CORES` already set (an instructor's per-seat setting), else core 0;
- the compile-time debug variables (`NEURON_FRAMEWORK_DEBUG`, `XLA_IR_DEBUG`, `XLA_HLO_DEBUG`,
  N24), so that the NEFFs compiled in this kernel carry source information for Neuron Explorer.
  NEFFs taken from the cache were compiled earlier and may lack it: when these variables differ
  from the ones the series last saw with the same NEFF cache (`TORCH_NEURONX_NEFF_CACHE_DIR`,
  default /tmp/neff_cache), the cache is reported as stale, with the fix (a new cache folder);
- what the profiler captures (N10, N22): `NEURON_PROFILE` "device" records the NeuronCores'
  instructions (NEFF + NTFF; reserves about 5 GB of HBM), "system" only the runtime's events (no
  HBM reserved; the docs suggest starting there); `MAX_EVENTS_PER_NC` bounds the events kept
  per core (N23: beyond it the runtime drops events and says so).

Nothing is set where torch-neuronx is not installed: on cpu and cuda these names mean nothing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPILE_DEBUG_SETTINGS = {"NEURON_FRAMEWORK_DEBUG": "1", "XLA_IR_DEBUG": "1", "XLA_HLO_DEBUG": "1"}
VISIBLE_CORES = "NEURON_RT_VISIBLE_CORES"
PROFILE_ENV = "NEURON_PROFILE"  # a workshop seat's profile mode (series_tools.workshop), not a Neuron variable
DEFAULT_MAX_EVENTS_PER_NC = 1_000_000  # the documented default (N10)
PROFILE_MODES = {"device": ("DEVICE", "RUNTIME"), "system": ("RUNTIME",)}
NEFF_CACHE_ENV = "TORCH_NEURONX_NEFF_CACHE_DIR"
DEFAULT_NEFF_CACHE_DIR = "/tmp/neff_cache"  # the documented default, where the docs' own `find` looks (N14)


@dataclass(frozen=True)
class NeuronSettings:
    """What this kernel asked of the Neuron runtime and profiler."""

    visible_cores: str | None  # NEURON_RT_VISIBLE_CORES in force; None off-Trainium
    profile: str = "device"  # key of PROFILE_MODES
    max_events_per_nc: int = DEFAULT_MAX_EVENTS_PER_NC
    compile_debug: bool = False  # COMPILE_DEBUG_SETTINGS in force
    late: bool = False  # applied after torch was imported: the runtime may not see it
    stale_cache: str = ""  # why the NEFF cache may hold NEFFs without this kernel's debug info, with the fix

    @property
    def mode_names(self) -> tuple[str, ...]:
        return PROFILE_MODES[self.profile]

    def record(self) -> dict[str, Any]:
        return {
            "visible_cores": self.visible_cores,
            "profile": self.profile,
            "modes": list(self.mode_names),
            "max_events_per_nc": self.max_events_per_nc,
            "compile_debug": self.compile_debug,
            "applied_after_torch_import": self.late,
            "stale_neff_cache": self.stale_cache,
        }


_current = NeuronSettings(visible_cores=None)


def current() -> NeuronSettings:
    """The settings applied in this process (one kernel, one runtime)."""
    return _current


def neuron_installed() -> bool:
    return importlib.util.find_spec("torch_neuronx") is not None


def configure_neuron_runtime(parameters: dict[str, Any], installed: bool | None = None) -> NeuronSettings:
    """Apply the notebook's Neuron parameters to the environment (see the module docstring).

    An explicit environment wins over "auto"; an explicit NEURON_CORE wins over the environment.
    NEURON_PROFILE "auto" (the notebooks' default) takes a seat's `NEURON_PROFILE` from the
    environment (the workshop hub sets "system", which reserves no HBM: docs/WORKSHOP_HUB.md), else
    "device"; "device" or "system" in the parameters cell is used as written, whatever the seat says.
    """
    global _current
    installed = neuron_installed() if installed is None else installed
    profile = parameters.get("NEURON_PROFILE", "auto")
    if profile == "auto":
        seat = os.environ.get(PROFILE_ENV)
        profile = seat if seat in ("device", "system") else "device"
    max_events = parameters.get("MAX_EVENTS_PER_NC", DEFAULT_MAX_EVENTS_PER_NC)
    if not installed:
        _current = NeuronSettings(None, profile, max_events)
        return _current
    core = parameters.get("NEURON_CORE", "auto")
    if core != "auto":
        os.environ[VISIBLE_CORES] = str(core)
    else:
        os.environ.setdefault(VISIBLE_CORES, "0")
    for name, value in COMPILE_DEBUG_SETTINGS.items():
        os.environ.setdefault(name, value)
    stale = check_neff_cache_debug(neff_cache_dir(), {name: os.environ[name] for name in COMPILE_DEBUG_SETTINGS})
    if stale:
        print(stale)
    _current = NeuronSettings(
        os.environ[VISIBLE_CORES], profile, max_events, compile_debug=True, late="torch" in sys.modules, stale_cache=stale
    )
    return _current


def neff_cache_dir() -> str:
    """Where TorchNeuron keeps compiled NEFFs (N14): `TORCH_NEURONX_NEFF_CACHE_DIR`, else its
    documented default. NeuronConfig(neff_cache_dir=...) must name this folder: the profiler copies
    the cached NEFFs from it into the profile folder when the profile stops."""
    return os.environ.get(NEFF_CACHE_ENV) or DEFAULT_NEFF_CACHE_DIR


def check_neff_cache_debug(cache_dir: str, debug_now: dict[str, str], record: Path | None = None) -> str:
    """ "" or why the NEFF cache is stale for this kernel's debug variables, with the fix (N24).

    The debug variables change what the compiler writes into a NEFF, and a cached NEFF keeps what
    it was compiled with. The series records the variables it ran with beside the cache
    (`<cache>.series-debug.json`, outside the cache itself); a cache that holds NEFFs and was last
    used with other values is stale. The record is then updated to this run's values."""
    cache = Path(cache_dir)
    record = record or Path(f"{cache}.series-debug.json")
    try:
        previous = json.loads(record.read_text()) if record.exists() else None
    except (OSError, ValueError):
        previous = None
    warning = ""
    if previous is not None and previous != debug_now and cache.is_dir() and next(cache.rglob("*.neff"), None):
        was = ", ".join(f"{k}={v or '(unset)'}" for k, v in sorted(previous.items()))
        now = ", ".join(f"{k}={v or '(unset)'}" for k, v in sorted(debug_now.items()))
        warning = (
            f"STALE NEFF CACHE: {cache} holds NEFFs compiled with {was}; this kernel runs with {now}. "
            "Cached NEFFs keep the debug information they were compiled with, so Neuron Explorer may "
            f"show no source for them. Fix: before torch loads, set {NEFF_CACHE_ENV} to a new folder "
            f"(e.g. `export {NEFF_CACHE_ENV}={cache}_debug`) or delete {cache}, then restart the kernel"
        )
    try:
        record.write_text(json.dumps(debug_now, sort_keys=True))
    except OSError:
        pass  # a read-only cache location: nothing to record, and nothing worse than before
    return warning
