"""Notebook 07's stream: its lengths, the bad inputs refused with their fix, and the bucketing."""

import pytest
import torch

import json

import numpy as np
import pandas as pd

from analysis.compiles import CompileLog
from analysis.contention import Contention
from analysis.timing import PairedRatio
from helpers.errors import ParameterError, SeriesError
from helpers.params import check_parameters
from lesson.rmsnorm import rmsnorm_naive
from lesson.shapes import bucketed_call, check_stream, load_stream, request_lengths, save_stream, steady_state_ratios
from lesson.shapes import (
    eager_calls_line,
    cache_table,
    new_process_label,
    rows_computed,
    steady_state_verdicts,
    stream_metrics,
    trainium_compiles,
)
from series_tools.run_series import select_notebooks


def test_lengths_are_seeded_and_in_range():
    lengths = request_lengths(200, 512, seed=3)
    assert lengths == request_lengths(200, 512, seed=3) and lengths != request_lengths(200, 512, seed=4)
    assert min(lengths) >= 1 and max(lengths) <= 512
    assert sum(n <= 64 for n in lengths) > sum(n > 256 for n in lengths)  # many short, few long


@pytest.mark.parametrize(
    "lengths, buckets, message, fix",
    [
        ([5, 9], [], "BUCKETS is empty", "give sizes"),
        ([5, 300], [64, 256], "largest bucket (256) is smaller than the longest request (300 tokens)", "add a bucket >= 300"),
        ([5, 0, 7], [64], "request 1 has length 0", "lengths >= 1"),
        ([5], [64, -1], "BUCKETS must be positive integers", "[64, 128, 256, 512]"),
    ],
)
def test_bad_streams_are_refused_with_the_fix(lengths, buckets, message, fix):
    with pytest.raises(ParameterError) as err:
        check_stream(lengths, buckets)
    assert message in str(err.value) and fix in err.value.fix


def test_buckets_parameter_must_be_a_list_of_sizes():
    check_parameters({"BUCKETS": [64, 128]})
    with pytest.raises(ParameterError, match="BUCKETS must be a list"):
        check_parameters({"BUCKETS": "64,128"})


def test_bucketed_call_pads_runs_and_slices():
    seen = []

    def spy(x, w, eps):
        seen.append(tuple(x.shape))
        return rmsnorm_naive(x, w, eps)

    x, w = torch.randn(5, 8), torch.randn(8)
    out = bucketed_call(spy, x, w, 1e-6, [4, 16, 32])
    assert seen == [(16, 8)] and out.shape == (5, 8)
    torch.testing.assert_close(out, rmsnorm_naive(x, w, 1e-6))  # zero rows change nothing in the others


def test_bucketed_call_pads_on_the_host_when_asked_and_returns_to_xs_device():
    seen = []

    def spy(x, w, eps):
        seen.append((tuple(x.shape), x.device.type))
        return rmsnorm_naive(x, w, eps)

    x, w = torch.randn(5, 8), torch.randn(8)
    out = bucketed_call(spy, x, w, 1e-6, [4, 16, 32], pad_on_host=True)
    assert seen == [((16, 8), "cpu")] and out.device == x.device
    torch.testing.assert_close(out, bucketed_call(rmsnorm_naive, x, w, 1e-6, [16]))


def test_steady_state_ratios_pair_pass_2_request_by_request_and_count_static_eager_calls():
    rows = []
    for name, seconds in (("static", [1.0, 4.0, 2.0]), ("dynamic", [2.0, 2.0, 2.0]), ("bucketed", [4.0, 1.0, 1.0])):
        for pass_no in (1, 2):
            for request, (tokens, s) in enumerate(zip([5, 9, 13], seconds)):
                compiled = pass_no == 1 and (name != "static" or tokens == 5)  # static compiled only length 5
                rows.append(
                    {"strategy": name, "pass": pass_no, "request": request, "tokens": tokens, "seconds": s, "compiled": compiled}
                )
    busy = Contention(2.0, 0.9, None, 0.0)
    contention = {(n, p): None for n in ("static", "dynamic", "bucketed") for p in (1, 2)} | {("bucketed", 2): busy}
    ratios, eager = steady_state_ratios(pd.DataFrame(rows), contention)
    assert [(r.numerator, r.denominator) for r in ratios] == [
        ("static (2/3 calls eager)", "dynamic"),
        ("static (2/3 calls eager)", "bucketed (padded)"),
        ("dynamic", "bucketed (padded)"),
    ]
    assert list(eager) == [9, 13]
    assert list(ratios[0].per_round) == [0.5, 2.0, 1.0] and list(ratios[2].per_round) == [0.5, 2.0, 2.0]
    assert ratios[0].contention is None and ratios[1].contention == busy  # a busy pass 2 reaches the ratios it is in


