"""Notebook 06's bookkeeping: the drawn-step table, the host-only shares, the step and host-only
factors, the labelled gap's line, and the metrics and claims the notebook publishes.

Why here: none of it is what 06 teaches (reading lanes, splitting a step, following an op down the
stack); in the notebook it was 40 lines a learner had to skip. The names and figures stay the ones
the notebook printed, and tests/test_notebooks.py reads the same metric names.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pandas as pd

from analysis.timing import p10_p90

DRAWN_CAPTION = "One drawn step each, not compared"  # under 50 characters: pandas cuts a longer index name


def _factor(a: pd.Series, b: pd.Series, busy: Any) -> SimpleNamespace:
    """a / b over the steps as the quotients of their p10-p90 ranges, lowest to highest (a Timing's
    fields, so that `judge_timings` reads it; `samples_us` holds the steps, so too few are withheld)."""
    (a10, a90), (b10, b90) = p10_p90(a), p10_p90(b)
    lo, hi = a10 / b90, a90 / b10
    return SimpleNamespace(p10_us=lo, p90_us=hi, median_us=(lo + hi) / 2, contention=busy, samples_us=a.to_numpy())


@dataclass
class HostOnlyFactors:
    """Why the subject's host-only share differs from the reference's, as two factors and one verdict.

    `subject`: the variant with the largest host-only share (the answer's); `reference`: the
    runner-up it was judged against; `host_only`: the subject's host-only time over the reference's;
    `step`: the reference's step over the subject's (so that share factor = host_only x step);
    each a factor range (p10_us / p90_us hold the factors); `busy`: both blocks' contention;
    `verdict`: the step factor judged against the host-only factor (analysis.verdicts.judge_timings):
    which of the two weighs more in the share factor; `share`: the subject's share over the reference's."""

    subject: str
    reference: str
    step: SimpleNamespace
    host_only: SimpleNamespace
    busy: Any
    verdict: Any
    share: Any = None
    spans: dict[str, dict[str, tuple[float, float]]] | None = None  # variant -> {"step"/"host-only": p10-p90 in us}
    n_steps: int = 0  # steps per variant; 0 where the two differ

    def _spans_text(self) -> str:
        """The ranges the factors are built from, one line per variant (the host-only ranges first appeared in
        Exercise 2 otherwise), and, where p10 and p90 are the extreme steps (floor(0.1 (n-1)) = 0,
        analysis.p10_p90), that fact."""
        if not self.spans:
            return ""

        def span(x: tuple[float, float]) -> str:
            return f"{x[0]:.0f}-{x[1]:.0f}"

        extremes = f"with {self.n_steps} steps, p10-p90 = lowest to highest" if 0 < self.n_steps <= 10 else "p10-p90"
        rows = (
            f"\n{n}: step {span(self.spans[n]['step'])} us, host-only {span(self.spans[n]['host-only'])} us" for n in self.spans
        )
        return "".join(rows) + f" ({extremes})"

    @property
    def share_line(self) -> str:
        """Why the shares differ: first the two factors, each with the rule's word (the measurable one first), then
        which weighs more in the share, the verdict word first, with the ends it compared and the margin it used;
        a busy or withheld verdict is printed as it is, concluding nothing."""
        s, r, kind = self.subject, self.reference, getattr(self.verdict, "kind", None)
        if kind not in ("slower", "faster", "no measurable difference"):
            return f"Factors: step factor ({r}'s step / {s}'s) against host-only factor ({s}'s / {r}'s): {self.verdict}{self._spans_text()}"
        step, host = _times(self.step, "shorter", "longer"), _times(self.host_only, "longer", "shorter")
        (a, x), (b, y) = parts = [("step", step), ("host-only time", host)]  # the measurable one first
        if kind == "faster" or (kind != "slower" and _measurable(self.host_only) and not _measurable(self.step)):
            (a, x), (b, y) = parts[::-1]
        return f"Factors: against {r}, {s}'s {a} is {x}; its {b} is {y}\n{self._weighs(kind)}{self._spans_text()}"

    def _weighs(self, kind: str) -> str:
        """Which factor weighs more in the share, from the printed ends and the margin (the ratio rule's
        RESOLUTION): an inconclusive verdict beside ranges that do not overlap said why only in metrics.json."""
        from analysis.verdicts import RESOLUTION

        margin = f"the {(RESOLUTION - 1) * 100:.0f}% margin"
        if kind == "no measurable difference":
            (a, b), (c, d) = (self.step.p10_us, self.step.p90_us), (self.host_only.p10_us, self.host_only.p90_us)
            near = (a, d) if a >= d else (c, b) if c >= b else None
            ends = "the factor ranges overlap" if near is None else f"{near[0]:.2f} and {near[1]:.2f} lie within {margin}"
            return f"Which weighs more in the share: cannot tell ({ends})"
        cause = {"slower": (self.host_only, "step is shorter", "a shorter host-only time")}
        cause["faster"] = (self.step, "host-only time is longer", "a longer step")
        return f"Its share is higher {_why(*cause[kind])}{self._reason(kind, margin)}"

    def _reason(self, kind: str, margin: str) -> str:
        """Why the verdict placed one factor above the other, from the printed ends; left out where the weaker
        factor prints inverted ("x shorter"), whose ends would not match the printed ones."""
        from analysis import relation_of

        big, small, names = (
            (self.step, self.host_only, ("step", "host-only"))
            if kind == "slower"
            else (self.host_only, self.step, ("host-only", "step"))
        )
        if relation_of(small.p10_us, small.p90_us) == "below 1":
            return ""
        return f": smallest {names[0]} factor {big.p10_us:.2f} > largest {names[1]} factor {small.p90_us:.2f}, past {margin}"


def _measurable(factor: SimpleNamespace) -> bool:
    from analysis import relation_of

    return relation_of(factor.p10_us, factor.p90_us) != "about 1"


def _why(other: SimpleNamespace, cause: str, against: str) -> str:
    """Why the share is higher, given the factor that weighs less (`other`): "mostly because" where it raises the
    share too, "despite" where it measurably lowers it, "mainly because" where the rule cannot place it
    ("mostly" beside a host-only time that lowered the share; a bare "because" beside an inconclusive one)."""
    from analysis import relation_of

    relation = relation_of(other.p10_us, other.p90_us)
    return {"above 1": f"mostly because its {cause}", "below 1": f"because its {cause}, despite {against}"}.get(
        relation, f"mainly because its {cause}"
    )


def _times(factor: SimpleNamespace, above: str, below: str) -> str:
    """A factor range in words: "2.94-3.22x shorter" where the ratio rule puts it above 1, its inverse with `below`
    under 1, else "x as long" with the rule's word ("1.01-2.28x shorter" reached within the margin of 1)."""
    from analysis import CANNOT_TELL, CANNOT_TELL_ALONE, relation_of
    from analysis.verdicts import about_one

    lo, hi = factor.p10_us, factor.p90_us
    relation = relation_of(lo, hi)
    if relation == "above 1":
        return f"{lo:.2f}-{hi:.2f}x {above}"
    if relation == "below 1":
        return f"{1 / hi:.2f}-{1 / lo:.2f}x {below}"
    word = about_one(lo, hi)  # not a finding that they are equal
    return f"{lo:.2f}-{hi:.2f}x as long ({CANNOT_TELL_ALONE if word == CANNOT_TELL else word})"


def host_only_factors(traces: dict[str, Any], contention: dict[str, Any], subject: str, reference: str) -> HostOnlyFactors:
    """Judge whether the subject's step shrinks against the reference's by more than its host-only
    time grows: which of the two raises its host-only share the more.

    Args:
        traces: variant -> its loaded trace (analysis.load_trace), holding subject and reference.
        contention: variant -> the Contention of its profiled block.
        subject: the variant with the largest host-only share (the answer's); reference: the runner-up.

    Returns:
        HostOnlyFactors; its verdict is "slower" where the step factor lies measurably above the
        host-only factor (the shorter step weighs more), "faster" where below.
    """
    from analysis import combined, judge_timings, step_summary

    s = {n: step_summary(traces[n]).eval("host_only_us = step_us - busy_us - idle_total_us") for n in (subject, reference)}
    busy = combined([contention[reference], contention[subject]])
    step = _factor(s[reference]["step_us"], s[subject]["step_us"], busy)
    host = _factor(s[subject]["host_only_us"], s[reference]["host_only_us"], busy)
    verdict = judge_timings("step factor", step, "host-only factor", host, "x", 2)
    share = _factor(s[subject].eval("host_only_us / step_us"), s[reference].eval("host_only_us / step_us"), busy)
    spans = {n: {"step": p10_p90(s[n]["step_us"]), "host-only": p10_p90(s[n]["host_only_us"])} for n in s}
    return HostOnlyFactors(
        subject,
        reference,
        step,
        host,
        busy,
        verdict,
        share,
        spans,
        len(s[subject]) if len(s[subject]) == len(s[reference]) else 0,
    )


@dataclass
class LargestShare:
    """The prediction's answer: the variant with the largest host-only share judged against the
    runner-up. `subject`, `reference`: the two variants, largest first; `verdict`: their ranges
    judged (analysis.verdicts.judge_timings), or withheld; `answer`: the line that names the answer;
    `ranges`: every variant's share as a line, so that a reader checks a prediction about any of them
    (none where nothing was counted)."""

    subject: str
    reference: str
    verdict: Any
    answer: str
    ranges: list[str]


def largest_host_only_share(shares: dict[str, Any], counted: bool) -> LargestShare:
    """Judge the largest host-only share (by median) against the other variant whose range reaches
    highest (its p90, as the ranges print it), and name the answer only where the verdict tells
    them apart (a range overlap names both; nothing counted withholds it).

    Args:
        shares: variant -> its host-only share (%) per step, as a Timing (at least two variants).
        counted: whether every trace counted compute ops to split its step by.

    Returns:
        LargestShare; its answer reads "Answer: the largest share: <variant>", "<a> or <b>, cannot
        tell apart", or "withheld"; its ranges read "naive: 1.4-1.6 % of each step host only
        (p10-p90)", one per variant in the order given, "(BUSY)" after a busy block's.
    """
    from analysis import CANNOT_TELL_ALONE, judge_timings, withheld

    subject = max(shares, key=lambda n: shares[n].median_us)  # the largest median share
    others = [n for n in shares if n != subject]  # its reference: the other range that reaches highest, as printed
    reference = max(others, key=lambda n: (shares[n].p90_us, shares[n].median_us))
    if not counted:
        verdict, answer = withheld("the largest host-only share", "no compute ops counted to split the step by"), "withheld"
    else:
        verdict = judge_timings(subject, shares[subject], reference, shares[reference], "% host only")
        answer = (
            subject if verdict.measurable else f"{subject} or {reference}, {CANNOT_TELL_ALONE}"
        )  # the verdict printed above it says why
    busy = {n: " (BUSY)" if t.contention is not None and t.contention.busy else "" for n, t in shares.items()}
    lines = [f"{n}: {t.p10_us:.1f}-{t.p90_us:.1f} % of each step host only (p10-p90){busy[n]}" for n, t in shares.items()]
    return LargestShare(subject, reference, verdict, f"Answer: the largest share: {answer}", lines if counted else [])


def host_only_lines(fx: HostOnlyFactors, counted: bool) -> list[str]:
    """Notebook 06's lines after the answer: the factors (`host_only_factors`), or, where nothing was
    counted, a withheld line."""
    from analysis import withheld

    return fx.share_line.split("\n") if counted else [withheld("the factors", "no compute ops counted")]


def host_only_share(trace: Any, contention: Any) -> Any:
    """The host-only share (%) of each recorded step, as a Timing (a BUSY block concludes nothing)."""
    from analysis import Timing, step_summary

    s = step_summary(trace).eval("host_only_us = step_us - busy_us - idle_total_us")
    return Timing("host only", (s["host_only_us"] / s["step_us"] * 100).to_numpy(), 1, contention)


def drawn_steps(traces: dict[str, Any]) -> pd.DataFrame:
    """Each variant's drawn step (its median-length one, analysis.representative_step) split as the page names it:
    step_us, compute_ops, busy_us, gaps (their count), gap_us, host_only_us (step_us - busy_us - gap_us). The page
    uses these names only (a reader met device_ops / compute_ops and idle_gaps / gaps for one thing)."""
    from analysis import representative_step, step_summary

    rows = {name: step_summary(t).loc[representative_step(t)] for name, t in traces.items()}
    split = pd.DataFrame(rows).T[["step_us", "device_ops", "busy_us", "idle_gaps", "idle_total_us"]].astype(float)
    split = split.rename(columns={"device_ops": "compute_ops", "idle_gaps": "gaps", "idle_total_us": "gap_us"})
    return split.assign(host_only_us=split.eval("step_us - busy_us - gap_us"))


class _Line(str):
    """A line that a notebook cell ending in it shows as print() would (IPython's hook, as analysis.Verdict does)."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def labelled_gap_line(name: str, trace: Any) -> str:
    """The figure's labelled gap (the largest in `name`'s drawn step) over all recorded steps: the
    same pair of ops, its same occurrence in each step, as median and p10-p90, so that one step's
    outlier is not read as typical (170 us drawn, about 19 us in most steps). A cell
    ending in it shows the line as print() would.

    Returns:
        "naive's labelled gap (aten::div_ -> aten::add): 20 us in the drawn step, median 19 us over 12 steps", led by
        "One-off: "
        and followed by the p10-p90 ("most steps") where the drawn step's gap lies above the others' by analysis.verdicts.apart_bounds
        (a one-off 39x its median was read as the typical gap).
    """
    import numpy as np

    from analysis import gap_table, representative_step
    from analysis.verdicts import apart_bounds

    drawn = gap_table(trace)
    if not len(drawn):
        return _Line(f"{name}: no gap in the drawn step")
    big = drawn["gap_us"].idxmax()
    pair = (drawn.at[big, "after"], drawn.at[big, "before"])

    def nth(g: pd.DataFrame) -> pd.Series:  # the k-th gap between that pair, k as in the drawn step
        return g[(g["after"] == pair[0]) & (g["before"] == pair[1])]["gap_us"].reset_index(drop=True)

    k = int((nth(drawn.loc[:big]).size) - 1)
    steps = [int(s) for s in trace.steps["step"]] or [representative_step(trace)]
    values = [v.iloc[k] for v in (nth(gap_table(trace, s)) for s in steps) if len(v) > k]
    lo, hi = p10_p90(np.array(values))
    median, here = float(np.median(values)), float(drawn.at[big, "gap_us"])
    line = f"{name}'s labelled gap ({pair[0]} -> {pair[1]}): {here:.0f} us in the drawn step, median {median:.0f} us over {len(values)} steps"
    if here > apart_bounds((lo, hi))[1]:  # past the other steps' p90 by the margin: this step's outlier, not typical
        line = f"One-off: {line} (most steps {lo:.0f}-{hi:.0f} us). Read the median as typical"
    return _Line(line)


def drawn_step_table(split: pd.DataFrame) -> pd.DataFrame:
    """Notebook 06's drawn-step table as shown: `drawn_steps` rounded, counts as integers, only the columns the
    page uses (no share: the Predict below it asks for the largest one). The index is named DRAWN_CAPTION: one
    step per variant is not a comparison. A plain DataFrame, so the table's text stays in the run copy's plain
    output that reading_time.py counts.
    """
    table = split[["step_us", "compute_ops", "busy_us", "gap_us", "host_only_us"]].round(1)
    return table.astype({"compute_ops": "Int64"}).rename_axis(DRAWN_CAPTION)


def host_only_us_line(name: str, small: Any, small_tokens: int, trace: Any, tokens: int, busy: bool = False) -> str:
    """One variant's host-only time per step at two sizes (Exercise 2), so that a reader sees whether
    a share rose because the host-only time grew or because the step shrank by more.

    Args:
        name: the variant; small, trace: its loaded traces at small_tokens and at tokens rows.
        busy: the blocks that profiled them were BUSY (the share verdict above says so): the ranges print, no
            verdict on them ("host-only time grows too" printed under "concludes nothing").

    Returns:
        "naive: host-only time 17-26 us at 8 tokens, 123-146 us at 1024 (p10-p90): higher at 1024, past the 5% margin
        (cause not shown); median step 77.0x as long at 1024" (one line; "higher" only where the host-only ranges lie apart by
        analysis.judge_ranges, else the rule's word: a reader kept "host-only = a fixed per-call cost")
    """
    from analysis import judge_ranges, p10_p90, step_summary
    from analysis.verdicts import margin_percent

    def span(t: Any, column: str) -> tuple[float, float]:
        return p10_p90(step_summary(t).eval(column).to_numpy())

    def text(r: tuple[float, float]) -> str:
        return f"{r[0]:.0f}-{r[1]:.0f}"

    def ratio(column: str) -> str:  # median at tokens over median at small_tokens
        return f"{step_summary(trace).eval(column).median() / step_summary(small).eval(column).median():.1f}x"

    host = "step_us - busy_us - idle_total_us"
    ranges = f"{text(span(small, host))} us at {small_tokens} tokens, {text(span(trace, host))} us at {tokens} (p10-p90)"
    verdict = judge_ranges(f"host-only at {tokens}", span(trace, host), f"at {small_tokens}", span(small, host))
    if busy:
        said = "not judged (BUSY)"
    elif verdict.kind == "slower":  # a finding only where the ranges lie apart (a bare ratio read as a finding)
        said = f"{verdict.word} at {tokens}, past the {margin_percent()}% margin (cause not shown)"
    else:
        said = verdict.word
    return f"{name}: host-only time {ranges}: {said}; median step {ratio('step_us')} as long at {tokens}"


def gap_memory_ops(trace: Any, gap: pd.Series, memory_device_type: int | None = None) -> dict[str, list[str]]:
    """Which op made each block freed or allocated during `gap` (a `gap_table` row of `trace`'s
    representative step): a freed block by the last allocation at its address (the trace's
    [memory] events carry it), an allocation by itself; each named by the innermost ATen op then
    running (analysis.allocations.innermost_op): "code outside any op" where none ran, "before the
    profile" where the address was not allocated in it. The addresses come from the trace model
    (`trace.memory["addr"]`).

    Returns:
        {"freed": [("aten::rsqrt", 4096)], "allocated": []}  (each block: its op, its bytes)
    """
    from analysis import representative_step
    from analysis.allocations import innermost_op

    mem = trace.memory[trace.memory["addr"] != -1]
    if memory_device_type is not None:
        mem = mem[mem["device_type"] == memory_device_type]
    start = trace.steps.set_index("step").at[representative_step(trace), "ts"] + gap["start_us"]
    inside = mem[(mem["ts"] >= start) & (mem["ts"] < start + gap["gap_us"])]
    ops = trace.events[trace.events["cat"] == "cpu_op"]

    def made_by(block: pd.Series) -> str:
        made = mem[(mem["addr"] == block["addr"]) & (mem["bytes"] > 0) & (mem["ts"] <= block["ts"])]
        op = innermost_op(ops, made["ts"].iloc[-1], ("aten::empty",)) if len(made) else "before the profile"
        return "code outside any op" if op == "?" else op

    rows = [row for _, row in inside.iterrows()]
    return {
        "freed": [(made_by(r), -int(r["bytes"])) for r in rows if r["bytes"] < 0],
        "allocated": [(made_by(r), int(r["bytes"])) for r in rows if r["bytes"] > 0],
    }


def gap_memory_line(
    after: str, before: str, freed: int, allocated: int, x_bytes: int, row_bytes: int, steps: int, made_by: dict | None = None
) -> str:
    """Exercise 1's answer: what the figure's gap frees and allocates, read from a separate memory
    profile (the gap with the same ops either side), each size named and, with `made_by`
    (`gap_memory_ops`), each block on its own with the op that made it (a total of two blocks
    read as "another size" hid x's size inside it).

    Args:
        after, before: the ops either side of the gap; freed, allocated: its memory events' bytes;
        x_bytes: the input's size; row_bytes: one value per row; steps: the memory profile's steps.

    Returns:
        "aten::mul -> aten::mul, read in a separate 2-step memory profile: freed 4096 B (one value
        per row, made in aten::rsqrt); allocated 0 B (nothing)", then a line saying that sizes do
        not say what filled the gap.
    """
    sizes = {0: "nothing", x_bytes: "x's size", row_bytes: "one value per row"}
    made_by = made_by or {}

    def size(n: int) -> str:
        return sizes.get(int(n), "a few bytes" if n <= 8 else "another size")

    def name(n: int, key: str) -> str:
        blocks = made_by.get(key, [])
        if not n or not blocks:
            return f"{int(n)} B ({size(n)})"
        return " + ".join(f"{b} B ({size(b)}, made in {op})" for op, b in blocks)

    return (
        f"{after} -> {before}, read in a separate {steps}-step memory profile: "
        f"freed {name(freed, 'freed')}; allocated {name(allocated, 'allocated')}"
        "\nSizes, not times: this does not say what filled the gap."
    )


def eager_fusion_lines(total: int | None, active: int, scheduled: int, source_ops: int, by_hand: int | None = None) -> list[str]:
    """The naive profile's exported NEFF executions (`total`) divided by `ACTIVE` and by all scheduled
    steps (which steps the profile holds is UNVERIFIED), and the fusion verdict
    (analysis.eager_fusion_verdict) against its source ops with `mean` as one op and as `sum` + `div_`
    (Exercise 3, N40) only where `by_hand`, a by-hand count of one `ProfilerStep#`, equals one of the
    divisions: a division alone gives no verdict (7 ops read as 12.6 over ACTIVE)."""
    from analysis import eager_fusion_verdict

    how = {source_ops: "if mean is one op", source_ops + 1: "if mean runs as sum + div_"}
    if total is None:
        return [f"{said}: {eager_fusion_verdict(None, ops)}" for ops, said in how.items()]
    counts = (
        f"naive's exported /neuron_hw/ events: {total}; per step: {total / active:.1f} over ACTIVE ({active}),"
        f" {total / scheduled:.1f} over all {scheduled} scheduled steps"
    )
    if by_hand is None or by_hand * active != total and by_hand * scheduled != total:
        why = "no by_hand count of one ProfilerStep#" if by_hand is None else f"by_hand={by_hand} matches neither"
        return [counts, f"No fusion verdict ({why}): a division alone cannot say which steps the profile holds"]
    return [counts, *(f"{said}: {eager_fusion_verdict(by_hand, ops)}" for ops, said in how.items())]


def _longest_untraced(calls: pd.DataFrame, gap_us: float) -> tuple[float, float]:
    """The longest stretch of a gap (from its start, in us) that no host call covers: the time the
    trace cannot say what the host did (untraced Python, most likely), which a reader should not
    read as waiting on the device.
    """
    hole, reached = (0.0, 0.0), 0.0
    for start, end in sorted(zip(calls["from_gap_start_us"], calls["from_gap_start_us"] + calls["dur_us"])):
        if start > reached and min(start, gap_us) - reached > hole[1] - hole[0]:
            hole = (reached, min(start, gap_us))
        reached = max(reached, end)
    if gap_us - reached > hole[1] - hole[0]:
        hole = (reached, gap_us)
    return hole


def largest_gap_host_calls(trace: Any) -> tuple[str, pd.DataFrame]:
    """What the host did while the device sat idle in one step's largest gap: the framework and
    runtime calls that overlap it, times from the gap's start. A call that waits for the device
    (a synchronise, a copy back to read a value) there explains the idle time better than the ops
    either side of the gap, which only name where it sits.

    Args:
        trace: a loaded trace with a device lane (analysis.load_trace or load_recorded).

    Returns:
        (caption naming the gap's two ops, short kernel names (a copy's direction spelled out), its length and its
        start from the step's start (plot_timeline's axis, so a reader can find the rows on the figure), the
        longest stretch of it no host call covers (where one of 1 us or more occurs), and the gap's cause (idle_gaps: "launched late" when the
        next launch began only after the device went idle); DataFrame with
        columns name, lane, from_gap_start_us, dur_us, sorted by start), or an empty table
        where the step has no gap.
    """
    from analysis import gap_table, idle_gaps, representative_step, short_kernel_name

    step = representative_step(trace)
    gaps = gap_table(trace, step)
    columns = ["name", "lane", "from_gap_start_us", "dur_us"]
    if gaps.empty:
        return "no idle gap between compute ops", pd.DataFrame(columns=columns)
    gap = gaps.nlargest(1, "gap_us").iloc[0]
    start = float(trace.steps.set_index("step")["ts"][step]) + gap["start_us"]
    end = start + gap["gap_us"]
    ev = trace.events
    inside = ev[
        ev["lane"].isin(["framework", "runtime"]) & (ev["ts"] < end) & (ev["end"] > start) & (ev["dur"] < gap["gap_us"] * 10)
    ]
    calls = inside.assign(from_gap_start_us=inside["ts"] - start, dur_us=inside["dur"]).sort_values("ts")[columns]
    copies = {"Memcpy DtoH": "Memcpy DtoH (device to host)", "Memcpy HtoD": "Memcpy HtoD (host to device)"}
    after, before = (copies.get(short_kernel_name(gap[k]), short_kernel_name(gap[k])) for k in ("after", "before"))
    caption = f"Host calls in the largest gap ({after} -> {before}, {gap['gap_us']:.0f} us from {gap['start_us']:.0f} us on the figure's axis)"
    quiet = _longest_untraced(calls, float(gap["gap_us"]))
    if quiet[1] - quiet[0] >= 1:  # 1 us: the resolution
        ended = calls[((calls["from_gap_start_us"] + calls["dur_us"]) - quiet[0]).abs() < 1e-6]["name"]
        after = f" (when {ended.iloc[0]} ended)" if quiet[0] > 0 and len(ended) else ""
        caption += f"; the host traced nothing from +{quiet[0]:.0f}{after} to +{quiet[1]:.0f} us"
    causes = idle_gaps(trace, step)  # the same gaps; its cause column compares the next launch with the gap's start
    caption += f"; cause: {causes.nlargest(1, 'gap_us')['cause'].iloc[0]} (glossary)"
    return caption, calls.reset_index(drop=True)


def reading_traces_metrics(
    traces: dict[str, Any],
    split: pd.DataFrame,
    shares: dict[str, Any],
    largest: LargestShare,
    fx: HostOnlyFactors,
    neuron_device_executions: int | None,
) -> dict[str, Any]:
    """Notebook 06's published metrics and claims (analysis.claims).

    Args:
        traces: variant -> its loaded trace; split: `drawn_steps(traces)`, one row per variant, published under
            the names earlier runs used (compute_ops as device_ops_per_step, gaps as idle_gaps, gap_us as idle_us);
            its host-only share as `<variant>_host_only_%`.
        shares: variant -> its host-only share (%) per step, as a Timing; largest: the largest
            share judged against the runner-up (`largest_host_only_share`).
        fx: the step and host-only factors (`host_only_factors`).
        neuron_device_executions: the naive profile's NEFF executions (None off Trainium).

    Returns:
        name -> metric, with "claims", ready for `session.publish`.
    """
    from analysis import Claim
    from helpers.metrics import metric
    from helpers.series import VARIANT_KEYS

    counted = all(t.counts_device_ops for t in traces.values())
    lanes = {category: lane for t in traces.values() for category, lane in t.category_lanes().items()}
    metrics = {
        "lanes_present": metric(sorted(set().union(*(set(t.events["lane"].astype(str)) for t in traces.values()))), "lanes"),
        "trace_categories": metric(lanes, "category -> lane", "every Chrome-trace category seen in this run"),
        "device_ops_counted": metric(counted, "bool", next(iter(traces.values())).device_op_kind),
        "neuron_profile_device_executions": metric(neuron_device_executions, "executions", "naive: neuron_hw events"),
    }
    split = split.assign(**{"host_only_%": split["host_only_us"] / split["step_us"] * 100})  # the names earlier runs published
    for name, row in split.rename(
        columns={"compute_ops": "device_ops_per_step", "gaps": "idle_gaps", "gap_us": "idle_us"}
    ).iterrows():  # NaN where not counted
        metrics |= {f"{VARIANT_KEYS[name]}_{c}": metric(float(v), "us" if c.endswith("_us") else "count") for c, v in row.items()}
    shared = {"unit": "x", "contention": fx.busy and fx.busy.record()}
    for k, f, note in (("step", fx.step, (fx.reference, fx.subject)), ("host_only", fx.host_only, (fx.subject, fx.reference))):
        metrics |= {f"{k}_factor_{p}": metric(getattr(f, f"{p}_us"), note=" / ".join(note), **shared) for p in ("p10", "p90")}
    key = {n: f"{VARIANT_KEYS[n]}_host_only_share" for n in shares}
    for n, t in shares.items():
        metrics[key[n]] = metric(t.median_us, "%", "median", contention=t.contention and t.contention.record())
        metrics |= {f"{key[n]}_{q}": metric(getattr(t, f"{q}_us"), "%", q) for q in ("p10", "p90")}
    v = largest.verdict
    claims = [] if v.kind == "withheld" else [v.ranges_claim(key[v.subject], key[v.reference])]  # overlap too
    pair = {"slower": ("host_only_factor_p90", "step_factor_p10"), "faster": ("step_factor_p90", "host_only_factor_p10")}
    pair["no measurable difference"] = ("step_factor_p10", "step_factor_p90", "host_only_factor_p10", "host_only_factor_p90")
    if fx.verdict.kind in pair:
        relation = "overlap" if fx.verdict.kind == "no measurable difference" else "<"
        claims.append(Claim(relation, pair[fx.verdict.kind], fx.verdict.sentence))
    claims = claims if counted else []
    return metrics | {"claims": metric([c.record() for c in claims], "claims", "the conclusions above (analysis.claims)")}
