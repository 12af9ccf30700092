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
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch

from analysis.floor import SLOW_ROUND, FloorCheck, Ranking, cannot_tell_group, group_word, slow_round_mask, slow_rounds
from analysis.timing import Timing, p10_p90, time_per_call
from analysis.steps import per_call_summary, step_ops
from analysis.traces import Trace, load_trace
from analysis.verdicts import CANNOT_TELL, CANNOT_TELL_ALONE, EDGE, NO_DIFFERENCE, RESOLUTION, decimals_apart, margin_percent
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


def comparison_metrics(
    reports: dict[tuple[str, str], VariantReport],
    blocks: dict[str, dict[str, Timing]],
    floors: dict[str, FloorCheck],
    rankings: dict[str, Ranking],
    errors: dict[tuple[str, str], dict[str, float]],
    shapes: dict[str, tuple[int, int]],
    dtype: str,
    backend_name: str,
) -> dict[str, Any]:
    """Notebook 05's published metrics: each variant's time, ratio to the copy, pair ratios, ops,
    allocations and errors, each shape's floor check, and the rankings' claims (analysis.claims).

    Why here: the metrics are plumbing for `compare` and the regression checks, not the lesson; one
    call keeps 05 short while the names and figures stay the ones the notebook printed.

    Args:
        reports: (shape, variant) -> the VariantReport of `study_variant`.
        blocks: shape -> the interleaved timings of that shape (copy, triad probe and variants).
        floors: shape -> its FloorCheck; rankings: shape -> its Ranking (`rank_over_floor`).
        errors: (variant, dtype) -> {"error": ..., "of_tolerance": ...}.
        shapes: shape -> (tokens, hidden); dtype: the timing runs' dtype; backend_name: the backend.

    Returns:
        name -> metric (helpers.metric and kin), ready for `session.publish`.
    """
    from analysis.floor import nominal_memory_gb_per_s
    from analysis.timing import paired_ratio
    from helpers.metrics import error_metric, metric, ratio_metric, timing_metric
    from helpers.series import VARIANT_KEYS as k

    rmsnorms = [name for name in k if name != "copy"]
    metrics, (nominal, nominal_source) = {}, nominal_memory_gb_per_s(backend_name)  # None where the device reports none
    for (s, name), r in reports.items():
        key, size = f"{s}_{k[name]}", f"{shapes[s][0]}x{shapes[s][1]} {dtype}"
        metrics[f"{key}_time_us"] = timing_metric(r.timing, of=f"{name} {size}")
        over, divides = paired_ratio(blocks[s], name, "copy"), (f"{key}_time_us", f"{s}_copy_time_us")
        metrics[f"{key}_over_copy"] = ratio_metric(over, "per-round time ratio to the copy", better="lower", divides=divides)
        metrics[f"{key}_device_ops"] = metric(r.per_call["device_ops_per_call"], "ops")
        metrics[f"{key}_alloc_bytes"] = metric(r.per_call.get("allocated_bytes_per_call"), "bytes")
        metrics[f"{key}_device_us"] = metric(r.device_us_per_call, "us", better="lower")
        for a in rmsnorms[: rmsnorms.index(name) if name in rmsnorms else 0]:  # each pair once: a over name
            pair, better = paired_ratio(blocks[s], a, name), "higher" if a == "naive" else None
            metrics[f"{s}_{k[name]}_speedup_over_{k[a]}"] = ratio_metric(pair, "per round", f"{a} / {name} {size}", better)
    for s, f in floors.items():
        metrics[f"{s}_copy_gb_per_s"] = metric(f.copy_gb_per_s, "GB/s", "bytes of x read and written / copy time")
        metrics[f"{s}_triad_gb_per_s"] = metric(f.probe_gb_per_s, "GB/s", "same bytes, triad on preallocated tensors")
        metrics[f"{s}_floor_sound"] = metric(f.ok, "bool", "; ".join(f.problems))
        metrics[f"{s}_copy_over_nominal"] = metric(
            f.copy_gb_per_s / nominal if nominal else None, "fraction", "copy / nominal GB/s"
        )
    metrics["nominal_memory_gb_per_s"] = metric(nominal, "GB/s", nominal_source)
    for (name, err_dtype), err in errors.items():
        metrics[f"err_{err_dtype}_{k[name]}"] = error_metric(err["error"], error_tolerance(getattr(torch, err_dtype)))
    best = rankings["large"].order[0] if rankings["large"].order else None  # the one ranking; none where withheld
    metrics["best_large_variant"] = metric(best, "name", rankings["large"].sentence_with_ties)  # a tie stays a tie
    metrics["best_large_over_copy"] = metric(rankings["large"].over_floor[best].median if best else None, "ratio")
    claims = []
    for s, ranking in rankings.items():
        claims += ranking.claims(lambda n, s=s: f"{s}_{k[n]}_over_copy", lambda a, b, s=s: f"{s}_{k[b]}_speedup_over_{k[a]}")
    metrics["claims"] = metric([c.record() for c in claims], "claims", "the rankings and pair verdicts (analysis.claims)")
    return metrics


def shape_takeaways(
    rankings: dict[str, Ranking],
    floors: dict[str, FloorCheck],
    blocks: dict[str, dict[str, Timing]],
    by_tokens: dict[str, Timing] | None,
    scale: int = 8,
    alloc_over_input: dict[tuple[str, str], float] | None = None,
    ops: dict[tuple[str, str], float] | None = None,
    reports: dict[tuple[str, str], Any] | None = None,
    notes: bool = True,
    bounds: bool = True,
) -> list[str]:
    """Notebook 05's result in words, one block per shape, built only from the run's verdicts.

    Why here: the lesson is the sentence, not the plumbing; every clause is a verdict of
    analysis.verdicts, so no clause assumes how the run came out, and the title's question (overhead-
    or memory-bound) gets an answer or an estimate on every run that was not busy. Per shape, short lines a
    room can read aloud, one clause each: the variant closest to the copy with its ratio (and the verdict's word
    where it is not measurably apart from the copy), the farthest, or, where the ranking was withheld (printed
    above it), what to do and the pair verdicts, which need no copy; the bound, each variant's estimated share as
    printed; and the estimate's basis, the share's formula included, as one footnote line ("* estimated, not measured: ..."),
    every shape's footnotes after every shape's headlines:
    - at a memory-bound shape (assumed by `time_with_floor`, and said so): an estimate of the share of each
      variant's time that moving its bytes takes, its bytes taken as `alloc_over_input` copies' (each
      full-size tensor it allocates is written and read about once) at the copy's rate (the triad's where
      the copy failed its check), per round; memory-bound where that share is over half, else 'not
      memory-bound', so no variant is left without a label (05's exercise 1 judges naive on the same bytes);
    - at any other shape: how much longer each variant took at `scale` times the tokens, timed in one block
      (`by_tokens`, names `name` and `name x{scale}`), and the label from it (`_growth_lines`); it needs no copy,
      so a failed floor leaves it standing. A busy block concludes nothing.

    Args:
        rankings: shape -> its Ranking (`rank_over_floor`); floors: shape -> its FloorCheck.
        blocks: shape -> its interleaved timings (the copy and "triad probe" included).
        by_tokens: the growth block (each variant at 1x and `scale` times the tokens), or None where it was not timed; scale: its token multiple.
        alloc_over_input: (shape, variant) -> bytes allocated per call over the input's (`VariantReport.row`).
        ops: (shape, variant) -> `device_ops`; with `alloc_over_input`, a measured pair of equal ops and
            allocation gets a line saying its cause is not measured (`_same_work`).
        reports: (shape, variant) -> its VariantReport, whose `row()` fills `alloc_over_input` and `ops` (the
            notebook's one call instead of two dict-building lines: plumbing, not the lesson).
        notes: False leaves out the "*" and "†" footnotes (05 explains them in markdown after the output).
        bounds: False leaves out each shape's bound (the growth and the byte shares, with their labels): 05's lesson
            path keeps the ranking and the pairs, A3 prints the bounds (one idea per line for a first reader).

    Returns:
        The lines to print, one verdict each.
    """
    from analysis.timing import paired_ratio
    from analysis.verdicts import judge_ratio, ratio_bound, withheld

    if reports:
        rows = {key: r.row() for key, r in reports.items()}
        alloc_over_input = {key: row["alloc_over_input"] for key, row in rows.items()}
        ops = {key: row["device_ops"] for key, row in rows.items()}
    lines = []
    for s, ranking in rankings.items():
        names = list(ranking.over_floor)
        if ranking.gate:
            pair_verdicts = newer_first(ranking, blocks[s])
            busy = ranking.gate.kind == "busy" or any(v.kind == "busy" for v in pair_verdicts)  # a failed floor is checked first
            said = _RERUN if busy else _PAIRS_ABOVE  # the gate is a busy block or a failed floor
            lines += [f"{ranking.label}: the ranking against the copy is withheld (above); {said}"]
        else:
            first = ranking.order[0]
            v = judge_ratio(ranking.over_floor[first])
            tiers = ranking.tiers()
            tied = len(tiers[0]) > 1  # an inconclusive pair is not a tie
            closest = (
                f"{ranking.tier_phrase(tiers[0], ratios=False)}; {first} at" if tied else f"{first}{ranking.slow_mark(first)},"
            )
            spread = f"p10-p90 {ratio_bound(v.p10)}-{ratio_bound(v.p90)}"
            lines += [
                f"{ranking.label}: closest to the copy: {closest} {v.median:.2f}x the copy's time ({spread}{_against_copy(v)})"
            ]
            if len(tiers) > 1:  # a line of its own: one clause per line
                # farthest first: "naive 3.19x and torch.rms_norm 3.25x" named the nearer one first
                lines += [f"  farthest: {ranking.tier_phrase(tiers[-1][::-1])}"]
        lines += _same_work(newer_first(ranking, blocks[s]), s, ops or {}, alloc_over_input or {})
        if not bounds:
            continue
        if floors[s].memory_bound:
            allocs = {n: (alloc_over_input or {}).get((s, n), math.nan) for n in names}
            lines += [f"  {line}" for line in _memory_bound(ranking, floors[s], blocks[s], allocs, brief=not notes)]
            lines += (
                _bytes_line(ranking, allocs, newer_first(ranking, blocks[s]), {n: (ops or {}).get((s, n)) for n in names})
                if floors[s].ok and ranking.gate is None
                else []
            )
            continue
        if by_tokens is None:
            lines += [f"  {withheld('overhead-bound', 'the fixed + per-token fit was not timed')}"]
            continue
        growth = {n: paired_ratio(by_tokens, f"{n} x{scale}", n) for n in names}
        busy = next((judge_ratio(r) for r in growth.values() if r.busy), None)
        if busy:
            lines += [f"  {busy}"]
            continue
        lines += _growth_lines(growth, scale, notes)
    # the headlines of every shape first, the estimates' footnotes after: 05's block read as too dense to read aloud
    # notes=False: the notebook explains * and † in markdown after the output
    footnotes = [line for line in lines if line.startswith(("  * ", "  † "))]
    return [line for line in lines if line not in footnotes] + footnotes * notes


