"""Neuron runtime settings applied before torch loads. CONTRACT tests: no Trainium here; the
environment is checked as the documented runtime would read it (docs/NEURON_NOTES.md N24, N27)."""

import pytest

from helpers import neuron_runtime
from helpers.errors import ParameterError
from helpers.neuron_runtime import COMPILE_DEBUG_SETTINGS, VISIBLE_CORES, configure_neuron_runtime
from helpers.params import check_parameters


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in (VISIBLE_CORES, neuron_runtime.PROFILE_ENV, *COMPILE_DEBUG_SETTINGS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(neuron_runtime.NEFF_CACHE_ENV, str(tmp_path / "neff_cache"))  # no record in /tmp
    monkeypatch.setattr(neuron_runtime, "_current", neuron_runtime.NeuronSettings(None))
    return monkeypatch


def test_one_core_per_kernel_by_default_and_debug_info_before_the_first_compile(clean_env):
    settings = configure_neuron_runtime({}, installed=True)
    assert settings.visible_cores == "0" and neuron_runtime.current() is settings
    import os

    assert os.environ[VISIBLE_CORES] == "0"
    assert all(os.environ[name] == "1" for name in COMPILE_DEBUG_SETTINGS)


def test_an_instructors_per_seat_setting_wins_over_auto_and_a_parameter_wins_over_both(clean_env):
    clean_env.setenv(VISIBLE_CORES, "5")
    assert configure_neuron_runtime({"NEURON_CORE": "auto"}, installed=True).visible_cores == "5"
    assert configure_neuron_runtime({"NEURON_CORE": 2}, installed=True).visible_cores == "2"


def test_auto_takes_the_seats_profile_mode_and_an_explicit_one_wins(clean_env):
    """The workshop hub sets NEURON_PROFILE=system per seat: no seat reserves device-profile HBM unless
    its learner writes NEURON_PROFILE = "device" in the parameters cell."""
    assert configure_neuron_runtime({"NEURON_PROFILE": "auto"}, installed=True).profile == "device"
    clean_env.setenv(neuron_runtime.PROFILE_ENV, "system")
    assert configure_neuron_runtime({"NEURON_PROFILE": "auto"}, installed=True).profile == "system"
    assert configure_neuron_runtime({"NEURON_PROFILE": "device"}, installed=True).profile == "device"
    clean_env.setenv(neuron_runtime.PROFILE_ENV, "nonsense")  # not a mode: device, the documented default
    assert configure_neuron_runtime({"NEURON_PROFILE": "auto"}, installed=True).profile == "device"


def test_nothing_is_set_without_torch_neuronx(clean_env):
    import os

    settings = configure_neuron_runtime({"NEURON_CORE": 3, "NEURON_PROFILE": "system"}, installed=False)
    assert settings.visible_cores is None and VISIBLE_CORES not in os.environ
    assert not any(name in os.environ for name in COMPILE_DEBUG_SETTINGS)
    assert settings.mode_names == ("RUNTIME",)  # a system-only profile reserves no HBM (N22)


def test_late_settings_are_marked(clean_env):
    import torch  # noqa: F401  (already imported by the suite: the runtime would have started)

    assert configure_neuron_runtime({}, installed=True).late is True


def test_neuron_parameters_are_validated():
    check_parameters({"NEURON_CORE": "auto", "NEURON_PROFILE": "system", "MAX_EVENTS_PER_NC": 100_000})
    check_parameters({"NEURON_CORE": "2-3"})
    with pytest.raises(ParameterError, match="NEURON_CORE must be"):
        check_parameters({"NEURON_CORE": "core one"})
    with pytest.raises(ParameterError, match="NEURON_PROFILE must be one of auto, device, system"):
        check_parameters({"NEURON_PROFILE": "both"})


def test_neff_cache_is_the_documented_default_unless_set(monkeypatch, tmp_path):
    monkeypatch.delenv(neuron_runtime.NEFF_CACHE_ENV, raising=False)
    assert neuron_runtime.neff_cache_dir() == "/tmp/neff_cache"
    monkeypatch.setenv(neuron_runtime.NEFF_CACHE_ENV, str(tmp_path))
    assert neuron_runtime.neff_cache_dir() == str(tmp_path)


def test_a_cache_compiled_with_other_debug_variables_is_reported_stale(clean_env, tmp_path, capsys):
    """N24: cached NEFFs keep the debug information they were compiled with; after the debug
    variables change, the fix is a new cache folder (a SYNTHETIC cache here)."""
    cache = tmp_path / "neff_cache"
    (cache / "MODULE_1").mkdir(parents=True)
    (cache / "MODULE_1" / "model.neff").write_bytes(b"\0")
    assert configure_neuron_runtime({}, installed=True).stale_cache == ""  # first use: recorded, nothing to compare
    assert configure_neuron_runtime({}, installed=True).stale_cache == ""  # same variables: not stale
    clean_env.setenv("NEURON_FRAMEWORK_DEBUG", "0")  # changed before the next kernel starts
    stale = configure_neuron_runtime({}, installed=True).stale_cache
    assert "STALE NEFF CACHE" in stale and "NEURON_FRAMEWORK_DEBUG=0" in stale
    assert f"{neuron_runtime.NEFF_CACHE_ENV}={cache}_debug" in stale and stale in capsys.readouterr().out
