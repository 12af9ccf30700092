"""The copy floor's own check: a same-bytes triad judges whether the copy moved its bytes."""

import dataclasses
import math

import numpy as np
import pytest
import torch

from analysis.floor import check_floor, floor_probes, triad_probe
from analysis.timing import Timing


def timing(median_us: float, spread: float = 0.0) -> Timing:
    half = median_us * spread / 2
    return Timing("t", np.array([median_us - half] * 2 + [median_us] * 6 + [median_us + half] * 2), inner=1)


def test_floor_sound_when_copy_is_slower_than_the_triad_but_of_its_order():
    check = check_floor(timing(200.0), timing(100.0), bytes_moved=2_000_000, memory_bound=True)
    assert check.ok and check.copy_gb_per_s == pytest.approx(10.0) and check.copy_over_probe == pytest.approx(0.5)


def test_floor_flagged_when_copy_beats_the_triad_or_is_far_slower_or_noisy():
    too_fast = check_floor(timing(50.0), timing(100.0), 2_000_000, memory_bound=True)
    assert not too_fast.ok and "2.00x the triad" in too_fast.problems[0]
    assert not check_floor(timing(1000.0), timing(100.0), 2_000_000, memory_bound=True).ok
    noisy = check_floor(timing(100.0, spread=0.6), timing(100.0), 2_000_000, memory_bound=True)
    assert noisy.problems == ["the copy's spread is wide (0.60 > 0.25)"]


def test_floor_bandwidth_not_judged_where_overhead_bound():
    assert check_floor(timing(50.0), timing(100.0), 64, memory_bound=False).ok


def test_the_verdict_is_explained_with_the_checks_own_numbers():
    """A sound copy at half the triad's bandwidth says why that is sound: the accepted range, its ratio,
    the allocation it pays, and the spread; an overhead-bound shape says its bandwidth was not compared."""
    slow = check_floor(timing(200.0), timing(100.0), 2_000_000, memory_bound=True).explain(copy_into_over_probe=0.8)
    assert slow.startswith("sound:") and "0.25-1.5x (here 0.50x)" in slow and "reached 0.80x the triad" in slow
    assert "spread, 0.00, is within" in slow
    assert "partly because" in slow and "the rest this run does not explain" in slow  # 0.8x: allocating is only part
    assert "partly" not in check_floor(timing(200.0), timing(100.0), 2_000_000, memory_bound=True).explain(1.0)
    too_fast = check_floor(timing(50.0), timing(100.0), 2_000_000, memory_bound=True).explain()
    assert too_fast.startswith("FLAGGED:") and "(here 2.00x)" in too_fast and "memory it already had" not in too_fast
    small = check_floor(timing(50.0, spread=0.6), timing(100.0), 64, memory_bound=False).explain(0.9)
    assert small.startswith("FLAGGED:") and "not compared" in small and "0.60, is above the 0.25 allowed" in small


def test_triad_probe_moves_the_copys_bytes_without_allocating():
    x = torch.randn(30, 10)
    probe = triad_probe(x)
    out = probe()
    assert out.numel() == 200 and out.dtype == x.dtype  # 3 tensors x 200 elements = 2 x 300 elements
    assert probe().data_ptr() == out.data_ptr()  # the same output every call


def test_floor_probes_copy_into_one_tensor_allocated_beforehand():
    x = torch.randn(30, 10)
    probes = floor_probes(x)
    assert set(probes) == {"triad probe", "copy into"}
    into = probes["copy into"]()
    assert torch.equal(into, x) and probes["copy into"]().data_ptr() == into.data_ptr() != x.data_ptr()


def interleaved(**medians_us: float) -> dict:
    """SYNTHETIC timings of one interleaved block: each case's 10 rounds around its median, the same
    round-to-round wobble on every case (so per-round ratios are steady)."""
    wobble = np.array([0.98, 1.0, 1.02, 0.99, 1.01, 1.0, 0.97, 1.03, 1.0, 1.0])
    return {name: Timing(name, median * wobble, inner=1) for name, median in medians_us.items()}