def _bytes_line(ranking: Ranking, allocs: dict[str, float], pairs: list, ops: dict | None = None) -> list[str]:
    """One line of what the pair verdicts say against `alloc_over_input`, variants of equal allocation (as the table
    rounds it) grouped: whether the least-allocating group is measurably faster than every other variant, and whether
    each group of equal allocation is told apart. Why: "time is ordered as the bytes allocated" read as a finding that
    time follows allocation, from two levels and an inconclusive pair; two levels test no proportion,
    so the line says so; the pair is named and the op counts given where they differ ("the 3.0 pair", "they differ
    in more than allocations" could not be resolved). [] where an allocation is missing or all equal."""
    if not allocs or any(math.isnan(a) for a in allocs.values()):
        return []
    groups: dict[float, list[str]] = {}
    for n in ranking.order:
        groups.setdefault(round(allocs[n], 1), []).append(n)
    if len(groups) < 2:
        return []
    verdict = {frozenset((v.subject, v.reference)): v for v in pairs}

    def faster(a: str, b: str) -> bool:  # a measurably faster than b, by the pair's verdict
        v = verdict.get(frozenset((a, b)))
        return v is not None and v.kind == ("faster" if v.subject == a else "slower")

    least, *rest = sorted(groups)
    lo = groups[least]
    others = [n for a in rest for n in groups[a]]
    many = len(lo) > 1
    fastest = all(faster(a, b) for a in lo for b in others)
    parts = []
    for a, ns in sorted(groups.items(), reverse=True):
        if len(ns) > 1:
            inside = [verdict.get(frozenset((x, y))) for i, x in enumerate(ns) for y in ns[i + 1 :]]
            apart = any(v is not None and v.measurable for v in inside)
            # equal op counts said too, so the recap can say why a withheld share is no finding;
            # "(inconclusive)": beside "3.0 allocated each" the bare words read as "equal time"
            k = {(ops or {}).get(n) for n in ns}
            each = (
                f"{a:.1f} allocated, {next(iter(k)):g} ops each" if len(k) == 1 and None not in k else f"{a:.1f} allocated each"
            )
            tie = all(v is not None and v.within_noise for v in inside)
            # the pair's own verdict word: a spread inside the margin is "no measurable difference", not "cannot be told apart"
            told = "differ" if apart else "show no measurable difference" if tie else "cannot be told apart (inconclusive)"
            parts.append(f"{' and '.join(ns)} ({each}) {told}")
    lead = f"{' and '.join(lo)} ({least:.1f}) {'are' if many else 'is'}{'' if fastest else ' not'} measurably fastest"
    counts = {(ops or {}).get(n) for n in lo}, {(ops or {}).get(n) for n in others}
    if all(len(c) == 1 and None not in c for c in counts) and counts[0] != counts[1]:  # one op count a side
        (k,), (m,) = counts
        lead += f", but {'they also run' if many else 'it also runs'} {k:g} op{'s' * (k != 1)} for {m:g}"
    else:
        lead += ", but the variants differ in more than allocations"
    return [f"  {'; '.join([*parts, lead])}, so this is not a test of time against allocations"]


def _growth_lines(growth: dict[str, Any], scale: int, notes: bool) -> list[str]:
    """The small shape's label from the measured growth alone: `scale` times the tokens took measurably under
    half of `scale` times the time (each variant's per-round ratio over scale / 2, judged by the ratio rule), so
    more than half of the small call's time did not grow with its tokens, where the part that grows grows at least
    in proportion to them. Why: the label rested on a fixed share read from a line at 0 tokens, where nothing is
    measured; a range that reaches scale / 2 is "cannot tell" and gets no label, and one
    measurably above it is not shown overhead-bound by this test (the growth alone bounds the fixed part from below only)."""
    from analysis.verdicts import judge_ratio

    half = scale / 2
    judged = {n: judge_ratio(replace(r, per_round=r.per_round / half)) for n, r in growth.items()}
    took = ", ".join(f"{n} {r.median:.2f}x ({r.p10:.2f}-{r.p90:.2f})" for n, r in growth.items())
    lines = [f"  measured: {scale}x the tokens took {took} the time (per-round median, p10-p90)"]
    groups = {
        f"overhead-bound* (under {half:g}x)": [n for n, v in judged.items() if v.kind == "faster"],
        f"cannot tell (the p10-p90 reaches {half:g}x)": [n for n, v in judged.items() if v.kind not in ("faster", "slower")],
        f"not shown overhead-bound ({half:g}x or more)": [n for n, v in judged.items() if v.kind == "slower"],
    }
    lines += [f"  {label}: {', '.join(names)}" for label, names in groups.items() if names]
    rule = (
        f"  * overhead-bound: {scale:g}x the tokens took measurably under {half:g}x the time, so more than half of the small"
        " call's time did not grow with its tokens (if the part that grows grows at least in proportion to them)"
    )
    return lines + [rule] * notes


def _same_work(pairs: list, shape: str, ops: dict, allocs: dict) -> list[str]:
    """One line per measured pair (faster or slower) whose two variants have the same `device_ops` and
    `alloc_over_input`: a difference these columns do not explain, said so (torch.rms_norm 0.82x
    naive at 7 ops and 3.0 each read as "the fused one wins"; on cpu it runs ATen ops like naive's)."""
    out = []
    for v in pairs:
        a, b = (shape, v.subject), (shape, v.reference)
        same = ops.get(a) is not None and ops.get(a) == ops.get(b)  # allocations as the table rounds them: 3.0037, 3.0027
        same = same and a in allocs and b in allocs and round(allocs[a], 2) == round(allocs[b], 2)
        if v.kind in ("faster", "slower") and same:
            out.append(
                f"  {v.subject} {v.kind} than {v.reference} at the same device_ops ({ops[a]:g}) and alloc_over_input"
                f" ({allocs[a]:.1f}): cause not measured here"
            )
    return out


