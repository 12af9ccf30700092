"""Metrics that notebooks publish and that tests, the run folder and `compare` read back.

Every value carries its unit, so a merged metrics.json can be read without the notebook that
wrote it. Regression checks compare these files, never notebook outputs.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import SeriesError
from .outputs import write_json

METRICS_FILE = "metrics.json"


def metric(value: Any, unit: str, note: str = "") -> dict[str, Any]:
    """One published figure. NaN becomes None, so the JSON stays standard."""
    if isinstance(value, float) and not math.isfinite(value):
        value = None
    out: dict[str, Any] = {"value": value, "unit": unit}
    if note:
        out["note"] = note
    return out


def timing_metric(timing: Any, note: str = "") -> dict[str, Any]:
    """A time per call (median, µs) with its p10 and p90, so that `compare` can tell a slowdown
    from the run-to-run noise that the run itself measured."""
    out = metric(timing.median_us, "us", note)
    out.update(p10=timing.p10_us, p90=timing.p90_us)
    return out


def write_metrics(out_dir: Path | str, notebook: str, backend: str, metrics: dict[str, dict[str, Any]]) -> Path:
    for name, entry in metrics.items():
        if not isinstance(entry, dict) or "value" not in entry or "unit" not in entry:
            raise TypeError(f"metric {name!r} must be built with helpers.metrics.metric(value, unit)")
    return write_json(Path(out_dir) / METRICS_FILE, {"notebook": notebook, "backend": backend, "metrics": metrics})


def read_metrics(path: Path | str) -> dict[str, Any]:
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise SeriesError(f"No metrics file at {path}", "run the notebook (or the series) first") from exc
    except json.JSONDecodeError as exc:
        raise SeriesError(f"{path} is not valid JSON ({exc})", "re-run the notebook that wrote it") from exc
    return data
