"""The copy floor, and the bandwidth probe that says whether the floor itself is sound.

The floor of an RMSNorm is a same-size copy (`x.clone()`): it reads x once and writes a new
tensor once, as an ideal RMSNorm must, and it pays for allocating its output as every variant
does. A floor is only useful if it is measured well, so it is timed beside a STREAM-style triad
(`a = b + s * c` on preallocated tensors) that moves the same number of bytes: the bandwidth the
machine reaches without allocating. A copy much faster than the triad did not move its bytes (a
timing error); one far slower, or with a wide spread, was disturbed. Either is re-measured, and
flagged if it stays so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch

from .timing import Timing
from .verdicts import decimals_apart

WIDE_SPREAD = 0.25  # (p90 - p10) / median of the copy's samples
PLAUSIBLE_COPY_OVER_PROBE = (0.25, 1.5)  # copy bandwidth / triad bandwidth, at a memory-bound shape


def copy_floor(x: torch.Tensor) -> torch.Tensor:
    """A same-size copy: reads x once and writes a new tensor once, like an ideal RMSNorm."""
    return x.clone()


def triad_probe(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """A triad over three preallocated tensors of 2/3 of x's elements: two reads and one write
    move the bytes of the copy (read x, write y), with no allocation inside the timed call."""
    n = max(1, math.ceil(2 * x.numel() / 3))
    b, c = (torch.randn(n, device=x.device).to(x.dtype) for _ in range(2))
    a = torch.empty_like(b)
    return lambda: torch.add(b, c, alpha=0.5, out=a)


@dataclass
class FloorCheck:
    """The copy's and the probe's bandwidth over the same bytes, and what is wrong with the copy."""

    copy_gb_per_s: float
    probe_gb_per_s: float
    copy_spread: float
    problems: list[str] = field(default_factory=list)
    memory_bound: bool = True  # whether the bandwidths were compared (see check_floor)
    bytes_moved: int = 0  # read and written by one copy

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def copy_over_probe(self) -> float:
        return self.copy_gb_per_s / self.probe_gb_per_s if self.probe_gb_per_s else math.nan

    def explain(self, copy_into_over_probe: float | None = None) -> str:
        """The verdict, what the check compared and why the verdict holds, in this check's numbers.

        Why: a table that says "sound" beside a copy at 0.4x the triad's bandwidth reads as a
        contradiction. The check asks only whether the copy moved its bytes and was timed steadily,
        not whether it was fast; a copy below the triad is expected, because it allocates its output
        inside the timed call and the triad does not. `copy_into_over_probe`, the same copy into
        memory it already had over the triad, shows how much of the distance is that allocation."""
        low, high = PLAUSIBLE_COPY_OVER_PROBE
        spread = (
            f"the copy's spread, {decimals_apart(self.copy_spread, WIDE_SPREAD)}, is "
            + ("within" if self.copy_spread <= WIDE_SPREAD else "above")
            + f" the {WIDE_SPREAD} allowed"
        )
        verdict = "sound" if self.ok else "FLAGGED"
        if not self.memory_bound:
            return (
                f"{verdict}: at this shape both calls take microseconds and move {self.bytes_moved / 1024:,.0f} KiB, which can "
                "stay in the processor's caches, so their bandwidths say nothing about memory and are not compared; only the "
                "timing is checked, "
                f"and {spread}."
            )
        text = (
            f"{verdict}: the check compares the copy's bandwidth with the triad's over the same bytes and accepts "
            f"{low}-{high}x (here {self.copy_over_probe:.2f}x). Above {high}x the copy would have outrun the memory, "
            f"so it did not move its bytes; below {low}x something disturbed it. Below 1x is expected: the copy "
            "allocates its output inside the timed call, the triad works on tensors allocated beforehand"
        )
        if copy_into_over_probe is not None and math.isfinite(copy_into_over_probe):
            text += f" (the same copy into memory it already had reached {copy_into_over_probe:.2f}x the triad)"
        return text + f"; and {spread}."


def check_floor(copy: Timing, probe: Timing, bytes_moved: int, *, memory_bound: bool) -> FloorCheck:
    """Judge a copy timing against the triad timed in the same rounds.

    The bandwidth comparison applies only where the shape is memory-bound: at a few kilobytes both
    calls are launch overhead, and their "bandwidth" says nothing about memory."""
    copy_bw = bytes_moved / (copy.median_us * 1e-6) / 1e9
    probe_bw = bytes_moved / (probe.median_us * 1e-6) / 1e9
    check = FloorCheck(copy_bw, probe_bw, copy.spread, memory_bound=memory_bound, bytes_moved=bytes_moved)
    if copy.spread > WIDE_SPREAD:
        check.problems.append(f"the copy's spread is wide ({decimals_apart(copy.spread, WIDE_SPREAD)} > {WIDE_SPREAD})")
    low, high = PLAUSIBLE_COPY_OVER_PROBE
    if memory_bound and not low <= check.copy_over_probe <= high:
        check.problems.append(f"the copy reached {check.copy_over_probe:.2f}x the triad's bandwidth (plausible: {low}-{high}x)")
    return check


def nominal_memory_gb_per_s(backend: str) -> tuple[float | None, str]:
    """The device memory's nominal (peak) bandwidth in GB/s and where it came from; None with
    the reason where the device does not report it; `backend` is "neuron", "cuda" or "cpu".

    A measured copy is judged against what the memory can do at best: on cuda, the theoretical
    peak from two device properties, twice the memory clock (double data rate) times the bus
    width in bytes. A CPU reports neither (its triad probe is the reference), and
    torch-neuronx documents no such property (docs/NEURON_NOTES.md N31: on Trainium a device
    profile's bandwidth utilisation in Neuron Explorer's Summary is the measure)."""
    if backend == "cuda":
        props = torch.cuda.get_device_properties(0)
        clock_khz, bus_bits = getattr(props, "memory_clock_rate", 0), getattr(props, "memory_bus_width", 0)
        if clock_khz and bus_bits:
            return (
                2 * clock_khz * 1e3 * bus_bits / 8 / 1e9,
                f"2 x memory clock {clock_khz / 1e3:.0f} MHz x {bus_bits}-bit bus (device properties)",
            )
        return None, f"this torch ({torch.__version__}) reports no memory clock or bus width for {props.name}"
    if backend == "neuron":
        return None, (
            "torch-neuronx documents no memory-bandwidth property; on Trainium read the bandwidth "
            "utilisation in Neuron Explorer's Summary of a device profile (HBU from Neuron 2.34, MBU before)"
        )
    return None, "a CPU reports no nominal memory bandwidth; the triad probe, measured here, is the reference"
