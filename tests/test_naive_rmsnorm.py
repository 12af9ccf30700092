"""lesson.naive_rmsnorm: notebook 02's gap-share line and published metrics, on a real cpu profile."""

import math

import pandas as pd
import pytest
import torch

from analysis.steps import per_call_summary, step_summary
from analysis.timing import time_per_call
from lesson.naive_rmsnorm import allocation_line, gap_share, idle_split, op_around
from lesson.published_metrics import naive_call_metrics
from lesson.rmsnorm import rmsnorm_naive


@pytest.fixture
def profiled(naive_cpu_profile, cpu_backend):
    return cpu_backend, naive_cpu_profile.x, naive_cpu_profile.w, naive_cpu_profile.trace


def test_gap_share_is_the_median_steps_idle_share(profiled):
    *_, trace = profiled
    steps = step_summary(trace, memory_device_type=0)
    share, line = gap_share(steps)
    expected = (steps["idle_total_us"] / (steps["busy_us"] + steps["idle_total_us"])).median()
    assert 0 < share < 1 and share == pytest.approx(expected)
    first, verdict = line.split("\n")
    assert first.startswith("gaps: ") and first.endswith(" of the ops' span in each of the 3 steps")
    assert "the ops, not the gaps between them" in verdict
    shares = steps["idle_total_us"] / (steps["busy_us"] + steps["idle_total_us"])
    if (shares < 0.5).all():  # 3 steps that all held are too few for a rule: withheld
        assert verdict.startswith("too few steps for a rule (3")
    else:  # a step whose gaps held half its length (a loaded machine: the .ci/run beside 8 readers) refutes it
        assert not verdict.startswith("too few steps") and "of 3" in verdict


def test_gap_share_prints_the_shown_steps_gaps_beside_the_median():
    steps = pd.DataFrame({"idle_total_us": [10.0, 1.0, 2.0], "busy_us": [90.0, 99.0, 98.0]}, index=[4, 5, 6])
    share, line = gap_share(steps, step=4)
    assert share == pytest.approx(0.02)  # the median stays the steps' median, not the shown step's
    assert (
        line.split("\n")[0]
        == "gaps: 1.0-10.0% of the ops' span in each of the 3 steps; the table's step: gaps total 10.0 us, 10.0% of its ops' span"
    )
    assert gap_share(steps, step=9)[1].split("\n")[0].endswith("in each of the 3 steps")  # a step not recorded: the range only


def test_gap_share_says_when_nothing_is_counted():
    uncounted = pd.DataFrame({"idle_total_us": [math.nan] * 2, "busy_us": [math.nan] * 2})
    share, line = gap_share(uncounted)
    assert math.isnan(share) and line.startswith("gaps: not counted on this backend")


def test_gap_share_verdict_holds_only_where_the_ops_held_most_of_every_step():
    mostly_ops = pd.DataFrame({"idle_total_us": [1.0] * 5, "busy_us": [99.0] * 5})
    _, line = gap_share(mostly_ops)
    assert line.split("\n")[1] == "the ops, not the gaps between them, held most of their span: in every one of the 5 steps"
    one_idle = mostly_ops.assign(idle_total_us=[1.0, 1.0, 1.0, 1.0, 300.0])
    _, line = gap_share(one_idle)
    assert line.split("\n")[1].endswith(": in 4 of 5 steps of this run, not in every one")


