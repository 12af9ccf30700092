"""The Neuron profiler's full JSON export of one NEFF/NTFF pair, read into tables.

The export (`neuron-profile view --output-format json --output-file X.json -n X.neff -s X.ntff`,
docs/NEURON_NOTES.md N36) is one JSON object: a `summary` row of about a hundred counters, the
profiler's own `terminology` for each, per-engine `active_time` intervals, every `instruction`,
every `dma` packet, `layer_summary`, `metadata` and the profiler's `warnings`. A counter's name
does not always say its unit: on the recorded trn2 exports (`data/recorded-neuron/`) the
counters named `*_percent` hold fractions of 1, and the `*_time` counters hold seconds while the
intervals hold nanoseconds. So the reader checks the counters it relies on against the data
they summarise, and every summary row says which unit it has and on what ground.

Facade:
- `load_export(path) -> NeuronExport`: one `.json` or `.json.gz` export;
- `load_exports(root) -> dict[str, NeuronExport]`: every export under a folder, by subfolder;
- `interval_union_ns(starts, ends) -> int` and `merged_intervals(starts, ends)`: the time covered
  by overlapping intervals, as the profiler counts an engine's or the DMA's active time.

Standard library and pandas only.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

# The compute engines of a NeuronCore, as the export's `active_time` names them, in the order the
# device view shows them.
ENGINES = ("tensor", "vector", "scalar", "gpsimd", "sync")

# A checked counter agrees with the data it summarises within this fraction of its own value.
# The recorded trn2 exports agree within 0.11% (engine active times: the intervals are whole
# nanoseconds, the counters are not); 0.5% leaves room for rounding and nothing else.
UNIT_CHECK_TOLERANCE = 0.005

EXPORT_HINT = (
    "export the full profile with `neuron-profile view --output-format json --output-file X.json "
    "-n X.neff -s X.ntff` (summary-json holds the summary only)"
)


class ExportError(ValueError):
    """A file that is not a full Neuron profile export; the message names the fix."""


def interval_union_ns(starts: Iterable[float], ends: Iterable[float]) -> int:
    """The time covered by intervals [start, end), overlaps counted once (ns in, ns out).

    Arguments: starts, ends: equal-length sequences of interval bounds in nanoseconds.
    Returns: the length of their union in nanoseconds.
    """
    return int(sum(end - start for start, end in merged_intervals(starts, ends)))


def merged_intervals(starts: Iterable[float], ends: Iterable[float]) -> list[tuple[float, float]]:
    """Overlapping or touching intervals merged, sorted by start.

    Arguments: starts, ends: equal-length sequences of interval bounds (any one unit).
    Returns: a list of (start, end) with no two overlapping.
    """
    merged: list[list[float]] = []
    for start, end in sorted(zip(starts, ends)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def _unit_from_name(name: str, value: Any) -> str:
    """The unit a counter's name implies; the checks in `_unit_checks` confirm the ones used."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "text"
    rules = (
        ("_percent", "fraction of 1"),
        ("_time_ns", "ns"),
        ("_time", "s"),
        ("_bytes", "bytes"),
        ("_size", "bytes"),
        ("_count", "count"),
        ("_cycles", "cycles"),
        ("flops", "FLOP"),
    )
    for suffix, unit in rules:
        if name.endswith(suffix):
            return unit
    if name in ("mm_arithmetic_intensity", "peak_flops_bandwidth_ratio"):
        return "FLOP/byte"
    return ""


