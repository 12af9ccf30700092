"""Notebook 01's bookkeeping, kept out of the cells a learner copies: the busy-machine check around
the profiled loop, the line that sets the recorded steps' extra code against their gap to the
steady state, and the figures the notebook publishes.

Why here: 01's profiled loop should read as plain torch and torch.profiler; the contention
snapshots (analysis.contention), the Neuron dropped-events watch (lesson.neuron_profiler) and the
twenty-line metrics dictionary are the series' plumbing, not the lesson.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.contention import Contention, contention_between, read_counters
from analysis.verdicts import Verdict, counted, withheld
from lesson.neuron_profiler import NeuronProfilerSetup

# The labels inside a recorded step that are not ops: their self time is the code the step runs
# beside `model(x)` (the Python between the ops, the profiler's recording, `prof.step()`).
STEP_LABELS = ("mlp_step", "ProfilerStep*")


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


def extra_code_per_step(table: pd.DataFrame, labels: tuple[str, ...] = STEP_LABELS) -> float:
    """The self time per call of the step's labels, summed: the code a recorded step runs beside the ops.

    Args:
        table: analysis.key_averages.key_averages_frame of the profile (columns name, calls, self_cpu_us).
        labels: the record_function labels of one step (the series' `mlp_step` and PyTorch's `ProfilerStep*`).

    Returns:
        Microseconds per step; 0.0 where none of the labels was recorded.
    """
    rows = table[table["name"].isin(labels) & (table["calls"] > 0)]
    return float((rows["self_cpu_us"] / rows["calls"]).sum())


def step_gap_line(table: pd.DataFrame, recorded: Any, steady: Any, steps_verdict: Verdict) -> Verdict:
    """Sets the step's extra code against the gap between the recorded steps' and the steady
    state's medians, so that "recorded steps above steady state" is not read as the profiler's cost.
    The two were timed in separate blocks, so the sentence says drift is not excluded.

    Args:
        table: key_averages_frame of the profile; recorded, steady: the two analysis.timing.Timing.
        steps_verdict: the `judge_timings` verdict of recorded against steady (a busy one concludes nothing).

    Returns:
        A "count" Verdict (analysis.verdicts.counted): the extra code per step against the gap, and
        their ratio; "withheld" where the block was busy or the recorded median is not above the steady one.
    """
    subject = "extra code per recorded step (self time of mlp_step + ProfilerStep*)"
    gap_us = recorded.median_us - steady.median_us
    if steps_verdict.kind == "busy":
        return withheld(subject, "the machine was busy, so the gap concludes nothing")
    if gap_us <= 0:
        return withheld(subject, "the recorded steps' median is not above the steady state's: no gap to account for")
    line = counted(subject, extra_code_per_step(table), "us", "the gap between the two medians", gap_us)
    return dataclasses.replace(line, sentence=f"{line.sentence} (separate blocks: drift is not excluded)")


def setup_metrics(
    cold_us: float,
    warm: Any,
    device_time: tuple[bool, str],
    issue_ratio: float,
    unsynced: Any,
    costs: dict[str, tuple[Any, Verdict]],
    trace_path: Path,
    active_steps: int,
) -> dict[str, Any]:
    """Notebook 01's published figures (metrics.json), for the tests and for comparing runs.

    Args:
        cold_us: the first call (us); warm: the steady state's Timing.
        device_time: (captured, why) of lesson.profiling.judge_device_time.
        issue_ratio: time to the last call's return over time to synchronize()'s return.
        unsynced: the ProfileResult profiled without synchronize(), or None where not shown.
        costs: metric name -> (paired ratio, its judge_ratio verdict), the profiler's cost per call size.
        trace_path: the Chrome trace written; active_steps: the schedule's recorded steps.

    Returns:
        name -> metric (helpers.metrics), ready for `session.publish`; the verdicts go under "claims".
    """
    import torch

    from helpers.metrics import metric, ratio_metric, timing_metric

    captured, why = device_time
    metrics = {
        "cold_call_us": metric(cold_us, "us"),
        "warm_call_us": timing_metric(warm),
        "cold_over_warm": metric(cold_us / warm.median_us, "ratio"),
        "device_time_captured": metric(captured, "bool", why),
        "issue_over_finish_ratio": metric(issue_ratio, "ratio"),
        "unsynchronized_flagged": metric(None if unsynced is None else not unsynced.device_time_captured, "bool"),
    }
    for name, (ratio, _) in costs.items():
        metrics[name] = ratio_metric(ratio, "per-round time ratio, interleaved")
    metrics |= {
        "trace_bytes": metric(trace_path.stat().st_size, "bytes"),
        "active_steps": metric(active_steps, "steps"),
        "intra_op_threads": metric(torch.get_num_threads(), "threads"),
        "claims": metric([verdict.claim(name).record() for name, (_, verdict) in costs.items()], "claims"),
    }
    return metrics
