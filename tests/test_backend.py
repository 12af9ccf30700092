"""Backend selection: explicit choices are honoured or refused with the fix; auto falls back in order."""

import importlib.util
import os
import pytest
import torch

from analysis.floor import nominal_memory_gb_per_s
from torch.profiler import ProfilerActivity

from helpers.backend import make_backend, select_backend
from helpers.errors import BackendUnavailableError, ParameterError


@pytest.mark.parametrize("bad", ["gpu", "", "trn1", 3, None])
def test_unknown_backend_names_the_choices(bad):
    with pytest.raises(ParameterError) as err:
        select_backend(bad)
    assert "auto, neuron, cuda, cpu" in str(err.value)


def test_neuron_without_torch_neuronx_names_the_dlami_venv(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendUnavailableError) as err:
        select_backend("neuron")
    msg = str(err.value)
    assert "torch-neuronx is not installed" in msg
    assert "/opt/aws_neuronx_venv_torch_neuronx_2_14_0" in msg
    assert "torch-neuronx==2.14.*" in msg and "neuronx-cc==2.*" in msg
    assert "trn1" in msg and "BACKEND=cpu" in msg  # a machine without Trainium is told what runs there


def test_cuda_unavailable_says_why(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(BackendUnavailableError) as err:
        select_backend("cuda")
    assert "BACKEND=cpu" in str(err.value)


def test_auto_falls_back_to_cpu_and_says_why(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    chosen = select_backend("auto")
    assert chosen.name == "cpu"
    assert "neuron skipped" in chosen.reason and "cuda skipped" in chosen.reason


def test_explicit_name_is_case_and_space_tolerant():
    assert select_backend(" CPU ").name == "cpu"


@pytest.mark.parametrize(
    "name, activities, sort_key, compile_backend",
    [
        ("neuron", {ProfilerActivity.CPU, ProfilerActivity.PrivateUse1}, "self_privateuse1_time_total", "neuron"),
        ("cuda", {ProfilerActivity.CPU, ProfilerActivity.CUDA}, "self_cuda_time_total", "inductor"),
        ("cpu", {ProfilerActivity.CPU}, "self_cpu_time_total", "inductor"),
    ],
)
def test_backend_fields(name, activities, sort_key, compile_backend):
    b = make_backend(name, "test")
    assert set(b.activities) == activities
    assert b.device_time_sort_key == sort_key
    assert b.compile_backend == compile_backend
    assert b.name == name
    assert b.has_device_timeline == (name != "cpu")


def test_every_row_of_the_environment_table_says_what_it_is(cpu_backend):
    """Notebook 00's first table: each row of the record with a one-line meaning, nested settings
    flattened so nothing is cut off, the Neuron settings folded into one row off Trainium."""
    from helpers.environment import record_rows

    rows = cpu_backend.describe_rows()
    assert [name for name, _, meaning in rows if not meaning] == []
    assert {name for name, _, _ in rows} >= set(cpu_backend.describe()) - {"allocator_settings", "heap_settings"}
    assert [value for name, value, _ in rows if name == "neuron_settings"] == ["not applied on cpu; values in environment.json"]
    nested = record_rows({"neuron_settings": {"profile": "device", "environment": {"NEURON_RT_VISIBLE_CORES": "0"}}})
    assert [(name, value) for name, value, _ in nested] == [
        ("neuron_settings.profile", "device"),
        ("neuron_settings.environment.NEURON_RT_VISIBLE_CORES", "0"),
    ]
    assert nested[1][2].startswith("a Neuron environment variable")
    assert record_rows({"a_new_row": 1})[0][2] == ""  # a key without a line shows an empty meaning (and fails above)


def test_cpu_describe_records_versions(cpu_backend):
    env = cpu_backend.describe()
    assert env["backend"] == "cpu"
    assert env["torch"] == torch.__version__
    assert env["torch_neuronx"] is None and env["neuronx_cc"] is None
    assert env["device_count"] == 1
    # one record with the host's facts too: the run folder and handouts read these keys
    for key in ("python", "git_commit", "date_utc", "instance_type", "cpu_count"):
        assert key in env
    assert env["date_utc"].startswith("20") and env["cpu_count"] >= 1


def test_cpu_memory_free_is_read(cpu_backend):
    free = cpu_backend.memory_free_bytes()
    if not os.path.exists("/proc/meminfo"):
        pytest.skip("no /proc/meminfo on this OS: free memory is not readable here")
    assert isinstance(free, int) and free > 2**20  # MemAvailable: more than a MiB on any machine running torch


def test_cpu_has_no_nominal_bandwidth_and_says_the_triad_is_the_reference():
    value, source = nominal_memory_gb_per_s("cpu")
    assert value is None and "triad" in source


@pytest.mark.parametrize(
    "clock_khz, bus_bits, expected",
    [
        (2_619_000, 5120, 3352.32),  # an H100 SXM's properties: its datasheet says 3.35 TB/s
        (0, 6144, None),  # a torch or CUDA that no longer reports the memory clock
    ],
)
def test_cuda_nominal_bandwidth_from_fake_device_properties(monkeypatch, clock_khz, bus_bits, expected):
    """FAKE cuda device properties: the formula (2 x clock x bus width) and the missing-property case."""

    class FakeProperties:
        name = "FAKE GPU"
        memory_clock_rate = clock_khz
        memory_bus_width = bus_bits

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index=0: FakeProperties())
    value, source = nominal_memory_gb_per_s("cuda")
    if expected is None:
        assert value is None and "FAKE GPU" in source
    else:
        assert value == pytest.approx(expected) and "5120-bit" in source


def test_make_runs_choice_reaches_the_notebooks_reason(monkeypatch):
    """`make run` resolves BACKEND=auto once and passes the backend to each notebook; the notebook's
    reason then says how it was chosen, not "requested explicitly" (helpers.backend.run_reason)."""
    from helpers.backend import RUN_BACKEND_REASON, select_backend

    monkeypatch.setenv(RUN_BACKEND_REASON, "cpu=auto: neuron skipped (no torch-neuronx); cuda skipped (no GPU)")
    assert (
        select_backend("cpu").reason
        == "auto, once for the whole run by make run: neuron skipped (no torch-neuronx); cuda skipped (no GPU)"
    )
    monkeypatch.setenv(RUN_BACKEND_REASON, "cuda=auto: cuda available")  # another backend's choice: not this one's
    assert select_backend("cpu").reason == "requested explicitly"
    monkeypatch.delenv(RUN_BACKEND_REASON)
    assert select_backend("cpu").reason == "requested explicitly"


def test_cpu_pressure_is_read_once_per_process(monkeypatch):
    """notebook 00's versions table must equal the environment.json its start wrote, though the machine moves."""
    from helpers import environment

    readings = iter([0.25, 0.75])
    monkeypatch.setattr(environment, "recent_pressure", lambda: next(readings))
    monkeypatch.setattr(environment, "_PRESSURE_AT_START", [])
    first = environment.host_record()["cpu_pressure_avg10_at_start"]
    assert first == 0.25 and environment.host_record()["cpu_pressure_avg10_at_start"] == first
