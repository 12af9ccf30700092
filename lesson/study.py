"""Measure one RMSNorm variant the way every notebook of the case study does.

One method for all variants keeps the comparison fair: the same inputs, the timer (median of N,
device synchronized, no profiler attached) for time per call, then a separate profiled run for
what ran (device operations, allocations, gaps), and the error against the float64 reference.
`save_study` keeps what notebooks 04 and 05 measured in their output folders; `load_study` reads
it back for appendix A3, which checks it.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import torch

from analysis.floor import FloorCheck
from analysis.timing import Timing, time_per_call
from analysis.steps import per_call_summary, step_ops
from analysis.traces import Trace, load_trace
from helpers.backend import Backend
from helpers.errors import SeriesError
from helpers.outputs import write_json

from .profiling import ProfileResult, profile_steps
from .rmsnorm import error_tolerance, max_error, rmsnorm_reference, within_tolerance


@dataclass
class VariantReport:
    name: str
    timing: Timing
    profile: ProfileResult
    trace: Trace
    per_call: dict[str, float]
    max_error: float
    dtype: torch.dtype
    input_bytes: int

    @property
    def tolerance(self) -> float:
        return error_tolerance(self.dtype)

    @property
    def error_ok(self) -> bool:
        return within_tolerance(self.max_error, self.dtype)

    def op_names(self) -> list[str]:
        """The device operations of the last recorded step, in order."""
        return list(step_ops(self.trace)["name"])

    @property
    def cpu_us_per_call(self) -> float:
        """Host time inside the variant's call (its record_function label), per call."""
        row = self.profile.table[self.profile.table["name"] == self.name]
        return float(row["cpu_total_us"].iloc[0] / row["calls"].iloc[0]) if len(row) else math.nan

    @property
    def device_us_per_call(self) -> float:
        """Profiler device time per call; NaN where device time was not captured."""
        if not self.profile.device_time_captured:
            return math.nan
        return self.profile.per_step("self_device_us")

    def row(self) -> dict[str, Any]:
        pc = self.per_call
        return {
            "variant": self.name,
            "time_us": self.timing.median_us,
            "p10_us": self.timing.p10_us,
            "p90_us": self.timing.p90_us,
            "device_us": self.device_us_per_call,
            "cpu_us": self.cpu_us_per_call,
            "device_ops": pc["device_ops_per_call"],
            "allocations": pc.get("allocations_per_call", math.nan),
            "alloc_bytes": pc.get("allocated_bytes_per_call", math.nan),
            "alloc_over_input": pc.get("allocated_bytes_per_call", math.nan) / self.input_bytes,
            "idle_gaps": pc["idle_gaps_per_call"],
            "idle_us": pc["idle_total_us_per_call"],
            "max_error": self.max_error,
            "error_ok": self.error_ok,
        }


def study_variant(
    name: str,
    fn: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor],
    x: torch.Tensor,
    weight: torch.Tensor,
    eps: float,
    backend: Backend,
    out_dir: Path,
    *,
    repeats: int = 15,
    wait: int = 1,
    warmup: int = 3,
    active: int = 5,
    reference: torch.Tensor | None = None,
    timing: Timing | None = None,
) -> VariantReport:
    """Time, profile (with memory) and check one variant on (x, weight).

    Pass `timing` when the variant was already timed, interleaved with the variants it is
    compared with (`analysis.timing.time_interleaved`): one value per quantity in a notebook.
    """
    with torch.no_grad():
        out = fn(x, weight, eps)
        ref = reference if reference is not None else rmsnorm_reference(x, weight, eps)
        err = max_error(out, ref) if out.shape == ref.shape else math.nan
        del out
        if timing is None:
            timing = time_per_call(lambda: fn(x, weight, eps), backend, label=name, repeats=repeats)
        profile = profile_steps(
            lambda: fn(x, weight, eps),
            backend,
            out_dir,
            label=name,
            wait=wait,
            warmup=warmup,
            active=active,
            profile_memory=True,
            record_shapes=True,
        )
    trace = load_trace(profile.trace_path, backend.name)
    return VariantReport(
        name=name,
        timing=timing,
        profile=profile,
        trace=trace,
        per_call=per_call_summary(trace, memory_device_type=backend.memory_device_type),
        max_error=err,
        dtype=x.dtype,
        input_bytes=x.numel() * x.element_size(),
    )


