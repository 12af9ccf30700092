"""lesson.profiler_setup: notebook 01's bookkeeping on a real cpu profile and on the figures of a
recorded run (a cpu run of 01: its steps, steady state and key_averages rows)."""

import dataclasses
import json
import re

import numpy as np
import pandas as pd
import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from analysis.contention import Contention
from analysis.key_averages import key_averages_frame
from analysis.timing import PairedRatio, Timing
from analysis.verdicts import judge_ratio, judge_timings, withheld
from analysis.traces import load_trace, representative_step
from lesson.profiler_setup import (
    WatchedBlock,
    copy_shares,
    NO_TEST,
    NO_TEST_INSIDE,
    cost_takeaway,
    recorded_ops,
    first_recorded_step_us,
    first_recorded_steps,
    cutoffs_line,
    first_longest_line,
    larger_hidden_answer,
    tree_copy_share,
    readings_line,
    recorded_steps,
    warmup_answer,
    warmup_explanation,
)
from lesson.published_metrics import setup_metrics

# Recorded: run 20261206T065140Z-cpu, notebook 01 (2-core Xeon): a steady state spanning its p10-p90.
STEADY_US = [
    2950.0,
    2959.0,
    2980.0,
    2990.0,
    3000.0,
    3001.0,
    3003.0,
    3005.0,
    3010.0,
    3020.0,
    3040.0,
    3060.0,
    3077.0,
    3080.0,
    3090.0,
]


def test_watched_block_enters_the_profiler_and_measures_the_block(tmp_path):
    model, x = torch.nn.Linear(32, 32), torch.randn(8, 32)
    profiler = profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=3, repeat=1))
    block = WatchedBlock(profiler)
    assert block.contention is None  # nothing measured before the block runs
    with torch.no_grad(), block as prof:
        for _ in range(4):
            with record_function("mlp_step"):
                model(x)
            prof.step()
    assert prof is profiler  # the loop's `prof` is torch's own profiler
    assert isinstance(block.contention, Contention) and block.contention.wall_s > 0
    table = key_averages_frame(prof)
    labels = table[table["name"].isin(("mlp_step", "ProfilerStep*")) & (table["calls"] > 0)]
    extra = float((labels["self_cpu_us"] / labels["calls"]).sum())  # the step's own code, per step
    assert extra > 0  # the label and ProfilerStep* rows were recorded, with self time
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    steps = [
        e["dur"]
        for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]
        if e.get("name", "").startswith("ProfilerStep#")
    ]
    assert len(steps) == 3 and extra < max(steps)  # the extra code is part of a step, never more than one


def test_watched_block_without_a_profiler_watches_the_block_only():
    block = WatchedBlock()
    with block as entered:
        sum(range(1000))
    assert entered is block and block.contention.wall_s > 0


def test_setup_metrics_publishes_01s_names_and_claims(tmp_path):
    trace = tmp_path / "mlp.trace.json"
    trace.write_text("{}" * 100)
    warm = Timing("mlp", np.array(STEADY_US), 1)
    rounds = np.array([0.92, 0.95, 0.99, 1.0, 1.04])
    ratio = PairedRatio("lesson profiled", "lesson bare", rounds)
    costs = {"profiler_overhead_ratio": (ratio, judge_ratio(ratio)), "profiler_overhead_tiny_ratio": (ratio, judge_ratio(ratio))}
    m = setup_metrics(4593.6, warm, (False, "cpu has no device timeline"), 1.0, None, costs, trace, 5)
    assert set(m) == {
        "cold_call_us", "warm_call_us", "cold_over_warm", "device_time_captured", "issue_over_finish_ratio",
        "unsynchronized_flagged", "profiler_overhead_ratio", "profiler_overhead_tiny_ratio", "trace_bytes",
        "active_steps", "intra_op_threads", "claims",
    }  # fmt: skip
    assert m["cold_over_warm"]["value"] == 4593.6 / warm.median_us and m["trace_bytes"]["value"] == 200
    assert m["unsynchronized_flagged"]["value"] is None and m["device_time_captured"]["value"] is False
    assert [c["metrics"] for c in m["claims"]["value"]] == [["profiler_overhead_ratio"], ["profiler_overhead_tiny_ratio"]]


