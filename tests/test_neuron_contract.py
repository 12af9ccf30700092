"""Contract tests of the documented torch-neuronx API, against a FAKE torch_neuronx.

No Trainium machine runs these tests. The fake module records how the series calls the
documented API (NeuronConfig, ProfileMode, NeuronProfiler.export_trace, torch.neuron.*), so
these tests check that the calls match the vendor documentation summarised in
docs/NEURON_NOTES.md (N9, N10, N11, N21); they prove nothing about real hardware.
"""

import inspect
import sys
import types

import pytest
import torch
from torch.profiler import ProfilerActivity

import lesson.profiling as profiling
from helpers.backend import select_backend
from helpers.errors import DeviceBusyError, NeuronDriverError, SeriesError
from helpers.neuron import explain_runtime_error
from lesson.neuron_profiler import accepts_keyword, neuron_profiler_setup
from helpers.neuron_runtime import NeuronSettings

pytestmark = pytest.mark.contract


class FakeProfileMode:
    DEVICE = "DEVICE"
    RUNTIME = "RUNTIME"
    CPU_UTIL = "CPU_UTIL"
    HOST_MEMORY = "HOST_MEMORY"


class DocumentedConfig:
    """A FAKE NeuronConfig with exactly the documented parameters (docs/NEURON_NOTES.md, N10).

    Like a real constructor, it raises TypeError for any other keyword, so a typo in the series'
    call (`profile_output_directory=`) fails here instead of on a learner's first trn2 run.
    """

    def __init__(
        self,
        modes=None,
        profile_output_dir="profile_output",
        max_events_per_nc=1_000_000,
        capture_enabled_for_nc=None,
        neff_cache_dir=None,
        precache_node_info=True,
    ):
        self.kwargs = dict(
            modes=modes,
            profile_output_dir=profile_output_dir,
            max_events_per_nc=max_events_per_nc,
            capture_enabled_for_nc=capture_enabled_for_nc,
            neff_cache_dir=neff_cache_dir,
            precache_node_info=precache_node_info,
        )


class ConfigWithCorrelate(DocumentedConfig):
    """The documented parameters plus the tutorial's undocumented correlate_device_time (N11)."""

    def __init__(
        self,
        modes=None,
        profile_output_dir="profile_output",
        max_events_per_nc=1_000_000,
        capture_enabled_for_nc=None,
        neff_cache_dir=None,
        precache_node_info=True,
        correlate_device_time=False,
    ):
        super().__init__(modes, profile_output_dir, max_events_per_nc, capture_enabled_for_nc, neff_cache_dir, precache_node_info)
        self.kwargs["correlate_device_time"] = correlate_device_time


ConfigWithoutCorrelate = DocumentedConfig


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
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: pkg.__spec__ if name == "torch_neuronx" else real_find_spec(name, *a)
    )
    syncs = []
    fake_neuron = types.SimpleNamespace(
        is_available=lambda: available,
        device_count=lambda: 2,
        synchronize=lambda device=None: syncs.append(1),
        empty_cache=lambda: None,
        memory_allocated=lambda: 0,
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


@pytest.mark.parametrize(
    "config_cls, expect_correlate", [(ConfigWithCorrelate, True), (ConfigWithoutCorrelate, False), (ConfigCatchAll, False)]
)
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


# The documented runtime messages (docs/NEURON_NOTES.md, N7 and N8).
BUSY_MESSAGE = "NRT:nrt_allocate_neuron_cores NeuronCore(s) not available - Requested:nc1-nc1 Available:0"
DRIVER_MESSAGE = "NRT:nrt_init Unable to determine Neuron Driver version"


def test_contract_documented_busy_message_becomes_one_clear_error():
    err = explain_runtime_error(RuntimeError(BUSY_MESSAGE))
    assert isinstance(err, DeviceBusyError)
    assert "shut down the other notebook's kernel" in str(err)
    assert "neuron-ls" in str(err)


def test_contract_driver_error_is_not_reported_as_busy_cores():
    err = explain_runtime_error(RuntimeError(DRIVER_MESSAGE))
    assert not isinstance(err, DeviceBusyError)
    assert isinstance(err, NeuronDriverError)
    assert "driver" in str(err) and "shut down the other notebook's kernel" not in str(err)


def test_unrelated_runtime_error_passes_through():
    exc = RuntimeError("shape mismatch")
    assert explain_runtime_error(exc) is exc


def test_contract_fake_config_rejects_an_undocumented_keyword():
    with pytest.raises(TypeError):
        DocumentedConfig(modes=[], profile_output_directory="x")  # the typo a learner would hit on trn2


def test_contract_setup_passes_only_documented_keywords(monkeypatch, tmp_path):
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    setup = neuron_profiler_setup(tmp_path)
    assert set(setup.config_kwargs) <= set(inspect.signature(DocumentedConfig).parameters)


def test_contract_neff_cache_dir_names_the_cache_not_the_profile_folder(monkeypatch, tmp_path):
    """N14: neff_cache_dir is "the NEFF cache directory", whose NEFFs are copied into the profile on
    stop; naming the (empty) profile folder copies nothing."""
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    monkeypatch.delenv("TORCH_NEURONX_NEFF_CACHE_DIR", raising=False)
    setup = neuron_profiler_setup(tmp_path / "profile")
    assert setup.config.kwargs["neff_cache_dir"] == "/tmp/neff_cache"  # the documented default cache
    monkeypatch.setenv("TORCH_NEURONX_NEFF_CACHE_DIR", str(tmp_path / "my_cache"))
    setup = neuron_profiler_setup(tmp_path / "profile")
    assert setup.config.kwargs["neff_cache_dir"] == str(tmp_path / "my_cache")
    assert setup.config.kwargs["profile_output_dir"] == str(tmp_path / "profile") != setup.config.kwargs["neff_cache_dir"]


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " True "])
def test_contract_inspect_capture_with_torch_profiler_is_refused(monkeypatch, tmp_path, value):
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    monkeypatch.setenv("NEURON_RT_INSPECT_ENABLE", value)
    with pytest.raises(SeriesError, match="NEURON_RT_INSPECT_ENABLE=") as err:
        neuron_profiler_setup(tmp_path)
    assert "unset NEURON_RT_INSPECT_ENABLE" in str(err.value)