def test_naive_call_metrics_keeps_the_published_names(profiled):
    backend, x, w, trace = profiled
    pc = per_call_summary(trace, memory_device_type=0)
    with torch.no_grad():
        timing = time_per_call(lambda: rmsnorm_naive(x, w), backend, label="naive", repeats=3)
    share, _ = gap_share(step_summary(trace, memory_device_type=0))
    m = naive_call_metrics(pc, trace.device_op_kind, timing, x, 3.0, share, 2e-7, 1e-6, (False, "cpu: no device timeline"))
    assert set(m) == {
        "device_ops_per_call", "allocations_per_call", "allocated_bytes_per_call", "busy_us_per_call",
        "idle_gaps_per_call", "idle_us_per_call", "time_per_call_us", "time_spread", "allocated_over_input",
        "idle_share", "max_error", "error_within_tolerance", "device_time_captured",
    }  # fmt: skip
    assert m["device_ops_per_call"]["value"] == 7 and m["device_ops_per_call"]["unit"] == "ops"
    assert m["idle_us_per_call"]["value"] == pc["idle_total_us_per_call"]
    assert m["time_per_call_us"]["value"] == timing.median_us and m["time_per_call_us"]["of"] == "naive 64x512 float32"
    assert m["idle_share"]["value"] == share
    assert m["error_within_tolerance"]["value"] is True
    assert m["device_time_captured"]["value"] is False and m["device_time_captured"]["note"] == "cpu: no device timeline"
    too_far = naive_call_metrics(pc, "op", timing, x, 3.0, share, 2e-6, 1e-6, (False, ""))
    assert too_far["error_within_tolerance"]["value"] is False


def test_allocation_line_adds_up_to_the_ratio_in_float32_and_in_bfloat16(profiled, tmp_path, cpu_backend):
    # real cpu profiles of the naive call: in bfloat16, sum adds in a float32 copy of x (2x the input),
    # which the parenthesis must count so that it adds up to the printed ratio (exercise 1)
    from analysis.allocations import allocations_by_op
    from analysis.traces import load_trace
    from lesson.profiling import profile_steps

    *_, trace = profiled
    x, w = torch.randn(64, 512), torch.ones(512)
    ratio = per_call_summary(trace, memory_device_type=0)["allocated_bytes_per_call"] / (x.numel() * 4)
    line = allocation_line(allocations_by_op(trace, memory_device_type=0), x, ratio)
    assert line.endswith(f"{ratio:.2f}x the input (output + 2 x-sized intermediates)") and round(ratio, 1) == 3.0
    # float32: the divisor and eps (8 B) and their 4 B copies; per row: the outputs of mean, add and rsqrt
    assert line.startswith("10 allocations (4 scalars, 3 per-row): ")

    xb, wb = x.to(torch.bfloat16), w.to(torch.bfloat16)
    run = profile_steps(
        lambda: rmsnorm_naive(xb, wb), cpu_backend, tmp_path, label="b", wait=0, warmup=1, active=1, profile_memory=True
    )
    bf16 = load_trace(run.trace_path)
    ratio16 = per_call_summary(bf16, memory_device_type=0)["allocated_bytes_per_call"] / (xb.numel() * 2)
    line16 = allocation_line(allocations_by_op(bf16, memory_device_type=0), xb, ratio16)
    assert line16.endswith(f"{ratio16:.2f}x the input (output + 2 x-sized intermediates + 2.00x in a float32-sized full tensor)")
    made = allocation_line(allocations_by_op(bf16, memory_device_type=0), xb, ratio16, "aten::sum")
    assert made.endswith("full tensor made inside aten::sum, a size that fits sum adding in float32 (not shown here))")
    assert "fits" not in allocation_line(allocations_by_op(bf16, memory_device_type=0), xb, ratio16, "aten::mean")
    assert round(ratio16, 1) == 1 + 2 + 2.0  # the parenthesis adds up
    # the (64 x 1) bfloat16 tensors (128 B) are per-row, not scalars; sum's float32 one (256 B) too
    assert line16.startswith("12 allocations (4 scalars, 4 per-row): ")
    assert allocation_line(pd.DataFrame({"bytes": []}), x, math.nan).startswith("no allocations recorded")


