"""lesson/reading_traces.py: notebook 06's drawn-step table, its host-only factors and their
plain sentence, and its published metrics, on recorded traces and on real cpu profiles."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from analysis.verdicts import KINDS

from analysis import contention_between, judge_timings, read_counters, load_recorded, load_trace, step_summary
from lesson.profiling import profile_steps
from lesson.reading_traces import (
    HostOnlyFactors,
    drawn_step_table,
    host_only_factors,
    largest_host_only_share,
    reading_traces_metrics,
)
from lesson.rmsnorm import rmsnorm_naive


def test_largest_host_only_share_names_only_what_the_ranges_tell_apart():
    from analysis import Timing

    def share(lo):  # five steps' host-only shares (%), p10-p90 about lo..lo+1
        return Timing("host only", np.linspace(lo, lo + 1, 5), 1)

    apart = largest_host_only_share({"naive": share(1), "torch.compile": share(9), "torch.rms_norm": share(2)}, True)
    assert (apart.subject, apart.reference) == ("torch.compile", "torch.rms_norm") and apart.verdict.kind == "slower"
    assert apart.answer == "Answer: the largest share: torch.compile"
    close = largest_host_only_share({"naive": share(2.2), "torch.rms_norm": share(2)}, True)
    assert close.answer == "Answer: the largest share: naive or torch.rms_norm, cannot tell apart, inconclusive"
    none = largest_host_only_share({"naive": share(1), "torch.compile": share(9)}, False)
    assert none.verdict.kind == "withheld" and none.answer.endswith(": withheld")
    assert none.ranges == []  # nothing counted: no share to show
    assert apart.ranges == [  # every variant, in the order given, so the Predict's three are all answered
        "naive: 1.0-2.0 % of each step host only (p10-p90)",  # five steps: p10-p90 is their min-max (analysis.timing.p10_p90)
        "torch.compile: 9.0-10.0 % of each step host only (p10-p90)",
        "torch.rms_norm: 2.0-3.0 % of each step host only (p10-p90)",
    ]
    from analysis.contention import Contention

    crowded = Timing("host only", np.linspace(2, 3, 5), 1, Contention(0.1, 0.5, 0.5, 0.0))  # waited half the block
    busy = largest_host_only_share({"naive": share(1), "torch.compile": crowded}, True)
    assert busy.ranges[1].endswith("(p10-p90) (BUSY)") and not busy.ranges[0].endswith("(BUSY)")
    wide = {"naive": Timing("host only", np.array([1, 2, 3, 4, 9.5]), 1), "torch.rms_norm": share(3), "torch.compile": share(9)}
    reach = largest_host_only_share(wide, True)  # naive's median is lower, but its range reaches higher: the reference
    assert (reach.subject, reach.reference) == ("torch.compile", "naive")


def ranges(lo, hi):
    return SimpleNamespace(p10_us=lo, p90_us=hi, median_us=(lo + hi) / 2, contention=None)


def factors(step, host):
    verdict = judge_timings("step factor", step, "host-only factor", host, "x")
    return HostOnlyFactors("torch.compile", "torch.rms_norm", step, host, None, verdict)


def test_share_line_prints_the_factors_then_which_weighs_more():
    fx = factors(ranges(2.9, 3.1), ranges(1.4, 2.0))
    assert fx.share_line == (
        "Factors: against torch.rms_norm, torch.compile's step is 2.90-3.10x shorter; its host-only time is 1.40-2.00x longer\n"
        "Its share is higher mostly because its step is shorter:"
        " smallest step factor 2.90 > largest host-only factor 2.00, past the 5% margin"  # the reason, from the printed ends
    )
    fx.verdict = judge_timings("step factor", fx.step, "host-only factor", ranges(4.0, 5.0), "x")
    fx.host_only = ranges(4.0, 5.0)
    assert fx.share_line == (  # the factor that weighs more first
        "Factors: against torch.rms_norm, torch.compile's host-only time is 4.00-5.00x longer; its step is 2.90-3.10x shorter\n"
        "Its share is higher mostly because its host-only time is longer:"
        " smallest host-only factor 4.00 > largest step factor 3.10, past the 5% margin"
    )
    fx.verdict, fx.host_only = judge_timings("step factor", fx.step, "host-only factor", ranges(2.8, 3.2), "x"), ranges(2.8, 3.2)
    assert fx.share_line.endswith("Which weighs more in the share: cannot tell (the factor ranges overlap)")  # not equal
    fx.step = ranges(0.5, 0.8)  # a longer step reads as longer, its factor inverted; one straddling 1 as "as long"
    fx.host_only = ranges(0.9, 1.2)
    assert (
        "step is 1.25-2.00x longer; its host-only time is 0.90-1.20x as long (cannot tell apart, inconclusive)" in fx.share_line
    )


def test_share_line_prints_the_margin_where_ranges_apart_stay_inconclusive():
    """A read: 3.14-3.97x against 0.57-3.06x printed "cannot tell" with the margin only in metrics.json."""
    fx = factors(ranges(3.14, 3.97), ranges(0.57, 3.06))
    assert fx.verdict.kind == "no measurable difference"
    assert fx.share_line.startswith("Factors: against torch.rms_norm, torch.compile's step is 3.14-3.97x shorter;")
    assert fx.share_line.endswith("Which weighs more in the share: cannot tell (3.14 and 3.06 lie within the 5% margin)")


def test_share_line_gives_each_factor_the_rules_word():
    """A range reaching within the 5% margin of 1 is not "shorter", and no "mostly" where a shorter host-only time
    lowers the share."""
    fx = factors(ranges(3.83, 5.11), ranges(0.44, 0.99))
    assert fx.share_line.endswith(
        "step is 3.83-5.11x shorter; its host-only time is 0.44-0.99x as long (cannot tell apart, inconclusive)\n"
        "Its share is higher mainly because its step is shorter: smallest step factor 3.83 > largest host-only factor 0.99,"
        " past the 5% margin"
    )
    fx = factors(ranges(3.83, 5.11), ranges(0.44, 0.90))  # measurably shorter: it lowers the share
    assert fx.share_line.endswith("Its share is higher because its step is shorter, despite a shorter host-only time")
    fx = factors(ranges(3.83, 5.11), ranges(0.97, 1.02))  # inside the margin: the noise is the finding
    assert (
        "0.97-1.02x as long (no measurable difference)\nIts share is higher mainly because its step is shorter" in fx.share_line
    )
    fx = factors(ranges(0.5, 0.8), ranges(4.0, 5.0))  # a longer step, outweighed by the host-only time
    assert fx.share_line.endswith("Its share is higher because its host-only time is longer, despite a longer step")
    from analysis.contention import Contention

    busy = SimpleNamespace(p10_us=2.9, p90_us=3.1, median_us=3.0, contention=Contention(0.1, 0.5, 0.5, 0.0))
    fx.verdict = judge_timings("step factor", busy, "host-only factor", ranges(1.4, 2.0), "x")
    assert fx.share_line.startswith("Factors: step factor (torch.rms_norm's step / torch.compile's) against host-only factor")
    assert fx.share_line.endswith("concludes nothing") and "explains" not in fx.share_line


@pytest.fixture(scope="module")
def cpu_traces(tmp_path_factory):
    """Two real cpu profiles: the naive RMSNorm (seven ops) and one matmul, 5 steps each."""
    from helpers.backend import select_backend

    backend, out = select_backend("cpu"), tmp_path_factory.mktemp("traces")
    x, w = torch.randn(256, 512), torch.ones(512)
    work = {"naive": lambda: rmsnorm_naive(x, w, 1e-6), "torch.compile": lambda: x @ x.T}
    traces, contention = {}, {}
    for n, f in work.items():
        before = read_counters()
        traces[n] = load_trace(profile_steps(f, backend, out, label=n, wait=0, warmup=1, active=5).trace_path)
        contention[n] = contention_between(before, read_counters())
    return traces, contention


def test_factors_and_metrics_on_real_profiles(cpu_traces):
    cpu_traces, contention = cpu_traces
    fx = host_only_factors(cpu_traces, contention, "torch.compile", "naive")
    assert (fx.subject, fx.reference) == ("torch.compile", "naive") and fx.verdict.kind in KINDS  # busy too, on a crowded machine
    assert fx.host_only.p10_us <= fx.host_only.p90_us  # one direction: the subject's host-only time over the reference's
    line = fx.share_line  # the line names itself and prints the ranges it is built from
    assert line.startswith("Factors:") and line.count("with 5 steps, p10-p90 = lowest to highest") == 1
    span = fx.spans["naive"]["step"]
    assert f"\nnaive: step {span[0]:.0f}-{span[1]:.0f} us, host-only" in line and fx.n_steps == 5
    assert fx.step.p10_us == span[0] / fx.spans["torch.compile"]["step"][1]  # the factor is built from the printed ranges
    summary = {n: step_summary(t).eval("host_only_us = step_us - busy_us - idle_total_us") for n, t in cpu_traces.items()}
    steps = {n: s["step_us"].median() for n, s in summary.items()}
    assert fx.step.p10_us <= steps["naive"] / steps["torch.compile"] <= fx.step.p90_us
    host = {n: s["host_only_us"].median() for n, s in summary.items()}
    assert fx.host_only.p10_us <= host["torch.compile"] / host["naive"] <= fx.host_only.p90_us
    split = pd.DataFrame({n: {"step_us": steps[n], "compute_ops": 7.0, "gap_us": 2.0, "host_only_us": 1.0} for n in cpu_traces}).T
    shares = {n: ranges(1.0, 2.0) for n in cpu_traces}
    largest = largest_host_only_share(shares, False)  # withheld: no share claim
    m = reading_traces_metrics(cpu_traces, split, shares, largest, fx, None)
    assert "framework" in m["lanes_present"]["value"] and m["trace_categories"]["value"]["cpu_op"] == "framework"
    assert m["naive_device_ops_per_step"]["value"] == 7.0 and m["compile_step_us"]["value"] == steps["torch.compile"]
    assert m["naive_host_only_%"]["value"] == pytest.approx(100 / steps["naive"])  # the share under its earlier name
    assert m["step_factor_p10"]["value"] == fx.step.p10_us and m["naive_idle_us"]["value"] == 2.0  # earlier runs' names
    expected = (
        []
        if fx.verdict.kind in ("busy", "withheld")
        else [
            {"slower": ["host_only_factor_p90", "step_factor_p10"], "faster": ["step_factor_p90", "host_only_factor_p10"]}.get(
                fx.verdict.kind, ["step_factor_p10", "step_factor_p90", "host_only_factor_p10", "host_only_factor_p90"]
            )
        ]
    )
    assert [c["metrics"] for c in m["claims"]["value"]] == expected


def test_largest_gap_host_calls_finds_the_sync_in_the_recorded_gap():
    from lesson.reading_traces import largest_gap_host_calls

    caption, calls = largest_gap_host_calls(load_recorded("event_sync"))
    assert "Memcpy DtoH (device to host) -> spin_kernel, 100 us from 2937 us on the figure's axis)" in caption  # the step's axis
    names = list(calls["name"])  # the host reads a device value back, waits, then launches again
    assert names.index("aten::is_nonzero") < names.index("cudaStreamSynchronize") < names.index("cudaLaunchKernel")
    assert (calls["from_gap_start_us"] < 100).all() and "ProfilerStep#100" not in names
    assert (calls["from_gap_start_us"] < 0).any() and "negative" not in caption  # the page's row notes say it
    assert "; the host traced nothing from +20 (when aten::" in caption and " ended) to +80 us;" in caption  # the next call: +80
    assert caption.endswith("; cause: launched late (glossary)")  # the next launch (+90) began after the device went idle


def test_longest_untraced_stretch_counts_nested_calls_once_and_the_gap_end():
    from lesson.reading_traces import _longest_untraced

    calls = pd.DataFrame({"from_gap_start_us": [-5.0, 0.0, 30.0], "dur_us": [20.0, 5.0, 10.0]})  # covered to +15, then +30..+40
    assert _longest_untraced(calls, 100.0) == (40.0, 100.0)  # after the last call, to the gap's end
    assert _longest_untraced(calls, 45.0) == (15.0, 30.0)
    assert _longest_untraced(calls.iloc[:0], 10.0) == (0.0, 10.0)


def test_gap_memory_line_names_each_size_and_the_separate_profile():
    from lesson.reading_traces import gap_memory_line

    line = gap_memory_line("aten::pow", "aten::sum", 0, 4096, 16777216, 4096, 2)
    assert (
        line.splitlines()[0]
        == "aten::pow -> aten::sum, read in a separate 2-step memory profile: freed 0 B (nothing); allocated 4096 B (one value per row)"
    )
    assert line.splitlines()[1] == "Sizes, not times: this does not say what filled the gap."
    assert "x's size" in gap_memory_line("a", "b", 16777216, 8, 16777216, 4096, 2)
    assert "a few bytes" in gap_memory_line("a", "b", 0, 8, 16777216, 4096, 2)
    assert "another size" in gap_memory_line("a", "b", 0, 512, 16777216, 4096, 2)
    made_by = {"freed": [("aten::rsqrt", 4096)], "allocated": []}
    line = gap_memory_line("aten::mul", "aten::mul", 4096, 0, 16777216, 4096, 2, made_by=made_by)
    assert line.splitlines()[0].endswith("freed 4096 B (one value per row, made in aten::rsqrt); allocated 0 B (nothing)")
    made_by = {"freed": [("aten::pow", 16777216), ("aten::div_", 8)], "allocated": [("code outside any op", 8)]}
    line = gap_memory_line("aten::div_", "aten::add", 16777224, 8, 16777216, 4096, 2, made_by=made_by)  # each block named
    assert line.splitlines()[0].endswith(
        "freed 16777216 B (x's size, made in aten::pow) + 8 B (a few bytes, made in aten::div_); "
        "allocated 8 B (a few bytes, made in code outside any op)"
    )


def test_gap_memory_ops_names_the_op_that_allocated_each_freed_address(tmp_path):
    """A real cpu memory profile of naive: the row-sized block freed between the two muls is
    rsqrt's result (mean's and add's are freed earlier), told apart by address, not size."""
    from helpers.backend import select_backend

    from analysis import gap_table
    from lesson.reading_traces import gap_memory_ops

    backend, x, w = select_backend("cpu"), torch.randn(256, 512), torch.ones(512)
    with torch.no_grad():
        r = profile_steps(
            lambda: rmsnorm_naive(x, w, 1e-6), backend, tmp_path, label="mem", wait=0, warmup=1, active=2, profile_memory=True
        )
    trace = load_trace(r.trace_path)
    gaps = gap_table(trace, memory_device_type=backend.memory_device_type).set_index(["after", "before"])
    made = {pair: gap_memory_ops(trace, gaps.loc[pair], backend.memory_device_type) for pair in gaps.index}
    assert made[("aten::mul", "aten::mul")] == {"freed": [("aten::rsqrt", 256 * 4)], "allocated": []}
    assert [op for op, _ in made[("aten::rsqrt", "aten::mul")]["freed"]] == ["aten::add"]