def test_one_ranking_orders_by_the_ratio_to_the_copy_and_judges_every_pair():
    from analysis.floor import rank_over_floor

    timings = interleaved(copy=100.0, naive=330.0, fused=360.0, compiled=120.0, probe=60.0)
    floor = check_floor(timings["copy"], timings["probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(timings, ["naive", "fused", "compiled"], floor, "large")
    assert ranking.order == ["compiled", "naive", "fused"] and ranking.gate is None
    assert list(ranking.table().index) == ranking.order and ranking.table()["over_copy"].iloc[0] == pytest.approx(1.2)
    tiers = ranking.tiers()  # each row names the others of its group (the tie beside the rows)
    assert all(ranking.table().at[n, "not_told_apart_from"] == ", ".join(m for m in t if m != n) for t in tiers for n in t)
    kinds = {(v.subject, v.reference): v.kind for v in ranking.verdicts}
    assert kinds == {("naive", "fused"): "faster", ("naive", "compiled"): "slower", ("fused", "compiled"): "slower"}
    claims = ranking.claims(lambda n: f"{n}_over_copy", lambda a, b: f"{b}_speedup_over_{a}")
    assert claims[0].relation == "<" and claims[0].metrics == ("compiled_over_copy", "naive_over_copy", "fused_over_copy")
    assert [c.relation for c in claims[1:]] == ["below 1", "above 1", "above 1"]
    assert claims[1].metrics == ("fused_speedup_over_naive",)


def test_a_flagged_floor_withholds_the_ranking_and_claims_no_order():
    from analysis.floor import rank_over_floor

    timings = interleaved(copy=100.0, naive=330.0, probe=10.0)  # the copy at 0.1x the triad: flagged
    floor = check_floor(timings["copy"], timings["probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(timings, ["naive"], floor, "large")
    assert not floor.ok and ranking.order == [] and [v.kind for v in ranking.verdicts] == ["withheld"]
    assert "withheld, the copy floor failed its check (the copy reached 0.10x" in str(ranking)
    assert ranking.claims(lambda n: n, lambda a, b: a) == []
    # the pairs do not rest on the copy: a failed floor withholds the ranking, not them
    timings = interleaved(copy=100.0, naive=330.0, fused=200.0, probe=10.0)
    ranking = rank_over_floor(timings, ["naive", "fused"], floor, "large")
    assert [v.kind for v in ranking.verdicts] == ["withheld", "slower"]
    (claim,) = ranking.claims(lambda n: f"{n}_over_copy", lambda a, b: f"{b}_speedup_over_{a}")
    assert claim.relation == "above 1" and claim.metrics == ("fused_speedup_over_naive",)


def test_a_busy_block_ranks_nothing_and_claims_busy():
    from analysis.contention import Contention
    from analysis.floor import rank_over_floor

    timings = interleaved(copy=100.0, naive=330.0, fused=200.0, probe=60.0)
    busy = Contention(wall_s=1.0, waited_fraction=0.5, pressure_fraction=0.5, steal_fraction=None)
    timings = {n: Timing(n, t.samples_us, inner=1, contention=busy) for n, t in timings.items()}
    floor = check_floor(timings["copy"], timings["probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(timings, ["naive", "fused"], floor, "small")
    assert ranking.gate.kind == "busy" and str(ranking).startswith("not measurable here: the machine was busy")
    assert [v.kind for v in ranking.verdicts] == ["busy", "busy"]
    order, pair = ranking.claims(lambda n: f"{n}_over_copy", lambda a, b: f"{b}_speedup_over_{a}")
    assert order.relation == "busy" and order.metrics == ("fused_over_copy", "naive_over_copy")
    assert pair.relation == "busy" and pair.metrics == ("fused_speedup_over_naive",)


def test_time_with_floor_keeps_a_block_with_slow_rounds_and_a_good_floor(monkeypatch):
    """Slow rounds are not re-timed (a second large block varied again); the verdicts say they include them."""
    import analysis.floor as floor_module

    slow = interleaved(copy=100.0, **{"triad probe": 60.0})
    slow["naive"] = Timing("naive", np.array([10.0] * 8 + [25.0] * 2), inner=1)
    calls = []
    monkeypatch.setattr(floor_module, "time_interleaved", lambda cases, backend, **kw: calls.append(kw) or slow)
    timings, floor = floor_module.time_with_floor({}, None, 2_000_000, memory_bound=True)
    assert len(calls) == 1 and timings is slow and floor.ok and floor.measurements == 1


def test_time_with_floor_measures_a_failed_floor_again_and_keeps_the_last(monkeypatch):
    import analysis.floor as floor_module

    blocks = [interleaved(copy=100.0, **{"triad probe": 10.0}), interleaved(copy=100.0, **{"triad probe": 60.0})]
    calls = []
    monkeypatch.setattr(floor_module, "time_interleaved", lambda cases, backend, **kw: calls.append(kw) or blocks[len(calls) - 1])
    timings, floor = floor_module.time_with_floor({}, None, 2_000_000, memory_bound=True, repeats=5)
    assert len(calls) == 2 and calls[0] == {"repeats": 5} and floor.ok and timings is blocks[1]
    blocks[1] = blocks[0]
    calls.clear()
    _, flagged = floor_module.time_with_floor({}, None, 2_000_000, memory_bound=True)
    assert len(calls) == 2 and not flagged.ok
    assert flagged.summary.startswith("copy floor failed its check in 2 of 2 measurements (")  # 05 printed one failure
    assert (
        floor.measurements == 2
        and "measurements" not in check_floor(blocks[0]["copy"], blocks[0]["triad probe"], 2_000_000, memory_bound=True).summary
    )


def test_bytes_per_op_counts_what_each_op_of_the_naive_source_reads_and_writes():
    from analysis.floor import bytes_per_op
    from lesson.rmsnorm import rmsnorm_naive

    x = torch.empty(64, 32, device="meta")  # nothing is computed
    ops = bytes_per_op(rmsnorm_naive, x, torch.empty(32, device="meta"), 1e-6, copy_of=x)
    full = ops[ops["op"].isin(["pow", "mul"])]
    assert list(full["op"]) == ["pow", "mul", "mul"] and (full["copies"] >= 1).all()
    mean = ops[ops["op"] == "mean"].iloc[0]
    assert mean["read"] == x.nbytes and mean["written"] == 64 * 4 and mean["copies"] == pytest.approx(0.5 + 1 / 64)
    assert 3.5 <= ops["copies"].sum() <= 3.5 + 4 / 32  # 3.5 copies of full-size tensors, plus per-row ones of 1/32 each


def test_variants_no_pair_verdict_tells_apart_are_shown_as_a_tie():
    from analysis.floor import rank_over_floor

    timings = interleaved(copy=100.0, naive=330.0, fused=330.0, compiled=120.0, probe=60.0)
    floor = check_floor(timings["copy"], timings["probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(timings, ["naive", "fused", "compiled"], floor, "large")
    assert ranking.tiers() == [["compiled"], ranking.order[1:]] and len(ranking.order) == 3
    # the group carries its pair's own word: "no measurable difference" here, as the pair table says
    assert "compiled 1.20x, then naive 3.30x and fused 3.30x (no measurable difference)" in ranking.sentence_with_ties
    assert "≈" not in ranking.sentence_with_ties  # "a ≈ b" read as "about equal" where the pair was inconclusive
    timings["fused"] = Timing("fused", 330.0 * np.array([0.9, 1.1] * 5), inner=1)  # p10-p90 past 5% of 1: inconclusive
    ranking = rank_over_floor(timings, ["naive", "fused", "compiled"], floor, "large")
    assert sorted(ranking.tiers()[1]) == ["fused", "naive"]
    assert "(cannot tell apart, inconclusive)" in ranking.sentence_with_ties


def test_a_group_whose_pairs_disagree_names_both_words():
    from analysis.floor import cannot_tell_group, group_word

    assert group_word(["no measurable difference"] * 2) == "no measurable difference"
    mixed = group_word(["no measurable difference", "cannot tell apart, inconclusive"])
    assert mixed == "by pair: no measurable difference or cannot tell apart, inconclusive"
    assert group_word([mixed, "no measurable difference"]) == mixed  # a group's word folds in once
    assert cannot_tell_group(["a 1x", "b 2x", "c 3x"], mixed) == f"a 1x, b 2x and c 3x ({mixed})"
    assert cannot_tell_group(["a 1x"], mixed) == "a 1x"


def test_the_study_05_keeps_reads_back_in_its_order_with_every_sample(tmp_path):
    from types import SimpleNamespace

    from analysis.contention import Contention
    from analysis.floor import FloorCheck
    from helpers.errors import SeriesError
    from lesson.study import load_study, save_study

    folder = tmp_path / "05_compare_variants"
    (folder / "large").mkdir(parents=True)
    (folder / "large" / "naive.trace.json").write_text('{"traceEvents": []}')
    quiet = Contention(1.0, 0.0, 0.0, None)
    blocks = {
        "small": {"copy": Timing("copy", np.array([2.0, 3.0]), 100), "naive": Timing("naive", np.array([5.0, 6.0]), 50)},
        "large": {"copy": Timing("copy", np.array([40.0, 41.0]), 1, quiet)},
    }
    floors = {
        "small": FloorCheck(20.0, 21.0, 0.1, memory_bound=False, bytes_moved=64),
        "large": FloorCheck(7.0, 11.0, 0.2, ["x"]),
    }
    report = SimpleNamespace(
        row=lambda: {"variant": "naive", "cpu_us": 9.0}, profile=SimpleNamespace(trace_path=folder / "large" / "naive.trace.json")
    )
    save_study(folder, {"shapes": [["small", [8, 64]], ["large", [64, 64]]]}, blocks, floors, {("large", "naive"): report})
    study = load_study(tmp_path)
    assert list(study.blocks) == ["small", "large"] and list(study.blocks["small"]) == ["copy", "naive"]
    for shape, block in blocks.items():
        for name, t in block.items():
            back = study.blocks[shape][name]
            assert back.samples_us.tolist() == t.samples_us.tolist() and back.inner == t.inner and back.contention == t.contention
    assert study.floors == floors and not study.floors["large"].ok
    assert study.rows.loc[("large", "naive"), "cpu_us"] == 9.0
    assert study.rows.loc[("large", "naive"), "trace_file"] == "large/naive.trace.json"
    with pytest.raises(SeriesError, match='make run ARGS="--notebooks 05 A3"'):
        load_study(tmp_path / "elsewhere")
    with pytest.raises(SeriesError, match='make run ARGS="--notebooks 04 A3"'):
        load_study(tmp_path, "04_torch_compile")  # 04 keeps its own study, in its own folder
    folder_04 = tmp_path / "04_torch_compile"
    (folder_04 / "large").mkdir(parents=True)
    report_04 = SimpleNamespace(row=report.row, profile=SimpleNamespace(trace_path=folder_04 / "large" / "naive.trace.json"))
    save_study(folder_04, {"shapes": [["large", [64, 64]]]}, {"large": blocks["large"]}, {}, {("large", "naive"): report_04})
    study_04 = load_study(tmp_path, "04_torch_compile")
    assert list(study_04.blocks) == ["large"] and study_04.floors == {} and study_04.folder == folder_04


def test_05s_metrics_publish_every_metric_its_claims_cite_and_the_claims_hold():
    from types import SimpleNamespace

    from analysis.claims import check_claims
    from analysis.floor import rank_over_floor
    from lesson.study import comparison_metrics

    names = {"copy": "copy", "naive": "naive", "fused": "torch.rms_norm", "compiled": "torch.compile"}
    timings = interleaved(copy=100.0, naive=330.0, fused=360.0, compiled=120.0, probe=60.0)
    block = {names.get(k, "triad probe"): t for k, t in timings.items()}
    floor = check_floor(block["copy"], block["triad probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(block, list(names.values())[1:], floor, "large")
    per_call = {"device_ops_per_call": 1.0, "allocated_bytes_per_call": 4096.0}
    reports = {("large", n): SimpleNamespace(timing=block[n], per_call=per_call, device_us_per_call=None) for n in names.values()}
    errors = {("naive", "float32"): {"error": 1e-7, "of_tolerance": 0.1}}
    m = comparison_metrics(
        reports, {"large": block}, {"large": floor}, {"large": ranking}, errors, {"large": (64, 64)}, "float32", "cpu"
    )
    assert m["best_large_variant"]["value"] == "torch.compile" and m["large_floor_sound"]["value"] is True
    assert m["best_large_variant"]["note"] == ranking.sentence_with_ties  # the stored note keeps ties as ties
    assert m["large_naive_over_copy"]["value"] == pytest.approx(3.3) and "large_compile_speedup_over_naive" in m
    assert len(m["claims"]["value"]) == 4 and check_claims(m["claims"]["value"], m) == []


GROUP = "(cannot tell apart, inconclusive)"  # a ranking's group its pair verdicts do not order (analysis.floor)
SAME = "(no measurable difference)"  # such a group whose pair's p10-p90 lies within 5% of 1: the pair's own word


ONE_COPY = {("large", n): 1.0 for n in ("naive", "fused", "compiled")}  # each variant allocates its output only


def takeaway_case(copy: float, compiled: float, probe: float = 80.0, spread: float = 0.0):
    """SYNTHETIC 05 large-shape block: naive and fused ~3.3x the copy, compiled at `compiled`; the copy's
    spread `spread` (above 0.25 fails the floor)."""
    from analysis.floor import rank_over_floor

    block = interleaved(copy=copy, naive=330.0, fused=360.0, compiled=compiled, probe=probe)
    block["copy"] = Timing("copy", timing(copy, spread).samples_us, inner=1) if spread else block["copy"]
    block["triad probe"] = block.pop("probe")
    floor = check_floor(block["copy"], block["triad probe"], 2_000_000, memory_bound=True)
    return block, floor, rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")


def test_05s_takeaway_says_memory_bound_only_for_a_variant_at_the_copy_and_else_estimates_it():
    """Every branch of the large shape's bound: an estimate of each variant's bytes (alloc_over_input
    copies', at least one) at the copy's rate, every variant with a recorded allocation labelled, the others'
    share withheld; a failed floor (the triad's rate); a busy block (nothing)."""
    from dataclasses import replace

    from analysis.contention import Contention
    from lesson.study import newer_first, shape_takeaways

    block, floor, ranking = takeaway_case(copy=100.0, compiled=100.0)
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=ONE_COPY)
    pairs = [(v.subject, v.reference) for v in newer_first(ranking, block)]  # 03 and 04's way round
    assert pairs == [("fused", "naive"), ("compiled", "naive"), ("compiled", "fused")]
    assert lines[1:] == [  # one copy's bytes each; every variant gets a label and its share
        "  farthest: fused 3.60x",  # a line of its own
        "  memory-bound† (over half the time moving its bytes at the copy's rate, allocation included), byte share (p10-p90):"
        " compiled 1.00 (1.00-1.00)",
        "  not memory-bound: naive 0.30 (0.30-0.30), fused 0.28 (0.28-0.28)",
        "  † estimated, not measured: byte share = alloc_over_input (at least 1) × the copy's time ÷ the variant's"
        " time, per round: time at the copy's rate, allocation included. Memory-bound here means near an allocating copy's time;"
        " that copy reached 0.80x the triad; this estimate cannot show a read-only"
        " pass (mean), which allocates nothing",  # the share's formula, in the footnote
    ]
    # not recorded (neuron may record no allocation): no share, where one copy's would call naive "not memory-bound"
    unrecorded = {**ONE_COPY, ("large", "naive"): math.nan}
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=unrecorded)
    assert "  byte share of naive: withheld, alloc_over_input not recorded" in lines
    assert lines[3] == "  not memory-bound: fused 0.28 (0.28-0.28)" and lines[-1].startswith("  † estimated")
    no_notes = shape_takeaways(
        {"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=unrecorded, notes=False
    )
    # 05 explains the footnotes in markdown, the labels' definitions too: one short line each
    # the shares one a line, then each label by name, as the overhead lines
    # one worked share from the run's numbers, before the shares; naive's where recorded
    worked = "  byte share = allocated ÷ time over the copy's; fused: 1.0 ÷ 3.60 = 0.28"
    shares = [worked, "  byte share (median, p10-p90):", "    fused 0.28 (0.28-0.28)", "    compiled 1.00 (1.00-1.00)"]
    labels = ["  memory-bound† (over 0.5): compiled", "  not memory-bound: fused"]
    assert no_notes == [lines[0], lines[1], *shares, *labels, lines[4]]
    threes = {**ONE_COPY, ("large", "naive"): 3.0}
    brief = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=threes, notes=False)
    assert "  byte share = allocated ÷ time over the copy's; naive: 3.0 ÷ 3.30 = 0.91" in brief
    assert shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)[2:] == [
        "  byte share of naive, fused, compiled: withheld, alloc_over_input not recorded"
    ]
    allocs = {("large", "naive"): 3.0, ("large", "fused"): 1.0, ("large", "compiled"): 1.0}
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=allocs)
    assert lines[2].endswith("included), byte share (p10-p90): naive 0.91 (0.91-0.91), compiled 1.00 (1.00-1.00)")  # 3 x 0.30
    assert lines[3] == "  not memory-bound: fused 0.28 (0.28-0.28)"
    # the ranking's two lines, one per verdict kind, the bytes line, then the footnote (no "apart from 1" line)
    assert len(lines) == 6
    # what the pair verdicts say against the bytes allocated, not "ordered as": fused allocates one copy
    # yet is measurably slower than naive, and the 1.0 pair is told apart
    assert lines[4] == (
        "  compiled and fused (1.0 allocated each) differ; compiled and fused (1.0) are not measurably fastest, but the variants differ in more than allocations, so this is not a test of time against allocations"
    )
    allocs[("large", "fused")] = 3.0
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=allocs)
    assert (
        "  naive and fused (3.0 allocated each) differ; compiled (1.0) is measurably fastest, but the variants differ in more than allocations, so this is not a test of time against allocations"
        in lines
    )
    from analysis.floor import rank_over_floor

    tie = interleaved(copy=100.0, naive=330.0, fused=330.0, compiled=100.0, probe=80.0)  # the 3.0 pair: one time
    tie["triad probe"] = tie.pop("probe")
    tied = rank_over_floor(tie, ["naive", "fused", "compiled"], floor, "large")
    lines = shape_takeaways({"large": tied}, {"large": floor}, {"large": tie}, None, alloc_over_input=allocs)
    assert (
        "  naive and fused (3.0 allocated each) show no measurable difference; compiled (1.0) is measurably fastest, but the variants differ in more than allocations, so this is not a test of time against allocations"
        in lines
    )
    # the op counts, where each side has one, name the other difference
    ops = {("large", "naive"): 7.0, ("large", "fused"): 7.0, ("large", "compiled"): 1.0}  # as row() gives them
    lines = shape_takeaways({"large": tied}, {"large": floor}, {"large": tie}, None, alloc_over_input=allocs, ops=ops)
    assert (
        "  naive and fused (3.0 allocated, 7 ops each) show no measurable difference; compiled (1.0) is measurably fastest, but it also runs 1 op for 7, so this is not a test of time against allocations"
        in lines
    )
    # a pair whose p10-p90 holds 1 but leaves the margin is inconclusive: only then "cannot be told apart"
    loose = dict(tie, fused=Timing("fused", tie["naive"].samples_us * np.array([0.9, 1.1] * 5), inner=1))
    wide = rank_over_floor(loose, ["naive", "fused", "compiled"], floor, "large")
    lines = shape_takeaways({"large": wide}, {"large": floor}, {"large": loose}, None, alloc_over_input=allocs, ops=ops)
    assert any("naive and fused (3.0 allocated, 7 ops each) cannot be told apart (inconclusive);" in x for x in lines)
    allocs[("large", "fused")] = 1.0
    allocs[("large", "naive")] = 3.3  # naive's time is 3.3 copies' time: the rule cannot tell its share apart from 1
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=allocs)
    assert lines[2].endswith("byte share (p10-p90): naive 1.00 (1.00-1.00), compiled 1.00 (1.00-1.00)")
    assert not any("apart from 1" in line for line in lines)  # the shares' p10-p90 above say it

    block, floor, ranking = takeaway_case(copy=100.0, compiled=110.0)
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=ONE_COPY)
    assert lines[:2] == [
        "large: closest to the copy: compiled, 1.10x the copy's time (p10-p90 1.10-1.10)",
        "  farthest: fused 3.60x",
    ]
    block, floor, ranking = takeaway_case(copy=100.0, compiled=335.0)  # compiled / naive = 1.015: a tie, then fused
    first, far = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)[:2]
    assert (
        first.startswith(f"large: closest to the copy: naive and compiled {SAME}; naive at 3.30x")
        and far == "  farthest: fused 3.60x"
    )
    from analysis.floor import rank_over_floor

    tie = interleaved(copy=100.0, naive=330.0, fused=335.0, compiled=110.0, probe=80.0)  # naive ≈ fused, 1.5% apart
    tie["triad probe"] = tie.pop("probe")
    tie_floor = check_floor(tie["copy"], tie["triad probe"], 2_000_000, memory_bound=True)
    tie_ranking = rank_over_floor(tie, ["naive", "fused", "compiled"], tie_floor, "large")
    far = shape_takeaways({"large": tie_ranking}, {"large": tie_floor}, {"large": tie}, None)[1]
    assert far == f"  farthest: fused 3.35x and naive 3.30x {SAME}"  # a tie at the far end is named, not dropped
    assert (
        "withheld" not in "".join(lines)
        and "  memory-bound† (over half the time moving its bytes at the copy's rate, allocation included), byte share"
        " (p10-p90): compiled 0.91 (0.91-0.91)"
        == lines[2]
    )

    block, floor, ranking = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=ONE_COPY)
    assert not floor.ok and lines[0].startswith("large: the ranking against the copy is withheld (above); ")
    assert "another run" not in lines[0] and "withheld, the copy floor failed" not in "".join(lines)  # said once
    assert lines[0].endswith(  # the pairs table above is not repeated
        "this shape's result is the pairs above (timed in the same rounds; no copy needed)"
    )
    assert lines[1] == (
        "  memory-bound† (over half the time moving its bytes at the triad's rate), byte share (p10-p90): compiled 0.73 (0.73-0.73)"
    )
    assert "× the triad's time ÷ the variant's time" in lines[-1]  # the formula, the triad's
    assert (
        "at the triad's rate (spread 0.06; used because the copy failed its check)" in lines[-1]
    )  # the basis shown: min-max of 10

    busy = Contention(1.0, 0.5, None, None)
    block = {n: replace(t, contention=busy) for n, t in takeaway_case(copy=100.0, compiled=110.0)[0].items()}
    floor = check_floor(block["copy"], block["triad probe"], 2_000_000, memory_bound=True)
    from analysis.floor import rank_over_floor

    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)
    assert ranking.gate.kind == "busy" and len(lines) == 1 and "memory-bound" not in "".join(lines)

    block = {n: replace(t, contention=busy) for n, t in takeaway_case(copy=100.0, compiled=110.0, spread=0.6)[0].items()}
    floor = check_floor(block["copy"], block["triad probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)
    assert lines[1].startswith("  not measurable here: the machine was busy") and len(lines) == 2  # whatever gated the ranking
    assert (
        lines[0].endswith("rerun the timing cell when the machine is quiet") and "pairs" not in lines[0]
    )  # busy pairs: no words


def test_05s_predict_first_answer_names_the_fastest_at_each_shape_ranked_withheld_tied_and_busy():
    """The "Predict first" line names the fastest variant per shape: a ranked shape's closest group, a
    withheld shape's variant faster than every other by the pairs; a tie or a busy shape is no win, and an
    inconclusive or busy shape is never read as a loss."""
    from dataclasses import replace

    from analysis.contention import Contention
    from analysis.floor import rank_over_floor
    from lesson.study import predict_answer

    _, _, won = takeaway_case(copy=100.0, compiled=110.0)  # compiled 1.1x, naive 3.3x, fused 3.6x
    assert predict_answer({"large": won, "again": won}, "compiled") == (
        "Predict first, fastest at each shape: large: compiled (by the ranking); large: compiled (by the ranking):"
        " compiled is fastest at every shape"
    )
    _, _, lost = takeaway_case(copy=100.0, compiled=1000.0)  # compiled 10x: naive fastest
    line = predict_answer({"small": lost, "large": won}, "compiled")
    assert line == (
        "Predict first, fastest at each shape: large: naive (by the ranking); large: compiled (by the ranking):"
        " compiled is not fastest at every shape"
    )
    assert predict_answer({"small": lost}, "compiled").endswith("compiled is fastest at none")
    block, floor, _ = takeaway_case(copy=100.0, compiled=330.0)  # compiled and naive the same: a tie
    tied = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    assert predict_answer({"large": tied}, "compiled").endswith(
        f"large: naive and compiled {SAME} (by the ranking): compiled is fastest at none"
    )
    block, _, failed = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)  # withheld; compiled 0.33x naive's time
    assert predict_answer({"large": failed}, "compiled") == (
        "Predict first, fastest at each shape: large: this run cannot say (the copy failed its check):"
        " this run cannot say whether compiled is fastest at every shape"
    )  # no blocks: no pairs
    line = predict_answer({"small": lost, "large": failed}, "compiled", {"large": block})  # the pairs need no copy
    assert line.endswith("large: compiled (by the pairs; its ratio to the copy withheld): compiled is not fastest at every shape")
    assert predict_answer({"large": won, "again": failed}, "compiled", {"again": block}).endswith("fastest at every shape")
    block, _, failed = takeaway_case(copy=100.0, compiled=1000.0, spread=0.6)  # withheld; compiled slower than both
    line = predict_answer({"large": failed}, "compiled", {"large": block})
    assert line.endswith("large: naive (by the pairs; its ratio to the copy withheld): compiled is fastest at none")
    busy = {n: replace(t, contention=Contention(1.0, 0.5, None, None)) for n, t in block.items()}
    gated = rank_over_floor(busy, ["naive", "fused", "compiled"], floor, "large")
    assert predict_answer({"small": lost, "large": gated}, "compiled", {"large": busy}).endswith(
        "large: this run cannot say (busy): compiled is not fastest at every shape"
    )  # a loss at one shape stands; the busy one is not counted as a loss
    assert predict_answer({"large": gated}, "compiled", {"large": busy}).endswith(
        "this run cannot say whether compiled is fastest at every shape"
    )


def test_05s_takeaway_estimates_the_small_shapes_fixed_part_without_the_copy():
    """The small shape's bound comes from the fixed + per-token fit, so a failed small floor still gets an
    estimate; a busy fit block concludes nothing; no fit timed says so."""
    from dataclasses import replace

    from analysis.contention import Contention
    from lesson.study import shape_takeaways

    block, _, _ = takeaway_case(copy=2.0, compiled=20.0, probe=2.0, spread=0.6)
    block = {k: replace(t, samples_us=t.samples_us / 100) if k in ("naive", "fused") else t for k, t in block.items()}
    small = check_floor(block["copy"], block["triad probe"], 64, memory_bound=False)
    from analysis.floor import rank_over_floor

    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], small, "small")
    # fixed 18 us + 0.25 us per token-unit for compiled; naive and fused mostly per-token
    by_tokens = interleaved(naive=3.3, fused=3.6, compiled=20.0, **{"naive x8": 24.0, "fused x8": 27.0, "compiled x8": 34.0})
    lines = shape_takeaways({"small": ranking}, {"small": small}, {"small": block}, by_tokens)
    assert not small.ok and "is withheld (above)" in lines[0] and "the pairs above (timed in the same rounds" in lines[0]
    assert lines[1] == (
        "  measured: 8x the tokens took naive 7.27x (7.27-7.27), fused 7.50x (7.50-7.50), compiled 1.70x (1.70-1.70)"
        " the time (per-round median, p10-p90)"
    )
    # the label from the measured ratio against half of 8x by the ratio rule, no fixed share read at 0 tokens
    assert lines[2] == "  overhead-bound* (under 4x): compiled"
    assert lines[3] == "  not shown overhead-bound (4x or more): naive, fused"  # the growth bounds the fixed part from below only
    assert (
        lines[4].startswith("  * overhead-bound: 8x the tokens took measurably under 4x the time") and "0 tokens" not in lines[4]
    )
    assert not any("fixed share" in line for line in lines)
    # a ratio whose p10-p90 reaches 4x: "cannot tell", no label
    near = interleaved(naive=3.3, fused=3.6, compiled=10.0, **{"naive x8": 24.0, "fused x8": 27.0, "compiled x8": 39.0})
    near = {
        n: replace(t, samples_us=t.samples_us * np.linspace(0.97, 1.03, t.samples_us.size)) if n == "compiled x8" else t
        for n, t in near.items()
    }
    told = shape_takeaways({"small": ranking}, {"small": small}, {"small": block}, near, notes=False)
    assert "  cannot tell (the p10-p90 reaches 4x): compiled" in told and not any(line.startswith("  *") for line in told)
    assert not any(line.startswith("  overhead-bound") for line in told)

    busy = {n: replace(t, contention=Contention(1.0, 0.5, None, None)) for n, t in by_tokens.items()}
    lines = shape_takeaways({"small": ranking}, {"small": small}, {"small": block}, busy)
    assert len(lines) == 2 and "BUSY" in lines[1].upper() and "overhead-bound" not in lines[1]
    lines = shape_takeaways({"small": ranking}, {"small": small}, {"small": block}, None)
    assert lines[1] == "  overhead-bound: withheld, the fixed + per-token fit was not timed"


