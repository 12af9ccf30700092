"""The main job: notebook selection, parameter overrides, failures, interruptions, run folders."""

import json
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest

from helpers import outputs
from series_tools import run_series
from helpers.errors import ParameterError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def own_run_registry(tmp_path, monkeypatch):
    """Runs here register in their own folder: a series running elsewhere on this machine (another
    test session, a `make run`) must not refuse them, nor they it."""
    monkeypatch.setenv(run_series.REGISTRY_ENV, str(tmp_path / "registry"))


def test_select_by_number_and_name():
    assert [p.stem for p in run_series.select_notebooks(["02"])] == ["02_naive_rmsnorm"]
    assert [p.stem for p in run_series.select_notebooks(["01_profiler_setup", "00"])] == [
        "01_profiler_setup",
        "00_environment_check",
    ]


def test_unknown_notebook_lists_the_choices():
    with pytest.raises(ParameterError) as err:
        run_series.select_notebooks(["99_nope"])
    assert "No notebook named '99_nope'" in str(err.value) and "02_naive_rmsnorm" in str(err.value)


def test_undeclared_parameter_is_refused():
    nbs = run_series.select_notebooks(["00"])
    with pytest.raises(ParameterError, match="No selected notebook declares a parameter 'HIDDEN'"):
        run_series.check_overrides({"HIDDEN": 8}, nbs)


def test_malformed_value_is_refused_before_running():
    nbs = run_series.select_notebooks(["02"])
    with pytest.raises(ParameterError, match="HIDDEN must be an integer >= 1, got 'abc'"):
        run_series.check_overrides({"HIDDEN": run_series.parse_value("abc")}, nbs)


def test_overrides_go_only_where_declared():
    nbs = run_series.select_notebooks(["00", "02"])
    per = run_series.check_overrides({"HIDDEN": 256}, nbs)
    assert per[nbs[0]] == {} and per[nbs[1]] == {"HIDDEN": 256}


def test_backend_cannot_be_overridden_with_p():
    with pytest.raises(ParameterError, match="use --backend"):
        run_series.check_overrides({"BACKEND": "cpu"}, run_series.select_notebooks(["00"]))


@pytest.mark.parametrize(
    "text, value", [("4096", 4096), ("1e-6", 1e-6), ("True", True), ("false", False), ("None", None), ("abc", "abc")]
)
def test_parse_value(text, value):
    assert run_series.parse_value(text) == value


def test_bad_cli_input_exits_2_with_message(capsys, tmp_path):
    assert run_series.main(["--notebooks", "nope", "--out", str(tmp_path)]) == 2
    assert "No notebook named 'nope'" in capsys.readouterr().err
    assert run_series.main(["--notebooks", "02", "-p", "HIDDEN", "abc", "--out", str(tmp_path)]) == 2
    assert "HIDDEN must be an integer" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing was started


def test_runs_started_in_the_same_second_get_distinct_folders(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "utc_stamp", lambda: "20260101T000000Z")
    made = [outputs.new_run_dir(tmp_path, "cpu") for _ in range(3)]
    assert [p.name for p in made] == ["20260101T000000Z-cpu", "20260101T000000Z-cpu-2", "20260101T000000Z-cpu-3"]


def _make_dir(parent):
    return str(outputs.new_run_dir(parent, "cpu"))


def test_parallel_processes_get_distinct_folders(tmp_path):
    import multiprocessing

    # forked: the workers need only helpers.outputs, not a fresh interpreter that re-imports the test module (9 s)
    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("fork")) as pool:
        made = list(pool.map(_make_dir, [tmp_path] * 8))
    assert len(set(made)) == 8


def tiny_notebook(path, body, solution=None):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('BACKEND = "auto"\nOUT_DIR = ""\nSECONDS = 0')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    if solution:
        nb.cells.append(nbformat.v4.new_code_cell(solution, metadata={"tags": ["solution"]}))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


