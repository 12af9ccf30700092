"""One profiled loop, the same on every backend.

The loop is the lesson of notebook 01, written out there in full; this is the same loop with
the plumbing (output paths, the Neuron exporter, checks) that every later notebook reuses:

    with profile(activities=backend.activities, schedule=schedule(wait, warmup, active),
                 on_trace_ready=handler, ...) as prof:
        for _ in range(wait + warmup + active):
            fn()
            backend.synchronize()   # or the device time lands in the wrong step, or nowhere
            prof.step()

Device time is reported only when it was really captured: an all-zero device column, a cpu run
(no separate device timeline) or a loop without synchronize() is flagged, never shown as a
measurement.
"""
from __future__ import annotations

import math
import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from torch.profiler import profile, record_function, schedule

from .backend import Backend
from .errors import ParameterError
from .neuron import NeuronProfilerSetup, explain_runtime_error, neuron_profiler_setup
from .outputs import ensure_writable_dir

# Measured here (naive RMSNorm, 5 active steps on cpu): 249 bytes per event in the exported JSON;
# with_stack=True made the same trace 4.4x larger (it adds Python-function events).
BYTES_PER_EVENT = 250
STACK_FACTOR = 4.4
LARGE_TRACE_BYTES = 200 * 1024 * 1024

DEVICE_COLUMNS = ["self_device_us", "device_total_us"]


@dataclass
class ProfileResult:
    """What one profiled run produced.

    `table` is key_averages() as a DataFrame (times in µs). Where device time was not captured,
    its device columns hold NaN, and `device_time_note` says why.
    """

    backend: str
    label: str
    table: pd.DataFrame
    trace_path: Path
    device_time_captured: bool
    device_time_note: str
    synchronized: bool
    wait: int
    warmup: int
    active: int
    neuron_artifacts_dir: Path | None = None
    neuron_config: dict[str, Any] = field(default_factory=dict)
    neuron_dropped_events: int = 0  # reported by the runtime at export (N23): the profile is truncated

    def per_step(self, column: str) -> float:
        """Sum of a time column over all ops, divided by the active steps (µs per step); NaN where
        the column was not captured (an all-NaN sum must not read as zero time)."""
        ops = self.table[~self.table["name"].str.startswith("ProfilerStep")]
        return float(ops[column].sum(min_count=1)) / self.active