# ------------------------------------------------------------------ the study as 05 recorded it
STUDY_NOTEBOOK = "05_compare_variants"
STUDY_FILE = "variant_study.json"


@dataclass
class RecordedStudy:
    """What notebook 05 (or 04) measured in one run: per shape, every case's timing (samples
    included) and the copy floor's check (none in 04); per (shape, variant), the profiled row and
    its trace file."""

    folder: Path  # the notebook's output folder in the run
    parameters: dict[str, Any]  # shapes {"small": [tokens, hidden], "large": ...}, dtype, eps
    blocks: dict[str, dict[str, Timing]]
    floors: dict[str, FloorCheck]
    rows: Any  # pandas.DataFrame indexed by (shape, variant): VariantReport.row() and cpu_us_per_call

    def trace(self, shape: str, variant: str) -> Trace:
        """The profiled call's trace, as the notebook wrote it."""
        return load_trace(self.folder / self.rows.loc[(shape, variant), "trace_file"])


def save_study(
    out_dir: Path,
    parameters: dict[str, Any],
    blocks: dict[str, dict[str, Timing]],
    floors: dict[str, FloorCheck],
    reports: dict[tuple[str, str], VariantReport],
) -> None:
    """Keep a notebook's timings, floor checks and profiled rows in `out_dir/variant_study.json`.

    Why: appendix A3 checks the floor and the timings 04 and 05 showed by reading them back; timing
    the variants again would check other numbers, and cost the main job a second large-shape block.
    Returns nothing, so that a cell ending in it shows no stray path."""
    rows = [
        {"shape": s, **r.row(), "trace_file": str(Path(r.profile.trace_path).relative_to(out_dir))}
        for (s, _), r in reports.items()
    ]
    record = {  # lists, not mappings: write_json sorts keys, and the shapes and cases keep 05's order
        "parameters": parameters,
        "shapes": list(blocks),
        "blocks": [{"shape": s, "case": name, **t.record()} for s, block in blocks.items() for name, t in block.items()],
        "floors": [{"shape": s, **asdict(f)} for s, f in floors.items()],
        "rows": rows,
    }
    write_json(Path(out_dir) / STUDY_FILE, record)


def load_study(run_dir: Path, notebook: str = STUDY_NOTEBOOK) -> RecordedStudy:
    """The study `notebook` (05 by default, or 04) kept in the run folder `run_dir` (see save_study).

    Args:
        run_dir: the run folder both notebooks write into.
        notebook: the stem of the notebook that saved the study.

    Raises:
        SeriesError: the notebook has not run into this folder; the message names the command that runs both."""
    folder = Path(run_dir) / notebook
    path = folder / STUDY_FILE
    number = notebook.split("_", 1)[0]
    if not path.is_file():
        raise SeriesError(
            f"no study of notebook {number} in {run_dir}: this appendix checks what {number} measured in the same run folder",
            f'run both into one folder: make run ARGS="--notebooks {number} A3", or run {number} with the OUT_DIR this notebook uses',
        )
    record = json.loads(path.read_text())
    blocks: dict[str, dict[str, Timing]] = {shape: {} for shape in record["shapes"]}
    for t in record["blocks"]:
        blocks[t.pop("shape")][t.pop("case")] = Timing.from_record(t)
    return RecordedStudy(
        folder=folder,
        parameters=record["parameters"],
        blocks=blocks,
        floors={f.pop("shape"): FloorCheck(**f) for f in record["floors"]},
        rows=pd.DataFrame(record["rows"]).set_index(["shape", "variant"]),
    )