def test_05s_figure_marks_tied_bars_and_draws_nothing_for_a_gated_shape(tmp_path):
    """A bar the ranking joins with its neighbour (pair not measurable) carries "≈"; a withheld shape
    has no bar label and says why in its legend; the figure is saved."""
    import dataclasses

    import matplotlib

    matplotlib.use("Agg")
    from lesson.study import plot_over_copy

    _, _, tied = takeaway_case(copy=100.0, compiled=335.0)  # compiled / naive = 1.015: within 5% of 1
    _, _, gated = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)
    assert tied.tiers() == [["naive", "compiled"], ["fused"]] and gated.gate.kind == "withheld"
    rankings = {"large": tied, "small": dataclasses.replace(gated, label="small")}
    ax = plot_over_copy(rankings, ["naive", "fused", "compiled"], "SYNTHETIC [measured on cpu]", tmp_path / "f.png")
    assert [t.get_text() for t in ax.texts] == ["3.30x ≈", "3.60x", "3.35x ≈", "small: copy floor failed: its pairs, right"]
    # a failed copy withholds the ratios to the copy, not the pairs: they are drawn beside it, newer over earlier
    pairs = ax.figure.axes[1]
    assert pairs.get_title() == "small, this run: its pairs (the ratio to the copy withheld)"
    assert "grey: within 5% of 1" in pairs.get_xlabel()  # its own band, around a pair ratio of 1
    assert {1.0, 0.5, 2.0} <= set(pairs.get_xticks()) and not len(pairs.xaxis.get_minorticklocs())
    assert len(pairs.texts) == len(rankings["small"].pairs) and all(
        v.reference in t.get_text() for v, t in zip(rankings["small"].pairs, pairs.get_yticklabels())
    )
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "copy floor",
        "within 5% of the copy (a whisker into it:\ncannot tell apart; wholly inside: no measurable difference)",
        "≈ marks naive and compiled (large shape):\nno measurable difference (the pair table)",  # the pair's own word
        "large",
    ]  # no swatch for a shape not drawn
    ax = plot_over_copy({"small": rankings["small"]}, ["naive"], "SYNTHETIC [measured on cpu]", tmp_path / "g.png")
    assert [t.get_text() for t in ax.texts] == ["small: copy floor failed: its pairs, right"] and not ax.containers
    busy = dataclasses.replace(rankings["small"], gate=dataclasses.replace(rankings["small"].gate, kind="busy"))
    ax = plot_over_copy({"small": busy}, ["naive"], "SYNTHETIC [measured on cpu]", tmp_path / "h.png")
    assert [t.get_text() for t in ax.texts] == ["small: busy, not drawn"] and len(ax.figure.axes) == 1  # busy pairs: nothing
    assert (tmp_path / "f.png").stat().st_size > 0


