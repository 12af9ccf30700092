"""Was the machine busy while we timed? Measured from what Linux reports, never guessed from the times.

A timing on a CPU that another process also wants is not a property of the code being timed. On
this project's 2-core VM one spinning process (`python3 -c "while True: pass"`) made notebook 05's
small compiled call 180x slower, because each call opens an OpenMP parallel region over every
intra-op thread and waits for the one the scheduler has parked behind the other process
(docs/CHEATSHEET.md, "A busy machine"). Interleaving cannot cancel that: the stall hits the
multi-threaded calls and not the single-threaded ones.

So every timing block reads three counters before and after:
- this process's threads' run-queue wait (`/proc/self/task/*/schedstat`, second field: time a
  thread was runnable but not running): the direct measure that *this* timing lost CPU time;
- CPU pressure (`/proc/pressure/cpu`, "some" total): the share of the time at least one task on
  the machine waited for a CPU, whoever it was;
- steal (`/proc/stat`): time the hypervisor gave this VM's CPUs to other guests.
A block is *busy* when a thread of this process waited for a CPU for at least
`BUSY_WAITED_FRACTION` of the block's wall time. Pressure and steal are recorded beside it, to say
what was seen. Work done in other processes (notebook 08's ranks) is judged by the machine-wide
pressure alone (`machine_contention_between`): busy when some task waited for a CPU for at least
the same fraction. Off Linux (no such files) nothing is judged: `busy` is None, not False.

Standard library only: the notebooks' plumbing and the command-line tools both read it.
"""

from __future__ import annotations

import math
import os
import time
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A thread that waited for a CPU a tenth of the time lost that much of its timing to other work:
# on the project's 2-core VM quiet timing blocks measured at most 0.03 (Jupyter's own threads
# waking), and with one spinning process 0.3 to 0.9 (docs/CHEATSHEET.md, "A busy machine").
BUSY_WAITED_FRACTION = 0.10

PROC = Path("/proc")


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


@dataclass(frozen=True)
class CpuCounters:
    """A snapshot of the counters that say whether this process got the CPU time it wanted."""

    wall_s: float
    thread_wait_s: dict[int, float] | None  # per thread id: run-queue wait since the thread started
    pressure_s: float | None  # machine-wide "some" CPU stall since boot (PSI)
    steal_s: float | None  # steal summed over the VM's CPUs since boot


def read_counters(proc: Path = PROC) -> CpuCounters:
    """Read the counters now. Any counter this system does not report is None."""
    waits: dict[int, float] | None = {}
    task_dir = proc / "self" / "task"
    try:
        tids = [int(p.name) for p in task_dir.iterdir()]
    except OSError:
        tids, waits = [], None
    for tid in tids:
        text = _read(task_dir / str(tid) / "schedstat")
        if text is not None and len(text.split()) >= 2 and waits is not None:
            waits[tid] = int(text.split()[1]) / 1e9
    if waits == {}:
        waits = None
    some = _cpu_pressure_some(proc)
    pressure = int(some["total"]) / 1e6 if some else None
    return CpuCounters(time.perf_counter(), waits, pressure, cpu_steal_seconds(proc / "stat"))


def _cpu_pressure_some(proc: Path) -> dict[str, str] | None:
    """The fields of /proc/pressure/cpu's "some" line (avg10, avg60, avg300, total); None where the
    kernel does not report pressure."""
    for line in (_read(proc / "pressure" / "cpu") or "").splitlines():
        if line.startswith("some "):
            return dict(field.split("=") for field in line.split()[1:])
    return None


def cpu_steal_seconds(proc_stat: Path = PROC / "stat") -> float | None:
    """CPU time the hypervisor gave to other guests while this VM's vCPUs wanted to run, summed
    over vCPUs since boot (the `steal` column of /proc/stat); None where it is not reported.
    Read before and after a measurement, a rise means the host took CPU time from this VM while
    it ran (benchmarks/ratio_benchmark.py prints it per run)."""
    stat = _read(proc_stat)
    if not stat or not stat.startswith("cpu "):
        return None
    fields = stat.splitlines()[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) >= 9 else None


def spare_cpu_threads(torch_default: int, explicit: str | None = None) -> int:
    """The intra-op thread count the series times with: one CPU left for everything else.

    An op split over N intra-op threads ends only when all N have run, so with a thread on every
    CPU one other process parks a thread and stalls each parallel region for a scheduler slice:
    on this project's 2-core VM, notebook 05's small compiled call measured 65 us quiet and a
    p90 of 12 ms per call beside one spinning process; with one thread, 34 us quiet and 28 us
    beside it, the process losing no CPU time (docs/CHEATSHEET.md, "A busy machine"). So: the
    CPUs this process may use, less one, and never more than PyTorch's own default
    (`torch_default`, its physical cores). `explicit` (OMP_NUM_THREADS as set) wins."""
    if explicit and explicit.strip().isdigit() and int(explicit) >= 1:
        return int(explicit)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(torch_default, cpus - 1))