def quiet_note(machine: str, floor: FloorCheck, block: dict[str, Timing], shape: str) -> str:
    """What a quiet block's line adds where something varied anyway, each as its own short indented line ending in a
    period, after the block's line (which the caller ends with a period); "" where the CPU was busy (the line says so)
    or nothing varied:
    - each round slow (over SLOW_ROUND times its case's median) in most cases, by its index (`_shared_slow_rounds`):
      naming one variant as "varied" hid that round 0 was slow in every case but the copy;
    - the copy that failed its check, and the cases whose p90 is over SLOW_ROUND times their median, grouped by how
      many of their rounds were that slow outside the shared rounds, with where their samples are (05 called a block
      "quiet" beside naive at 2.4x its median in 2 of 15 rounds), then why a verdict may be inconclusive;
    - any case with such a round above a p90 under it, outside the shared rounds (its share line's
      "1 outlier round"), in one clause: on a noisy VM four such cases made four (a run of 05)."""
    if not machine.startswith("quiet"):
        return ""
    slow = {n: slow_round_mask(t) for n, t in block.items()}
    shared = _shared_slow_rounds(slow)
    lines = [
        f"Round {r}{' (the first)' * (r == 0)} took over {SLOW_ROUND:g}x its median in every case{_but(block, named)}."
        for r, named in shared.items()
    ]
    other = {n: int(np.delete(s, list(shared)).sum()) for n, s in slow.items()}  # slow rounds no shared line names
    varied = [n for n, t in block.items() if slow_rounds(t) or (n == "copy" and not floor.ok)]
    said = {n: "the copy" if n == "copy" else n for n in block}  # not "the copy and copy (2 of 15 rounds ...)"
    groups: dict[int, list[str]] = {}
    for n in (n for n in varied if other[n]):  # a case slow in the shared rounds only: their lines say it
        groups.setdefault(other[n], []).append(said[n])
    more = "other" if shared else "some"
    clauses = ["the copy varied"] if not floor.ok and not other.get("copy") else []  # a failed check, however it varied
    if groups:
        counts = "; ".join(f"{k} of {len(slow[varied[0]])} in {', '.join(ns)}" for k, ns in groups.items())
        clauses += [
            f'{more} rounds took over {SLOW_ROUND:g}x their case\'s median: {counts} (samples: blocks["{shape}"][case].samples_us)'
        ]
    lines += [f"The CPU was quiet, yet {' and '.join(clauses)}."] if clauses else []
    if varied:
        timed = (
            f"The copy was timed {floor.measurements} times; the" if floor.measurements > 1 else "The"
        )  # a failed copy is re-timed
        lines += [
            "Cause not measured here; candidates: memory traffic, page faults (A3).",
            f"{timed} verdicts below on {' and '.join(said[n] for n in varied)} include those rounds: where one is inconclusive,"
            " rerun the cell, or raise REPEATS; a rerun may still be inconclusive.",  # named: read as contradicting the lone line
        ]
    elif lines:
        lines[-1] = lines[-1].removesuffix(".") + "; cause not measured."
    lone = {said[n]: other[n] for n in block if n not in varied and other[n]}  # above its p90, so no verdict moves
    rounds = len(next(iter(slow.values()))) if slow else 0  # "naive: 1 of 15 rounds", not "...changes: naive"
    lines += (
        [
            f"{', '.join(f'{n}: {k} of {rounds} rounds' for n, k in lone.items())} took over {SLOW_ROUND:g}x the median;"
            f" outside p10-p90, so no verdict uses {'it' if sum(lone.values()) == 1 else 'them'}."
        ]
        if lone
        else []
    )
    return "".join(f"\n  {line}" for line in lines)


def _but(block: dict[str, Timing], named: set[str]) -> str:
    """ " but the copy and naive": the block's cases not in `named`, or ""."""
    left = ["the copy" if n == "copy" else n for n in block if n not in named]
    return f" but {' and '.join(left)}" if left else ""


