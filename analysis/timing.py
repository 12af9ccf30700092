"""Wall-clock timing, the one measurement method of the series.

The profiler tells *what* ran; this tells *how long a call takes* with the least disturbance:
no profiler attached, the device synchronized around each sample, the first calls (compilation,
caches, allocator growth) excluded, and the median of N samples reported with its spread.

A sample is `timeit.Timer(...).timeit(inner)` from Python's standard library, the measured loop
that `torch.utils.benchmark.Timer` itself runs: `inner` back-to-back calls between two clock reads,
with Python's garbage collector paused, divided by `inner`, so that a call of a few microseconds is
not drowned by timer and synchronize overhead; `inner` is chosen so that one sample lasts about
`min_sample_s` (at most `max_inner` calls). (torch's public `Timer.timeit` adds max(inner // 100, 2) untimed calls before every
sample: the rounds here are already warm, and at a large shape, where a sample is one call, those
calls tripled the time of notebook 05's timing cell.) The clock it reads synchronizes this backend's
device first (`Backend.synchronize`: torch.neuron's on Trainium, not only what `torch.accelerator`
knows), and it runs with the kernel's own intra-op thread count (`torch.get_num_threads()`, left as
it is), the setting the lesson measures.

Whatever is compared (variants with each other and with the copy floor, profiler on and off) is
timed *interleaved*: one sample of each in turn, round after round. A change in the machine's
state (another process, frequency, memory pressure) then falls on every case of a round alike,
and a ratio taken per round cancels it. `PairedRatio` is the median of those per-round ratios with
its p10-p90: that spread, not the spread of either timing, says whether a ratio is measurable.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
import timeit
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from .contention import Contention, combined, contention_between, read_counters

from .verdicts import judge_ratio


def p10_p90(values: Any) -> tuple[float, float]:
    """The series' p10 and p90 of `values`: order statistics, the sample at index floor(0.1 (n-1)) and
    its mirror from the top, never a value between two samples.

    Why not numpy's default (linear interpolation between samples): its p10-p90 of 1/x is not the
    reciprocal of x's, and its p10 can sit above a value that more than one round in ten lay under
    ("2 of 15 rounds under half" beside a p10 of 0.58). Mirrored order statistics keep both
    true for any monotone transform and any count: a range printed for a ratio and for its inverse
    agree, and a count of rounds agrees with the range. They are the two samples that interpolation
    would have blended toward, so a range is at most as narrow as before.

    Args:
        values: the samples (any sequence numpy takes); at least one.

    Returns:
        (p10, p90), p10 <= p90.
    """
    samples = np.asarray(values, dtype=float)
    return float(np.percentile(samples, 10, method="lower")), float(np.percentile(samples, 90, method="higher"))


class Backend(Protocol):
    """What timing needs of a backend (helpers.backend.Backend is one): a way to wait for its device."""

    def synchronize(self) -> None: ...


@dataclass
class Timing:
    label: str
    samples_us: np.ndarray
    inner: int
    contention: Contention | None = None  # CPU time the block lost to other work (analysis.contention)

    @property
    def median_us(self) -> float:
        return float(np.median(self.samples_us))

    @property
    def p10_us(self) -> float:
        return p10_p90(self.samples_us)[0]

    @property
    def p90_us(self) -> float:
        return p10_p90(self.samples_us)[1]

    @property
    def spread(self) -> float:
        """(p90 - p10) / median: 0.1 means the middle 80% of samples lie within 10% of the median."""
        return (self.p90_us - self.p10_us) / self.median_us if self.median_us else math.nan

    def record(self) -> dict[str, Any]:
        """The JSON form of the whole timing, samples included (read back by `from_record`)."""
        contention = None if self.contention is None else asdict(self.contention)
        return {"label": self.label, "samples_us": self.samples_us.tolist(), "inner": self.inner, "contention": contention}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Timing:
        contention = record.get("contention")
        return cls(
            record["label"],
            np.asarray(record["samples_us"], dtype=float),
            int(record["inner"]),
            None if contention is None else Contention(**contention),
        )


@dataclass
class PairedRatio:
    """numerator / denominator per interleaved round: its median and p10-p90 over the rounds.

    `pairing` names what a pair is, for the printed spread: a timing round here, a request where
    notebook 07 pairs two strategies request by request, a step where notebook 08 pairs ranks."""

    numerator: str
    denominator: str
    per_round: np.ndarray
    pairing: str = "round"
    contention: Contention | None = None  # the timings' blocks: a busy machine makes the ratio unmeasurable

    @property
    def busy(self) -> bool:
        """True when the machine was busy while either side was timed (analysis.contention)."""
        return bool(self.contention and self.contention.busy)

    @property
    def median(self) -> float:
        return float(np.median(self.per_round))

    @property
    def p10(self) -> float:
        return p10_p90(self.per_round)[0]

    @property
    def p90(self) -> float:
        return p10_p90(self.per_round)[1]

    @property
    def measurable(self) -> bool:
        """True when the series' one rule (analysis.verdicts) calls the ratio a difference: its
        whole per-round p10-p90 lies at least analysis.verdicts.RESOLUTION from 1.0, and the machine
        was not busy."""
        return judge_ratio(self).measurable

    @property
    def relation(self) -> str:
        """What the ratio supports, for a claim (analysis.claims): "busy", "above 1", "below 1", "about 1" or "inconclusive"."""
        return judge_ratio(self).relation

    def describe(self, faster: str = "faster", slower: str = "slower") -> str:
        """The ratio's verdict in one line (analysis.verdicts.judge_ratio)."""
        return judge_ratio(self, faster, slower).sentence