def test_op_around_names_the_op_that_made_a_bfloat16_copy(tmp_path, cpu_backend):
    # a real cpu profile: bf16 mean on cpu sums in float32, so aten::sum asks for the float32 copy
    from analysis.allocations import allocations_by_op
    from analysis.traces import load_trace
    from lesson.profiling import profile_steps

    x = torch.randn(64, 256, dtype=torch.bfloat16)
    mean = lambda: x.pow(2).mean(-1, keepdim=True)  # noqa: E731
    run = profile_steps(mean, cpu_backend, tmp_path, label="m", wait=0, warmup=1, active=1, profile_memory=True)
    trace = load_trace(run.trace_path)
    allocs = allocations_by_op(trace, memory_device_type=0)
    copy = allocs[allocs["op"] == "aten::_to_copy"]
    assert len(copy) and op_around(trace.events, copy["ts"].iloc[0]) in ("aten::sum", "aten::mean")
    assert op_around(trace.events, trace.events["end"].max() + 1.0) == "?"  # after the last event


def test_idle_split_parts_sum_to_the_recorded_calls_gaps():
    # a recorded H100 call (TraceLens): its idle time between kernels, split by what held each gap up
    from analysis import NAIVE_CALL, call_kernels, call_table, load_trace, recorded_rmsnorm_path

    trace = load_trace(recorded_rmsnorm_path("h100_qwen"))
    kernels = call_kernels(trace, NAIVE_CALL)
    calls = call_table(trace, NAIVE_CALL, kernels)
    for row in (calls["late_gaps_us"].idxmax(), calls["late_gaps_us"].idxmin()):  # one call with a late gap, one without
        call = calls.loc[row]
        line = idle_split("an NVIDIA H100", kernels[kernels["call"] == call["call"]], kernels)
        queued = call["gaps_us"] - call["late_gaps_us"]
        assert line == (
            f"an NVIDIA H100, the plotted call: {call['gaps_us']:.1f} us idle: "
            f"{call['late_gaps_us']:.1f} us launched late, {queued:.1f} us queued (cause not in the trace)\n"
            f"an NVIDIA H100: 0 of {kernels['gap_before_us'].notna().sum()} kernel gaps within 0.01 us (its {len(calls)} calls): "
            "not stamped back to back"
        )
    assert calls["late_gaps_us"].max() > 0  # the first call checked has a late gap to split
    one = kernels[kernels["call"] == 5]
    assert idle_split("an NVIDIA H100", one).endswith(
        "queued (cause not in the trace)\nan NVIDIA H100: 0 of 7 kernel gaps within 0.01 us (its 1 call): not stamped back to back"
    )


def test_idle_split_does_not_read_idle_time_from_kernels_stamped_back_to_back():
    # the recorded MI300X calls (TraceLens): most kernels start where the previous one ended, to the nanosecond
    from analysis import NAIVE_CALL, call_kernels, load_trace, recorded_rmsnorm_path
    from lesson.naive_rmsnorm import STAMPED_US, stamps_back_to_back

    kernels = call_kernels(load_trace(recorded_rmsnorm_path("mi300x_qwen")), NAIVE_CALL)
    gaps = kernels["gap_before_us"].dropna()
    within = int((gaps <= STAMPED_US).sum())
    assert len(gaps) > within > 0.9 * len(gaps)  # most, not all: the trace's first calls have real gaps
    assert stamps_back_to_back(kernels)
    stamped_call, gapped_call = kernels[kernels["call"] == 20], kernels[kernels["call"] == 1]
    unread = f"an AMD MI300X: {within} of {len(gaps)} kernel gaps within 0.01 us (its 49 calls): stamped back to back, so its idle and launches are not read"  # fmt: skip
    assert idle_split("an AMD MI300X", stamped_call, kernels) == unread
    # a call of that recording whose gaps are not stamped is not read either: the stamps are the recording's
    assert gapped_call["gap_before_us"].min() > STAMPED_US
    assert idle_split("an AMD MI300X", gapped_call, kernels) == unread
    assert not stamps_back_to_back(gapped_call)  # read alone, its gaps would be split
    assert idle_split("an AMD MI300X", gapped_call).startswith("an AMD MI300X, the plotted call: ")


