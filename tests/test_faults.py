"""Fault injection (issue 42): each way a regression check could pass by accident, a reader could
count bad data, or the main job could lose what it finished, with the good cases beside them so
that they stay good. Fast: the series runs here on a stand-in for papermill (no kernel); the
cases that need real kernels, real signals or a real full filesystem are in tests/faults_slow.py
(`make test-faults`).

Run folders are built in the layout series_tools/run_series.py writes (metrics.json with its
`identity`, status.json, environment.json), or written by run_series itself.
"""

import errno
import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from analysis.recorded import RECORDED_DIR
from analysis.traces import load_trace
from helpers.errors import OutputDirError, TraceFileError
from series_tools import compare, execute, run_series
from test_run_series import tiny_notebook

NB = "02_naive_rmsnorm"


# --- run folders as run_series writes them --------------------------------------------------------


def timing(value, of="naive 8192x4096 float32", spread=0.02):
    return {"value": value, "unit": "us", "better": "lower", "p10": value * (1 - spread), "p90": value * (1 + spread), "of": of}


def metrics_02(time_us=1000.0, of="naive 8192x4096 float32"):
    return {
        "time_per_call_us": timing(time_us, of),
        "device_ops_per_call": {"value": 7.0, "unit": "ops"},
        "error_within_tolerance": {"value": True, "unit": "bool", "better": "true"},
    }


def make_run(
    path,
    notebooks,
    parameters=None,
    statuses=None,
    backend="cpu",
    device="Intel(R) Xeon(R) Processor",
    incomplete=False,
    concurrent=(),
    identity=True,
):
    """A run folder: `notebooks` {name: metrics}; `parameters` {name: {param: value}} (defaults:
    TOKENS 8192, HIDDEN 4096 for each); `statuses` {name: status record} (default: each passed).
    identity=False writes a run from before the identity record: status.json holds the overrides."""
    path.mkdir(parents=True)
    parameters = parameters or {nb: {"TOKENS": 8192, "HIDDEN": 4096} for nb in notebooks}
    doc = {"backend": backend, "notebooks": notebooks}
    if identity:
        doc["identity"] = {
            "backend": backend,
            "device": device,
            "parameters": parameters,
            "overridden": {nb: [] for nb in parameters},
            "concurrent_runs": list(concurrent),
        }
    (path / "metrics.json").write_text(json.dumps(doc))
    (path / "environment.json").write_text(json.dumps({"backend": backend, "device_name": device}))
    records = statuses or {nb: {"status": "passed"} for nb in notebooks}
    status = {
        "status": "passed" if all(r["status"] == "passed" for r in records.values()) else "failed",
        "notebooks": [
            {"notebook": nb, "parameters": {} if identity else parameters.get(nb, {}), **r} for nb, r in records.items()
        ],
    }
    (path / "status.json").write_text(json.dumps(status))
    if incomplete or status["status"] != "passed":
        (path / "INCOMPLETE").write_text("")
    return path


def run_compare(capsys, *argv):
    code = compare.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out + out.err


# --- compare: what differs is not comparable --------------------------------------------------------


def test_a_run_at_other_parameters_is_not_comparable_never_a_regression(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(1000.0)})
    b = make_run(tmp_path / "b", {NB: metrics_02(2022.0)}, parameters={NB: {"TOKENS": 4096, "HIDDEN": 4096}})
    code, out = run_compare(capsys, a, b)
    assert code == 3 and "not comparable (TOKENS 8192 vs 4096)" in out and "REGRESSION" not in out


def test_a_run_from_before_the_identity_record_is_checked_by_its_overrides(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(1000.0)}, parameters={NB: {}}, identity=False)
    b = make_run(tmp_path / "b", {NB: metrics_02(2022.0)}, parameters={NB: {"TOKENS": 4096}}, identity=False)
    code, out = run_compare(capsys, a, b)
    assert code == 3 and "TOKENS (the notebook's default) vs 4096" in out
    same = make_run(tmp_path / "c", {NB: metrics_02(1000.0)}, parameters={NB: {"TOKENS": 4096}}, identity=False)
    assert run_compare(capsys, b, same)[0] == 0


def test_another_shape_is_not_comparable(tmp_path, capsys):
    """64x512 against 8192x4096 read as -100% before: each metric's `of` is part of its identity."""
    a = make_run(tmp_path / "a", {NB: metrics_02(90000.0, of="naive 8192x4096 float32")})
    b = make_run(tmp_path / "b", {NB: metrics_02(20.0, of="naive 64x512 float32")})
    code, out = run_compare(capsys, a, b)
    assert code == 3 and "of 'naive 8192x4096 float32' vs 'naive 64x512 float32'" in out
    assert "-100.0%" not in out


@pytest.mark.parametrize("field, other", [("backend", "cuda"), ("device", "AMD EPYC 7B13")])
def test_another_backend_or_device_is_not_comparable(tmp_path, capsys, field, other):
    a = make_run(tmp_path / "a", {NB: metrics_02(1000.0)})
    b = make_run(tmp_path / "b", {NB: metrics_02(3000.0)}, **{field: other})
    code, out = run_compare(capsys, a, b)
    assert code == 3 and f"not comparable ({field} " in out and "REGRESSION" not in out


