"""Output folders: created safely, never reused by accident, never half-written.

A failed or interrupted run must not destroy an earlier run's results, and two runs started in
the same second must not share a folder. Folders are made with an exclusive mkdir, files are
written to a temporary name and renamed into place.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import OutputDirError
from .series import REPO_ROOT

RUNS_DIR = REPO_ROOT / "runs"


def _explain_os_error(path: Path, exc: OSError) -> OutputDirError:
    if exc.errno == errno.ENOSPC:
        return OutputDirError(f"No space left on the device holding {path}", "free disk space or pass another OUT_DIR")
    return OutputDirError(
        f"Cannot write to {path}: {exc.strerror or exc}",
        "pass an OUT_DIR you can write to (e.g. `-p OUT_DIR /tmp/profiling-run`), or fix its permissions",
    )


def ensure_writable_dir(path: Path | str) -> Path:
    """Create `path` (and parents) and prove it is writable, or raise OutputDirError."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-probe-"):
            pass
    except OSError as exc:
        raise _explain_os_error(path, exc) from exc
    return path


def utc_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def new_run_dir(parent: Path | str, backend: str, suffix: str = "") -> Path:
    """A fresh folder `<parent>/<UTC timestamp>-<backend>[-suffix]`, never an existing one.

    mkdir without exist_ok is atomic, so two processes started in the same second get
    distinct folders (`...-2`, `...-3`).
    """
    parent = ensure_writable_dir(parent)
    base = f"{utc_stamp()}-{backend}" + (f"-{suffix}" if suffix else "")
    for n in range(1, 1000):
        candidate = parent / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
        except OSError as exc:
            raise _explain_os_error(candidate, exc) from exc
    raise OutputDirError(f"Could not create a new run folder under {parent}", "remove old runs from that folder")


def write_atomic(path: Path | str, data: str | bytes) -> Path:
    """Write a file completely or not at all (temporary file, then rename)."""
    path = Path(path)
    mode = "wb" if isinstance(data, bytes) else "w"
    tmp = None
    try:
        with tempfile.NamedTemporaryFile(mode, dir=path.parent, prefix=f".{path.name}.", delete=False) as fh:
            tmp = fh.name
            fh.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        raise _explain_os_error(path, exc) from exc
    return path


def write_json(path: Path | str, obj: Any) -> Path:
    return write_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def run_inductor_cache(out_dir: Path | str) -> Path:
    """The run's own Inductor cache, `<run folder>/inductor-cache`, for a notebook whose output
    folder is `out_dir`; set it as TORCHINDUCTOR_CACHE_DIR before the notebook's first compile.

    Why: a cache that holds only this run's graphs makes their first compiles cold on every run
    (the user's default cache would hold them from an earlier run); shared by the run's notebooks,
    it pays Inductor's one-off checks of the CPU's vector instructions (small C++ compiles, about 12 s
    on a 2-core machine) once per cache: under `make run` on cpu built once per machine and copied in
    before the notebooks (series_tools/inductor_warmup.py), else in the first compile, not again in 07."""
    return Path(out_dir).parent / "inductor-cache"