PAIR = "tiny call's ratio against the lesson call's: {}"


def test_cost_takeaway_states_a_ratio_only_where_measurable():
    # run 20261206T080712Z-cpu, 01's cost block: lesson rounds across 1, tiny rounds all above 1.05
    # (five rounds: the p10-p90 is their min-max, analysis.timing.p10_p90)
    lesson = PairedRatio("lesson profiled", "lesson bare", np.array([0.94, 0.97, 1.01, 1.03, 1.048]))
    tiny = PairedRatio("tiny profiled", "tiny bare", np.array([1.09, 1.15, 1.20, 1.25, 1.33]))
    verdicts = {"lesson": judge_ratio(lesson, "cheaper", "costlier"), "tiny": judge_ratio(tiny, "cheaper", "costlier")}
    line = cost_takeaway(verdicts)
    # the verdict's own decimals: a p90 of 1.048 at two decimals read 1.05, the margin's edge
    assert (
        "\nlesson call: cannot tell apart, inconclusive (p10-p90 holds 1 and reaches past the 5% margin): ratio p10-p90 0.940-1.048, median 1.010\n"
        in line
    )
    assert "tiny call: costlier, 1.20x (p10-p90 " in line and "us per call" not in line
    assert line.count("x (p10-p90") == 1  # no "N.NNx" stated for the call whose spread crosses 1
    # no two medians beside the ratio (they pointed opposite ways); the extra us per call
    # comes from the same rounds, and only where the ratio is measurable
    extra = {"lesson": np.array([-141.0, -20.0, 5.0, 9.0, 12.0]), "tiny": np.array([1.0, 2.0, 2.5, 3.0, 4.0])}
    line = cost_takeaway(verdicts, extra)
    # the two calls' ratios against each other by Exercise 2's rule, a last line
    assert line.endswith(
        "\ntiny call: costlier, 1.20x (p10-p90 1.09-1.33), +2.5 us per call\n" + PAIR.format("cannot tell apart in this run")
    )
    ops_line = cost_takeaway(verdicts, extra, {"tiny": 20})
    # "per call of those ops" read as per op; the line gives both, with the op count
    # the per-op figure states its assumption
    # the median extra over the ops, no bound (the ratio's p10-p90 spans a wider extra): 2.5 / 20
    assert "+2.5 us per call\ntiny call, median extra per recorded op: 0.12 us (20 ops; all of it taken as per op)" in ops_line
    # the lesson ratio inconclusive (or busy): its extra is not told from zero, so no prediction is tested
    untested = cost_takeaway(verdicts, {**extra, "lesson": np.array([31.2, 400.0, 900.0, 997.3])}, {"tiny": 20, "lesson": 30})
    assert untested.endswith("\n" + NO_TEST + "\n" + PAIR.format("cannot tell apart in this run"))
    assert "predicted" not in untested and "measurably more" not in untested and "prediction," not in untested
    # given the bare medians, the prediction with its inputs, from the printed per-op figure: 1 + 30 x 0.12 / 375;
    # the lesson range (0.940-1.048) not 5% apart from 1.010 by ranges_apart: this run cannot tell
    told = cost_takeaway(verdicts, {**extra, "lesson": np.array([31.2, 400.0])}, {"tiny": 20, "lesson": 30}, {"lesson": 375.0})
    assert "\nper-op prediction, lesson call: 1 + 30 ops x 0.12 us / 375 us bare = 1.010\n" + NO_TEST_INSIDE + "\n" in told
    assert "readings" not in told  # a 45x gap between two medians read as a finding
    far = cost_takeaway(verdicts, {**extra, "lesson": np.array([31.2, 400.0])}, {"tiny": 20, "lesson": 30}, {"lesson": 30.0})
    # 1.120 past the lesson range's top (1.048) by the 5% rule: the run refutes the prediction, so it says so
    assert "us bare = 1.120\nthe lesson ratio's range lies below the prediction, 5% apart\n" in far
    busy_lesson = {**verdicts, "lesson": dataclasses.replace(verdicts["lesson"], kind="busy")}
    busy_line = cost_takeaway(busy_lesson, {**extra, "lesson": np.array([400.0, 900.0])}, {"tiny": 20, "lesson": 30})
    assert NO_TEST in busy_line and "readings" not in busy_line  # a busy block's figures conclude nothing
    # only with the lesson ratio measurably above 1, its extra us (p10-p90) against its
    # ops' predicted extra, in us
    slower = PairedRatio("lesson profiled", "lesson bare", np.array([1.06, 1.08, 1.10, 1.12, 1.14]))
    measured = {**verdicts, "lesson": judge_ratio(slower, "cheaper", "costlier")}
    lesson_extra = {**extra, "lesson": np.array([2.0, 3.0, 3.5, 4.0, 4.2])}
    expected = cost_takeaway(measured, lesson_extra, {"tiny": 20, "lesson": 30})
    inconclusive = (
        "as per op)\npredicted for the lesson call at that per-op cost: 30 ops x 0.125 us\nlesson call: extra p10-p90 2.0 to 4.2 us "
        "per call against about 3.8 us predicted: cannot tell whether the per-op cost accounts for it (inconclusive)"
    )
    assert inconclusive in expected
    below = cost_takeaway(measured, {**extra, "lesson": np.array([1.0, 1.5, 2.0, 2.5, 3.0])}, {"tiny": 20, "lesson": 30})
    assert (
        "extra p10-p90 1.0 to 3.0 us per call against about 3.8 us predicted: measurably less: within that per-op bound" in below
    )
    # one run: 806.7 us against 19.4 us predicted read "cannot tell" when judged as a ratio near 1
    above = cost_takeaway(
        measured, {**extra, "lesson": np.array([400.0, 700.0, 806.7, 900.0, 1500.0])}, {"tiny": 20, "lesson": 30}
    )
    assert "extra p10-p90 400.0 to 1,500.0 us per call against about 3.8 us predicted: measurably more: the per-op cost" in above
    # printed figures judged by the same rule give the verdict: 3.9 against 3.8 would read as not apart (2.6%), the
    # unrounded 3.9474 against 3.75 lies 5.0% above, so both print with more decimals
    edge = cost_takeaway(measured, {**extra, "lesson": np.array([3.9474, 4.0, 4.1, 4.2, 4.3])}, {"tiny": 20, "lesson": 30})
    assert "extra p10-p90 3.95 to 4.30 us per call against about 3.75 us predicted: measurably more" in edge
    assert "resolves" not in above + below + expected and all(len(row.split()) <= 25 for row in above.splitlines())
    assert all(len(row.split()) <= 25 for row in expected.splitlines())
    # an inconclusive ratio prints no per-call difference in us (a reader took a range above 0 under
    # "inconclusive" as a finding, and others had too): the ratio line with its verdict is the result
    positive = cost_takeaway(verdicts, {"lesson": np.array([1.0, 2.0, 5.0, 9.0, 12.0])})
    assert " us" not in positive.split("lesson call:")[1].split("\n")[0] and "per-call difference" not in positive
    assert all(len(row.split()) <= 25 for row in ops_line.splitlines())  # no line past about 25 words
    busy = dataclasses.replace(verdicts["lesson"], kind="busy")
    assert cost_takeaway({"lesson": busy}, extra).endswith("\nlesson call: busy")  # one call: no clause against the other
    # a median below 1 is noise, not a negative cost (01 alternates the order each round)
    assert "below 1" not in cost_takeaway({"tiny": verdicts["tiny"]}) and "below 1" not in cost_takeaway({"lesson": busy})
    below = PairedRatio("lesson profiled", "lesson bare", np.array([0.80, 0.82, 0.85, 0.88, 0.90]))
    cheaper = cost_takeaway({"lesson": judge_ratio(below, "cheaper", "costlier"), "tiny": verdicts["tiny"]})
    assert cheaper.startswith("take-home, the profiler's cost, per-round profiled / bare:\nlesson call: cheaper, 0.85x")
    assert cheaper.endswith("\na median below 1 lies within the spread, not a negative cost: the order alternates each round")
    at_one = PairedRatio("lesson profiled", "lesson bare", np.array([0.92, 0.97, 0.9994, 1.03, 1.13]))  # prints "median 1.00"
    assert "below 1" not in cost_takeaway({"lesson": judge_ratio(at_one, "cheaper", "costlier")})
    # an inconclusive call states no p90 as a bound; both unresolved calls are named
    both = cost_takeaway({"lesson": verdicts["lesson"], "tiny": verdicts["lesson"]})
    assert "90%" not in both and both.count("cannot tell apart, inconclusive") == 2
    # the two calls' ratios judged against each other (tiny wholly above a cheaper lesson call)
    apart = cost_takeaway({"lesson": judge_ratio(below, "cheaper", "costlier"), "tiny": verdicts["tiny"]})
    assert PAIR.format("measurably above") in apart and "against the lesson" not in cost_takeaway({**verdicts, "lesson": busy})


