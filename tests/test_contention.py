"""analysis.contention: whether a timing lost CPU time to other work, read from /proc.

Unit tests read SYNTHETIC /proc folders written here; one test makes the machine busy for real
(every CPU spinning, started and stopped by PID) and checks that a timing block sees it."""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pytest
from dataclasses import asdict

from analysis.contention import (
    BUSY_WAITED_FRACTION,
    Contention,
    CpuCounters,
    combined,
    contention_between,
    cpu_steal_seconds,
    is_busy,
    read_counters,
    recent_pressure,
)
from analysis.claims import Claim, check_claims
from analysis.timing import PairedRatio, busy_processes, time_interleaved
from analysis.verdicts import machine_line


def fake_proc(root, waits_ns: dict[int, int], pressure_us: int, avg10: float = 0.0, steal_ticks: int = 0):
    """A /proc with this process's threads' schedstat, PSI and /proc/stat, in the kernel's formats."""
    for tid, wait in waits_ns.items():
        (root / "self" / "task" / str(tid)).mkdir(parents=True, exist_ok=True)
        (root / "self" / "task" / str(tid) / "schedstat").write_text(f"123456 {wait} 42\n")
    (root / "pressure").mkdir(exist_ok=True)
    (root / "pressure" / "cpu").write_text(
        f"some avg10={avg10:.2f} avg60=0.00 avg300=0.00 total={pressure_us}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    (root / "stat").write_text(f"cpu  100 0 50 1000 0 0 0 {steal_ticks} 0 0\ncpu0 50 0 25 500 0 0 0 0 0 0\n")
    return root


def test_counters_are_read_in_the_kernels_formats(tmp_path):
    counters = read_counters(fake_proc(tmp_path, {11: 2_000_000_000, 12: 0}, pressure_us=3_000_000, steal_ticks=200))
    assert counters.thread_wait_s == {11: 2.0, 12: 0.0}
    assert counters.pressure_s == 3.0
    assert counters.steal_s == pytest.approx(200 / os.sysconf("SC_CLK_TCK"))
    assert recent_pressure(fake_proc(tmp_path, {11: 0}, 0, avg10=45.5)) == pytest.approx(0.455)


def test_a_system_without_the_counters_judges_nothing(tmp_path):
    counters = read_counters(tmp_path)  # an empty /proc: not Linux, or a container that hides it
    assert counters.thread_wait_s is None and counters.pressure_s is None and counters.steal_s is None
    contention = contention_between(counters, read_counters(tmp_path))
    assert contention.busy is None and contention.seen() == "no CPU counters on this system"
    assert recent_pressure(tmp_path) is None


def test_the_thread_that_waited_most_decides_and_new_threads_count_from_zero():
    before = CpuCounters(10.0, {1: 5.0, 2: 1.0}, 100.0, 7.0)
    after = CpuCounters(12.0, {1: 5.1, 2: 1.2, 3: 0.5}, 101.0, 7.0)  # thread 3 was born during the block
    c = contention_between(before, after)
    assert c.wall_s == pytest.approx(2.0)
    assert c.waited_fraction == pytest.approx(0.25)  # thread 3: 0.5 s of 2 s
    assert c.pressure_fraction == pytest.approx(0.5) and c.steal_fraction == 0.0
    assert c.busy is True and c.record()["busy"] is True
    quiet = contention_between(before, CpuCounters(12.0, {1: 5.0 + 2 * BUSY_WAITED_FRACTION * 0.9, 2: 1.0}, 100.0, 7.0))
    assert quiet.busy is False and "waited for a CPU 9% of the 2.0 s" in quiet.seen()


def test_a_block_shorter_than_a_tenth_of_a_second_is_named_in_ms():
    assert "of the 15 ms" in Contention(0.015, 0.04, 0.04, 0.0).seen()  # not "of the 0.0 s"
    assert "of the 141 ms" in Contention(0.141, 0.04, 0.04, 0.0).seen()  # A1 printed "0.1 s" for it
    assert "of the 1.5 s" in Contention(1.5, 0.04, 0.04, 0.0).seen()


def test_a_ratio_is_busy_when_either_side_was():
    quiet, busy = Contention(1.0, 0.01, 0.0, 0.0), Contention(1.0, 0.4, 0.7, 0.0)
    worst = combined([quiet, busy])
    assert worst.busy and worst.waited_fraction == 0.4 and worst.pressure_fraction == 0.7
    assert combined([]) is None and combined([quiet]) is quiet
    assert is_busy(busy.record()) and not is_busy(quiet.record()) and not is_busy(None)


def test_a_busy_ratio_says_not_measurable_and_claims_nothing():
    ratio = PairedRatio("torch.compile", "copy", np.array([3800.0, 3900.0, 4400.0]), contention=Contention(0.8, 0.52, 0.49, 0.01))
    assert ratio.busy and not ratio.measurable and ratio.relation == "busy"
    text = ratio.describe()
    # the short form: this process's wait decided, so other tasks' (49%) is not named (06's busy lines outgrew its reading time)
    assert text.startswith("not measurable here: the machine was busy (this process waited for a CPU 52% of the 800 ms)")
    assert "49%" not in text and "a thread of this process waited for a CPU 52%" in ratio.contention.record()["seen"]
    assert "concludes nothing" in text and "slower" not in text
    quiet = PairedRatio(
        "torch.compile", "copy", np.array([21.2, 21.5, 21.8, 22.4, 23.3]), contention=Contention(0.8, 0.01, 0.0, 0.0)
    )
    assert quiet.relation == "above 1" and "slower" in quiet.describe()


def test_claims_from_a_busy_metric_hold_only_as_busy():
    busy_entry = {"value": 0.0067, "unit": "ratio", "p10": 0.005, "p90": 0.008, "contention": {"busy": True}}
    quiet_entry = {"value": 0.41, "unit": "ratio", "p10": 0.40, "p90": 0.43, "contention": {"busy": False}}
    assert check_claims([Claim("busy", ("s",), "not measurable").record()], {"s": busy_entry}) == []
    # the wrong sentence: a comparison drawn from a contaminated measurement fails the check
    assert check_claims([Claim("below 1", ("s",), "naive is 150x faster").record()], {"s": busy_entry})
    assert check_claims([Claim("busy", ("s",), "not measurable").record()], {"s": quiet_entry})
    assert check_claims([Claim("below 1", ("s",), "naive is faster").record()], {"s": quiet_entry}) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="schedstat is Linux's")
