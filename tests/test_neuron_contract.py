"""Contract tests of the documented torch-neuronx API, against a FAKE torch_neuronx.

No Trainium machine runs these tests. The fake module records how the series calls the
documented API (NeuronConfig, ProfileMode, NeuronProfiler.export_trace, torch.neuron.*), so
these tests check that the calls match the vendor documentation summarised in
shared/reference/neuron-profiling-facts.md; they prove nothing about real hardware.
"""
import sys
import types

import pytest
import torch
from torch.profiler import ProfilerActivity

import helpers.profiling as profiling
from helpers.backend import select_backend
from helpers.errors import DeviceBusyError
from helpers.neuron import accepts_keyword, explain_runtime_error, neuron_profiler_setup

pytestmark = pytest.mark.contract


class FakeProfileMode:
    DEVICE = "DEVICE"
    RUNTIME = "RUNTIME"
    CPU_UTIL = "CPU_UTIL"
    HOST_MEMORY = "HOST_MEMORY"


class ConfigWithCorrelate:
    def __init__(self, modes=None, profile_output_dir="profile_output", correlate_device_time=False):
        self.kwargs = dict(modes=modes, profile_output_dir=profile_output_dir,
                           correlate_device_time=correlate_device_time)


class ConfigWithoutCorrelate:
    def __init__(self, modes=None, profile_output_dir="profile_output", max_events_per_nc=1_000_000):
        self.kwargs = dict(modes=modes, profile_output_dir=profile_output_dir)


class ConfigCatchAll:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class FakeNeuronProfiler:
    instances = []

    def __init__(self, config):
        self.config = config
        self.exported = []
        FakeNeuronProfiler.instances.append(self)

    def export_trace(self, prof):
        self.exported.append(prof)


def install_fake_neuronx(monkeypatch, config_cls, available=True):
    pkg = types.ModuleType("torch_neuronx")
    prof_mod = types.ModuleType("torch_neuronx.profiling")
    prof_mod.NeuronConfig = config_cls
    prof_mod.ProfileMode = FakeProfileMode
    prof_mod.NeuronProfiler = FakeNeuronProfiler
    pkg.profiling = prof_mod
    pkg.__spec__ = types.SimpleNamespace(name="torch_neuronx")
    monkeypatch.setitem(sys.modules, "torch_neuronx", pkg)
    monkeypatch.setitem(sys.modules, "torch_neuronx.profiling", prof_mod)
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: pkg.__spec__ if name == "torch_neuronx" else real_find_spec(name, *a))
    syncs = []
    fake_neuron = types.SimpleNamespace(
        is_available=lambda: available, device_count=lambda: 2, synchronize=lambda device=None: syncs.append(1),
        empty_cache=lambda: None, memory_allocated=lambda: 0,
        get_device_properties=lambda i: types.SimpleNamespace(name="fake NeuronCore", total_memory=24 * 2**30),
    )
    monkeypatch.setattr(torch, "neuron", fake_neuron, raising=False)
    FakeNeuronProfiler.instances = []
    return syncs


def test_contract_backend_neuron_uses_privateuse1(monkeypatch):
    install_fake_neuronx(monkeypatch, ConfigWithCorrelate)
    b = select_backend("neuron")
    assert b.name == "neuron"
    assert set(b.activities) == {ProfilerActivity.CPU, ProfilerActivity.PrivateUse1}
    assert b.device_time_sort_key == "self_privateuse1_time_total"
    assert b.compile_backend == "neuron"
    assert select_backend("auto").name == "neuron"  # neuron comes first in auto


def test_contract_neuron_not_available_is_explained(monkeypatch):
    install_fake_neuronx(monkeypatch, ConfigWithCorrelate, available=False)
    with pytest.raises(Exception) as err:
        select_backend("neuron")
    assert "neuron-ls" in str(err.value)


@pytest.mark.parametrize("config_cls, expect_correlate", [
    (ConfigWithCorrelate, True), (ConfigWithoutCorrelate, False), (ConfigCatchAll, False)])
