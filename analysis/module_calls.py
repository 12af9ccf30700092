"""Every call of a module or op in a trace: the host ops inside it, the kernels it launched, and
the bytes those kernels must move.

The series' central lesson is that an RMSNorm written as separate ops costs a device one kernel
and one pass over memory per op, and a fused one does not. A cpu run cannot show it (there is no
device lane), so this module reads it from traces recorded on real accelerators
(data/recorded-rmsnorm/, by the TraceLens project): a call is the window of one event, such as the
`nn.Module: Qwen2RMSNorm_3` event that `with_modules=True` records, or an op such as
`aten::rms_norm`. For each call:

- the host ops: the `cpu_op` events inside the window on the call's thread;
- the kernels it launched: the device operations whose launch (`cudaLaunchKernel`,
  `hipLaunchKernel`: the runtime lane, whatever the vendor calls it) ran inside the window, joined
  through the launch's correlation id by `analysis.device_view.launches`, the join the trace
  model uses; each with the innermost host op around its launch (the op that launched it);
- per kernel: its duration, launch-to-kernel latency, the idle gap before it (from the end of
  the call's previous kernel) and whether that gap was opened by a late launch (the host started
  the launch only after the device had gone idle) or not;
- per kernel, the bytes it must move: each tensor input of the launching op read once and its
  output written once, from the shapes and dtypes the profiler recorded (`record_shapes=True`:
  the op's `Input Dims` and `Input type`), and so its achieved rate (bytes / duration). Only ops
  whose output shape follows from their inputs are sized (elementwise, copies, reductions over
  the recorded dims, the fused norms); any other op's kernel is left unsized (NaN) and counted in
  `unsized_kernels`, never taken as zero;
- the call's bytes against the minimum of a fused RMSNorm of the same shape: read the input x
  once, read the weight once, write y (x's shape and dtype) once.

The shapes are not in the trace model (`analysis.traces` keeps only what every analysis reads),
so `op_shapes` decodes the cpu ops' `args` once more, with msgspec, and aligns them to the
model's events by thread, name and start.
"""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .device_view import launches, short_kernel_name
from .errors import TraceFileError

RECORDED_RMSNORM_DIR = Path(__file__).resolve().parent.parent / "data" / "recorded-rmsnorm"
# The TraceLens traces shipped in data/recorded-rmsnorm/ (its README says what each holds).
RECORDED_RMSNORM = {
    "h100_qwen": "h100__Qwen1.5-0.5B-Chat_inference.json.gz",  # Qwen1.5-0.5B inference: naive RMSNorm, NVIDIA H100
    "mi300x_qwen": "mi300x__Qwen1.5-0.5B-Chat_inference.json.gz",  # the same step on an AMD MI300X
    "mi300x_norms": "mi300x__normalization_layers.json.gz",  # torch.nn.RMSNorm (fused) and other norms, AMD MI300X
}
NAIVE_CALL = "nn.Module: Qwen2RMSNorm"  # the model's RMSNorm, written as separate ops, one event per call
FUSED_CALL = "aten::rms_norm"  # torch.nn.RMSNorm's op: aten::_fused_rms_norm below it, one kernel

# Bytes per element of each dtype name the profiler writes in `Input type`.
DTYPE_BYTES = {
    "float": 4,
    "double": 8,
    "c10::Half": 2,
    "c10::BFloat16": 2,
    "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1,
    "c10::Float8_e5m2fnuz": 1,
    "long int": 8,
    "int": 4,
    "short int": 2,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "c10::complex<float>": 8,
    "c10::complex<double>": 16,
}
# The torch names of the dtypes the profiler writes, for sentences.
DTYPE_NAMES = {"float": "float32", "double": "float64", "c10::Half": "float16", "c10::BFloat16": "bfloat16"}
# Ops whose output has the broadcast shape of their tensor inputs (in-place forms write their first).
ELEMENTWISE_OPS = {
    f"aten::{name}{suffix}"
    for name in (
        "add",
        "sub",
        "mul",
        "div",
        "pow",
        "rsqrt",
        "sqrt",
        "exp",
        "log",
        "neg",
        "abs",
        "reciprocal",
        "sigmoid",
        "tanh",
        "silu",
        "gelu",
        "relu",
        "clamp",
        "where",
        "maximum",
        "minimum",
    )
    for suffix in ("", "_")
}
COPY_OPS = {"aten::copy_"}  # (destination, source): the source is read, the destination written
REDUCTION_OPS = {"aten::mean", "aten::sum", "aten::amax", "aten::amin", "aten::prod"}  # (input, dims, keepdim, ...)
NORM_OPS = {
    "aten::_fused_rms_norm",
    "aten::native_layer_norm",
}  # (input, normalized_shape, weight, ...): y + one fp32 stat per row