def test_copy_shares_on_a_real_cpu_profile(tmp_path):
    model, x = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)), torch.randn(16, 64)
    with (
        torch.no_grad(),
        profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=3, repeat=1)) as prof,
    ):
        for _ in range(4):
            model(x)
            prof.step()
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    shares = copy_shares(load_trace(tmp_path / "t.json", "cpu").events)
    assert set(shares) == {1, 2} and len(shares[1]) == len(shares[2]) == 3  # one bias copy per Linear per recorded step
    assert all(0 < s < 100 for n in (1, 2) for s in shares[n])  # a copy inside its addmm: a share, never all of it
    trace = load_trace(tmp_path / "t.json", "cpu")  # the tree's one call is one of Linear 1's shares
    assert tree_copy_share(trace) in shares[1]
    below = judge_timings("Linear 2", Timing("a", np.full(5, 0.9), 1), "Linear 1", Timing("b", np.full(5, 2.8), 1), "%", 2)
    said = larger_hidden_answer(below, trace=trace)
    # the verdict first, then each Linear's shares as lowest-highest (a median would hide readings that split)
    assert said[0] == str(below)
    spans = [f"{shares[n].min():.2f}-{shares[n].max():.2f}" for n in (1, 2)]
    assert said[1] == f"aten::copy_'s share of aten::addmm, lowest-highest step: Linear 1 {spans[0]} %, Linear 2 {spans[1]} %"
    said = said[1:]
    placed = said[3]
    # each Linear's shares in step order, one line each (a wide range shows whose step made it)
    for n in (1, 2):
        assert re.fullmatch(
            rf"Linear {n}'s share per recorded step, readings \(%\): #\d+ \d+\.\d\d(, #\d+ \d+\.\d\d){{2}}", said[n]
        )
    # the tree's one call is one of Linear 1's readings: the line names its step
    step = representative_step(trace)
    assert placed == f"the tree above is step #{step:.0f}'s Linear 1 call: {tree_copy_share(trace):.2f} %"
    assert f"#{step:.0f} {tree_copy_share(trace):.2f}" in said[1]


