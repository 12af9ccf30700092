"""Notebook 02's bookkeeping: what one call allocated, the share of a step its gaps take, where a
recorded call's idle time went, the recorded calls' published figures, and the op a copy ran in (its metrics: lesson.published_metrics).

Why here: the line under the gaps table is plumbing, not the lesson; one call keeps 02 on the
profile.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import torch


# Bytes per element -> the dtype of a full tensor wider than x (expected: bfloat16 `sum` on cpu adds in float32).
WIDER_DTYPES = {4: "float32", 8: "float64"}


def allocation_line(allocs: pd.DataFrame, x: torch.Tensor, ratio: float, made_in: str = "") -> str:
    """One call's allocations against the input, with a parenthesis that adds up to the ratio: the
    output, the x-sized intermediates and any full tensor (one value per element of x) in a wider
    dtype, so that the line stays true in every dtype (exercise 1 reruns it in bfloat16). The line
    states only the size and the op running at the allocation: what the wider tensor holds, and that
    `sum` adds in float32, are not read from the trace: the line says only that the size fits it.

    Args:
        allocs: `analysis.allocations_by_op` of one step (one call), `bytes` per allocation.
        x: the input tensor (its bytes and element count).
        ratio: the allocated bytes per call over x's bytes (`analysis.per_call_summary`).
        made_in: the op running when the (first) wider tensor was allocated (`lesson.op_around`); "" omits it.

    Returns:
        One line, e.g. "10 allocations (4 scalars, 3 per-row): 3.00x the input (output + 2 x-sized
        intermediates)": a scalar holds one number (8 bytes at most), a per-row tensor one value per
        row of x (a (tokens x 1) tensor, up to 8 bytes per value); a wider copy adds
        " + 2.00x in a float32-sized full tensor made inside aten::sum, a size that fits sum adding in
        float32 (not shown here)" (the op only where `made_in` is given, the size remark only for `sum`).
    """
    input_bytes = x.numel() * x.element_size()
    if allocs.empty:
        return "no allocations recorded in this step on this backend"
    rows = x.numel() // x.shape[-1]
    size = allocs["bytes"]
    scalars = int((size <= 8).sum())  # one number each: counted, not listed (A2 names them)
    per_row = int(((size > 8) & (size % rows == 0) & (size <= 8 * rows)).sum())
    extra = int((allocs["bytes"] == input_bytes).sum()) - 1  # the other x-sized one is the output
    wider = allocs.loc[allocs["bytes"] > input_bytes, "bytes"]
    parts = f"output + {extra} x-sized intermediates"
    if len(wider):
        per_element = int(wider.iloc[0] // x.numel())
        dtype = WIDER_DTYPES.get(per_element, f"{per_element}-byte")
        copies = "a" if len(wider) == 1 else str(len(wider))
        parts += f" + {wider.sum() / input_bytes:.2f}x in {copies} {dtype}-sized full tensor{'' if len(wider) == 1 else 's'}"
        parts += f" made inside {made_in}" if made_in else ""
        parts += f", a size that fits sum adding in {dtype} (not shown here)" if made_in == "aten::sum" else ""
    return f"{len(allocs)} allocations ({scalars} scalars, {per_row} per-row): {ratio:.2f}x the input ({parts})"


def gap_share(steps: pd.DataFrame, step: int | None = None) -> tuple[float, str]:
    """The idle gaps' share of the ops' span in a step (busy + idle time between its ops: from the
    first op's start to the last op's end, not the whole step), median over the recorded steps.
    The printed line states the shares' range over the steps (the result: how large the gaps were in
    every step), then the step the gaps table shows, so a reader who adds the table finds its figure.

    Args:
        steps: `analysis.step_summary` of the profile (one row per recorded step).
        step: the step the gaps table shows (an index of `steps`); None prints the median only.

    Returns:
        (the median share, NaN where the backend's ops are not counted; the lines to print under the
        gaps table: the steps' range of shares and the shown step's gaps, then `judge_steps`' verdict on
        whether the ops held most of the ops' span in every step).
    """
    from analysis.verdicts import judge_steps

    shares = steps["idle_total_us"] / (steps["busy_us"] + steps["idle_total_us"])
    share = float(shares.median())
    if math.isnan(share):
        return share, "gaps: not counted on this backend (its ops are not in the trace; notebook 06 reads its profile)"
    most = judge_steps("the ops, not the gaps between them, held most of their span", int((shares < 0.5).sum()), len(steps))
    low, high = f"{shares.min():.1%}", f"{shares.max():.1%}"
    line = f"gaps: {low if low == high else f'{low[:-1]}-{high}'} of the ops' span in each of the {len(steps)} steps"
    if step is not None and step in shares.index:  # the table's step, for a reader who adds its gaps
        line += f"; the table's step: gaps total {steps.at[step, 'idle_total_us']:.1f} us, {shares[step]:.1%} of its ops' span"
    return share, f"{line}\n{most.sentence}"


def recorded_kernel_table(recorded: dict, unread: list) -> tuple[str, pd.DataFrame]:
    """02's per-kernel table of the two recorded calls (H100, MI300X). Why here: it is display code
    (labels, GiB/s conversion, the idle star) that would stall a workshop seat; the lesson
    is the table, read in the notebook.

    Args:
        recorded: {device: (kernels, calls)} for the H100 then the MI300X (`analysis.call_kernels`, `call_table`).
        unread: the devices whose kernels are stamped back to back (`stamps_back_to_back`): idle not read.

    Returns:
        (the note to print above the table;
        the table: MiB, then each device's median device_us and bytes / time in GiB/s (shape bytes, not
        measured traffic), rows labelled by what each op does; a star marks the MI300X columns when unread).
    """
    from analysis import kernels_by_op

    (h100, _), (mi300x, _) = recorded.values()
    note = [f"*{d}: kernels stamped back to back: its times may include idle" for d in unread]
    per_kernel, on_mi300x = kernels_by_op(h100), kernels_by_op(mi300x)
    # what each op does, in the call's order in the trace; both copy_ move the same bytes, so the casts are
    # labelled by position only (Qwen2RMSNorm casts to fp32 first)
    what = ["to fp32", "x**2", "mean", "+eps", "rsqrt", "x*r", "to bf16", "*weight"]
    gib = 1e9 / 2**30  # gb_per_s counts 10^9 bytes/s: shown in GiB/s, the page's binary units
    times = {
        "MiB": per_kernel["bytes"] / 2**20,
        "h100_us": per_kernel["device_us"],
        "h100_gib_per_s": per_kernel["gb_per_s"] * gib,
    }
    star = "*" if list(recorded)[1] in unread else ""  # marks the columns whose times may include idle
    times.update({f"mi300x_us{star}": on_mi300x["device_us"], f"mi300x_gib_per_s{star}": on_mi300x["gb_per_s"] * gib})
    labels = per_kernel["op"].str.removeprefix("aten::") + [f" ({w})" for w in what]
    table = pd.DataFrame(times).set_index(labels).rename_axis("op").round(2)
    # the devices side by side read as a ranking without the caution repeated here
    # MiB and gib_per_s: used by exercise 2, defined where they print; gib_per_s is not a measured rate
    columns = "MiB: each kernel's input + output bytes, from shapes; gib_per_s: MiB / kernel time, not measured traffic"
    return "\n".join(["per-kernel medians over the calls; do not rank the devices", columns, *note]), table


# The ops a dtype copy runs as (its allocation happens inside them): not the op that asked for it.
COPY_OPS = ("aten::_to_copy", "aten::to", "aten::empty", "aten::copy_")


def op_around(events: pd.DataFrame, ts: float, own: tuple[str, ...] = COPY_OPS) -> str:
    """The innermost op running at `ts` that is not one of `own`: for a `_to_copy` allocation, the
    op of the source that made the copy (exercise 1's answer: in which op, so in which dtype, `sum` adds).

    Args:
        events: analysis.trace.load_trace(...).events (columns name, ts, end, dur).
        ts: the moment, e.g. an allocation's `ts` from analysis.allocations_by_op.
        own: name prefixes to skip (the copy's own ops).

    Returns:
        The op's name; "?" where no other op was running.
    """
    from analysis.allocations import innermost_op

    return innermost_op(events, ts, own)


# A gap between two kernels this short is a start stamped where the previous kernel ended (back to back), not
# a reading of idle time: the H100 recording's queued kernels lie about a microsecond apart, none within it.
STAMPED_US = 0.01


def stamps_back_to_back(kernels: pd.DataFrame) -> bool:
    """Whether a recording stamps each kernel's start where the previous one ended: more than half
    of its gaps are STAMPED_US or less (the MI300X recording's, to the nanosecond). Its idle time is
    then not read from its stamps, nor whether a launch came late (that compares a launch with the
    previous kernel's end), nor whether every launch came before a call's first kernel began.

    Args:
        kernels: `analysis.call_kernels(...)` rows of every call of the recording (`gap_before_us`).
    Returns:
        True where the stamps are back to back; False where no gap is known.
    """
    gaps = kernels["gap_before_us"].dropna()
    return bool(len(gaps)) and int((gaps <= STAMPED_US).sum()) > len(gaps) / 2


def idle_split(device: str, kernels: pd.DataFrame, every: pd.DataFrame | None = None) -> str:
    """Where one call's device idle time went: the gaps opened by a late launch (the device waited
    for the host) against the queued ones (the launch was already waiting), so that the plotted
    call's shaded gaps are read, not only counted; with how many of the recording's kernel gaps are
    stamped back to back (STAMPED_US or less), which says whether the split is read at all: in the
    MI300X recording most kernels start where the previous one ended (to the nanosecond), most
    likely how that trace stamps kernels, so its idle time and launches are not read
    (`stamps_back_to_back`), its "0.0 us idle" no reading of a gapless device, and its kernel times may
    hold idle time (a start stamped early lengthens the kernel).

    Args:
        device: the device as a sentence names it (e.g. "an NVIDIA H100").
        kernels: `analysis.call_kernels` rows of one call (`gap_before_us`, `launched_late`).
        every: the same rows of every call of the recording, for the count of stamped gaps; None:
            the plotted call's own.

    Returns:
        Two lines: the idle µs between the call's kernels, split into late-launch and queued µs (what a
        queued kernel waited for is not in the trace: the glossary's "waited for something else"); then
        the recording's stamped gaps ("an NVIDIA H100: 0 of 343 kernel gaps within 0.01 us (its 49
        calls): not stamped back to back"). Where the recording stamps back to back, one line: the
        count and "stamped back to back, so its idle and launches are not read" instead.
    """
    every = kernels if every is None else every
    all_gaps = every["gap_before_us"].dropna()
    n_calls = every["call"].nunique()
    stamped = f"{int((all_gaps <= STAMPED_US).sum())} of {len(all_gaps)} kernel gaps within {STAMPED_US} us"
    stamped += f" (its {n_calls} call{'s' * (n_calls != 1)})"
    if stamps_back_to_back(every):
        return f"{device}: {stamped}: stamped back to back, so its idle and launches are not read"
    gaps = kernels["gap_before_us"].fillna(0.0)
    late = float(gaps[kernels["launched_late"]].sum())
    return (
        f"{device}, the plotted call: {gaps.sum():.1f} us idle: {late:.1f} us launched late, "
        f"{gaps.sum() - late:.1f} us queued (cause not in the trace)\n{device}: {stamped}: not stamped back to back"
    )


UNEXAMINED = "; cause not examined here"  # closes call_exceptions' line: the trace does not say why


def call_exceptions(calls: pd.DataFrame) -> str:
    """The calls in which the device may have waited for the host, each under the condition it
    failed in a short form, so that a count of the calls that passed names what the others did.

    Args:
        calls: `analysis.call_table` of one trace's calls (`call` numbered in trace order,
            `launched_ahead_us`, `late_gaps_us`).

    Returns:
        "" where every call passed; else e.g. ". Exceptions: the trace's first 3 (calls 0-2), whose
        first kernels began before the host's last launch (by 136, 52, 19 us). In call 0 a gap was
        launched late; in calls 1, 2 none was; cause not examined here" (the trace does not say why, so
        that no reader takes warm-up for a finding).
    """
    behind = calls[~(calls["launched_ahead_us"] > 0)]  # NaN (no kernel) fails too
    still_in = behind["call"].tolist()
    by = ", ".join(f"{-v:.0f}" for v in behind["launched_ahead_us"].dropna())
    began = "the first kernels began before the host's last launch" + (f" (by {by} us)" if by else "")
    late = calls["call"][calls["late_gaps_us"] > 0].tolist()
    failed = sorted(set(still_in) | set(late))
    if not failed:
        return ""
    first = sorted(calls["call"])[: len(failed)] == failed
    which = (
        f"the trace's first {len(failed)} (calls {_runs(failed)})" if first else f"calls {_runs(failed)} (0 the trace's first)"
    )
    if still_in == failed:  # one condition names them all: said once
        which += ", whose " + began.removeprefix("the ")
        rest = [n for n in failed if n not in late]  # said too, so that no call is left to infer
        late_line = f". In {_calls(late)} a gap was launched late" + (f"; in {_calls(rest)} none was" if rest else "")
        return f". Exceptions: {which}" + (late_line if late else "") + UNEXAMINED
    parts = []
    if still_in:
        parts.append(f"In {_calls(still_in)} {began}")
    if late:
        parts.append(f"{'in' if still_in else 'In'} {_calls(late)} a gap was launched late")
    return f". Exceptions: {which}. " + "; ".join(parts) + UNEXAMINED


def _calls(numbers: list) -> str:
    """ "call 0" or "calls 0-3": the call numbers with the noun's number."""
    return f"call{'s' * (len(numbers) > 1)} {_runs(numbers)}"


