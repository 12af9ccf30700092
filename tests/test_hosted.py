"""The hosted-notebook route: every notebook's helpers cell starts with series_tools.hosted.HOSTED_PREAMBLE,
which does nothing in the series' kernel and, in a fresh environment without the series, clones and
installs it (checked here in a new virtual environment; no hosted service is reachable from the tests).
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.series import REPO_ROOT
from series_tools.hosted import CHECKOUT_NAME, HOSTED_PREAMBLE, preamble_problems

# What the preamble is run as: the cell's own first lines, then a report of where helpers came from.
PROBE = HOSTED_PREAMBLE + "print('HELPERS', helpers.__file__)\n"


def run_preamble(python: str, cwd: Path, home: Path, url: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SERIES_GIT_URL", "PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    if url is not None:
        env["SERIES_GIT_URL"] = url
    return subprocess.run([python, "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_every_notebook_opens_with_the_one_preamble():
    assert preamble_problems() == [], "a helpers cell differs from HOSTED_PREAMBLE: run `python -m series_tools.hosted`"


def test_the_preamble_needs_only_the_standard_library():
    """It runs before the series is installed, so it can import nothing else (helpers is what it installs)."""
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(HOSTED_PREAMBLE))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported <= set(sys.stdlib_module_names) | {"helpers"}, imported


def test_in_the_series_kernel_it_is_a_no_op(tmp_path):
    """This environment has the series: the import succeeds, nothing is cloned or installed."""
    home = tmp_path / "home"
    home.mkdir()
    done = run_preamble(sys.executable, tmp_path, home, url=str(tmp_path / "no-such-repository"))
    assert done.returncode == 0, done.stderr
    assert f"HELPERS {REPO_ROOT / 'helpers' / '__init__.py'}" in done.stdout
    assert list(home.iterdir()) == []


@pytest.mark.venv
def test_in_a_fresh_environment_it_installs_the_series_and_only_there(tmp_path):
    """A new virtual environment stands in for a hosted kernel. In a checkout (a `../helpers` beside
    the notebook) or without SERIES_GIT_URL it refuses with the fix; with the URL (this repository,
    cloned from its path) it clones and installs the series, for the kernel and its subprocesses."""
    if subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("the repository is not a git checkout here, so there is nothing to clone")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    home, hosted = tmp_path / "home", tmp_path / "content"
    home.mkdir()
    hosted.mkdir()

    wrong_kernel = run_preamble(python, REPO_ROOT / "notebooks", home, url=str(REPO_ROOT))
    assert wrong_kernel.returncode != 0 and "select the kernel 'Python (trainium-profiling)'" in wrong_kernel.stderr
    no_url = run_preamble(python, hosted, home, url=None)
    assert no_url.returncode != 0 and "%env SERIES_GIT_URL=" in no_url.stderr
    assert list(home.iterdir()) == [], "nothing is cloned when the cell refuses"

    installed = run_preamble(python, hosted, home, url=str(REPO_ROOT))
    assert installed.returncode == 0, installed.stderr
    checkout = home / CHECKOUT_NAME
    assert f"HELPERS {checkout / 'helpers' / '__init__.py'}" in installed.stdout
    # a process the kernel starts (07's second process, 08's ranks: lesson/) finds the series too, with its data
    child = subprocess.run(
        [
            python,
            "-c",
            "import analysis, helpers.series, lesson, series_tools; "
            "print(helpers.series.REPO_ROOT, (helpers.series.REPO_ROOT / 'data').is_dir())",
        ],
        cwd=hosted,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.stdout.split() == [str(checkout), "True"], child.stderr
    # a restarted kernel: the checkout is there, the import succeeds at once
    again = run_preamble(python, hosted, home, url="/no/such/repository")
    assert again.returncode == 0 and f"HELPERS {checkout / 'helpers' / '__init__.py'}" in again.stdout, again.stderr