def test_help_documents_the_exit_statuses(capsys):
    with pytest.raises(SystemExit):
        compare.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "3 not comparable" in text and "4 missing" in text and "1 a regression" in text


# --- compare: missing is a failure --------------------------------------------------------------------


def test_a_removed_metric_fails_the_check_naming_it(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02()})
    lost = metrics_02()
    del lost["device_ops_per_call"]
    b = make_run(tmp_path / "b", {NB: lost})
    code, out = run_compare(capsys, a, b)
    assert code == 4 and f"MISSING B: {NB}/device_ops_per_call" in out
    assert run_compare(capsys, a, b, "--allow-missing", f"{NB}/device_ops_per_call")[0] == 0


def test_a_renamed_metric_is_paired_by_its_record_and_still_judged(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(1000.0)})
    renamed = metrics_02(1500.0)
    renamed["naive_us"] = renamed.pop("time_per_call_us")
    code, out = run_compare(capsys, a, make_run(tmp_path / "b", {NB: renamed}))
    assert code == 1 and "time_per_call_us -> naive_us" in out and "renamed naive_us in B" in out
    assert "MISSING" not in out


def test_a_notebook_whose_kernel_died_fails_the_check(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(), "05_compare_variants": {"x_us": timing(5.0, of="copy 8x8 float32")}})
    died = {NB: {"status": "failed", "error": "DeadKernelError: Kernel died"}, "05_compare_variants": {"status": "passed"}}
    b = make_run(tmp_path / "b", {"05_compare_variants": {"x_us": timing(5.0, of="copy 8x8 float32")}}, statuses=died)
    code, out = run_compare(capsys, a, b)
    assert code == 4 and f"B: notebook {NB} failed (DeadKernelError: Kernel died)" in out
    assert "0 regression(s)" in out and "1 missing" in out  # the notebook, not each of its metrics
    assert run_compare(capsys, a, b, "--allow-missing", "02")[0] == 0


def test_a_run_of_fewer_notebooks_fails_the_check(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(), "00_environment_check": {"backend": {"value": "cpu", "unit": "name"}}})
    b = make_run(tmp_path / "b", {NB: metrics_02()})
    code, out = run_compare(capsys, a, b)
    assert code == 4 and "B: notebook 00_environment_check did not run (A ran it)" in out


def test_the_suggested_allow_missing_is_accepted(tmp_path, capsys):
    """Every printed fix is one the tool takes: the fix line's options, passed back, make it pass."""
    a = make_run(tmp_path / "a", {NB: metrics_02(), "00_environment_check": {"backend": {"value": "cpu", "unit": "name"}}})
    lost = metrics_02()
    del lost["device_ops_per_call"]
    b = make_run(tmp_path / "b", {NB: lost}, incomplete=True)
    code, out = run_compare(capsys, a, b)
    assert code == 4
    (fix,) = [line for line in out.splitlines() if "fix: re-run what is missing" in line]
    options = shlex.split(fix.split("missing: ", 1)[1])
    assert options.count("--allow-missing") == 3, fix  # the notebook, the metric, and INCOMPLETE (all B's notebooks passed)
    assert run_compare(capsys, a, b, *options)[0] == 0


def test_an_incomplete_run_without_a_notebook_to_name_fails(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02()})
    b = make_run(tmp_path / "b", {NB: metrics_02()}, incomplete=True)
    code, out = run_compare(capsys, a, b)
    assert code == 4 and "is marked INCOMPLETE" in out
    assert run_compare(capsys, a, b, "--allow-missing", "INCOMPLETE")[0] == 0


# --- compare: the good cases stay good ------------------------------------------------------------------


def test_the_same_figures_pass_and_a_slowdown_is_still_a_regression(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(1000.0)})
    assert run_compare(capsys, a, make_run(tmp_path / "same", {NB: metrics_02(1010.0)}))[0] == 0
    code, out = run_compare(capsys, a, make_run(tmp_path / "slow", {NB: metrics_02(1500.0)}))
    assert code == 1 and f"{NB}/time_per_call_us" in out.splitlines()[-1]


def test_a_busy_or_crowded_timing_is_never_a_regression(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02(1000.0)})
    busy = metrics_02(1500.0)
    busy["time_per_call_us"]["contention"] = {"busy": True, "seen": "load 3.1 on 2 cores"}
    code, out = run_compare(capsys, a, make_run(tmp_path / "busy", {NB: busy}))
    assert code == 0 and "busy" in out
    crowded = make_run(tmp_path / "crowded", {NB: metrics_02(1500.0)}, concurrent=["pid 4242 (run folder runs/x)"])
    code, out = run_compare(capsys, a, crowded)
    assert code == 0 and "another series run timing beside it: pid 4242" in out and "REGRESSION" not in out


def test_a_baseline_file_from_before_identities_still_compares(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"backend": "cpu", "notebooks": {NB: metrics_02(1000.0)}}))
    b = make_run(tmp_path / "b", {NB: metrics_02(2000.0)})
    code, out = run_compare(capsys, b, "--baseline", baseline)
    assert code == 1 and "records no parameters" in out


# --- the trace reader --------------------------------------------------------------------------------------


def write_trace(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


STEP = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1}
OP = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 10, "dur": 20, "pid": 1, "tid": 1}


