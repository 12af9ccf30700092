"""The real device traces the series ships (data/recorded/), and the label every figure drawn
from them carries.

A cpu run has no device lane, so notebooks 06 and 08 and appendix A2 show device-side facts on
traces recorded on NVIDIA A100 GPUs by the HolisticTraceAnalysis project (MIT license beside
them; data/recorded/README.md says what each holds). They are read with the same code as the
learner's own traces; nothing in them was produced by this series.
"""

from __future__ import annotations

from pathlib import Path

from .errors import TraceFileError

RECORDED_DIR = Path(__file__).resolve().parent.parent / "data" / "recorded"
# Printed in every title and sentence about a recorded trace, so no figure passes as this run's
RECORDED_ORIGIN = "recorded on an NVIDIA A100 by the HTA project, not this run"

RECORDED_TRACES = {
    "event_sync": "cuda_event_sync__event_sync_trace.json.gz",  # a host waiting on a device event
    "alexnet": "simple_add__benchmark_result_493459_1694039959_trace.json.gz",  # a small benchmark, 79 kernels
    "rank0": "trace_filter__sampled_rank-0.json.gz",  # two ranks of one training job
    "rank1": "trace_filter__sampled_rank-1.json.gz",
}
# The benchmark's measured forward pass (its last iteration): the window the notebooks read
ALEXNET_FORWARD = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"


def recorded_path(key: str) -> Path:
    """The file of a shipped recorded trace, by its key in RECORDED_TRACES."""
    if key not in RECORDED_TRACES:
        raise TraceFileError(f"No recorded trace called {key!r}", f"use one of {', '.join(RECORDED_TRACES)}")
    return RECORDED_DIR / RECORDED_TRACES[key]


def load_recorded(key: str):
    """A shipped recorded trace, loaded with `analysis.traces.load_trace`."""
    from .traces import load_trace  # pandas: loaded on use, so that the path helpers stay light

    return load_trace(recorded_path(key))