def test_a_timing_with_every_cpu_busy_is_flagged_and_the_processes_stop():
    """Real: one spinning process per CPU, started and stopped by PID; our thread must wait for a CPU."""

    def spin():
        end = time.perf_counter() + 0.002
        while time.perf_counter() < end:
            pass

    class Host:  # the cpu backend's synchronize, without importing torch's device code
        def synchronize(self):
            pass

    with busy_processes(os.cpu_count()) as pids:
        timings = time_interleaved({"spin": spin}, Host(), repeats=60, warmup=1)
    assert timings["spin"].contention.busy is True, timings["spin"].contention.seen()
    assert machine_line(timings).startswith("BUSY: the machine was busy while timing")
    time.sleep(0.05)
    for pid in pids:  # stopped by PID on exit: nothing left spinning
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_the_series_leaves_one_cpu_free_and_an_explicit_setting_wins():
    from analysis.contention import spare_cpu_threads

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert spare_cpu_threads(torch_default=64) == max(1, cpus - 1)
    assert spare_cpu_threads(torch_default=1) == 1  # never more than PyTorch's own default
    assert spare_cpu_threads(torch_default=8, explicit="3") == 3  # OMP_NUM_THREADS as set wins
    assert spare_cpu_threads(torch_default=8, explicit="abc") == max(1, min(8, cpus - 1))


def test_other_runnable_tasks_reads_procs_running_less_the_reader(tmp_path):
    from analysis.contention import other_runnable_tasks

    (tmp_path / "stat").write_text("cpu  1 2 3 4 5 6 7 8 9 10\nprocs_running 3\nprocs_blocked 0\n")
    assert other_runnable_tasks(samples=3, interval_s=0, proc=tmp_path) == 2.0
    assert other_runnable_tasks(samples=2, interval_s=0, proc=tmp_path / "absent") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_a_spinning_process_is_seen_before_timing():
    from analysis.contention import other_runnable_tasks

    with busy_processes(1):
        assert other_runnable_tasks() >= 0.5