OK_BODY = """import json, pathlib, time
if SECONDS:  # tells a test that the kernel is now inside the sleep
    (pathlib.Path(OUT_DIR) / "sleeping").write_text("")
time.sleep(SECONDS)
d = pathlib.Path(OUT_DIR) / "01_ok"; d.mkdir(parents=True, exist_ok=True)
(d / "metrics.json").write_text(json.dumps({"backend": BACKEND,
    "notebooks": {"01_ok": {"answer": {"value": 42, "unit": "count"}}}}))"""


@pytest.fixture
def tiny_series(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    tiny_notebook(nb_dir / "01_ok.ipynb", OK_BODY, solution="# Exercise 1: the answer\nprint('the answer is printed here')")
    tiny_notebook(nb_dir / "02_fails.ipynb", "x = 1\nraise ValueError('broken on purpose')")
    tiny_notebook(nb_dir / "03_ok_too.ipynb", "y = 2")
    return nb_dir


def test_failing_notebook_is_reported_and_others_still_run(tiny_series, tmp_path, capsys):
    code = run_series.main(["--notebook-dir", str(tiny_series), "--out", str(tmp_path / "runs"), "--backend", "cpu", "--no-html"])
    assert code == 1
    (run,) = (tmp_path / "runs").iterdir()
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "failed"
    by_name = {r["notebook"]: r for r in status["notebooks"]}
    assert by_name["01_ok"]["status"] == "passed" and by_name["03_ok_too"]["status"] == "passed"
    assert by_name["02_fails"]["status"] == "failed"
    # In[3]: the parameters cell, papermill's injected-parameters cell, then the failing cell
    assert by_name["02_fails"]["cell"] == 3 and "ValueError: broken on purpose" in by_name["02_fails"]["error"]
    assert (run / "INCOMPLETE").exists()
    merged = json.loads((run / "metrics.json").read_text())  # the same layout as a notebook's file
    assert merged["backend"] == "cpu" and merged["notebooks"]["01_ok"]["answer"]["value"] == 42
    assert "02_fails" in (run / "summary.md").read_text()
    assert "FAILED in cell In[3]: ValueError: broken on purpose" in capsys.readouterr().out


def test_passing_run_has_no_incomplete_marker_and_records_environment(tiny_series, tmp_path):
    code = run_series.main(
        ["--notebook-dir", str(tiny_series), "--notebooks", "01", "03", "--out", str(tmp_path / "runs"), "--backend", "cpu"]
    )
    assert code == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert not (run / "INCOMPLETE").exists()
    env = json.loads((run / "environment.json").read_text())
    for key in (
        "python",
        "torch",
        "torch_neuronx",
        "neuronx_cc",
        "backend",
        "device_name",
        "instance_type",
        "git_commit",
        "date_utc",
    ):
        assert key in env
    from series_tools.execute import kernel_address_layout  # the kernels', not this process's

    assert env["address_layout"] == kernel_address_layout() and env["address_layout"] in ("fixed", "randomized")
    html = (run / "01_ok.html").read_text()
    assert "Measured on this run" in html and "torch" in html  # handout header
    student = (run / "01_ok.student.html").read_text()  # the learners' handout: no solutions
    assert "Measured on this run" in student and "your answer here" in student
    assert "the answer is printed here" in html and "the answer is printed here" not in student
    assert (run / "summary.png").stat().st_size > 1000


def test_interrupted_run_stays_incomplete_and_earlier_runs_are_intact(tiny_series, tmp_path):
    runs = tmp_path / "runs"
    assert (
        run_series.main(
            ["--notebook-dir", str(tiny_series), "--notebooks", "03", "--out", str(runs), "--backend", "cpu", "--no-html"]
        )
        == 0
    )
    (earlier,) = runs.iterdir()
    before = {p.name: p.read_bytes() for p in earlier.iterdir() if p.is_file()}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "series_tools.run_series",
            "--notebook-dir",
            str(tiny_series),
            "--notebooks",
            "01",
            "-p",
            "SECONDS",
            "60",
            "--out",
            str(runs),
            "--backend",
            "cpu",
            "--no-html",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not list(runs.glob("*/sleeping")):
        time.sleep(0.1)
    assert list(runs.glob("*/sleeping")), "the kernel did not reach its time.sleep(60) within 60 s"
    time.sleep(0.2)  # from writing the marker to inside time.sleep
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "without encryption" not in err  # the kernel's connection is encrypted (series_tools/execute.py)
    later = [p for p in runs.iterdir() if p != earlier]
    assert len(later) == 1 and (later[0] / "INCOMPLETE").exists()
    assert json.loads((later[0] / "status.json").read_text())["status"] == "interrupted"
    assert {p.name: p.read_bytes() for p in earlier.iterdir() if p.is_file()} == before
    # a new run starts clean, in its own folder
    assert (
        run_series.main(
            ["--notebook-dir", str(tiny_series), "--notebooks", "03", "--out", str(runs), "--backend", "cpu", "--no-html"]
        )
        == 0
    )
    assert len(list(runs.iterdir())) == 3


def test_unwritable_output_folder(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert run_series.main(["--notebooks", "00", "--out", str(blocker / "runs")]) == 2
    err = capsys.readouterr().err
    assert "Cannot write to" in err and "--out " in err and "OUT_DIR" not in err


def test_kernels_start_with_a_fixed_address_layout_and_the_record_says_so():
    """series_tools/execute.py starts kernels under `setarch -R`: the same layout in every run."""
    from series_tools.execute import fixed_layout_prefix

    prefix = fixed_layout_prefix()
    if not prefix:
        pytest.skip("setarch is missing or refused here: kernels start with the system's layout")
    probe = [sys.executable, "-c", "from analysis.host import address_layout; print(address_layout())"]
    fixed = subprocess.run([*prefix, *probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    plain = subprocess.run(probe, cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert fixed == ["fixed"]
    from analysis.host import address_layout

    assert plain == [address_layout()]  # without the prefix a child keeps this process's layout
    assert address_layout() in ("fixed", "randomized")


@pytest.mark.parametrize(
    ("backend", "shutdown"), [("cpu", "immediate"), ("cuda", "immediate"), ("neuron", "graceful"), (None, "graceful")]
)
def test_a_finished_kernel_is_stopped_at_once_except_on_neuron(tmp_path, monkeypatch, backend, shutdown):
    """execute_notebook stops a cpu or cuda kernel at once when its notebook ends (0.6 s a notebook
    saved), and leaves a neuron kernel, or one whose backend is not named, to exit by itself."""
    from series_tools import execute

    seen = {}
    monkeypatch.setattr(execute.pm, "execute_notebook", lambda *args, **kw: seen.update(kw))
    params = {"BACKEND": backend} if backend else {}
    execute.execute_notebook(tmp_path / "a.ipynb", tmp_path / "b.ipynb", params, cwd=tmp_path)
    assert seen["shutdown_kernel"] == shutdown


def test_handouts_render_after_the_notebooks_and_a_failed_write_stops_the_run(tmp_path, monkeypatch):
    import errno

    from series_tools import handouts

    for stem in ("01_a", "02_b"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {stem}")])
        nbformat.write(nb, tmp_path / f"{stem}.ipynb")
    results = [{"notebook": "01_a"}, {"notebook": "02_b"}, {"notebook": "03_never_ran"}]
    run_series.render_all_html(tmp_path, results)
    assert [r.get("html") for r in results] == ["01_a.html", "02_b.html", None]
    assert (tmp_path / "02_b.student.html").stat().st_size > 0

    def full_disk(executed):  # a cut-off file under the final name, then the write fails
        executed.with_suffix(".html").write_text("<html")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(handouts, "render_handout", full_disk)  # the pool forks: its workers see the patch
    with pytest.raises(run_series.WriteFailure, match="No space left on device"):
        run_series.render_all_html(tmp_path, [{"notebook": "01_a"}])
    assert not (tmp_path / "01_a.html").exists()