def test_contract_correlate_device_time_only_where_declared(monkeypatch, tmp_path, config_cls, expect_correlate):
    install_fake_neuronx(monkeypatch, config_cls)
    setup = neuron_profiler_setup(tmp_path)
    assert setup.correlate_device_time is expect_correlate
    assert ("correlate_device_time" in setup.config_kwargs) is expect_correlate
    assert setup.config_kwargs["modes"] == [FakeProfileMode.DEVICE, FakeProfileMode.RUNTIME]
    assert setup.config_kwargs["profile_output_dir"] == str(tmp_path)
    assert setup.exporter.config is setup.config


class FakeProfile:
    """Stands in for torch.profiler.profile, which cannot take a fake experimental_config."""

    last = None

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.steps = 0
        self.chrome_exports = []
        FakeProfile.last = self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.kwargs["on_trace_ready"](self)
        return False

    def step(self):
        self.steps += 1

    def events(self):
        return []

    def export_chrome_trace(self, path):
        self.chrome_exports.append(path)
        with open(path, "w") as fh:
            fh.write('{"traceEvents": []}')

    def key_averages(self):
        return []


def test_contract_profile_steps_on_neuron(monkeypatch, tmp_path):
    syncs = install_fake_neuronx(monkeypatch, ConfigWithoutCorrelate)
    monkeypatch.setattr(profiling, "profile", FakeProfile)
    b = select_backend("neuron")
    result = profiling.profile_steps(lambda: None, b, tmp_path, label="naive", wait=1, warmup=3, active=2)
    prof = FakeProfile.last
    assert set(prof.kwargs["activities"]) == {ProfilerActivity.CPU, ProfilerActivity.PrivateUse1}
    assert isinstance(prof.kwargs["experimental_config"], ConfigWithoutCorrelate)
    assert prof.steps == 6 and len(syncs) == 6  # torch.neuron.synchronize() inside every step
    (exporter,) = FakeNeuronProfiler.instances
    assert exporter.exported == [prof]  # NeuronProfiler.export_trace is the trace handler
    assert prof.chrome_exports and result.trace_path.exists()  # Chrome trace written too
    assert result.neuron_artifacts_dir == tmp_path / "naive.neuron"
    # key_averages came back without device time: reported as not captured, with the reason
    assert not result.device_time_captured
    assert "correlate_device_time passed: False" in result.device_time_note


@pytest.mark.parametrize("message", [
    "nrt_init failed: Failed to allocate 1 NeuronCore(s)",
    "Logical Neuron Core(s) not available - requested 1",
    "RuntimeError: failed to count NeuronCores on this instance",
])
def test_contract_busy_neuroncores_become_one_clear_error(message):
    err = explain_runtime_error(RuntimeError(message))
    assert isinstance(err, DeviceBusyError)
    assert "shut down the other notebook's kernel" in str(err)
    assert "neuron-ls" in str(err)


def test_unrelated_runtime_error_passes_through():
    exc = RuntimeError("shape mismatch")
    assert explain_runtime_error(exc) is exc


def test_accepts_keyword_rejects_catch_all():
    assert accepts_keyword(ConfigWithCorrelate, "correlate_device_time")
    assert not accepts_keyword(ConfigCatchAll, "correlate_device_time")
    assert not accepts_keyword(len, "anything")


def test_contract_busy_cores_at_notebook_start(monkeypatch):
    """A device held by another process fails at the first op with the fix and neuron-ls output."""
    install_fake_neuronx(monkeypatch, ConfigWithCorrelate)
    b = select_backend("neuron")

    def held(*args, **kwargs):
        raise RuntimeError("nrt_init: Failed to allocate 1 NeuronCore(s), already in use by pid 4242")

    monkeypatch.setattr(torch, "ones", held)
    with pytest.raises(DeviceBusyError) as err:
        b.claim_device()
    msg = str(err.value)
    assert "could not get NeuronCores" in msg and "shut down the other notebook's kernel" in msg
    assert "$ neuron-ls" in msg  # its output, or why it could not be shown