def test_first_recorded_step_keeps_a_one_off_cost_only_without_warmup(cpu_backend):
    import time
    import warnings

    calls = []

    def step():  # a one-off cost on the first call only, as a fresh model's first call has
        time.sleep(0.3 if not calls else 0.001)  # 300x apart: a loaded machine cannot close the gap
        calls.append(1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's warmup=0 warning is the exercise's point: not shown
        no_warmup = first_recorded_step_us(step, cpu_backend, warmup=0)
        calls.clear()
        warmed = first_recorded_step_us(step, cpu_backend, warmup=1)
    assert no_warmup >= 300_000 > warmed >= 1_000


def test_first_recorded_steps_profiles_fresh_models_per_warmup(cpu_backend):
    """Exercise 1's loop in one call: each model is fresh and called once before its profile."""
    made = []

    def make():
        made.append(torch.nn.Linear(8, 8))
        return made[-1]

    no_warmup, warmed = first_recorded_steps(make, torch.randn(2, 8), cpu_backend, (0, 1), profiles=2)
    assert len(made) == 4 and no_warmup.label == "first step, warmup=0" and warmed.label == "first step, warmup=1"
    assert no_warmup.samples_us.size == warmed.samples_us.size == 2 and no_warmup.contention is warmed.contention


def test_recorded_steps_judges_a_real_cpu_profile_against_a_steady_state(tmp_path, cpu_backend):
    model, x = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)), torch.randn(16, 64)
    plan = schedule(wait=0, warmup=1, active=5, repeat=1)
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], schedule=plan) as prof:
        for _ in range(6):
            with record_function("mlp_step"):
                model(x)
            prof.step()
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    steady = Timing("steady state", np.linspace(0.01, 0.02, 15), 1)  # far below any real step: still no verdict
    steps = recorded_steps(key_averages_frame(prof), load_trace(tmp_path / "t.json"), steady, None, cpu_backend)
    assert len(steps.recorded.samples_us) == 5 and (steps.recorded.samples_us > 0).all()
    assert steps.sort_key == "self_cpu_time_total"  # cpu: the device is the CPU
    assert steps.device_time[0] is False and steps.lines[-1] == steps.device_time[1]
    core = [line for line in steps.lines if "reads longest" not in line]  # that line: only where #1 is the longest
    assert len(core) == 4 and re.fullmatch(r"recorded steps \(us\): #1 \d+(, #\d \d+){4}", core[1])
    # two blocks timed at different moments are readings, never a verdict word
    assert core[2].startswith("readings only (not compared): recorded steps ")
    assert not any(w in core[2] for w in ("measurably", "above", "below", "cannot tell", "higher", "lower"))
    busy = Contention(1.0, 0.5, 0.5, 0.0)  # the busy block said once, the readings withheld
    lines = recorded_steps(key_averages_frame(prof), load_trace(tmp_path / "t.json"), steady, busy, cpu_backend).lines
    lines = [line for line in lines if "reads longest" not in line]
    assert lines[0].startswith("BUSY:") and lines[2].endswith(": withheld (BUSY)") and "busy" not in lines[2]
    # on cpu an op's row holds the time inside it, a label's Self CPU host time outside its ops
    assert lines[3].endswith(
        "an op's row holds the time spent inside it (its work and its dispatch); a label's Self CPU is host time outside its ops."
    )
    # a longest first recorded step is one reading, not a sign that warm-up failed
    assert first_longest_line(pd.Series([6525.0, 5139.0, 4726.0], index=[4, 5, 6])) == [
        "#4 reads longest: one reading, not a verdict (Exercise 1 judges first steps)"
    ]
    assert first_longest_line(pd.Series([5000.0, 5139.0], index=[4, 5])) == []
    # with the schedule's warm-up given, the line says #N follows it and each step is one reading
    warmed = recorded_steps(key_averages_frame(prof), load_trace(tmp_path / "t.json"), steady, None, cpu_backend, warmup=1)
    assert warmed.lines[1].startswith("recorded steps (us; one reading each, not a verdict; #1 follows 1 warm-up step): #1 ")
    assert not any("reads longest" in line for line in warmed.lines)  # the steps line says it