@dataclass(frozen=True)
class NeuronExport:
    """One full export. Times in the tables are nanoseconds from the start of the capture.

    summary: name, value, unit, unit_basis, group, meaning (one row per counter; `meaning` is
        the file's own terminology, `unit_basis` says whether the unit was checked here);
    engine_intervals: engine, start_ns, end_ns, duration_ns, subgraph, physical_core;
    instructions: engine, opcode, start_ns, end_ns, duration_ns, subgraph, hbm_read_bytes,
        hbm_write_bytes;
    dma: start_ns, end_ns, duration_ns, bytes, queue_type, queue, dma_engine, subgraph, variable;
    layers: name, start_ns, end_ns, duration_ns (the export's layer_summary);
    warnings: category, message (what the profiler says is missing from this capture);
    unit_checks: counter, unit, checked_against, counter_value, from_data, relative_difference, holds;
    metadata: the export's metadata row (clock, HBM bandwidth, is_simulation, ...).
    """

    path: Path
    summary: pd.DataFrame
    engine_intervals: pd.DataFrame
    instructions: pd.DataFrame
    dma: pd.DataFrame
    layers: pd.DataFrame
    warnings: pd.DataFrame
    unit_checks: pd.DataFrame
    metadata: dict[str, Any]

    def counter(self, name: str) -> Any:
        """The value of one summary counter (its unit: `summary.loc[name, "unit"]`)."""
        if name not in self.summary.index:
            raise KeyError(f"{self.path.name} has no summary counter {name!r}")
        return self.summary.at[name, "value"]

    @property
    def total_time_ns(self) -> float:
        """The capture's on-device duration (summary `total_time`, in seconds in the file)."""
        return float(self.counter("total_time")) * 1e9

    def engine_utilisation(self) -> pd.DataFrame:
        """Per engine: active time (ns) and its fraction of the total time, from the counters.

        Returns a DataFrame indexed by engine with active_ns and fraction (the file's
        `<engine>_engine_active_time` and `..._percent`, whose units `unit_checks` confirmed).
        """
        rows = {
            e: {
                "active_ns": float(self.counter(f"{e}_engine_active_time")) * 1e9,
                "fraction": float(self.counter(f"{e}_engine_active_time_percent")),
            }
            for e in ENGINES
        }
        return pd.DataFrame(rows).T.rename_axis("engine")

    def hbm_instructions(self) -> pd.DataFrame:
        """The instructions that read or wrote HBM (the DMA-issuing ones), with their bytes.

        Returns a DataFrame: engine, opcode, start_ns, hbm_read_bytes, hbm_write_bytes; their
        sums equal the summary's hbm_read_bytes and hbm_write_bytes (checked in `unit_checks`).
        """
        moved = self.instructions[(self.instructions["hbm_read_bytes"] > 0) | (self.instructions["hbm_write_bytes"] > 0)]
        return moved[["engine", "opcode", "start_ns", "hbm_read_bytes", "hbm_write_bytes"]].reset_index(drop=True)


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise ExportError(f"No Neuron profile export at {path}: {EXPORT_HINT}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ExportError(f"{path} is not a JSON export ({exc}): {EXPORT_HINT}") from exc
    missing = [k for k in ("summary", "terminology", "active_time", "instruction", "dma") if k not in data]
    if not isinstance(data, dict) or missing:
        raise ExportError(f"{path} is not a full Neuron profile export (no {', '.join(missing)}): {EXPORT_HINT}")
    return data


def _summary(data: dict[str, Any]) -> pd.DataFrame:
    (row,) = data["summary"]
    terms = data["terminology"][0] if data["terminology"] else {}
    groups = data.get("summary_groups", [{}])[0] if data.get("summary_groups") else {}
    rows = []
    for name, value in row.items():
        meaning = terms.get(name, "")
        unit = _unit_from_name(name, value)
        basis = "terminology" if unit == "s" and "Units are in seconds" in meaning else ("name" if unit else "")
        rows.append(
            {"name": name, "value": value, "unit": unit, "unit_basis": basis, "group": groups.get(name, ""), "meaning": meaning}
        )
    return pd.DataFrame(rows).set_index("name")


def _engine_intervals(data: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(data["active_time"])
    if df.empty:
        return pd.DataFrame(columns=["engine", "start_ns", "end_ns", "duration_ns", "subgraph", "physical_core"])
    df = df.rename(columns={"start_ts": "start_ns", "end_ts": "end_ns", "pcore_idx": "physical_core"})
    df["duration_ns"] = df["end_ns"] - df["start_ns"]
    return df[["engine", "start_ns", "end_ns", "duration_ns", "subgraph", "physical_core"]].sort_values(
        "start_ns", ignore_index=True
    )


def _instructions(data: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(data["instruction"])
    out = pd.DataFrame(
        {
            "engine": df.get("label"),
            "opcode": df.get("opcode"),
            "start_ns": df.get("timestamp"),
            "duration_ns": df.get("duration"),
            "subgraph": df.get("subgraph"),
        }
    )
    out["end_ns"] = out["start_ns"] + out["duration_ns"]
    for col in ("hbm_read_bytes", "hbm_write_bytes"):  # absent or "" on instructions that move no HBM data
        out[col] = pd.to_numeric(df[col], errors="coerce").fillna(0).astype("int64") if col in df else 0
    return out.sort_values("start_ns", ignore_index=True)


def _dma(data: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(data["dma"])
    cols = ["start_ns", "end_ns", "duration_ns", "bytes", "queue_type", "queue", "dma_engine", "subgraph", "variable"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    df = df.rename(columns={"timestamp": "start_ns", "duration": "duration_ns", "transfer_size": "bytes", "dma_queue": "queue"})
    df["end_ns"] = df["start_ns"] + df["duration_ns"]
    return df[cols].sort_values("start_ns", ignore_index=True)


def _layers(data: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(data.get("layer_summary", []))
    if df.empty:
        return pd.DataFrame(columns=["name", "start_ns", "end_ns", "duration_ns"])
    df = df.rename(columns={"start": "start_ns", "end": "end_ns", "duration": "duration_ns"})
    return df[["name", "start_ns", "end_ns", "duration_ns"]].sort_values("start_ns", ignore_index=True)


def _unit_checks(summary: pd.DataFrame, intervals: pd.DataFrame, instructions: pd.DataFrame, dma: pd.DataFrame) -> pd.DataFrame:
    """Each counter the series relies on, set against the data it summarises."""
    value = lambda name: float(summary.at[name, "value"])  # noqa: E731
    total_s = value("total_time")
    rows = []

    def check(counter: str, unit: str, against: str, from_data: float) -> None:
        counted = value(counter)
        diff = abs(counted - from_data) / abs(counted) if counted else abs(from_data)
        rows.append(
            {
                "counter": counter,
                "unit": unit,
                "checked_against": against,
                "counter_value": counted,
                "from_data": from_data,
                "relative_difference": diff,
                "holds": diff <= UNIT_CHECK_TOLERANCE,
            }
        )

    for engine in ENGINES:
        lane = intervals[intervals["engine"] == engine]
        union_s = interval_union_ns(lane["start_ns"], lane["end_ns"]) * 1e-9
        check(
            f"{engine}_engine_active_time",
            "s",
            f"union of the {engine} active_time intervals (ns, both physical cores) x 1e-9",
            union_s,
        )
        check(
            f"{engine}_engine_active_time_percent",
            "fraction of 1",
            f"union of the {engine} intervals / total_time",
            union_s / total_s,
        )
    dma_s = interval_union_ns(dma["start_ns"], dma["end_ns"]) * 1e-9
    check("dma_active_time", "s", "union of the DMA packets' intervals (ns) x 1e-9", dma_s)
    check("dma_active_time_percent", "fraction of 1", "union of the DMA packets' intervals / total_time", dma_s / total_s)
    for direction in ("read", "write"):
        check(
            f"hbm_{direction}_bytes",
            "bytes",
            f"sum of the instructions' hbm_{direction}_bytes",
            float(instructions[f"hbm_{direction}_bytes"].sum()),
        )
    return pd.DataFrame(rows)


def load_export(path: Path | str) -> NeuronExport:
    """Read one full Neuron profile export and check the counters the series uses.

    Arguments: path: a `.json` or `.json.gz` file written by `neuron-profile view --output-format json`.
    Returns: a NeuronExport (tables described on the class). A counter whose check holds has
        `unit_basis` "checked: <what it was set against>" in `summary`; one whose check fails
        has "CHECK FAILED: ..." there, and `unit_checks.holds` is False for it.
    Raises: ExportError naming the fix when the file is missing, not JSON, or not a full export.
    """
    path = Path(path)
    data = _read_json(path)
    summary = _summary(data)
    intervals, instructions, dma = _engine_intervals(data), _instructions(data), _dma(data)
    checks = _unit_checks(summary, intervals, instructions, dma)
    for row in checks.itertuples():
        verdict = "checked" if row.holds else "CHECK FAILED"
        summary.loc[row.counter, ["unit", "unit_basis"]] = [row.unit, f"{verdict}: {row.checked_against}"]
    warnings = pd.DataFrame(data.get("warnings", []), columns=["category", "message"])
    metadata = data.get("metadata", [{}])[0] if data.get("metadata") else {}
    return NeuronExport(
        path=path,
        summary=summary,
        engine_intervals=intervals,
        instructions=instructions,
        dma=dma,
        layers=_layers(data),
        warnings=warnings,
        unit_checks=checks,
        metadata=metadata,
    )


def load_exports(root: Path | str, pattern: str = "*/*_profile_full.json*") -> dict[str, NeuronExport]:
    """Every full export under `root`, keyed by the name of the folder holding it.

    Arguments: root: a folder such as data/recorded-neuron; pattern: the glob that finds exports.
    Returns: {folder name: NeuronExport}, sorted by folder name.
    Raises: ExportError when none is found.
    """
    root = Path(root)
    paths = sorted(root.glob(pattern))
    if not paths:
        raise ExportError(f"No Neuron profile export matches {root}/{pattern}: {EXPORT_HINT}")
    return {p.parent.name: load_export(p) for p in paths}


__all__ = [
    "ENGINES",
    "UNIT_CHECK_TOLERANCE",
    "ExportError",
    "NeuronExport",
    "interval_union_ns",
    "load_export",
    "load_exports",
    "merged_intervals",
]