def paired_ratio(timings: dict[str, Timing], numerator: str, denominator: str) -> PairedRatio:
    """Ratio of two interleaved timings, taken round by round (same `inner` on both sides or not)."""
    a, b = timings[numerator].samples_us, timings[denominator].samples_us
    n = min(len(a), len(b))
    blocks = [t.contention for t in (timings[numerator], timings[denominator]) if t.contention is not None]
    return PairedRatio(numerator, denominator, a[:n] / b[:n], contention=combined(blocks))


def _synchronized_clock(backend: Backend) -> Callable[[], float]:
    """A clock for timeit.Timer that waits for this backend's device before reading."""

    def clock() -> float:
        backend.synchronize()
        return time.perf_counter()

    return clock


def _inner_calls(fn: Callable[[], Any], backend: Backend, min_sample_s: float, max_inner: int) -> int:
    """Calls per sample, so that a sample lasts about `min_sample_s`: sized from a batch of calls timed
    together (1, 10, 100, ... until the batch lasts a tenth of `min_sample_s`), not from one call, whose
    clock reads and synchronize would make a call of a few microseconds look several times longer."""
    batch = 1
    while True:
        backend.synchronize()
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        backend.synchronize()
        elapsed = time.perf_counter() - start
        if elapsed >= min_sample_s / 10 or batch >= max_inner:
            break
        batch = min(max_inner, batch * 10)
    per_call = max(elapsed / batch, 1e-9)
    return int(min(max_inner, max(1, math.ceil(min_sample_s / per_call))))


def time_interleaved(
    cases: dict[str, Callable[[], Any]],
    backend: Backend,
    *,
    contexts: dict[str, Callable[[], AbstractContextManager]] | None = None,
    repeats: int = 15,
    warmup: int = 3,
    min_sample_s: float = 0.002,
    max_inner: int = 1000,
    alternate: bool = False,
) -> dict[str, Timing]:
    """Time several callables one sample of each in turn, `repeats` rounds.

    `alternate` reverses the cases' order on odd rounds, so a position effect falls on each case alike (01).

    Every Timing carries the block's contention (analysis.contention): whether another process
    took CPU time from this one while the rounds ran.

    `contexts` optionally gives a case a context manager (e.g. an active profiler) entered around
    its sample, outside the timed region, so entering and leaving it is not counted.
    """
    contexts = contexts or {}
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    inner = {name: _inner_calls(fn, backend, min_sample_s, max_inner) for name, fn in cases.items()}
    clock = _synchronized_clock(backend)
    timers = {name: timeit.Timer(stmt="fn()", globals={"fn": fn}, timer=clock) for name, fn in cases.items()}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    before = read_counters()
    for round_ in range(repeats):
        for name in list(cases)[:: -1 if alternate and round_ % 2 else 1]:
            with contexts.get(name, nullcontext)():
                samples[name].append(timers[name].timeit(inner[name]) / inner[name] * 1e6)
    contention = contention_between(before, read_counters())
    return {
        name: Timing(label=name, samples_us=np.asarray(v), inner=inner[name], contention=contention)
        for name, v in samples.items()
    }


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
    return time_interleaved({label: fn}, backend, repeats=repeats, warmup=warmup, min_sample_s=min_sample_s, max_inner=max_inner)[
        label
    ]


def time_once(fn: Callable[[], Any], backend: Backend) -> tuple[float, Any]:
    """Seconds for one synchronized call, and its result (for cold calls such as a first compile)."""
    backend.synchronize()
    start = time.perf_counter()
    out = fn()
    backend.synchronize()
    return time.perf_counter() - start, out


@contextmanager
def busy_processes(count: int = 1, max_seconds: float = 60.0) -> Iterator[list[int]]:
    """`count` other processes, each spinning on a CPU: the stand-in for a browser tab, an indexer
    or a neighbour's job, so that notebook 01 and benchmarks/ratio_benchmark.py can show what a
    busy machine does to a timing. Yields their PIDs; stops them by PID on exit. Each also stops
    itself after `max_seconds`, so an interrupted kernel leaves nothing spinning for long."""
    spin = f"import time\nend = time.monotonic() + {max_seconds}\nwhile time.monotonic() < end:\n    pass\n"
    procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]
    try:
        time.sleep(0.2)  # started and spinning before anything is timed
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()