def other_runnable_tasks(samples: int = 10, interval_s: float = 0.01, proc: Path = PROC) -> float | None:
    """How many tasks besides this one were ready to run, averaged over `samples` readings of
    /proc/stat's procs_running `interval_s` apart (about 0.1 s): the check before anything is
    timed that another process is using a CPU now, whether or not it will cost this one time.
    None where the kernel does not report it."""
    counts = []
    for i in range(samples):
        for line in (_read(proc / "stat") or "").splitlines():
            if line.startswith("procs_running "):
                counts.append(int(line.split()[1]) - 1)  # the reader itself is running
        if i < samples - 1:
            time.sleep(interval_s)
    return sum(counts) / len(counts) if counts else None


def recent_pressure(proc: Path = PROC) -> float | None:
    """Share of the last 10 s in which some task on the machine waited for a CPU (PSI "some avg10"),
    0..1; None where the kernel does not report pressure. The check *before* timing: a machine
    above BUSY_WAITED_FRACTION here is already busy."""
    some = _cpu_pressure_some(proc)
    return float(some["avg10"]) / 100 if some else None


@dataclass(frozen=True)
class Contention:
    """How much CPU time a timing block lost to other work, and the verdict.

    Returns of `contention_between`. Fractions are of the block's wall time; None where the
    system does not report the counter."""

    wall_s: float
    waited_fraction: float | None  # the most any thread of this process waited for a CPU
    pressure_fraction: float | None  # some task on the machine waited for a CPU (PSI)
    steal_fraction: float | None  # the hypervisor ran other guests on this VM's CPUs
    blocks: int = 1  # how many blocks `combined` took the worst of: wall_s is then the longest one's
    # blocks another process ran (07's second process), judged by the machine-wide pressure only: kept apart
    # by `combined`, so that their pressure still decides BUSY and is not read as this process's wait
    other_process: Contention | None = None

    @property
    def busy(self) -> bool | None:
        """True when this process's timing lost CPU time to other work, or another process's block
        (`other_process`) ran on a machine busy by pressure; None where unknown."""
        if self.waited_fraction is not None:
            own = self.waited_fraction >= BUSY_WAITED_FRACTION
        elif self.pressure_fraction is not None:  # work in other processes: the machine-wide view
            own = self.pressure_fraction >= BUSY_WAITED_FRACTION
        else:
            own = None
        other = None if self.other_process is None else self.other_process.busy
        return own if other is None else other if own is None else own or other

    def seen(self, short: bool = False, whose: str = "the") -> str:
        """What was measured, in words, e.g. for "the machine was busy (...)".

        Args:
            whose: the spans' determiner ("the 4.5 s"); `other_process` is seen with "that process's", since
                its span is named nowhere else (07's reader met "of the 4.5 s" with nothing to read it against).
            short: the form the notebooks print: only this process's wait, which decides BUSY, and other
                tasks' wait only where it reaches the BUSY share of a block this process's wait did not
                flag (readers of 01 met the full form four times a notebook; 07's found "quiet" beside "some
                task waited 25%" contradictory; 06's busy lines, each naming both, outgrew its reading time).
                The full form (every counter) is what `record` stores.
        """
        parts = []
        span = (
            f"{self.wall_s:.1f} s" if self.wall_s >= 1 else f"{self.wall_s * 1e3:.0f} ms"
        )  # under a second in ms ("0.1 s" hid 141 ms)
        worst_of = (
            self.blocks > 1
        )  # the worst of several timed blocks: each fraction is the largest, the span the longest block's

        def share(fraction: float, named: bool) -> str:
            """'at most 3% of any of the 3 timed blocks' reads "at most 0%" oddly: 0% holds for each block."""
            shown = _percent(fraction)
            if not worst_of:
                return f"{shown} {'of it' if named else f'of {whose} {span}'}"
            each = "each" if shown == "0%" else "any"  # "its" read as this process's (07: one block ran in another)
            # "of the time in": 06's and 07's readers parsed "waited 0% of each of the 3 timed blocks" with difficulty
            blocks = (
                f"of {whose} time in {each}"
                if named
                else f"of {whose} time in {each} of {self.blocks} timed blocks, which lasted up to {span}"
            )
            bound = shown if shown == "0%" else f"at most {_percent(fraction, up=True)}"  # a bound never rounds down
            return f"{bound} {blocks}"  # no parentheses inside the machine line's own

        other = ""
        if self.other_process is not None:
            other = "; while another process ran, " + self.other_process.seen(whose="that process's")
        if short and self.waited_fraction is not None:
            text = f"this process waited for a CPU {share(self.waited_fraction, False)}"
            flagged = self.waited_fraction >= BUSY_WAITED_FRACTION  # its own wait decided: the others' adds nothing
            if not flagged and self.pressure_fraction is not None and self.pressure_fraction >= BUSY_WAITED_FRACTION:
                text += f"; other tasks waited {share(self.pressure_fraction, True)}, which BUSY does not count"
            return text + other
        if self.waited_fraction is not None:
            parts.append(f"a thread of this process waited for a CPU {share(self.waited_fraction, False)}")
        if self.pressure_fraction is not None:  # "of it" only where the span was named just before
            parts.append(f"some task on the machine waited {share(self.pressure_fraction, bool(parts))}")
        if self.steal_fraction and f"{self.steal_fraction:.0%}" != "0%":  # "the hypervisor took 0%" says nothing
            parts.append(f"the hypervisor took {self.steal_fraction:.0%}")
        return ("; ".join(parts) or "no CPU counters on this system") + other

    def record(self) -> dict[str, Any]:
        """The JSON form stored beside a metric (metrics.json) and read back by `from_record`."""
        return {
            "busy": self.busy,
            "wall_s": round(self.wall_s, 3),
            "waited_fraction": _rounded(self.waited_fraction),
            "pressure_fraction": _rounded(self.pressure_fraction),
            "steal_fraction": _rounded(self.steal_fraction),
            "seen": self.seen(),
        }


