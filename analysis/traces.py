"""Load the Chrome trace that torch.profiler exports: the trace model the analyses read.

Events are put in lanes by the trace's own categories, not by backend name, so a trace from a
backend this series has not seen still loads:

- framework: PyTorch ops and annotations on the CPU (cpu_op, python_function, user_annotation)
- runtime:   the host side of the device API (cuda_runtime, cuda_driver, privateuse1_runtime,
             privateuse1_driver: Kineto documents it as host-side driver events, docs/NEURON_NOTES.md N19)
- device:    work on the accelerator (kernel, gpu_memcpy, gpu_memset, ...)

Device operations are counted only from categories known to be device-side: an unverified
category is never counted as device work.

This module is the trace model under every analysis: it loads the events, assigns them to
profiler steps and says which events are device operations (`device_ops`; on cpu, where there is
no device lane, the leaf ATen ops that do work and the compiled-graph calls). It imports no
analyzer. The analyses built on it: `steps` (per-step figures and gaps), `call_trees` (the
dispatch chain), `allocations` (which op allocated what), `device_view`, `rank_view`.

Parsing is msgspec's JSON decoder into typed records, one per event kind, holding only the
fields read here: trace content is never evaluated, unread fields are skipped while decoding,
and no dict is built per event (benchmarks/trace_benchmark.py times and sizes it beside HTA).
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import msgspec
import numpy as np
import pandas as pd

from .errors import TraceFileError

FRAMEWORK_CATEGORIES = {"cpu_op", "python_function", "user_annotation", "operator", "cpu_instant_event"}
RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver", "privateuse1_runtime", "privateuse1_driver", "xpu_runtime", "mtia_runtime"}
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "privateuse1_device", "mtia_ccp_events", "gpu_user_annotation"}

# ATen ops that only allocate, reshape or read metadata: no kernel does work for them on cpu.
NO_COMPUTE_OPS = {
    "aten::empty",
    "aten::empty_strided",
    "aten::empty_like",
    "aten::as_strided",
    "aten::view",
    "aten::reshape",
    "aten::_reshape_alias",
    "aten::expand",
    "aten::t",
    "aten::transpose",
    "aten::permute",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::slice",
    "aten::select",
    "aten::detach",
    "aten::alias",
    "aten::resize_",
    "aten::result_type",
    "aten::lift_fresh",
    "aten::_unsafe_view",
    "aten::_local_scalar_dense",
    "aten::item",
    "aten::is_nonzero",
    # wrappers: the work, if any, is done by the copy_ they call
    "aten::to",
    "aten::_to_copy",
    "aten::type_as",
    "aten::contiguous",
}
# Ops that, nested inside another working op, are part of its work (zeroing its output,
# converting a scalar operand), so the outer op is the one counted.
HELPER_OPS = {"aten::fill_", "aten::copy_", "aten::zero_"}
COMPILED_GRAPH_PREFIX = "## Call CompiledFxGraph"

EVENT_COLUMNS = ["name", "cat", "lane", "ts", "dur", "end", "pid", "tid", "correlation", "step"]


def lane_of(category: str | None) -> str:
    """framework / runtime / device / other, from a Chrome-trace category."""
    cat = (category or "").lower()
    if cat in FRAMEWORK_CATEGORIES:
        return "framework"
    if cat in RUNTIME_CATEGORIES or cat.endswith(("_runtime", "_driver")):
        return "runtime"
    if cat in DEVICE_CATEGORIES or cat.endswith(("_device", "_kernel")) or "memcpy" in cat or "memset" in cat:
        return "device"
    return "other"


@dataclass
class Trace:
    """A loaded trace: complete events, steps, memory events and flow links, as DataFrames.

    Times are µs from the start of the first profiler step.
    """

    path: Path
    events: pd.DataFrame
    steps: pd.DataFrame
    memory: pd.DataFrame
    flows: pd.DataFrame
    backend: str | None = None  # the backend that wrote it (from its run folder's environment.json)
    origin_us: float = 0.0  # the trace's own timestamp that time 0 stands for: puts several ranks on one clock

    @property
    def has_device_lane(self) -> bool:
        return bool((self.events["lane"] == "device").any())

    @property
    def counts_device_ops(self) -> bool:
        """False on neuron: no Chrome-trace category is verified there as device-side (N19), so
        device operations are not counted from the trace at all, rather than from a guessed name."""
        return self.backend != "neuron"

    @property
    def device_op_kind(self) -> str:
        """What `device_ops()` counts on this trace, in words a learner can check."""
        if not self.counts_device_ops:
            return (
                "not counted: on neuron no Chrome-trace category is verified as device-side "
                "(docs/NEURON_NOTES.md N19); device facts come from the Neuron profile"
            )
        if self.has_device_lane:
            return "device operations (events in the device lane)"
        compiled = self.events["name"].astype(str).str.startswith(COMPILED_GRAPH_PREFIX).any()
        return f"compute ops on the CPU (the deepest ATen ops that do work, wrappers and helpers not counted{', and compiled-graph calls' if compiled else ''})"

    def category_lanes(self) -> dict[str, str]:
        """Every event category of this trace and the lane the series put it in."""
        pairs = self.events[["cat", "lane"]].astype(str).drop_duplicates()
        return dict(sorted(zip(pairs["cat"], pairs["lane"])))


class _EventArgs(msgspec.Struct, gc=False):
    """The `args` fields the series reads: a launch's or device op's correlation id, and a
    [memory] event's size, device type and address (-1 where absent). Every other field is
    skipped while decoding."""

    correlation: int = -1
    bytes: int = msgspec.field(default=0, name="Bytes")
    addr: int = msgspec.field(default=-1, name="Addr")
    device_type: int = msgspec.field(default=0, name="Device Type")


# One record type per event phase ("ph"), decoded as a tagged union: an event keeps only the
# fields the series reads from its kind (defaults: what a missing field reads as), so a flow
# costs a third of a complete event and a metadata event nothing; records are not tracked by the
# garbage collector. The phases are the Trace Event Format's; another value is an error. A time
# the phase needs (ts; dur for a complete event) reads as None when absent, so that the loader
# refuses the event (`_check_events`) instead of counting it at time 0 or for 0 us.
class CompleteEvent(msgspec.Struct, tag="X", tag_field="ph", gc=False):
    """An operation with a duration: a CPU op, an annotation, a runtime call, a device kernel."""

    name: str | None = ""
    cat: str | None = None
    ts: float | None = None
    dur: float | None = None
    pid: int | str = ""
    tid: int | str = ""
    args: _EventArgs | None = None


class InstantEvent(msgspec.Struct, tag="i", tag_field="ph", gc=False):
    """A point in time; the profiler's [memory] events are instants."""

    name: str | None = ""
    ts: float | None = None
    args: _EventArgs | None = None


