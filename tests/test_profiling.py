"""profile_steps on cpu: real traces, honest device-time flags, bad schedules and failing callables."""

import json
import math

import pytest

from analysis.key_averages import device_time_verdict
import torch

from helpers.errors import OutputDirError, ParameterError
from lesson.profiling import estimate_trace_bytes, profile_steps


def work():
    x = torch.ones(64, 64)
    return (x @ x).sum()


def test_cpu_profile_writes_trace_and_table(cpu_backend, tmp_path):
    result = profile_steps(work, cpu_backend, tmp_path, label="mm", wait=0, warmup=1, active=3)
    data = json.loads(result.trace_path.read_text())
    steps = {e["name"] for e in data["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")}
    assert len(steps) == 3  # exactly the active steps are recorded
    names = set(result.table["name"])
    assert "aten::mm" in names and "mm" in names
    assert list(result.table.columns[:6]) == ["name", "calls", "self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us"]
    mm = result.table.set_index("name").loc["aten::mm"]
    assert mm["calls"] == 3 and mm["self_cpu_us"] > 0


def test_cpu_device_time_is_reported_not_captured(cpu_backend, tmp_path):
    result = profile_steps(work, cpu_backend, tmp_path, wait=0, warmup=1, active=2)
    assert not result.device_time_captured
    assert "no separate device timeline" in result.device_time_note
    assert result.table["self_device_us"].isna().all()  # never an empty column shown as zeros


def test_unsynchronized_loop_is_not_captured_and_on_cpu_says_why(cpu_backend, tmp_path):
    """On cpu nothing is queued, so the note names the missing device timeline, not synchronize();
    on a device backend the missing synchronize() is named (analysis.key_averages.device_time_verdict)."""
    result = profile_steps(work, cpu_backend, tmp_path, wait=0, warmup=1, active=2, synchronize=False)
    assert not result.device_time_captured
    assert "no separate device timeline" in result.device_time_note and "synchronize()" not in result.device_time_note
    assert math.isnan(result.per_step("self_device_us"))  # not captured: NaN, never a zero that reads as "no time"
    captured, why = device_time_verdict(result.table, False, "cuda", True)
    assert not captured and "no synchronize()" in why


@pytest.mark.parametrize("wait, warmup, active", [(0, 1, 0), (0, -1, 2), (-1, 1, 1), (0, 0, 2), (0, 1, 1.5)])
def test_bad_schedule_is_refused(cpu_backend, tmp_path, wait, warmup, active):
    with pytest.raises(ParameterError) as err:
        profile_steps(work, cpu_backend, tmp_path, wait=wait, warmup=warmup, active=active)
    assert "schedule" in str(err.value)


def test_output_folder_that_cannot_be_created(cpu_backend, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.raises(OutputDirError) as err:
        profile_steps(work, cpu_backend, blocker / "sub", wait=0, warmup=1, active=1)
    assert "OUT_DIR" in str(err.value)


def test_raising_callable_stops_profiler_and_keeps_original_error(cpu_backend, tmp_path):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 3:
            raise ZeroDivisionError("boom in step 2")
        return work()

    with pytest.raises(ZeroDivisionError, match="boom in step 2") as err:
        profile_steps(flaky, cpu_backend, tmp_path, wait=0, warmup=1, active=3)
    assert any("step 2" in n for n in err.value.__notes__)
    assert not torch.autograd.profiler._is_profiler_enabled
    # the profiler is really closed: a new one starts
    profile_steps(work, cpu_backend, tmp_path, label="after", wait=0, warmup=1, active=1)


def test_large_trace_warning(cpu_backend, tmp_path, monkeypatch):
    import lesson.profiling as prof_mod

    monkeypatch.setattr(prof_mod, "LARGE_TRACE_BYTES", 10)
    with pytest.warns(UserWarning, match="estimated at"):
        profile_steps(work, cpu_backend, tmp_path, wait=0, warmup=1, active=1, with_stack=True)
    assert estimate_trace_bytes(1000, True) == pytest.approx(prof_mod.STACK_FACTOR * estimate_trace_bytes(1000, False))


def test_a_failed_trace_export_leaves_no_partial_file(cpu_backend, tmp_path, monkeypatch):
    """A full disk during the export: the error reaches the caller and no `.json.partial` stays behind."""

    def cut_off_export(self, path):
        with open(path, "w") as fh:
            fh.write('{"traceEvents": [')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch.profiler.profile, "export_chrome_trace", cut_off_export)
    with pytest.raises(OSError, match="No space left"):
        profile_steps(work, cpu_backend, tmp_path, label="mm", wait=0, warmup=1, active=1)
    assert list(tmp_path.rglob("*.partial")) == []
