"""Wall-clock timing, the one measurement method of the series.

The profiler tells *what* ran; this tells *how long a call takes* with the least disturbance:
no profiler attached, the device synchronized around each sample, the first calls (compilation,
caches, allocator growth) excluded, and the median of N samples reported with its spread.

A sample times `inner` back-to-back calls and one synchronize, divided by `inner`, so that a
call of a few microseconds is not drowned by timer and synchronize overhead; `inner` is chosen
so that one sample lasts at least `min_sample_s`.

Whatever is compared (variants with each other and with the copy floor, profiler on and off) is
timed *interleaved*: one sample of each in turn, round after round. A change in the machine's
state (another process, frequency, memory pressure) then falls on every case of a round alike,
and a ratio taken per round cancels it. `PairedRatio` is the median of those per-round ratios with
its p10-p90: that spread, not the spread of either timing, says whether a ratio is measurable.
"""
from __future__ import annotations

import math
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .backend import Backend


@dataclass
class Timing:
    label: str
    samples_us: np.ndarray
    inner: int

    @property
    def median_us(self) -> float:
        return float(np.median(self.samples_us))

    @property
    def p10_us(self) -> float:
        return float(np.percentile(self.samples_us, 10))

    @property
    def p90_us(self) -> float:
        return float(np.percentile(self.samples_us, 90))

    @property
    def spread(self) -> float:
        """(p90 - p10) / median: 0.1 means the middle 80% of samples lie within 10% of the median."""
        return (self.p90_us - self.p10_us) / self.median_us if self.median_us else math.nan


@dataclass
class PairedRatio:
    """numerator / denominator per interleaved round: its median and p10-p90 over the rounds.

    `pairing` names what a pair is, for the printed spread: a timing round here, a request where
    notebook 07 pairs two strategies request by request, a step where notebook 08 pairs ranks."""

    numerator: str
    denominator: str
    per_round: np.ndarray
    pairing: str = "round"

    @property
    def median(self) -> float:
        return float(np.median(self.per_round))

    @property
    def p10(self) -> float:
        return float(np.percentile(self.per_round, 10))

    @property
    def p90(self) -> float:
        return float(np.percentile(self.per_round, 90))

    @property
    def measurable(self) -> bool:
        """True when 1.0 (no difference) lies outside the per-round p10-p90."""
        return not (self.p10 <= 1.0 <= self.p90)

    def describe(self, faster: str = "faster", slower: str = "slower") -> str:
        """The ratio in words, with its spread; "no measurable difference" when the spread holds 1.0."""
        spread = f"per-{self.pairing} p10-p90 {self.p10:.2f}-{self.p90:.2f}"
        if not self.measurable:
            return f"no measurable difference here ({self.numerator} / {self.denominator} = {self.median:.2f}, {spread})"
        word = slower if self.median > 1 else faster
        factor = self.median if self.median > 1 else 1 / self.median
        return f"{self.numerator} took {self.median:.2f}x the time of {self.denominator}: {factor:.2f}x {word} ({spread})"


def paired_ratio(timings: dict[str, Timing], numerator: str, denominator: str) -> PairedRatio:
    """Ratio of two interleaved timings, taken round by round (same `inner` on both sides or not)."""
    a, b = timings[numerator].samples_us, timings[denominator].samples_us
    n = min(len(a), len(b))
    return PairedRatio(numerator, denominator, a[:n] / b[:n])


def _inner_calls(fn: Callable[[], Any], backend: Backend, min_sample_s: float, max_inner: int) -> int:
    backend.synchronize()
    start = time.perf_counter()
    fn()
    backend.synchronize()
    one = time.perf_counter() - start
    return int(min(max_inner, max(1, math.ceil(min_sample_s / max(one, 1e-9)))))


def time_interleaved(
    cases: dict[str, Callable[[], Any]],
    backend: Backend,
    *,
    contexts: dict[str, Callable[[], AbstractContextManager]] | None = None,
    repeats: int = 15,
    warmup: int = 3,
    min_sample_s: float = 0.002,
    max_inner: int = 1000,
) -> dict[str, Timing]:
    """Time several callables one sample of each in turn, `repeats` rounds.

    `contexts` optionally gives a case a context manager (e.g. an active profiler) entered around
    its sample, outside the timed region, so entering and leaving it is not counted.
    """
    contexts = contexts or {}
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    inner = {name: _inner_calls(fn, backend, min_sample_s, max_inner) for name, fn in cases.items()}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            with contexts.get(name, nullcontext)():
                backend.synchronize()
                start = time.perf_counter()
                for _ in range(inner[name]):
                    fn()
                backend.synchronize()
                samples[name].append((time.perf_counter() - start) / inner[name] * 1e6)
    return {name: Timing(label=name, samples_us=np.asarray(v), inner=inner[name]) for name, v in samples.items()}


def time_per_call(
    fn: Callable[[], Any],
    backend: Backend,
    *,
    label: str = "",
    repeats: int = 15,
    warmup: int = 3,
    min_sample_s: float = 0.002,
    max_inner: int = 1000,
) -> Timing:
    """Median-of-`repeats` time per call of `fn`, with the device synchronized around each sample."""
    return time_interleaved({label: fn}, backend, repeats=repeats, warmup=warmup,
                            min_sample_s=min_sample_s, max_inner=max_inner)[label]


def time_once(fn: Callable[[], Any], backend: Backend) -> tuple[float, Any]:
    """Seconds for one synchronized call, and its result (for cold calls such as a first compile)."""
    backend.synchronize()
    start = time.perf_counter()
    out = fn()
    backend.synchronize()
    return time.perf_counter() - start, out
