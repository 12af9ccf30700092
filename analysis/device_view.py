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
- `busy_summary`: device busy time, idle time and operation counts, for comparison with HTA.

Every function takes a trace as `analysis.traces.load_trace` returns it (read by its attributes:
`events` with a `lane` per event, times in µs) and selects either the whole trace, one profiler
`step` (device work belongs to the step that launched it), or a `window` of (start, end) µs
(device work launched in it). It never looks at the backend's name: on neuron, where no category
is verified as device-side (docs/NEURON_NOTES.md N19), the device lane is empty and so is the
answer.
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
        ["name", "stream", "device_us", "launch", "launch_us", "latency_us", "ts", "launch_ts", "correlation", "step"]]


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
    out = pd.DataFrame({
        "calls": top.groupby(top["name"].astype(str)).size(),
        "host_us": top.groupby(top["name"].astype(str))["dur"].sum(),
        "device_ops": by_op.size(),
        "device_us": by_op["device_us"].sum(),
        "kernels": by_op.apply(lambda w: list(w.groupby("name")["device_us"].sum().sort_values(ascending=False).index),
                               include_groups=False),
    })
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
        rows.append({
            "call": str(c["name"]), "kind": kind.get(c["correlation"]), "ts": c["ts"], "wait_us": c["dur"],
            "waited_for": None if last is None else d_name[last],
            "device_left_us": np.nan if last is None else d_end[last] - c["ts"],
            "wake_us": np.nan if last is None else c["end"] - d_end[last],
        })
    return pd.DataFrame(rows, columns=["call", "kind", "ts", "wait_us", "waited_for", "device_left_us", "wake_us"])


def idle_gaps(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> pd.DataFrame:
    """Each interval in which no device operation ran, between the first and the last one
    selected: `start` (µs), `gap_us`, `after` (the operation whose end opened the gap),
    `before` (the one whose start closed it), `cause`, and `launched_from` (the top-level
    PyTorch op that launched `before`).

    `cause` is "launched late" where the host started the next launch only after the device had
    gone idle (the device waited for the host), "queued" where it had been launched earlier (it
    waited for something else: another stream, an event, a peer), "no launch linked" otherwise.
    """
    dev = device_work(trace, step, window)
    columns = ["start", "gap_us", "after", "before", "cause", "launched_from"]
    if len(dev) < 2:
        return pd.DataFrame(columns=columns)
    running_max = dev["end"].cummax()
    busy_until = running_max.shift(1)
    gap = dev["ts"] - busy_until
    at = dev.index[gap > 0]
    # the operation whose end is the running maximum: the last one to finish before each gap
    holder = pd.Series(np.where(dev["end"] == running_max, dev.index, np.nan)).ffill().shift(1)
    calls = _launch_calls(trace)
    owner = _enclosing(_top_level_ops(trace), calls)
    launched_from = pd.Series(trace.events["name"].astype(str).reindex(owner.to_numpy()).to_numpy(),
                              index=calls["correlation"].to_numpy())
    nxt = dev.loc[at]
    cause = np.where(nxt["launch_ts"].isna(), "no launch linked",
                     np.where(nxt["launch_ts"] >= busy_until[at], "launched late", "queued"))
    return pd.DataFrame({
        "start": busy_until[at].to_numpy(), "gap_us": gap[at].to_numpy(),
        "after": dev["name"].astype(str).to_numpy()[holder[at].astype(int).to_numpy()],
        "before": nxt["name"].astype(str).to_numpy(), "cause": cause,
        "launched_from": nxt["correlation"].map(launched_from).to_numpy(),
    }, columns=columns)


def busy_summary(trace: Any, step: int | None = None, window: tuple[float, float] | None = None) -> dict[str, float]:
    """Device figures of the selection: `device_ops`, `kernels` (category kernel), `span_us`
    (first start to last end), `busy_us` (time with at least one operation running, streams
    merged), `idle_us` (span - busy) and `kernel_us` (kernel durations summed, overlaps counted
    twice)."""
    dev = device_work(trace, step, window)
    if dev.empty:
        return {"device_ops": 0, "kernels": 0, "span_us": 0.0, "busy_us": 0.0, "idle_us": 0.0, "kernel_us": 0.0}
    gap = (dev["ts"] - dev["end"].cummax().shift(1)).clip(lower=0)
    span = float(dev["end"].max() - dev["ts"].min())
    idle = float(gap.sum())
    is_kernel = dev["cat"].astype(str) == KERNEL_CATEGORY
    return {"device_ops": int(len(dev)), "kernels": int(is_kernel.sum()), "span_us": span, "busy_us": span - idle,
            "idle_us": idle, "kernel_us": float(dev.loc[is_kernel, "dur"].sum())}