def _runs(numbers: list) -> str:
    """Call numbers, runs of three or more collapsed: [0, 1, 2, 3, 7, 8] -> "0-3, 7, 8"."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b - a > 1 else ", ".join(map(str, range(a, b + 1))) for a, b in spans)


# The recorded calls' figures 02 publishes (tests/test_notebooks.py and the regression checks read them).
RECORDED_FIGURES = ("calls", "kernels_per_call", "host_ops_per_call", "median_kernel_us", "bytes_ratio", "full_size_ios")


def recorded_call_metrics(name: str, device: str, calls: pd.DataFrame) -> dict[str, dict]:
    """The published figures of one recorded trace's naive calls, kept out of the notebook's loop
    (bookkeeping a learner need not read).

    Args:
        name: the device's short name in the metric names ("h100" gives `recorded_h100_calls`, ...).
        device: the device as a sentence names it (e.g. "an NVIDIA H100"), for each metric's note.
        calls: `analysis.call_table` of the trace's naive calls.

    Returns:
        `recorded_<name>_<figure>` -> `helpers.metric(...)` for each of RECORDED_FIGURES, from
        `analysis.calls_summary` (medians over the calls).
    """
    from analysis.module_calls import calls_summary
    from helpers.metrics import metric

    found = calls_summary(calls)
    return {f"recorded_{name}_{k}": metric(found[k], "", f"Qwen2RMSNorm on {device}, by TraceLens") for k in RECORDED_FIGURES}