def test_exercise_answers_read_right_for_every_verdict_kind(cpu_backend):
    below = judge_timings("Linear 2", Timing("a", np.full(5, 0.9), 1), "Linear 1", Timing("b", np.full(5, 2.8), 1), "%", 2)
    above = judge_timings("Linear 2", Timing("a", np.full(5, 2.8), 1), "Linear 1", Timing("b", np.full(5, 0.9), 1), "%", 2)
    close = judge_timings("Linear 2", Timing("a", np.full(5, 1.0), 1), "Linear 1", Timing("b", np.full(5, 1.01), 1), "%", 2)
    assert "0.90-0.90" in str(below)  # two decimals: a narrow range does not print as "0.9-0.9"
    # Linear 2 differs from Linear 1 in input features, a larger HIDDEN in both;
    # the answer is an expectation, not a measurement of a larger HIDDEN
    # it says what Linear 2 against Linear 1 measures, not a larger HIDDEN; in plain words
    # only what the measured shares support; no fixed/per-element cost model, no stand-in
    # Linear 2 (4x the inputs, 1/4 the outputs) is no larger HIDDEN: the answer is an expectation, its premise two-sided
    not_run = larger_hidden_answer(below)[-2:]
    assert (
        not_run[0] == "at a larger HIDDEN the share is expected to shrink (not run: one HIDDEN per run)"  # direction first
        and not_run[1].startswith("why (from the counts, not measured; counts give a direction, not a size): ")
        and "the matmul does TOKENS x in x out multiply-adds" in not_run[1]  # a count of operations, not of values
    )  # an expectation from counts, no rate such as 1/HIDDEN: a measured copy time need not grow with its count
    assert larger_hidden_answer(withheld("share", "no copy_")) == [str(withheld("share", "no copy_"))]  # no share, no answer
    assert larger_hidden_answer(below) == [str(below), *not_run] and larger_hidden_answer(close) == [str(close), *not_run]
    assert larger_hidden_answer(above)[-2:] == not_run
    # a busy block is named, its readings not printed, and the answer says withheld (BUSY)
    busy_share = judge_timings(
        "Linear 2", Timing("a", np.full(5, 0.9), 1, Contention(1.0, 0.5, 0.5, 0.0)), "Linear 1", Timing("b", np.full(5, 2.8), 1)
    )
    said = larger_hidden_answer(busy_share)
    assert said[0].startswith("the profile of 'The first table' was BUSY (") and "withheld" in said[0] and "0.90" not in said[0]
    assert said == [said[0], *not_run]
    why = "why (explained, not measured):"
    over = judge_timings("a", Timing("a", np.array([1.0, 1.0, 1.1, 1.2, 1.2]), 1), "b", Timing("b", np.full(5, 1.1), 1))
    assert over.kind == "no measurable difference" and warmup_explanation(over, cpu_backend)[0].startswith(why)
    assert "one untimed call before its profile" in warmup_explanation(over, cpu_backend)[0]  # as cell 5 says
    # on a verdict that does not show warm-up shortening the step, no "which shortens"
    assert "whether warm-up shortens the first step is not shown here;" in warmup_explanation(over, cpu_backend)[0]
    slower = next(v for v in (below, above) if v.kind == "slower")  # warmup=0 measurably longer
    faster = next(v for v in (below, above) if v.kind == "faster")
    # where it does, the warm-up's two effects are not separated by this run
    assert "also run the model: this run cannot say which shortens the first step" in warmup_explanation(slower, cpu_backend)[0]
    assert "the profiler's own start-up" in warmup_explanation(slower, cpu_backend)[0]  # what warm-up steps discard
    assert warmup_explanation(faster, cpu_backend) == warmup_explanation(over, cpu_backend)
    assert "which" not in warmup_explanation(over, cpu_backend)[0]
    # exercise 1: overlapping ranges ~12% apart at the medians read "inconclusive": still an answer and a why
    warm0 = Timing("a", np.array([3470.2, 3500.0, 3600.0, 3700.0, 3790.7]), 1)
    warm3 = Timing("b", np.array([3060.4, 3100.0, 3200.0, 3400.0, 3492.0]), 1)
    inconclusive = judge_timings("first step, warmup=0", warm0, "first step, warmup=3", warm3)
    assert inconclusive.kind == "no measurable difference" and "inconclusive" in str(inconclusive)
    assert warmup_explanation(inconclusive, cpu_backend) == warmup_explanation(over, cpu_backend)
    gap = judge_timings("w0", Timing("a", np.full(5, 5000.0), 1), "w3", Timing("b", np.full(5, 4900.0), 1))
    assert gap.kind == "no measurable difference"  # apart by 2%: no overlap, under the margin
    assert "do not overlap, but the series reads a gap under its 5% margin" in warmup_explanation(gap, cpu_backend)[0]
    busy = judge_timings("a", Timing("a", warm0.samples_us, 1, Contention(1.0, 0.5, 0.5, 0.0)), "b", warm3)
    assert warmup_explanation(busy, cpu_backend) == [
        "why: the machine was busy during the profiles, so they conclude nothing; rerun on a quiet machine"
    ]
    trn = type("B", (), {"name": "neuron"})()
    assert "a compile can still land in a profile, N20" in warmup_explanation(close, trn)[0]  # Trainium only
    assert "compile" not in warmup_explanation(close, cpu_backend)[0]
    for verdict in (close, below, above, inconclusive, busy):  # one line, whatever the verdict
        assert len(warmup_explanation(verdict, cpu_backend)) == 1