def test_eager_fusion_lines_judge_only_a_by_hand_count_that_matches_a_division():
    from lesson.reading_traces import eager_fusion_lines

    counts, held = eager_fusion_lines(63, 5, 9, 6)  # SYNTHETIC: 7 per step over all 9 steps, 12.6 over ACTIVE
    assert counts == "naive's exported /neuron_hw/ events: 63; per step: 12.6 over ACTIVE (5), 7.0 over all 9 scheduled steps"
    assert held.startswith("No fusion verdict (no by_hand count") and "fused" not in held
    assert "matches neither" in eager_fusion_lines(63, 5, 9, 6, by_hand=6)[1]
    _, one, split = eager_fusion_lines(63, 5, 9, 6, by_hand=7)
    assert one.startswith("if mean is one op: more executions") and split.startswith("if mean runs as sum + div_: op by op")
    assert all("unknown" in line for line in eager_fusion_lines(None, 5, 9, 6))


def test_host_only_lines_splits_the_factors_and_withholds_where_nothing_was_counted():
    from lesson.reading_traces import host_only_lines

    fx = SimpleNamespace(share_line="the factors\nwhich weighs more")
    assert host_only_lines(fx, counted=True) == ["the factors", "which weighs more"]
    (withheld_line,) = host_only_lines(fx, counted=False)
    assert "the factors" in str(withheld_line) and "which weighs" not in str(withheld_line)


