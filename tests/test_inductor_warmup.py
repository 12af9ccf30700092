"""Inductor's CPU checks prepared for a run (series_tools/inductor_warmup.py): when, where they are kept, and what
the run's summary says. The real build (about 12 s of compiles) is tested in tests/faults_slow.py."""

import json
import subprocess

import nbformat
import pytest

from series_tools import execute, inductor_warmup, run_series
from series_tools.summary import write_summary

SERIES = ["00_environment_check", "01_profiler_setup", "04_torch_compile"]


@pytest.mark.parametrize(
    "stems, backend, expected",
    [
        (SERIES, "cpu", True),
        (SERIES, "cuda", False),  # Inductor's CPU checks serve cpu compiles only
        (["00_environment_check", "02_naive_rmsnorm"], "cpu", False),  # nothing compiles
        (["00_first", "04_second"], "cpu", False),  # not the series' notebooks
    ],
)
def test_the_checks_are_prepared_only_where_a_notebook_compiles_on_cpu(stems, backend, expected):
    assert inductor_warmup.wanted(stems, backend) is expected


def test_the_run_prepares_the_checks_before_its_first_notebook(tmp_path, monkeypatch, capsys):
    ran = []

    def execute_notebook(source, executed, parameters, **_):
        ran.append(source.stem)
        nbformat.write(nbformat.v4.new_notebook(), executed)

    monkeypatch.setattr(execute, "execute_notebook", execute_notebook)
    monkeypatch.setattr(run_series, "prepare_inductor_checks", lambda run_dir, version: ran.append("checks") or "checks line")
    run_series.run([tmp_path / f"{s}.ipynb" for s in SERIES], {}, tmp_path, "cpu", html=False)
    assert ran == ["checks", *SERIES] and "checks line" in capsys.readouterr().out
    ran.clear()
    run_series.run([tmp_path / f"{s}.ipynb" for s in SERIES], {}, tmp_path, "cuda", html=False)
    assert ran == SERIES


def _fake_build(monkeypatch, returncode=0, stderr=""):
    """Stands in for the checks' process: it writes what the real one writes into its folder."""
    calls = []

    def fake_run(command, env, **_):
        folder = inductor_warmup.Path(env["TORCHINDUCTOR_CACHE_DIR"])
        calls.append(folder)
        if returncode == 0:
            (folder / "ab").mkdir(parents=True, exist_ok=True)
            (folder / "ab" / "key.so").write_text("built")
            (folder / "locks").mkdir(exist_ok=True)
            (folder / inductor_warmup.RECORD).write_text(json.dumps({"vector_isa": "avx512"}))
        return subprocess.CompletedProcess(command, returncode, "", stderr)

    monkeypatch.setattr(inductor_warmup.subprocess, "run", fake_run)
    return calls


def test_built_once_per_machine_then_copied_into_each_run(tmp_path, monkeypatch):
    calls = _fake_build(monkeypatch)
    first, second = tmp_path / "runs" / "r1", tmp_path / "runs" / "r2"
    assert inductor_warmup.prepare(first, "2.13.0", "cafe0001").startswith("Inductor's CPU checks: built")
    assert inductor_warmup.prepare(second, "2.13.0", "cafe0001").startswith("Inductor's CPU checks: copied from")
    assert calls == [tmp_path / "runs" / ".inductor-checks" / "torch-2.13.0-cafe0001"]  # built once, then only copied
    for run in (first, second):
        cache = inductor_warmup.cache_dir(run)
        assert (cache / "ab" / "key.so").read_text() == "built" and (
            cache / "locks"
        ).is_dir()  # 04 counts the files a compile adds
    assert [
        json.loads((inductor_warmup.cache_dir(r) / inductor_warmup.RECORD).read_text())["built"] for r in (first, second)
    ] == [
        True,
        False,
    ]


def test_a_failed_build_is_one_line_and_leaves_the_run_cache_alone(tmp_path, monkeypatch):
    _fake_build(monkeypatch, returncode=1, stderr="Traceback ...\nImportError: no cpu_vec_isa")
    line = inductor_warmup.prepare(tmp_path / "runs" / "r1", "2.13.0", "cafe0001")
    assert line == "Inductor's CPU checks: not prepared (ImportError: no cpu_vec_isa); 04's first compile pays them"
    assert not inductor_warmup.cache_dir(tmp_path / "runs" / "r1").exists()


def test_the_summary_names_the_checks_and_keeps_the_series_order(tmp_path):
    rows = [{"notebook": s, "status": "passed", "seconds": 1.0} for s in ("01_c", "00_a", "A1_d")]
    (tmp_path / "status.json").write_text(json.dumps({"status": "passed", "seconds": 4.0, "notebooks": rows}))
    (tmp_path / "environment.json").write_text(json.dumps({"backend": "cpu"}))
    cache = inductor_warmup.cache_dir(tmp_path)
    cache.mkdir()
    record = {"seconds": 1.9, "built": False, "vector_isa": "avx512", "from": "/x/.inductor-checks/torch-2.13.0"}
    (cache / inductor_warmup.RECORD).write_text(json.dumps(record))
    text = write_summary(tmp_path).read_text()
    assert [line.split(" | ")[0] for line in text.splitlines() if line[:3] in ("| 0", "| A")] == ["| 00_a", "| 01_c", "| A1_d"]
    assert "(copied from /x/.inductor-checks/torch-2.13.0 in 1.9 s; Inductor chose avx512)" in text


def test_another_cpu_or_compiler_builds_its_own_checks(tmp_path, monkeypatch):
    """A runs folder shared by two machines (a workshop's shared home) must not hand one CPU's checks to the other."""
    calls = _fake_build(monkeypatch)
    for run, key in (("r1", "cafe0001"), ("r2", "beef0002"), ("r3", "cafe0001")):
        inductor_warmup.prepare(tmp_path / "runs" / run, "2.13.0", key)
    assert [c.name for c in calls] == ["torch-2.13.0-cafe0001", "torch-2.13.0-beef0002"]


def test_the_machine_key_names_this_cpu_and_compiler(monkeypatch):
    key = inductor_warmup.machine_key()
    assert len(key) == 8 and int(key, 16) >= 0 and key == inductor_warmup.machine_key()  # the same machine, the same key
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    assert inductor_warmup.machine_key() != key  # another compiler, another folder