@pytest.mark.parametrize("value", ["0", "", "false", "FALSE", "False"])
def test_contract_inspect_enable_read_as_the_runtimes_boolean(monkeypatch, tmp_path, value):
    """N21: the runtime reads booleans as 0/1/false/true, case-insensitively: "false" is off."""
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    monkeypatch.setenv("NEURON_RT_INSPECT_ENABLE", value)
    assert neuron_profiler_setup(tmp_path).config is not None


def test_contract_runtime_logging_that_hides_warnings_is_said(monkeypatch, tmp_path, capsys):
    """N29: the series reads the dropped-events warning from the console; logging sent elsewhere hides it."""
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    monkeypatch.delenv("NEURON_RT_LOG_LEVEL", raising=False)
    monkeypatch.setenv("NEURON_RT_LOG_LOCATION", "syslog")
    neuron_profiler_setup(tmp_path)
    out = capsys.readouterr().out
    assert "NEURON_RT_LOG_LOCATION=syslog" in out and "NEURON_RT_LOG_LOCATION=console" in out
    monkeypatch.setenv("NEURON_RT_LOG_LOCATION", "console")
    neuron_profiler_setup(tmp_path)
    assert "NOTE" not in capsys.readouterr().out


def test_contract_legacy_xla_torch_neuronx_is_refused_with_the_check(monkeypatch):
    """N34: the legacy XLA-based torch-neuronx installs under the same name; `pip show` tells them apart."""
    import helpers.backend as backend_mod
    from helpers.errors import BackendUnavailableError

    monkeypatch.setattr(backend_mod, "neuron_installed", lambda: True)
    monkeypatch.setattr(backend_mod, "package_version", lambda dist: "2.9.0.2.11.19")
    with pytest.raises(BackendUnavailableError) as err:
        select_backend("neuron")
    assert "legacy XLA-based torch-neuronx" in str(err.value) and "pip show torch-neuronx" in str(err.value)
    assert backend_mod.legacy_torch_neuronx("2.14.3.1") == backend_mod.legacy_torch_neuronx("2.13.3.0") == ""


def test_accepts_keyword_rejects_catch_all():
    assert accepts_keyword(ConfigWithCorrelate, "correlate_device_time")
    assert not accepts_keyword(ConfigCatchAll, "correlate_device_time")
    assert not accepts_keyword(len, "anything")


def test_contract_busy_cores_at_notebook_start(monkeypatch):
    """A device held by another process fails at the first op with the fix and neuron-ls output."""
    install_fake_neuronx(monkeypatch, ConfigWithCorrelate)
    b = select_backend("neuron")

    def held(*args, **kwargs):
        raise RuntimeError(BUSY_MESSAGE)

    monkeypatch.setattr(torch, "ones", held)
    with pytest.raises(DeviceBusyError) as err:
        b.claim_device()
    msg = str(err.value)
    assert "could not get NeuronCores" in msg and "shut down the other notebook's kernel" in msg
    assert "$ neuron-ls" in msg  # its output, or why it could not be shown


