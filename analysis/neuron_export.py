"""The Neuron profiler's full JSON export of one NEFF/NTFF pair, read into tables.

The export (`neuron-explorer view --output-format json --output-file X.json -n X.neff -s X.ntff`;
the recorded files were written by its predecessor `neuron-profile` 2.28; docs/NEURON_NOTES.md N36)
is one JSON object: a `summary` row of about a hundred counters, the profiler's own `terminology`
for each, per-engine `active_time` intervals, every `instruction`, every `dma` packet,
`layer_summary`, `metadata` and the profiler's `warnings`. A counter's name does not say its
unit, and the vendor's documents disagree with the files: the Parquet schema gives `*_percent`
the unit "percent", while the recorded trn2 exports (`data/recorded-neuron/`) hold fractions of 1
there. So the unit is decided per file, by setting the counters against the data they summarise
(an engine's active-time fraction against the union of its intervals), never by a counter's name;
a file whose counters match neither unit is refused where a figure depends on them, with the
counter named. Neuron 2.34 renamed some counters (N33): a counter is read under either name.

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
    "export the full profile with `neuron-explorer view --output-format json --output-file X.json "
    "-n X.neff -s X.ntff` (Neuron 2.33 is the last release that supports this JSON; summary-json holds the "
    "summary only; docs/NEURON_NOTES.md N36)"
)

# A `*_percent` counter is a fraction of the time (or size) it describes, written either as a
# fraction of 1 (the recorded exports) or as a percentage (the Parquet schema's unit). The factor
# turns a fraction of 1 into the file's unit.
PERCENT_UNITS = {"fraction of 1": 1.0, "percent": 100.0}

# Neuron 2.34 (announcement "end of support for deprecated Neuron Explorer Summary fields"): each
# old name and the new name documented as holding the same value. `packet_hbm_*_bytes` are
# documented as "more accurate", so a different value: never read in place of the old name.
SAME_VALUE_NAMES = {
    "hbm_read_bytes": "instruction_hbm_read_bytes",
    "hbm_write_bytes": "instruction_hbm_write_bytes",
    "mbu_estimated_percent": "hbm_mbu_estimated_percent",
}

# Counters documented as 0 when their input is missing, not measured as 0 (Parquet schema
# reference, Summary table; the recorded files' own terminology says the same).
ZERO_WHEN_MISSING = {
    "mfu_hlo_estimated_percent": "HLO stats are missing, which is the case for NKI kernels",
    "mfu_hlo_max_achievable_estimated_percent": "HLO stats are missing, which is the case for NKI kernels",
}


class ExportError(ValueError):
    """A file that is not a full Neuron profile export, or one whose data contradicts itself; the
    message names the field and the fix."""


class MissingCounterError(ExportError, KeyError):
    """A summary counter that the file does not hold (under either of its names). A KeyError too,
    so that code written against the earlier reader keeps working."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


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
    """The unit a counter's name suggests; `_percent` is left to the file's check (`load_export`)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "text"
    rules = (
        ("_percent", "per file"),
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


def _other_name(name: str) -> str | None:
    """The 2.34 name of an old counter name, or the old name of a 2.34 one (SAME_VALUE_NAMES)."""
    if name in SAME_VALUE_NAMES:
        return SAME_VALUE_NAMES[name]
    return next((old for old, new in SAME_VALUE_NAMES.items() if new == name), None)


def _name_in(summary: pd.DataFrame, name: str) -> str | None:
    """The name under which `summary` holds a counter: `name` or its other name, else None."""
    return next((n for n in (name, _other_name(name)) if n is not None and n in summary.index), None)


@dataclass(frozen=True)
class NeuronExport:
    """One full export. Times in the tables are nanoseconds from the start of the capture.

    summary: name, value, unit, unit_basis, group, meaning (one row per counter; `meaning` is
        the file's own terminology, `unit_basis` says what the unit rests on: a check against
        the data, the file's decided percent unit, or the name);
    engine_intervals: engine, start_ns, end_ns, duration_ns, subgraph, physical_core;
    instructions: engine, opcode, start_ns, end_ns, duration_ns, subgraph, hbm_read_bytes,
        hbm_write_bytes;
    dma: start_ns, end_ns, duration_ns, bytes, queue_type, queue, dma_engine, subgraph, variable,
        duplicate (the packet's own `duplicate` field set to anything but "no");
    layers: name, start_ns, end_ns, duration_ns (the export's layer_summary);
    warnings: category, message (what the profiler says is missing from this capture);
    unit_checks: counter, unit, checked_against, counter_value, from_data, relative_difference, holds;
    metadata: the export's metadata row (clock, HBM bandwidth, is_simulation, ...);
    percent_unit: "fraction of 1" or "percent", as this file's checked `*_percent` counters show,
        or None when they match neither (then `fraction` and `engine_utilisation` refuse).
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
    percent_unit: str | None = "fraction of 1"

    def counter_name(self, name: str) -> str:
        """The name under which this file holds a counter: `name`, or its 2.34 equivalent (N33).

        Raises: MissingCounterError naming the counter (and its other name) when neither is there.
        """
        found = _name_in(self.summary, name)
        if found is not None:
            return found
        other = _other_name(name)
        also = f" (nor {other!r}, its name in the other Neuron Explorer version)" if other else ""
        raise MissingCounterError(
            f"{self.path.name} has no summary counter {name!r}{also}: re-export the profile with the Neuron Explorer "
            "that captured it, or read the counters it has (`summary.index`)"
        )

    def counter(self, name: str) -> Any:
        """The value of one summary counter, under its old or its Neuron 2.34 name (its unit:
        `summary.loc[counter_name(name), "unit"]`)."""
        return self.summary.at[self.counter_name(name), "value"]

    def fraction(self, name: str) -> float:
        """A `*_percent` counter as a fraction of 1, whatever unit this file writes it in.

        Raises: ExportError when the file's percent counters matched neither unit in `unit_checks`.
        """
        if not name.endswith("_percent"):
            raise ValueError(f"{name!r} is not a *_percent counter")
        value = float(self.counter(name))
        if self.percent_unit is None:
            failed = self.unit_checks[~self.unit_checks["holds"]]
            why = "; ".join(f"{r.counter}: {r.checked_against}" for r in failed.itertuples())
            raise ExportError(
                f"{self.path.name}: the *_percent counters do not agree with the intervals they summarise in one unit "
                f"(fraction of 1 or percent), so {name} = {value} cannot be read as a fraction. Failed: {why}. "
                "Re-export the profile; the counters and the intervals do not describe the same capture"
            )
        return value / PERCENT_UNITS[self.percent_unit]

    @property
    def total_time_ns(self) -> float:
        """The capture's on-device duration (summary `total_time`, in seconds in the file)."""
        return float(self.counter("total_time")) * 1e9

    def engine_utilisation(self) -> pd.DataFrame:
        """Per engine: active time (ns) and its fraction of the total time, from the counters.

        Returns a DataFrame indexed by engine with active_ns, fraction (always a fraction of 1)
        and file_unit (the unit the file wrote the `..._percent` counter in, decided by the
        interval checks: "percent" means the value was divided by 100 here).
        Raises: ExportError naming the counters when the checks matched neither unit.
        """
        rows = {
            e: {
                "active_ns": float(self.counter(f"{e}_engine_active_time")) * 1e9,
                "fraction": self.fraction(f"{e}_engine_active_time_percent"),
                "file_unit": self.percent_unit,
            }
            for e in ENGINES
        }
        return pd.DataFrame(rows).T.rename_axis("engine").astype({"active_ns": float, "fraction": float})

    def hbm_instructions(self) -> pd.DataFrame:
        """The instructions that read or wrote HBM (the DMA-issuing ones), with their bytes.

        Returns a DataFrame: engine, opcode, start_ns, hbm_read_bytes, hbm_write_bytes; their
        sums equal the summary's hbm_read_bytes and hbm_write_bytes (checked in `unit_checks`).
        """
        moved = self.instructions[(self.instructions["hbm_read_bytes"] > 0) | (self.instructions["hbm_write_bytes"] > 0)]
        return moved[["engine", "opcode", "start_ns", "hbm_read_bytes", "hbm_write_bytes"]].reset_index(drop=True)

    def dma_bytes(self, include_duplicates: bool = False) -> int:
        """Bytes of the DMA packets, each moved once: packets the export marks as duplicates are
        left out unless asked for (docs/NEURON_NOTES.md N51)."""
        kept = self.dma if include_duplicates else self.dma[~self.dma["duplicate"]]
        return int(kept["bytes"].sum())

    def counter_notes(self) -> dict[str, str]:
        """What a counter's value means where the value alone misleads: a counter documented as 0
        when its input is missing (`mfu_hlo_estimated_percent`: no HLO stats, as for NKI kernels),
        and duplicated DMA packets. Returns {counter or table: one sentence}."""
        notes = {}
        for name, reason in ZERO_WHEN_MISSING.items():
            if name in self.summary.index and self.summary.at[name, "value"] == 0:
                notes[name] = f"0 because {reason} (documented), not a measured 0% utilisation"
        duplicates = int(self.dma["duplicate"].sum())
        if duplicates:
            notes["dma"] = (
                f"{duplicates} of {len(self.dma)} DMA packets are marked duplicate "
                f"({self.dma_bytes(True) - self.dma_bytes():,} bytes): dma_bytes() counts each transfer once"
            )
        return notes


def _read_json(path: Path) -> dict[str, Any]:
    if path.is_dir():
        raise ExportError(f"{path} is a folder, not an export file: {EXPORT_HINT}")
    if not path.exists():
        raise ExportError(f"No Neuron profile export at {path}: {EXPORT_HINT}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ExportError(f"{path} is not a JSON export ({exc}): {EXPORT_HINT}") from exc
    if not isinstance(data, dict):
        raise ExportError(f"{path} is not a full Neuron profile export (a {type(data).__name__}, not an object): {EXPORT_HINT}")
    missing = [k for k in ("summary", "terminology", "active_time", "instruction", "dma") if k not in data]
    if missing:
        raise ExportError(f"{path} is not a full Neuron profile export (no {', '.join(missing)}): {EXPORT_HINT}")
    return data


def _summary(path: Path, data: dict[str, Any]) -> pd.DataFrame:
    rows_in_file = data["summary"]
    if not isinstance(rows_in_file, list) or len(rows_in_file) != 1 or not isinstance(rows_in_file[0], dict):
        n = len(rows_in_file) if isinstance(rows_in_file, list) else type(rows_in_file).__name__
        raise ExportError(f"{path.name}: field 'summary' must hold one row of counters, it holds {n}: {EXPORT_HINT}")
    (row,) = rows_in_file
    if not row:
        raise ExportError(f"{path.name}: field 'summary' is empty (no counters): {EXPORT_HINT}")
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


def _table(path: Path, data: dict[str, Any], field: str, required: tuple[str, ...]) -> pd.DataFrame:
    """One list-of-rows field as a DataFrame, refused with the field and column named when a row
    lacks a column the reader needs or holds a non-number there."""
    rows = data[field]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ExportError(f"{path.name}: field {field!r} must be a list of rows: {EXPORT_HINT}")
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for column in required:
        if column not in df or df[column].isna().any():
            n = len(df) if column not in df else int(df[column].isna().sum())
            raise ExportError(f"{path.name}: {n} of the {len(df)} rows of {field!r} have no {column!r}: {EXPORT_HINT}")
    return df


def _numbers(path: Path, df: pd.DataFrame, field: str, columns: tuple[str, ...]) -> None:
    for column in columns:
        converted = pd.to_numeric(df[column], errors="coerce")
        if converted.isna().any():
            bad = df.loc[converted.isna(), column].iloc[0]
            raise ExportError(f"{path.name}: {field!r} holds a non-number in {column!r} ({bad!r}): {EXPORT_HINT}")
        df[column] = converted


def _engine_intervals(path: Path, data: dict[str, Any]) -> pd.DataFrame:
    df = _table(path, data, "active_time", ("engine", "start_ts", "end_ts", "pcore_idx"))
    if df.empty:
        return pd.DataFrame(columns=["engine", "start_ns", "end_ns", "duration_ns", "subgraph", "physical_core"])
    _numbers(path, df, "active_time", ("start_ts", "end_ts"))
    backwards = df[df["end_ts"] < df["start_ts"]]
    if len(backwards):
        first = backwards.iloc[0]
        raise ExportError(
            f"{path.name}: {len(backwards)} 'active_time' intervals end before they start (first: {first['engine']} "
            f"{first['start_ts']} -> {first['end_ts']}): {EXPORT_HINT}"
        )
    df = df.rename(columns={"start_ts": "start_ns", "end_ts": "end_ns", "pcore_idx": "physical_core"})
    if "subgraph" not in df:
        df["subgraph"] = ""
    df["duration_ns"] = df["end_ns"] - df["start_ns"]
    return df[["engine", "start_ns", "end_ns", "duration_ns", "subgraph", "physical_core"]].sort_values(
        "start_ns", ignore_index=True
    )


def _instructions(path: Path, data: dict[str, Any]) -> pd.DataFrame:
    df = _table(path, data, "instruction", ("timestamp", "duration"))
    if not df.empty:
        _numbers(path, df, "instruction", ("timestamp", "duration"))
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


def _dma(path: Path, data: dict[str, Any]) -> pd.DataFrame:
    df = _table(path, data, "dma", ("timestamp", "duration", "transfer_size"))
    cols = ["start_ns", "end_ns", "duration_ns", "bytes", "queue_type", "queue", "dma_engine", "subgraph", "variable"]
    if df.empty:
        return pd.DataFrame(columns=[*cols, "duplicate"])
    _numbers(path, df, "dma", ("timestamp", "duration", "transfer_size"))
    df = df.rename(columns={"timestamp": "start_ns", "duration": "duration_ns", "transfer_size": "bytes", "dma_queue": "queue"})
    for col in cols:
        if col not in df:
            df[col] = ""
    df["end_ns"] = df["start_ns"] + df["duration_ns"]
    # the packet's own flag: "no" on every packet of the recorded exports; anything else is a duplicate (N51)
    flag = df["duplicate"].astype(str).str.strip().str.lower() if "duplicate" in df else pd.Series("no", index=df.index)
    df["duplicate"] = ~flag.isin(["no", "false", "0", ""])
    return df[[*cols, "duplicate"]].sort_values("start_ns", ignore_index=True)


def _layers(data: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(data.get("layer_summary", []))
    if df.empty:
        return pd.DataFrame(columns=["name", "start_ns", "end_ns", "duration_ns"])
    df = df.rename(columns={"start": "start_ns", "end": "end_ns", "duration": "duration_ns"})
    return df[["name", "start_ns", "end_ns", "duration_ns"]].sort_values("start_ns", ignore_index=True)


def _in_file(path: Path, summary: pd.DataFrame, name: str) -> str:
    """The name under which the summary holds a counter the checks need, or ExportError naming it."""
    found = _name_in(summary, name)
    if found is None:
        other = _other_name(name)
        raise ExportError(
            f"{path.name}: summary has no counter {name!r}{f' (nor {other!r})' if other else ''}, which the unit checks "
            f"need: {EXPORT_HINT}"
        )
    return found


def _unit_checks(
    path: Path, summary: pd.DataFrame, intervals: pd.DataFrame, instructions: pd.DataFrame, dma: pd.DataFrame
) -> pd.DataFrame:
    """Each counter the series relies on, set against the data it summarises. A `*_percent`
    counter is tried as a fraction of 1 and as a percentage: the unit it matches is its unit."""

    def value(name: str) -> float:
        raw = summary.at[_in_file(path, summary, name), "value"]
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise ExportError(f"{path.name}: summary counter {name!r} is not a number ({raw!r}): {EXPORT_HINT}") from None

    total_s = value("total_time")
    if total_s <= 0:
        raise ExportError(f"{path.name}: summary counter 'total_time' is {total_s}, not a duration: {EXPORT_HINT}")
    rows = []

    def check(counter: str, units: dict[str, float], against: str, from_data: float) -> None:
        counted = value(counter)
        tried = []
        for unit, scale in units.items():
            expected = from_data * scale
            diff = abs(counted - expected) / abs(counted) if counted else abs(expected)
            tried.append((diff, unit, expected))
        diff, unit, expected = min(tried)
        rows.append(
            {
                "counter": _in_file(path, summary, counter),
                "unit": unit,
                "checked_against": against,
                "counter_value": counted,
                "from_data": expected,
                "relative_difference": diff,
                "holds": diff <= UNIT_CHECK_TOLERANCE,
            }
        )

    for engine in ENGINES:
        lane = intervals[intervals["engine"] == engine]
        union_s = interval_union_ns(lane["start_ns"], lane["end_ns"]) * 1e-9
        check(
            f"{engine}_engine_active_time",
            {"s": 1.0},
            f"union of the {engine} active_time intervals (ns, both physical cores) x 1e-9",
            union_s,
        )
        check(
            f"{engine}_engine_active_time_percent",
            PERCENT_UNITS,
            f"union of the {engine} intervals / total_time",
            union_s / total_s,
        )
    dma_s = interval_union_ns(dma["start_ns"], dma["end_ns"]) * 1e-9
    check("dma_active_time", {"s": 1.0}, "union of the DMA packets' intervals (ns) x 1e-9", dma_s)
    check("dma_active_time_percent", PERCENT_UNITS, "union of the DMA packets' intervals / total_time", dma_s / total_s)
    for direction in ("read", "write"):
        check(
            f"hbm_{direction}_bytes",
            {"bytes": 1.0},
            f"sum of the instructions' hbm_{direction}_bytes",
            float(instructions[f"hbm_{direction}_bytes"].sum()),
        )
    return pd.DataFrame(rows)


def _percent_unit(checks: pd.DataFrame) -> str | None:
    """The unit every checked `*_percent` counter of one file agrees on, or None.

    A counter that matches a unit on its own but not the unit of the file's other `*_percent`
    counters fails here (its row's `holds` set False, `checked_against` says why): one file
    writes one unit, so a counter in another is one the reader cannot trust.
    """
    percent = checks["counter"].str.endswith("_percent")
    held_units = checks.loc[percent & checks["holds"], "unit"].value_counts()
    if held_units.empty:
        return None
    majority = held_units.index[0]
    if len(held_units) > 1 and held_units.iloc[0] == held_units.iloc[1]:
        majority = None  # a tie: no unit for the file
    for i in checks.index[percent & checks["holds"] & (checks["unit"] != majority)]:
        checks.at[i, "holds"] = False
        checks.at[i, "checked_against"] += (
            f" (matches as {checks.at[i, 'unit']}, but this file's other *_percent counters are in {majority})"
            if majority
            else " (the file's *_percent counters are split between fraction of 1 and percent)"
        )
    if majority is None or not checks.loc[percent, "holds"].all():
        return None
    return majority


def load_export(path: Path | str) -> NeuronExport:
    """Read one full Neuron profile export and decide the units of its counters from its data.

    Arguments: path: a `.json` or `.json.gz` file written by `neuron-explorer view --output-format json`
        (or the older `neuron-profile view --output-format json`).
    Returns: a NeuronExport (tables described on the class). A counter whose check holds has
        `unit_basis` "checked: <what it was set against>" in `summary`; one whose check fails
        has "CHECK FAILED: ..." there, and `unit_checks.holds` is False for it. Every other
        `*_percent` counter takes the unit its file's checked ones agree on (`percent_unit`).
    Raises: ExportError naming the field and the fix when the file is missing, a folder, not JSON,
        not a full export, lacks a counter the checks need, or holds malformed intervals.
    """
    path = Path(path)
    data = _read_json(path)
    summary = _summary(path, data)
    intervals, instructions, dma = _engine_intervals(path, data), _instructions(path, data), _dma(path, data)
    checks = _unit_checks(path, summary, intervals, instructions, dma)
    percent_unit = _percent_unit(checks)
    for row in checks.itertuples():
        verdict = "checked" if row.holds else "CHECK FAILED"
        summary.loc[row.counter, ["unit", "unit_basis"]] = [row.unit, f"{verdict}: {row.checked_against}"]
    undecided = summary["unit"] == "per file"
    summary.loc[undecided, "unit"] = percent_unit or "unknown"
    summary.loc[undecided, "unit_basis"] = (
        f"this file's checked *_percent counters are in {percent_unit}"
        if percent_unit
        else "undecided: this file's checked *_percent counters match neither unit"
    )
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
        percent_unit=percent_unit,
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
    "PERCENT_UNITS",
    "SAME_VALUE_NAMES",
    "UNIT_CHECK_TOLERANCE",
    "ZERO_WHEN_MISSING",
    "ExportError",
    "MissingCounterError",
    "NeuronExport",
    "interval_union_ns",
    "load_export",
    "load_exports",
    "merged_intervals",
]
