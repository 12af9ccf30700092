"""What the device did, read from one trace's device lane and its links back to the host.

A cpu run has no device lane, so the facts this module computes exist only in a trace recorded
on an accelerator (the series ships real ones in data/recorded/) or in a learner's own cuda run:

- `launches`: each device operation with the runtime call that launched it (same correlation id,
  the link Perfetto draws as an arrow), the host time of that call, the device time of the
  operation, and the launch latency (device start - launch start);
- `host_vs_device`: per top-level PyTorch op, its host time against the device time of the work
  it launched;
- `host_waits`: each synchronize call, how long the host was blocked and which device operation
  it was waiting for;
- `host_ops_during`: the top-level PyTorch ops the host ran in an interval (what kept it from
  launching during an idle gap);
- `idle_gaps`: each gap in which no device operation ran, and whether the host launched the next
  one late or it was queued behind something else;
- `busy_summary`: device busy time, idle time and operation counts, for comparison with HTA;
- `step_partition`: the device timeline of the profiled steps cut into one window per step, so
  that per-step busy and idle time add up to the whole trace's.

Every function takes a trace as `analysis.traces.load_trace` returns it (read by its attributes:
`events` with a `lane` per event, times in µs) and selects either the whole trace, one profiler
`step`, or a `window` of (start, end) µs (device work launched in it, from its first start to its
last end). Steps partition the device timeline (`step_partition`): device work belongs to the step
whose host code launched it, and a step's figures are those of its device window, from its first
operation's start to the next step's first operation's start. In a trace with profiler steps "the
whole trace" is the steps' device timeline, the union of those windows, so the per-step figures
sum to it exactly; in a trace without steps it is all its device work. No function looks at the
backend's name: on neuron, where no category is verified as device-side (docs/NEURON_NOTES.md
N19), the device lane is empty and so is the answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

# cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize: the host blocks until the device is done
SYNC_CALL_PATTERN = r"(?i)synchronize"
# The device-side record of a synchronization (Kineto's `cuda_sync` category): "Event Sync", "Stream Sync", ...
SYNC_CATEGORY = "cuda_sync"
KERNEL_CATEGORY = "kernel"


def short_kernel_name(name: str) -> str:
    """A kernel's name without return type, namespaces, template and argument lists, for tables:
    `void at::native::reduce_kernel<512, 1, ...>(...)` -> `reduce_kernel`; `Memcpy DtoH (Device ->
    Pageable)` -> `Memcpy DtoH`."""
    text = name.removeprefix("void ").replace("(anonymous namespace)::", "")
    cut = min((i for i in (text.find("<"), text.find("(")) if i > 0), default=len(text))
    return text[:cut].strip().rsplit("::", 1)[-1]


def annotation_window(trace: Any, name: str, occurrence: int = -1) -> tuple[float, float]:
    """(start, end) in µs of the `occurrence`-th event named `name` (the last by default): a
    recorded region, such as one benchmark iteration, to pass as `window`."""
    ev = trace.events
    found = ev[ev["name"] == name].sort_values(["ts", "dur"], ascending=[True, False])
    if found.empty:
        raise ValueError(f"no event named {name!r} in {getattr(trace, 'path', 'the trace')}")
    row = found.iloc[occurrence]
    return float(row["ts"]), float(row["end"])


def device_work(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> pd.DataFrame:
    """Device operations (kernels, copies, sets; not GPU-side annotations), sorted by start, with
    `launch_ts`: when their launch started on the host (NaN where no launch is linked)."""
    ev = trace.events
    dev = ev[(ev["lane"] == "device") & ~ev["cat"].astype(str).str.lower().eq("gpu_user_annotation")].copy()
    launch = _launch_calls(trace).set_index("correlation")["ts"]
    dev["launch_ts"] = dev["correlation"].map(launch).astype(float)
    if step is not None:
        dev = dev[dev["step"] == step]
    if window is not None:
        at = dev["launch_ts"].fillna(dev["ts"])
        dev = dev[(at >= window[0]) & (at < window[1])]
    return dev.sort_values(["ts", "end"]).reset_index(drop=True)


def _launch_calls(trace: Any) -> pd.DataFrame:
    ev = trace.events
    return ev[(ev["lane"] == "runtime") & (ev["correlation"] >= 0)].drop_duplicates("correlation")


def launches(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> pd.DataFrame:
    """One row per device operation with a linked launch: `name`, `stream`, `device_us` (its
    duration), `launch` (the runtime call), `launch_us` (host time spent in that call),
    `latency_us` (device start - launch start: queueing plus the launch itself), `ts`,
    `launch_ts`, `correlation` and `step`."""
    dev = device_work(trace, step, window)
    calls = _launch_calls(trace)[["correlation", "name", "dur"]].rename(columns={"name": "launch", "dur": "launch_us"})
    out = dev.merge(calls, on="correlation")
    out["latency_us"] = out["ts"] - out["launch_ts"]
    out["name"] = out["name"].astype(str)
    out["launch"] = out["launch"].astype(str)
    return out.rename(columns={"tid": "stream", "dur": "device_us"})[
        ["name", "stream", "device_us", "launch", "launch_us", "latency_us", "ts", "launch_ts", "correlation", "step"]
    ]


def _top_level_ops(trace: Any) -> pd.DataFrame:
    """The outermost `cpu_op` events of each thread: the PyTorch calls a program made."""
    ev = trace.events
    ops = ev[ev["cat"] == "cpu_op"].sort_values(["tid", "ts", "dur"], ascending=[True, True, False])
    open_until = ops.groupby("tid", observed=True)["end"].transform(lambda e: e.cummax().shift(1))
    return ops[~(ops["ts"] < open_until)]


def _enclosing(outer: pd.DataFrame, events: pd.DataFrame) -> pd.Series:
    """For each of `events`, the index in `outer` of the op on the same thread that contains its
    start (-1 where none does). `outer` must not overlap itself on a thread."""
    found = pd.Series(-1, index=events.index)
    for tid, on_thread in events.groupby("tid", observed=True):
        o = outer[outer["tid"] == tid].sort_values("ts")
        if o.empty:
            continue
        i = np.searchsorted(o["ts"].to_numpy(), on_thread["ts"].to_numpy(), side="right") - 1
        ok = (i >= 0) & (on_thread["ts"].to_numpy() < o["end"].to_numpy()[np.maximum(i, 0)])
        found.loc[on_thread.index[ok]] = o.index.to_numpy()[i[ok]]
    return found


def host_vs_device(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> pd.DataFrame:
    """Per top-level PyTorch op (name): `calls`, `host_us` (its time on the host, launches
    included), `device_ops` and `device_us` (the device work it launched), and `kernels` (their
    distinct names, longest first). Sorted by host time, longest first."""
    top = _top_level_ops(trace)
    if step is not None:
        top = top[top["step"] == step]
    if window is not None:
        top = top[(top["ts"] >= window[0]) & (top["ts"] < window[1])]
    calls = _launch_calls(trace)
    work = launches(trace)
    owner = _enclosing(top, calls.set_index("correlation").loc[work["correlation"]].reset_index())
    work["op"] = top["name"].astype(str).reindex(owner.to_numpy()).to_numpy()
    work = work[owner.to_numpy() >= 0]
    by_op = work.groupby("op")
    out = pd.DataFrame(
        {
            "calls": top.groupby(top["name"].astype(str)).size(),
            "host_us": top.groupby(top["name"].astype(str))["dur"].sum(),
            "device_ops": by_op.size(),
            "device_us": by_op["device_us"].sum(),
            "kernels": by_op.apply(
                lambda w: list(w.groupby("name")["device_us"].sum().sort_values(ascending=False).index), include_groups=False
            ),
        }
    )
    out = out[out["calls"].notna()]
    out[["device_ops", "device_us"]] = out[["device_ops", "device_us"]].fillna(0)
    out["kernels"] = out["kernels"].apply(lambda k: k if isinstance(k, list) else [])
    out = out.astype({"calls": int, "device_ops": int})
    return out.rename_axis("op").sort_values("host_us", ascending=False)


def host_ops_during(trace: Any, start: float, end: float) -> pd.DataFrame:
    """The top-level PyTorch ops the host was running between `start` and `end` (µs): `name`,
    `ts`, `dur`, `overlap_us` (their time inside the interval). What the host was busy with while the
    device sat idle in a gap "launched late"."""
    top = _top_level_ops(trace)
    during = top[(top["end"] > start) & (top["ts"] < end)]
    overlap = np.minimum(during["end"], end) - np.maximum(during["ts"], start)
    return during[["name", "ts", "dur"]].assign(name=during["name"].astype(str), overlap_us=overlap).reset_index(drop=True)


def host_waits(trace: Any) -> pd.DataFrame:
    """Each synchronize call on the host: `call`, `kind` (the device-side record: Event Sync,
    Stream Sync, Context Sync), `ts`, `wait_us` (how long the host was blocked), `waited_for`
    (the device operation still running when the wait began that finished last before it
    returned; None where nothing was running: the wait was pure overhead), `device_left_us`
    (how long that operation still had to run when the wait began) and `wake_us` (from its end
    to the host's return)."""
    ev = trace.events
    calls = ev[(ev["lane"] == "runtime") & ev["name"].astype(str).str.contains(SYNC_CALL_PATTERN)].sort_values("ts")
    kind = ev[ev["cat"] == SYNC_CATEGORY].drop_duplicates("correlation").set_index("correlation")["name"].astype(str)
    dev = device_work(trace)
    d_ts, d_end, d_name = dev["ts"].to_numpy(), dev["end"].to_numpy(), dev["name"].astype(str).to_numpy()
    rows = []
    for _, c in calls.iterrows():
        pending = np.flatnonzero((d_ts < c["end"]) & (d_end > c["ts"]) & (d_end <= c["end"]))
        last = pending[np.argmax(d_end[pending])] if len(pending) else None
        rows.append(
            {
                "call": str(c["name"]),
                "kind": kind.get(c["correlation"]),
                "ts": c["ts"],
                "wait_us": c["dur"],
                "waited_for": None if last is None else d_name[last],
                "device_left_us": np.nan if last is None else d_end[last] - c["ts"],
                "wake_us": np.nan if last is None else c["end"] - d_end[last],
            }
        )
    return pd.DataFrame(rows, columns=["call", "kind", "ts", "wait_us", "waited_for", "device_left_us", "wake_us"])


def _gaps(work: pd.DataFrame) -> pd.DataFrame:
    """Each interval in which none of `work` (sorted by start, then end) ran, between its first
    start and its last end: `start`, `gap_us`, `opened_by` (the index of the operation whose end
    opened it: the last to finish before it), `closed_by` (the index of the one whose start closed it)."""
    columns = ["start", "gap_us", "opened_by", "closed_by"]
    if len(work) < 2:
        return pd.DataFrame(columns=columns)
    end = work["end"].to_numpy(dtype=float)
    running_max = np.maximum.accumulate(end)
    busy_until = np.r_[np.nan, running_max[:-1]]
    at = np.flatnonzero(work["ts"].to_numpy(dtype=float) > busy_until)  # NaN (the first operation) compares False
    holder = pd.Series(np.where(end == running_max, np.arange(len(work)), np.nan)).ffill().to_numpy()
    return pd.DataFrame(
        {
            "start": busy_until[at],
            "gap_us": work["ts"].to_numpy(dtype=float)[at] - busy_until[at],
            "opened_by": work.index.to_numpy()[holder[at - 1].astype(int)],
            "closed_by": work.index.to_numpy()[at],
        },
        columns=columns,
    )


def step_partition(work: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The device timeline of the profiled steps cut into one window per step.

    `work`: operations with `ts`, `end` and `step`, the step whose host code launched each one
    (through the launch's correlation id; its own start where no launch is linked); operations
    launched outside every step (`step` NaN) are left out.

    Step k's device window runs from the start of its first operation to the start of the next
    step's first operation (steps in the order of those starts); the last step's window ends at
    the end of the last operation. The windows tile the steps' timeline (first start to last end)
    without overlap. A step's `busy_us` is the time in its window in which at least one operation
    ran, whichever step launched it and on whichever stream (streams merged); `idle_us` is the rest
    of the window. Where the device runs behind the host, a step's work that runs on into the next
    step's window is busy time of that window, counted once. So, summed over steps, busy and idle
    time equal the whole timeline's, to floating-point rounding.

    Every idle gap lies inside one window (a gap ends where an operation starts, and so does every
    window). The gap that ends at the next step's first operation is the step's
    `idle_before_next_us` (the device waited for the next step's work); the others are its gaps
    between operations: `idle_gaps` (how many), `idle_total_us` (their sum), `idle_largest_us`.
    `idle_us` = `idle_total_us` + `idle_before_next_us`.

    Returns (windows, gaps): windows indexed by step in time order, with `start`, `end`,
    `window_us`, `busy_us`, `idle_us`, `idle_gaps`, `idle_total_us`, `idle_largest_us`,
    `idle_before_next_us`; gaps as `_gaps` gives them (every gap of the timeline), with `step`
    (the window holding it) and `before_next` (the gap before the next step's first operation).
    """
    work = work[work["step"].notna()].sort_values(["ts", "end"], kind="stable")
    window_columns = [
        "start",
        "end",
        "window_us",
        "busy_us",
        "idle_us",
        "idle_gaps",
        "idle_total_us",
        "idle_largest_us",
        "idle_before_next_us",
    ]
    if work.empty:
        return (
            pd.DataFrame(columns=window_columns, index=pd.Index([], name="step")),
            _gaps(work).assign(step=pd.Series(dtype=float), before_next=pd.Series(dtype=bool)),
        )
    firsts = work.groupby("step")["ts"].min().sort_values(kind="stable")
    starts = firsts.to_numpy(dtype=float)
    ends = np.append(starts[1:], float(work["end"].max()))
    gaps = _gaps(work)
    which = np.searchsorted(starts, gaps["start"].to_numpy(dtype=float), side="right") - 1
    gaps["step"] = firsts.index.to_numpy()[which]
    gap_end = (gaps["start"] + gaps["gap_us"]).to_numpy()
    gaps["before_next"] = (which < len(starts) - 1) & (gap_end == ends[which])
    windows = pd.DataFrame({"start": starts, "end": ends}, index=firsts.index)
    windows["window_us"] = windows["end"] - windows["start"]
    by_step = gaps.groupby("step")["gap_us"]
    windows["idle_us"] = by_step.sum().reindex(windows.index, fill_value=0.0)
    windows["busy_us"] = windows["window_us"] - windows["idle_us"]
    between = gaps[~gaps["before_next"]].groupby("step")["gap_us"]
    windows["idle_gaps"] = between.size().reindex(windows.index, fill_value=0).astype(int)
    windows["idle_total_us"] = between.sum().reindex(windows.index, fill_value=0.0)
    windows["idle_largest_us"] = between.max().reindex(windows.index, fill_value=0.0)
    windows["idle_before_next_us"] = windows["idle_us"] - windows["idle_total_us"]
    return windows[window_columns], gaps


def _stepped(trace: Any, dev: pd.DataFrame) -> bool:
    """Whether `dev` holds work of the trace's profiler steps: then the steps partition it."""
    return bool(len(getattr(trace, "steps", ())) and dev["step"].notna().any())


def idle_gaps(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> pd.DataFrame:
    """Each interval in which no device operation ran: `start` (µs), `gap_us`, `after` (the
    operation whose end opened the gap), `before` (the one whose start closed it), `cause`, and
    `launched_from` (the top-level PyTorch op that launched `before`).

    Which gaps: with `step`, those between operations inside the step's device window
    (`step_partition`; the gap before the next step's first operation is not among them); for
    the whole trace, every gap of the timeline (in a trace with steps, of the steps' timeline, gaps
    between steps included); with `window`, those between the first and the last operation
    launched in it.

    `cause` is "launched late" where the host started the next launch only after the device had
    gone idle (the device waited for the host), "queued" where it had been launched earlier (it
    waited for something else: another stream, an event, a peer), "no launch linked" otherwise.
    """
    columns = ["start", "gap_us", "after", "before", "cause", "launched_from"]
    dev = device_work(trace, window=window)
    if window is None and _stepped(trace, dev):
        dev = dev[dev["step"].notna()]
        _, gaps = step_partition(dev)
        if step is not None:
            gaps = gaps[(gaps["step"] == step) & ~gaps["before_next"]]
    elif step is not None:  # steps given, but no device work of any step
        return pd.DataFrame(columns=columns)
    else:
        gaps = _gaps(dev)
    if gaps.empty:
        return pd.DataFrame(columns=columns)
    calls = _launch_calls(trace)
    owner = _enclosing(_top_level_ops(trace), calls)
    launched_from = pd.Series(
        trace.events["name"].astype(str).reindex(owner.to_numpy()).to_numpy(), index=calls["correlation"].to_numpy()
    )
    nxt = dev.loc[gaps["closed_by"].to_numpy()]
    cause = np.where(
        nxt["launch_ts"].isna(),
        "no launch linked",
        np.where(nxt["launch_ts"].to_numpy() >= gaps["start"].to_numpy(), "launched late", "queued"),
    )
    return pd.DataFrame(
        {
            "start": gaps["start"].to_numpy(dtype=float),
            "gap_us": gaps["gap_us"].to_numpy(dtype=float),
            "after": dev.loc[gaps["opened_by"].to_numpy(), "name"].astype(str).to_numpy(),
            "before": nxt["name"].astype(str).to_numpy(),
            "cause": cause,
            "launched_from": nxt["correlation"].map(launched_from).to_numpy(),
        },
        columns=columns,
    )


def busy_summary(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> dict[str, float]:
    """Device figures of the selection: `device_ops`, `kernels` (category kernel), `span_us`,
    `busy_us` (time with at least one operation running, streams merged), `idle_us` (span - busy)
    and `kernel_us` (kernel durations summed, overlaps counted twice).

    With `step`: the operations it launched, and `span_us` its device window (`step_partition`),
    busy and idle time being the window's, so that the steps' figures sum to the whole trace's.
    The whole trace: in a trace with steps their device timeline (first operation's start to last
    end; work launched outside every step is left out), else all its device work. With `window`:
    the operations launched in it, `span_us` from the first one's start to the last one's end
    (HTA's temporal breakdown reads a trace with several steps this way, up to the last step's start).
    """
    dev = device_work(trace, window=window)
    empty = {"device_ops": 0, "kernels": 0, "span_us": 0.0, "busy_us": 0.0, "idle_us": 0.0, "kernel_us": 0.0}
    if window is None and _stepped(trace, dev):
        dev = dev[dev["step"].notna()]
        windows, _ = step_partition(dev)
        if step is None:
            span, idle = float(windows["end"].iloc[-1] - windows["start"].iloc[0]), float(windows["idle_us"].sum())
        elif step in windows.index:
            span, idle = float(windows.at[step, "window_us"]), float(windows.at[step, "idle_us"])
            dev = dev[dev["step"] == step]
        else:
            return empty
    elif step is not None or dev.empty:
        return empty
    else:
        span = float(dev["end"].max() - dev["ts"].min())
        idle = float(_gaps(dev)["gap_us"].sum())
    is_kernel = dev["cat"].astype(str) == KERNEL_CATEGORY
    return {
        "device_ops": int(len(dev)),
        "kernels": int(is_kernel.sum()),
        "span_us": span,
        "busy_us": span - idle,
        "idle_us": idle,
        "kernel_us": float(dev.loc[is_kernel, "dur"].sum()),
    }