class _InstantEventDeprecated(InstantEvent, tag="I"):
    """The deprecated spelling of an instant event."""


class FlowStart(msgspec.Struct, tag="s", tag_field="ph", gc=False):
    """One end of a flow arrow (the runtime launch side; FlowEnd is the device side)."""

    id: int | str | None = None
    ts: float | None = None
    tid: int | str = ""


class FlowEnd(FlowStart, tag="f"):
    """The other end of a flow arrow."""


OTHER_PHASES = ("B", "E", "C", "b", "n", "e", "S", "T", "p", "F", "t", "P", "N", "O", "D", "M", "V", "v", "R", "c", "(", ")")
_SKIPPED = tuple(msgspec.defstruct(f"_Skipped_{i}", [], tag=ph, tag_field="ph", gc=False) for i, ph in enumerate(OTHER_PHASES))
TraceEvent = Union[(CompleteEvent, InstantEvent, _InstantEventDeprecated, FlowStart, FlowEnd, *_SKIPPED)]


class _TraceFile(msgspec.Struct, gc=False):
    traceEvents: list[TraceEvent]


_TRACE_DECODER = msgspec.json.Decoder(_TraceFile)


def read_events(path: Path) -> list[TraceEvent]:
    """The events of a Chrome trace file (plain or gzipped JSON), or a TraceFileError naming the
    problem and the fix: missing, empty, cut off or corrupt, not a trace, an event with a field of
    the wrong type or without a Trace Event Format phase.

    Parsing is msgspec's JSON decoder into typed records: trace content is never evaluated."""
    if not path.exists():
        raise TraceFileError(f"No trace file at {path}", "run the profiling cell that writes it first")
    if path.is_dir():
        inside = sorted(p.name for p in path.glob("*.json*") if p.is_file())[:3]
        raise TraceFileError(
            f"{path} is a folder, not a trace file" + (f" (it holds {', '.join(inside)})" if inside else ""),
            f"pass the trace file itself, e.g. {path / inside[0]}"
            if inside
            else "pass the .json or .json.gz file that prof.export_chrome_trace() wrote",
        )
    size = path.stat().st_size
    if size == 0:
        raise TraceFileError(
            f"Trace file {path} is empty (0 bytes)",
            "the export did not finish (interrupted, or the disk was full): run the profiling again",
        )
    try:
        content = path.read_bytes()
        if content[:2] == b"\x1f\x8b":
            content = gzip.decompress(content)
        return _TRACE_DECODER.decode(content).traceEvents
    except msgspec.ValidationError as exc:  # valid JSON, wrong shape: before DecodeError, its base class
        if "$.traceEvents[" in str(exc):
            raise TraceFileError(
                f"Trace file {path} has an event with a field of the wrong type, or a phase (ph) "
                f"the Trace Event Format does not define ({exc})",
                "pass a trace written by prof.export_chrome_trace()",
            ) from exc
        raise TraceFileError(
            f"{path} is JSON but not a Chrome trace (no traceEvents list: {exc})",
            "pass the file written by prof.export_chrome_trace()",
        ) from exc
    except msgspec.DecodeError as exc:
        raise TraceFileError(
            f"Trace file {path} is not complete JSON ({exc}; file is {size} bytes)",
            "the file was cut off or is not a trace: run the profiling again",
        ) from exc
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as exc:
        raise TraceFileError(f"Trace file {path} is truncated or corrupt ({exc})", "run the profiling again") from exc


