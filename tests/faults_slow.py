"""Fault injection that needs the real thing (issue 42): Ctrl-C sent to a running series' process
group, a second series started beside a running one, a run folder on a full filesystem (a small
tmpfs, mounted where this runs as root); and the run's real Inductor warm-up process (about 12 s of
compiles). Each starts real kernels or compilers, so this file is not collected
by `make test` (its name is not test_*.py): `make test-faults` runs it, and CI does too.
tests/test_faults.py has the fast cases.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from series_tools import inductor_warmup
from test_run_series import OK_BODY, tiny_notebook

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def series(tmp_path, monkeypatch):
    """01 passes at once; 02 sleeps SECONDS (it writes `sleeping` first)."""
    monkeypatch.setenv("SERIES_RUN_REGISTRY", str(tmp_path / "registry"))
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    tiny_notebook(nb_dir / "01_ok.ipynb", "x = 1")
    tiny_notebook(nb_dir / "02_sleeps.ipynb", OK_BODY.replace("01_ok", "02_sleeps"))
    return nb_dir


def start(series, out, *extra):
    """A series run as a user starts one: its own process group, as a terminal's foreground job."""
    cmd = [sys.executable, "-m", "series_tools.run_series", "--notebook-dir", str(series), "--out", str(out)]
    return subprocess.Popen(
        [*cmd, "--backend", "cpu", "--no-html", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(pattern, root, seconds=90):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if list(Path(root).glob(pattern)):
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing matched {pattern} under {root} within {seconds} s")


def messages(stderr):
    """stderr without papermill's progress bar."""
    lines = stderr.replace("\r", "\n").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("Executing")]


@pytest.mark.parametrize("presses", [1, 3])
def test_ctrl_c_during_02_keeps_01_and_prints_one_line(series, tmp_path, presses):
    """Ctrl-C reaches the runner and its kernel (one process group): before, a 20-line ZMQError
    traceback (35 lines after three presses) and a status.json with "notebooks": []."""
    runs = tmp_path / "runs"
    proc = start(series, runs, "-p", "SECONDS", "60")
    wait_for("*/sleeping", runs)
    time.sleep(0.5)
    for _ in range(presses):
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.3)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (run,) = runs.iterdir()
    assert messages(err) == [f"Interrupted: 1 of 2 notebooks finished and are recorded; {run} stays marked INCOMPLETE"]
    status = json.loads((run / "status.json").read_text())
    assert status["status"] == "interrupted" and [(r["notebook"], r["status"]) for r in status["notebooks"]] == [
        ("01_ok", "passed")
    ]
    assert "| 01_ok | passed |" in (run / "summary.md").read_text() and (run / "INCOMPLETE").exists()
    assert not [p.name for p in run.glob(".*")], "a temporary file was left behind"


def test_a_second_series_beside_a_running_one_is_refused(series, tmp_path):
    runs = tmp_path / "runs"
    first = start(series, runs, "--notebooks", "02", "-p", "SECONDS", "60")
    try:
        wait_for("*/sleeping", runs)
        second = subprocess.run(
            [sys.executable, "-m", "series_tools.run_series", "--notebook-dir", str(series), "--out", str(runs)]
            + ["--notebooks", "01", "--backend", "cpu", "--check"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2 and f"pid {first.pid}" in second.stderr and "--allow-concurrent" in second.stderr
    finally:
        os.killpg(first.pid, signal.SIGINT)
        first.communicate(timeout=120)


@pytest.fixture
def small_filesystem(tmp_path):
    """A 2 MiB tmpfs, filled to leave `leave` bytes: a size-limited folder needs a mount (root)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root: tests/test_faults.py covers a full disk by injecting ENOSPC")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"tmpfs mount refused here ({done.stderr.strip()}): tests/test_faults.py injects ENOSPC instead")

    def fill(leave):
        free = shutil.disk_usage(mount).free
        (mount / "filler").write_bytes(b"\0" * max(0, free - leave))
        return mount / "runs"

    yield fill
    subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("leave_kib", [8, 40])
def test_a_full_filesystem_fails_the_run_with_one_line_and_no_partial_file(series, small_filesystem, leave_kib):
    """Before: PASSED, exit 0, a 0-byte summary.png (nearly full) or a 30-line traceback and a cut-off .ipynb."""
    runs = small_filesystem(leave_kib * 1024)
    proc = start(series, runs, "--notebooks", "01")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    errors = [line for line in messages(err) if line.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and " free there" in errors[0], err
    assert "Traceback" not in err
    (run,) = runs.iterdir()
    assert str(run) in errors[0] and (run / "INCOMPLETE").exists()
    assert not [p.name for p in run.rglob("*") if p.is_file() and p.stat().st_size == 0 and p.name != "INCOMPLETE"]
    assert not [p.name for p in run.rglob(".*")], "a temporary file was left behind"
    for path in run.rglob("*.json"):
        json.loads(path.read_text())  # every file under a final name is whole
    for path in run.glob("*.ipynb"):
        json.loads(path.read_text())


def test_the_checks_are_built_once_and_then_copied(tmp_path):
    """The real checks, as `make run` prepares them: built in the machine's folder, copied by a later run, and in
    each run's cache the builds a first compile loads instead of building."""
    first, second = tmp_path / "runs" / "r1", tmp_path / "runs" / "r2"
    assert inductor_warmup.prepare(first, "test").startswith("Inductor's CPU checks: built")
    assert inductor_warmup.prepare(second, "test").startswith("Inductor's CPU checks: copied from")
    for run in (first, second):
        record = json.loads((inductor_warmup.cache_dir(run) / inductor_warmup.RECORD).read_text())
        assert record["vector_isa"] and list(inductor_warmup.cache_dir(run).rglob("*.so"))