def check_schedule(wait: int, warmup: int, active: int) -> None:
    """The schedule must reach an active window after at least one warm-up step."""
    for name, value, minimum in (("wait", wait, 0), ("warmup", warmup, 1), ("active", active, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ParameterError(
                f"profiler schedule {name}={value!r} is invalid: it must be an integer >= {minimum}",
                "warm-up steps keep compilation and caches out of the measurement, and active "
                "steps are the ones recorded; e.g. wait=1, warmup=3, active=5",
            )


def estimate_trace_bytes(n_events: int, with_stack: bool) -> int:
    return int(n_events * BYTES_PER_EVENT * (STACK_FACTOR if with_stack else 1))


def key_averages_frame(prof: profile) -> pd.DataFrame:
    """key_averages() as a DataFrame with the series' column names (µs, bytes)."""
    rows = [
        {
            "name": e.key,
            "calls": e.count,
            "self_cpu_us": e.self_cpu_time_total,
            "cpu_total_us": e.cpu_time_total,
            "self_device_us": e.self_device_time_total,
            "device_total_us": e.device_time_total,
            "self_cpu_memory_bytes": e.self_cpu_memory_usage,
            "self_device_memory_bytes": e.self_device_memory_usage,
        }
        for e in prof.key_averages()
    ]
    columns = ["name", "calls", "self_cpu_us", "cpu_total_us", *DEVICE_COLUMNS,
               "self_cpu_memory_bytes", "self_device_memory_bytes"]
    return pd.DataFrame(rows, columns=columns)


def judge_device_time(backend: Backend, table: pd.DataFrame, synchronized: bool,
                      neuron: NeuronProfilerSetup | None) -> tuple[bool, str]:
    """Was device time really captured? If not, say why and what to try."""
    if not synchronized:
        return False, (
            "device time not captured: the loop had no synchronize(), so device work was not "
            "waited for inside its step and its time cannot be attributed. Add "
            "backend.synchronize() before prof.step()."
        )
    if not backend.has_device_timeline:
        return False, (
            f"device time not captured: {backend.name} has no separate device timeline; "
            "the CPU columns hold the compute time."
        )
    if not (table["self_device_us"].fillna(0) > 0).any():
        if backend.name == "neuron":
            detail = (
                "this torch-neuronx did not fill device time into key_averages() "
                f"(correlate_device_time passed: {bool(neuron and neuron.correlate_device_time)}). "
                "Read device time from the Neuron profile in Neuron Explorer instead."
            )
        else:
            detail = (
                "the profiler saw no device activity. Check that the work runs on the device "
                "and that CUPTI is available to this torch build."
            )
        return False, f"device time not captured: the device columns are all zero; {detail}"
    return True, "device time captured"


def profile_steps(
    fn: Callable[[], Any],
    backend: Backend,
    out_dir: Path | str,
    *,
    label: str = "step",
    wait: int = 1,
    warmup: int = 3,
    active: int = 5,
    synchronize: bool = True,
    record_shapes: bool = False,
    profile_memory: bool = False,
    with_stack: bool = False,
    neuron: NeuronProfilerSetup | None = None,
) -> ProfileResult:
    """Profile `fn` over schedule(wait, warmup, active), synchronizing inside every step.

    Writes `<out_dir>/<label>.trace.json` (Chrome trace, opens in Perfetto UI) on every backend,
    and on neuron the Neuron profile under `<out_dir>/<label>.neuron/`. If `fn` raises, the
    profiler is stopped and the original exception propagates, with a note saying at which step.
    """
    check_schedule(wait, warmup, active)
    out_dir = ensure_writable_dir(out_dir)
    trace_path = out_dir / f"{label}.trace.json"
    if backend.name == "neuron" and neuron is None:  # `neuron`: a NeuronConfig set up by the caller
        neuron = neuron_profiler_setup(ensure_writable_dir(out_dir / f"{label}.neuron"))

    def on_trace_ready(prof: profile) -> None:
        n_events = len(prof.events())
        estimate = estimate_trace_bytes(n_events, with_stack)
        if estimate > LARGE_TRACE_BYTES:
            warnings.warn(
                f"the trace about to be written to {trace_path} is estimated at "
                f"{estimate / 2**20:.0f} MiB ({n_events} events"
                f"{', with_stack' if with_stack else ''}); fewer active steps or with_stack=False "
                "make it smaller",
                stacklevel=2,
            )
        if neuron is not None:
            neuron.export_trace(prof)
        tmp = trace_path.with_suffix(".json.partial")
        prof.export_chrome_trace(str(tmp))
        shutil.move(tmp, trace_path)

    kwargs: dict[str, Any] = dict(
        activities=list(backend.activities),
        schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
        on_trace_ready=on_trace_ready,
        record_shapes=record_shapes,
        profile_memory=profile_memory,
        with_stack=with_stack,
    )
    if neuron is not None:
        kwargs["experimental_config"] = neuron.config

    step = 0
    last_step = wait + warmup + active - 1
    try:
        profiler = profile(**kwargs)
        # on neuron, the step that ends the active window and the profiler's exit are watched for the
        # runtime's dropped-events warning too: the Neuron profile is dumped when the session stops (N29)
        with neuron.watch_exit(profiler) if neuron is not None else profiler as prof:
            for step in range(wait + warmup + active):
                with record_function(label):
                    fn()
                if synchronize:
                    backend.synchronize()
                if neuron is not None and step == last_step:
                    neuron.watch("step", prof.step)
                else:
                    prof.step()
    except Exception as exc:
        explained = explain_runtime_error(exc) if backend.name == "neuron" else exc
        if explained is not exc:
            raise explained from exc
        exc.add_note(f"(raised inside the profiled loop at step {step} of '{label}'; the profiler was stopped)")
        raise

    table = key_averages_frame(prof)
    captured, note = judge_device_time(backend, table, synchronize, neuron)
    if not captured:
        table[DEVICE_COLUMNS] = math.nan
    return ProfileResult(
        backend=backend.name,
        label=label,
        table=table,
        trace_path=trace_path,
        device_time_captured=captured,
        device_time_note=note,
        synchronized=synchronize,
        wait=wait,
        warmup=warmup,
        active=active,
        neuron_artifacts_dir=neuron.output_dir if neuron else None,
        neuron_config={k: str(v) for k, v in neuron.config_kwargs.items()} if neuron else {},
        neuron_dropped_events=neuron.dropped_events if neuron else 0,
    )