def test_contract_config_follows_the_kernels_neuron_settings(monkeypatch, tmp_path):
    """N10, N22, N28: system-trace capture is enabled for the kernel's core only; a system profile
    has no DEVICE mode."""
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    settings = NeuronSettings(visible_cores="3", profile="system", max_events_per_nc=250_000)
    setup = neuron_profiler_setup(tmp_path, settings)
    assert setup.config.kwargs["modes"] == [FakeProfileMode.RUNTIME]
    assert setup.config.kwargs["capture_enabled_for_nc"] == "3"
    assert setup.config.kwargs["max_events_per_nc"] == 250_000
    device = neuron_profiler_setup(tmp_path, NeuronSettings(visible_cores="0"))
    assert device.config.kwargs["modes"] == [FakeProfileMode.DEVICE, FakeProfileMode.RUNTIME]


class DroppingProfiler(FakeNeuronProfiler):
    """A FAKE exporter that writes the documented warning (N23) from below Python, as C code would."""

    def export_trace(self, prof):
        import os

        os.write(2, b"Warning: 5000 trace events were dropped\n")
        super().export_trace(prof)


def test_contract_dropped_events_are_detected_at_export(monkeypatch, tmp_path, capfd):
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    monkeypatch.setattr(sys.modules["torch_neuronx.profiling"], "NeuronProfiler", DroppingProfiler)
    monkeypatch.setattr(profiling, "profile", FakeProfile)
    result = profiling.profile_steps(lambda: None, select_backend("neuron"), tmp_path, label="naive", wait=0, warmup=1, active=1)
    assert result.neuron_dropped_events == 5000
    out = capfd.readouterr().out
    assert "Warning: 5000 trace events were dropped" in out  # the runtime's own line is still shown
    assert "PROFILE TRUNCATED" in out and "MAX_EVENTS_PER_NC" in out


class FakeProfileDumpingAtTheLastStep(FakeProfile):
    """FAKE: the step that ends the active window stops the session, as TorchNeuron's Kineto session
    stop calls nrt_inspect_stop, which dumps the profile; the warning is written from below Python."""

    total = 2  # wait + warmup + active of the test below

    def step(self):
        super().step()
        if self.steps == self.total:
            import os

            os.write(2, b"Warning: 700 trace events were dropped\n")


class FakeProfileDumpingAtExit(FakeProfile):
    def __exit__(self, *exc):
        import os

        os.write(1, b"Warning: 9 trace events were dropped\n")
        return super().__exit__(*exc)


@pytest.mark.parametrize(
    "fake_profile, dropped, where", [(FakeProfileDumpingAtTheLastStep, 700, ["step"]), (FakeProfileDumpingAtExit, 9, ["exit"])]
)
def test_contract_dropped_events_are_detected_when_the_session_stops(monkeypatch, tmp_path, capfd, fake_profile, dropped, where):
    """N29: the warning may come when the profile is dumped, before on_trace_ready: the step that
    ends the active window and the profiler's exit are watched as well as the export."""
    install_fake_neuronx(monkeypatch, DocumentedConfig)
    monkeypatch.setattr(profiling, "profile", fake_profile)
    setup = neuron_profiler_setup(tmp_path / "naive.neuron")
    result = profiling.profile_steps(
        lambda: None, select_backend("neuron"), tmp_path, label="naive", wait=0, warmup=1, active=1, neuron=setup
    )
    assert result.neuron_dropped_events == dropped and setup.dropped_seen_at == where
    out = capfd.readouterr().out
    assert f"Warning: {dropped} trace events were dropped" in out and "PROFILE TRUNCATED" in out


def test_contract_memory_is_read_after_a_synchronize(monkeypatch):
    """The Neuron allocator is asynchronous: the memory-profiling guide says to call
    torch.neuron.synchronize() before reading any memory statistic (docs/NEURON_NOTES.md N46).
    The FAKE module records the order of the calls; it says nothing about real hardware."""
    install_fake_neuronx(monkeypatch, ConfigWithCorrelate)
    order = []
    torch.neuron.synchronize = lambda device=None: order.append("synchronize")
    torch.neuron.memory_allocated = lambda: order.append("memory_allocated") or 2**30
    b = select_backend("neuron")
    order.clear()
    assert b.memory_free_bytes() == 23 * 2**30
    assert order == ["synchronize", "memory_allocated"]


def test_op_by_op_turns_deterministic_mode_on_and_restores_it():
    """Contract: the eager-mode FAQ documents torch.use_deterministic_algorithms() as what disables
    Adaptive Eager Execution (N40); op_by_op sets it for its block and puts the old setting back."""
    from lesson.neuron_profiler import op_by_op

    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(False)
    try:
        with op_by_op():
            assert torch.are_deterministic_algorithms_enabled()
            assert not torch.is_deterministic_algorithms_warn_only_enabled()
        assert not torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True, warn_only=True)
        with pytest.raises(RuntimeError, match="inside"):
            with op_by_op():
                raise RuntimeError("inside")
        assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