def test_steady_state_verdicts_name_the_faster_strategy_in_the_table_word():
    slow, fast = np.full(10, 2.0), np.full(10, 0.5)
    ratios = [
        PairedRatio("static (2/3 eager)", "bucketed (padded)", fast, "request"),
        PairedRatio("dynamic", "bucketed (padded)", slow, "request"),
    ]
    verdicts = steady_state_verdicts(ratios)
    assert [v.word for v in verdicts] == ["static faster", "bucketed faster"]
    assert verdicts[1].sentence.startswith("dynamic took 2.00x the time of bucketed (padded): bucketed faster")


def test_rows_computed_names_candidate_causes_only_where_a_strategy_ranks_faster_than_bucketed():
    lengths, buckets = [3, 60, 100], [64, 128]  # real 163; bucketed computes 64 + 64 + 128 = 256
    faster = steady_state_verdicts([PairedRatio("dynamic", "bucketed (padded)", np.full(10, 0.5), "request")])
    slower = steady_state_verdicts([PairedRatio("dynamic", "bucketed (padded)", np.full(10, 2.0), "request")])
    found = rows_computed(faster, lengths, buckets)
    assert found.kind == "count" and found.median == 163 and found.p10 == 163 / 256
    assert "163 real ones against 256 for bucketed (real + padded)" in found.sentence
    assert (
        "(real + padded): real rows are 0.6x of bucketed's, a count of work, not of time\n" in found.sentence
    )  # the ratio's direction in words
    assert "\ncandidate causes" in found.sentence  # its own printed line
    assert (
        "candidate causes where a verdict ranks bucketed's pass 2 slower (against dynamic; not separated here)" in found.sentence
    )
    assert "pad and slice" in found.sentence
    both = steady_state_verdicts(
        [PairedRatio(n, "bucketed (padded)", np.full(10, 0.5), "request") for n in ("static (2/3 eager)", "dynamic")]
    )
    assert "(against static and dynamic; not separated here): its padded rows" in rows_computed(both, lengths, buckets).sentence
    for steady in (slower, []):  # bucketed faster, or no dynamic strategy (Neuron): the count names no cause
        other = rows_computed(steady, lengths, buckets).sentence
        assert "cause" not in other and "\n" not in other


def test_the_stream_07_keeps_reads_back_as_it_was_served(tmp_path):
    folder = tmp_path / "07_shapes_and_recompiles"
    folder.mkdir()
    calls = pd.DataFrame([{"strategy": "static", "pass": 1, "request": 0, "tokens": 5, "seconds": 0.5, "compiled": True}])
    logs = {"static": CompileLog(["Recompiling function rmsnorm_naive ...", "hit config.recompile_limit (8)"])}
    contention = {("static", 1): Contention(2.0, 0.01, None, 0.0), ("static", 2): None}
    save_stream(folder, {"lengths": [5], "hidden": 64}, calls, logs, contention, warmup_s=3.5)
    (folder / "second_process.json").write_text(json.dumps({"warmup_s": 1.0, "strategies": {}}))
    stream = load_stream(tmp_path)
    pd.testing.assert_frame_equal(stream.calls, calls)
    assert stream.logs["static"].recompile_reasons == logs["static"].recompile_reasons
    assert stream.logs["static"].limit_warnings == logs["static"].limit_warnings
    assert stream.contention == contention and stream.contention[("static", 1)].busy is False
    assert stream.parameters == {"lengths": [5], "hidden": 64} and stream.warmup_s == 3.5
    assert stream.second["warmup_s"] == 1.0 and stream.inductor_cache == tmp_path / "inductor-cache"


def test_a_run_folder_without_07s_stream_names_the_command_that_runs_both(tmp_path):
    with pytest.raises(SeriesError) as err:
        load_stream(tmp_path)
    assert 'make run ARGS="--notebooks 07 A5"' in str(err.value)
    # and that command does run 07 first (and 08, which A5 also reads), even when asked for A5 alone or after it
    for asked in (["A5"], ["A5", "07"]):
        stems = [p.stem for p in select_notebooks(asked)]
        assert stems == ["07_shapes_and_recompiles", "08_many_processes", "A5_ranks_and_shapes_checks"]


