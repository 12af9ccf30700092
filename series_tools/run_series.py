"""The main job: execute the series with papermill into a fresh run folder.

    python -m series_tools.run_series [--notebooks 02 05] [-p HIDDEN 4096] [--out runs/] [--backend cpu]

The run folder `runs/<UTC timestamp>-<backend>/` holds the executed notebooks, their HTML
renders, each notebook's artifacts, `metrics.json` (all notebooks' metrics merged, with units),
`environment.json`, `status.json` and `summary.md` with a chart. A file named INCOMPLETE stays
in the folder until every notebook has passed, so an interrupted or failed run is never taken
for a finished one. A failing notebook is reported with its cell and error, the others still
run, and the exit code is non-zero.
"""

from __future__ import annotations

import argparse
import signal
import os
import sys
import time
from pathlib import Path
from typing import Any

from helpers.errors import ParameterError, SeriesError
from helpers.metrics import METRICS_FILE, merge_metrics
from helpers.outputs import RUNS_DIR, new_run_dir, write_atomic, write_json
from helpers.series import NOTEBOOK_DIR, notebook_paths
from series_tools.consistency import check_consistency, disagreement_lines

INCOMPLETE = "INCOMPLETE"
EXECUTION_TIMEOUT_S = 1800


def select_notebooks(names: list[str] | None, notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Notebooks by number ('02'), stem ('02_naive_rmsnorm') or file name; all when none given."""
    every = notebook_paths(notebook_dir)
    if not every:
        raise ParameterError(f"No notebooks (NN_*.ipynb) in {notebook_dir}", "pass the series' notebooks/ folder")
    if not names:
        return every
    chosen = []
    for name in names:
        key = name.removesuffix(".ipynb")
        matches = [p for p in every if p.stem == key or p.stem.split("_", 1)[0] == key]
        if not matches:
            raise ParameterError(
                f"No notebook named {name!r}", f"choose from: {', '.join(p.stem for p in every)} (or their numbers)"
            )
        chosen.extend(m for m in matches if m not in chosen)
    return chosen


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


def check_overrides(overrides: dict[str, Any], notebooks: list[Path]) -> dict[Path, dict[str, Any]]:
    """Every override must be declared by a selected notebook and valid; returns each notebook's share."""
    import papermill as pm

    from helpers.params import PARAMETER_SPECS, check_parameters

    declared = {p: set(pm.inspect_notebook(str(p))) for p in notebooks}
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


def run(
    notebooks: list[Path], overrides: dict[Path, dict[str, Any]], run_dir: Path, backend: str, html: bool = True
) -> list[dict[str, Any]]:
    """Execute each notebook; return one status record per notebook."""
    import papermill as pm

    from series_tools.execute import execute_notebook

    results = []
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
            record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        record["seconds"] = round(time.perf_counter() - start, 1)
        if record["status"] == "failed":
            where = f" in cell In[{record['cell']}]" if record.get("cell") is not None else ""
            print(f"    FAILED{where}: {record['error'].splitlines()[0]}", flush=True)
        else:
            print(f"    passed in {record['seconds']} s", flush=True)
        if html and executed.exists():
            record["html"] = render_html(executed)
        results.append(record)
    return results


def render_html(executed: Path) -> str | None:
    from series_tools.handouts import render_handout

    try:
        return render_handout(executed).name
    except Exception as exc:  # a render failure must not fail the run
        print(f"    (HTML render failed: {exc})", flush=True)
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m series_tools.run_series", description=__doc__.split("\n\n")[0])
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
    parser.add_argument("--backend", default="auto", help="auto | neuron | cuda | cpu (default: auto)")
    parser.add_argument("--no-html", action="store_true", help="skip the HTML renders")
    parser.add_argument("--notebook-dir", default=str(NOTEBOOK_DIR), help="where the notebooks are (default: notebooks/)")
    args = parser.parse_args(argv)

    try:
        notebooks = select_notebooks(args.notebooks, Path(args.notebook_dir))
        overrides = check_overrides({k: parse_value(v) for k, v in args.parameter}, notebooks)
        from helpers.backend import RUN_BACKEND_REASON, select_backend

        backend = select_backend(args.backend)
        run_dir = new_run_dir(Path(args.out), backend.name)
    except SeriesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

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
    print(f"Run folder: {run_dir}\nBackend: {backend.name} ({backend.reason})", flush=True)
    os.environ[RUN_BACKEND_REASON] = f"{backend.name}={backend.reason}"  # the notebooks' kernels inherit it

    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    status = "interrupted"
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill -TERM is treated like Ctrl-C
    try:
        results = run(notebooks, overrides, run_dir, backend.name, html=not args.no_html)
        status = "passed" if all(r["status"] == "passed" for r in results) else "failed"
    except KeyboardInterrupt:
        print("\nInterrupted: the run folder stays marked INCOMPLETE.", file=sys.stderr)
    finally:
        total = round(time.perf_counter() - started, 1)
        merged = merge_metrics([run_dir / nb.stem / METRICS_FILE for nb in notebooks], backend.name)
        write_json(run_dir / METRICS_FILE, merged)
        consistency = check_consistency(merged["notebooks"])
        write_json(run_dir / "consistency.json", consistency)
        for line in disagreement_lines(consistency):
            print(line, flush=True)
        write_json(run_dir / "status.json", {"status": status, "seconds": total, "notebooks": results})
        from series_tools.summary import write_summary

        try:
            write_summary(run_dir)
        except Exception as exc:  # the summary must never hide the run's own status
            print(f"(summary failed: {exc})", file=sys.stderr)
    if status == "passed":
        (run_dir / INCOMPLETE).unlink()
    print(f"\n{status.upper()} in {total} s: {run_dir}")
    return {"passed": 0, "failed": 1}.get(status, 130)


if __name__ == "__main__":
    sys.exit(main())