def test_host_only_us_line_prints_the_step_beside_the_host_only_time(monkeypatch):
    """Exercise 2's comment reads a share's rise off both printed ranges: step and host-only time."""
    import analysis
    from lesson.reading_traces import host_only_us_line

    def summary(steps):  # SYNTHETIC: 5 steps, host-only = step - busy - idle
        return pd.DataFrame({"step_us": steps, "busy_us": [s - 30.0 for s in steps], "idle_total_us": [10.0] * 5})

    small = summary([60.0, 62.0, 64.0, 66.0, 70.0])
    large = summary([4900.0, 5000.0, 5100.0, 5150.0, 5200.0])
    monkeypatch.setattr(analysis, "step_summary", lambda t: t)
    assert host_only_us_line("naive", small, 8, large, 1024) == (
        "naive: host-only time 20-20 us at 8 tokens, 20-20 us at 1024 (p10-p90):"
        " no measurable difference (ranges within 5% of each other); median step 79.7x as long at 1024"
    )  # no "grows" where the ranges are not apart
    grown = summary([4900.0, 5000.0, 5100.0, 5150.0, 5200.0]).assign(busy_us=lambda t: t["step_us"] - 150.0)
    assert host_only_us_line("naive", small, 8, grown, 1024).startswith(
        "naive: host-only time 20-20 us at 8 tokens, 140-140 us at 1024 (p10-p90): higher at 1024, past the 5% margin (cause not shown);"
    )
    # a BUSY block concludes nothing, here too
    assert "(p10-p90): not judged (BUSY); median step" in host_only_us_line("naive", small, 8, grown, 1024, busy=True)