def test_floor_summary_says_what_was_compared_and_the_verdict():
    block, floor, _ = takeaway_case(copy=100.0, compiled=110.0)
    assert (
        floor.summary.startswith("copy floor passed its check (")
        and "x the triad's bandwidth, 0.25-1.5x accepted; spread 0.0" in floor.summary
    )
    near = dataclasses.replace(floor, copy_spread=0.2493)
    assert "spread 0.249, at most 0.25 allowed" in near.summary  # not "0.25, at most 0.25"
    small = check_floor(block["copy"], block["triad probe"], 64, memory_bound=False)
    assert (
        small.summary.startswith("copy floor passed its spread check (spread")
        and small.summary.endswith(
            "allowed; no bandwidth check: the bytes are expected to stay in the caches (not measured here), A3)"
        )
        and "triad" not in small.summary
    )  # no bandwidth at the small shape
    _, failed, _ = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)
    assert failed.summary.startswith("copy floor failed its check (the copy's spread is wide")


def test_05s_bound_label_holds_back_a_share_whose_per_round_spread_holds_half():
    """A share printed with its p10-p90; one whose p10-p90 holds 0.5 is not called memory-bound."""
    from lesson.study import shape_takeaways

    block, floor, ranking = takeaway_case(copy=100.0, compiled=110.0)
    block["naive"] = Timing(
        "naive", block["copy"].samples_us * np.array([1.5, 2.6, 1.6, 2.4, 1.7, 2.5, 1.5, 2.6, 2.0, 2.1]), inner=1
    )
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=ONE_COPY)
    assert lines[2].startswith(
        "  memory-bound† (over half the time moving its bytes at the copy's rate, allocation included), byte share (p10-p90):"
        " compiled 0.91 (0.91-0.91)"
    )
    assert "  cannot tell apart from 0.5 (p10-p90 holds 0.5 or reaches within 5% of it): naive 0.49 (0.38-0.67)" in lines
    assert sum("naive" in line for line in lines) == 1  # not listed as bound, nor as not bound


def test_05s_takeaway_says_the_closest_variants_verdict_against_the_copy_where_it_is_not_measurable():
    """Beside a ratio to the copy whose p10-p90 the rule does not clear, the closest line names the verdict: inside
    the margin "no measurable difference", wider "cannot tell apart, inconclusive" (05's "not told apart from it"
    read as "equal to the copy"); a measurable one adds nothing."""
    from analysis.floor import rank_over_floor
    from lesson.study import shape_takeaways

    block, floor, ranking = takeaway_case(copy=100.0, compiled=100.0)
    first = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)[0]
    assert first.endswith("1.00x the copy's time (p10-p90 1.00-1.00: no measurable difference)")
    rounds = np.array([0.95, 1.15, 0.97, 1.12, 1.0, 1.1, 0.96, 1.14, 1.05, 1.05])  # SYNTHETIC: crosses 1, wider than the margin
    block["compiled"] = Timing("compiled", block["copy"].samples_us * rounds, inner=1)
    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    first = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)[0]
    assert first.startswith("large: closest to the copy: compiled, 1.05x the copy's time (p10-p90 ")
    assert first.endswith(": cannot tell apart from the copy, inconclusive)")  # its target named
    block, floor, ranking = takeaway_case(copy=100.0, compiled=110.0)  # 1.10x: measurably slower than the copy
    assert shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)[0].endswith("(p10-p90 1.10-1.10)")


