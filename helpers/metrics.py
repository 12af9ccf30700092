"""The metrics.json layout: what notebooks publish and what tests, the run folder and `compare`
read back. One layout for a notebook's file and for a run's merged file, and one reader:

    {"backend": "cpu", "notebooks": {"02_naive_rmsnorm": {"time_per_call_us": {"value": 1.2e5,
                                                                               "unit": "us", ...}}}}

A notebook's file holds one notebook; a run's file holds all of them. Every value carries its
unit, a timing its p10/p90, an error its tolerance, and a figure that can regress its direction
(`"better": "lower"`, `"higher"`, or `"true"` for a flag that must stay true) and, for a ratio,
the metrics it divides (`"divides": [numerator, denominator]`), so a file can be judged without
the code that wrote it and without reading its names (`compare` never imports torch and never
parses a metric's name). No torch here either.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

from .errors import SeriesError
from .outputs import write_json

METRICS_FILE = "metrics.json"


BETTER = ("lower", "higher", "true")


def metric(value: Any, unit: str, note: str = "", better: str | None = None, **fields: Any) -> dict[str, Any]:
    """One published figure. NaN becomes None, so the JSON stays standard.

    `better` says which way is good ("lower", "higher", or "true" for a flag): `compare` judges
    a figure that carries it, and only lists one that does not."""
    if isinstance(value, float) and not math.isfinite(value):
        value = None
    if better is not None and better not in BETTER:
        raise ValueError(f"better={better!r}: one of {BETTER}")
    out: dict[str, Any] = {"value": value, "unit": unit, **({"better": better} if better else {}), **fields}
    if note:
        out["note"] = note
    return out


def timing_metric(timing: Any, note: str = "", of: str = "") -> dict[str, Any]:
    """A time per call (median, µs) with its p10 and p90, so that `compare` can tell a slowdown
    from the run-to-run noise that the run itself measured.

    `of` names the quantity (`quantity(variant, x)`): the same quantity timed in several notebooks
    of one run must agree within its p10-p90, and the run checks that (series_tools.consistency).
    """
    fields = {"p10": timing.p10_us, "p90": timing.p90_us, **_contention_field(timing)}
    if of:
        fields["of"] = of
    return metric(timing.median_us, "us", note, better="lower", **fields)


def _contention_field(measured: Any) -> dict[str, Any]:
    """{"contention": record} where the timing knows whether the machine was busy while it ran
    (analysis.contention); `compare`, the consistency check and the claims read it back."""
    contention = getattr(measured, "contention", None)
    return {"contention": contention.record()} if contention is not None else {}


def quantity(variant: str, x: Any) -> str:
    """What a timing measures, e.g. "naive 8192x4096 float32": the variant, the shape and the dtype of x."""
    return f"{variant} {'x'.join(str(d) for d in x.shape)} {str(x.dtype).removeprefix('torch.')}"


def error_metric(error: float, tolerance: float, note: str = "") -> dict[str, Any]:
    """An error against the float64 reference, stored with the tolerance it is judged by."""
    return metric(error, "relative", note, better="lower", tolerance=tolerance)


def ratio_metric(
    ratio: Any, note: str = "", of: str = "", better: str | None = None, divides: tuple[str, str] | None = None
) -> dict[str, Any]:
    """A paired ratio (analysis.timing.PairedRatio): median of the per-round ratios, with their p10/p90.

    `of` names it like a timing (`quantity("torch.rms_norm / naive", x)`), so that the run compares
    the same ratio across notebooks too: a drifting machine moves times, much less paired ratios.
    `better` makes it a regression check (a ratio to the copy: "lower"; a speed-up: "higher");
    `divides` names the published timings it divides (numerator, denominator), so that `compare`
    can tell a ratio that rose because its denominator fell (the copy floor moved)."""
    return metric(
        ratio.median,
        "ratio",
        note,
        better=better,
        p10=ratio.p10,
        p90=ratio.p90,
        **_contention_field(ratio),
        **({"of": of} if of else {}),
        **({"divides": list(divides)} if divides else {}),
    )


def _check_entries(notebook: str, metrics: dict[str, Any]) -> None:
    for name, entry in metrics.items():
        if not isinstance(entry, dict) or "value" not in entry or "unit" not in entry:
            raise SeriesError(
                f"metric {notebook}/{name} has no value and unit", "build it with helpers.metrics.metric(value, unit)"
            )


def write_metrics(out_dir: Path | str, notebook: str, backend: str, metrics: dict[str, dict[str, Any]]) -> Path:
    """A notebook's metrics.json (one notebook in the series' layout), written atomically."""
    _check_entries(notebook, metrics)
    return write_json(Path(out_dir) / METRICS_FILE, {"backend": backend, "notebooks": {notebook: metrics}})


def read_metrics(path: Path | str) -> dict[str, Any]:
    """A metrics.json (a notebook's or a run's; a folder means its metrics.json), checked for the layout."""
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise SeriesError(f"No metrics file at {path}", "run the notebook (or the series) first") from exc
    except json.JSONDecodeError as exc:
        raise SeriesError(f"{path} is not valid JSON ({exc.msg})", "re-run the notebook that wrote it") from exc
    if not isinstance(data, dict) or not isinstance(data.get("notebooks"), dict):
        raise SeriesError(
            f"{path} is not a metrics file (no 'notebooks' table)", "pass a metrics.json written by a notebook or by `make run`"
        )
    for notebook, metrics in data["notebooks"].items():
        _check_entries(notebook, metrics)
    return data


def merge_metrics(paths: Iterable[Path | str], backend: str) -> dict[str, Any]:
    """One run's metrics: every existing notebook file merged, in the same layout."""
    notebooks: dict[str, Any] = {}
    for path in paths:
        if Path(path).exists():
            notebooks.update(read_metrics(path)["notebooks"])
    return {"backend": backend, "notebooks": notebooks}
