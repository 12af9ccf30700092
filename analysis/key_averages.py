"""The profiler's own table, `prof.key_averages()`, read into a DataFrame, and whether its device
columns hold a measurement.

Device time is reported only when it was really captured: an all-zero device column, a backend
without a separate device timeline (cpu) or a loop without synchronize() is flagged, never shown
as a measurement. The backend is passed as plain values (its name, whether it has a device
timeline), so that this library needs nothing of the series' plumbing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

DEVICE_COLUMNS = ["self_device_us", "device_total_us"]


def key_averages_frame(prof: Any) -> pd.DataFrame:
    """key_averages() of a finished `torch.profiler.profile` as a DataFrame with the series'
    column names (µs, bytes): name, calls, self/total CPU and device time, self memory."""
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
    columns = [
        "name",
        "calls",
        "self_cpu_us",
        "cpu_total_us",
        *DEVICE_COLUMNS,
        "self_cpu_memory_bytes",
        "self_device_memory_bytes",
    ]
    return pd.DataFrame(rows, columns=columns)


def device_time_verdict(
    table: pd.DataFrame, synchronized: bool, backend: str, has_device_timeline: bool, correlate_device_time: bool = False
) -> tuple[bool, str]:
    """Was device time really captured in `table` (key_averages_frame)? Returns (captured, why):
    if not, why and what to try.

    `backend`: the backend's name ("neuron", "cuda", "cpu"); `has_device_timeline`: whether its
    profiler records device activity apart from CPU ops; `correlate_device_time`: on neuron,
    whether that NeuronConfig keyword was passed (docs/NEURON_NOTES.md N11)."""
    if not has_device_timeline:  # first: without a device there is nothing to wait for, synchronized or not
        return False, (
            f"device time not captured: {backend} has no separate device timeline: an op's row holds the time spent inside it (its work and its dispatch); a label's Self CPU is host time outside its ops."
        )
    if not synchronized:
        return False, (
            "device time not captured: the loop had no synchronize(), so device work was not "
            "waited for inside its step and its time cannot be attributed. Add "
            "backend.synchronize() before prof.step()."
        )
    if not (table["self_device_us"].fillna(0) > 0).any():
        if backend == "neuron":
            detail = (
                "this torch-neuronx did not fill device time into key_averages() "
                f"(correlate_device_time passed: {bool(correlate_device_time)}). "
                "Read device time from the Neuron profile in Neuron Explorer instead."
            )
        else:
            detail = (
                "the profiler saw no device activity. Check that the work runs on the device "
                "and that CUPTI is available to this torch build."
            )
        return False, f"device time not captured: the device columns are all zero; {detail}"
    return True, "device time captured"
