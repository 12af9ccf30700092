"""HTA (HolisticTraceAnalysis, the PyTorch ecosystem's trace analyzer) run on the same trace
files as the series' own analysis, so the two can be read side by side.

`run_hta` runs HTA's temporal breakdown (per rank: the span from the first to the last GPU
event, the idle time in it, compute and non-compute time) and its idle-time breakdown (per
stream: host wait, kernel wait, other), and counts the kernels HTA kept. It records, rather than
hides, what HTA says and where it fails: HTA needs ProfilerStep annotations (without them it
warns and reads the whole trace; with several steps it keeps the GPU events launched before the
last step began) and a GPU stream (a cpu-only trace has none, and the breakdowns raise). Each
failure (loading, or either breakdown) is returned as text in `errors`, each HTA warning in
`messages`.

`side_by_side` puts HTA's figures next to the series' (`device_view.busy_summary`).

HTA is imported when `run_hta` is called, not when this module is: it is in requirements.txt,
not in requirements-neuron.txt.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

HTA_VERSION = "0.5.0"  # the pin in requirements.txt; the comparisons below were checked with it
# Logged by HTA on every parse: timings, not findings
_TIMING_MESSAGES = ("Parsed ", "Overall parsing", "leaving ")
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


@dataclass
class HtaResult:
    """What HTA reported for a set of rank traces; a breakdown is None where HTA raised."""

    temporal: pd.DataFrame | None = None  # per rank: span_us, idle_us, busy_us, compute_us, non_compute_us
    idle: pd.DataFrame | None = None  # per rank and stream: idle_category, idle_time
    device_events: pd.DataFrame | None = None  # per rank: kernels, device_ops (HTA's kept GPU events by category)
    messages: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().strip()
        if not text.startswith(_TIMING_MESSAGES):
            self.messages.append(text)


def run_hta(trace_files: Mapping[int, Path | str]) -> HtaResult:
    """HTA's temporal and idle-time breakdowns of the traces (rank -> file), and its kernel
    counts. Raises ImportError naming the install command when HTA is not installed."""
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as exc:
        raise ImportError(f"HTA is not installed: pip install holistictraceanalysis=={HTA_VERSION}") from exc
    files = {int(rank): str(Path(p).resolve()) for rank, p in trace_files.items()}
    result = HtaResult()
    hta_logger = logging.getLogger("hta")
    collect, saved = _Collect(), (hta_logger.handlers[:], hta_logger.propagate)
    hta_logger.handlers, hta_logger.propagate = [collect], False
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"hta(\.|$)")  # HTA 0.5.0 uses pandas keywords pandas 3.1 deprecates
            try:
                analysis = TraceAnalysis(trace_files=files, trace_dir=str(Path(next(iter(files.values()))).parent))
            except Exception as exc:  # noqa: BLE001  a trace HTA cannot read is a finding too
                result.errors["loading"] = f"{type(exc).__name__}: {exc}"
                return result
            try:
                t = analysis.get_temporal_breakdown(visualize=False).set_index("rank")
                result.temporal = pd.DataFrame(
                    {
                        "span_us": t["kernel_time(us)"],
                        "idle_us": t["idle_time(us)"],
                        "busy_us": t["kernel_time(us)"] - t["idle_time(us)"],
                        "compute_us": t["compute_time(us)"],
                        "non_compute_us": t["non_compute_time(us)"],
                    }
                ).astype(float)
            except Exception as exc:  # noqa: BLE001  what HTA does on this trace is the finding
                result.errors["temporal breakdown"] = f"{type(exc).__name__}: {exc}"
            try:
                idle, _ = analysis.get_idle_time_breakdown(ranks=sorted(files), visualize=False)
                result.idle = idle
            except Exception as exc:  # noqa: BLE001
                result.errors["idle-time breakdown"] = f"{type(exc).__name__}: {exc}"
            result.device_events = _device_events(analysis)
    finally:
        hta_logger.handlers, hta_logger.propagate = saved
        result.messages = collect.messages
    return result


def _device_events(analysis: Any) -> pd.DataFrame:
    """Per rank, the GPU events HTA kept (on a stream), by category: kernels and all device ops."""
    ids = analysis.t.symbol_table.get_sym_id_map()
    rows = {}
    for rank in analysis.t.get_ranks():
        df = analysis.t.get_trace(rank)
        on_stream = df[df["stream"].ge(0)]
        rows[rank] = {
            "kernels": int(on_stream["cat"].eq(ids.get("kernel", -1)).sum()),
            "device_ops": int(on_stream["cat"].isin([ids.get(c, -1) for c in DEVICE_CATEGORIES]).sum()),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("rank")


def side_by_side(series: Mapping[int, Mapping[str, float]], hta: HtaResult) -> pd.DataFrame:
    """One row per rank and figure (span_us, busy_us, idle_us, kernels): the series' value, HTA's,
    and HTA minus the series. `series` maps rank -> `device_view.busy_summary(...)`."""
    rows = []
    for rank, ours in series.items():
        theirs = {}
        if hta.temporal is not None and rank in hta.temporal.index:
            theirs.update(hta.temporal.loc[rank, ["span_us", "busy_us", "idle_us"]].to_dict())
        if hta.device_events is not None and rank in hta.device_events.index:
            theirs["kernels"] = hta.device_events.at[rank, "kernels"]
        for figure in ("span_us", "busy_us", "idle_us", "kernels"):
            h = theirs.get(figure)
            rows.append(
                {
                    "rank": rank,
                    "figure": figure,
                    "series": ours[figure],
                    "HTA": h,
                    "HTA - series": None if h is None else h - ours[figure],
                }
            )
    return pd.DataFrame(rows).set_index(["rank", "figure"])