def _percent(fraction: float, up: bool = False) -> str:
    """A waited fraction in whole percent, or to one decimal where whole percent would put it on the other
    side of the BUSY rule: 08 printed "quiet ... at most 10%" beside "BUSY when a rank waits 10% or more" for
    a rank that waited 9.81% of the time. `up`: a bound ("at most"), rounded up, never down
    ("at most 5%" for 5.45%)."""
    for places in (0, 1, 2):
        scaled = fraction * 100 * 10**places
        value = (math.ceil(scaled - 1e-9) if up else round(scaled)) / 10**places
        if (fraction >= BUSY_WAITED_FRACTION) == (value / 100 >= BUSY_WAITED_FRACTION):
            return f"{value:.{places}f}%"
    return f"{value:.2f}%"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def contention_between(before: CpuCounters, after: CpuCounters) -> Contention:
    """The contention of the block between two snapshots (threads born inside it count from 0)."""
    wall = max(after.wall_s - before.wall_s, 1e-9)
    waited = None
    if before.thread_wait_s is not None and after.thread_wait_s is not None:
        waited = max((w - before.thread_wait_s.get(tid, 0.0) for tid, w in after.thread_wait_s.items()), default=0.0) / wall
    pressure = (after.pressure_s - before.pressure_s) / wall if None not in (before.pressure_s, after.pressure_s) else None
    steal = None
    if before.steal_s is not None and after.steal_s is not None:
        steal = (after.steal_s - before.steal_s) / wall / (os.cpu_count() or 1)
    return Contention(wall, waited, pressure, steal)


def machine_contention_between(before: CpuCounters, after: CpuCounters) -> Contention:
    """The contention of work done by *other* processes between two snapshots (e.g. torchrun's
    ranks): this process's own threads say nothing about them, so only pressure and steal count."""
    c = contention_between(before, after)
    return Contention(c.wall_s, None, c.pressure_fraction, c.steal_fraction)


def combined(contentions: list[Contention]) -> Contention | None:
    """One record for several blocks (e.g. the two timings of a ratio): the worst of each field,
    so a ratio is busy when either side's block was. The same block given twice (the variants of one
    interleaved timing share it) counts once: 04 printed "any of its 3 timed blocks" for one timing."""
    unique: list[Contention] = []  # one interleaved timing gives every variant the same record: one block, not N
    for c in contentions:
        if not any(c is u or c == u for u in unique):
            unique.append(c)
    contentions = unique
    if not contentions:
        return None
    if len(contentions) == 1:
        return contentions[0]
    # another process's block (pressure only) beside this process's: each judged by its own rule, not mixed
    # (07 printed "waited for a CPU 0% of each of the 4 timed blocks", one of them never measured that way)
    others = [c for c in contentions if c.waited_fraction is None and c.pressure_fraction is not None]
    own = [c for c in contentions if c not in others]
    if own and others:
        return dataclasses.replace(combined(own), other_process=combined(others))

    def worst(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    return Contention(
        max(c.wall_s for c in contentions),
        worst([c.waited_fraction for c in contentions]),
        worst([c.pressure_fraction for c in contentions]),
        worst([c.steal_fraction for c in contentions]),
        blocks=sum(c.blocks for c in contentions),
    )


def is_busy(record: dict[str, Any] | None) -> bool:
    """Whether a metric's stored contention record (`Contention.record`) says busy."""
    return bool(record and record.get("busy"))