@pytest.mark.parametrize("field", ["ts", "dur"])
def test_an_op_without_its_time_is_refused(tmp_path, field):
    """A cpu_op without ts or dur was counted at 0 (busy 62,237 us -> 0)."""
    op = {k: v for k, v in OP.items() if k != field}
    with pytest.raises(TraceFileError) as err:
        load_trace(write_trace(tmp_path / "t.json", [STEP, op]))
    assert f"'aten::add' has no '{field}'" in str(err.value) and "Fix: export the trace again" in str(err.value)


def test_a_memory_event_without_its_time_is_refused(tmp_path):
    memory = {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "args": {"Bytes": 1024, "Device Type": 0}}
    with pytest.raises(TraceFileError, match=r"\[memory\] instant event field"):
        load_trace(write_trace(tmp_path / "t.json", [STEP, OP, memory]))


def test_a_trace_written_twice_is_refused(tmp_path):
    """Every event twice doubled the ops per call (20 -> 40) and the bytes (403 -> 806 MB)."""
    recorded = RECORDED_DIR / "cuda_event_sync__event_sync_trace.json.gz"
    events = json.loads(gzip.decompress(recorded.read_bytes()))["traceEvents"]
    assert len(load_trace(recorded).events) > 0  # the recorded trace itself loads
    with pytest.raises(TraceFileError, match="duplicated complete events") as err:
        load_trace(write_trace(tmp_path / "twice.json", events + events))
    assert "Fix:" in str(err.value)


def test_zero_duration_ops_at_one_microsecond_are_not_duplicates(tmp_path):
    """The profiler's clock is in us: two short ops can share ts and dur 0 (data/recorded has 1,952 pairs)."""
    short = {**OP, "name": "aten::to", "dur": 0}
    trace = load_trace(write_trace(tmp_path / "t.json", [STEP, short, dict(short)]))
    assert (trace.events["name"] == "aten::to").sum() == 2


@pytest.mark.parametrize("events", [[], [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]])
def test_a_trace_with_nothing_timed_is_refused(tmp_path, events):
    with pytest.raises(TraceFileError, match="holds no complete"):
        load_trace(write_trace(tmp_path / "t.json", events))


def test_a_folder_is_not_a_trace_and_the_fix_names_the_file_in_it(tmp_path):
    write_trace(tmp_path / "naive.pt.trace.json", [STEP, OP])
    with pytest.raises(TraceFileError) as err:
        load_trace(tmp_path)
    fix = str(err.value).split("Fix: ")[1]
    assert "is a folder" in str(err.value)
    assert len(load_trace(fix.split("e.g. ")[1]).events) == 2  # the suggested file loads


@pytest.mark.parametrize("content", [b'{"traceEvents": [{"ph": "X", "na', b"\x1f\x8b\x08\x00garbage", b"not json at all"])
def test_cut_off_or_garbage_traces_stay_refused(tmp_path, content):
    (tmp_path / "t.json").write_bytes(content)
    with pytest.raises(TraceFileError):
        load_trace(tmp_path / "t.json")


# --- the main job, on a stand-in for papermill --------------------------------------------------------------


