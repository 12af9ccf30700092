"""Per-engine computing time of a Neuron profile export: what the engine lanes hold, split by kind.

An engine's lane in the device view, and its `<engine>_engine_active_time` counter, leave out
semaphore waits (the profiler's terminology says so; in the recorded exports the union of the
engine's other instructions' intervals, `EVENT_SEMAPHORE_RANGE_CLEAR` included, lies within 0.03 us
of the counter; leaving that opcode out too, as a prefix match on `EVENT_SEMAPHORE` would, falls
short by up to 0.8 us, 14% of a lane) but hold every other instruction,
including those that compute nothing: drains, ordering and branch instructions, the loads that
stage data and the DMA instructions the engine issues. In the recorded attention profiles such
instructions fill the first third of each execution on every engine, and the sync engine runs
nothing else. "Which engine was busiest" read from the lanes therefore ranks housekeeping as well
as work. This module separates the two: an instruction is `computing` (its opcode transforms
data: a matrix multiply, an activation, a reduction, a cast or copy between on-chip buffers),
`control` (it synchronises, orders, branches, loads or issues a transfer) or `unclassified` (an
opcode neither list names: reported, never counted as either).

Engine names: the export's instruction table labels engines `Tensor`, `TensorMatrix`, `Vector`,
`Scalar`, `GpSimd`, `Sync`; its interval table and counters use the five lower-case names of
`neuron_export.ENGINES`. `TensorMatrix` (the matrix unit, where MATMULs run) and `Tensor` (the
tensor engine's queue, which loads the weights) are both the tensor engine.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .neuron_export import ENGINES, interval_union_ns

# Opcodes that transform data on an engine (seen in the recorded trn2 exports, profiler 2.28).
COMPUTING_OPCODES = frozenset(
    {
        "MATMUL",
        "ACTIVATE",
        "CAST",
        "COPY",
        "RECIPROCAL",
        "TENSOR_REDUCE",
        "TENSOR_SCALAR",
        "TENSOR_TENSOR",
        "TENSOR_TENSOR_SCAN",
        "TRANSPOSE",
        "IOTA",
        "SELECT",
        "MEMSET",
    }
)
# Opcodes that synchronise, order, branch, stage data or issue a DMA transfer: no arithmetic.
CONTROL_OPCODES = frozenset(
    {
        "DRAIN",
        "EVENT_SEMAPHORE",
        "EVENT_SEMAPHORE_RANGE_CLEAR",
        "NOP",
        "NOTIFY",
        "SET_ORDERING_MODE",
        "COMPARE_BRANCH",
        "DMA_DIRECT2D",
        "TENSOR_LOAD",
        "ACT_TABLE_LOAD",
        "LDWEIGHTS",
        "WRITE",
    }
)
# The instructions a lane leaves out: semaphore waits. Exact opcodes, not a prefix: the lane holds
# EVENT_SEMAPHORE_RANGE_CLEAR (it clears semaphores; it waits for nothing).
WAIT_OPCODES = frozenset({"EVENT_SEMAPHORE"})
_ENGINE_OF_LABEL = {"tensormatrix": "tensor"}


def opcode_kind(opcode: str) -> str:
    """ "computing", "control" or "unclassified" for one instruction opcode (the lists above)."""
    if opcode in COMPUTING_OPCODES:
        return "computing"
    if opcode in CONTROL_OPCODES:
        return "control"
    return "unclassified"


def engine_of(label: str) -> str:
    """The engine (one of neuron_export.ENGINES) an instruction-table label belongs to."""
    name = str(label).lower()
    return _ENGINE_OF_LABEL.get(name, name)


def engine_work(export: Any) -> pd.DataFrame:
    """Per engine: the lane's active time against the time spent in computing instructions.

    Args:
        export: an analysis.neuron_export.NeuronExport (its `instructions` table and counters).

    Returns:
        A DataFrame indexed by engine (neuron_export.ENGINES order) with
        lane_us (the `<engine>_engine_active_time` counter, every instruction but the waits),
        non_wait_us (the union of that engine's instructions other than WAIT_OPCODES: what the
        lane should equal, a check of the counter against the instructions),
        computing_us (the union of that engine's computing instructions' intervals),
        computing_share (computing_us over the execution's total time),
        computing, control, unclassified (instruction counts by kind), and
        computing_opcodes (the computing opcodes it ran, comma-separated).
    """
    instructions = export.instructions.assign(
        engine=export.instructions["engine"].map(engine_of), kind=export.instructions["opcode"].map(opcode_kind)
    )
    total_us = export.total_time_ns / 1e3
    rows = {}
    for engine in ENGINES:
        mine = instructions[instructions["engine"] == engine]
        computing, non_wait = mine[mine["kind"] == "computing"], mine[~mine["opcode"].isin(WAIT_OPCODES)]
        computing_us = interval_union_ns(computing["start_ns"], computing["end_ns"]) / 1e3
        rows[engine] = {
            "lane_us": float(export.counter(f"{engine}_engine_active_time")) * 1e6,
            "non_wait_us": interval_union_ns(non_wait["start_ns"], non_wait["end_ns"]) / 1e3,
            "computing_us": computing_us,
            "computing_share": computing_us / total_us if total_us else float("nan"),
            "computing": len(computing),
            "control": int((mine["kind"] == "control").sum()),
            "unclassified": int((mine["kind"] == "unclassified").sum()),
            "computing_opcodes": ", ".join(sorted(set(computing["opcode"]))),
        }
    return (
        pd.DataFrame(rows)
        .T.rename_axis("engine")
        .astype(
            {
                "lane_us": float,
                "non_wait_us": float,
                "computing_us": float,
                "computing_share": float,
                "computing": int,
                "control": int,
                "unclassified": int,
            }
        )
    )
