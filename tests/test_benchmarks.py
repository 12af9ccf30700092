"""The benchmarks run (they print figures and assert nothing about speed: see benchmarks/)."""
import subprocess
import sys

from helpers.series import REPO_ROOT


def test_drift_benchmark_prints_every_window_and_the_deviations():
    out = subprocess.run([sys.executable, "benchmarks/drift_benchmark.py", "--seconds", "0.5", "--tokens", "64",
                          "--hidden", "256"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    windows = [line for line in lines if line.strip()[:1].isdigit()]
    assert windows and all(len(line.split()) == 4 for line in windows)
    for name in ("naive median", "copy median", "naive/copy paired ratio"):
        assert any(line.startswith(name) and "largest deviation" in line for line in lines), name