def backend_of(path: Path) -> str | None:
    """The backend recorded in the environment.json of the notebook folder holding `path` (the
    folder itself or up to two levels above it), or None for a trace from elsewhere."""
    for folder in (path.parent, *list(path.parents)[1:3]):
        env = folder / "environment.json"
        if env.exists():
            try:
                return json.loads(env.read_text()).get("backend")
            except (OSError, ValueError):
                return None
    return None


def load_trace(path: Path | str, backend: str | None = None) -> Trace:
    """Load a Chrome trace (plain or gzipped JSON) into DataFrames, steps assigned.

    The decoded records (`read_events`) are sorted by kind; the complete events become the
    `events` columns, the [memory] instants `memory`, the flow ends `flows`.

    `backend` defaults to the one recorded beside the trace. On neuron, events of device-like
    categories go to the lane "unverified": shown, never counted as device work (N19).
    """
    path = Path(path)
    backend = backend or backend_of(path)
    decoded = read_events(path)
    complete = [e for e in decoded if e.__class__ is CompleteEvent]
    memory_events = [e for e in decoded if isinstance(e, InstantEvent) and e.name == "[memory]" and e.args is not None]
    flow_events = [e for e in decoded if isinstance(e, FlowStart) and e.id is not None]
    _check_events(path, decoded, complete, memory_events, flow_events)
    del decoded
    events = _complete_events(complete, backend)
    del complete
    _check_duplicates(path, events)

    is_step = (events["lane"] == "framework") & events["name"].str.startswith("ProfilerStep#")
    steps = events.loc[is_step, ["name", "ts", "end"]].copy()
    steps["step"] = steps["name"].astype(str).str.slice(len("ProfilerStep#")).astype(int)
    steps = steps.sort_values("ts").reset_index(drop=True)
    origin = float(steps["ts"].min()) if len(steps) else (float(events["ts"].min()) if len(events) else 0.0)
    steps["dur"] = steps["end"] - steps["ts"]
    events["ts"] -= origin
    events["end"] -= origin
    steps[["ts", "end"]] -= origin

    events["step"] = _assign_steps(events["ts"].to_numpy(), steps)
    _steps_from_launches(events)

    memory = pd.DataFrame(
        {
            "ts": _floats([e.ts for e in memory_events]) - origin,
            "bytes": np.asarray([e.args.bytes for e in memory_events], dtype=np.int64),
            "device_type": np.asarray([e.args.device_type for e in memory_events], dtype=np.int64),
            "addr": np.asarray([e.args.addr for e in memory_events], dtype=np.int64),
        }
    )
    memory["step"] = _assign_steps(memory["ts"].to_numpy(), steps)
    flows = pd.DataFrame(
        {
            "id": [str(e.id) for e in flow_events],
            "ph": [e.__struct_config__.tag for e in flow_events],
            "ts": _floats([e.ts for e in flow_events]) - origin,
            "tid": [str(e.tid) for e in flow_events],
        }
    )
    return Trace(
        path=path,
        events=events[EVENT_COLUMNS],
        steps=steps[["step", "ts", "end", "dur"]],
        memory=memory,
        flows=flows,
        backend=backend,
        origin_us=origin,
    )