# The TraceLens project's own caution about these traces, quoted where their figures are shown.
TRACELENS_CAUTION = "TraceLens ships these traces for testing and education; they are not official performance numbers"


def recorded_rmsnorm_path(key: str) -> Path:
    """The file of a shipped TraceLens trace, by its key in RECORDED_RMSNORM.

    Args:
        key: "h100_qwen", "mi300x_qwen" or "mi300x_norms".
    Returns:
        its path under data/recorded-rmsnorm/.
    """
    if key not in RECORDED_RMSNORM:
        raise TraceFileError(f"No recorded RMSNorm trace called {key!r}", f"use one of {', '.join(RECORDED_RMSNORM)}")
    return RECORDED_RMSNORM_DIR / RECORDED_RMSNORM[key]


def recorded_label(device: str) -> str:
    """The origin every figure and sentence drawn from a TraceLens trace carries."""
    return f"recorded on {device}, shipped by TraceLens, not this run"


class _DeviceProperties(msgspec.Struct):
    name: str = ""
    totalGlobalMem: int = 0


class _TraceHeader(msgspec.Struct):
    deviceProperties: list[_DeviceProperties] = []


class _OpArgs(msgspec.Struct, gc=False):
    input_dims: list[Any] = msgspec.field(default_factory=list, name="Input Dims")
    input_types: list[Any] = msgspec.field(default_factory=list, name="Input type")
    concrete_inputs: list[Any] = msgspec.field(default_factory=list, name="Concrete Inputs")


