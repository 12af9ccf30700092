"""The start cell and the hosted-notebook route.

Every notebook opens its session with series_tools.hosted.start_cell (three lines). A hosted kernel
without the series gets it from HOSTED_INSTALL_CELL, the cell the README tells a learner to add
above it, followed by a kernel restart: checked here in a new virtual environment standing in for
the hosted kernel (no hosted service is reachable from the tests), its two lines run as IPython
runs them (`!` in a shell, `%pip` as the kernel's own pip)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.series import REPO_ROOT
from series_tools.hosted import CHECKOUT_NAME, HOSTED_INSTALL_CELL, start_cell, start_cell_problems


def test_every_notebook_opens_with_the_three_line_start_cell():
    assert start_cell_problems() == []
    assert len(start_cell("02_naive_rmsnorm").splitlines()) == 3


def run_install_cell(python: str, home: Path, url: str) -> None:
    """HOSTED_INSTALL_CELL's lines, as IPython runs them in a kernel whose interpreter is `python`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"HOME": str(home)}
    for line in HOSTED_INSTALL_CELL.format(url=url).splitlines():
        command = line[1:] if line.startswith("!") else line.replace("%pip", f"{python} -m pip", 1)
        done = subprocess.run(command, shell=True, cwd=home, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{line}: {done.stderr}"


@pytest.mark.venv
def test_in_a_fresh_environment_the_install_cell_installs_the_series(tmp_path):
    """After the install cell and a restart (a new process), the kernel and the processes it starts
    (07's second process, 08's ranks) import the series from the checkout, with its data beside it."""
    if subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("the repository is not a git checkout here, so there is nothing to clone")
    venv, home = tmp_path / "venv", tmp_path / "home"
    home.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    before = subprocess.run([python, "-c", "import helpers"], cwd=home, capture_output=True, text=True)
    assert before.returncode != 0 and "No module named 'helpers'" in before.stderr
    run_install_cell(python, home, str(REPO_ROOT))
    checkout = home / CHECKOUT_NAME
    restarted = subprocess.run(
        [
            python,
            "-c",
            "import analysis, helpers.series, lesson, series_tools; print(helpers.series.REPO_ROOT, (helpers.series.REPO_ROOT / 'data').is_dir())",
        ],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert restarted.stdout.split() == [str(checkout), "True"], restarted.stderr