def test_queue_stand_in_shows_the_clock_a_loop_without_synchronize_misses(monkeypatch):
    import time

    import lesson.profiler_setup as setup

    monkeypatch.setattr(setup, "contention_between", lambda before, after: None)  # the busy case: below
    verdict, takeaway = setup.queue_stand_in(
        lambda: time.sleep(0.02), n_calls=5, rounds=5
    )  # 100 ms queued a round: submitting stays far below it on a loaded machine too
    # submitting returns measurably before the queued work finishes: what a loop without synchronize() times
    assert verdict.kind == "faster" and "stand-in queue (a cpu thread, not a device)" in str(verdict)
    share = float(takeaway.split("reads ")[1].split("%")[0])  # a few us of submitting against 100 ms of work
    assert takeaway.startswith("take-home (the stand-in):") and 0 < share < 20
    assert takeaway.endswith(
        "of the stand-in's work (median ratio): it does not wait for the worker thread's work (a device's queue: the same effect expected, not this share, N6)"
    )
    monkeypatch.setattr(setup, "contention_between", lambda before, after: Contention(1.0, 0.5, 0.5, 0.0))
    busy, busy_takeaway = setup.queue_stand_in(lambda: None, n_calls=2, rounds=5)
    assert busy.kind == "busy" and "none from this run (busy)" in busy_takeaway  # a busy block concludes nothing
    grads = []
    with torch.no_grad():  # the worker runs each call under the caller's grad mode
        setup.queue_stand_in(lambda: grads.append(torch.is_grad_enabled()), n_calls=1, rounds=5)
    assert grads == [False] * 5


