"""Neuron settings that must be in place before the Neuron runtime starts (stdlib only).

`import torch` loads torch-neuronx, whose runtime reads its environment once (docs/NEURON_NOTES.md
N1), so `helpers.start` applies these before torch is imported:

- one NeuronCore per notebook kernel (`NEURON_RT_VISIBLE_CORES`, N27): a kernel that took every
  core would lock out every other kernel on the instance, which is what breaks a workshop where
  learners share one trn2. The `NEURON_CORE` parameter picks the core; "auto" keeps a
  `NEURON_RT_VISIBLE_CORES` already set (an instructor's per-seat setting), else core 0;
- the compile-time debug variables (`NEURON_FRAMEWORK_DEBUG`, `XLA_IR_DEBUG`, `XLA_HLO_DEBUG`,
  N24), so that the NEFFs compiled in this kernel carry source information for Neuron Explorer.
  NEFFs taken from the cache were compiled earlier and may lack it;
- what the profiler captures (N10, N22): `NEURON_PROFILE` "device" records the NeuronCores'
  instructions (NEFF + NTFF; reserves about 5 GB of HBM), "system" only the runtime's events (no
  HBM reserved; the docs suggest starting there); `MAX_EVENTS_PER_NC` bounds the events kept
  per core (N23: beyond it the runtime drops events and says so).

Nothing is set where torch-neuronx is not installed: on cpu and cuda these names mean nothing.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

COMPILE_DEBUG_SETTINGS = {"NEURON_FRAMEWORK_DEBUG": "1", "XLA_IR_DEBUG": "1", "XLA_HLO_DEBUG": "1"}
VISIBLE_CORES = "NEURON_RT_VISIBLE_CORES"
DEFAULT_MAX_EVENTS_PER_NC = 1_000_000  # the documented default (N10)
PROFILE_MODES = {"device": ("DEVICE", "RUNTIME"), "system": ("RUNTIME",)}
DROPPED_EVENTS = re.compile(r"(\d[\d,]*)\s+trace events were dropped", re.IGNORECASE)


@dataclass(frozen=True)
class NeuronSettings:
    """What this kernel asked of the Neuron runtime and profiler."""

    visible_cores: str | None      # NEURON_RT_VISIBLE_CORES in force; None off-Trainium
    profile: str = "device"        # key of PROFILE_MODES
    max_events_per_nc: int = DEFAULT_MAX_EVENTS_PER_NC
    compile_debug: bool = False    # COMPILE_DEBUG_SETTINGS in force
    late: bool = False             # applied after torch was imported: the runtime may not see it

    @property
    def mode_names(self) -> tuple[str, ...]:
        return PROFILE_MODES[self.profile]

    def record(self) -> dict[str, Any]:
        return {"visible_cores": self.visible_cores, "profile": self.profile, "modes": list(self.mode_names),
                "max_events_per_nc": self.max_events_per_nc, "compile_debug": self.compile_debug,
                "applied_after_torch_import": self.late}


_current = NeuronSettings(visible_cores=None)


def current() -> NeuronSettings:
    """The settings applied in this process (one kernel, one runtime)."""
    return _current


def neuron_installed() -> bool:
    return importlib.util.find_spec("torch_neuronx") is not None


def configure_neuron_runtime(parameters: dict[str, Any], installed: bool | None = None) -> NeuronSettings:
    """Apply the notebook's Neuron parameters to the environment (see the module docstring).

    An explicit environment wins over "auto"; an explicit NEURON_CORE wins over the environment.
    """
    global _current
    installed = neuron_installed() if installed is None else installed
    profile = parameters.get("NEURON_PROFILE", "device")
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
    _current = NeuronSettings(os.environ[VISIBLE_CORES], profile, max_events, compile_debug=True,
                              late="torch" in sys.modules)
    return _current


def dropped_events(text: str) -> int:
    """Events the runtime reported dropped in its output (`Warning: N trace events were dropped`, N23)."""
    return sum(int(m.group(1).replace(",", "")) for m in DROPPED_EVENTS.finditer(text))
