"""Notebook 01's bookkeeping, kept out of the cells a learner copies: the busy-machine check around
the profiled loop, the checks printed beside the first key_averages() table, the profiler's cost in one line, exercise 1's first recorded steps (its answer and explanation), the cpu stand-in for a device queue and exercise 3's copy
shares (and its answer) (its published figures: lesson.published_metrics).

Why here: 01's profiled loop should read as plain torch and torch.profiler; the contention
snapshots (analysis.contention) and the Neuron dropped-events watch (lesson.neuron_profiler) are
the series' plumbing, not the lesson.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch.profiler import profile, schedule

from analysis.contention import Contention, contention_between, read_counters
from analysis.steps import step_summary
from analysis.timing import Timing, p10_p90
from analysis.traces import representative_step
from analysis import verdicts as verdict_rules
from analysis.verdicts import APART_FACTOR, Verdict, apart_bounds, judge_timings, machine_line, margin_percent, ranges_apart
from lesson.neuron_profiler import NeuronProfilerSetup
from lesson.profiling import judge_device_time


class WatchedBlock:
    """A context manager that notes whether the machine was busy while its block ran, and on
    Trainium watches the profiler for the runtime's dropped-events warning (NEURON_NOTES N23, N29).

    `with WatchedBlock(profiler, neuron_setup) as prof:` enters the profiler and gives what its own
    `with` gives; with no profiler, `with WatchedBlock():` only watches the block. After the block,
    `contention` holds the analysis.contention.Contention of that block (None until it ends).
    """

    def __init__(self, profiler: Any = None, neuron_setup: NeuronProfilerSetup | None = None) -> None:
        self.inner = neuron_setup.watched(profiler) if neuron_setup is not None and profiler is not None else profiler
        self.contention: Contention | None = None
        self._before = None

    def __enter__(self) -> Any:
        self._before = read_counters()
        return self.inner.__enter__() if self.inner is not None else self

    def __exit__(self, *exc: Any) -> Any:
        try:
            return self.inner.__exit__(*exc) if self.inner is not None else None
        finally:
            self.contention = contention_between(self._before, read_counters())


@dataclasses.dataclass
class RecordedSteps:
    """What notebook 01 prints beside its first key_averages() table, and what it publishes from it.

    Attributes:
        sort_key: the `sort_by` of `prof.key_averages().table(...)`: the device's self time where it
            was captured (self CPU time on cpu, where the device is the CPU), else self CPU time.
        device_time: (captured, why) of lesson.profiling.judge_device_time, for setup_metrics.
        recorded: the recorded steps' lengths as an analysis.timing.Timing.
        lines: the machine line, the steps in order, the readings_line (the steps and the steady range, not
            compared), and the device-time note: one idea a line.
    """

    sort_key: str
    device_time: tuple[bool, str]
    recorded: Timing
    lines: list[str]


def readings_line(recorded: Timing, steady: Timing) -> str:
    """The recorded steps and the steady range as readings, one line, never compared: the two blocks were timed at
    different moments, so drift confounds them, which the series' rule (paired per-round ratios) does not judge
    (six rounds read a verdict here; the bare calls later read inside the recorded range)."""
    # why they differ, and where the profiler's cost is judged, is the markdown's sentence
    said = f"readings only (not compared): recorded steps {recorded.p10_us:,.1f}-{recorded.p90_us:,.1f} us"
    return f"{said}, steady state {steady.p10_us:,.1f}-{steady.p90_us:,.1f} us (p10-p90)"


def cutoffs_line(verdict: Verdict, against: Timing, subject: str, unit: str = "us", decimals: int = 1) -> list[str]:
    """Where `subject`'s p10-p90 must lie to be apart from `against`'s by the series' rule (analysis.verdicts
    apart_bounds), so that ranges that nearly miss read as far from a verdict, not as a near verdict. The line
    names the rule (a gap of the margin's share of the larger end), as the upper cut-off is not p90 x 1.05.
    One line; none for a busy verdict (a busy block concludes nothing)."""
    if verdict.kind == "busy":
        return []
    low, high = apart_bounds((against.p10_us, against.p90_us))
    rule = f"a gap of {margin_percent()}% of the larger end: x {APART_FACTOR:g} below, / {APART_FACTOR:g} above"
    return [f"apart only if {subject} lies wholly below {low:,.{decimals}f} {unit} or above {high:,.{decimals}f} {unit} ({rule})"]


def first_longest_line(per_step: pd.Series) -> list[str]:
    """One line where the first recorded step is the longest (read as "warm-up didn't work"):
    one reading with no spread, which Exercise 1 judges over several profiles. Else no line."""
    if len(per_step) < 2 or per_step.iloc[0] < per_step.max():
        return []
    return [f"#{per_step.index[0]} reads longest: one reading, not a verdict (Exercise 1 judges first steps)"]


def _steps_heading(per_step: pd.Series, warmup: int | None) -> str:
    """The recorded-steps line's start: with `warmup`, which step follows the warm-up and that each is one reading."""
    if warmup is None or not len(per_step):
        return "recorded steps (us): "
    return f"recorded steps (us; one reading each, not a verdict; #{per_step.index[0]} follows {warmup} warm-up step{'s' * (warmup != 1)}): "


def recorded_steps(
    table: pd.DataFrame,
    trace: Any,
    steady: Timing,
    contention: Contention | None,
    backend: Any,
    neuron: Any = None,
    warmup: int | None = None,
) -> RecordedSteps:
    """Reads the profile's recorded steps beside the separately timed steady state (readings, not a verdict), and
    whether device time was captured: the series' checks (A1), kept out of the cell that teaches `key_averages()`.

    Args:
        table: analysis.key_averages.key_averages_frame of the profile.
        trace: analysis.traces.load_trace of the profile's Chrome trace (its ProfilerStep# lengths).
        steady: the steady state's analysis.timing.Timing.
        contention: the profiled block's Contention (WatchedBlock.contention), or None.
        backend: helpers.backend.Backend (its name and device_time_sort_key).
        neuron: the NeuronProfilerSetup on Trainium, else None.
        warmup: the schedule's warm-up steps; given, the steps line says the first recorded step follows them
            and that each step is one reading, not a verdict (a cold read took a long first step for "warm-up
            failed"), in place of first_longest_line.

    Returns:
        A RecordedSteps: the table's sort key, (captured, why), the recorded steps and the lines to print.
    """
    captured, why = judge_device_time(backend, table, True, neuron)
    per_step = step_summary(trace)["step_us"]
    recorded = Timing("recorded steps", per_step.to_numpy(), 1, contention)
    busy = contention is not None and contention.busy
    withheld_line = "recorded steps against the steady state: withheld (BUSY)"  # the busy line above says why
    lines = [
        machine_line({"profile": contention}, "profiling"),
        _steps_heading(per_step, warmup) + ", ".join(f"#{n} {us:.0f}" for n, us in per_step.items()),  # as the tree names them
        *(first_longest_line(per_step) if warmup is None else []),  # with warmup the line above says it
        withheld_line if busy else readings_line(recorded, steady),
        why,
    ]
    sort_key = backend.device_time_sort_key if captured or backend.name == "cpu" else "self_cpu_time_total"
    return RecordedSteps(sort_key, (captured, why), recorded, lines)


def cost_takeaway(
    verdicts: dict[str, Verdict],
    extra_us: dict[str, np.ndarray] | None = None,
    ops: dict[str, int] | None = None,
    bare_us: dict[str, float] | None = None,
) -> str:
    """The profiler's cost, a line per call size, from its `judge_ratio` verdicts and the same rounds:
    the per-round ratio's median and p10-p90, and where measurable the extra microseconds per call (the
    median of the per-round differences) and, given the call's recorded ops, that extra per recorded op.
    Never the two medians apart: the median of per-round ratios is not the ratio of two medians.

    Args:
        verdicts: call name ("lesson", "tiny") -> the `judge_ratio` verdict of profiled over bare.
        extra_us: call name -> per-round profiled minus bare microseconds per call, or None.
        ops: call name -> ops the profiler records in one call (`recorded_ops`), or None.
            With the tiny call measurable and both calls' ops, a line gives its median extra per recorded op, all of it
            taken as per op. Where the lesson call's ratio is not measurable (inconclusive, no
            measurable difference, busy), given `bare_us`, the per-op prediction as a ratio with its inputs,
            then, unless busy, whether the lesson ratio's p10-p90 lies apart from it by `ranges_apart`, else
            NO_TEST_INSIDE ("no ratio here could test it" overstated; a range wholly above would refute it);
            busy or without `bare_us`, NO_TEST. No median extra us beside it: a 45x gap read as a
            finding. Only where it is measurably above 1
            two lines follow: the lesson
            call's predicted extra at the tiny's per-op cost, then whether the lesson call's extra us per call
            (its p10-p90) lies apart from it (`_against_expected`; judged in us,
            the question asked, not as a ratio near 1 whose rounded ends read apart beside "cannot tell").
        bare_us: call name -> its bare median us, or None (the predicted ratio's denominator).

    Returns:
        A heading line, then a line per call: "WORD, N.NNx (p10-p90 A-B), +D us per call, about E us per
        recorded op (M ops)" where the verdict is measurable, else the verdict's table word (analysis.verdicts
        CANNOT_TELL: the run's limit, not a property of the call) and the ratio's p10-p90 and median unless the
        block was busy, and no per-call difference in us: a reader took a range above 0 under "inconclusive" as a
        finding (earlier readers had read such lines as a cost too); the ratio line with its verdict is the
        result. No p90 is stated as a bound. Where a median reads below 1, a last line says it lies
        within the spread: 01 times with `time_interleaved(..., alternate=True)`, and the profiler
        only adds work. Before it, the two calls' ratios against each other by `ranges_apart` (A1 section 6's rule): a reader
        took "lesson: cannot tell" above "tiny: costlier" as "profiling costs small calls relatively more".
    """
    parts = []
    for name, verdict in verdicts.items():
        # the verdict's own figures: the decimals that place each bound against 1 and the margin
        shown, spread = verdict.figure_parts if np.isfinite(verdict.median) else ("", "")
        if verdict.measurable:
            said = f"{verdict.word}, {shown}x ({spread})"  # the verdict's word: 01 prints this line alone
            if extra_us and name in extra_us:
                extra = float(np.median(extra_us[name]))
                said += f", {extra:+,.1f} us per call"
                if ops and ops.get(name):  # per call of ~21 ops read as per op; say the assumption
                    # the median extra over the ops, no bound (the ratio's p10-p90 spans a wider extra)
                    said += f"\n{name} call, median extra per recorded op: {extra / ops[name]:.2f} us ({ops[name]} ops; all of it taken as per op)"
        else:
            said = verdict.word  # the table's own words, as every verdict of the series says them
            if verdict.kind != "busy" and not np.isnan(verdict.median):  # a busy block's figures conclude nothing
                said += f": ratio {spread}, median {shown}"  # the range first: it carries the verdict
        parts.append(f"{name} call: {said}")
        if name == "tiny" and verdict.measurable and extra_us and ops and {"lesson", "tiny"} <= ops.keys() <= extra_us.keys():
            lesson = verdicts.get("lesson")
            if lesson is not None and not lesson.measurable:  # an extra not told from zero tests nothing
                no_test = NO_TEST
                if bare_us and "lesson" in bare_us:  # the prediction's inputs, so it can be recomputed
                    per_op = round(float(np.median(extra_us["tiny"])) / ops["tiny"], 2)  # as the line above prints it
                    predicted = 1 + ops["lesson"] * per_op / bare_us["lesson"]
                    parts.append(
                        f"per-op prediction, lesson call: 1 + {ops['lesson']} ops x {per_op:.2f} us"
                        f" / {bare_us['lesson']:,.0f} us bare = {predicted:.3f}"
                    )
                    if lesson.kind != "busy" and lesson.p10 == lesson.p10:  # the series' rule, both ways (ranges_apart)
                        side = ranges_apart((lesson.p10, lesson.p90), (predicted, predicted))
                        no_test = f"the lesson ratio's range lies {side} the prediction, 5% apart" if side else NO_TEST_INSIDE
                parts.append(no_test)
                continue
            if lesson is not None and lesson.kind != "slower":  # measurably below 1: the median-below-1 line says why
                continue
            per_op = float(np.median(extra_us["tiny"])) / ops["tiny"]
            predicted = ops["lesson"] * per_op
            shown = next((d for d in (2, 3) if f"{ops['lesson'] * round(per_op, d):.1f}" == f"{predicted:.1f}"), 4)  # x by hand
            parts.append(f"predicted for the lesson call at that per-op cost: {ops['lesson']} ops x {per_op:.{shown}f} us")
            parts += _against_expected(verdicts.get("lesson"), extra_us["lesson"], predicted)
    pair = [verdicts.get(c) for c in ("tiny", "lesson")]
    if all(v is not None and v.kind != "busy" and v.p10 == v.p10 for v in pair):  # A1 section 6's rule
        side = ranges_apart(*((v.p10, v.p90) for v in pair))
        said = f"measurably {side}" if side else f"{verdict_rules.CANNOT_TELL} in this run"
        parts.append(f"tiny call's ratio against the lesson call's: {said}")
    if any(v.kind != "busy" and round(v.median, 2) < 1 for v in verdicts.values()):  # as printed (2 decimals): 0.9994 reads 1.00
        parts.append("a median below 1 lies within the spread, not a negative cost: the order alternates each round")
    return "\n".join(["take-home, the profiler's cost, per-round profiled / bare:", *parts])  # a line per call


NO_TEST = "the lesson call's ratio cannot be told from 1 here (above), so this run cannot test that prediction"
NO_TEST_INSIDE = "the lesson ratio's range is not 5% apart from the prediction: this run cannot tell"


def _against_expected(lesson: Verdict | None, extra: np.ndarray, predicted: float) -> list[str]:
    """The lesson call's extra us per call (p10-p90 of the per-round differences) against the extra its ops
    predict, a point, by `ranges_apart` (apart only past the 5% margin). Judged as a ratio near
    1, the printed ends (1.06 against 1.004) read apart beside "cannot tell"; the question is the extra us.
    The figures take the decimals at which they, judged by the same rule, give the verdict. No line for a busy block."""
    if lesson is None or lesson.kind == "busy" or not len(extra):
        return []
    low, high = p10_p90(extra)
    side = ranges_apart((low, high), (predicted, predicted))
    # the fewest decimals (1 to 4) at which the printed figures, judged by the same rule, give the same side
    places = next((d for d in (1, 2, 3) if ranges_apart((round(low, d), round(high, d)), (round(predicted, d),) * 2) == side), 4)
    said = f"lesson call: extra p10-p90 {low:,.{places}f} to {high:,.{places}f} us per call against about {predicted:,.{places}f} us predicted"
    if not side:
        return [f"{said}: cannot tell whether the per-op cost accounts for it (inconclusive)"]
    if side == "below":  # the per-op figure is an upper bound (all of the tiny call's extra taken as per op)
        return [f"{said}: measurably less: within that per-op bound"]
    return [f"{said}: measurably more: the per-op cost does not account for it"]


def recorded_ops(fn: Callable[[], Any], activities: Any) -> int:
    """How many ops the profiler records in one call of `fn` (one warm call first, then one profiled):
    01 divides the tiny call's extra microseconds by it, a cost per recorded op."""
    fn()
    with profile(activities=list(activities)) as prof:
        fn()
    return len(prof.events())


def _copies(events: pd.DataFrame) -> pd.DataFrame:
    """Each aten::copy_ with its step, its Linear (1, 2) and its share (%) of the aten::addmm it runs in."""
    ev = events.sort_values("ts")
    addmm = ev[ev["name"] == "aten::addmm"].assign(Linear=lambda d: d.groupby("step").cumcount() + 1)
    copies = pd.merge_asof(
        ev[ev["name"] == "aten::copy_"].reset_index(), addmm[["ts", "dur", "Linear"]], on="ts", suffixes=("", "_addmm")
    )
    return copies.assign(share=100 * copies["dur"] / copies["dur_addmm"])


def copy_shares(events: pd.DataFrame) -> dict[int, np.ndarray]:
    """Each `aten::copy_`'s share (%) of the `aten::addmm` it runs in, per Linear of the step
    (on cpu, addmm first copies the bias into its output): exercise 3's figures.

    Args:
        events: analysis.trace.load_trace(...).events (columns name, ts, dur, step).

    Returns:
        {1: shares in Linear 1, 2: shares in Linear 2}, in percent; empty arrays where addmm made no copy_.
    """
    copies = _copies(events)
    return {n: copies["share"][copies["Linear"] == n].to_numpy() for n in (1, 2)}


def tree_copy_share(trace: Any) -> float:
    """The copy_ share (%) of the call 'Self versus total' prints as a tree: Linear 1 of the recorded step of median
    length (analysis.representative_step); NaN where that addmm made no copy_. Exercise 3 places it in Linear 1's
    range (a reader who answered from the tree took its one call for the share)."""
    copies = _copies(trace.events)
    found = copies["share"][(copies["Linear"] == 1) & (copies["step"] == representative_step(trace))]
    return float(found.iloc[0]) if len(found) else math.nan


def warmup_explanation(verdict: Verdict, backend: Any) -> list[str]:
    """Exercise 1's "why", in words: one explanation whatever the verdict (seats that get different verdicts
    read the same reason), labelled as such, never a measurement (the verdict above it is the measurement).

    Args:
        verdict: the `judge_timings` verdict of the first recorded step, warmup=0 against the lesson's warm-up.
        backend: helpers.backend.Backend (its name).

    Returns:
        One line: busy -> why nothing is concluded; otherwise what warm-up steps discard (the profiler's own
        start-up) and that the exercise calls each fresh model once untimed first, so its first-call cost stays out;
        where the step without warm-up reads measurably longer, that warm-up steps also run the model,
        so this run cannot say which of the two shortens it, else that whether warm-up
        shortens it is not shown; where the ranges miss each other by less than the margin, that the series reads
        such a gap as noise (a reader took "warm-up helps" from ranges that do not overlap); on Trainium, that a
        compile can remain (N20).
    """
    if verdict.kind == "busy":
        return ["why: the machine was busy during the profiles, so they conclude nothing; rerun on a quiet machine"]
    left = " (on Trainium a compile can still land in a profile, N20)" if backend.name == "neuron" else ""
    if verdict.kind == "slower":  # "which shortens" only where a step without warm-up read measurably longer
        causes = "warm-up steps discard the profiler's own start-up but also run the model: this run cannot say which shortens the first step"
    elif str(getattr(verdict, "not_apart", "")).startswith("ranges not"):  # apart, but by less than the margin
        return [
            f"why (explained, not measured): the ranges do not overlap, but the series reads a gap under its {margin_percent()}% margin as timing noise{left}"
        ]
    else:
        causes = "whether warm-up shortens the first step is not shown here"
    return [
        f"why (explained, not measured): {causes}; each fresh model had one untimed call before its profile,"
        f" so its first-call cost is expected to stay out{left}"
    ]


def queue_stand_in(fn: Callable[[], Any], n_calls: int = 10, rounds: int = 5) -> tuple[Verdict, str]:
    """A measured cpu stand-in for an asynchronous device queue (cuda's stream, Trainium's queue):
    a one-worker thread runs the calls in order while the caller goes on, as a device would. One clock
    is read right after the last call is submitted, another after the last `.result()`: the gap is
    what a loop timed without synchronize() misses. A stand-in, not a device measurement.

    Args:
        fn: one call, e.g. `lambda: model(x)`; it runs in the worker thread under the caller's grad mode.
        n_calls: calls submitted per round.
        rounds: rounds, one sample of each clock per round (5: the fewest judge_timings judges).

    Returns:
        The `judge_timings` verdict of the clock after submitting against the clock after the last
        result (busy where the machine was), and a take-home line labelled as the stand-in: where the
        first clock is measurably below the second, the share of the work (of medians) a timer
        without the wait reads; else that this run gives none.
    """
    grad = torch.is_grad_enabled()

    def call() -> Any:
        with torch.set_grad_enabled(grad):
            return fn()

    submitted, finished = [], []
    with WatchedBlock() as block, ThreadPoolExecutor(max_workers=1) as queue:
        for _ in range(rounds):
            t0 = time.perf_counter()
            futures = [queue.submit(call) for _ in range(n_calls)]
            submitted.append(time.perf_counter() - t0)
            for future in futures:
                future.result()
            finished.append(time.perf_counter() - t0)
    sent, done = (Timing(name, 1e6 * np.array(s), 1, block.contention) for name, s in (("sent", submitted), ("done", finished)))
    subject = f"stand-in queue (a cpu thread, not a device), {n_calls} calls: clock after submitting"
    verdict = judge_timings(subject, sent, "clock after the last result", done)
    return verdict, queue_takeaway(verdict, sent.median_us, done.median_us)


def queue_takeaway(verdict: Verdict, sent_us: float, done_us: float) -> str:
    """What the stand-in's gap means, in one line labelled as the stand-in: a share only where the
    verdict is measurable (busy or inconclusive runs give no take-home).

    Args:
        verdict: `queue_stand_in`'s verdict, clock after submitting against clock after the last result.
        sent_us, done_us: the median clock after submitting and after the last result (us); the
            share is their ratio, printed with both so the reader need not work it out from the ranges.

    Returns:
        One line starting "take-home (the stand-in):".
    """
    head = "take-home (the stand-in):"  # the verdict line above says "a cpu thread, not a device"
    if verdict.kind != "faster":
        return f"{head} none from this run ({verdict.word}), so it shows no queue"
    return (  # plain words, one number, named as the medians' ratio (the ranges are the verdict line's); N6: a device
        f"{head} a timer stopped when the calls return reads {100 * sent_us / done_us:.2f}% of the stand-in's work (median ratio):"
        " it does not wait for the worker thread's work (a device's queue: the same effect expected, not this share, N6)"
    )


def documented_neuron_call(backend_name: str) -> str:
    """Off Trainium, the Neuron profiler set-up exactly as the vendor documents it (NEURON_NOTES N9),
    labelled as not run: the one Trainium-specific part of 01's set-up, shown to the reader who will
    run it on a trn2 (on Trainium, `lesson.neuron_profiler_setup` builds it instead).

    Args:
        backend_name: this run's backend ("cpu", "cuda").

    Returns:
        Five lines: the label, the import (as lesson/neuron_profiler.py makes it), the documented
        NeuronConfig with the optional keywords the series passes where accepted (without
        neff_cache_dir no NEFFs reach the profile folder, N14), and how torch.profiler takes it.
    """
    return (
        f"not built on {backend_name}; what Trainium would run (AWS docs, N9; not run here):\n"
        "  from torch_neuronx.profiling import NeuronConfig, NeuronProfiler, ProfileMode\n"
        "  cfg = NeuronConfig(modes=[ProfileMode.DEVICE, ProfileMode.RUNTIME], profile_output_dir=...)  # NEURON_PROFILE 'device' (shown): DEVICE+RUNTIME; 'system': RUNTIME only\n"
        "  # also passed where accepted (N10, N14): neff_cache_dir=..., max_events_per_nc=..., capture_enabled_for_nc=...\n"
        "  profile(activities=[CPU, PrivateUse1], experimental_config=cfg, on_trace_ready=NeuronProfiler(cfg).export_trace, ...)"
    )


def warmup_answer(verdict: Verdict) -> str:
    """Exercise 1's question answered in words from its verdict: does the first recorded step read longer
    without a warm-up? A yes or no only where the verdict is measurable.

    Args:
        verdict: the `judge_timings` verdict of the first recorded step, warmup=0 against the lesson's warm-up.

    Returns:
        One line: "yes" where the step without warm-up reads measurably longer, "no" where it reads
        measurably shorter, else "this run cannot tell" (inconclusive) or "no answer" (busy).
    """
    answers = {
        "slower": "yes on this run: without a warm-up the first recorded step is measurably longer",
        "faster": "no on this run: without a warm-up the first recorded step is measurably shorter",
        "busy": "no answer: the machine was busy",
    }
    said = answers.get(verdict.kind, "this run cannot tell (inconclusive: neither 'no' nor 'yes')")
    return f"does the first recorded step read longer without a warm-up? {said}"


def larger_hidden_answer(verdict: Verdict, block: str = "the profile of 'The first table'", trace: Any = None) -> list[str]:
    """Exercise 3's answer, only what the measured shares support: Linear 2's share against Linear 1's, each Linear's
    shares per recorded step, the tree's one call's step, and the answer for a larger HIDDEN. The
    lines on a fixed or per-element copy_ cost (and Linear 2 as a stand-in for a larger HIDDEN) rested on equal
    aten::addmm times the page never shows, so they are gone. A busy block's readings are not printed.

    Args:
        verdict: the `judge_timings` verdict of Linear 2's share against Linear 1's (a range below reads "faster").
        block: the profile the shares come from, named where it was busy.
        trace: the profile's analysis.traces.Trace: each Linear's shares print per recorded step; where
            measurable, a line names the recorded step whose call the tree shows (tree_copy_share).

    Returns:
        Three lines or more: the verdict first (busy: which block, and that it is withheld); with `trace` (not busy), each
        Linear's lowest-highest share, each Linear's shares, readings, per step, and the tree's call's step; last, the
        expected direction at a larger HIDDEN (not run), led by the direction, then why from the counts.
    """
    said = (
        f"{block} was BUSY ({verdict.seen}): Linear 2's share against Linear 1's is withheld"
        if verdict.kind == "busy"
        else str(verdict)
    )
    # Linear 2 (4x the inputs, 1/4 the outputs) is no larger HIDDEN: the direction is an expectation from the counts,
    # no rate (a measured copy time need not grow with its count: a fixed part per call makes it grow less)
    answer = (
        "at a larger HIDDEN the share is expected to shrink (not run: one HIDDEN per run)",
        "why (from the counts, not measured; counts give a direction, not a size): the copy writes TOKENS x out values, the matmul does TOKENS x in x out"
        " multiply-adds; in and out both grow with HIDDEN, so the matmul's count grows faster than the copy's",
    )
    lines = [said]
    if trace is not None and verdict.kind not in ("busy", "withheld"):  # the readings in step order
        shares = copy_shares(trace.events)  # once: the medians and the tree call's place both read it
        # the asked share first, as its range: a median would read as a typical value where the readings split
        spans = {n: f"{v.min():.2f}-{v.max():.2f}" if len(v) else "none" for n, v in shares.items()}
        lines.append(f"aten::copy_'s share of aten::addmm, lowest-highest step: Linear 1 {spans[1]} %, Linear 2 {spans[2]} %")
        copies = _copies(trace.events)  # both Linears' readings: a wide range shows whose step made it
        for n in (1, 2):
            per_step = copies.query(f"Linear == {n}")
            lines.append(
                f"Linear {n}'s share per recorded step, readings (%): "
                + ", ".join(f"#{t:.0f} {v:.2f}" for t, v in zip(per_step["step"], per_step["share"]))
            )
        one, ranked = tree_copy_share(trace), np.sort(shares[1])
        if verdict.measurable and one == one and len(ranked) > 2:  # the tree's call is one of the readings: name its step
            lines.append(f"the tree above is step #{representative_step(trace):.0f}'s Linear 1 call: {one:.2f} %")
    return lines if verdict.kind == "withheld" else [*lines, *answer]  # withheld: no copy_, so no share to expect


def first_call_line(cold_s: float, warm: Timing) -> str:
    """The first call's one reading beside the steady state's p10-p90, both printed and not compared: one reading has
    no spread, so "higher than" would read as a finding (the first call's one-off costs are the markdown's expectation).
    """
    f = ",.1f"
    return f"first call: {cold_s * 1e6:{f}} us (one reading, not compared); steady state: {warm.p10_us:{f}}-{warm.p90_us:{f}} us (p10-p90)"


def first_recorded_step_us(fn: Callable[[], Any], backend: Any, warmup: int, active: int = 2) -> float:
    """Profiles `fn` over schedule(wait=0, warmup, active) and returns the first recorded step's
    length: exercise 1's reading. Unlike lesson.profile_steps this accepts warmup=0, the case the
    exercise sets against a warm-up (torch warns that no warm-up can skew results: that is the point).

    Args:
        fn: one step's work, e.g. `lambda: model(x)`.
        backend: helpers.backend.Backend (its activities and synchronize()).
        warmup: warm-up steps, 0 or more.
        active: recorded steps.

    Returns:
        The first ProfilerStep# the profiler kept, in microseconds.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*warmup.*")
        plan = schedule(wait=0, warmup=warmup, active=active, repeat=1)
        with profile(activities=list(backend.activities), schedule=plan) as prof:
            for _ in range(warmup + active):
                fn()
                backend.synchronize()
                prof.step()
    steps = [e for e in prof.events() if e.name.startswith("ProfilerStep")]  # events() names them ProfilerStep*
    return min(steps, key=lambda e: e.time_range.start).time_range.elapsed_us()


def first_recorded_steps(
    make_model: Callable[[], Any], x: Any, backend: Any, warmups: tuple[int, ...], profiles: int = 5
) -> list[Timing]:
    """Exercise 1's readings: `profiles` profiles per warm-up, the warm-ups in turn each round, each of a fresh
    `make_model()` called once untimed first (its first-call cost stays out), read by `first_recorded_step_us`.
    Why here: the loop of fresh models is plumbing; the student copy's exercise cell is comments only, and
    A reader found the loop too much for a 25-minute slot.

    Args:
        make_model: builds a fresh model, e.g. `lambda: mlp(HIDDEN)`.
        x: its input.
        backend: helpers.backend.Backend.
        warmups: the warm-ups to compare, e.g. `(0, WARMUP)`.
        profiles: profiles per warm-up.

    Returns:
        One Timing per warm-up ("first step, warmup=W", microseconds), each carrying the whole block's contention.
    """
    firsts: dict[int, list[float]] = {w: [] for w in warmups}
    block = WatchedBlock()
    with torch.no_grad(), block:
        for _ in range(profiles):
            for w in warmups:
                fresh = make_model()  # new weights, same process
                fresh(x)  # one untimed call: the first-call cost stays out of the profile
                firsts[w].append(first_recorded_step_us(lambda: fresh(x), backend, warmup=w))  # noqa: B023 (called at once)
    return [Timing(f"first step, warmup={w}", np.array(v), 1, block.contention) for w, v in firsts.items()]