def test_drawn_step_table_shows_only_the_columns_the_page_uses():
    split = pd.DataFrame(
        {"step_us": [10.04], "compute_ops": [7.0], "busy_us": [8.0], "gaps": [6.0], "gap_us": [1.0], "host_only_us": [1.04]},
        index=["naive"],
    )
    shown = drawn_step_table(split)
    # where it prints, in the plain output reading_time.py counts: a named index, not a Styler caption
    assert isinstance(shown, pd.DataFrame) and shown.index.name.startswith("One drawn step each, not compared")
    assert list(shown.columns) == ["step_us", "compute_ops", "busy_us", "gap_us", "host_only_us"]  # no share: Predict
    assert shown.loc["naive", "compute_ops"] == 7 and shown.loc["naive", "step_us"] == 10.0


def test_drawn_steps_names_the_split_as_the_page_does(cpu_traces):
    from lesson.reading_traces import drawn_steps

    split = drawn_steps(cpu_traces[0])
    assert list(split.columns) == ["step_us", "compute_ops", "busy_us", "gaps", "gap_us", "host_only_us"]
    assert split.loc["naive", "compute_ops"] == 7 and split.loc["naive", "gaps"] >= 1
    assert (split["step_us"] - split["busy_us"] - split["gap_us"] - split["host_only_us"]).abs().max() < 1e-6