@pytest.mark.parametrize(
    "text, expected_ticks",
    [
        ("cpu  2611896 2545 452261 3580863 37673 0 21143 8711 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n", 8711),
        ("cpu  1 2 3 4\n", None),  # a kernel too old to report steal
        ("", None),
    ],
)
def test_cpu_steal_is_read_from_a_synthetic_proc_stat(tmp_path, text, expected_ticks):
    (tmp_path / "stat").write_text(text)
    steal = cpu_steal_seconds(tmp_path / "stat")
    assert steal == (None if expected_ticks is None else pytest.approx(expected_ticks / os.sysconf("SC_CLK_TCK")))


def test_the_worst_of_several_blocks_names_its_span_as_the_longest():
    """06's line read "waited 0% of the 78 ms" where 78 ms was the longest of three profiled blocks."""
    one, two = Contention(0.078, 0.0, None, None), Contention(0.05, 0.02, None, None)
    both = combined([one, two])
    assert (
        both.blocks == 2
        and "waited for a CPU at most 2% of the time in any of 2 timed blocks, which lasted up to 78 ms" in both.seen()
    )
    assert combined([both, one]).blocks == 3 and one.seen().endswith("of the 78 ms")
    quiet = combined([one, Contention(0.05, 0.0, 0.0, None)])  # 06 printed "waited for a CPU at most 0% of any of the 3"
    assert "waited for a CPU 0% of the time in each of 2 timed blocks" in quiet.seen() and "at most 0%" not in quiet.seen()
    # 07 times one block in a second process, measured by the machine's pressure only: kept apart, and it decides BUSY
    # too ("0% of each of the 4 timed blocks" counted a block whose wait was never measured)
    second = Contention(5.4, None, 0.02, None)
    mixed = combined([second, one, two])
    assert mixed.blocks == 2 and mixed.other_process == second and mixed.busy is False
    assert mixed.seen(short=True) == (
        "this process waited for a CPU at most 2% of the time in any of 2 timed blocks, which lasted up to 78 ms; "
        "while another process ran, some task on the machine waited 2% of that process's 5.4 s"
    )
    assert combined([Contention(5.4, None, 0.3, None), one, two]).busy is True  # the other process's busy machine counts
    assert combined([Contention(5.4, None, 0.0, None), Contention(0.078, 0.5, None, None)]).busy is True
    assert Contention(**{k: v for k, v in asdict(one).items() if k != "blocks"}) == one  # records before `blocks` read back


def test_one_interleaved_timing_is_one_block_however_many_variants_share_it():
    """04 printed "at most 0% of any of its 3 timed blocks (longest block 2.6 s)": one timing, three variants."""
    shared = Contention(2.6, 0.0, 0.0, 0.0)
    assert combined([shared, shared, shared]) is shared
    assert combined([shared, Contention(1.0, 0.1, 0.0, 0.0)]).blocks == 2


def test_a_wait_just_under_the_busy_rule_is_not_printed_at_the_rule():
    # 9.81% printed as "10%" beside "quiet" and "BUSY when ... 10% or more"
    from analysis.contention import _percent

    assert _percent(0.0981) == "9.8%" and _percent(0.0999) == "9.99%"
    assert _percent(0.10) == "10%" and _percent(0.094) == "9%" and _percent(0.0) == "0%" and _percent(0.23) == "23%"
    # "at most 5%" for a rank that waited 5.45%: a bound rounds up, and stays on its side of the rule
    assert _percent(0.0545, up=True) == "6%" and _percent(0.05, up=True) == "5%" and _percent(0.0981, up=True) == "9.9%"
    assert (
        "at most 6% of the time in any"
        in combined([Contention(0.2, 0.0545, None, None), Contention(0.1, 0.01, None, None)]).seen()
    )