def test_05s_bound_is_withheld_where_the_triad_stand_in_fails_the_copys_spread_check():
    """The triad replaces a failed copy only if it passes the copy's own spread check; then
    the pairs' time ratios stand beside their allocation ratios, as consistent with memory-bound or not."""
    from analysis.floor import rank_over_floor
    from lesson.study import shape_takeaways

    block, floor, ranking = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)
    block["triad probe"] = timing(80.0, spread=0.4)
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None)
    assert not floor.ok and len(lines) == 2
    assert lines[1] == (
        "  bound not estimated: the byte shares (the time to move each call's bytes at a steady rate, over its time) need a steady copy or triad rate, and both spreads are wide (copy 0.60, triad 0.40 > 0.25)"
    )  # no allocations recorded: no bytes to set beside the pairs

    allocs = {("large", "naive"): 3.0, ("large", "fused"): 3.0, ("large", "compiled"): 1.0}
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=allocs)
    assert lines[2] == (  # compiled / fused: 0.31x the time, 0.33x the bytes, 8% apart: not consistent
        "  time against bytes allocated, by the pairs: compiled / naive 0.33x the time (p10-p90 0.33-0.33), 0.33x the bytes;"
        " compiled / fused 0.31x the time (p10-p90 0.31-0.31), 0.33x the bytes: time does not follow the bytes in every pair: the pairs"
        " cannot say whether it is memory-bound"
    )
    block |= {
        n: Timing(n, 330.0 * np.roll([0.9, 1.1, 0.95, 1.05, 1.0, 0.92, 1.08, 1.0, 0.97, 1.03], k), inner=1)
        for n, k in (("naive", 0), ("fused", 1))
    }
    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=allocs)
    assert lines[2].endswith("0.33x the bytes: consistent with memory-bound, not a measurement of it")