def test_trainium_compiles_counts_graphs_plus_one_compile_per_eager_op_and_length():
    summary = pd.DataFrame({"compiles": [8, 2], "eager_fallbacks": [28, 0]}, index=["static", "bucketed"])
    found = trainium_compiles(summary, lambda x, w, eps: x * w, torch.ones(4), 1e-6, [64, 128], [3, 60, 100])
    assert found.kind == "estimate" and found.median == 8 + 28 * 1  # one top-level op (aten::mul) per eager call
    counts, assumed = found.sentence.splitlines()  # two short printed lines: the counts, then the assumptions
    assert "not measured: about 36 on static (8 graphs + 28 eager lengths x its ops), about 2 on bucketed" in counts
    assert "each of static's 1 eager ops (mul) compiles once per new length" in assumed
    assert "device-side slice never (UNVERIFIED)" in assumed
    assert len(found.sentence.splitlines()) == 2  # two short printed lines, not one long one


def test_stream_metrics_check_the_strategies_then_publish_07s_numbers():
    columns = ["compiles", "compile_s", "eager_fallbacks", "padded_rows", "cache_hits"]
    rows = {"static": [8, 5.9, 28, 0, 0], "dynamic": [2, 1.6, 0, 0, 0], "bucketed": [4, 2.7, 0, 2994, 0]}
    summary = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    second = pd.DataFrame({"compile_s": [0.4, 0.3, 0.1], "cache_hits": [8, 2, 4]}, index=list(rows))
    errors = {name: 1e-7 for name in rows}
    checked = dict(lengths=list(range(1, 37)), buckets=[64, 128, 256, 512], recompile_limit=8, limit_name="recompile_limit")
    m = stream_metrics(summary, second, errors, torch.float32, **checked)
    assert m["static_compiles"]["value"] == 8 and m["bucketed_compile_s"]["value"] == 2.7
    assert m["static_max_error"]["tolerance"] > 1e-7 and m["distinct_lengths"]["value"] == 36
    assert m["recompile_limit"]["note"] == "recompile_limit" and m["static_eager_fallbacks"]["value"] == 28
    assert m["first_process_cache_hits"]["value"] == 0 and m["second_process_cache_hits"]["value"] == 14
    assert m["second_process_compile_s"]["value"] == pytest.approx(0.8)
    with pytest.raises(AssertionError, match="off the float64 reference"):
        stream_metrics(summary, second, errors | {"dynamic": float("nan")}, torch.float32, **checked)
    with pytest.raises(AssertionError, match="more graphs than it has buckets"):
        stream_metrics(summary.assign(compiles=[8, 2, 5]), second, errors, torch.float32, **checked)


def test_new_process_label_says_cache_loads_only_where_inductor_counts_them():
    """Neuron runs no Inductor (N26): its zero misses say nothing, so the label never claims a cache load there."""
    assert new_process_label("cpu", 0) == " (each graph's first call, all strategies pooled)"
    assert new_process_label("cuda", 2) == ""  # a miss: some first calls compiled
    assert "not counted" in new_process_label("neuron", 0) and "cache load)" not in new_process_label("neuron", 0)


def test_cache_table_is_long_with_one_name_per_column():
    """The wide table wrapped into stacked blocks and renamed columns between processes."""
    here = pd.DataFrame(
        {"compiles": [8, 2], "compile_s": [7.704, 2.25], "cache_hits": [0, 0], "cache_misses": [8, 2]},
        index=["static", "dynamic"],
    )
    there = pd.DataFrame(
        {"compiles": [8, 2], "compile_s": [0.57, 0.42], "cache_hits": [8, 2], "cache_misses": [0, 0]},
        index=["dynamic", "static"][::-1],
    )
    table = cache_table(here, there.astype(object))
    assert list(table.columns) == ["graphs", "first-calls s", "hits", "misses"]
    assert list(table.index) == [(s, p) for s in ("static", "dynamic") for p in ("this process", "new process")]
    assert table.loc[("static", "this process"), "first-calls s"] == 7.7 and table["hits"].dtype == int


def test_show_verdicts_shows_every_verdict_whole(capsys):
    """The verdict column was cut at "inconclusive (p10-p90 reach...", hiding the reason."""
    import numpy as np

    from analysis.contention import Contention
    from analysis.timing import PairedRatio
    from lesson.shapes import show_verdicts, steady_state_verdicts

    ratio = PairedRatio(
        "static (29/40 calls eager)",
        "dynamic",
        np.array([1.01, 1.2, 1.4, 1.6, 2.0] * 8),
        "request",
        Contention(1.0, 0.0, 0.0, None),
    )
    show_verdicts(steady_state_verdicts([ratio]))
    out = capsys.readouterr().out
    assert "inconclusive (p10-p90 reaches within 5% of 1)" in out
    assert "1.4" not in out  # the median; an inconclusive row's median is blanked, not quotable


def test_eager_calls_line_says_the_count_comes_from_lengths_without_a_graph():
    line = eager_calls_line(pd.Series([9, 13, 9]), 40)
    assert line == "static's pass 2: 3 of 40 calls (2 lengths) ran eagerly, counted from the lengths with no compiled graph"
