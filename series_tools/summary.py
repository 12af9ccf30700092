"""summary.md and summary.png of a run folder: what ran, how long, and its headline figures.

Both are written whole under a temporary name and renamed (helpers.outputs.write_atomic): the run
rewrites them after every notebook, and a full disk must leave the last whole ones, never a cut-off file."""

from __future__ import annotations

import io
import json
from pathlib import Path

from helpers.metrics import METRICS_FILE, read_metrics
from helpers.outputs import write_atomic
from series_tools.consistency import check_consistency, format_consistency
from series_tools.inductor_warmup import RECORD as WARMUP_RECORD
from series_tools.inductor_warmup import cache_dir


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _fmt(entry: dict) -> str:
    v = entry.get("value")
    if isinstance(v, float):
        v = f"{v:.4g}"
    return f"{v} {entry.get('unit', '')}".strip()


def write_summary(run_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.figures import backend_title
    from helpers.plotting import set_plot_defaults

    status = _read(run_dir / "status.json")
    metrics = read_metrics(run_dir).get("notebooks", {}) if (run_dir / METRICS_FILE).exists() else {}
    env = _read(run_dir / "environment.json")
    rows = status.get("notebooks", [])
    lines = [
        f"# Run {run_dir.name}",
        "",
        f"Status: **{status.get('status', 'unknown')}** in {status.get('seconds', '?')} s on backend "
        f"`{env.get('backend')}` ({env.get('device_name')}), torch {env.get('torch')}, "
        f"torch-neuronx {env.get('torch_neuronx') or '—'}, commit {env.get('git_commit') or '—'}, {env.get('date_utc')}.",
        "",
        "| notebook | status | seconds | error |",
        "|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: r["notebook"]):  # the series' order (NN_ before A<n>_), not the run's
        err = (r.get("error") or "").splitlines()[0] if r.get("error") else ""
        cell = f" (cell In[{r['cell']}])" if r.get("cell") is not None else ""
        lines.append(f"| {r['notebook']} | {r['status']} | {r.get('seconds')} | {err}{cell} |")
    warmup = _read(cache_dir(run_dir) / WARMUP_RECORD)
    if warmup:  # series_tools.inductor_warmup: why 04's cold call holds no CPU-feature checks in this run
        lines += [
            "",
            "Before the notebooks, the run copied Inductor's checks of the CPU's vector instructions into its cache "
            f"({'built' if warmup['built'] else 'copied from ' + warmup['from']} in {warmup['seconds']} s; Inductor "
            f"chose {warmup['vector_isa']}): 04's cold call is the lesson's compile without them "
            "(series_tools/inductor_warmup.py).",
        ]
    lines += [
        "",
        "## One value per quantity",
        "The same variant, shape and dtype timed in several notebooks must agree within p10-p90, and so "
        "must the same paired ratio (a ratio and its inverse are one quantity). A "
        "disagreement means either that a notebook changes what it measures (the allocator's state, a "
        "profiler left on, memory held by earlier cells) or that the machine changed between notebooks, "
        "which run minutes apart (unlike the interleaved timings inside one notebook). Run again: the same "
        "notebook off again points to the first; a different one each time, to the second. "
        "`python benchmarks/drift_benchmark.py` measures how far this machine drifts in a minute with "
        "nothing changing. Where a time disagrees, the notes under the table say whether the paired ratios "
        "of that variant in the same notebooks agree (the variants moved together, as on a machine that "
        "ran slower for a while) or not.",
        "",
    ]
    lines += format_consistency(check_consistency(metrics))
    lines += ["", "## Metrics", ""]
    for nb, values in metrics.items():
        lines.append(f"### {nb}")
        lines.append("")
        lines += [f"- {name}: {_fmt(entry)}" for name, entry in values.items()]
        lines.append("")
    if rows:
        set_plot_defaults()
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
        colors = ["#009E73" if r["status"] == "passed" else "#D55E00" for r in rows]
        ax.barh([r["notebook"] for r in rows], [r.get("seconds", 0) for r in rows], color=colors)
        ax.invert_yaxis()
        ax.set_xlabel("wall time (s)")
        ax.set_title(backend_title("Notebook run times (green passed, red failed)", env.get("backend", "?")))
        png = io.BytesIO()  # rendered whole, then written whole: a full disk leaves no 0-byte summary.png
        fig.savefig(png, format="png")
        plt.close(fig)
        write_atomic(run_dir / "summary.png", png.getvalue())
        lines += ["![run times](summary.png)", ""]
    return write_atomic(run_dir / "summary.md", "\n".join(lines) + "\n")
