"""The main job: execute the series with papermill into a fresh run folder.

    python -m series_tools.run_series [--notebooks 02 05] [-p HIDDEN 4096] [--out runs/] [--backend cpu]

The run folder `runs/<UTC timestamp>-<backend>/` holds the executed notebooks, their HTML
renders, each notebook's artifacts, `metrics.json` (all notebooks' metrics merged, with units,
and the run's `identity`: backend, device and every notebook's parameters, which `compare`
checks), `environment.json`, `status.json` and `summary.md` with a chart. A file named
INCOMPLETE stays in the folder until every notebook has passed, so an interrupted or failed run
is never taken for a finished one. A failing notebook is reported with its cell and error, the
others still run, and the exit code is non-zero.

What finished is kept: metrics.json, status.json (status "running" until the end) and the
summary are rewritten after every notebook, each file written whole under a temporary name and
renamed into place, so Ctrl-C, a crash or a killed runner leaves the finished notebooks recorded
and the folder INCOMPLETE. Ctrl-C (or kill -TERM) prints one line; a failed write (a full disk,
a read-only folder) stops the run with one line naming the folder and its free space.

Two series runs at once slow each other's timings (issue 42 measured notebook 02 at 84-88 ms
beside another run against 64-75 ms alone), so a run registers itself in a machine-wide folder
(REGISTRY_ENV, default <tmp>/trainium-profiling-series-runs) and a second one is refused, naming
the first; `--allow-concurrent` runs anyway and records the overlap in both runs' identity
(`concurrent_runs`), which makes `compare` mark their timings busy.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from series_tools.cli import OneLineParser
from helpers.errors import BackendUnavailableError, OutputDirError, ParameterError, SeriesError
from helpers.metrics import METRICS_FILE, merge_metrics
from helpers.outputs import RUNS_DIR, new_run_dir, write_atomic, write_json
from helpers.series import BACKEND_CHOICES, notebook_info
from helpers.series import NOTEBOOKS as SERIES_NOTEBOOKS
from helpers.series import NOTEBOOK_DIR, notebook_paths
from series_tools.consistency import check_consistency, disagreement_lines
from series_tools.inductor_warmup import prepare as prepare_inductor_checks
from series_tools.inductor_warmup import wanted as warmup_wanted

INCOMPLETE = "INCOMPLETE"
EXECUTION_TIMEOUT_S = 1800
REGISTRY_ENV = "SERIES_RUN_REGISTRY"  # the folder where running series register (tests point it elsewhere)
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG)


class WriteFailure(Exception):
    """A file of the run folder could not be written: the run stops (RunWriteError's line says why)."""

    def __init__(self, folder: Path, cause: BaseException) -> None:
        self.folder, self.cause = Path(folder), cause
        super().__init__(write_failure_line(self.folder, cause))


def _free_space(folder: Path) -> str:
    """The free space of the filesystem holding `folder` (or its nearest existing parent), e.g. '12.0 KiB'."""
    for candidate in (folder, *folder.parents):
        try:
            free = shutil.disk_usage(candidate).free
        except OSError:
            continue
        for unit in ("B", "KiB", "MiB", "GiB"):
            if free < 1024 or unit == "GiB":
                return f"{free:.0f} B" if unit == "B" else f"{free:.1f} {unit}"
            free /= 1024
    return "unknown"


def suggested_out() -> str:
    """A folder `--out` can take where the default cannot be written: under the system's temporary folder."""
    return str(Path(tempfile.gettempdir()) / "profiling-runs")


def write_failure_line(folder: Path, cause: BaseException) -> str:
    """One line: the folder, what the system said, its free space, and an --out that run_series takes."""
    errnum = getattr(cause, "errno", None) or getattr(getattr(cause, "__cause__", None), "errno", None)
    reason = os.strerror(errnum) if errnum else str(cause).splitlines()[0]
    return (
        f"error: cannot write to {folder}: {reason} ({_free_space(folder)} free there); the run stopped and stays "
        f"marked INCOMPLETE. Fix: free space there, or pass --out {suggested_out()} (another folder you can write)"
    )


def _is_write_failure(exc: BaseException) -> bool:
    """A full disk or an unwritable folder (OutputDirError carries the OSError as its cause)."""
    if isinstance(exc, OutputDirError):
        return True
    return isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS


def select_notebooks(names: list[str] | None, notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Notebooks by number ('02'), stem ('02_naive_rmsnorm') or file name; all when none given."""
    every = notebook_paths(notebook_dir)
    if not every:
        raise ParameterError(f"No notebooks (NN_*.ipynb or A<n>_*.ipynb) in {notebook_dir}", "pass the series' notebooks/ folder")
    if not names:
        return every
    chosen = []
    for name in names:
        key = Path(name).name.removesuffix(".ipynb")  # a path to the notebook names it too
        if Path(name).parent != Path(".") and Path(name).parent.resolve() != Path(notebook_dir).resolve():
            raise ParameterError(
                f"--notebooks {name} is a path outside the notebook folder {notebook_dir}",
                f"pass --notebook-dir {Path(name).parent} --notebooks {key}",
            )
        matches = [p for p in every if p.stem == key or p.stem.split("_", 1)[0] == key]
        if not matches:
            raise ParameterError(
                f"No notebook named {name!r}", f"choose from: {', '.join(p.stem for p in every)} (or their numbers)"
            )
        chosen.extend(m for m in matches if m not in chosen)
    return with_what_they_read(chosen, every)


def with_what_they_read(chosen: list[Path], every: list[Path]) -> list[Path]:
    """`chosen`, with each notebook whose saved results a chosen one reads (helpers.series
    NotebookInfo.reads) added or moved just before it, saying which were added.

    Why: appendix A5 checks the stream 07 kept and the rank job 08 ran in the same run folder; run
    alone it would stop."""
    by_stem, series = {p.stem: p for p in every}, {i.stem for i in SERIES_NOTEBOOKS}
    ordered: list[Path] = []
    for p in chosen:
        reads = notebook_info(p.stem).reads if p.stem in series else ()
        for stem in reads:
            if stem in by_stem and by_stem[stem] not in ordered:
                ordered.append(by_stem[stem])
        if p not in ordered:
            ordered.append(p)
    added = [p.stem for p in ordered if p not in chosen]
    if added:
        print(f"also running {', '.join(added)}: a notebook chosen reads its results from the same run folder")
    return ordered


def parse_value(text: str) -> Any:
    """A command-line value as papermill would read it: int, float, bool, None, else a string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def declared_parameters(notebooks: list[Path]) -> dict[Path, dict[str, Any]]:
    """Each notebook's parameters and their default values (as papermill reads the parameters cell;
    a default that is not a literal stays its source text)."""
    import papermill as pm

    def value(text: str) -> Any:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError):
            return text

    return {p: {name: value(info.get("default", "")) for name, info in pm.inspect_notebook(str(p)).items()} for p in notebooks}


def check_overrides(overrides: dict[str, Any], notebooks: list[Path]) -> dict[Path, dict[str, Any]]:
    """Every override must be declared by a selected notebook and valid; returns each notebook's share."""
    from helpers.params import PARAMETER_SPECS, check_parameters

    declared = {p: set(names) for p, names in declared_parameters(notebooks).items()}
    every = set().union(*declared.values()) if declared else set()
    for name in overrides:
        if name in ("BACKEND", "OUT_DIR"):
            raise ParameterError(f"{name} is set by the runner", "use --backend and --out instead of -p")
        if name not in every:
            raise ParameterError(
                f"No selected notebook declares a parameter {name!r}",
                f"declared: {', '.join(sorted(every - {'BACKEND', 'OUT_DIR'}))}",
            )
        if name in PARAMETER_SPECS:
            check_parameters({name: overrides[name]})
    return {p: {k: v for k, v in overrides.items() if k in declared[p]} for p in notebooks}


def run_identity(notebooks: list[Path], overrides: dict[Path, dict[str, Any]], backend: Any) -> dict[str, Any]:
    """What the run's figures were measured with, for `compare`: backend, device, and every
    notebook's parameter values (its defaults with the overrides applied) and which were overridden."""
    defaults = declared_parameters(notebooks)
    described = backend.describe()
    skip = ("BACKEND", "OUT_DIR")
    return {
        "backend": backend.name,
        "device": described.get("device_name"),
        "parameters": {
            nb.stem: {k: v for k, v in {**defaults[nb], **overrides.get(nb, {})}.items() if k not in skip} for nb in notebooks
        },
        "overridden": {nb.stem: sorted(overrides.get(nb, {})) for nb in notebooks},
        "concurrent_runs": [],
    }


# --- one series run at a time on a machine ---------------------------------------------------------


def registry_dir() -> Path:
    return Path(os.environ.get(REGISTRY_ENV) or Path(tempfile.gettempdir()) / "trainium-profiling-series-runs")


def _cmdline(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return None


def _alive(record: dict[str, Any]) -> bool:
    """Whether the registered process still runs, and is still the one that registered (not a reused pid)."""
    pid = record.get("pid")
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    now = _cmdline(pid)
    return now is None or record.get("cmdline") in (None, "", now)


def other_runs(registry: Path) -> list[dict[str, Any]]:
    """The other series runs registered and alive on this machine; stale registrations are removed."""
    found = []
    for path in sorted(registry.glob("*.json")) if registry.is_dir() else []:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if record.get("pid") == os.getpid():
            continue
        if _alive(record):
            found.append(record)
        else:
            with contextlib.suppress(OSError):  # another user's stale file: left for its owner
                path.unlink(missing_ok=True)
    return found


def describe_run(record: dict[str, Any]) -> str:
    return f"pid {record.get('pid')} (run folder {record.get('run_dir')}, started {record.get('started')})"


def register(registry: Path, run_dir: Path, others: list[dict[str, Any]]) -> bool:
    """Register this run; tell each run already timing that this one started beside it (a marker
    `<its pid>.seen-<this pid>` it reads after its next notebook). The folder is shared by every
    user of the machine (mode 1777, as /tmp). False, with a warning, where it cannot be written:
    the run goes on, unseen by others."""
    me = {
        "pid": os.getpid(),
        "run_dir": str(run_dir),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cmdline": _cmdline(os.getpid()),
    }
    try:
        if not registry.is_dir():
            registry.mkdir(parents=True, exist_ok=True)
            registry.chmod(0o1777)
        for other in others:
            write_json(registry / f"{other['pid']}.seen-{os.getpid()}", me)
        write_json(registry / f"{os.getpid()}.json", me)
    except (OSError, OutputDirError) as exc:
        print(
            f"warning: cannot register this run in {registry} ({exc}): a series started beside it will not see it",
            file=sys.stderr,
        )
        return False
    return True


def concurrent_runs(registry: Path, seen: list[str]) -> list[str]:
    """`seen` with every other run alive now or that announced itself to this one since."""
    now = [describe_run(r) for r in other_runs(registry)]
    for marker in sorted(registry.glob(f"{os.getpid()}.seen-*")) if registry.is_dir() else []:
        try:
            now.append(describe_run(json.loads(marker.read_text())))
        except (OSError, ValueError):
            continue
    return list(dict.fromkeys([*seen, *now]))


def unregister(registry: Path) -> None:
    for path in (registry / f"{os.getpid()}.json", *registry.glob(f"{os.getpid()}.seen-*")):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


# --- executing and recording --------------------------------------------------------------------


def relink_copy(executed: Path, root: Path) -> None:
    """The executed copy's markdown links, made to work from its run folder: a notebook links
    `../docs/...` from notebooks/, and the run folder sits elsewhere (runs/<run>/ or any --out), so the
    glossary and appendix links of the run's notebooks and their HTML handouts would point nowhere.

    Args:
        executed: the run folder's copy (nothing is done where execution left none).
        root: the repository root the notebooks' `../` reaches.
    """
    from series_tools.execute import relink

    if not executed.exists():
        return
    nb = json.loads(executed.read_text())
    target = Path(os.path.relpath(root.resolve(), executed.parent.resolve())).as_posix()
    write_atomic(executed, json.dumps(relink(nb, root=target), indent=1, ensure_ascii=False) + "\n")


def run(
    notebooks: list[Path],
    overrides: dict[Path, dict[str, Any]],
    run_dir: Path,
    backend: str,
    html: bool = True,
    results: list[dict[str, Any]] | None = None,
    after_each: Callable[[list[dict[str, Any]]], None] | None = None,
) -> list[dict[str, Any]]:
    """Execute each notebook; return one status record per notebook.

    Records are appended to `results` (when given) as each notebook ends, and `after_each` is called
    with them, so that a caller interrupted midway still holds, and has written, what finished. A
    write failure (a full disk, an unwritable folder) raises WriteFailure: the next notebook could
    not write either."""
    import papermill as pm

    from series_tools.execute import execute_notebook

    results = [] if results is None else results
    if warmup_wanted([nb.stem for nb in notebooks], backend):  # Inductor's CPU checks into the run's cache
        import torch

        print(prepare_inductor_checks(run_dir, torch.__version__), flush=True)
    for i, nb in enumerate(notebooks, 1):
        print(f"[{i}/{len(notebooks)}] {nb.stem} ...", flush=True)
        executed = run_dir / nb.name
        params = {**overrides.get(nb, {}), "BACKEND": backend, "OUT_DIR": str(run_dir)}
        start = time.perf_counter()
        record: dict[str, Any] = {"notebook": nb.stem, "parameters": params}
        try:
            execute_notebook(nb, executed, params, cwd=nb.parent, timeout_s=EXECUTION_TIMEOUT_S, progress_bar=True)
            record["status"] = "passed"
        except pm.PapermillExecutionError as exc:
            record.update(status="failed", cell=exc.exec_count, cell_index=exc.cell_index, error=f"{exc.ename}: {exc.evalue}")
        except Exception as exc:  # a dead kernel, a timeout: report and go on with the next notebook
            if _is_write_failure(exc):
                raise WriteFailure(run_dir, exc) from exc
            record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        record["seconds"] = round(time.perf_counter() - start, 1)
        relink_copy(executed, nb.parent.parent)
        if record["status"] == "failed":
            where = f" in cell In[{record['cell']}]" if record.get("cell") is not None else ""
            print(f"    FAILED{where}: {record['error'].splitlines()[0]}", flush=True)
        else:
            print(f"    passed in {record['seconds']} s", flush=True)
        results.append(record)
        if after_each is not None:
            after_each(results)
    if html:
        render_all_html(run_dir, results)
        if after_each is not None:
            after_each(results)
    return results


def render_all_html(run_dir: Path, results: list[dict[str, Any]]) -> None:
    """Render every executed notebook's handouts once all have run, one process per CPU, and
    record each one's name in its status record.

    Why after the notebooks and not beside them: a render running while a notebook times its calls
    would take a CPU from it (the busy check would then withhold its verdicts); after them, the
    renders may use every CPU (about 1 s per notebook, run in parallel)."""
    executed = [run_dir / f"{r['notebook']}.ipynb" for r in results]
    todo = [(r, path) for r, path in zip(results, executed) if path.exists()]
    if not todo:
        return
    print(f"rendering {len(todo)} HTML handouts ...", flush=True)
    from concurrent.futures import ProcessPoolExecutor

    workers = min(len(todo), os.cpu_count() or 1)  # Ctrl-C is the runner's to handle (one line), not each worker's
    with ProcessPoolExecutor(max_workers=workers, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)) as pool:
        outcomes = list(pool.map(_render_html, [path for _, path in todo]))
    for (record, path), (name, errnum, problem) in zip(todo, outcomes):
        if errnum is not None:  # a failed write stops the run, as it would a notebook
            raise WriteFailure(path.parent, OSError(errnum, os.strerror(errnum)))
        if problem is not None:
            print(f"    {record['notebook']}: HTML render failed: {problem}", flush=True)
        record["html"] = name


def _render_html(executed: Path) -> tuple[str | None, int | None, str | None]:
    """Render one notebook's handouts: (the instructor's file name, None, None), or (None, errno of
    a failed write, None), or (None, None, why the render failed). Plain values: it runs in a pool."""
    from series_tools.handouts import render_handout

    try:
        return render_handout(executed).name, None, None
    except Exception as exc:  # a render failure must not fail the run; a failed write stops it
        if _is_write_failure(exc):
            for partial in (executed.with_suffix(".html"), executed.with_suffix(".student.html")):
                partial.unlink(missing_ok=True)  # it may be cut off: no partial file under a final name
            cause = exc if isinstance(exc, OSError) else exc.__cause__
            return None, getattr(cause, "errno", None) or errno.EIO, None
        return None, None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def record_run(
    run_dir: Path,
    notebooks: list[Path],
    identity: dict[str, Any],
    results: list[dict[str, Any]],
    status: str,
    seconds: float,
    quiet: bool = True,
) -> None:
    """Write what the run holds so far: metrics.json (with the identity), consistency.json,
    status.json and the summary, each whole or not at all. Raises WriteFailure where a write fails."""
    from series_tools.summary import write_summary

    try:
        merged = merge_metrics([run_dir / nb.stem / METRICS_FILE for nb in notebooks], identity["backend"])
        write_json(run_dir / METRICS_FILE, {**merged, "identity": identity})
        consistency = check_consistency(merged["notebooks"])
        write_json(run_dir / "consistency.json", consistency)
        if not quiet:
            for line in disagreement_lines(consistency):
                print(line, flush=True)
        write_json(run_dir / "status.json", {"status": status, "seconds": round(seconds, 1), "notebooks": results})
        try:
            write_summary(run_dir)
        except Exception as exc:  # the summary must never hide the run's own status; a failed write is the run's
            if _is_write_failure(exc):
                raise
            print(f"(summary failed: {exc})", file=sys.stderr)
    except (OSError, OutputDirError) as exc:
        if _is_write_failure(exc):
            raise WriteFailure(run_dir, exc) from exc
        raise


def check_backend_choice(name: str) -> None:
    """--backend must name a backend this series knows; the fix is the flag this tool takes."""
    if name.strip().lower() not in BACKEND_CHOICES:
        raise ParameterError(
            f"--backend {name!r} is not a backend this series knows ({', '.join(BACKEND_CHOICES)})",
            f"pass --backend {'|'.join(BACKEND_CHOICES)}, e.g. --backend auto",
        )


def check_out_is_a_parent(out: Path) -> None:
    """--out receives run folders: a run folder given instead would get a run nested inside it,
    which neither compare nor publish finds."""
    if any((out / name).exists() for name in ("status.json", INCOMPLETE)):
        raise ParameterError(
            f"--out {out} is a run folder (it holds {'status.json' if (out / 'status.json').exists() else INCOMPLETE}); "
            "--out takes the folder that receives run folders",
            f"pass --out {out.parent}",
        )


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m series_tools.run_series", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", nargs="+", metavar="NAME", help="numbers or names (default: all)")
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a notebook parameter, e.g. -p HIDDEN 4096",
    )
    parser.add_argument("--out", default=str(RUNS_DIR), help="folder that receives the run folder (default: runs/)")
    parser.add_argument("--backend", default="auto", help=f"{' | '.join(BACKEND_CHOICES)} (default: auto)")
    parser.add_argument("--no-html", action="store_true", help="skip the HTML renders")
    parser.add_argument("--notebook-dir", default=str(NOTEBOOK_DIR), help="where the notebooks are (default: notebooks/)")
    parser.add_argument(
        "--allow-concurrent",
        action="store_true",
        help="run although another series run is timing on this machine; both runs' timings are then marked busy",
    )
    parser.add_argument(
        "--check", action="store_true", help="check the options (notebooks, parameters, backend, --out) and exit without running"
    )
    args = parser.parse_args(argv)

    try:
        notebooks = select_notebooks(args.notebooks, Path(args.notebook_dir))
        overrides = check_overrides({k: parse_value(v) for k, v in args.parameter}, notebooks)
        check_backend_choice(args.backend)
        check_out_is_a_parent(Path(args.out))
        from helpers.backend import RUN_BACKEND_REASON, select_backend

        try:
            backend = select_backend(args.backend)
        except BackendUnavailableError as exc:  # its text names the notebooks' BACKEND; this tool takes --backend
            flag = lambda text: re.sub(r"(?:`-p )?BACKEND[= ](\w+)`?", r"--backend \1", text)  # noqa: E731
            raise BackendUnavailableError(flag(exc.problem), f"pass --backend cpu (or --backend auto); {flag(exc.fix)}") from exc
        registry = registry_dir()
        others = other_runs(registry)
        if others and not args.allow_concurrent:
            raise SeriesError(
                f"Another series run is timing on this machine: {describe_run(others[0])}; two at once slow each other's timings",
                "wait for it to end, or pass --allow-concurrent (both runs' timings are then marked busy and compare "
                "does not judge them)",
            )
        if args.check:
            from helpers.outputs import ensure_writable_dir

            try:
                ensure_writable_dir(args.out)
            except OutputDirError as exc:
                raise OutputDirError(exc.problem, f"pass --out {suggested_out()} (a folder you can write)") from exc
            print(f"ok: {len(notebooks)} notebook(s) on {backend.name} into {args.out}")
            return 0
        try:
            run_dir = new_run_dir(Path(args.out), backend.name)
        except OutputDirError as exc:  # its fix names the notebooks' OUT_DIR; this tool takes --out
            raise OutputDirError(exc.problem, f"pass --out {suggested_out()} (a folder you can write)") from exc
    except SeriesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    identity = run_identity(notebooks, overrides, backend)
    if others:
        identity["concurrent_runs"] = [describe_run(r) for r in others]
        print(f"warning: running beside {', '.join(identity['concurrent_runs'])}: timings marked busy", file=sys.stderr)
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    status = "running"
    try:
        register(registry, run_dir, others)
        write_atomic(run_dir / INCOMPLETE, "This run has not finished, or a notebook failed: see status.json.\n")
        from series_tools.execute import kernel_address_layout

        # the notebooks' thread policy (helpers.notebook), so that this record's thread counts are the ones they measure with
        import torch

        from analysis.contention import spare_cpu_threads

        default_threads = torch.get_num_threads()
        torch.set_num_threads(spare_cpu_threads(default_threads, os.environ.get("OMP_NUM_THREADS")))
        write_json(
            run_dir / "environment.json",
            {**backend.describe(), "intra_op_threads_default": default_threads, "address_layout": kernel_address_layout()},
        )
    except (OSError, OutputDirError) as exc:
        unregister(registry)
        print(write_failure_line(run_dir, exc), file=sys.stderr)
        return 1
    print(f"Run folder: {run_dir}\nBackend: {backend.name} ({backend.reason})", flush=True)
    os.environ[RUN_BACKEND_REASON] = f"{backend.name}={backend.reason}"  # the notebooks' kernels inherit it

    def after_each(done: list[dict[str, Any]]) -> None:
        identity["concurrent_runs"] = concurrent_runs(registry, identity["concurrent_runs"])
        record_run(run_dir, notebooks, identity, done, "running", time.perf_counter() - started)

    saved = _process_state()
    interrupted: list[int] = []

    def on_interrupt(signum: int, frame: Any) -> None:
        """The first Ctrl-C (or kill -TERM) stops the run; later ones wait until what finished is recorded."""
        if interrupted:
            return
        interrupted.append(signum)
        quiet_after_interrupt()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    signal.signal(signal.SIGTERM, on_interrupt)
    code, write_error = 130, None
    try:
        try:
            run(notebooks, overrides, run_dir, backend.name, html=not args.no_html, results=results, after_each=after_each)
            status = "passed" if all(r["status"] == "passed" for r in results) else "failed"
            code = 0 if status == "passed" else 1
        except KeyboardInterrupt:
            quiet_after_interrupt()  # also where the interrupt came from elsewhere than a signal
            status = "interrupted"
            print(
                f"Interrupted: {len(results)} of {len(notebooks)} notebooks finished and are recorded; "
                f"{run_dir} stays marked INCOMPLETE",
                file=sys.stderr,
                flush=True,
            )
        except WriteFailure as exc:
            status, code, write_error = "failed", 1, exc
            print(file=sys.stderr)  # papermill's progress bar, cut off, ends no line
        total = time.perf_counter() - started
        identity["concurrent_runs"] = concurrent_runs(registry, identity["concurrent_runs"])
        try:
            record_run(run_dir, notebooks, identity, results, status, total, quiet=False)
        except WriteFailure as exc:
            write_error, code = write_error or exc, 1
        if write_error is not None:
            print(str(write_error), file=sys.stderr, flush=True)
            return 1
    finally:
        unregister(registry)
        if interrupted:  # the process ends: one more Ctrl-C must not kill it midway (finalising resets handlers)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        else:
            _restore_process_state(saved)
    if status == "passed":
        (run_dir / INCOMPLETE).unlink()
    print(f"\n{status.upper()} in {round(total, 1)} s: {run_dir}")
    return code


def _process_state() -> tuple[Any, ...]:
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), sys.unraisablehook


def _restore_process_state(saved: tuple[Any, ...]) -> None:
    import logging

    from series_tools.execute import quiet_kernel_stderr

    quiet_kernel_stderr(False)

    signal.signal(signal.SIGINT, saved[0])
    signal.signal(signal.SIGTERM, saved[1])
    sys.unraisablehook = saved[2]
    logging.disable(logging.NOTSET)


def quiet_after_interrupt() -> None:
    """After the first Ctrl-C the run prints one line: the kernel's teardown, cut off midway,
    prints no traceback (ZMQError from closed sockets), in the kernel or here."""
    import logging

    from series_tools.execute import quiet_kernel_stderr

    quiet_kernel_stderr()
    logging.disable(logging.CRITICAL)
    sys.unraisablehook = lambda _unraisable: None


if __name__ == "__main__":
    sys.exit(main())