def test_05s_reference_ranking_reads_the_newest_cpu_reference_run_with_its_origin(tmp_path):
    """A withheld shape shows the committed cpu reference run's ranking, labelled as that run's."""
    import json

    from lesson.study import reference_ranking, reference_reading

    assert reference_ranking("large", tmp_path) == "" and reference_reading(tmp_path) == ({}, "")  # none committed
    for name, ratio in (("cpu-a-2026-01-01", 9.9), ("cpu-b-2026-02-01", 3.3)):
        run = tmp_path / name
        run.mkdir()
        note = f"large 8192x4096, from closest to the copy: torch.compile 1.16x, naive {ratio}x (median per-round ratio)"
        metrics = {"best_large_variant": {"note": note}, "large_naive_over_copy": {"value": ratio, "p10": 3.1, "p90": 3.4}}
        (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
        (run / "environment.json").write_text(
            json.dumps({"date_utc": "2026-02-01T13:00:00+00:00", "cpu_count": 2, "device_name": "Xeon"})
        )
    origin = "recorded on 2026-02-01 on a 2-core Xeon by make run 20260201T130000Z (docs/reference-runs/cpu-b-2026-02-01), not this run"
    assert (
        reference_ranking("large", tmp_path)
        == f"Reference run ({origin}): large 8192x4096, from closest to the copy: torch.compile 1.16x, then naive 3.3x"
        " (p10-p90: naive 3.10-3.40)"  # each recorded ratio's p10-p90 where published
    )
    assert reference_reading(tmp_path)[0]["large_naive_over_copy"]["value"] == 3.3
    assert reference_ranking("small", tmp_path) == ""  # no such metric: nothing extra


def test_05s_reference_ranking_shows_the_recorded_tie_an_older_note_dropped(tmp_path):
    """A note written without ties gets them back from the reference run's own pair metrics."""
    import json

    from lesson.study import reference_ranking

    run = tmp_path / "cpu-a-2026-12-06"
    run.mkdir()
    note = "large 8192x4096, from closest to the copy: torch.compile 1.16x, naive 3.30x, torch.rms_norm 3.53x (median per-round ratio)"
    metrics = {
        "best_large_variant": {"note": note},
        "large_rms_norm_speedup_over_naive": {"value": 0.932, "p10": 0.909, "p90": 0.955},  # about 1: cannot tell apart
        "large_compile_speedup_over_naive": {"value": 2.83, "p10": 2.75, "p90": 2.97},
    }
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    line = reference_ranking("large", tmp_path)
    assert line.startswith("Reference run (") and line.endswith(
        "not this run): large 8192x4096, from closest to the copy: torch.compile 1.16x, then naive 3.30x and torch.rms_norm 3.53x"
        f" {GROUP}"
    )
    tied_note = (
        "large 8192x4096, from closest to the copy: torch.compile 1.16x, then naive 3.30x ≈ torch.rms_norm 3.53x (median ...)"
    )
    metrics["best_large_variant"]["note"] = tied_note  # a note stored with the older "a ≈ b" reads the same
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    assert reference_ranking("large", tmp_path) == line
    for words in ("(not ranked apart)", GROUP):  # a note stored with the older words, or with this phrase, reads the same
        metrics["best_large_variant"]["note"] = tied_note.replace(" ≈ ", " and ").replace("3.53x", f"3.53x {words}")
        (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
        assert reference_ranking("large", tmp_path) == line
    metrics["large_rms_norm_speedup_over_naive"] = {"value": 0.99, "p10": 0.96, "p90": 1.02}  # within 5% of 1
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    assert reference_ranking("large", tmp_path) == line.replace(GROUP, SAME)  # the pair's own word
    metrics["large_rms_norm_speedup_over_naive"] = {"value": 1.07, "p10": 1.06, "p90": 1.08}  # measurable: no tie
    metrics["best_large_variant"]["note"] = note
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    assert reference_ranking("large", tmp_path).endswith("then naive 3.30x, then torch.rms_norm 3.53x")


def test_05s_exercise_1_answer_judges_both_byte_models_ranked_withheld_and_from_the_reference(tmp_path):
    """Exercise 1's table: naive's passes by source, both byte counts, and each reading of naive's time in
    copies (this run's ratio to the copy, this run's pair estimate, the reference run's, labelled) judged
    against the counts; one verdict line from the first reading, right whether the copy passed or failed."""
    import json
    from dataclasses import replace

    import pandas as pd

    from analysis.contention import Contention
    from lesson.study import copies_answer

    ops = pd.DataFrame(
        {"op": ["pow", "mean", "add", "rsqrt", "mul", "mul"], "copies": [2.0, 0.5, 0.0, 0.0, 2.0, 2.0]}
    )  # SYNTHETIC
    _, _, ranked = takeaway_case(copy=100.0, compiled=110.0)  # naive 3.3x the copy, every round alike
    lines = copies_answer(ops, ranked, 3.0, tmp_path).split("\n")
    assert lines[0] == (
        "Answer: 3 full-size writes (pow, mul, mul) + 1 read-only (mean); naive's time at the large shape in copies:"
    )
    assert [line.split() for line in lines[1:3]] == [
        ["by", "source", "6.5"],
        ["by", "allocation", "3.0"],
    ]
    assert lines[3].split()[:6] == ["this", "run,", "ratio", "to", "the", "copy"] and "3.30  p10-p90 3.30-3.30" in lines[3]
    apart = "below the source count and above the allocation count"
    assert lines[3].endswith(apart)  # 3.3 / 3.0 = 1.10: apart, and each side said
    assert lines[4:] == [
        f"Verdict (this run, ratio to the copy): naive's time: {apart}",
        "The source count prices mean's read-only pass at half a copy; one possible reason the time lies below it, not tested here: a copy's time includes allocating its output, which a read does not pay (A3 times that allocation).",
        "Above the allocation count: a full-size op costs more than a clone, or mean's read costs extra; the time cannot tell which",
    ]  # the byte share's assumption (one clone per allocation) tested: which way it failed is not measured
    brief = copies_answer(ops, ranked, 3.0, tmp_path, brief=True).split("\n")  # 05's path: the model and the margin said
    assert brief[4:7] == [
        "  (by allocation: one copy per full-size tensor allocated, A3)",
        "  this run p10-p90 / 6.5 (source): 0.51-0.51, lies beyond the 5% margin of 1",
        "  this run p10-p90 / 3.0 (allocation): 1.10-1.10, lies beyond the 5% margin of 1",
    ]
    # an inconclusive reading beside slow rounds says they widen the range (3.38 against 3.5 read as "matches")
    from analysis.timing import PairedRatio

    wide = PairedRatio("naive", "copy", np.array([3.4] * 13 + [7.8] * 2))
    slowed = replace(ranked, over_floor={**ranked.over_floor, "naive": wide}, slow={"naive": 2})
    slowed_lines = copies_answer(ops[ops.op != "pow"], slowed, 3.0, tmp_path).split("\n")
    assert slowed_lines[-2].endswith("(2 slow rounds widen the range)") and slowed_lines[-1].startswith("Above the allocation")
    assert "widen" not in copies_answer(ops, replace(ranked, slow={"naive": 2}), 3.0, tmp_path)  # apart: not said
    holding = PairedRatio("naive", "copy", np.array([2.8] * 5 + [3.2] * 10))  # 0.93-1.07 of the allocation count
    held = copies_answer(ops, replace(ranked, over_floor={**ranked.over_floor, "naive": holding}), 3.0, tmp_path, brief=True)
    assert "(allocation): 0.93-1.07, holds 1" in held  # a range holding 1 is not one that "reaches within 5% of 1"
    block, _, _ = takeaway_case(copy=100.0, compiled=110.0)
    both = copies_answer(ops, ranked, 3.0, tmp_path, block, "compiled").split("\n")  # the pair, checked by this run's ratio
    assert "via the pair" not in "\n".join(both) and both[4:6] == [
        "the pair (this run, measured): naive takes 3.00 compiled calls (p10-p90 3.00-3.00)",
        "compiled is 1.10x the copy (this run, p10-p90 1.10-1.10): measurably slower than one copy, so the pair counts compiled calls, not copies",
    ]
    edge_block, _, edge = takeaway_case(copy=100.0, compiled=105.5)  # p10 1.055 against the 1.05 edge
    assert "measurably slower than one copy (at the margin's edge: may read differently on another run), so" in (
        copies_answer(ops, edge, 3.0, tmp_path, edge_block, "compiled")
    )
    _, _, failed = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)
    assert copies_answer(ops, failed, 3.0, tmp_path).endswith("\nVerdict: this run cannot say (the copy failed its check)")
    run = tmp_path / "cpu-test-2026-12-06"
    run.mkdir()
    record = {"value": 3.3, "p10": 3.1, "p90": 3.38, "unit": "x"}
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": {"large_naive_over_copy": record}}}))
    (run / "environment.json").write_text(
        json.dumps({"cpu_count": 2, "device_name": "Test CPU", "date_utc": "2026-12-06T00:00:00"})
    )
    ref = copies_answer(ops, failed, 3.0, tmp_path).split("\n")
    assert ref[3].startswith("  reference run (recorded**)") and "3.30  p10-p90 3.10-3.38" in ref[3]
    assert ref[4] == "this run: no reading (the copy failed its check)"
    assert (
        ref[5]
        == (  # 3.1 / 3.0 = 1.03: within the margin, which the verdict names
            "Verdict (reference run, not this run): naive's time: cannot tell apart from the allocation count, inconclusive; below the source count"
        )
        and ref[6]
        == "The source count prices mean's read-only pass at half a copy; one possible reason the time lies below it, not tested here: a copy's time includes allocating its output, which a read does not pay (A3 times that allocation)."
        and ref[3].endswith(
            "(the whole p10-p90 lies above 3.0 but reaches into the allocation count's 5% band 2.86-3.15); below the source count"
        )
    )  # the margin, in its row
    assert ref[7].startswith("** recorded on 2026-12-06") and ref[7].endswith("not this run")
    pair = copies_answer(ops, failed, 3.0, tmp_path, block, "compiled").split("\n")  # the reference has no compiled ratio
    assert (
        pair[5] == "the pair (this run, measured): naive takes 3.00 compiled calls (p10-p90 3.00-3.00)"
        and "via the pair" not in pair[3]
    )
    assert pair[6].startswith("unchecked: no ratio of compiled to the copy")
    # the reference run measured the compiled variant apart from one copy: the pair's assumption is refuted
    compiled = {"value": 1.24, "p10": 1.11, "p90": 1.51, "unit": "x"}
    metrics = {"large_naive_over_copy": record, "large_compile_over_copy": compiled}
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    renamed = {"torch.compile" if n == "compiled" else n: t for n, t in block.items()}
    dropped = copies_answer(ops, failed, 3.0, tmp_path, renamed, "torch.compile")
    assert "via the pair" not in dropped and "Verdict (reference run, not this run)" in dropped
    assert (
        "torch.compile is 1.24x the copy (reference run**, p10-p90 1.11-1.51): measurably slower than one copy, so the pair counts"
        " compiled-variant calls, not copies" in dropped
    )
    metrics["large_compile_over_copy"] = {"value": 1.01, "p10": 0.99, "p90": 1.03, "unit": "x"}  # one pass: confirmed
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    kept = copies_answer(ops, failed, 3.0, tmp_path, renamed, "torch.compile").split("\n")
    assert kept[3].startswith("  this run, via the pair (estimate*)") and "3.00  p10-p90 3.00-3.00" in kept[3]
    assert (
        "Verdict (this run, via the pair): naive's time: no measurable difference from the allocation count; below the source count"
        in kept
    )  # 3.00-3.00 against 3.0: the whole p10-p90 within the margin, the glossary's word
    assert any(line.endswith("within 5% of one copy-like pass, so the pair also counts naive in copies") for line in kept)
    metrics["large_compile_over_copy"] = {"value": 1.08, "p10": 1.04, "p90": 1.19, "unit": "x"}  # inconclusive
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    unsure = copies_answer(ops, failed, 3.0, tmp_path, renamed, "torch.compile")
    assert "via the pair" not in unsure and "cannot tell whether it is one copy-like pass" in unsure
    block, _, failed = takeaway_case(copy=100.0, compiled=110.0, spread=0.6)  # naive 3.0x compiled's time per round
    empty = tmp_path / "none"
    empty.mkdir()
    through = copies_answer(ops, failed, 3.0, empty, block, "compiled")  # no reference: the pair unchecked, no estimate
    assert "naive takes 3.00 compiled calls" in through and "reference run (" not in through and "via the pair" not in through
    assert through.endswith("Verdict: this run cannot say (the copy failed its check)")
    _, _, same = takeaway_case(copy=100.0, compiled=330.0, spread=0.6)  # naive and compiled alike: no estimate
    tied = copies_answer(ops, same, 3.0, empty, takeaway_case(copy=100.0, compiled=330.0, spread=0.6)[0], "compiled")
    assert "the pair: compiled / naive: no measurable difference (p10-p90 within 5% of 1), so it gives no count" in tied
    busy = {n: replace(t, contention=Contention(1.0, 0.5, None, None)) for n, t in block.items()}
    assert "the pair: naive / compiled concludes nothing either (busy)" in copies_answer(
        ops, failed, 3.0, empty, busy, "compiled"
    )
    ops.loc[4:5, "copies"] = 0.35  # source: 3.2 copies, also within the margin: the reference's ratio cannot choose
    assert copies_answer(ops, failed, 3.0, tmp_path).split("\n")[-2].endswith("the time cannot say which count it follows")


def test_a_reference_run_whose_copy_failed_offers_no_ranking_to_fall_back_on(tmp_path):
    """A reference run published from a run whose large copy failed its check must not stand in for this
    run's withheld ranking: its ratios to the copy are no sounder than this run's."""
    import json

    from lesson.study import reference_ranking, reference_reading

    run = tmp_path / "cpu-test-2026-12-06"
    run.mkdir()
    metrics = {
        "large_floor_sound": {"value": False, "unit": "bool"},
        "large_naive_over_copy": {"value": 3.1, "p10": 2.5, "p90": 3.9, "unit": "ratio"},
        "best_large_variant": {"value": None, "unit": "name", "note": "large 8192x4096: the ranking against the copy: withheld"},
        "small_floor_sound": {"value": True, "unit": "bool"},
        "small_naive_over_copy": {"value": 7.0, "p10": 6.9, "p90": 7.1, "unit": "ratio"},
    }
    (run / "metrics.json").write_text(json.dumps({"notebooks": {"05_compare_variants": metrics}}))
    read, origin = reference_reading(tmp_path)
    assert "large_naive_over_copy" not in read and "best_large_variant" not in read and "small_naive_over_copy" in read
    assert origin.endswith("not this run") and "small_floor_sound" in read
    assert reference_ranking("large", tmp_path).endswith(
        "its large copy failed its check too, so it offers no ranking to fall back on"
    )


def test_05s_line_test_answer_says_the_miss_with_its_medians_and_never_the_label():
    """Exercise 2's verdict from the cell's arithmetic: the three medians it rests on first, an upward miss
    in words, a line that predicts the largest call gets the verdict's word, an inconclusive one "not shown either way",
    a busy block concludes nothing; no line mentions the takeaway's label."""
    from dataclasses import replace

    from analysis.contention import Contention
    from lesson.study import line_test_answer

    def answer(t64: float, contention=None) -> str:  # SYNTHETIC: 20 us at 8 tokens, 24 at 64: the line gives 56 at 512
        by_count = interleaved(**{"8 tokens": 20.0, "64 tokens": 24.0, "512 tokens": t64})
        by_count = {n: replace(t, contention=contention) for n, t in by_count.items()} if contention else by_count
        t1, t8, t64 = by_count.values()
        return line_test_answer(by_count, t64.samples_us / (9 * t8.samples_us - 8 * t1.samples_us))

    missed = answer(100.0).split("\n")
    assert (
        missed[0]
        == "medians: 8 tokens 20.0 us, 64 tokens 24.0 us, 512 tokens 100.0 us (the line predicts 56.0 us for 512 tokens)"
    )
    assert missed[1:] == [  # one short sentence a line (the one ~60-word line was 05's densest)
        "No: 512 tokens takes 1.79x the line's prediction (median of per-round ratios, p10-p90 1.79-1.79; of the medians: 1.79x).",
        "Between 64 and 512 tokens, time grows faster than the line.",
        "By the medians: the rejected line's intercept is 19 us, not a measured fixed cost; the rest grew 18x for 8x the tokens.",
        "A3's overhead-bound label (8x the tokens, under 4x the time) rests on 8 to 64 tokens only; this test does not contradict it.",
        "Not measured: whether the 512-token input stays in the cache.",  # tied to the overhead-bound bound, a cause offered
    ]
    assert len(missed) == 6
    held = answer(56.0).split("\n")
    assert held[2] == "Does the line predict 512 tokens? No measurable difference (p10-p90 within 5% of 1)."
    # a range that straddles 1: the counts, not "some rounds below and others above", and the yes/no question answered
    # "not shown either way", never "cannot tell apart", which read as "yes" (M1)
    by_count = interleaved(**{"8 tokens": 20.0, "64 tokens": 24.0, "512 tokens": 56.0})
    n = len(by_count["8 tokens"].samples_us)
    straddle = line_test_answer(by_count, np.array([0.9, 0.95, 0.98] + [1.8] * (n - 3))).split("\n")
    assert f"with 3 of {n} rounds below 1, {n - 3} above (median" in straddle[1] and "some rounds" not in straddle[1]
    assert straddle[2] == "Does the line predict 512 tokens? Not shown either way (inconclusive)."
    busy = answer(100.0, Contention(1.0, 0.5, None, None)).split("\n")
    assert busy[2] == "Does the line predict 512 tokens? This run cannot say."
    for text in (held, straddle, busy):
        assert not any("label" in line or "bound" in line for line in text)


def test_05s_exercise_1_word_against_a_count_is_the_rules_word():
    """A p10-p90 wholly within 5% of a count reads "no measurable difference" from it, one that reaches past the
    margin "cannot tell apart" (analysis.verdicts.about_one): 05 printed "cannot tell apart from the source count"
    for 3.35-3.56 against 3.5."""
    from lesson.study import _against_counts, copies_spread

    told, row, verdict = _against_counts(3.348, 3.557, {"source": 3.5, "allocation": 3.0})
    assert told == ["source"] and verdict == "no measurable difference from the source count; above the allocation count"
    told, _, verdict = _against_counts(3.1, 3.38, {"source": 3.5, "allocation": 3.0})
    assert told == ["source", "allocation"] and verdict == "cannot tell apart from the source or allocation count, inconclusive"
    # the band beside the word, its edges and the p10-p90 at the decimals that place them (3.33-3.44
    # "within the margin" of 3.5 read as "no measurable difference"; its p10 3.332 lies below the band's 3.333), and the
    # side it lies on: "reaches past the band" said why not "no measurable difference", not why not "below"
    _, row, _ = _against_counts(3.332, 3.44, {"source": 3.5})
    assert (
        row
        == "cannot tell apart from the source count, inconclusive (the whole p10-p90 lies below 3.5 but reaches into the source count's 5% band 3.333-3.68)"
    )
    assert copies_spread(3.332, 3.44, {"source": 3.5}) == "p10-p90 3.332-3.44"
    _, row, _ = _against_counts(3.1, 3.38, {"source": 3.5, "allocation": 3.0})
    assert row.endswith(
        "(the whole p10-p90 lies below 3.5 but reaches into the source count's 5% band 3.33-3.68"
        " and lies above 3.0 but reaches into the allocation count's 2.86-3.15)"
    )
    # the count as the table row prints it: 3.5 for 3.50079 (the per-row tensors), more only where a p90 lies between
    # ("lies below 3.50079" beside "by source 3.5")
    _, row, _ = _against_counts(3.31, 3.38, {"source": 3.50079})
    assert "lies below 3.5 but" in row and "3.50079" not in row
    _, row, _ = _against_counts(3.31, 3.5003, {"source": 3.50079})
    assert "lies below 3.50079 but" in row
    _, _, verdict = _against_counts(3.4, 3.6, {"source": 3.5, "allocation": 3.3})
    assert verdict == "no measurable difference from the source count; cannot tell apart from the allocation count, inconclusive"


def test_05s_growth_is_the_median_of_the_per_round_ratios_it_ranges():
    """The measured growth is the median of the per-round ratios beside their p10-p90 (a median of medians read
    beside it as another figure), and a range wholly under 4x by the margin labels each variant."""
    from lesson.study import shape_takeaways

    block, _, _ = takeaway_case(copy=2.0, compiled=20.0, probe=2.0, spread=0.6)
    small = check_floor(block["copy"], block["triad probe"], 64, memory_bound=False)
    from analysis.floor import rank_over_floor

    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], small, "small")
    one = np.array([10.0, 11.0, 9.0, 10.0, 12.0])  # rounds whose times differ: the two estimators part
    growths = np.array([2.5, 2.6, 2.4, 2.7, 2.58])
    by_tokens = {n: Timing(n, one, inner=1) for n in ("naive", "fused", "compiled")}
    by_tokens |= {f"{n} x8": Timing(f"{n} x8", one * growths, inner=1) for n in ("naive", "fused", "compiled")}
    lines = shape_takeaways({"small": ranking}, {"small": small}, {"small": block}, by_tokens)
    assert f"naive {np.median(growths):.2f}x (2.40-2.70)" in lines[1]  # order statistics (analysis.timing.p10_p90)
    assert lines[2] == "  overhead-bound* (under 4x): naive, fused, compiled"