class _OpEvent(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str | None = None
    name: str | None = ""
    ts: float = 0.0
    tid: int | str = ""
    args: _OpArgs | None = None


class _OpFile(msgspec.Struct, gc=False):
    traceEvents: list[_OpEvent]


def _read_bytes(path: Path) -> bytes:
    content = Path(path).read_bytes()
    return gzip.decompress(content) if content[:2] == b"\x1f\x8b" else content


def device_names(path: Path | str) -> list[str]:
    """The device names a trace's `deviceProperties` records (one per device; empty when it has none).

    Args:
        path: a Chrome trace file (plain or gzipped JSON).
    Returns:
        the names, e.g. ["NVIDIA H100 80GB HBM3"].
    """
    header = msgspec.json.decode(_read_bytes(Path(path)), type=_TraceHeader)
    return [d.name for d in header.deviceProperties]


def op_shapes(trace: Any) -> pd.DataFrame:
    """The recorded input shapes of every `cpu_op` of a trace, indexed like `trace.events`.

    Args:
        trace: as `analysis.traces.load_trace` returns it (its `path` is read again for the args).
    Returns:
        one row per cpu op of `trace.events` with recorded args: `input_dims`, `input_types`,
        `concrete_inputs` (lists as the profiler wrote them). Ops recorded without shapes are absent.
    """
    decoded = msgspec.json.decode(_read_bytes(trace.path), type=_OpFile).traceEvents
    rows = [
        (str(e.tid), e.name, round(e.ts - trace.origin_us, 3), e.args.input_dims, e.args.input_types, e.args.concrete_inputs)
        for e in decoded
        if e.ph == "X" and e.cat == "cpu_op" and e.args is not None and e.args.input_dims
    ]
    shapes = pd.DataFrame(rows, columns=["tid", "name", "ts_key", "input_dims", "input_types", "concrete_inputs"])
    ops = trace.events[trace.events["cat"] == "cpu_op"]
    keys = pd.DataFrame(
        {"tid": ops["tid"].astype(str), "name": ops["name"].astype(str), "ts_key": ops["ts"].round(3)}, index=ops.index
    )
    joined = keys.reset_index().merge(shapes.drop_duplicates(["tid", "name", "ts_key"]), on=["tid", "name", "ts_key"])
    return joined.set_index("index")[["input_dims", "input_types", "concrete_inputs"]]


def _tensors(dims: list, types: list) -> list[tuple[list[int], str]]:
    """The tensor inputs of an op: (shape, dtype) where the recorded type is a dtype."""
    return [(list(d), t) for d, t in zip(dims, types) if t in DTYPE_BYTES and isinstance(d, list)]


def _nbytes(shape: list[int], dtype: str) -> int:
    return math.prod(shape) * DTYPE_BYTES[dtype]


def _broadcast(shapes: list[list[int]]) -> list[int]:
    width = max(len(s) for s in shapes)
    padded = [[1] * (width - len(s)) + s for s in shapes]
    return [max(col) for col in zip(*padded)]


def _int_list(text: Any) -> list[int] | None:
    found = re.findall(r"-?\d+", str(text))
    return [int(v) for v in found] if found else None


def kernel_tensors(op: str, dims: list, types: list, concrete: list) -> list[tuple[str, list[int], str]] | None:
    """The tensors a kernel of `op` must read and write, at the recorded shapes and dtypes: each
    tensor input read once, the output written once; None where `op`'s output shape does not
    follow from its inputs here. Counting these (not only their bytes) says how many passes over
    memory a call makes, and in which dtype.

    Args:
        op: the launching op's name, e.g. "aten::mul".
        dims, types, concrete: its recorded `Input Dims`, `Input type` and `Concrete Inputs`.
    Returns:
        [("read" | "write", shape, dtype), ...], reads first.
    """
    tensors = _tensors(dims, types)
    if not tensors:
        return None
    if op in COPY_OPS and len(tensors) >= 2:
        (dst, dst_type), (src, src_type) = tensors[:2]
        return [("read", src, src_type), ("write", dst, dst_type)]
    reads = [("read", s, t) for s, t in tensors]
    if op in ELEMENTWISE_OPS:
        shaped = [(s, t) for s, t in tensors if s] or tensors  # a 0-dim operand does not set the result's dtype
        dtype = max((t for _, t in shaped), key=DTYPE_BYTES.get)
        return reads + [("write", _broadcast([s for s, _ in tensors]), dtype)]
    if op in REDUCTION_OPS:
        shape, dtype = tensors[0]
        reduced = _int_list(concrete[1]) if len(concrete) > 1 else None
        if not reduced or not shape:
            return None
        kept = [n for i, n in enumerate(shape) if i not in {r % len(shape) for r in reduced}]
        return [("read", shape, dtype), ("write", kept, dtype)]
    if op in NORM_OPS:
        shape, dtype = tensors[0]
        normalized = _int_list(concrete[1]) if len(concrete) > 1 else None
        if not normalized:
            return None
        rows = math.prod(shape) // math.prod(normalized)
        return reads + [("write", shape, dtype), ("write", [rows], "float")]  # y, and one fp32 statistic per row
    return None


def kernel_bytes(op: str, dims: list, types: list, concrete: list) -> tuple[float, float]:
    """The bytes a kernel of `op` must read and write (the sum over `kernel_tensors`); (NaN, NaN)
    where `op`'s output shape does not follow from its inputs here.

    Args:
        op: the launching op's name, e.g. "aten::mul".
        dims, types, concrete: its recorded `Input Dims`, `Input type` and `Concrete Inputs`.
    Returns:
        (bytes read, bytes written).
    """
    return _bytes_of(kernel_tensors(op, dims, types, concrete))


def call_windows(trace: Any, name: str) -> pd.DataFrame:
    """The calls of a module or op: every event whose name is `name` or starts with `name` then
    `_` and digits (`nn.Module: Qwen2RMSNorm` finds `nn.Module: Qwen2RMSNorm_0`, `_1`, ...).

    Args:
        trace: as `analysis.traces.load_trace` returns it.
        name: an op name (`aten::rms_norm`) or a module event's name without its index.
    Returns:
        `call` (0, 1, ... in time order), `name`, `tid`, `ts`, `end`, `host_us` (the window's length).
    """
    ev = trace.events
    names = ev["name"].astype(str)
    hit = ev[(names == name) | names.str.fullmatch(re.escape(name) + r"_\d+")].sort_values("ts")
    out = hit[["name", "tid", "ts", "end", "dur"]].rename(columns={"dur": "host_us"}).reset_index()
    out["name"] = out["name"].astype(str)
    out["tid"] = out["tid"].astype(str)
    return out.rename(columns={"index": "event"}).rename_axis("call").reset_index()


def call_kernels(trace: Any, name: str) -> pd.DataFrame:
    """One row per kernel launched inside a call of `name` (see `call_windows`).

    Args:
        trace: as `analysis.traces.load_trace` returns it.
        name: the module or op, as `call_windows` takes it.
    Returns:
        `call`, `kernel` (its name), `short` (without namespaces and templates), `op` (the innermost
        host op around its launch), `launch` (the runtime call), `launch_ts`, `ts`, `end`,
        `device_us`, `latency_us` (kernel start - launch start), `gap_before_us` (idle time since
        the call's previous kernel ended; NaN for the first), `launched_late` (the launch began
        after that previous kernel had ended), `bytes_read`, `bytes_written`, `bytes` and
        `gb_per_s` (bytes / duration; NaN where the op is not sized, see `kernel_bytes`), `tensors`
        (`kernel_tensors` of its op: what it read and wrote; None where not sized).
    """
    calls = call_windows(trace, name)
    ev = trace.events
    runtime = ev[(ev["lane"] == "runtime") & (ev["correlation"] >= 0)].drop_duplicates("correlation")
    joined = launches(trace).merge(
        runtime[["correlation", "tid"]].rename(columns={"tid": "launch_tid"}).astype({"launch_tid": str}), on="correlation"
    )
    host_ops = ev[ev["cat"] == "cpu_op"]
    shapes = op_shapes(trace)
    rows = []
    for c in calls.itertuples():
        mine = joined[(joined["launch_tid"] == c.tid) & (joined["launch_ts"] >= c.ts) & (joined["launch_ts"] < c.end)]
        around = host_ops[(host_ops["tid"].astype(str) == c.tid) & (host_ops["ts"] >= c.ts) & (host_ops["end"] <= c.end)]
        busy_until = math.nan
        for k in mine.sort_values("ts").itertuples():
            owners = around[(around["ts"] <= k.launch_ts) & (around["end"] >= k.launch_ts)]
            owner = owners.sort_values(["ts", "dur"]).index[-1] if len(owners) else None
            op = str(ev.at[owner, "name"]) if owner is not None else "?"
            moved = None
            if owner is not None and owner in shapes.index:
                s = shapes.loc[owner]
                moved = kernel_tensors(op, s["input_dims"], s["input_types"], s["concrete_inputs"])
            read, written = _bytes_of(moved)
            rows.append(
                {
                    "call": c.call,
                    "kernel": k.name,
                    "short": short_kernel_name(k.name),
                    "op": op,
                    "launch": k.launch,
                    "launch_ts": k.launch_ts,
                    "ts": k.ts,
                    "end": k.ts + k.device_us,
                    "device_us": k.device_us,
                    "latency_us": k.latency_us,
                    "gap_before_us": max(k.ts - busy_until, 0.0) if not math.isnan(busy_until) else math.nan,
                    "launched_late": bool(k.launch_ts >= busy_until) if not math.isnan(busy_until) else False,
                    "bytes_read": read,
                    "bytes_written": written,
                    "tensors": moved,
                }
            )
            busy_until = max(busy_until, k.ts + k.device_us) if not math.isnan(busy_until) else k.ts + k.device_us
    columns = [
        "call",
        "kernel",
        "short",
        "op",
        "launch",
        "launch_ts",
        "ts",
        "end",
        "device_us",
        "latency_us",
        "gap_before_us",
        "launched_late",
        "bytes_read",
        "bytes_written",
        "tensors",
    ]
    out = pd.DataFrame(rows, columns=columns)
    out["bytes"] = out["bytes_read"] + out["bytes_written"]
    out["gb_per_s"] = out["bytes"] / out["device_us"] / 1e3  # bytes per µs / 1e3 = GB/s
    return out


def _bytes_of(moved: list[tuple[str, list[int], str]] | None) -> tuple[float, float]:
    """(bytes read, bytes written) of `kernel_tensors`'s list; (NaN, NaN) for None."""
    if moved is None:
        return math.nan, math.nan
    read = float(sum(_nbytes(s, t) for role, s, t in moved if role == "read"))
    return read, float(sum(_nbytes(s, t) for role, s, t in moved if role == "write"))


def _call_input(around: pd.DataFrame, shapes: pd.DataFrame) -> tuple[list[int], str, int] | None:
    """The tensor a call normalises (the largest tensor input of its first sized op), its dtype,
    and its weight (a tensor input of the call whose shape is x's trailing dims): (shape, bytes), or None."""
    sized = [i for i in around.sort_values("ts").index if i in shapes.index]
    for i in sized:
        tensors = _tensors(shapes.at[i, "input_dims"], shapes.at[i, "input_types"])
        if tensors:
            shape, dtype = max(tensors, key=lambda t: math.prod(t[0]))
            break
    else:
        return None
    weight = 0
    for i in sized:
        for s, t in _tensors(shapes.at[i, "input_dims"], shapes.at[i, "input_types"]):
            if s and len(s) < len(shape) and s == shape[len(shape) - len(s) :]:
                weight = _nbytes(s, t)
                break
        if weight:
            break
    return shape, dtype, weight


def _weight_of(around: pd.DataFrame, shapes: pd.DataFrame, shape: list[int]) -> str:
    """The weight's shape ("32x32"; "" where the call has none): a tensor input shaped as x's trailing dims."""
    for i in around.sort_values("ts").index:
        if i in shapes.index:
            for s, _ in _tensors(shapes.at[i, "input_dims"], shapes.at[i, "input_types"]):
                if s and len(s) < len(shape) and s == shape[len(shape) - len(s) :]:
                    return "x".join(map(str, s))
    return ""


def _full_size(k: pd.DataFrame, shape: list[int], dtype: str) -> tuple[float, float, str]:
    """The reads and writes of tensors with x's element count in a call's kernels, how many of
    them were in a dtype wider than x's, and the widest of those (NaN, NaN, "" where a kernel is unsized)."""
    if k["tensors"].isna().any():
        return math.nan, math.nan, ""
    n = math.prod(shape)
    moved = [t for ts in k["tensors"] for _, s, t in ts if math.prod(s) == n]
    wider = [t for t in moved if DTYPE_BYTES[t] > DTYPE_BYTES[dtype]]
    widest = max(wider, key=DTYPE_BYTES.get) if wider else ""
    return float(len(moved)), float(len(wider)), DTYPE_NAMES.get(widest, widest)


def call_table(trace: Any, name: str, kernels: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per call of `name` (see `call_windows`): what it cost the host and the device, and
    its bytes against a fused RMSNorm's minimum at the same shape.

    Args:
        trace: as `analysis.traces.load_trace` returns it.
        name: the module or op.
        kernels: `call_kernels(trace, name)`, when already computed.
    Returns:
        `call`, `name`, `host_us` (the call's window), `host_ops` (cpu ops inside it, the call's own
        event excluded), `kernels`, `kernel_us` (their durations summed), `device_span_us` (first
        kernel start to last kernel end), `gaps_us` (idle time between its kernels),
        `late_gaps_us` (the part opened by a late launch), `median_latency_us`, `first_launch_ts`
        and `last_kernel_end` (µs on the trace's clock), `device_behind_us` (the first kernel's
        start minus the call's end on the host: positive where the device began the call's work
        only after the host had left the call), `launched_ahead_us` (the first kernel's start minus the
        call's last launch: positive where every launch came before the device began the call's work), `x_shape`, `x_dtype` (as torch names it), `bytes`
        (its kernels' bytes; NaN when one is unsized), `unsized_kernels`, `min_bytes` (read x + read the weight
        + write y once) and `bytes_ratio` (bytes / min_bytes), `bytes_over_x` (bytes / x's bytes: not
        a count of passes, a float32 pass of a bfloat16 x counts 2), `full_size_ios` (the reads
        and writes of tensors with x's element count: the passes over memory; a fused call makes 2),
        `wider_ios` (how many of those were in a dtype wider than x's), `wider_dtype` (the widest
        of those, as torch names it; "" if none), `weight_shape` ("" if none).
    """
    calls = call_windows(trace, name)
    kernels = call_kernels(trace, name) if kernels is None else kernels
    ev = trace.events
    host_ops = ev[ev["cat"] == "cpu_op"]
    shapes = op_shapes(trace)
    rows = []
    for c in calls.itertuples():
        around = host_ops[(host_ops["tid"].astype(str) == c.tid) & (host_ops["ts"] >= c.ts) & (host_ops["end"] <= c.end)]
        around = around.drop(index=c.event, errors="ignore")
        k = kernels[kernels["call"] == c.call]
        x = _call_input(around, shapes)
        x_bytes = _nbytes(x[0], x[1]) if x else math.nan
        min_bytes = 2 * x_bytes + x[2] if x else math.nan
        unsized = int(k["bytes"].isna().sum())
        ios = _full_size(k, x[0], x[1]) if x else (math.nan, math.nan, "")
        total = float(k["bytes"].sum()) if len(k) and not unsized else math.nan
        rows.append(
            {
                "call": c.call,
                "name": c.name,
                "host_us": c.host_us,
                "host_ops": len(around),
                "kernels": len(k),
                "kernel_us": float(k["device_us"].sum()),
                "device_span_us": float(k["end"].max() - k["ts"].min()) if len(k) else 0.0,
                "gaps_us": float(k["gap_before_us"].sum()),
                "late_gaps_us": float(k.loc[k["launched_late"], "gap_before_us"].sum()),
                "median_latency_us": float(k["latency_us"].median()) if len(k) else math.nan,
                "first_launch_ts": float(k["launch_ts"].min()) if len(k) else math.nan,
                "device_behind_us": float(k["ts"].min() - c.end) if len(k) else math.nan,
                "launched_ahead_us": float(k["ts"].min() - k["launch_ts"].max()) if len(k) else math.nan,
                "last_kernel_end": float(k["end"].max()) if len(k) else math.nan,
                "x_shape": "x".join(map(str, x[0])) if x else "",
                "x_dtype": DTYPE_NAMES.get(x[1], x[1]) if x else "",
                "bytes": total,
                "unsized_kernels": unsized,
                "min_bytes": min_bytes,
                "bytes_ratio": total / min_bytes,
                "bytes_over_x": total / x_bytes,
                "full_size_ios": ios[0],
                "wider_ios": ios[1],
                "wider_dtype": ios[2],
                "weight_shape": _weight_of(around, shapes, x[0]) if x else "",
            }
        )
    return pd.DataFrame(rows)


def calls_summary(calls: pd.DataFrame) -> dict[str, float | str]:
    """The per-call figures of `call_table`, as medians over the calls.

    Args:
        calls: `call_table(...)`.
    Returns:
        `calls`, `kernels_per_call`, `host_ops_per_call`, `median_kernel_us` (kernel time per
        call), `median_host_us`, `median_gaps_us`, `calls_with_a_late_launch` (calls in which a
        gap was opened by a late launch), `median_latency_us`, `megabytes_per_call` (10^6 bytes),
        `min_megabytes`, `bytes_ratio`, `bytes_over_x`, `full_size_ios`, `wider_ios`, and the most
        common `x_shape`, `x_dtype` (as torch names it) and `wider_dtype` (strings).
    """
    med = calls.median(numeric_only=True)
    return {
        "x_shape": str(calls["x_shape"].mode().iloc[0]) if len(calls) else "",
        "x_dtype": str(calls["x_dtype"].mode().iloc[0]) if len(calls) else "",
        "wider_dtype": str(calls["wider_dtype"].mode().iloc[0]) if len(calls) else "",
        "calls": int(len(calls)),
        "kernels_per_call": float(med["kernels"]),
        "host_ops_per_call": float(med["host_ops"]),
        "median_kernel_us": float(med["kernel_us"]),
        "median_host_us": float(med["host_us"]),
        "median_gaps_us": float(med["gaps_us"]),
        "calls_with_a_late_launch": int((calls["late_gaps_us"] > 0).sum()),
        "median_latency_us": float(med["median_latency_us"]),
        "megabytes_per_call": float(med["bytes"]) / 1e6,
        "min_megabytes": float(med["min_bytes"]) / 1e6,
        "bytes_ratio": float(med["bytes_ratio"]),
        "bytes_over_x": float(med["bytes_over_x"]),
        "full_size_ios": float(med["full_size_ios"]),
        "wider_ios": float(med["wider_ios"]),
    }


def kernels_by_op(kernels: pd.DataFrame) -> pd.DataFrame:
    """The kernels of every call grouped by their position in the call: which op launched each,
    its kernel, and medians over the calls of its time, latency, gap before it, bytes and rate.

    Args:
        kernels: `call_kernels(...)`.
    Returns:
        one row per position (0, 1, ...): `op`, `short`, `device_us`, `latency_us`,
        `gap_before_us`, `bytes`, `gb_per_s` (medians), `calls` (how many calls had a kernel there).
    """
    k = kernels.assign(position=kernels.groupby("call").cumcount())
    grouped = k.groupby("position")
    out = grouped[["device_us", "latency_us", "gap_before_us", "bytes", "gb_per_s"]].median()
    out.insert(0, "short", grouped["short"].agg(lambda s: s.mode().iloc[0]))
    out.insert(0, "op", grouped["op"].agg(lambda s: s.mode().iloc[0]))
    out["calls"] = grouped.size()
    return out


def at_rate(kernels: pd.DataFrame, gb_per_s: float) -> pd.DataFrame:
    """What each kernel's bytes would take at another kernel's rate: the comparison normalised by
    bytes. It cannot show launch overhead or the gaps between kernels (not proportional to
    bytes), nor that a rate measured at one size holds at another (a small kernel is dominated by
    its fixed start-up cost, a large one by memory bandwidth).

    Args:
        kernels: `call_kernels(...)` rows (one call's, or several).
        gb_per_s: the rate to apply, e.g. a fused kernel's median `gb_per_s`.
    Returns:
        the rows with `at_rate_us` (bytes / rate) beside their recorded `device_us`.
    """
    return kernels.assign(at_rate_us=kernels["bytes"] / (gb_per_s * 1e3))


def plot_call_kernels(
    panels: dict[str, pd.DataFrame], title: str = "One module call, kernel by kernel", unread: tuple[str, ...] | list[str] = ()
):
    """One call's kernels per panel on one time scale (µs from the call's first kernel start),
    each named by the op that launched it, the idle time between them shaded; every panel is
    titled with its device and origin (`recorded_label`) and TraceLens's caution is in the title.

    Args:
        panels: the device as a sentence names it (e.g. "an AMD MI300X") -> the `call_kernels`
            rows of one call.
        title: the figure's title.
        unread: the devices whose recording stamps kernels back to back (`lesson.stamps_back_to_back`):
            their panels shade no idle and are titled "stamped back to back: idle not read, may be in these
            times", not with an idle figure.
    Returns:
        the matplotlib figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .figures import IDLE_ALPHA, LANE_COLORS, MEANING_COLORS

    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 1.5 * len(panels) + 1.2), sharex=True, squeeze=False)
    for ax, (device, k) in zip(axes[:, 0], panels.items()):
        k = k.sort_values("ts")
        start = float(k["ts"].min())
        ax.broken_barh(
            list(zip(k["ts"] - start, k["device_us"])),
            (-0.35, 0.7),
            facecolors=LANE_COLORS["device"],
            edgecolor="black",
            linewidth=0.4,
        )
        gaps = k[(k["gap_before_us"] > 0) & (device not in unread)]
        ax.broken_barh(
            list(zip(gaps["ts"] - gaps["gap_before_us"] - start, gaps["gap_before_us"])),
            (-0.35, 0.7),
            facecolors=MEANING_COLORS["idle"],
            alpha=IDLE_ALPHA,
            lw=0,
        )
        for i, row in enumerate(k.itertuples()):
            ax.text(
                row.ts - start + row.device_us / 2,
                0.45 if i % 2 else -0.45,
                row.op.removeprefix("aten::"),
                ha="center",
                va="bottom" if i % 2 else "top",
                fontsize=7,
            )
        ax.set_yticks([])
        ax.set_ylim(-1.0, 1.0)
        idle = (  # the idle as 02's line prints it (the difference rounded apart: 8.6 against 8.7)
            " (stamped back to back: idle not read, may be in these times)"
            if device in unread
            else f" in a span of {(k['end'].max() - start):.1f} us, {k['gap_before_us'].fillna(0.0).sum():.1f} us idle between them"
        )
        ax.set_title(
            f"{len(k)} kernels, {k['device_us'].sum():.1f} us of kernel time{idle}: {recorded_label(device)}",
            loc="left",
            fontsize=9,
        )
    axes[-1, 0].set_xlabel("time since the call's first kernel started (us)")
    fig.legend(
        handles=[
            Patch(color=LANE_COLORS["device"], label="kernel (named by the op that launched it)"),
            Patch(color=MEANING_COLORS["idle"], alpha=IDLE_ALPHA, label="no kernel of this call running"),
        ],
        loc="upper left",
        bbox_to_anchor=(0.01, 0.91),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    # one time scale to compare the calls' shapes, not their devices: each panel is a different recording (02's reader
    # read the shared axis as a ranking the printed line forbids)
    caution = f"{TRACELENS_CAUTION}; two recordings: do not rank the devices" if len(panels) > 1 else TRACELENS_CAUTION
    fig.suptitle(f"{title}\n({caution})", x=0.01, ha="left", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.87))
    return fig


def fused_comparison(naive_calls: pd.DataFrame, fused_kernels: pd.DataFrame) -> dict[str, float]:
    """A naive call's kernels against a fused kernel recorded at another shape, normalised by
    bytes (medians over the calls). What it cannot show: launch overhead and the gaps between
    kernels (not proportional to bytes), and whether a rate measured at one size holds at another:
    a small kernel's rate is set by its fixed start-up cost, a large one's by memory bandwidth, so
    a rate from a smaller shape makes every estimate from it an upper bound on time.

    Args:
        naive_calls: `call_table(...)` of the naive calls.
        fused_kernels: `call_kernels(...)` of the fused calls.
    Returns:
        `fused_gb_per_s` (the fused kernels' median rate; `fused_rates`, how many it is the median
        of; `fused_gb_per_s_low`/`_high`, their range), `fused_bytes` and `fused_kernel_us` (its bytes
        and time), `naive_kernel_us` (a naive call's kernel time as recorded), `naive_gb_per_s`
        (its bytes over its kernel time), `naive_at_fused_rate_us` (its bytes at the fused rate),
        `fused_min_at_fused_rate_us` and `fused_min_at_naive_rate_us` (the fused minimum of the
        naive shape at either rate: what one fused kernel would take there, on that assumption),
        `saved_at_naive_rate_us` (the naive call's kernel time less the latter), `fused_min_mb` (that
        minimum: read x and the weight, write y).
    """
    rate = fused_rate(fused_kernels)
    naive_rate = float((naive_calls["bytes"] / naive_calls["kernel_us"]).median() / 1e3)
    return {
        "fused_gb_per_s": rate,
        "fused_rates": float(fused_kernels["gb_per_s"].notna().sum()),
        "fused_gb_per_s_low": float(fused_kernels["gb_per_s"].min()),
        "fused_gb_per_s_high": float(fused_kernels["gb_per_s"].max()),
        "fused_bytes": float(fused_kernels["bytes"].median()),
        "fused_kernel_us": float(fused_kernels["device_us"].median()),
        "naive_kernel_us": float(naive_calls["kernel_us"].median()),
        "naive_gb_per_s": naive_rate,
        "naive_at_fused_rate_us": float(naive_calls["bytes"].median() / (rate * 1e3)),
        "fused_min_at_fused_rate_us": float(naive_calls["min_bytes"].median() / (rate * 1e3)),
        "fused_min_at_naive_rate_us": float(naive_calls["min_bytes"].median() / (naive_rate * 1e3)),
        "saved_at_naive_rate_us": float(
            naive_calls["kernel_us"].median() - naive_calls["min_bytes"].median() / (naive_rate * 1e3)
        ),
        "fused_min_mb": float(naive_calls["min_bytes"].median() / 1e6),
    }


def fused_rate(kernels: pd.DataFrame) -> float:
    """The median achieved rate (GB/s) of sized kernels, e.g. the fused RMSNorm kernel's.

    Args:
        kernels: `call_kernels(...)` rows.
    Returns:
        the median of `gb_per_s` over the rows that have one (NaN if none).
    """
    return float(np.nanmedian(kernels["gb_per_s"])) if kernels["gb_per_s"].notna().any() else math.nan
