"""Notebook 03's join of two variants' ops: which were removed, added, changed form or count; the
byte model's line at the recorded fused rate (A2 prices 03's recorded calls with it).

Why: the lesson cell should show the joined table and one line, not the bookkeeping that sorts
each op into a kind of change.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.floor import SLOW_ROUND, slow_round_mask
from analysis.timing import PairedRatio, Timing
from analysis.verdicts import counted

CHANGES = ("removed", "added", "changed form", "count changed")


def op_changes(per_call: pd.DataFrame, before: str, after: str) -> pd.DataFrame:
    """Sorts each op of two variants into one kind of change.

    Why: `aten::add` in one variant against `aten::add_` (in place) in the other is the same work
    in another form, not an op removed and another added.

    Args:
        per_call: op name -> calls per call of each variant, one column per variant (0 where absent).
        before: the column of the variant compared against (e.g. "naive").
        after: the column of the variant under study (e.g. "torch.rms_norm").

    Returns:
        `per_call` with a `change` column: "both" (same count), "count changed", "removed" (in
        `before` only), "added" (in `after` only), or "changed form" (on one side only, but its
        in-place twin, the name with or without a trailing `_`, is in the table).
    """
    old, new = per_call[before], per_call[after]
    twin = {n: n[:-1] if n.endswith("_") else n + "_" for n in per_call.index}
    change = {}
    for n in per_call.index:
        side = "both" if old[n] == new[n] else "removed" if new[n] == 0 else "added" if old[n] == 0 else "count changed"
        change[n] = "changed form" if side in ("removed", "added") and twin[n] in per_call.index else side
    return per_call.assign(change=pd.Series(change, dtype=object))


def change_line(changes: pd.DataFrame) -> str:
    """One line listing the ops of each kind of change ("none" where a kind has none).

    Args:
        changes: `op_changes(...)`'s result.

    Returns:
        "removed: ... | added: ... | changed form: ... | count changed: ...".
    """
    return " | ".join(f"{c}: {', '.join(changes.index[changes['change'] == c]) or 'none'}" for c in CHANGES)


def own_time_line(table: pd.DataFrame, call: str, own_rows: list[str], steps: int, trace_path: object = None) -> str:
    """One call's CPU time per call and the part of it that the named rows spend themselves.

    Why: rows that call others (a label, a dispatcher, `_fused_rms_norm`) show a self time; set against the
    whole call it says how much of the time sits outside the child ops. The line names its rows, not
    "dispatch": on cpu `_fused_rms_norm`'s self time may be work done inline, not dispatch.

    Args:
        table: a profile's op table with `name`, `self_cpu_us` and `cpu_total_us`, summed over `steps`.
        call: the row of the whole call (e.g. "torch.rms_norm"); its `cpu_total_us` is the whole.
        own_rows: the rows whose own time is the part (e.g. the call and the ops it dispatches through).
        steps: how many profiled steps the table sums (the mean per call divides by it).
        trace_path: the profile's saved trace; given, both figures come from its median step instead
            (the 5-step mean, pulled up by one slow step, read 135 ms beside the tree's 103 ms), the share from
            the same step.

    Returns:
        "<call>'s CPU time per call, with its children: N us (profiler time; variants are compared by time
        under Side by side)" and an indented second line "of which the self CPU time of <row> + <row>: M us, P%" (the
        rows of `own_rows` in the table); two short lines, not one long one.
    """
    rows = table.set_index("name")
    own = rows.index.isin(own_rows)
    own_us = rows.loc[own, "self_cpu_us"].sum() / steps
    call_us = rows.at[call, "cpu_total_us"] / steps
    named = " + ".join(row for row in own_rows if row in rows.index)
    steps_said = "profiler time; variants are compared by time under Side by side"  # the timer judges, not the mean
    # "the interleaved timer" was a term the page defines only later: name the section instead
    subject = f"{call}'s CPU time per call, with its children"
    if trace_path is not None:
        call_us, own_us = _median_step_times(trace_path, call, own_rows)
        subject = f"{call}'s CPU time in the median profiled step, with its children"
    # counted sets a count against a reference; here the part is inside the whole, so only the first half is said
    whole = counted(subject, call_us, "us", "its own rows", own_us, steps_said).sentence.rsplit(" against ", 1)[0]
    return f"{whole}\n  of which the self CPU time of {named}: {own_us:,.0f} us, {own_us / call_us:.1%}"


def _median_step_times(trace_path: object, call: str, own_rows: list[str]) -> tuple[float, float]:
    """The call's duration in the trace's median step and the self time of `own_rows` there (duration less direct children)."""
    from analysis.call_trees import call_tree
    from analysis.traces import load_trace, representative_step

    trace = load_trace(trace_path)
    nodes = [n for n in call_tree(trace, call, representative_step(trace), max_depth=99) if n.duration_us is not None]
    own_us = 0.0
    for i, node in enumerate(nodes):
        if node.name in own_rows:
            below = []
            for n in nodes[i + 1 :]:
                if n.depth <= node.depth:
                    break
                below.append(n)
            own_us += node.duration_us - sum(n.duration_us for n in below if n.depth == node.depth + 1)
    return nodes[0].duration_us, own_us


def ratio_ends(timings: dict[str, Timing], ratio: PairedRatio) -> str:
    """Which round set each end of a paired ratio's range: "p10 from a round slow for naive, p90 from no slow round".

    Why: a pair's range can end at one variant's slow round; A3's section on the ends of a pair's range prints this
    for 05's large-shape pair, so that a "no measurable difference" and a "cannot tell apart" show their reason.
    Where no slow round sets an end, it names the variant furthest from its median in that round, with its factor
    (a round at 1.23x, under the cut, set a p10 of 0.82 that "from no slow round" left unexplained).
    """
    names = (ratio.numerator, ratio.denominator)
    rounds = ratio.per_round
    factor = {n: timings[n].samples_us[: len(rounds)] / timings[n].median_us for n in names}
    slow = {n: slow_round_mask(timings[n])[: len(rounds)] for n in names}
    ends = []
    for end, value in (("p10", ratio.p10), ("p90", ratio.p90)):
        i = int(np.flatnonzero(rounds == value)[0])  # the series' p10 and p90 are samples (analysis.timing.p10_p90)
        whose = [n for n in names if slow[n][i]]
        far = max(names, key=lambda n: abs(np.log(factor[n][i])))  # the variant that moved this round's ratio most
        under = f"a round where {far} took {factor[far][i]:.2f}x its median (under {SLOW_ROUND:g}x)"
        ends.append(f"{end} from {'a round slow for ' + ' and '.join(whose) if whose else under}")
    return ", ".join(ends)


def fused_rate_line(priced: pd.DataFrame, fused_call: pd.Series, saving: object, stamped: tuple | list = ()) -> str:
    """The saving's subject, one plain line per device, the estimate's basis, then the fused rate's one-pass time.

        Why: the byte model's headline assumes a one-pass kernel reaches the naive kernels' rate; the recorded
        fused calls are far smaller and far slower, so their rate is no check of the headline, only a second rate,
        recorded on an MI300X only; the fused-rate line is a one-pass kernel's time, not a third saving
    . Three lines of nested parentheticals, and "the MI300X's range above" beside "at the naive
        rate" (where the MI300X has one figure): now one plain line per device, each saying which rate gives which figure.
        "the only rate recorded; untested" read as a finding: a device with one rate says "not a verdict"; a
        device whose recording stamps kernels back to back keeps 02's caveat on its line (its rate may be understated).

        Args:
            priced: `analysis.fused_comparison` per device, one column each ("an NVIDIA H100", ...).
            fused_call: one row of the recorded fused calls' `call_table` (its `x_dtype`, `x_shape`).
            saving: the saving at the naive rate (`verdicts.estimate`): its subject heads the lines, its basis follows them.
            stamped: the devices whose recording stamps kernels back to back (`lesson.stamps_back_to_back`).

        The first line is the byte model's takeaway: how many times the one-pass minimum the naive kernels move (their
        bytes counted from their shapes), the room a one-pass kernel has. The fused calls'
        one-pass time is the table's "one-pass, fused rate" row, so the last line only says where that rate comes from.

        Returns:
            `room_line`, "<subject>:", then "H100: about H us at the naive rate (one rate only: not a verdict)", "MI300X:
            about H us at the naive rate, L us at the small fused calls' rate: inconclusive; kernels stamped back to back:
            times may include idle" (the last clause for a device in `stamped`), then "(estimated, not measured: ...)",
            then "the small fused calls' rate: the median of the N recorded (MI300X, Kx fewer bytes), R GB/s" (their
            dtype and shape are in the table above it).
    """
    first = priced.iloc[:, 0]  # the recorded rates and the Qwen2 shape's minimum: the same in every column
    at_rate = first["fused_min_at_fused_rate_us"]
    said = getattr(saving, "sentence", str(saving))
    lines = [room_line(priced), f"{getattr(saving, 'subject', said)}:"]
    for device, naive in priced.loc["naive_kernel_us"].items():
        saved = priced.at["saved_at_naive_rate_us", device]
        short = device.split()[-1]  # "an NVIDIA H100" -> "H100"
        if FUSED_RATE_ON not in device:
            lines.append(f"{short}: about {saved:.0f} us at the naive rate (one rate only: not a verdict)")
        else:
            fused = f"{naive - at_rate:.0f} us at the small fused calls' rate: inconclusive"
            lines.append(f"{short}: about {saved:.0f} us at the naive rate, {fused}")
        if device in stamped:  # 02's caveat: a start stamped at the previous kernel's end may put idle in kernel times
            lines[-1] += "; kernels stamped back to back: times may include idle"
    if "(estimated" in said:
        lines.append(said[said.index("(estimated") :])
    fewer = first["fused_min_mb"] * 1e6 / first["fused_bytes"]
    # the rates' range is dropped (a line of over 4 numbers is a stumble; 03's table and A2 keep the rate)
    recorded = f"MI300X, {fewer:.0f}x fewer bytes"  # their dtype and shape: the recorded fused calls' table
    at = f"the small fused calls' rate: the median of the {first['fused_rates']:.0f} recorded ({recorded}), {first['fused_gb_per_s']:.0f} GB/s"
    return "\n".join([*lines, at])


def room_line(priced: pd.DataFrame) -> str:
    """How many times the one-pass minimum the recorded naive kernels move: the byte model's takeaway in one line.

    Why: the table gives rates and times only; a reader left with "inconclusive" and no lesson. The naive bytes are
    counted from the kernels' shapes (`analysis.call_table`, 02); the table's rate is those bytes over the recorded
    kernel time, so the rate times the time (medians) gives them back ("estimated as recorded rate x time"
    read as if the rate were measured and the bytes derived).

    Args:
        priced: `analysis.fused_comparison` per device, one column each.
    Returns:
        "naive moves about Nx the one-pass minimum (B MB, counted from its kernels' shapes in 02, against M MB): the
        room a one-pass kernel has"; N and B as a range "lo-hi" where the devices differ once rounded.
    """
    moved = priced.loc["naive_gb_per_s"] * priced.loc["naive_kernel_us"] / 1e3  # GB/s x us = kB; / 1e3 = MB
    minimum = float(priced.loc["fused_min_mb"].iloc[0])

    def span(values: pd.Series) -> str:
        low, high = f"{values.min():.0f}", f"{values.max():.0f}"
        return low if low == high else f"{low}-{high}"

    return (
        f"naive moves about {span(moved / minimum)}x the one-pass minimum ({span(moved)} MB, counted from its kernels'"
        f" shapes in 02, against {minimum:.1f} MB): the room a one-pass kernel has"
    )


FUSED_RATE_ON = "MI300X"  # the only device with recorded fused calls: its rate prices no other device's kernel

PRICED_ROWS = {
    "naive_kernel_us": "naive kernels (us)",
    "naive_gb_per_s": "naive rate = bytes / time (GB/s)",
    "fused_min_mb": "one-pass bytes (MB)",
    "fused_min_at_naive_rate_us": "one-pass, naive rate (us)",
    "saved_at_naive_rate_us": "saved, naive rate (us, estimate)",
    "fused_min_at_fused_rate_us": "one-pass, fused rate (us)",
}


def priced_table(priced: pd.DataFrame) -> pd.DataFrame:
    """The byte model's table for display: its rows in plain words, rounded to 0.1.

    Why: the keys (`fused_min_at_naive_rate_us`, ...) are the published metrics' names, defined nowhere on
    the page; the display renames them and keeps the keys for `fused_metrics`.
    a "saved" row for each end of the range (the naive rate's and the fused rate's), not the top only.
    the fused-rate rows say "none recorded" for a device other than FUSED_RATE_ON.

    Args:
        priced: `analysis.fused_comparison` per device, one column each.
    Returns:
        the rows of PRICED_ROWS, renamed to its plain words, then "saved, fused rate (us, estimate)".
    """
    shown = priced.loc[list(PRICED_ROWS)].rename(index=PRICED_ROWS)
    shown.loc["saved, fused rate (us, estimate)"] = priced.loc["naive_kernel_us"] - priced.loc["fused_min_at_fused_rate_us"]
    shown = shown.round(1).astype(object)
    other = [device for device in shown.columns if FUSED_RATE_ON not in device]
    shown.loc[["one-pass, fused rate (us)", "saved, fused rate (us, estimate)"], other] = "none recorded"
    return shown