REPROFILE_FIX = (
    "export the trace again with prof.export_chrome_trace() into a new file (never append to or merge into an old one)"
)


def _check_events(
    path: Path, decoded: list, complete: list[CompleteEvent], memory: list[InstantEvent], flows: list[FlowStart]
) -> None:
    """Refuse a trace that would be counted wrong: no complete event at all (every figure would be
    NaN), or an event without a time its phase needs (ts; and dur for a complete event), which
    would otherwise be counted at time 0 or as 0 us of work. Raises TraceFileError naming the
    first such event and how many there are."""
    begin_end = sum(e.__struct_config__.tag in ("B", "E") for e in decoded) if not complete else 0
    if begin_end:  # another tracer's format (Chrome's, Perfetto's JSON, a hand-written one): not an empty profile
        raise TraceFileError(
            f"Trace file {path} times its work as {begin_end} begin/end (ph B/E) events and holds no complete (ph X) "
            "events: it was written by another tracer than torch.profiler, whose events this reader counts",
            "pass the file torch.profiler wrote with prof.export_chrome_trace()",
        )
    if not complete:
        raise TraceFileError(
            f"Trace file {path} holds no complete (ph X) events ({len(decoded)} events in all): nothing was timed",
            "profile at least one step with the profiler on (schedule active >= 1), then export again",
        )
    for kind, needed, records in (
        ("complete (X)", ("ts", "dur"), complete),
        ("[memory] instant", ("ts",), memory),
        ("flow (s/f)", ("ts",), flows),
    ):
        missing = [(e, f) for e in records for f in needed if getattr(e, f) is None]
        if missing:
            event, field = missing[0]
            raise TraceFileError(
                f"Trace file {path} has {len(missing)} {kind} event field(s) missing; the first: "
                f"{getattr(event, 'name', None) or event.__class__.__name__!r} has no {field!r}: it cannot be placed in time",
                REPROFILE_FIX,
            )


def _check_duplicates(path: Path, events: pd.DataFrame) -> None:
    """Refuse a trace whose events were written twice (an export appended to or merged into
    another): same name, ts, dur, pid and tid would double every count and byte. Only events
    with a duration are compared: zero-duration ops at the same microsecond are real (the
    profiler's clock is in us; 1,952 such pairs in one of data/recorded/'s traces)."""
    timed = events.loc[events["dur"] > 0, ["name", "ts", "dur", "pid", "tid"]]
    repeated = timed.duplicated()
    if repeated.any():
        first = timed[repeated].iloc[0]
        raise TraceFileError(
            f"Trace file {path} holds {int(repeated.sum())} duplicated complete events (same name, ts, dur, pid, tid "
            f"as another; the first: {first['name']!r} at ts {first['ts']:.0f}): counted, they would double",
            REPROFILE_FIX,
        )


def _complete_events(complete: list[CompleteEvent], backend: str | None) -> pd.DataFrame:
    """The complete events as columns, times as in the file: names, categories, lanes and
    threads as categoricals, so string tests run once per distinct value."""
    cat_col = pd.Categorical([e.cat or "" for e in complete])
    lane_names = pd.Series(cat_col.categories).map(lane_of)
    if backend == "neuron":
        lane_names = lane_names.replace("device", "unverified")
    ts, dur = _floats([e.ts for e in complete]), _floats([e.dur for e in complete])
    return pd.DataFrame(
        {
            "name": pd.Categorical([e.name for e in complete]),
            "cat": cat_col,
            "lane": pd.Categorical(lane_names.to_numpy()[cat_col.codes] if len(cat_col.categories) else []),
            "ts": ts,
            "dur": dur,
            "end": ts + dur,
            "pid": _str_categorical([e.pid for e in complete]),
            "tid": _str_categorical([e.tid for e in complete]),
            "correlation": np.asarray([-1 if e.args is None else e.args.correlation for e in complete], dtype=np.int64),
        }
    )


def _floats(values: list[float]) -> np.ndarray:
    return np.asarray(values, dtype=float)


