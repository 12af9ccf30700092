"""One profiled loop, the same on every backend (notebook 01's loop, repeated by the later ones).

The loop is the lesson of notebook 01, written out there in full; this is the same loop with
the plumbing (output paths, the Neuron exporter, checks) that every later notebook reuses:

    with profile(activities=backend.activities, schedule=schedule(wait, warmup, active),
                 on_trace_ready=handler, ...) as prof:
        for _ in range(wait + warmup + active):
            fn()
            backend.synchronize()   # or the device time lands in the wrong step, or nowhere
            prof.step()

Device time is reported only when it was really captured (analysis.key_averages judges it): an
all-zero device column, a cpu run or a loop without synchronize() is flagged, never shown as a
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

from analysis.key_averages import DEVICE_COLUMNS, device_time_verdict, key_averages_frame
from helpers.backend import Backend
from helpers.errors import ParameterError
from helpers.neuron import explain_runtime_error
from lesson.neuron_profiler import NeuronProfilerSetup, neuron_profiler_setup
from helpers.outputs import ensure_writable_dir

# Measured here (naive RMSNorm, 5 active steps on cpu): 249 bytes per event in the exported JSON;
# with_stack=True made the same trace 4.4x larger (it adds Python-function events).
BYTES_PER_EVENT = 250
STACK_FACTOR = 4.4
LARGE_TRACE_BYTES = 200 * 1024 * 1024


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


def judge_device_time(
    backend: Backend, table: pd.DataFrame, synchronized: bool, neuron: NeuronProfilerSetup | None
) -> tuple[bool, str]:
    """Was device time really captured? If not, say why and what to try
    (analysis.key_averages.device_time_verdict, given this backend's fields)."""
    return device_time_verdict(
        table, synchronized, backend.name, backend.has_device_timeline, bool(neuron and neuron.correlate_device_time)
    )


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
        try:
            prof.export_chrome_trace(str(tmp))
            shutil.move(tmp, trace_path)
        finally:
            tmp.unlink(missing_ok=True)  # a failed export (a full disk) leaves no partial trace behind

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