@pytest.fixture(autouse=True)
def own_run_registry(tmp_path, monkeypatch):
    """The runs here register in their own folder (run_series.REGISTRY_ENV), never beside real ones."""
    monkeypatch.setenv(run_series.REGISTRY_ENV, str(tmp_path / "registry"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where a fix's suggested --out lies
    (tmp_path / "tmp").mkdir()


@pytest.fixture
def series(tmp_path):
    """Three notebooks with the series' parameters cell; the stand-in executes them."""
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    for name in ("01_first", "02_second", "03_third"):
        tiny_notebook(nb_dir / f"{name}.ipynb", "pass")
    return nb_dir


def stand_in(monkeypatch, actions=None, during=None):
    """Replace papermill: a notebook 'passes' by writing its executed copy and its metrics;
    actions {stem: exception} raise instead; during(stem, run_dir) runs first."""

    def execute_notebook(source, executed, parameters, **_):
        if during:
            during(source.stem, Path(parameters["OUT_DIR"]))
        if actions and source.stem in actions:
            raise actions[source.stem]
        out = Path(parameters["OUT_DIR"]) / source.stem
        out.mkdir()
        value = 100.0 * (1 + parameters.get("SECONDS", 0))
        metrics = {"t_us": timing(value, of=f"{source.stem} 8x8 float32")}
        (out / "metrics.json").write_text(json.dumps({"backend": parameters["BACKEND"], "notebooks": {source.stem: metrics}}))
        nbformat.write(nbformat.v4.new_notebook(), executed)

    monkeypatch.setattr(execute, "execute_notebook", execute_notebook)


def run_main(series, out, *extra):
    return run_series.main(["--notebook-dir", str(series), "--out", str(out), "--backend", "cpu", "--no-html", *extra])


def only_run(out):
    (run,) = [p for p in Path(out).iterdir() if p.is_dir()]
    return run


def test_status_and_summary_are_written_after_each_notebook(series, tmp_path, monkeypatch, capsys):
    seen = {}

    def during(stem, run_dir):
        if stem == "02_second":
            seen["status"] = json.loads((run_dir / "status.json").read_text())
            seen["summary"] = (run_dir / "summary.md").read_text()

    stand_in(monkeypatch, during=during)
    assert run_main(series, tmp_path / "runs") == 0
    assert seen["status"]["status"] == "running" and [r["notebook"] for r in seen["status"]["notebooks"]] == ["01_first"]
    assert "| 01_first | passed |" in seen["summary"]


def test_an_interrupt_keeps_the_finished_notebooks_and_prints_one_line(series, tmp_path, monkeypatch, capsys):
    """Ctrl-C during 03 after 02 passed left "notebooks": [] and an empty summary table."""
    stand_in(monkeypatch, {"03_third": KeyboardInterrupt()})
    assert run_main(series, tmp_path / "runs") == 130
    run = only_run(tmp_path / "runs")
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "interrupted" and [r["notebook"] for r in status["notebooks"]] == ["01_first", "02_second"]
    assert set(json.loads((run / "metrics.json").read_text())["notebooks"]) == {"01_first", "02_second"}
    assert "| 02_second | passed |" in (run / "summary.md").read_text()
    assert (run / "INCOMPLETE").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"Interrupted: 2 of 3 notebooks finished and are recorded; {run} stays marked INCOMPLETE"]
    assert not execute._KERNEL_STDERR_QUIET.is_set()  # a later run in this process relays its kernels' stderr again


def enospc(path="x"):
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def test_a_full_disk_during_a_notebook_fails_the_run_with_one_line(series, tmp_path, monkeypatch, capsys):
    stand_in(monkeypatch, {"02_second": enospc()})
    assert run_main(series, tmp_path / "runs") == 1
    run = only_run(tmp_path / "runs")
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: cannot write to {run}: No space left on device (") and " free there)" in line
    assert (run / "INCOMPLETE").exists()
    assert [r["notebook"] for r in json.loads((run / "status.json").read_text())["notebooks"]] == ["01_first"]


def test_a_full_disk_while_writing_the_summary_fails_the_run(series, tmp_path, monkeypatch, capsys):
    """It ended PASSED, exit 0, with a 0-byte summary.png and no summary.md."""
    from series_tools import summary

    def full(path, data):
        raise OutputDirError(f"No space left on the device holding {path}", "free disk space") from enospc(path)

    stand_in(monkeypatch)
    monkeypatch.setattr(summary, "write_atomic", full)
    assert run_main(series, tmp_path / "runs") == 1
    run = only_run(tmp_path / "runs")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and str(run) in err[0]
    assert not (run / "summary.png").exists() and not (run / "summary.md").exists()
    assert (run / "INCOMPLETE").exists()


def test_a_failed_write_leaves_no_partial_file_under_its_final_name(tmp_path, monkeypatch):
    from helpers import outputs

    real = tempfile.NamedTemporaryFile

    class HalfWritten:
        def __init__(self, *args, **kwargs):
            self.fh = real(*args, **kwargs)
            self.name = self.fh.name

        def __enter__(self):
            return self

        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            raise enospc(self.name)

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(outputs.tempfile, "NamedTemporaryFile", HalfWritten)
    folder = tmp_path / "run"
    folder.mkdir()
    with pytest.raises(OutputDirError, match="No space left"):
        outputs.write_json(folder / "status.json", {"status": "passed"})
    assert list(folder.iterdir()) == []


def test_a_cut_off_executed_notebook_never_takes_the_final_name(tmp_path):
    final = tmp_path / "02_second.ipynb"
    partial = tmp_path / ".partial-02_second.ipynb"
    partial.write_text('{"cells": [{"cell_type": "co')  # papermill's save cut off by a full disk
    execute._keep_if_whole(partial, final)
    assert not final.exists() and not partial.exists()
    nbformat.write(nbformat.v4.new_notebook(), partial)  # a whole save (a failed cell's report)
    execute._keep_if_whole(partial, final)
    assert final.exists() and not partial.exists()


def test_the_run_records_every_parameter_and_compare_refuses_other_ones(series, tmp_path, monkeypatch, capsys):
    stand_in(monkeypatch)
    assert run_main(series, tmp_path / "a") == 0
    assert run_main(series, tmp_path / "b", "-p", "SECONDS", "3") == 0
    capsys.readouterr()
    a, b = only_run(tmp_path / "a"), only_run(tmp_path / "b")
    identity = json.loads((a / "metrics.json").read_text())["identity"]
    assert identity["parameters"]["01_first"] == {"SECONDS": 0} and identity["backend"] == "cpu"
    assert json.loads((b / "metrics.json").read_text())["identity"]["overridden"]["01_first"] == ["SECONDS"]
    code, out = run_compare(capsys, a, b)
    assert code == 3 and "not comparable (SECONDS 0 vs 3)" in out and "REGRESSION" not in out


# --- two runs at once ---------------------------------------------------------------------------------------------


@pytest.fixture
def other_run(tmp_path):
    """A live process registered as a series run (what run_series.register writes)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    while (cmdline := run_series._cmdline(proc.pid)) is not None and "time.sleep" not in cmdline:  # until it runs python
        time.sleep(0.01)
    registry = tmp_path / "registry"
    registry.mkdir()
    record = {"pid": proc.pid, "run_dir": "runs/20260101T000000Z-cpu", "started": "2026-01-01T00:00:00+00:00"}
    record["cmdline"] = run_series._cmdline(proc.pid)
    (registry / f"{proc.pid}.json").write_text(json.dumps(record))
    yield proc
    proc.kill()
    proc.wait()


def test_a_second_series_run_is_refused_naming_the_first(series, tmp_path, monkeypatch, capsys, other_run):
    stand_in(monkeypatch)
    assert run_main(series, tmp_path / "runs") == 2
    err = capsys.readouterr().err
    assert f"Another series run is timing on this machine: pid {other_run.pid}" in err and "--allow-concurrent" in err
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())


def test_a_run_beside_another_is_marked_busy_in_compare(series, tmp_path, monkeypatch, capsys, other_run):
    stand_in(monkeypatch)
    solo = make_run(tmp_path / "solo", {"01_first": {"t_us": timing(50.0, of="01_first 8x8 float32")}})
    assert run_main(series, tmp_path / "runs", "--notebooks", "01", "--allow-concurrent") == 0
    run = only_run(tmp_path / "runs")
    assert f"pid {other_run.pid}" in json.loads((run / "metrics.json").read_text())["identity"]["concurrent_runs"][0]
    capsys.readouterr()
    doc = json.loads((solo / "metrics.json").read_text())
    doc["identity"]["parameters"] = {"01_first": {"SECONDS": 0}}
    doc["identity"]["device"] = json.loads((run / "metrics.json").read_text())["identity"]["device"]  # this machine's CPU
    (solo / "metrics.json").write_text(json.dumps(doc))
    code, out = run_compare(capsys, solo, run)  # +100% beside another run: busy, not a regression
    assert code == 0 and "busy" in out and "REGRESSION" not in out


def test_a_run_that_started_beside_this_one_is_recorded_by_both(series, tmp_path, monkeypatch, capsys):
    def during(stem, run_dir):
        if stem == "01_first":  # another run starts with --allow-concurrent: it leaves this run a marker
            marker = tmp_path / "registry" / f"{os.getpid()}.seen-99999"
            marker.write_text(json.dumps({"pid": 99999, "run_dir": "runs/other", "started": "now"}))

    stand_in(monkeypatch, during=during)
    assert run_main(series, tmp_path / "runs") == 0
    identity = json.loads((only_run(tmp_path / "runs") / "metrics.json").read_text())["identity"]
    assert identity["concurrent_runs"] == ["pid 99999 (run folder runs/other, started now)"]
    assert not list((tmp_path / "registry").iterdir())  # unregistered, markers removed


def test_a_stale_registration_does_not_refuse(series, tmp_path, monkeypatch):
    stand_in(monkeypatch)
    registry = tmp_path / "registry"
    registry.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (registry / "x.json").write_text(json.dumps({"pid": int(dead.stdout), "run_dir": "gone"}))
    assert run_main(series, tmp_path / "runs", "--notebooks", "01") == 0
    assert not list(registry.iterdir())


# --- every printed fix is one the tool accepts ---------------------------------------------------------------


def suggested_options(err, flag, takes_value=True):
    """The first `flag VALUE` (or bare `flag`) the printed fix suggests, e.g. ['--backend', 'auto']."""
    fix = err.split("Fix: ", 1)[1] if "Fix: " in err else err
    if not takes_value:
        assert re.search(rf"{flag}(?=[\s),;:]|$)", fix), f"no {flag} in the fix: {err}"
        return [flag]
    value = re.search(rf"{flag} ([\w./-]+)(?=[\s),;:]|$)", fix)
    assert value, f"no {flag} VALUE in the fix: {err}"
    return [flag, value.group(1)]


def check_accepted(series, out, *options):
    return run_series.main(["--notebook-dir", str(series), "--out", str(out), "--backend", "cpu", *options, "--check"])


def test_the_backend_fix_is_a_backend_flag_run_series_takes(series, tmp_path, capsys):
    assert run_series.main(["--notebook-dir", str(series), "--backend", "tpu", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "-p BACKEND" not in err and "--backend auto|neuron|cuda|cpu" in err
    options = suggested_options(err, "--backend")
    assert run_series.main(["--notebook-dir", str(series), "--out", str(tmp_path / "r"), *options, "--check"]) == 0


def test_an_unavailable_backend_suggests_one_that_runs(series, tmp_path, capsys):
    from helpers.backend import neuron_status

    if neuron_status()[0]:
        pytest.skip("neuron runs here: no unavailable backend to ask for")
    assert run_series.main(["--notebook-dir", str(series), "--backend", "neuron", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    options = suggested_options(err, "--backend")
    assert options == ["--backend", "cpu"] and "BACKEND=" not in err
    assert run_series.main(["--notebook-dir", str(series), "--out", str(tmp_path / "r"), *options, "--check"]) == 0


def test_an_unwritable_out_suggests_an_out_that_works(series, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert check_accepted(series, blocker / "runs") == 2
    err = capsys.readouterr().err
    assert "OUT_DIR" not in err
    options = suggested_options(err, "--out")
    assert run_series.main(["--notebook-dir", str(series), "--backend", "cpu", *options, "--check"]) == 0


def test_the_disk_full_fix_is_an_out_run_series_takes(series, tmp_path, monkeypatch, capsys):
    stand_in(monkeypatch, {"01_first": enospc()})
    assert run_main(series, tmp_path / "runs") == 1
    options = suggested_options(capsys.readouterr().err, "--out")
    assert run_series.main(["--notebook-dir", str(series), "--backend", "cpu", *options, "--check"]) == 0


def test_the_concurrency_fix_is_accepted(series, tmp_path, capsys, other_run):
    assert check_accepted(series, tmp_path / "runs") == 2
    options = suggested_options(capsys.readouterr().err, "--allow-concurrent", takes_value=False)
    assert check_accepted(series, tmp_path / "runs", *options) == 0


def test_publish_names_a_partial_run_as_one(tmp_path, capsys):
    from series_tools import publish

    run = tmp_path / "runs" / "20260101T000000Z-cpu"
    run.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), run / "00_environment_check.ipynb")
    (run / "status.json").write_text(json.dumps({"status": "passed", "notebooks": [{"notebook": "00_environment_check"}]}))
    (run / "environment.json").write_text(json.dumps({"backend": "cpu"}))
    (run / "metrics.json").write_text(json.dumps({"backend": "cpu", "notebooks": {}}))
    assert publish.main([str(run), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "is a partial run: it did not run 01_" in err and "added since it ran" not in err
    assert "without --notebooks" in err


# --- the good cases of the main job stay good -------------------------------------------------------------------


def test_a_clean_run_passes_and_keeps_no_marker_or_temporary_file(series, tmp_path, monkeypatch):
    stand_in(monkeypatch)
    assert run_main(series, tmp_path / "runs") == 0
    run = only_run(tmp_path / "runs")
    assert not (run / "INCOMPLETE").exists() and json.loads((run / "status.json").read_text())["status"] == "passed"
    assert not [p.name for p in run.rglob(".*")], "a temporary file was left behind"
    assert (run / "summary.png").stat().st_size > 1000


def test_a_failing_notebook_still_fails_the_run_and_the_others_run(series, tmp_path, monkeypatch):
    stand_in(monkeypatch, {"02_second": RuntimeError("kernel died")})
    assert run_main(series, tmp_path / "runs") == 1
    status = json.loads((only_run(tmp_path / "runs") / "status.json").read_text())
    assert [r["status"] for r in status["notebooks"]] == ["passed", "failed", "passed"]


def test_bad_parameters_are_refused_before_anything_starts(series, tmp_path, capsys):
    assert run_main(series, tmp_path / "runs", "-p", "NOPE", "1") == 2
    assert "No selected notebook declares a parameter 'NOPE'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_compare_refuses_a_folder_that_is_not_a_run(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    assert run_compare(capsys, tmp_path / "x", tmp_path / "x")[0] == 2


def test_a_recorded_trace_still_loads():
    trace = load_trace(RECORDED_DIR / "trace_filter__sampled_rank-0.json.gz")
    assert len(trace.steps) > 0 and len(trace.events) > 1000


def test_an_unwritable_registry_warns_and_the_run_goes_on(series, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv(run_series.REGISTRY_ENV, str(blocker / "registry"))
    stand_in(monkeypatch)
    assert run_main(series, tmp_path / "runs", "--notebooks", "01") == 0
    assert "warning: cannot register this run" in capsys.readouterr().err


# --- unclear cases found by our own sweep -----------------------------------------------------------------
# Each tried as a user would, each was a traceback, a usage block without a fix, a fix the tool then
# refused, a misleading message, or nothing at all (/work/helper-notes/issue42-sweep.md lists them).


def one_line_error(capsys, call):
    """Run `call` (a tool's main, which may exit as argparse does); return (status, its stderr),
    asserting the stderr is one line that names a fix."""
    try:
        code = call()
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Fix: " in err and "Traceback" not in err, err
    return code, err


def test_a_parameter_without_its_value_is_one_line_naming_the_option(series, tmp_path, capsys):
    code, err = one_line_error(capsys, lambda: check_accepted(series, tmp_path / "runs", "-p", "SECONDS"))
    assert code == 2 and "expected 2 arguments" in err and "Fix: pass --parameter NAME VALUE" in err
    assert check_accepted(series, tmp_path / "runs", "--parameter", "SECONDS", "1") == 0


def test_notebooks_without_a_name_is_one_line_naming_the_option(series, tmp_path, capsys):
    code, err = one_line_error(capsys, lambda: check_accepted(series, tmp_path / "runs", "--notebooks"))
    assert code == 2 and "Fix: pass --notebooks NAME" in err
    assert check_accepted(series, tmp_path / "runs", "--notebooks", "01") == 0


def test_a_run_folder_given_as_out_is_refused_naming_its_parent(series, tmp_path, monkeypatch, capsys):
    """Before: accepted, and the new run was nested inside the old one, where compare and publish never look."""
    stand_in(monkeypatch)
    assert run_main(series, tmp_path / "runs", "--notebooks", "01") == 0
    capsys.readouterr()
    run = only_run(tmp_path / "runs")
    assert check_accepted(series, run) == 2
    err = capsys.readouterr().err
    assert f"--out {run} is a run folder" in err
    options = suggested_options(err, "--out")
    assert options == ["--out", str(tmp_path / "runs")]
    assert run_series.main(["--notebook-dir", str(series), "--backend", "cpu", *options, "--check"]) == 0


def test_a_notebook_given_as_a_path_is_taken_or_its_folder_named(series, tmp_path, capsys):
    """Before: `--notebooks notebooks/02_x.ipynb` was 'No notebook named ...' though the file exists."""
    assert check_accepted(series, tmp_path / "runs", "--notebooks", str(series / "02_second.ipynb")) == 0
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    tiny_notebook(elsewhere / "01_mine.ipynb", "pass")
    assert check_accepted(series, tmp_path / "runs", "--notebooks", str(elsewhere / "01_mine.ipynb")) == 2
    fix = capsys.readouterr().err.split("Fix: pass ", 1)[1].strip()
    assert fix == f"--notebook-dir {elsewhere} --notebooks 01_mine"
    argv = ["--out", str(tmp_path / "runs"), "--backend", "cpu", *shlex.split(fix), "--check"]
    assert run_series.main(argv) == 0


def test_compare_of_a_run_with_itself_is_refused(tmp_path, capsys):
    """Before: exit 0, every row 'ok': a check that cannot fail (also through the run's own metrics.json)."""
    a = make_run(tmp_path / "a", {NB: metrics_02()})
    b = make_run(tmp_path / "b", {NB: metrics_02()})
    for argv in ((a, a), (a / "metrics.json", a), (a, "--baseline", a / "metrics.json")):
        code, out = run_compare(capsys, *argv)
        assert code == 2 and "A and B are the same run" in out, argv
    assert run_compare(capsys, a, b)[0] == 0  # the fix: two different runs


def test_an_allow_missing_that_names_nothing_is_said_with_the_close_name(tmp_path, capsys):
    """Before: a typo in --allow-missing allowed nothing without a word, and the check failed on what it meant to allow."""
    a = make_run(tmp_path / "a", {NB: metrics_02()})
    lost = metrics_02()
    del lost["device_ops_per_call"]
    b = make_run(tmp_path / "b", {NB: lost})
    code, out = run_compare(capsys, a, b, "--allow-missing", f"{NB}/device_ops_per_cal")
    assert code == 4
    (line,) = [s for s in out.splitlines() if s.startswith("warning: --allow-missing")]
    assert f"{NB}/device_ops_per_cal names no notebook or metric" in line
    options = suggested_options(line, "--allow-missing")
    assert options == ["--allow-missing", f"{NB}/device_ops_per_call"]
    code, out = run_compare(capsys, a, b, *options)
    assert code == 0 and "warning" not in out


def test_compare_tolerance_in_percent_is_one_line_naming_the_option(tmp_path, capsys):
    a = make_run(tmp_path / "a", {NB: metrics_02()})
    b = make_run(tmp_path / "b", {NB: metrics_02()})
    code, err = one_line_error(capsys, lambda: compare.main([str(a), str(b), "--tolerance", "10%"]))
    assert code == 2 and "invalid float value: '10%'" in err and "Fix: pass --tolerance TOLERANCE" in err
    assert run_compare(capsys, a, b, "--tolerance", "0.10")[0] == 0


def test_compare_without_runs_is_one_line_and_make_compare_says_what_it_needs(tmp_path, capsys):
    code, err = one_line_error(capsys, lambda: compare.main([]))
    assert code == 2 and "Fix: pass runs [runs ...] (RUN_A RUN_B" in err
    root = Path(__file__).resolve().parent.parent
    made = subprocess.run(["make", "-s", "compare"], cwd=root, capture_output=True, text=True, timeout=60)
    assert made.returncode != 0 and made.stdout.splitlines()[0].startswith("make compare needs ARGS, e.g. make compare ARGS=")
    assert "usage:" not in made.stdout + made.stderr
    a = make_run(tmp_path / "a", {NB: metrics_02()})
    b = make_run(tmp_path / "b", {NB: metrics_02()})
    fixed = subprocess.run(["make", "-s", "compare", f"ARGS={a} {b}"], cwd=root, capture_output=True, text=True, timeout=120)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


WORKSHOP = ["--instance", "trn2.48xlarge"]  # documented figures: plans without reading this host, writes no hub


@pytest.mark.parametrize(
    "bad, fixed",
    [
        (["--seats", "0"], ["--seats", "1"]),  # before: "Fix: `--seats 0`", which it refused again
        (["--seats", "-3"], ["--seats", "1"]),
        (["--seats", "2", "--cores-per-seat", "0"], ["--seats", "2", "--cores-per-seat", "1"]),  # before: ZeroDivisionError
        (["--seats", "2", "--memory-per-seat-gib", "-1"], ["--seats", "2", "--memory-per-seat-gib", "3"]),  # "--seats 0"
    ],
)
def test_workshop_numbers_out_of_range_name_a_value_it_takes(capsys, bad, fixed):
    from series_tools import workshop

    code, err = one_line_error(capsys, lambda: workshop.main([*bad, *WORKSHOP]))
    assert code == 2
    flag = fixed[-2]
    assert suggested_options(err.replace("`", " "), flag) == fixed[-2:]
    assert workshop.main([*fixed, *WORKSHOP]) == 0


def test_workshop_seats_not_a_number_is_one_line(capsys):
    from series_tools import workshop

    code, err = one_line_error(capsys, lambda: workshop.main(["--seats", "many", *WORKSHOP]))
    assert code == 2 and "invalid int value: 'many'" in err and "Fix: pass --seats SEATS" in err


def test_workshop_a_host_that_holds_no_seat_suggests_no_zero_seats(capsys):
    from series_tools import workshop

    code, err = one_line_error(
        capsys, lambda: workshop.main(["--seats", "2", "--cores-per-seat", "64", "--instance", "trn2.3xlarge"])
    )
    assert code == 2 and "--seats 0" not in err and "a larger host" in err


class StopBeforeTiming(Exception):
    """The sweep's stand-in timing: reaching it means every option was accepted."""


@pytest.fixture
def sweep_reaches_timing(monkeypatch):
    from series_tools import sweep

    def run_sweep(*_args, **_kwargs):
        raise StopBeforeTiming

    monkeypatch.setattr(sweep, "run_sweep", run_sweep)
    return sweep


@pytest.mark.parametrize(
    "bad, flag",
    [
        (["--tokens", "0"], "--tokens"),
        (["--repeats", "1"], "--repeats"),
        (["--dtype", "float99"], "--dtype"),
        (["--backend", "tpu"], "--backend"),
    ],
)
def test_the_sweep_names_its_own_flags_in_its_fix(sweep_reaches_timing, tmp_path, capsys, bad, flag):
    """Before: `Fix: e.g. -p TOKENS 4`, an option of run_series that the sweep refuses."""
    sweep = sweep_reaches_timing
    base = ["--tokens", "8", "--hidden", "8", "--backend", "cpu", "--out", str(tmp_path / "sw")]
    assert sweep.main([*base, *bad]) == 2
    err = capsys.readouterr().err
    assert "-p " not in err and "TOKENS" not in err and "BACKEND" not in err
    options = suggested_options(err.replace("`", " "), flag)
    with pytest.raises(StopBeforeTiming):
        sweep.main([*base, *options])


def test_the_sweep_refuses_an_unwritable_out_before_timing(sweep_reaches_timing, tmp_path, capsys):
    """Before: the sweep timed every point, then failed to write, suggesting `-p OUT_DIR`."""
    sweep = sweep_reaches_timing
    blocker = tmp_path / "file"
    blocker.write_text("x")
    base = ["--tokens", "8", "--hidden", "8", "--backend", "cpu"]
    assert sweep.main([*base, "--out", str(blocker)]) == 2  # run_sweep was not reached
    err = capsys.readouterr().err
    assert "OUT_DIR" not in err
    with pytest.raises(StopBeforeTiming):
        sweep.main([*base, *suggested_options(err.replace("`", " "), "--out")])


def test_student_out_that_cannot_be_written_is_one_line(tmp_path, capsys):
    """Before: a 25-line traceback ending in a fix about OUT_DIR."""
    from series_tools import student

    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert student.main(["--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "OUT_DIR" not in err
    assert suggested_options(err, "--out")[0] == "--out"
    assert student.main(["--out", str(tmp_path / "student")]) == 0


def test_student_out_into_the_notebooks_folder_is_refused(capsys):
    """Before: silently replaced the series' notebooks by their copies without solutions."""
    from helpers.series import NOTEBOOK_DIR
    from series_tools import student

    before = {p.name: p.read_bytes() for p in NOTEBOOK_DIR.glob("*.ipynb")}
    assert student.main(["--out", str(NOTEBOOK_DIR)]) == 2
    assert "is the series' notebooks folder" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in NOTEBOOK_DIR.glob("*.ipynb")} == before


def test_a_trace_of_another_tracer_says_so(tmp_path):
    """Before: 'nothing was timed; profile at least one step', although every event was timed (as B/E pairs)."""
    path = tmp_path / "chrome.json"
    events = [{"name": "f", "ph": ph, "ts": ts, "pid": 1, "tid": 1} for ph, ts in (("B", 1), ("E", 5))]
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(TraceFileError) as err:
        load_trace(path)
    assert "2 begin/end (ph B/E) events" in str(err.value) and "another tracer than torch.profiler" in str(err.value)
    assert "profile at least one step" not in str(err.value)


def test_a_profile_file_given_for_its_folder_names_the_folder(tmp_path):
    """Before: 'profile folder does not exist' with the fixes for an empty profile, for an NTFF that exists."""
    from analysis.neuron_profile import find_neuron_artifacts

    ntff = tmp_path / "profile" / "x.ntff"
    ntff.parent.mkdir()
    ntff.write_bytes(b"x")
    (problem,) = find_neuron_artifacts(ntff).problems
    assert problem.sign == "x.ntff is a file, not a profile folder" and str(ntff.parent) in problem.fix
    signs = [p.sign for p in find_neuron_artifacts(ntff.parent).problems]
    assert signs and not any("is a file" in s or "does not exist" in s for s in signs)


@pytest.mark.parametrize("tool", ["run_series", "compare", "publish", "sweep", "student", "workshop", "verify_neuron"])
def test_an_unknown_option_is_one_line_and_its_fix_is_accepted(tool, capsys):
    """Before: argparse's usage block (5 to 12 lines) and no fix, for each tool."""
    import importlib

    main = importlib.import_module(f"series_tools.{tool}").main
    required = {"compare": ["runs/A", "runs/B"], "workshop": ["--seats", "1"]}.get(tool, [])
    code, err = one_line_error(capsys, lambda: main([*required, "--no-such-option"]))
    assert code == 2 and "unrecognized arguments: --no-such-option" in err
    assert err.endswith(f"Fix: see `python -m series_tools.{tool} --help`")
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