def test_stamps_back_to_back_takes_more_than_half_the_gaps():
    from lesson.naive_rmsnorm import stamps_back_to_back

    rows = lambda *gaps: pd.DataFrame({"gap_before_us": [float("nan"), *gaps]})  # noqa: E731
    assert stamps_back_to_back(rows(0.0, 0.001, 3.0))
    assert not stamps_back_to_back(rows(0.0, 3.0))  # half is not most
    assert not stamps_back_to_back(rows())  # no gap known: read as not stamped


def test_call_exceptions_name_the_condition_each_failed_call_failed():
    from lesson.naive_rmsnorm import call_exceptions

    calls = pd.DataFrame({"call": [0, 1, 2, 3], "launched_ahead_us": [-5.0, -1.0, 3.0, 2.0], "late_gaps_us": [9.0, 0, 0, 0]})
    assert call_exceptions(calls) == (
        ". Exceptions: the trace's first 2 (calls 0, 1), whose first kernels began "
        "before the host's last launch (by 5, 1 us). In call 0 a gap was launched late; in call 1 none was; cause not examined here"
    )
    later = calls.assign(launched_ahead_us=[3.0, 1.0, 3.0, -2.0], late_gaps_us=[0, 0, 4.0, 0])
    assert call_exceptions(later) == (
        ". Exceptions: calls 2, 3 (0 the trace's first). In call 3 the first kernels began "
        "before the host's last launch (by 2 us); in call 2 a gap was launched late; cause not examined here"
    )
    assert call_exceptions(calls.assign(launched_ahead_us=1.0, late_gaps_us=0.0)) == ""
    from lesson.naive_rmsnorm import _runs

    assert _runs([8, 0, 1, 2, 3, 7, 10]) == "0-3, 7, 8, 10"  # runs of three or more collapse


def test_call_exceptions_on_the_recorded_h100_calls_are_the_failed_ones():
    # the recorded H100 trace (TraceLens): the exceptions are the calls the notebook's count leaves out
    from analysis import NAIVE_CALL, call_table, load_trace, recorded_rmsnorm_path
    from lesson.naive_rmsnorm import call_exceptions

    calls = call_table(load_trace(recorded_rmsnorm_path("h100_qwen")), NAIVE_CALL)
    failed = calls.loc[~((calls["launched_ahead_us"] > 0) & (calls["late_gaps_us"] == 0)), "call"]
    line = call_exceptions(calls)
    assert len(failed) and line.startswith(f". Exceptions: the trace's first {len(failed)} (calls 0-{len(failed) - 1}), whose")
    assert len(failed) > 2  # so the run collapses to "0-2"


def test_recorded_call_metrics_publish_the_calls_medians_under_the_published_names():
    from analysis import NAIVE_CALL, call_table, calls_summary, load_trace, recorded_rmsnorm_path
    from lesson.naive_rmsnorm import recorded_call_metrics

    calls = call_table(load_trace(recorded_rmsnorm_path("mi300x_qwen")), NAIVE_CALL)
    m = recorded_call_metrics("mi300x", "an AMD MI300X", calls)
    found = calls_summary(calls)
    assert set(m) == {f"recorded_mi300x_{k}" for k in ("calls", "kernels_per_call", "host_ops_per_call", "median_kernel_us", "bytes_ratio", "full_size_ios")}  # fmt: skip
    assert m["recorded_mi300x_calls"]["value"] == found["calls"] == len(calls) > 0
    assert m["recorded_mi300x_median_kernel_us"]["value"] == found["median_kernel_us"] > 0
    assert m["recorded_mi300x_bytes_ratio"]["note"] == "Qwen2RMSNorm on an AMD MI300X, by TraceLens"