def _str_categorical(values: list) -> pd.Categorical:
    """Ids as text (pid/tid are ints in some traces, strings in others), converted once per distinct value."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object))
    labels = pd.Index([str(u) for u in uniques]).drop_duplicates()
    as_text = np.asarray([str(u) for u in uniques], dtype=object)
    return pd.Categorical.from_codes(labels.get_indexer(as_text)[codes], categories=labels) if len(codes) else pd.Categorical([])


def _assign_steps(ts: np.ndarray, steps: pd.DataFrame) -> np.ndarray:
    """Step number of the step interval containing each timestamp, NaN outside all steps."""
    out = np.full(len(ts), np.nan)
    if not len(steps) or not len(ts):
        return out
    starts, ends, numbers = (steps[c].to_numpy() for c in ("ts", "end", "step"))
    idx = np.searchsorted(starts, ts, side="right") - 1
    ok = idx >= 0
    inside = np.zeros(len(ts), dtype=bool)
    inside[ok] = ts[ok] < ends[idx[ok]]
    out[inside] = numbers[idx[inside]]
    return out


def _steps_from_launches(events: pd.DataFrame) -> None:
    """A device op belongs to the step that launched it (same correlation id), when known."""
    dev = (events["lane"] == "device") & (events["correlation"] >= 0)
    launches = events[(events["lane"] == "runtime") & (events["correlation"] >= 0)]
    if not dev.any() or launches.empty:
        return
    step_of = launches.drop_duplicates("correlation").set_index("correlation")["step"]
    mapped = events.loc[dev, "correlation"].map(step_of)
    events.loc[dev, "step"] = mapped.where(mapped.notna(), events.loc[dev, "step"])


def cpu_compute_ops(events: pd.DataFrame) -> pd.DataFrame:
    """The innermost cpu ops that do work: an ATen op (not an allocation, view or wrapper) with
    no such op nested under it, or a compiled-graph call (its generated kernel is not an event).
    fill_/copy_/zero_ nested inside a working op count as part of it (sum zeroes its output).

    Nesting is read from time containment on each thread, the way the trace viewer draws it.
    """
    # the compiled-graph call is a cpu_op or a user_annotation, depending on the profiler options
    is_graph_call = events["name"].str.startswith(COMPILED_GRAPH_PREFIX)
    ops = events[(events["cat"] == "cpu_op") | is_graph_call]
    ops = ops.sort_values(["tid", "ts", "dur"], ascending=[True, True, False])
    candidate = (
        (ops["name"].str.startswith("aten::") & ~ops["name"].isin(NO_COMPUTE_OPS))
        | ops["name"].str.startswith(COMPILED_GRAPH_PREFIX)
    ).to_numpy()
    ts, end, tid = ops["ts"].to_numpy(), ops["end"].to_numpy(), ops["tid"].to_numpy()
    parent = np.full(len(ops), -1)
    stack: list[int] = []
    for i in range(len(ops)):
        while stack and (tid[stack[-1]] != tid[i] or ts[i] >= end[stack[-1]]):
            stack.pop()
        parent[i] = stack[-1] if stack else -1
        stack.append(i)
    helper = ops["name"].isin(HELPER_OPS).to_numpy()
    inside_candidate = np.zeros(len(ops), dtype=bool)
    for i in range(len(ops)):  # parents come before their children in this order
        p = parent[i]
        inside_candidate[i] = p >= 0 and (candidate[p] or inside_candidate[p])
    works_below = np.zeros(len(ops), dtype=bool)
    counts = np.zeros(len(ops), dtype=bool)
    for i in range(len(ops) - 1, -1, -1):
        if helper[i] and inside_candidate[i]:
            continue
        counts[i] = candidate[i] and not works_below[i]
        if (counts[i] or works_below[i]) and parent[i] >= 0:
            works_below[parent[i]] = True
    return ops[counts]


def device_ops(trace: Trace) -> pd.DataFrame:
    """The operations that do the work: the device lane, or CPU compute ops where there is none;
    none on neuron (`Trace.counts_device_ops`)."""
    if not trace.counts_device_ops:
        return trace.events.iloc[0:0]
    if trace.has_device_lane:
        ops = trace.events[trace.events["lane"] == "device"]
        ops = ops[~ops["cat"].str.lower().eq("gpu_user_annotation")]
    else:
        ops = cpu_compute_ops(trace.events)
    return ops[ops["step"].notna()].sort_values(["step", "ts"])


def representative_step(trace: Trace) -> int:
    """The recorded step of median duration: call trees, gap tables and timelines show this one,
    not the last, so that one outlier step (a page-fault storm, a preemption) is not what a
    learner reads as typical. With an even count the shorter of the two middle steps is taken."""
    if not len(trace.steps):
        return -1
    ordered = trace.steps.sort_values(["dur", "step"]).reset_index(drop=True)
    return int(ordered.loc[(len(ordered) - 1) // 2, "step"])