def _shared_slow_rounds(slow: dict[str, np.ndarray]) -> dict[int, set[str]]:
    """Each round (sample index) slow (`slow_round_mask`, per case) in most of the block's cases, three at least,
    with the cases slow in it. time_with_floor times every case in the same rounds."""
    counts = np.sum(list(slow.values()), axis=0) if slow else np.zeros(0)
    most = max(3, len(slow) // 2 + 1)
    return {int(r): {n for n, s in slow.items() if s[r]} for r in np.flatnonzero(counts >= most)}


def _against_copy(v: Any) -> str:
    """The closest variant's verdict against the copy, after its p10-p90 and only where it is not measurable:
    CANNOT_TELL_ALONE, said to be inconclusive (05's "1.05x the copy's time, not told apart from it" read as "equal to the
    copy"), "no measurable difference" inside the margin, else the verdict's word; the p10-p90 before it is the reason."""
    if v.measurable:
        return ""
    if v.kind != "no measurable difference":
        return f": {v.word}"  # a reading of too few rounds
    return (
        f": {CANNOT_TELL} from the copy, inconclusive" if v.short_word == CANNOT_TELL_ALONE else f": {v.short_word}"
    )  # its target named


def _bound_lines(
    bound: str,
    what: str,
    shares: dict[str, float],
    share: Any,
    near_one: set[str] = frozenset(),
    spreads: dict[str, tuple[float, float]] | None = None,
    label: str = "byte share",
    rounds: dict[str, np.ndarray] | None = None,
    mark: str = "*",
    slow: dict[str, int] | None = None,
    brief: bool = False,
) -> list[str]:
    """A shape's bound read aloud, one line per verdict kind: who is `bound` (over half the time `what`, each
    share as printed, with its per-round p10-p90 where `spreads` has it); who is not (a name in `near_one`,
    whose time the verdicts do not tell apart from moving its bytes at the reference's rate, counts as bound; no
    line of its own: "not told apart from 1" read as a finding); the undecided; then the estimate's basis as one footnote (`share`, an
    `estimate` verdict). A share whose p10-p90 holds 0.5, or reaches within the ratio rule's margin of it, gets no label:
    touching half is not apart from it, as in a pair verdict. A share whose `rounds` (per-round shares) fall on both sides
    of half says how many fall on the other side: p10 interpolated into a gap between rounds hid a split. One line each, so no clause's "it" points at another line's names.
    `label` names the kind of share ("byte share", "fixed share"): one unnamed "share" read as the other.
    `mark` ties the label to its footnote: "†" for the byte share, so two shapes' footnotes do not both read "*".
    `slow` (`Ranking.slow`): a variant whose time had slow rounds says how many (not that they set an end of the share's range).
    `brief`: the label's definition (`what`) and the 0.5 rule's wording left to the notebook's footnotes, one short
    line per label ("overhead-bound* (over half ...; estimated: ...), fixed share = ..." stopped a room);
    the shares one variant a line, then each label with its names only, as 05's overhead lines (a line
    of 17 numbers never said which variants were memory-bound)."""
    from analysis.verdicts import RESOLUTION, relation_of

    spreads = spreads or {}
    margin = f"{(RESOLUTION - 1) * 100:g}%"
    undecided = [n for n, (lo, hi) in spreads.items() if relation_of(lo / 0.5, hi / 0.5) == "about 1"]  # touching is not apart

    def said(n: str) -> str:
        r = np.asarray((rounds or {}).get(n, []))
        other = int(np.sum(r <= 0.5) if shares[n] > 0.5 else np.sum(r > 0.5)) * (n not in undecided)  # its line says so
        side = "under" if shares[n] > 0.5 else "over"
        # one qualifier per name, in plain words: "(0.57-0.90, 1 outlier round under half) (its range includes 2 slow
        # rounds)" stopped readers; slow rounds, as Ranking.slow_mark, explain the range first
        split = f"; {other} of {r.size} rounds {side} 0.5" if other else ""
        if (slow or {}).get(n):
            # its time's slow rounds, not "set one end of its range": a share is a ratio to the copy, whose rounds
            # may be slow too (both slow rounds of a pair lay outside its p10-p90)
            split = f"; its time had {slow[n]} slow rounds"
            # withheld beside a labelled variant of the same median: the slow rounds are why
            same = [m for m in bound_by if n in undecided and f"{shares[m]:.2f}" == f"{shares[n]:.2f}"]
            split = f"; as {same[0]}'s median, but its time had {slow[n]} slow rounds" if same else split
        return f"{n} {shares[n]:.2f}" + (f" ({spreads[n][0]:.2f}-{spreads[n][1]:.2f}{split})" if n in spreads else "")

    bound_by = [n for n, v in shares.items() if n not in undecided and (n in near_one or round(v, 2) > 0.5)]  # as printed
    listed = ", ".join(map(said, bound_by)) or "none by this estimate"
    rest = ", ".join(said(n) for n in shares if n not in bound_by and n not in undecided)
    basis = share.sentence[share.sentence.index("(estimated") + 1 : -1]  # the verdict's own basis clause
    if brief:  # the shares first, one variant a line, then the labels by name, as the overhead lines
        lines = [f"  {label}{' (median, p10-p90)' if spreads else ''}:", *(f"    {said(n)}" for n in shares)]
        lines += [f"  {bound}{mark} (over 0.5): {', '.join(bound_by) or 'none by this estimate'}"]
        lines += [f"  not {bound}: {', '.join(n for n in shares if n not in bound_by and n not in undecided)}"] if rest else []
        lines += [f"  cannot tell apart from 0.5: {', '.join(undecided)}"] if undecided else []
        return [*lines, f"  {mark} {basis}"]
    lines = [f"  {bound}{mark} (over half the time {what}), {label}{' (p10-p90)' if spreads else ''}: {listed}"]
    lines += [f"  not {bound}: {rest}"] if rest else []
    # no line for shares whose spread reaches 1: "not told apart from 1 (within 5%)" read as a finding;
    # the shares and their p10-p90 above say it
    if undecided:
        lines += [
            f"  cannot tell apart from 0.5 (p10-p90 holds 0.5 or reaches within {margin} of it): {', '.join(map(said, undecided))}"
        ]
    return [*lines, f"  {mark} {basis}"]


def _bytes_evidence(pairs: list, allocs: dict[str, float]) -> list[str]:
    """Where no steady rate is left, what the pairs alone say of bytes: each measurable pair whose variants
    allocate different bytes, its time ratio beside its allocation ratio. Where the ratio rule cannot tell the two
    apart for every such pair, it reads "consistent with memory-bound", never a measurement of it; otherwise the pairs cannot say."""
    from analysis.verdicts import relation_of

    shown = []
    for v in pairs:
        bytes_ratio = allocs.get(v.subject, math.nan) / allocs.get(v.reference, math.nan)
        if v.measurable and bytes_ratio > 0 and abs(math.log(bytes_ratio)) > 0.05:  # NaN compares False: not recorded
            shown.append((v, bytes_ratio))
    if not shown:
        return []
    said = "; ".join(
        f"{v.subject} / {v.reference} {v.median:.2f}x the time (p10-p90 {v.p10:.2f}-{v.p90:.2f}), {b:.2f}x the bytes"
        for v, b in shown
    )
    fits = all(relation_of(v.p10 / b, v.p90 / b) == "about 1" for v, b in shown)  # the ratio rule, its 5% margin included
    word = (
        "consistent with memory-bound, not a measurement of it"
        if fits
        else "time does not follow the bytes in every pair: the pairs cannot say whether it is memory-bound"
    )
    return [f"time against bytes allocated, by the pairs: {said}: {word}"]


def small_order_note(rankings: dict[str, Ranking], blocks: dict[str, dict[str, Timing]]) -> str:
    """05's candidate causes for naive and `torch.rms_norm`'s order at the small shape, only where the pair's verdict
    tells them apart. Why here: markdown offering causes for an order the run did not establish read an
    inconclusive pair as a finding; the pair's verdict decides which sentence prints."""
    pair = next(
        (v for v in newer_first(rankings["small"], blocks["small"]) if {v.subject, v.reference} == {"naive", "torch.rms_norm"}),
        None,
    )
    if pair is None or not pair.measurable:
        return "naive and torch.rms_norm: this run cannot tell them apart at the small shape."
    return (
        "The order of naive and torch.rms_norm at the small shape, possible causes (not measured): torch.rms_norm is one"
        " Python call whose ops C++ dispatches, against naive's six Python calls."
    )


def line_test_answer(by_count: dict[str, Timing], over_line: np.ndarray) -> str:
    """05's exercise 2 verdict, from the arithmetic the solution cell writes: does the line through the two
    smaller token counts predict the largest, with the three medians it rests on.

    Why here: the cell keeps the arithmetic a student can write; the verdict rule (busy, cannot tell apart,
    an upward or downward miss) is the series' plumbing. An upward miss names the label it leaves standing
    ("it stands" had no subject); the label rests on the measured growth alone.

    Args:
        by_count: the block timed at three token counts ("8 tokens", "64 tokens", "512 tokens"), in order.
        over_line: per round, the largest count's time over the line's prediction (9 t8 - 8 t1).

    Returns:
        The three medians (the times the line is drawn through), then the line test's verdict (a median of
        per-round ratios, said so: the ratio of the medians differs) and the
        answer to the yes/no question ("not shown either way" where inconclusive); where the line is not rejected and
        its intercept lies between 0 and the smallest median, that intercept, said as a fit.
    """
    from analysis.timing import PairedRatio
    from analysis.verdicts import judge_ratio

    (n1, _), (n8, _), (n64, _) = by_count.items()
    r1, r8, r64 = (round(t.median_us, 1) for t in by_count.values())  # as printed: a hand check gives the same ratio
    predicted = f" (the line predicts {9 * r8 - 8 * r1:.1f} us for {n64})" if 9 * r8 > 8 * r1 else ""
    medians = "medians: " + ", ".join(f"{n} {t.median_us:.1f} us" for n, t in by_count.items()) + predicted
    fit = judge_ratio(
        PairedRatio(n64, f"the line through {n1} and {n8}", over_line, contention=by_count[n1].contention), "below", "above"
    )
    if fit.kind in ("busy", "withheld"):
        return f"{medians}\n{fit}\nDoes the line predict {n64}? This run cannot say."
    if fit.measurable:
        grows = "faster" if fit.median > 1 else "slower"
        # "faster than the line" read as doubt on the overhead-bound bound, with no cause offered
        # one short sentence a line: the one ~60-word line was 05's densest
        # "not contradicted", not "stands": only 64 -> 512 was timed here, not the growth * rests on
        # the rejected line's intercept and the growth above it: the whole time grew less than the tokens, the rest faster;
        # the intercept comes from two medians through a line the test rejects: not a measured fixed cost, said so
        t1, t8, t64 = (t.median_us for t in by_count.values())
        k1, k8, k64 = (int(n.split()[0]) for n in by_count)  # "8 tokens" -> 8
        slope = (t8 - t1) / (k8 - k1)
        fixed = t1 - slope * k1
        rest = (
            f"\nBy the medians: the rejected line's intercept is {fixed:.0f} us, not a measured fixed cost;"
            f" the rest grew {(t64 - fixed) / (t8 - fixed):.0f}x for {k64 // k8}x the tokens."
            if fixed > 0 and slope > 0
            else ""
        )
        bound = (
            f".{rest}\nA3's overhead-bound label (8x the tokens, under 4x the time) rests on {k1} to {k8} tokens only; this test does not contradict it."
            f"\nNot measured: whether the {n64.replace(' tokens', '-token')} input stays in the cache"
        )
        # the medians' own line gives another ratio (1.80x beside medians that give 2.83x): both, named
        of_medians = f"; of the medians: {r64 / (9 * r8 - 8 * r1):.2f}x" if predicted else ""
        return (
            f"{medians}\nNo: {n64} takes {fit.median:.2f}x the line's prediction (median of per-round ratios,"
            f" p10-p90 {fit.p10:.2f}-{fit.p90:.2f}{of_medians})."
            f"\nBetween {n8.removesuffix(' tokens')} and {n64}, time grows {grows} than the line{bound if fit.median > 1 else ''}."
        )
    # a range that holds 1 counts its rounds on each side: judge_ratio's own words
    # a yes/no question answered "cannot tell apart" read as "yes": inconclusive is neither
    answer = fit.word.capitalize() if fit.within_noise else "Not shown either way (inconclusive)"
    # the line's fixed part, said as a fit: the small-shape time it leaves unexplained by tokens is the page's open question
    (k1, t1), (k8, t8) = ((int(n.split()[0]), t.median_us) for n, t in list(by_count.items())[:2])
    fixed = t1 - (t8 - t1) / (k8 - k1) * k1
    part = f"\nThe line's fixed part: {fixed:.1f} us of the {t1:.1f} us at {n1} (a fit through two medians, not measured)."
    return f"{medians}\n{fit}\nDoes the line predict {n64}? {answer}.{part if 0 < fixed < t1 else ''}"


def reference_reading(reference_dir: Path | None = None, backend: str = "cpu") -> tuple[dict, str]:
    """Notebook 05's metrics in the newest committed reference run of `backend`, with their origin.

    Why: where this run withholds a shape's ranking (its copy failed its check), the page still shows
    one recorded ranking, labelled as another run's, never as this one's.

    Args:
        reference_dir: the folder of committed reference runs (default: helpers.series.REFERENCE_RUNS_DIR).
        backend: whose reference run to read.

    Returns:
        (metric name -> metric record, "recorded on <date> on <machine> by make run <run id> (<folder>), not this
        run"): the run id, since the reference run itself is published into that folder,
        or ({}, "") where no such run, or no 05 metrics in it, is committed. A shape whose copy failed its
        check in that run too has no metrics here: its ratios to the copy are no reading to fall back on.
    """
    from helpers.series import REFERENCE_RUNS_DIR

    runs = sorted(Path(reference_dir or REFERENCE_RUNS_DIR).glob(f"{backend}-*/metrics.json"))  # newest last, as run times
    if not runs:
        return {}, ""
    metrics = json.loads(runs[-1].read_text(encoding="utf-8")).get("notebooks", {}).get(STUDY_NOTEBOOK, {})
    for shape in ("small", "large"):  # a shape whose copy failed its check there too offers no ratio to the copy
        if metrics.get(f"{shape}_floor_sound", {}).get("value") is False:
            kept = f"{shape}_floor_sound"  # kept: it says why the shape's other metrics are gone
            metrics = {k: v for k, v in metrics.items() if k == kept or not k.startswith((f"{shape}_", f"best_{shape}_"))}
    env_file = runs[-1].parent / "environment.json"
    env = json.loads(env_file.read_text(encoding="utf-8")) if env_file.exists() else {}
    machine = f"a {env.get('cpu_count', '?')}-core {env.get('device_name', backend)}"
    where = f"docs/reference-runs/{runs[-1].parent.name}"
    date = str(env.get("date_utc", "?"))
    run_id = f" {date[:19].replace('-', '').replace(':', '')}Z" if len(date) >= 19 else ""  # as the run folder's name
    return metrics, f"recorded on {date[:10]} on {machine} by make run{run_id} ({where}), not this run"


def copies_answer(
    ops: pd.DataFrame,
    ranking: Ranking,
    alloc_over_input: float,
    reference_dir: Path | None = None,
    block: dict[str, Timing] | None = None,
    through: str = "torch.compile",
    brief: bool = False,
) -> str:
    """05's exercise 1 answer as a small table, the pair's reading and one verdict line: naive's full-size passes
    by its source (`ops`), the two byte counts (source, allocation), and naive's time in copies where one is
    measured (this run's ratio to the copy; else the reference run's, labelled), each judged against the counts by
    the ratio rule. The pair `through / naive` gives naive in `through` calls (this run, measured); it reads as
    copies only if `through` is about one copy-like pass, which its ratio to the copy (this run's where the copy
    passed, else the reference run's, labelled) confirms or refutes: the answer says which.

    Args:
        ops: `bytes_per_op` of the naive call (column `copies`: read + written over one copy's bytes).
        ranking: the large shape's Ranking (its `over_floor["naive"]`, naive / copy per round, and `gate`).
        alloc_over_input: naive's allocated bytes over the input's (NaN where not recorded: no model).
        reference_dir: the committed reference runs (default: helpers.series.REFERENCE_RUNS_DIR), read only
            where this run's ranking is withheld.
        block, through: the large shape's timings and the variant the pair divides naive by.
        brief: the table without its words column, then the one verdict line (05's lesson path: a nested
            row and a second verdict stopped first readers); the pair and the cause line left to A3.

    Returns:
        "Answer: 3 full-size writes (pow, mul, mul) + 1 read-only (mean)", then one row per count and per
        reading ("this run, ratio to the copy  3.10  p10-p90 ...  cannot tell apart from the allocation count"), the pair's
        lines where `block` is given, then "Verdict (this run, ratio to the copy): naive's time: ...".
    """
    writes, reads = ops.op[ops.copies >= 1], ops.op[ops.copies.between(0.5, 1, "left")]  # full-size writes; reads only
    models = {"source": float(ops["copies"].sum()), "allocation": alloc_over_input}
    models = {whose: c for whose, c in models.items() if c > 0}  # NaN (not recorded) compares False: no model
    r, gate = ranking.over_floor["naive"], ranking.gate
    metrics, origin = reference_reading(reference_dir) if gate is not None else ({}, "")
    readings, missing = [], []  # (row name, median, p10, p90, what the counts say); why a reading is missing
    if gate is None:
        readings.append(("this run, ratio to the copy", r.median, r.p10, r.p90, *_against_counts(r.p10, r.p90, models)))
    else:
        missing.append("the block was busy" if gate.kind == "busy" else "the copy failed its check")
    pair_lines, pair = [], None
    if block and through in block:
        pair = _copies_through(block, through)
        if isinstance(pair, str):
            pair_lines.append(f"the pair: {pair}")
            pair = None
        else:
            spread = f"p10-p90 {pair[1]:.2f}-{pair[2]:.2f}"
            calls = "compiled-variant" if through == "torch.compile" else through  # not calls to the API
            pair_lines.append(f"the pair (this run, measured): naive takes {pair[0]:.2f} {calls} calls ({spread})")
            one_pass, check = _one_pass(ranking, metrics, through)
            pair_lines.append(check)
            if one_pass and gate is not None:  # the pair read as copies: the only reading of this run
                readings.append(("this run, via the pair (estimate*)", *pair, *_against_counts(pair[1], pair[2], models)))
    if recorded := metrics.get("large_naive_over_copy"):  # the reference run publishes no rounds: its p10-p90 scales alike
        counts = _against_counts(recorded["p10"], recorded["p90"], models)
        readings.append(("reference run (recorded**)", recorded["value"], recorded["p10"], recorded["p90"], *counts))
    ends = tuple(e for _, _, lo, hi, *_ in readings for e in (lo, hi))
    rows = [(f"by {w}", _count_text(c, ends), "", "") for w, c in models.items()]  # as its verdict prints it
    rows += [(n, f"{m:.2f}", copies_spread(lo, hi, models), row) for n, m, lo, hi, _, row, _ in readings]
    width = max(len(row[0]) for row in rows)
    table = [f"  {n:<{width}}  {v:>5}  {spread:<19}  {'' if brief else said}".rstrip() for n, v, spread, said in rows]
    if brief and "allocation" in models:  # the table's words column is dropped: the model, and the margin's ratio
        table.append("  (by allocation: one copy per full-size tensor allocated, A3)")
    for w, c in models.items() if brief and readings else ():  # why each count's verdict reads as it does
        name, _, lo, hi, told, *_ = readings[0]
        if lo / c <= 1 <= hi / c:  # a range that holds 1 does more than reach within the margin of it
            near = "holds 1"
        elif w in told:
            near = f"reaches within {margin_percent()}% of 1"
        else:
            near = f"lies beyond the {margin_percent()}% margin of 1"
        whose = name.split(",")[0].split(" (")[0]  # "this run" or "reference run"
        ends = "-".join(max((decimals_apart(e / c, b) for b in (1 / RESOLUTION, RESOLUTION)), key=len) for e in (lo, hi))
        table.append(f"  {whose} p10-p90 / {_count_text(c, (lo, hi))} ({w}): {ends}, {near}")  # 1.0497, not 1.05
    if readings:
        name, *_, told, _, said = readings[0]
        follows = ": the time cannot say which count it follows" if len(told) > 1 else ""
        whose = "reference run, not this run" if name.startswith("reference") else name.split(" (")[0]
        verdict = f"Verdict ({whose}): naive's time: {said}{follows}"  # the margin is in its row
        if whose == "this run, ratio to the copy" and "inconclusive" in said and (slow := ranking.slow.get("naive")):
            verdict += f" ({slow} slow rounds widen the range)"  # an inconclusive 3.38 vs 3.5 read as "matches"
        if models.get("source") and readings[0][3] < models["source"]:  # the range below the source count: a fact, own line
            verdict += f"\nThe source count {CHEAPER}"
        if "above the allocation count" in said and not brief:  # the byte share's one-clone-per-allocation assumption
            verdict += "\nAbove the allocation count: a full-size op costs more than a clone, or mean's read costs extra;"
            verdict += " the time cannot tell which"
    else:
        verdict = f"Verdict: this run cannot say ({'; '.join(missing)})"
    gap = [f"this run: no reading ({'; '.join(missing)})"] if readings and not readings[0][0].startswith("this run") else []
    notes = (
        ["* estimated, not measured: the pair read as copies"] if any(n.startswith("this run, via") for n, *_ in readings) else []
    )
    if "**" in " ".join(pair_lines) or recorded:
        notes.append(f"** {origin}")
    ops_said = f"{len(writes)} full-size writes ({', '.join(writes)}) + {len(reads)} read-only ({', '.join(reads)})"
    pair_lines = [] if brief else pair_lines
    return "\n".join(
        [f"Answer: {ops_said}; naive's time at the large shape in copies:", *table, *gap, *pair_lines, verdict, *notes]
    )


def _one_pass(ranking: Ranking, metrics: dict, through: str) -> tuple[bool, str]:
    """Whether `through` is about one copy-like pass (its p10-p90 ratio to the copy within the ratio rule's margin
    of 1), by this run's ratio where the copy passed, else the reference run's (labelled **); the line that says so."""
    from analysis.verdicts import RESOLUTION, about_one, ratio_bound, relation_of
    from helpers.series import VARIANT_KEYS

    if ranking.gate is None and through in ranking.over_floor:
        v, whose = ranking.over_floor[through], "this run"
        m, lo, hi = v.median, v.p10, v.p90
    elif "p10" in (ref := metrics.get(f"large_{VARIANT_KEYS.get(through)}_over_copy") or {}):
        m, lo, hi, whose = ref["value"], ref["p10"], ref["p90"], "reference run**"
    else:
        return False, f"unchecked: no ratio of {through} to the copy (this run's failed; no reference run), so not read as copies"
    one = relation_of(lo, hi) == "about 1"
    said = f"{through} is {m:.2f}x the copy ({whose}, p10-p90 {ratio_bound(lo)}-{ratio_bound(hi)}): "
    # "not told apart" used as support read as a finding: only a spread inside the margin on both sides
    # supports reading the pair in copies; an inconclusive one supports nothing
    if about_one(lo, hi) == NO_DIFFERENCE:
        return True, said + f"within {(RESOLUTION - 1) * 100:g}% of one copy-like pass, so the pair also counts naive in copies"
    if one:
        return (
            False,
            said
            + "cannot tell whether it is one copy-like pass: the pair counts naive in compiled calls, in copies only if it is",
        )
    # "not one copy-like pass" said more than a ratio measurably off 1 shows: the ratio says only that
    faster = "faster" if hi < 1 else "slower"
    calls = "compiled-variant" if through == "torch.compile" else through  # as the pair's line names them
    # a p10 of 1.054 against the 1.05 edge flips on another seat: said so
    edge = min(abs(e - b) for e in (lo, hi) for b in (1 / RESOLUTION, RESOLUTION)) < EDGE
    warn = " (at the margin's edge: may read differently on another run)" if edge else ""
    return False, said + f"measurably {faster} than one copy{warn}, so the pair counts {calls} calls, not copies"


def _copies_through(block: dict[str, Timing], through: str) -> tuple[float, float, float] | str:
    """Exercise 1's pair: naive's time in `through` calls (median, p10, p90 over the rounds); where the pair
    gives no number, why."""
    from analysis.timing import paired_ratio
    from analysis.verdicts import judge_ratio

    v = judge_ratio(paired_ratio(block, through, "naive"))  # as the pair table prints it, then inverted
    if v.kind == "busy":
        return f"naive / {through} concludes nothing either (busy)"
    if not v.measurable:
        return f"{through} / naive: {v.word}, so it gives no count"  # the pair table's word
    # naive over `through` round by round, its own percentiles: 1/p10 of the pair table's ratio is not this p90 where
    # p10-p90 are interpolated between uneven rounds (a run printed 2.97-4.70 where the rounds give 2.97-5.50)
    counted = judge_ratio(paired_ratio(block, "naive", through))
    return counted.median, counted.p10, counted.p90


def _against_counts(p10: float, p90: float, models: dict[str, float]) -> tuple[list[str], str, str]:
    """A p10-p90 in copies against each byte count, by the ratio rule (its 5% margin said where it decides).

    Returns:
        The counts the rule does not set apart from the time; the words for the answer's table row, which name
        the margin where it decides; the same words without it, for the verdict line (the margin is in its row).
        A count the whole p10-p90 lies within the margin of reads "no measurable difference", one it only reaches
        CANNOT_TELL (`analysis.verdicts.about_one`: "cannot tell apart" for 3.35-3.56 against 3.5 read as inconclusive).
    """
    from analysis.verdicts import RESOLUTION, about_one, relation_of

    relations = {w: relation_of(p10 / c, p90 / c) for w, c in models.items()}
    told = [w for w, r in relations.items() if r == "about 1"]
    words = {w: about_one(p10 / models[w], p90 / models[w]) for w in told}
    grouped = {word: [w for w in told if words[w] == word] for word in dict.fromkeys(words.values())}
    inconclusive = {CANNOT_TELL: ", inconclusive"}  # as the table's word says it (CANNOT_TELL_ALONE)
    said = "; ".join(f"{word} from the {' or '.join(ws)} count{inconclusive.get(word, '')}" for word, ws in grouped.items())
    # "within the margin of the p10-p90" read as "no measurable difference" for 3.33-3.44 against 3.5:
    # each count the rule does not set apart by its margin only gets its band, at the decimals that place the p10-p90
    parts, verb, whole = [], "", ""
    for w in [w for w in told if not p10 <= models[w] <= p90]:
        # "reaches past the band" said why not "no measurable difference", not why not "below": the side too
        side = f"lies {'below' if p90 < models[w] else 'above'} {_count_text(models[w], (p10, p90))} but reaches into"
        said_now = "lies within" if words[w] == NO_DIFFERENCE else side
        band = f" {(RESOLUTION - 1) * 100:g}% band" if not parts else ""
        whole = ("" if said_now == "lies within" else "whole ") if not parts else whole  # the first count's verb
        parts.append(f"{'' if said_now == verb else said_now + ' '}the {w} count's{band} {_band_text(models[w], p10, p90)}")
        verb = said_now
    margin = f" (the {whole}p10-p90 {' and '.join(parts)})" if parts else ""
    apart = [f"{r.split()[0]} the {w} count" for w, r in relations.items() if r != "about 1"]
    rest = " and ".join(apart)
    if not told:  # apart from every count: each side said
        return told, rest, rest
    return told, said + margin + (f"; {rest}" if rest else ""), said + (f"; {rest}" if rest else "")


# a range below the source count: the reader asked how naive beats "the floor"; two facts on
# their own line after the verdict, not a hedged clause inside it
CHEAPER = (
    "prices mean's read-only pass at half a copy; one possible reason the time lies below it, not tested here: a copy's"
    " time includes allocating its output, which a read does not pay (A3 times that allocation)."
)


def _count_text(count: float, ends: tuple[float, ...]) -> str:
    """A byte count as its table row and its verdict print it: one decimal (3.5 for 3.50079, the per-row tensors'
    bytes included), more only where a p10 or p90 in `ends` lies between the two (3.50079 beside 3.5)."""
    short = f"{count:.1f}"
    return short if not any(min(count, float(short)) <= e <= max(count, float(short)) for e in ends) else f"{count:g}"


def _band_text(count: float, p10: float, p90: float) -> str:
    """A count's ratio-rule band (count / RESOLUTION to count * RESOLUTION), each edge at the decimals that set
    it apart from the p10 and p90 beside it (`copies_spread` prints those alike)."""
    from analysis.verdicts import RESOLUTION, decimals_apart

    edges = (count / RESOLUTION, count * RESOLUTION)
    return "-".join(max((decimals_apart(e, v) for v in (p10, p90)), key=len) for e in edges)


def copies_spread(p10: float, p90: float, models: dict[str, float]) -> str:
    """A reading's "p10-p90 a-b" in copies, each end at the decimals that set it apart from every count's band
    edge: 3.332 against a band from 3.333 does not print as a 3.33 that reads as inside it."""
    from analysis.verdicts import RESOLUTION, decimals_apart

    edges = [e for c in models.values() for e in (c / RESOLUTION, c * RESOLUTION)] or [1.0]
    lo, hi = (max((decimals_apart(v, e) for e in edges), key=len) for v in (p10, p90))
    return f"p10-p90 {lo}-{hi}"


def reference_ranking(shape: str, reference_dir: Path | None = None) -> str:
    """The committed cpu reference run's ranking line of `shape` ("large", "small"), its origin first so it
    is not read as this run's, for a shape whose ranking this run withheld; "" where none is committed."""
    metrics, origin = reference_reading(reference_dir)
    line = metrics.get(f"best_{shape}_variant", {}).get("note", "")
    if metrics.get(f"{shape}_floor_sound", {}).get("value") is False:  # its copy failed there too
        return f"Reference run ({origin}): its {shape} copy failed its check too, so it offers no ranking to fall back on"
    if not line or ", from closest to the copy: " not in line:
        return ""
    from helpers.series import VARIANT_KEYS

    spreads = [(n, metrics.get(f"{shape}_{k}_over_copy", {})) for n, k in VARIANT_KEYS.items() if n != "copy"]
    spread = ", ".join(f"{n} {m['p10']:.2f}-{m['p90']:.2f}" for n, m in spreads if "p10" in m and "p90" in m)
    ranked = _with_ties(line.split(" (median")[0], metrics, shape)
    return f"Reference run ({origin}): {ranked}" + (f" (p10-p90: {spread})" if spread else "")  # label first


def _with_ties(line: str, metrics: dict, shape: str) -> str:
    """A recorded ranking line with its groups the pair verdicts do not tell apart said as such
    (`analysis.cannot_tell_group`), rebuilt from the reference run's own pair metrics, so a note written
    without them (or with the older "a ≈ b") is not read as an order the pair verdicts do not support."""
    import re

    from analysis.verdicts import about_one
    from helpers.series import VARIANT_KEYS as k

    label, ranked = line.split(", from closest to the copy: ")
    named = re.findall(r"(\S+) (\d+(?:\.\d+)?x)", ranked)  # (name, "3.26x") in order, whatever joins them
    groups: list[list[str]] = []
    words: list[list[str]] = []  # each group's pair words (`Verdict.short_word`'s two)
    for name, ratio in named:
        pair = metrics.get(f"{shape}_{k.get(name)}_speedup_over_{k.get(groups[-1][-1][0])}") if groups else None
        pair = pair or (metrics.get(f"{shape}_{k.get(groups[-1][-1][0])}_speedup_over_{k.get(name)}") if groups else None)
        word = about_one(pair["p10"], pair["p90"]) if pair is not None else ""
        if word:
            groups[-1].append((name, ratio))
            words[-1].append(NO_DIFFERENCE if word == NO_DIFFERENCE else CANNOT_TELL_ALONE)
        else:
            groups.append([(name, ratio)])
            words.append([])
    return f"{label}, from closest to the copy: " + ", then ".join(
        cannot_tell_group([f"{n} {r}" for n, r in g], group_word(w)) for g, w in zip(groups, words)
    )


def recap(takeaways: list[str]) -> list[str]:
    """One line per shape for 05's Summary, cut from `shape_takeaways`' lines (no new verdict): the shape's headline
    and its bound labels (not a withheld bound's reason: too long for a recap), parentheses dropped. Why: the Summary
    only pointed at the output."""
    import re

    # a tie keeps its verdict and quotes no one number; a withheld label keeps its slow rounds
    slow = dict(re.findall(r"^    (\S+) .*its time had (\d+) slow rounds", "\n".join(takeaways), re.M))
    # a share withheld beside a labelled one of the same median says so: "naive is less memory-bound"
    found = re.findall(r"^    (\S+) .*as (\S+)'s median, but its time had", "\n".join(takeaways), re.M)
    twin = {n: (m, "median") for n, m in found}
    # a withheld share whose variant has the same ops and allocations as a labelled one: slow rounds split them
    for x, y in re.findall(r"(\S+) and (\S+) \([\d.]+ allocated, [\d.]+ ops each\)", "\n".join(takeaways)):
        twin |= {x: (y, "ops and allocations"), y: (x, "ops and allocations")}
    lines: list[str] = []
    for line in takeaways:
        text = re.sub(r" \((?!cannot tell)[^()]*\)", "", line.strip())
        text = re.sub(r"(\(cannot tell[^()]*\)); [^;]* at [\d.]+x the copy's time", r"\1", text)
        text = text.replace("memory-bound†:", "memory-bound† (estimated):")  # a byte share is an estimate
        if text.startswith("cannot tell") and (said := [f"{n}'s time had {slow[n]}" for n in slow if n in text]):
            same = [
                f"same {twin[n][1]} as {twin[n][0]}; "
                for n in slow
                if n in text and n in twin and twin[n][0] not in text.split(": ")[-1].split(", ")
            ]
            same = same[:1] if len(said) == 1 else []
            text += f" ({''.join(same)}{', '.join(said) if len(said) > 1 else 'its' + said[0].partition(chr(39) + 's')[2]} slow rounds)"
        if not line.startswith(" "):
            lines.append(text)
        elif lines and ("-bound" in text.split(":")[0] or text.startswith("cannot tell")):
            lines[-1] += f"; {text}"
    return lines


def predict_answer(
    rankings: dict[str, Ranking],
    name: str = "torch.compile",
    blocks: dict[str, dict[str, Timing]] | None = None,
    takeaways: list[str] | None = None,
) -> str:
    """05's "Predict first" answered from the run: which variant is fastest at each shape, and whether `name` is at both.

    Why here: the question is asked in markdown before the run, so its answer must come from this run's
    verdicts, whatever they are: a ranked shape's closest group (`Ranking.tiers`: a tie is a tie); a shape
    whose ranking is withheld because the copy failed its check, the variant its pair verdicts (which need no
    copy) put faster than every other; a busy shape, or pairs that name no one variant, no answer.

    Args:
        rankings: shape -> its Ranking (`rank_over_floor`); name: the variant the question asks about.
        blocks: shape -> its interleaved timings, for a withheld shape's pairs; None: such a shape is unanswered.

    Returns:
        One line: "Predict first, fastest at each shape: small 8x1024: torch.rms_norm (by the ranking);
        large 8192x4096: torch.compile (by the pairs; its ratio to the copy withheld): torch.compile is
        fastest at one shape of 2" (or "at both", "at neither", "this run cannot say whether it is at both"),
        after `recap(takeaways)`'s lines where `takeaways` is given.
    """
    places, firsts = [], []
    for s, ranking in rankings.items():
        if ranking.gate:
            busy = ranking.gate.kind == "busy" or not blocks
            pairs = [] if busy else newer_first(ranking, blocks[s])
            kinds = {n: [] for n in ranking.over_floor}
            for v in pairs:
                kinds[v.subject].append(v.kind)
                kinds[v.reference].append(_FLIP.get(v.kind, v.kind))
            fastest = [n for n, ks in kinds.items() if ks and all(k == "faster" for k in ks)]
            why = "busy" if ranking.gate.kind == "busy" else "the copy failed its check" if not blocks else ""
            if fastest and not any(v.kind == "busy" for v in pairs):
                places.append(f"{ranking.label}: {fastest[0]} (by the pairs; its ratio to the copy withheld)")
                group = fastest
            else:
                said = f"this run cannot say ({why})" if why else "no one variant by the pairs"
                places.append(f"{ranking.label}: {said}")
                lost = "slower" in kinds.get(name, []) and not any(v.kind == "busy" for v in pairs)
                group = [] if lost else None  # an inconclusive pair is no loss
        else:
            tiers = ranking.tiers()
            group = tiers[0] if len(tiers) > 1 else []
            places.append(
                f"{ranking.label}: {ranking.tier_phrase(tiers[0], ratios=False)} (by the ranking)"
            )  # the closest group; one group: all of them
        firsts.append(None if group is None else group == [name])
    won = sum(f is True for f in firsts)
    if False not in firsts:
        answer = (
            f"{name} is fastest at every shape"
            if None not in firsts
            else f"this run cannot say whether {name} is fastest at every shape"
        )
    else:
        answer = f"{name} is fastest at none" if not won and None not in firsts else f"{name} is not fastest at every shape"
    return "\n".join([*recap(takeaways or []), f"Predict first, fastest at each shape: {'; '.join(places)}: {answer}"])


_FLIP = {"faster": "slower", "slower": "faster"}  # a pair verdict read from its reference's side

_RERUN = "rerun the timing cell when the machine is quiet"
_PAIRS_ABOVE = "this shape's result is the pairs above (timed in the same rounds; no copy needed)"  # not repeated


def plot_over_copy(rankings: dict[str, Ranking], names: list[str], title: str, path: Path) -> Any:
    """Notebook 05's figure: each variant's median ratio to the copy per shape, with its p10-p90 whisker;
    beside it, for a shape whose copy failed its check, that shape's pairs (`_plot_pairs`).

    Why here: the figure is the lesson, the plotting is not. Bars the ranking joins (CANNOT_TELL)
    (`Ranking.tiers`) carry "?" ("≈" where no measurable difference) in their labels, so a taller bar is not read as a slower variant where the
    pair verdict is not measurable; a shape whose ranking is gated draws no bar and says why in a note on
    the axes. A failed copy withholds the ratios to the copy, not the pairs (05's readers took the small
    shape's bars, alone, for the lesson's result); a busy shape draws nothing, its pairs conclude nothing.
    The grey band is the verdicts' margin around 1 (`analysis.verdicts.RESOLUTION`).

    Args:
        rankings: shape -> its Ranking (`rank_over_floor`); names: the variants to draw, in order.
        title: the axes title (with its origin label, `backend_title`); path: where the PNG is saved.

    Returns:
        The matplotlib Axes of the ratios to the copy (the pairs' panels are the figure's other axes).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator

    from analysis import OKABE_ITO, RESOLUTION

    paired = {s: r for s, r in rankings.items() if r.gate and r.gate.kind != "busy" and r.pairs}
    why = {"withheld": "copy floor failed, not drawn", "busy": "busy, not drawn"}
    notes = [
        f"{r.label}: {'copy floor failed: its pairs, right' if s in paired else why.get(r.gate.kind, why['withheld'])}"
        for s, r in rankings.items()
        if r.gate
    ]
    drawn = {s: r for s, r in rankings.items() if not r.gate}
    colours = dict(zip(rankings, [OKABE_ITO[0], OKABE_ITO[3]]))  # a shape keeps its colour when the other is not drawn
    over = pd.DataFrame({r.label: {n: r.over_floor[n].median for n in names} for r in drawn.values()}, index=names)
    whiskers = []
    for r in drawn.values():
        t = r.table().loc[names]  # each ratio to the copy with its p10-p90
        whiskers.append([(t.over_copy - t.p10).to_numpy(), (t.p90 - t.over_copy).to_numpy()])
    ylabel = "over_copy, log scale (whiskers: p10-p90)"  # short: a longer label ran into the title
    fig, axes = plt.subplots(
        1, 1 + len(paired), figsize=(6.4 + 5.6 * len(paired), 4.8), squeeze=False, width_ratios=[3] + [2] * len(paired)
    )
    ax = axes[0, 0]
    if drawn:
        over.plot.bar(ax=ax, rot=0, logy=True, yerr=whiskers, color=[colours[s] for s in drawn], ylabel=ylabel)
    else:  # nothing to draw: the axes still carry the title, the band and why
        ax.set(yscale="log", ylabel=ylabel)
    # "≈" only for no measurable difference; "?" where the order is unresolved: "≈3.39x" read as equal
    tie_words = {r.tier_word(t): None for r in drawn.values() for t in r.tiers() if len(t) > 1}  # the pairs' own words
    marks = {w: "≈" if w == NO_DIFFERENCE else "?" for w in tie_words}
    tied = {s: {n: marks[r.tier_word(t)] for t in r.tiers() if len(t) > 1 for n in t} for s, r in drawn.items()}
    # a bar the verdict does not tell apart from the copy (its whisker enters the band) is marked as the shape line
    # says it: "1.10x" beside "cannot tell apart from the copy" read as a finding
    near = {s: {n: _copy_mark(r.over_floor[n]) for n in names if _copy_mark(r.over_floor[n])} for s, r in drawn.items()}
    for s in drawn:
        # both marks where both hold: "◇" (against the copy) is not "?" (an unresolved order; one "?", two meanings)
        tied[s] = {n: "".join(dict.fromkeys(m for m in (tied[s].get(n), near[s].get(n)) if m)) for n in tied[s] | near[s]}
    for bars, (s, r) in zip(
        [c for c in ax.containers if type(c).__name__ == "BarContainer"], drawn.items()
    ):  # bars, not whiskers
        # the mark after the value: "?9.03x" read as a typo of the number
        ax.bar_label(bars, labels=[f"{over.at[n, r.label]:.2f}x {tied[s].get(n, '')}".rstrip() for n in names], fontsize=9)
    if notes:  # below the axes: inside, the note ran into the tallest bar's label
        ax.text(0.0, -0.16, "\n".join(notes), transform=ax.transAxes, va="top", fontsize=9)
    ax.yaxis.set_major_locator(FixedLocator([0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]))  # 7 8 9 10 ran together
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))  # 2 and 5, not 2x10^0
    ax.axhline(1.0, color="black", lw=1, ls="--", label="copy floor")
    ax.axhspan(
        1 / RESOLUTION,
        RESOLUTION,
        color="grey",
        alpha=0.3,
        label=f"within {RESOLUTION - 1:.0%} of the copy (a whisker into it:\n{CANNOT_TELL}; wholly inside: {NO_DIFFERENCE})",
    )
    for pax, (s, r) in zip(axes[0, 1:], paired.items()):
        _plot_pairs(pax, r, colours[s], RESOLUTION)
    handles, labels = ax.get_legend_handles_labels()
    for mark in dict.fromkeys(marks.values()):  # an inconclusive pair, not a tie; its own word
        words = [w for w, m in marks.items() if m == mark]
        unresolved = ", order unresolved" if mark == "?" else ""
        # the variants named: "3.25x ≈" under the copy's entry read as "about the copy"
        joined = [  # the shape named: the mark holds for that shape's bars only
            f"{' and '.join(t)} ({s} shape)"
            for s, r in drawn.items()
            for t in r.tiers()
            if len(t) > 1 and marks[r.tier_word(t)] == mark
        ]
        who = "; ".join(dict.fromkeys(joined))
        handles.insert(2, plt.Line2D([], [], ls="none"))
        labels.insert(2, f"{mark} marks {who}:\n{group_word(words)}{unresolved} (the pair table)")
    for mark in dict.fromkeys(m for ns in near.values() for m in ns.values()):  # against the copy: its own entry
        handles.insert(2, plt.Line2D([], [], ls="none"))
        labels.insert(
            2, f"{mark} (whisker in the band): {CANNOT_TELL + ' from the copy, inconclusive' if mark == '◇' else NO_DIFFERENCE}"
        )
    ax.set_title(title)
    if paired:  # below the notes: beside the axes it covered the pairs panel's labels
        below = -0.2 - 0.06 * len(notes)
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.0, below), fontsize=9, ncols=2)
        fig.tight_layout()
        fig.subplots_adjust(wspace=0.6)
    else:  # one panel keeps its full width, the legend beside it
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    fig.savefig(path, bbox_inches="tight")
    return ax


def _copy_mark(ratio: Any) -> str:
    """A bar's mark against the copy: "◇" where its p10-p90 enters the verdicts' band around 1 without lying inside it
    (CANNOT_TELL), "≈" where it lies inside (NO_DIFFERENCE), "" where the verdict is measurable (a busy ratio is not drawn)."""
    from analysis.verdicts import judge_ratio

    v = judge_ratio(ratio)
    if v.measurable or v.kind != "no measurable difference":
        return ""
    return "≈" if v.short_word == NO_DIFFERENCE else "◇"


def _plot_pairs(ax: Any, ranking: Ranking, colour: str, resolution: float) -> None:
    """One shape's pair ratios, later variant over earlier (`newer_first`'s direction, inverted from the
    pairs' own), each a point at its median per-round ratio with its p10-p90 whisker, beside 1 and the margin
    (named in the x label: the left panel's legend names the band around the copy)."""
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator

    pairs = [(f"{v.reference} / {v.subject}", 1 / v.median, 1 / v.p90, 1 / v.p10) for v in ranking.pairs]
    y = list(range(len(pairs)))
    medians = [m for _, m, _, _ in pairs]
    spread = [[m - lo for _, m, lo, _ in pairs], [hi - m for _, m, _, hi in pairs]]
    ax.errorbar(medians, y, xerr=spread, fmt="o", color=colour, capsize=4)
    for (_, m, _, hi), row in zip(pairs, y):  # right of the whisker: at the median it sat on the dashed line
        ax.annotate(f"{m:.2f}x", (hi, row), textcoords="offset points", xytext=(6, 0), va="center", fontsize=9)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator([0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10]))  # 0.5 0.6 ... 0.9 ran together
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.set_yticks(y, [name for name, *_ in pairs])
    ax.set_ylim(-0.6, len(pairs) - 0.4)
    ax.margins(x=0.3)  # room for the labels right of the whiskers
    ax.axvline(1.0, color="black", lw=1, ls="--")
    ax.axvspan(1 / resolution, resolution, color="grey", alpha=0.3)
    ax.set_xlabel(
        f"time ratio per round (log scale; below 1: the first is faster)\ngrey: within {resolution - 1:.0%} of 1 (a whisker into it: {CANNOT_TELL}; wholly inside: {NO_DIFFERENCE})"
    )
    ax.set_title(f"{ranking.label}, this run: its pairs (the ratio to the copy withheld)", fontsize=10)


def newer_first(ranking: Ranking, block: dict[str, Timing]) -> list:
    """Each pair verdict of `ranking` judged later variant over earlier (`torch.compile / naive`).

    Why: `rank_over_floor` pairs earlier over later, the published metrics' direction; notebooks 03
    and 04 write the newer variant first, so 05 prints its pairs the same way round (same rounds,
    same rule, only inverted).

    Args:
        ranking: a Ranking (`rank_over_floor`); block: the interleaved timings it was ranked from.

    Returns:
        One Verdict per pair, in the ranking's pair order.
    """
    from analysis.timing import paired_ratio
    from analysis.verdicts import judge_ratio

    return [judge_ratio(paired_ratio(block, v.reference, v.subject)) for v in ranking.pairs]


def _memory_bound(
    ranking: Ranking, floor: FloorCheck, block: dict[str, Timing], allocs: dict[str, float], brief: bool = False
) -> list[str]:
    """The bound at a memory-bound shape (see shape_takeaways): an estimate and a label for every variant, or nothing where
    busy; `brief` as `_bound_lines`'."""
    from analysis.timing import paired_ratio
    from analysis.verdicts import estimate, judge_ratio, withheld

    if ranking.gate is not None and ranking.gate.kind == "busy":
        return []  # the gate's line says the block concludes nothing
    from analysis.floor import WIDE_SPREAD
    from analysis.verdicts import decimals_apart

    reference = "copy" if floor.ok else "triad probe"
    if not floor.ok and block[reference].spread > WIDE_SPREAD:  # the copy's own check, held to its stand-in
        wide = f"copy {decimals_apart(block['copy'].spread, WIDE_SPREAD)}, triad {decimals_apart(block[reference].spread, WIDE_SPREAD)}"
        reason = f"the byte shares (the time to move each call's bytes at a steady rate, over its time) need a steady copy or triad rate, and both spreads are wide ({wide} > {WIDE_SPREAD})"
        return [f"bound not estimated: {reason}", *_bytes_evidence(newer_first(ranking, block), allocs)]
    ratios = {n: paired_ratio(block, n, reference) for n in allocs}
    busy = next((judge_ratio(r) for r in ratios.values() if r.busy), None)
    if busy:  # a failed floor gates the ranking first; a busy block still concludes nothing
        return [str(busy)]
    # a variant whose allocations were not recorded (neuron may record none) gets no share: counted as one copy, naive's
    # share would read about a third of its own and its label flip
    unrecorded = [n for n, a in allocs.items() if not a > 0]  # NaN compares False
    held_back = [str(withheld(f"byte share of {', '.join(unrecorded)}", "alloc_over_input not recorded"))] if unrecorded else []
    ratios = {n: r for n, r in ratios.items() if n not in unrecorded}
    if not ratios:
        return held_back
    copies = {n: max(allocs[n], 1.0) for n in ratios}  # its output at least
    at_rate = {n: replace(r, per_round=r.per_round / copies[n]) for n, r in ratios.items()}  # time / its copies' time
    shares = {n: float(np.median(1 / r.per_round)) for n, r in at_rate.items()}
    spreads = {n: p10_p90(1 / r.per_round) for n, r in at_rate.items()}
    rate = reference.split()[0]  # "copy" or "triad"
    # the share's formula here, in the footnote, not in the bound's line (there it made the
    # densest line of 05's output)
    basis = (
        f"byte share = alloc_over_input (at least 1) × the {rate}'s time ÷ the variant's time, per round:"
        f" time at the {rate}'s rate, allocation included"
    )  # plain sentences; "a lower bound" was not shown (the source count's share passes 1)
    if rate == "copy":  # the copy reached about half the triad: "memory-bound" is relative to it, not to peak memory
        basis += (
            f". Memory-bound here means near an allocating copy's time; that copy reached {floor.copy_over_probe:.2f}x the triad"
        )
    triad = f" (spread {block[reference].spread:.2f}; used because the copy failed its check)"
    basis += "" if floor.ok else f", at the triad's rate{triad}"
    subject = f"moving its bytes at the {rate}'s rate" + (", allocation included" if rate == "copy" else "")
    share = estimate(subject, shares, "of the time", basis, "a read-only pass (mean), which allocates nothing", 2)
    near_one = {n for n, r in at_rate.items() if not judge_ratio(r).measurable}  # CANNOT_TELL from its bytes' time
    lines = _bound_lines(
        "memory-bound",
        subject,
        shares,
        share,
        near_one,
        spreads,
        rounds={n: 1 / r.per_round for n, r in at_rate.items()},
        mark="†",
        slow=ranking.slow,
        brief=brief,
    )
    if brief:  # one worked share from this run's numbers, beside the shares
        n = "naive" if "naive" in ratios else max(copies, key=copies.get)
        worked = copies[n] / ratios[n].median
        lines.insert(
            0, f"  byte share = allocated ÷ time over the {rate}'s; {n}: {copies[n]:.1f} ÷ {ratios[n].median:.2f} = {worked:.2f}"
        )
    return [*(line.removeprefix("  ") for line in lines[:-1]), *held_back, lines[-1].removeprefix("  ")]
