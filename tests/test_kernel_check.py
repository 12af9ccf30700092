"""The first cell tells a learner in the wrong kernel which environment to select."""

import pytest

from helpers import kernel_check
from helpers.errors import SeriesError


def test_current_kernel_is_fine(capsys):
    kernel_check.check_kernel()
    assert "Kernel OK" in capsys.readouterr().out


def test_missing_torch_names_kernel_and_registration(monkeypatch):
    monkeypatch.setattr(kernel_check.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SeriesError) as err:
        kernel_check.check_kernel()
    msg = str(err.value)
    assert "torch is not installed" in msg
    assert "python -m ipykernel install --user --name trainium-profiling" in msg
    assert "Python (trainium-profiling)" in msg


def test_wrong_torch_version(monkeypatch):
    monkeypatch.setattr(kernel_check, "package_version", lambda dist: "2.4.1" if dist == "torch" else None)
    with pytest.raises(SeriesError, match="torch 2.4.1 is installed"):
        kernel_check.check_kernel()


def test_kernel_check_imports_no_torch():
    import subprocess
    import sys

    code = "import sys; import helpers.kernel_check; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent),
    )
    assert out.stdout.strip() == "False"


def test_newer_torch_runs_with_a_note(monkeypatch, capsys):
    """A GPU machine's own, newer torch runs the series; the kernel check says it is not the pin."""
    monkeypatch.setattr(kernel_check, "package_version", lambda dist: "2.16.0+cu130" if dist == "torch" else None)
    kernel_check.check_kernel()
    out = capsys.readouterr().out
    assert "Kernel OK" in out and "torch 2.16.0+cu130 is not a version the series is pinned to" in out
