"""Inductor's checks of the CPU's vector instructions, built once per machine and copied into each run's cache.

On cpu, the first `torch.compile` of a process whose Inductor cache is empty compiles four small C++
programs to learn which vector instructions (AVX2, AVX-512, AMX) the CPU can run: about 12 s on a 2-core
machine. `make run` gives every run a fresh Inductor cache (helpers.outputs.run_inductor_cache), so that
04 and 07 compile the lesson's graphs cold; it also made every run pay these checks again, inside 04's
cold call. They depend on the machine, its compiler and torch, not on the lesson, and Inductor's own
default cache keeps them for good on a learner's machine. So the run builds them once per torch version, CPU and
compiler, under `<runs folder>/.inductor-checks/`, and copies them into each run's cache before the
first notebook: a later run only copies them, and 04's cold call is the lesson's compile. In
Jupyter, without the runner, the first compile still pays them, and 04's cache-file line names them.

    python -m series_tools.inductor_warmup FOLDER   (run with TORCHINDUCTOR_CACHE_DIR=FOLDER: builds the checks)
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers.outputs import run_inductor_cache, write_json
from helpers.series import NOTEBOOKS, notebook_info

RECORD = "warmup.json"  # in the run's Inductor cache: what the checks cost this run, for the run's summary


def cache_dir(run_dir: Path) -> Path:
    """The run's Inductor cache (the one every notebook of the run compiles into)."""
    return run_inductor_cache(Path(run_dir) / "any-notebook")


def machine_key() -> str:
    """A short fingerprint of what the checks depend on besides torch: the CPU (model and flags) and the C++ compiler.

    A runs folder on a disk that several machines share (a workshop's home directories) must not hand one
    CPU's checks to another: Inductor would take vector instructions the other CPU may lack.

    Returns:
        8 hex digits; the same on the same machine and compiler."""
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text(errors="replace") if cpuinfo.exists() else ""
    cpu = [line for line in text.splitlines() if line.startswith(("model name", "flags"))][:2]
    compiler = os.environ.get("CXX", "c++")
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=10).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        version = "no compiler"
    parts = [platform.machine(), *cpu, compiler, version]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def machine_dir(run_dir: Path, torch_version: str, key: str | None = None) -> Path:
    """Where this machine keeps the checks for one torch version: beside the run folders (`make clean-runs` removes it).

    Args:
        run_dir: the run folder; the checks sit in its parent, shared by the runs.
        torch_version: torch.__version__ of the run.
        key: the machine's fingerprint (machine_key(); computed when None)."""
    return Path(run_dir).parent / ".inductor-checks" / f"torch-{torch_version}-{key or machine_key()}"


def wanted(stems: list[str], backend: str) -> bool:
    """True on cpu where a chosen notebook compiles (helpers.series `compiles`): only cpu compiles need the checks."""
    series = {i.stem for i in NOTEBOOKS}
    return backend == "cpu" and any(notebook_info(s).compiles for s in stems if s in series)


def prepare(run_dir: Path, torch_version: str, key: str | None = None) -> str:
    """Build the checks into this machine's folder where they are missing, then copy them into the run's cache.

    Returns one line for the run's output; writes the run cache's RECORD (seconds, built or copied, the
    vector instructions Inductor chose). A failure is not the run's: the first compile pays the checks."""
    folder = machine_dir(run_dir, torch_version, key)
    built = not (folder / RECORD).exists()  # written last: a build cut off midway builds again
    start = time.perf_counter()
    if built:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(folder)}
        command = [sys.executable, "-m", "series_tools.inductor_warmup", str(folder)]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return f"Inductor's CPU checks: not prepared ({why}); 04's first compile pays them"
    shutil.copytree(folder, cache_dir(run_dir), dirs_exist_ok=True, ignore=shutil.ignore_patterns(RECORD))
    seconds = round(time.perf_counter() - start, 1)
    how = "built (the first run on this machine with this torch)" if built else f"copied from {folder}"
    isa = json.loads((folder / RECORD).read_text())["vector_isa"]
    write_json(cache_dir(run_dir) / RECORD, {"seconds": seconds, "built": built, "vector_isa": isa, "from": str(folder)})
    return f"Inductor's CPU checks: {how} in {seconds} s, before the notebooks"


def main(argv: list[str] | None = None) -> int:
    folder = Path((argv or sys.argv[1:])[0])
    from torch._inductor import cpu_vec_isa  # the checks' own module (torch internals: 2.13/2.14)

    chosen = cpu_vec_isa.pick_vec_isa()  # builds each check into TORCHINDUCTOR_CACHE_DIR and loads it
    write_json(folder / RECORD, {"vector_isa": str(chosen or "none")})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