def test_05s_bound_label_counts_the_rounds_on_the_other_side_of_half():
    """naive's byte share 0.88 (0.58-0.90) was called memory-bound with 2 of 15 rounds at 0.37: an interpolated p10 fell
    into the gap between the rounds. The series' p10 is an order statistic (analysis.timing.p10_p90): with
    one round of ten under half, the p10 is that round, and it cannot tell apart from 0.5."""
    from lesson.study import shape_takeaways

    block, floor, ranking = takeaway_case(copy=100.0, compiled=110.0)
    block["naive"] = Timing("naive", block["copy"].samples_us * np.array([1.14] * 9 + [2.7]), inner=1)
    lines = shape_takeaways({"large": ranking}, {"large": floor}, {"large": block}, None, alloc_over_input=ONE_COPY)
    assert lines[4] == "  cannot tell apart from 0.5 (p10-p90 holds 0.5 or reaches within 5% of it): naive 0.88 (0.37-0.88)"
    assert lines[2].endswith("compiled 0.91 (0.91-0.91)")  # no count where every round is over half


def test_05s_quiet_block_says_which_case_had_slow_rounds():
    """05 called its large block "quiet" beside naive at 2.4x its median in 2 of 15 rounds (the figure's longest
    whisker): a quiet line names any case whose p90 is over 1.5x its median, with its slow rounds."""
    from types import SimpleNamespace

    from lesson.study import quiet_note

    steady = Timing("copy", np.full(15, 10.0), inner=1)
    naive = Timing("naive", np.array([100.0] * 13 + [243.0] * 2), inner=1)
    passed, failed = SimpleNamespace(ok=True, measurements=1), SimpleNamespace(ok=False, measurements=2)
    note = quiet_note("quiet while timing", passed, {"copy": steady, "naive": naive}, "large")
    assert note.startswith(  # grouped by count: four cases made four long clauses
        '\n  The CPU was quiet, yet some rounds took over 1.5x their case\'s median: 2 of 15 in naive (samples: blocks["large"][case]'
    )
    assert note.endswith(
        "\n  The verdicts below on naive include those rounds: where one is inconclusive, rerun the cell, or raise REPEATS; a rerun may still be inconclusive."
    )  # why a pair is inconclusive
    assert "\n  Cause not measured here; candidates: memory traffic, page faults (A3).\n" in note
    assert all(line.endswith(".") for line in note.splitlines()[1:])  # short lines, each a sentence
    assert quiet_note("quiet while timing", passed, {"copy": steady}, "large") == ""
    assert quiet_note("BUSY while timing", failed, {"naive": naive}, "large") == ""  # the busy line says it
    assert "yet the copy varied" in quiet_note("quiet while timing", failed, {"copy": steady}, "large")
    assert "The copy was timed 2 times; the verdicts below" in quiet_note("quiet while timing", failed, {"copy": steady}, "large")
    slow_copy = Timing("copy", np.array([10.0] * 13 + [25.0] * 2), inner=1)  # a failed copy with slow rounds: named once
    once = quiet_note("quiet while timing", failed, {"copy": slow_copy}, "large")
    assert "yet the copy varied and" not in once and "median: 2 of 15 in the copy (samples" in once  # named once
    # one round over 1.5x, above a p90 under it: named, so the share line's "1 outlier round" has its cause
    lone = Timing("torch.rms_norm", np.array([100.0] * 14 + [253.0]), inner=1)
    both = quiet_note("quiet while timing", passed, {"naive": naive, "torch.rms_norm": lone}, "large")
    assert both.endswith(
        "on naive include those rounds: where one is inconclusive, rerun the cell, or raise REPEATS; a rerun may still be inconclusive.\n  torch.rms_norm: 1 of 15 rounds took over 1.5x the median; outside p10-p90, so no verdict uses it."
    )
    alone = quiet_note("quiet while timing", passed, {"copy": steady, "torch.rms_norm": lone}, "large")
    assert alone == "\n  torch.rms_norm: 1 of 15 rounds took over 1.5x the median; outside p10-p90, so no verdict uses it."


def test_05s_quiet_note_names_a_round_slow_in_most_cases_not_one_variant():
    """Round 0 was 1.7-4x its median in every case but the copy, yet the note named torch.rms_norm as
    "varied" and listed the rest as lone slow rounds. A round slow in most cases (three at least) is said once, by
    its index; a case slow only in it is not listed again. SYNTHETIC rounds."""
    from types import SimpleNamespace

    from lesson.study import quiet_note

    def first_slow(name: str, also: int | None = None) -> Timing:
        s = np.full(15, 100.0)
        s[0] = 300.0
        if also is not None:
            s[also] = 250.0
        return Timing(name, s, inner=1)

    block = {"copy": Timing("copy", np.full(15, 10.0), inner=1), "naive": first_slow("naive")}
    block |= {"torch.compile": first_slow("torch.compile"), "triad probe": first_slow("triad probe")}
    passed = SimpleNamespace(ok=True, measurements=1)
    assert quiet_note("quiet while timing", passed, block, "large") == (
        "\n  Round 0 (the first) took over 1.5x its median in every case but the copy; cause not measured."
    )
    note = quiet_note("quiet while timing", passed, block | {"torch.rms_norm": first_slow("torch.rms_norm", 11)}, "large")
    assert note.startswith(  # its round 11, not the shared round again
        "\n  Round 0 (the first) took over 1.5x its median in every case but the copy.\n  The CPU was quiet, yet other rounds"
        " took over 1.5x their case's median: 1 of 15 in torch.rms_norm (samples:"
    )
    # two shared rounds, one line each; a case slow in them only is not named again (rounds 5 and 10 of one run)
    both = {n: Timing(n, np.array([100.0] * 5 + [300.0] + [100.0] * 4 + [300.0] + [100.0] * 4), inner=1) for n in "abc"}
    two_rounds = quiet_note("quiet while timing", passed, {"copy": block["copy"], **both}, "large").split("\n  ")
    assert two_rounds[1:3] == [
        "Round 5 took over 1.5x its median in every case but the copy.",
        "Round 10 took over 1.5x its median in every case but the copy.",
    ]
    assert "yet" not in "".join(two_rounds) and two_rounds[3].startswith("Cause not measured here")  # p90 moved
    assert "One round" not in note
    two = {"copy": block["copy"], "naive": block["naive"], "torch.compile": block["torch.compile"]}
    assert "Round 0" not in quiet_note("quiet while timing", passed, two, "large")  # 2 of 3: three cases at least