def test_labelled_gap_line_reads_the_drawn_steps_largest_gap_over_all_steps(tmp_path):
    """The figure's arrow labels one step's gap; the line gives that pair's median and p10-p90 over the recorded steps."""
    from helpers.backend import select_backend

    from analysis import gap_table
    from lesson.reading_traces import labelled_gap_line

    backend, x, w = select_backend("cpu"), torch.randn(256, 512), torch.ones(512)
    with torch.no_grad():
        r = profile_steps(lambda: rmsnorm_naive(x, w, 1e-6), backend, tmp_path, label="g", wait=0, warmup=1, active=5)
    trace = load_trace(r.trace_path)
    drawn = gap_table(trace)
    big = drawn.loc[drawn["gap_us"].idxmax()]
    line = labelled_gap_line("naive", trace)
    said = f"naive's labelled gap ({big['after']} -> {big['before']}): {big['gap_us']:.0f} us in the drawn step, median "
    assert line.startswith(said) or line.startswith(f"One-off: {said}")
    assert line.endswith(" over 5 steps") or line.endswith("Read the median as typical")


def test_labelled_gap_line_calls_a_drawn_outlier_a_one_off(monkeypatch):
    """A read: the figure labelled a 157.6 us gap that was 3-8 us in every other step."""
    import analysis
    from lesson.reading_traces import labelled_gap_line

    def gaps(us):
        return pd.DataFrame({"after": ["aten::add"], "before": ["aten::rsqrt"], "gap_us": [us]})

    per_step = {None: gaps(157.6), **{s: gaps(157.6 if s == 9 else 4.0 + s % 3) for s in range(6, 18)}}
    monkeypatch.setattr(analysis, "gap_table", lambda t, s=None: per_step[s])
    trace = SimpleNamespace(steps=pd.DataFrame({"step": range(6, 18)}))
    assert labelled_gap_line("naive", trace) == (
        "One-off: naive's labelled gap (aten::add -> aten::rsqrt): 158 us in the drawn step, median 5 us over 12 steps"
        " (most steps 4-6 us). Read the median as typical"
    )
