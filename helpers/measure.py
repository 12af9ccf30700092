"""Wall-clock timing, the one measurement method of the series.

The profiler tells *what* ran; this tells *how long a call takes* with the least disturbance:
no profiler attached, the device synchronized around each sample, the first calls (compilation,
caches, allocator growth) excluded, and the median of N samples reported with its spread.

A sample times `inner` back-to-back calls and one synchronize, divided by `inner`, so that a
call of a few microseconds is not drowned by timer and synchronize overhead; `inner` is chosen
so that one sample lasts at least `min_sample_s`.
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

    def as_row(self) -> dict[str, Any]:
        return {"label": self.label, "median_us": self.median_us, "p10_us": self.p10_us,
                "p90_us": self.p90_us, "spread": self.spread, "samples": len(self.samples_us),
                "calls_per_sample": self.inner}


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
    return time_alternating(fn, backend, {label: nullcontext}, repeats=repeats, warmup=warmup,
                            min_sample_s=min_sample_s, max_inner=max_inner)[label]


def time_alternating(
    fn: Callable[[], Any],
    backend: Backend,
    conditions: dict[str, Callable[[], AbstractContextManager]],
    *,
    repeats: int = 15,
    warmup: int = 3,
    min_sample_s: float = 0.002,
    max_inner: int = 1000,
) -> dict[str, Timing]:
    """Time `fn` under several conditions (e.g. without and with a profiler), one sample of each
    in turn, so that a load that comes and goes on the machine falls on all of them alike.

    Each condition is a factory of a context manager entered around its sample (outside the
    timed region, so entering and leaving it is not counted).
    """
    for _ in range(warmup):
        fn()
    backend.synchronize()
    start = time.perf_counter()
    fn()
    backend.synchronize()
    one = time.perf_counter() - start
    inner = int(min(max_inner, max(1, math.ceil(min_sample_s / max(one, 1e-9)))))
    samples = {name: [] for name in conditions}
    for _ in range(repeats):
        for name, context in conditions.items():
            with context():
                backend.synchronize()
                start = time.perf_counter()
                for _ in range(inner):
                    fn()
                backend.synchronize()
                samples[name].append((time.perf_counter() - start) / inner * 1e6)
    return {name: Timing(label=name, samples_us=np.asarray(v), inner=inner) for name, v in samples.items()}


def time_once(fn: Callable[[], Any], backend: Backend) -> tuple[float, Any]:
    """Seconds for one synchronized call, and its result (for cold calls such as a first compile)."""
    backend.synchronize()
    start = time.perf_counter()
    out = fn()
    backend.synchronize()
    return time.perf_counter() - start, out