def test_a_variant_with_slow_rounds_says_so_in_the_ranking_and_an_unresolved_pair_is_marked_not_equal(tmp_path):
    """2 slow naive rounds moved the ranking and its takeaway, yet only the timing cell's line said so;
    the figure's "≈3.39x" beside an inconclusive pair read as equal. SYNTHETIC rounds."""
    import matplotlib

    matplotlib.use("Agg")
    from analysis.floor import rank_over_floor, slow_rounds
    from lesson.study import plot_over_copy

    block = interleaved(copy=100.0, naive=330.0, fused=360.0, compiled=120.0, probe=80.0)
    slow = block["naive"].samples_us.copy()
    slow[[2, 5]] *= 2.5  # naive/fused round by round: 0.92 in 8 rounds, 2.3 in 2: p10-p90 holds 1
    block["naive"] = Timing("naive", slow, inner=1)
    assert slow_rounds(block["naive"]) == 2 and slow_rounds(block["fused"]) == 0
    floor = check_floor(block["copy"], block["probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    assert ranking.slow == {"naive": 2} and ranking.tiers() == [["compiled"], ["naive", "fused"]]
    assert "naive 3.30x and fused 3.60x (cannot tell apart, inconclusive; 2 slow rounds set one end of naive's range)" in (
        ranking.sentence_with_ties
    )
    ax = plot_over_copy({"large": ranking}, ["naive", "fused", "compiled"], "SYNTHETIC", tmp_path / "f.png")
    assert [t.get_text() for t in ax.texts] == ["3.30x ?", "3.60x ?", "1.20x"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "? marks naive and fused (large shape):\ncannot tell apart, inconclusive, order unresolved (the pair table)" in legend


def test_05s_bound_lines_split_rounds_per_name_and_say_why_a_label_is_withheld():
    """ "1 of 15 rounds under half" per share; the line naming the shared round said nothing of
    what it implied, so it is gone; a withheld share at a labelled one's median says slow rounds are why."""
    from analysis.verdicts import estimate
    from lesson.study import _bound_lines

    same = {n: np.array([0.9, 0.9, 0.4, 0.9]) for n in ("a", "b")}
    shares = {n: float(np.median(r)) for n, r in same.items()}
    share = estimate("moving its bytes", shares, "of the time", "a model", "a read-only pass", 2)
    lines = _bound_lines("memory-bound", "moving its bytes", shares, share, rounds=same, mark="†")
    assert not any("other side of half" in line for line in lines)
    wide = {"a": (0.9, 0.9), "b": (0.3, 0.9)}  # b's range holds 0.5: withheld, at a's median
    withheld = _bound_lines("memory-bound", "x", shares, share, spreads=wide, rounds=same, slow={"b": 2}, brief=True)
    assert withheld[:5] == [  # brief (05): the shares one a line, then the labels by name
        "  byte share (median, p10-p90):",
        "    a 0.90 (0.90-0.90; 1 of 4 rounds under 0.5)",
        "    b 0.90 (0.30-0.90; as a's median, but its time had 2 slow rounds)",
        "  memory-bound* (over 0.5): a",
        "  cannot tell apart from 0.5: b",
    ]
    spreads = {n: (0.9, 0.9) for n in same}  # the split prints beside a p10-p90 (a spread not near half)
    first = _bound_lines("memory-bound", "x", shares, share, spreads=spreads, rounds=same)[0]
    assert "a 0.90 (0.90-0.90; 1 of 4 rounds under 0.5)" in first  # plain words, no "outlier ... half"
    slow = _bound_lines("memory-bound", "x", shares, share, spreads=spreads, rounds=same, slow={"a": 2})[0]
    assert "a 0.90 (0.90-0.90; its time had 2 slow rounds)," in slow  # one qualifier per name
    assert lines[0].startswith("  memory-bound† (") and lines[-1].startswith("  † estimated")
    apart = {"a": same["a"], "b": np.array([0.4, 0.9, 0.9, 0.9])}
    assert not any("same rounds" in line for line in _bound_lines("memory-bound", "x", shares, share, rounds=apart))


def test_a_ranking_claims_no_order_inside_a_group_the_pairs_do_not_tell_apart():
    # a busy benchmark run "flipped" the claim naive < torch.rms_norm (3.39x, 3.36x), a pair its verdict
    # could not tell apart: the claims order only names in different groups, whatever the medians inside one
    from analysis.floor import rank_over_floor

    timings = interleaved(copy=100.0, naive=330.0, fused=331.0, compiled=120.0, probe=60.0)
    floor = check_floor(timings["copy"], timings["probe"], 2_000_000, memory_bound=True)
    ranking = rank_over_floor(timings, ["naive", "fused", "compiled"], floor, "large")
    assert ranking.tiers() == [["compiled"], ["naive", "fused"]]
    order = [c for c in ranking.claims(lambda n: f"{n}_over_copy", lambda a, b: f"{b}_over_{a}") if c.relation == "<"]
    assert {c.metrics for c in order} == {("compiled_over_copy", "fused_over_copy"), ("compiled_over_copy", "naive_over_copy")}


def test_05s_takeaways_say_a_pair_of_equal_ops_and_allocation_has_an_unmeasured_cause():
    """Torch.rms_norm 0.82x naive at the small shape, both at 7 device_ops and 3.0x allocation, read as "the
    fused one wins": a measured pair with equal columns says its cause is not measured; a pair that differs says nothing."""
    from types import SimpleNamespace

    from lesson.study import _same_work

    pairs = [
        SimpleNamespace(subject="fused", reference="naive", kind="faster"),
        SimpleNamespace(subject="compiled", reference="naive", kind="slower"),
        SimpleNamespace(subject="compiled", reference="fused", kind="cannot tell apart"),
    ]
    ops = {("small", "naive"): 7, ("small", "fused"): 7, ("small", "compiled"): 1}
    allocs = {("small", "naive"): 3.0037, ("small", "fused"): 3.0027, ("small", "compiled"): 1.0}  # as the table rounds
    assert _same_work(pairs, "small", ops, allocs) == [
        "  fused faster than naive at the same device_ops (7) and alloc_over_input (3.0): cause not measured here"
    ]
    assert _same_work(pairs, "small", ops, {**allocs, ("small", "fused"): 1.0}) == []
    assert _same_work(pairs, "small", {}, allocs) == []  # no ops counted (neuron): no claim


def test_a_bar_whose_whisker_enters_the_band_around_the_copy_is_marked(tmp_path):
    """Torch.compile's bar read "1.10x" unmarked beside a line saying "cannot tell apart from the copy"
    (its p10 1.047, inside the 5% band by 0.003). SYNTHETIC rounds."""
    import matplotlib

    matplotlib.use("Agg")
    from lesson.study import plot_over_copy

    block, floor, ranking = takeaway_case(copy=100.0, compiled=108.0)
    block["compiled"] = Timing("compiled", np.array([104.0, 104.5] + [110.0] * 13), inner=1)  # p10 within 5% of the copy
    from analysis.floor import rank_over_floor

    ranking = rank_over_floor(block, ["naive", "fused", "compiled"], floor, "large")
    ax = plot_over_copy({"large": ranking}, ["naive", "fused", "compiled"], "SYNTHETIC [measured on cpu]", tmp_path / "f.png")
    labels = [t.get_text() for t in ax.texts]
    assert labels[2].startswith("1.") and labels[2].endswith("◇") and not labels[0].endswith(("?", "◇", "≈")), labels
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith("◇ (whisker in the band)") for t in legend), legend  # not "?"


def test_05s_recap_is_one_line_per_shape_cut_from_the_takeaways():
    """05's Summary stated no result: a recap of each shape's headline and bound labels, before the
    predict answer, cut from the takeaways' own lines."""
    from lesson.study import recap

    takeaways = [
        "small 8x1024: closest to the copy: a, 8.97x the copy's time (p10-p90 8.01-9.27)",
        "  farthest: c 24.34x",
        "  measured: 8x the tokens took a 2.24x (2.06-2.47) the time (per-round median, p10-p90)",
        "  overhead-bound* (under 4x): a, c",
        "large 8192x4096: closest to the copy: c, 1.12x the copy's time (p10-p90 1.10-1.23)",
        "  byte share (median, p10-p90):",
        "    a 0.89 (0.85-0.91; 1 of 15 rounds under 0.5)",
        "  memory-bound† (over 0.5): a, c",
    ]
    assert recap(takeaways) == [
        "small 8x1024: closest to the copy: a, 8.97x the copy's time; overhead-bound*: a, c",
        "large 8192x4096: closest to the copy: c, 1.12x the copy's time; memory-bound† (estimated): a, c",
    ]
    # a tie keeps its verdict and quotes no one number; a withheld label keeps its slow rounds
    tied = [
        "small: closest to the copy: a and b (cannot tell apart, inconclusive); a at 7.79x the copy's time (p10-p90 7.30-9.12)",
        "large: closest to the copy: c, 1.14x the copy's time (p10-p90 1.09-1.18)",
        "    b 0.88 (0.30-0.90; as a's median, but its time had 3 slow rounds)",
        "  memory-bound† (over 0.5): a, c",
        "  cannot tell apart from 0.5: b",
    ]
    assert recap(tied) == [
        "small: closest to the copy: a and b (cannot tell apart, inconclusive)",
        "large: closest to the copy: c, 1.14x the copy's time; memory-bound† (estimated): a, c;"
        " cannot tell apart from 0.5: b (same median as a; its time had 3 slow rounds)",
    ]
    # same ops and allocations as the labelled one: the slow rounds, not the bytes, split them
    kin = [*tied[:3], "  memory-bound† (over 0.5): a, c", "  cannot tell apart from 0.5: b"]
    kin[2] = "    b 0.88 (0.30-0.90; its time had 3 slow rounds)"
    kin.append("  a and b (3.0 allocated, 7 ops each) cannot be told apart (inconclusive); c (1.0) is measurably fastest")
    assert recap(kin)[1].endswith("cannot tell apart from 0.5: b (same ops and allocations as a; its time had 3 slow rounds)")
    busy = ["large: the ranking against the copy is withheld (above); rerun", "  bound not estimated: the byte shares need"]
    assert recap(busy) == ["large: the ranking against the copy is withheld; rerun"]


def test_small_order_note_offers_causes_only_for_an_order_the_pair_tells_apart():
    """Candidate causes for naive and torch.rms_norm's small-shape order printed beside an
    inconclusive pair read as a finding; the pair's verdict picks the sentence."""
    from analysis.floor import rank_over_floor
    from lesson.study import small_order_note

    names = ["naive", "torch.rms_norm", "torch.compile"]

    def note(rms_us: float) -> str:  # SYNTHETIC medians; the copy at 10 us
        block = interleaved(copy=10.0, naive=90.0, **{"torch.rms_norm": rms_us, "torch.compile": 200.0}, probe=8.0)
        floor = check_floor(block["copy"], block["probe"], 64, memory_bound=False)
        return small_order_note({"small": rank_over_floor(block, names, floor, "small")}, {"small": block})

    assert note(91.0) == "naive and torch.rms_norm: this run cannot tell them apart at the small shape."
    assert note(70.0).startswith("The order of naive and torch.rms_norm at the small shape, possible causes (not measured)")