def test_no_cell_of_01_rebinds_a_name_whose_attributes_the_publish_cell_reads():
    """A cuda/neuron-only cell set `steps = dict(...)`, and the publish cell's
    `steps.device_time` then failed on every device seat, which a cpu run cannot show."""
    import ast
    from pathlib import Path

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "01_profiler_setup.ipynb").read_text())
    cells = [ast.parse("".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "code"]
    publish = next(tree for tree in cells if "publish" in ast.unparse(tree))
    read = {n.value.id for n in ast.walk(publish) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    for name in read - {"session", "np"}:
        binders = [
            t
            for t in cells
            if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(t))
        ]
        assert len(binders) == 1, f"{name} is bound in {len(binders)} cells; the publish cell reads {name}.<attribute>"
    assert "steps" in read  # the check looks at what it should


def test_warmup_answer_says_yes_or_no_only_where_measurable():
    """Exercise 1's verdict never answered its question in words."""
    warm0 = Timing("a", np.array([3484.5, 3500.0, 3600.0, 3700.0, 3751.8]), 1)  # a recorded run's ranges
    warm3 = Timing("b", np.array([3206.9, 3220.0, 3240.0, 3260.0, 3284.5]), 1)
    above = judge_timings("first step, warmup=0", warm0, "first step, warmup=3", warm3)
    assert above.kind == "slower" and warmup_answer(above).endswith(
        "yes on this run: without a warm-up the first recorded step is measurably longer"
    )
    below = judge_timings("first step, warmup=0", warm3, "first step, warmup=3", warm0)
    assert "no on this run" in warmup_answer(below)
    same = judge_timings("first step, warmup=0", warm3, "first step, warmup=3", warm3)
    assert "this run cannot tell (inconclusive: neither 'no' nor 'yes')" in warmup_answer(same)
    busy = judge_timings("a", Timing("a", warm0.samples_us, 1, Contention(1.0, 0.5, 0.5, 0.0)), "b", warm3)
    assert busy.kind == "busy" and "yes" not in warmup_answer(busy) and "no on" not in warmup_answer(busy)


def test_documented_neuron_call_prints_only_what_neuron_notes_n9_documents():
    """Off Trainium 01 prints the Neuron set-up labelled as not run; every call in it is one N9 records."""
    import re
    from pathlib import Path

    from lesson.profiler_setup import documented_neuron_call

    notes = (Path(__file__).parents[1] / "docs" / "NEURON_NOTES.md").read_text()
    n9 = next(line for line in notes.splitlines() if line.startswith("| N9 |")).split("|")[2]
    printed = documented_neuron_call("cpu")
    assert printed.startswith("not built on cpu; what Trainium would run (AWS docs, N9; not run here):")
    documented = re.findall(r"`([^`]+)`", n9)  # NeuronConfig(...), the exporter, on_trace_ready, experimental_config, activities
    assert len(documented) == 5 and all(piece in printed for piece in documented), (documented, printed)
    # the import comes first, as lesson/neuron_profiler.py makes it: the printed call runs as copied
    imported = "from torch_neuronx.profiling import NeuronConfig, NeuronProfiler, ProfileMode"
    assert printed.splitlines()[1].strip() == imported
    assert imported in (Path(__file__).parents[1] / "lesson" / "neuron_profiler.py").read_text()


def test_queue_takeaway_gives_a_share_only_for_a_measurable_gap():
    from analysis.verdicts import Verdict
    from lesson.profiler_setup import queue_takeaway

    apart = Verdict("sent", "done", "faster", "s", form="ranges")
    line = queue_takeaway(apart, 310.0, 34_000.0)  # one number: the verdict line above gives the two clocks' ranges
    assert "reads 0.91% of the stand-in's work (median ratio): it does not wait" in line and "medians" not in line
    for kind in ("no measurable difference", "busy"):
        line = queue_takeaway(Verdict("sent", "done", kind, "s", form="ranges"), 310.0, 34_000.0)
        assert "none from this run" in line and "%" not in line.replace("5% apart", "")


def test_readings_line_prints_both_ranges_and_no_verdict():
    steady = Timing("steady state", np.array([4165.0, 4244.0, 4300.0, 4485.6]), 1, None)
    line = readings_line(Timing("recorded steps", np.array([5016.0, 4511.0, 5344.0, 4609.0, 4685.0]), 1, None), steady)
    assert line.startswith("readings only (not compared): ") and line.endswith("(p10-p90)")  # why, in markdown
    assert "us, steady state 4,1" in line and "above" not in line and "measurably" not in line


def test_recorded_ops_counts_one_call():
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    with torch.no_grad():
        ops = recorded_ops(lambda: model(torch.randn(1, 8)), [torch.profiler.ProfilerActivity.CPU])
    assert 10 < ops < 60  # two linears of about ten recorded ops each, a relu, randn


def test_cutoffs_line_names_where_a_range_must_lie():
    against = Timing("warmup=3", np.array([100.0, 100.0, 110.0, 120.0, 120.0]), 1)
    apart = judge_timings("a", Timing("a", np.array([200.0] * 5), 1), "b", against)
    assert cutoffs_line(apart, against, "a's range") == [
        "apart only if a's range lies wholly below 95.0 us or above 126.3 us (a gap of 5% of the larger end: x 0.95 below, / 0.95 above)"
    ]
    busy = judge_timings("a", Timing("a", np.array([200.0] * 5), 1, Contention(1.0, 0.5, 0.5, 0.0)), "b", against)
    assert cutoffs_line(busy, against, "a's range") == []  # a busy block concludes nothing
    assert cutoffs_line(apart, against, "r", "x", 3) == [
        "apart only if r lies wholly below 95.000 x or above 126.316 x (a gap of 5% of the larger end: x 0.95 below, / 0.95 above)"
    ]
