"""Notebook 01's bookkeeping, kept out of the cells a learner copies: the busy-machine check around
the profiled loop, the line that sets the recorded steps' extra code against their gap to the
steady state (its published figures: lesson.published_metrics).

Why here: 01's profiled loop should read as plain torch and torch.profiler; the contention
snapshots (analysis.contention) and the Neuron dropped-events watch (lesson.neuron_profiler) are
the series' plumbing, not the lesson.
"""

from __future__ import annotations

import dataclasses
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
        their ratio; "withheld" where the block was busy or the recorded steps are not measurably above the steady
        state (an inconclusive gap is not accounted for).
    """
    subject = "extra code per recorded step (self time of mlp_step + ProfilerStep*)"
    gap_us = recorded.median_us - steady.median_us
    if steps_verdict.kind == "busy":
        return withheld(subject, "the machine was busy, so the gap concludes nothing")
    if steps_verdict.kind != "slower" or gap_us <= 0:
        return withheld(subject, "the recorded steps are not measurably above the steady state: no gap to account for")
    line = counted(subject, extra_code_per_step(table), "us", "the gap between the two medians", gap_us)
    return dataclasses.replace(line, sentence=f"{line.sentence} (separate blocks: drift is not excluded)")
