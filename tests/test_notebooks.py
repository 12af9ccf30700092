"""Run every notebook end to end with papermill and check the metrics it publishes.

Notebooks are discovered, not listed. Each runs with small parameters (only those it declares),
kernel `python3`, an execution timeout, and BACKEND from the environment (cpu in CI; set
BACKEND=cuda or BACKEND=neuron on such machines). A failure names the notebook and the cell.
Each notebook's metrics are checked by the function of the same name in CHECKS: directions and
ratios measured in the same run, never absolute times.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import papermill as pm
import pytest

from analysis.claims import check_claims as claims_problems
from analysis.contention import BUSY_WAITED_FRACTION
from helpers.kernel_check import SUPPORTED_TORCH
from helpers.metrics import read_metrics
from analysis.rank_view import chance_some_rank_last
from analysis.contention import is_busy
from analysis.verdicts import KINDS as VERDICT_KINDS
from analysis.verdicts import judge_ranges
from helpers.series import NOTEBOOKS as SERIES
from helpers.series import REPO_ROOT as ROOT
from helpers.series import notebook_info, notebook_paths
from series_tools.execute import execute_notebook, fixed_layout_prefix

pytestmark = pytest.mark.notebook
NOTEBOOKS = notebook_paths()
BACKEND = os.environ.get("BACKEND", "cpu")
EXECUTION_TIMEOUT_S = 600
# On neuron no Chrome-trace category is verified as device-side (docs/NEURON_NOTES.md N19): the
# notebooks count no device operations there, and publish NaN (not zero) for them.
COUNTS_DEVICE_OPS = BACKEND != "neuron"

# Small shapes and few steps: the tests check that the lesson runs and its numbers hang together.
CI_PARAMETERS = {
    "TOKENS": 64,
    "HIDDEN": 256,
    "SMALL_TOKENS": 8,
    "SMALL_HIDDEN": 256,
    "WAIT": 0,
    "WARMUP": 1,
    "ACTIVE": 2,
    "REPEATS": 5,
    "REQUESTS": 12,
    "MAX_TOKENS": 64,
    "BUCKETS": [16, 64],
    "RECOMPILE_LIMIT": 2,
    "RANKS": 2,
    "STRAGGLER_MS": 20,
}
# Where a notebook needs more than the shared small values: 08 compares waits over steps with and
# without the straggler, so it records enough of each to have a spread.
NOTEBOOK_CI_PARAMETERS = {
    # 07 compiles into the run's Inductor cache after 04 (helpers.run_inductor_cache): another width keeps
    # 04's graph (TOKENS x HIDDEN) out of 07's stream, whose first process must compile every graph cold
    "07_shapes_and_recompiles": {"HIDDEN": 128},
    "08_many_processes": {"WARMUP": 2, "ACTIVE": 8},  # A5 reads 08's job back: the same steps
    # 06 judges host-only shares and factors over the recorded steps: under 5 every verdict is a reading
    # and its summary states nothing to check (a run with 2 steps published claims only when busy)
    "06_reading_traces": {"ACTIVE": 5},
}


def run_notebook(path: Path, out_dir: Path, executed: Path, cwd: Path | None = None, **overrides) -> dict:
    declared = pm.inspect_notebook(str(path))
    params = {k: v for k, v in {**CI_PARAMETERS, **overrides}.items() if k in declared}
    params.update(BACKEND=BACKEND, OUT_DIR=str(out_dir))
    try:
        execute_notebook(path, executed, params, cwd=cwd or path.parent, timeout_s=EXECUTION_TIMEOUT_S)
    except pm.PapermillExecutionError as exc:
        pytest.fail(
            f"{path.name} failed in cell In[{exc.exec_count}] (cell index {exc.cell_index}): {exc.ename}: {exc.evalue}",
            pytrace=False,
        )
    nb = json.loads(executed.read_text())
    unexecuted = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and c.get("execution_count") is None]
    assert not unexecuted, f"{path.name}: code cells {unexecuted} did not run"
    data = read_metrics(out_dir / path.stem)
    assert data["backend"] == BACKEND and list(data["notebooks"]) == [path.stem]
    return data["notebooks"][path.stem]


def value(metrics: dict, name: str):
    assert name in metrics, f"metric {name!r} not published"
    return metrics[name]["value"]


def not_counted(v) -> bool:
    return v is None or v != v  # NaN


# ------------------------------------------------------------------ per-notebook checks
def check_00_environment_check(m, out):
    assert value(m, "backend") == BACKEND
    assert value(m, "device_count") >= 1
    assert value(m, "torch_version").startswith(SUPPORTED_TORCH)
    assert value(m, "neuron_available") == (BACKEND == "neuron")
    env = json.loads((out / "environment.json").read_text())
    assert env["backend"] == BACKEND and env["torch"] == value(m, "torch_version")
    if fixed_layout_prefix():  # execute_notebook started the kernel under setarch -R
        assert env["address_layout"] == "fixed"


def check_01_profiler_setup(m, out):
    assert value(m, "active_steps") == CI_PARAMETERS["ACTIVE"]
    assert value(m, "trace_bytes") > 1000 and (out / "mlp.trace.json").stat().st_size == value(m, "trace_bytes")
    # a loop without synchronize is never a measurement; on cpu there is no device timeline to lose: not checked (None)
    assert value(m, "unsynchronized_flagged") is (True if BACKEND in ("cuda", "neuron") else None)
    assert value(m, "device_time_captured") is (BACKEND in ("cuda", "neuron"))
    assert value(m, "cold_over_warm") > 0 and value(m, "warm_call_us") > 0
    overhead = m["profiler_overhead_ratio"]
    # the profiler cannot make the work itself faster; allow noise of a quiet 2-core machine (a busy block
    # read 0.53 while other agents ran: its claim records "busy", checked below, and concludes nothing)
    assert is_busy(overhead.get("contention")) or overhead["value"] > 0.7
    assert overhead["p10"] <= overhead["value"] <= overhead["p90"]  # a paired ratio carries its spread
    # the printed verdict on the profiler's cost agrees with the published ratio (busy, or its p10-p90 against 1)
    claims = value(m, "claims")  # the lesson call's profiler cost (the tiny call's: A1, section 6)
    assert [c["metrics"] for c in claims] == [["profiler_overhead_ratio"]]
    assert claims_problems(claims, m) == []
    assert "profiler_overhead_tiny_ratio" not in m
    if BACKEND == "cpu":  # cpu ops finish before the call returns: issuing == finishing
        assert value(m, "issue_over_finish_ratio") == pytest.approx(1.0, abs=0.05)
    else:
        assert value(m, "issue_over_finish_ratio") <= 1.0
    assert not any(name.startswith("busy_demo_") for name in m)  # the busy-machine audit lives in A1


def check_A1_timing_checks(m, out):
    assert value(m, "first_call_us") > 0 and value(m, "steady_call_us") > 0
    assert value(m, "first_recorded_step_verdict") in VERDICT_KINDS
    # the timer against the profiler: a ratio of medians from separate blocks, judged by ranges, never by a threshold
    assert value(m, "profiled_step_over_timer") == pytest.approx(
        value(m, "profiled_step_us") / value(m, "timer_after_profile_us")
    )
    step, timer = m["profiled_step_us"], m["timer_after_profile_us"]
    busy = is_busy(step.get("contention")) or is_busy(timer.get("contention"))
    counts = (CI_PARAMETERS["ACTIVE"], CI_PARAMETERS["REPEATS"])  # profiled steps, timer samples: too few is a reading
    ranges = judge_ranges("step", (step["p10"], step["p90"]), "timer", (timer["p10"], timer["p90"]), counts=counts)
    assert value(m, "profiled_step_verdict") == ("busy" if busy else ranges.kind)  # the printed verdict is the ranges'
    assert (out / "a1_cross_check.trace.json").exists()
    overhead = m["profiler_overhead_ratio"]
    assert overhead["p10"] <= overhead["value"] <= overhead["p90"] and value(m, "profiler_overhead_ratio_of_medians") > 0
    tiny = m["profiler_overhead_tiny_ratio"]  # section 6: the tiny call beside 01's
    assert tiny["p10"] <= tiny["value"] <= tiny["p90"]
    # the busy-machine demonstration: with a process spinning on every CPU, this process must wait
    # for a CPU, and the block must say so (Linux reports the wait; elsewhere nothing is judged)
    if Path("/proc/self/schedstat").exists():
        # every timed block says whether it was busy (the first calls and the plain loop included)
        assert all("contention" in m[name] for name in ("early_calls_us", "steady_call_us", "profiled_step_us"))
        assert value(m, "busy_demo_every_cpu_flagged") is True
        for name in ("busy_demo_quiet_small_us", "busy_demo_one_process_small_us"):
            stored = m[name]["contention"]
            assert stored["busy"] == (stored["waited_fraction"] >= BUSY_WAITED_FRACTION)  # the verdict is the stored reading's
        assert value(m, "busy_demo_one_process_flagged") is m["busy_demo_one_process_small_us"]["contention"]["busy"]
    assert value(m, "busy_demo_one_process_small_over_quiet") == pytest.approx(
        value(m, "busy_demo_one_process_small_us") / value(m, "busy_demo_quiet_small_us")
    )
    env = json.loads((out / "environment.json").read_text())
    assert value(m, "address_layout") == env["address_layout"]
    assert value(m, "free_page_reporting_kib") == env["free_page_reporting_kib"]
    if fixed_layout_prefix():  # execute_notebook started the kernel under setarch -R
        assert value(m, "address_layout") == "fixed"


def check_02_naive_rmsnorm(m, out):
    assert value(m, "error_within_tolerance") is True
    # pow, sum, div, add, rsqrt, mul, mul on cpu; kernels elsewhere: several separate ops
    assert value(m, "device_ops_per_call") >= 4 if COUNTS_DEVICE_OPS else not_counted(value(m, "device_ops_per_call"))
    if BACKEND == "cpu":
        assert value(m, "device_ops_per_call") == 7
    # x*x and x*rsqrt(...) are full-size intermediates next to the output: about 3x the input
    assert 2.5 <= value(m, "allocated_over_input") <= 3.5
    assert value(m, "idle_gaps_per_call") == value(m, "device_ops_per_call") - 1 or BACKEND != "cpu"
    assert value(m, "device_time_captured") is (BACKEND in ("cuda", "neuron"))
    assert (out / "naive.trace.json").stat().st_size > 0
    # the recorded naive RMSNorm (data/recorded-rmsnorm, TraceLens; the same figures are computed from
    # the files independently in tests/test_module_calls.py): 49 calls of 16 host ops and 8 kernels each,
    # moving 9x a fused RMSNorm's minimum, on both devices
    for device in ("h100", "mi300x"):
        assert value(m, f"recorded_{device}_calls") == 49
        assert value(m, f"recorded_{device}_kernels_per_call") == 8
        assert value(m, f"recorded_{device}_host_ops_per_call") == 16
        assert 8.9 < value(m, f"recorded_{device}_bytes_ratio") < 9.1
        # 11 reads/writes of x-sized tensors against a fused call's 2 (7 of them float32: the table's full_size_ios row)
        assert value(m, f"recorded_{device}_full_size_ios") == 11
    assert value(m, "recorded_h100_median_kernel_us") > value(m, "recorded_mi300x_median_kernel_us") > 0
    assert (out / "recorded_naive_call.png").stat().st_size > 10_000


def check_03_fused_rms_norm(m, out):
    assert value(m, "errors_within_tolerance") is True
    assert value(m, "dispatches_fused_rms_norm") is True
    if BACKEND == "cpu":  # torch 2.13 decomposes _fused_rms_norm on cpu into the naive chain
        assert value(m, "fused_device_ops_per_call") == value(m, "naive_device_ops_per_call")
    elif not COUNTS_DEVICE_OPS:
        assert not_counted(value(m, "fused_device_ops_per_call"))
    else:
        assert value(m, "fused_device_ops_per_call") < value(m, "naive_device_ops_per_call")
    if BACKEND == "cpu":  # aten::add ran in place there (aten::add_): changed form, not removed
        assert "aten::add" not in value(m, "ops_removed_by_fusion")
    # the recorded torch.nn.RMSNorm (MI300X, TraceLens): one kernel per call
    assert value(m, "recorded_fused_kernels_per_call") == 1


def check_A2_checks_naive_and_fused(m, out):
    # 03's byte model: the naive call's bytes priced at the fused calls' rate take longer than the naive kernels
    # did (a small shape's rate), the fused minimum at the naive call's own rate less
    assert value(m, "recorded_fused_gb_per_s") > 0
    naive_us = value(m, "recorded_h100_naive_kernel_us")
    assert value(m, "recorded_h100_naive_at_fused_rate_us") > naive_us > value(m, "recorded_h100_fused_min_at_naive_rate_us") > 0
    # the one printed saving: the naive kernel time less the fused minimum at the naive kernels' own rate
    saved = value(m, "recorded_h100_saved_estimate_us")
    assert saved == pytest.approx(naive_us - value(m, "recorded_h100_fused_min_at_naive_rate_us"))
    assert 0 < value(m, "recorded_mi300x_saved_estimate_us") and 0 < saved < naive_us
    # the recorded A100 trace (data/recorded): a launch-bound forward, its idle gaps mostly opened by late launches
    assert value(m, "recorded_idle_gaps") >= 1 and 0 < value(m, "recorded_busy_share") < 1
    assert 0 < value(m, "recorded_idle_launched_late_us") <= value(m, "recorded_idle_us")
    # host time per op against the device time of the kernels it launched
    assert 0 < value(m, "recorded_ops_host_longer") <= value(m, "recorded_ops_with_kernels")
    assert value(m, "recorded_host_us") > value(m, "recorded_device_us") > 0
    assert (out / "recorded_host_vs_device.png").stat().st_size > 5_000
    assert (out / "naive.trace.json").stat().st_size > 0 and (out / "torch.rms_norm.trace.json").stat().st_size > 0
    # one recorded Qwen2RMSNorm call recounted from its op shapes agrees with 02's figures and 03's saving
    assert value(m, "recount_kernels") == 8 and value(m, "recount_full_size_ios") == 11
    assert value(m, "recount_matches_call_table") is True and value(m, "recount_matches_saving") is True


def check_04_torch_compile(m, out):
    assert value(m, "errors_within_tolerance") is True
    assert value(m, "graph_count") == 1 and value(m, "graph_break_count") == 0
    if COUNTS_DEVICE_OPS:
        assert value(m, "compiled_device_ops_per_call") < value(m, "naive_device_ops_per_call")
    assert value(m, "cold_over_warm") > 1  # compiling costs more than a warm call
    if BACKEND != "neuron":
        assert value(m, "generated_kernels") >= 1
        assert (out / "inductor_generated_code.py").stat().st_size > 1_000
    # the compiled call writes only its output; the naive one ~3x the input
    assert value(m, "compiled_allocated_over_input") < 1.5
    # the two verdicts rest on the published ratios (re-checked by assert_claims_hold)
    assert {tuple(c["metrics"]) for c in value(m, "claims")} == {("compiled_over_naive",), ("compiled_over_fused",)}


def check_05_compare_variants(m, out):
    for dtype in ("float32", "bfloat16"):
        for v in ("naive", "rms_norm", "compile"):
            assert value(m, f"err_{dtype}_{v}") is not None
    for shape in ("small", "large"):
        assert value(m, f"{shape}_copy_over_copy") == 1.0
        if COUNTS_DEVICE_OPS:
            assert value(m, f"{shape}_compile_device_ops") < value(m, f"{shape}_naive_device_ops")
        for v in ("naive", "rms_norm", "compile"):  # nothing beats reading and writing once, by much
            assert value(m, f"{shape}_{v}_over_copy") > 0.5
    # at the (CI) large shape the naive chain moves several times the bytes of the compiled kernel
    assert value(m, "large_naive_alloc_bytes") > 2 * value(m, "large_compile_alloc_bytes")
    claims = value(m, "claims")
    for shape in ("small", "large"):  # the floor is checked against a same-bytes triad in the same rounds
        assert value(m, f"{shape}_copy_gb_per_s") > 0 and value(m, f"{shape}_triad_gb_per_s") > 0
        assert isinstance(value(m, f"{shape}_floor_sound"), bool)
        # the floor gates the ranking: a flagged floor ranks nothing and claims nothing at that shape
        ranked = [c for c in claims if c["metrics"][0].startswith(f"{shape}_") and c["metrics"][0].endswith("_over_copy")]
        if not value(m, f"{shape}_floor_sound"):
            assert ranked == [], (shape, ranked)
        else:  # one claim over the whole order, or one "<" per pair of names in consecutive groups (Ranking.claims)
            assert all(c["relation"] in ("<", "busy") for c in ranked), (shape, ranked)
            assert len({tuple(c["metrics"]) for c in ranked}) == len(ranked), (shape, ranked)  # no pair claimed twice
            assert len(ranked) == 1 or all(c["relation"] == "<" and len(c["metrics"]) == 2 for c in ranked), (shape, ranked)
            # the compiled kernel and the naive chain are far apart at the large shape: something is claimed there
            assert shape == "small" or ranked, (shape, ranked)
        # the three pairs are compared directly, floor or not
        assert sum(c["metrics"][0].startswith(f"{shape}_") and "_speedup_over_" in c["metrics"][0] for c in claims) == 3
        # against the device memory's nominal bandwidth where it reports one: a copy cannot beat the peak
        if value(m, "nominal_memory_gb_per_s") is None:
            assert value(m, f"{shape}_copy_over_nominal") is None
        else:
            assert 0 < value(m, f"{shape}_copy_over_nominal") <= 1.05
    # one ranking: the best large variant is the first of the large ranking, and none where it was withheld
    large = [c for c in claims if c["relation"] == "<" and c["metrics"][0].startswith("large_")]
    if value(m, "large_floor_sound"):
        assert value(m, "best_large_variant") in ("naive", "torch.rms_norm", "torch.compile")
        if large:  # a quiet machine: ranked
            first = {
                "naive": "large_naive_over_copy",
                "torch.rms_norm": "large_rms_norm_over_copy",
                "torch.compile": "large_compile_over_copy",
            }
            ranking = [c for c in large if c["metrics"][0].endswith("_over_copy")]
            lefts = {c["metrics"][0] for c in ranking}
            rights = {name for c in ranking for name in c["metrics"][1:]}
            # the best sits in the lowest group: below another in some claim, above none (one claim over the whole
            # order, or one per pair across consecutive groups, where the lowest group may hold a tie)
            best = first[value(m, "best_large_variant")]
            assert best in lefts and best not in rights, (best, ranking)
    else:
        assert value(m, "best_large_variant") is None
    if BACKEND != "cuda":  # a CPU and torch-neuronx report none (a cuda torch may not either: the note says why)
        assert value(m, "nominal_memory_gb_per_s") is None and m["nominal_memory_gb_per_s"]["note"]
    assert (out / "variants_over_copy.png").stat().st_size > 10_000


def check_06_reading_traces(m, out):
    lanes = set(value(m, "lanes_present"))
    assert "framework" in lanes
    categories = value(m, "trace_categories")  # recorded per run: which categories, and where they went
    assert categories["cpu_op"] == "framework" and set(categories.values()) <= lanes
    assert value(m, "device_ops_counted") is (BACKEND != "neuron")
    assert ("device" in lanes) == (BACKEND == "cuda")  # on neuron device-like events are "unverified"
    if COUNTS_DEVICE_OPS:
        assert value(m, "naive_device_ops_per_step") > value(m, "compile_device_ops_per_step")
        assert value(m, "naive_idle_gaps") >= 1  # separate ops leave gaps between them
    if BACKEND == "cpu":
        assert value(m, "compile_idle_gaps") == 0  # one compiled kernel call: nothing to wait between
    for v in ("naive", "rms_norm", "compile"):
        assert value(m, f"{v}_busy_us") > 0 and value(m, f"{v}_host_only_us") >= 0
    if BACKEND != "neuron":  # no Neuron profile, so no NEFF executions to count
        assert value(m, "neuron_profile_device_executions") is None
    assert (out / "timeline.png").stat().st_size > 10_000
    assert (out / "recorded_timeline.png").stat().st_size > 10_000


def check_07_shapes_and_recompiles(m, out):
    distinct, limit = value(m, "distinct_lengths"), CI_PARAMETERS["RECOMPILE_LIMIT"]
    assert value(m, "static_compiles") == min(distinct, limit)  # one graph per distinct shape, up to the limit
    assert value(m, "static_eager_fallbacks") == max(0, distinct - limit)
    assert 1 <= value(m, "bucketed_compiles") <= len(CI_PARAMETERS["BUCKETS"])
    assert value(m, "bucketed_padded_rows") > 0  # the CI stream's lengths are not all bucket sizes
    if BACKEND != "neuron" and distinct > 2:  # dynamic=True: one graph, plus one for the 0/1 specialisation
        assert value(m, "dynamic_compiles") < value(m, "static_compiles")
    for name in ("static", "dynamic", "bucketed"):
        if f"{name}_max_error" in m:
            assert value(m, f"{name}_max_error") <= m[f"{name}_max_error"]["tolerance"]
    # a fresh on-disk cache: the first process misses, a second process with the same cache hits
    assert value(m, "first_process_cache_hits") == 0 and value(m, "second_process_cache_hits") >= 1
    assert value(m, "second_process_compile_s") < value(m, "first_process_compile_s")
    # the second process paid its one-off compile costs on the warm-up, recorded apart from the strategies
    assert json.loads((out / "second_process.json").read_text())["warmup_s"] > 0
    assert (out / "cumulative_time.png").stat().st_size > 10_000
    assert "neuron_static_compiles_estimate" not in m  # an expectation, not a finding: A5 publishes it, as an estimate


def check_08_many_processes(m, out):
    assert value(m, "ranks") == CI_PARAMETERS["RANKS"] and value(m, "traces_loaded") is True
    assert value(m, "straggler_identified") == 1  # the notebook's STRAGGLER_RANK
    waits = {r: value(m, f"rank{r}_wait_on_ms") for r in range(CI_PARAMETERS["RANKS"])}
    assert all(waits[r] > waits[1] for r in waits if r != 1)  # the others waited for the straggler
    assert value(m, "straggler_compute_ratio") > 1  # per slow step, its compute over the slowest other's
    # a failing rank: reported by rank, first, and nothing left running
    assert value(m, "failure_first_rank") == CI_PARAMETERS["RANKS"] - 1
    assert value(m, "failure_ranks_reported") == list(range(CI_PARAMETERS["RANKS"]))
    assert value(m, "failure_exit_code") not in (0, None) and value(m, "failure_left_running") is False
    for r in range(CI_PARAMETERS["RANKS"]):
        assert (out / "ranks" / f"rank{r}.trace.json").stat().st_size > 1000
    # the whole output is kept beside the ranks' files, the rank that failed on purpose included
    assert "failed on purpose" in (out / "failure" / "launch.log").read_text()
    assert (out / "ranks_timeline.png").stat().st_size > 10_000


def check_A5_ranks_and_shapes_checks(m, out):
    ranks = CI_PARAMETERS["RANKS"]
    # 08's steps without the straggler: who arrived last is counted over the off steps (every other recorded
    # step), with the chance that random order does the same. (Comparing the ranks' p10-p90 waits instead fails
    # by chance: the last rank's wait is zero by definition; analysis/rank_view.ArrivalOrder says why.)
    last = {int(r): n for r, n in value(m, "off_last_arrivals").items()}
    off_steps = NOTEBOOK_CI_PARAMETERS["08_many_processes"]["ACTIVE"] // 2
    assert sorted(last) == list(range(ranks)) and sum(last.values()) == off_steps
    assert value(m, "off_order_chance") == pytest.approx(chance_some_rank_last(off_steps, ranks, max(last.values())))
    assert value(m, "straggler_identified") == 1
    # the job checked is the one 08 ran in the same run folder, not one of A5's own: the same straggler, and
    # the same median waits of the other ranks on the straggler's steps
    ran = read_metrics(out.parent / "08_many_processes")["notebooks"]["08_many_processes"]
    assert value(m, "straggler_identified") == value(ran, "straggler_identified")
    others = [value(ran, f"rank{r}_wait_on_ms") for r in range(ranks) if r != value(ran, "straggler_identified")]
    assert value(m, "others_wait_on_ms") == pytest.approx(min(others))
    assert not (out / "ranks").exists()
    # off steps wait far less than on steps, though not nothing: after a slow step the straggler may leave the
    # all-reduce later and can start the next step late (largest off wait measured: 1%-24% of the cost)
    assert value(m, "off_wait_max_ms") < 0.5 * value(m, "others_wait_on_ms")
    # the profiler's all_reduce regions and the ranks' stamps time the same phase (a preemption may stretch one)
    assert abs(value(m, "clock_median_gap_ms")) < 1.0
    # with 2 ranks the lag ranges are dropped: "the others" is one rank, and the step count says it
    assert len(value(m, "exchange_verdicts")) == ranks * (ranks - 1) // 2 + (4 if ranks > 2 else 2) + 2 * ranks
    # the recorded job: rank 1 arrived last in all 4 collectives that ended together, which chance does in 2 * 2**-4
    assert value(m, "recorded_last_arrivals") == {"0": 0, "1": 4}
    assert value(m, "recorded_order_chance") == pytest.approx(chance_some_rank_last(4, 2, 4))
    assert (out / "recorded_collective_waits.png").stat().st_size > 5_000
    # 07's stream: every recompile reason accounted for; the Trainium figure is an estimate built from counts
    distinct, limit = value(m, "distinct_lengths"), CI_PARAMETERS["RECOMPILE_LIMIT"]
    past = distinct > limit
    assert value(m, "static_compiles") == min(distinct, limit) and value(m, "static_eager_fallbacks") == max(0, distinct - limit)
    assert value(m, "recompile_reasons_logged") == value(m, "static_compiles") - (0 if past else 1)
    assert value(m, "limit_warnings_logged") == int(past)
    assert value(m, "neuron_static_compiles_estimate") == (
        value(m, "static_compiles") + value(m, "static_eager_fallbacks") * value(m, "eager_call_ops")
    )
    assert "fullgraph" in (value(m, "fullgraph_limit_error") or "")
    assert all(n.startswith("Torch-Compiled Region: 0/") for n in value(m, "compiled_region_names"))
    assert value(m, "second_process_cache_hits") >= 1
    # the stream checked is the one 07 served in the same run folder, not one of A5's own
    served = read_metrics(out.parent / "07_shapes_and_recompiles")["notebooks"]["07_shapes_and_recompiles"]
    for name in ("distinct_lengths", "static_compiles", "static_eager_fallbacks", "second_process_cache_hits"):
        assert value(m, name) == value(served, name), name


def check_09_trainium_device_view(m, out):
    # recorded trn2 data: the same figures on every backend
    assert len(value(m, "profiles")) == 4
    for dtype in ("bf16", "fp32"):
        assert value(m, f"fused_{dtype}_hbm_bytes") < value(m, f"baseline_{dtype}_hbm_bytes")
        assert value(m, f"fused_{dtype}_total_us") < value(m, f"baseline_{dtype}_total_us")
        assert value(m, f"{dtype}_hbm_saved_bytes") == value(m, f"{dtype}_intermediates_bytes")
        for kernel in ("baseline", "fused"):
            key = f"{kernel}_{dtype}"
            assert value(m, f"{key}_hbm_matches_source") is True
            # ranked by computing instructions, not by lane activity (which holds waits): the matrix engine
            assert value(m, f"{key}_longest_computing_engine") == "tensor"
            for engine in ("tensor", "vector", "scalar", "gpsimd", "sync"):
                lane_us = value(m, f"{key}_{engine}_busy") * value(m, f"{key}_total_us")
                assert 0 <= value(m, f"{key}_{engine}_computing_us") <= lane_us * 1.005
    assert any("DMA metadata" in w for w in value(m, "warnings")) and value(m, "warnings_in_every_profile") is True
    assert (out / "device_lanes.png").stat().st_size > 10_000
    executed = json.loads((out.parent.parent / "09_trainium_device_view.ipynb").read_text())
    assert executed["metadata"]["papermill"]["duration"] <= 30, "notebook 09 must run within 30 s"


def check_A3_copy_floor_checks(m, out):
    for shape in ("small", "large"):
        assert isinstance(value(m, f"{shape}_floor_sound"), bool)
        assert value(m, f"{shape}_copy_over_triad") > 0 and value(m, f"{shape}_copy_into_over_triad") > 0
        # a copy that allocates its output cannot be much faster than one into memory it already has
        assert value(m, f"{shape}_copy_over_copy_into") > 0.7
        assert value(m, f"{shape}_copy_spread") >= 0 and value(m, f"{shape}_wide_spreads") >= 0
        for v in ("naive", "rms_norm", "compile"):
            assert value(m, f"{shape}_{v}_cpu_us_over_time_us") > 0
    assert value(m, "copy_byte_large_over_small") > 0
    assert value(m, "cpu_us_order_agrees") in ("holds", "does not hold", "withheld")
    # the naive source's graph has 6 operations; the profile counts at least as many on cpu (mean nests sum and div_)
    assert value(m, "naive_graph_ops") == 6
    if BACKEND == "cpu":
        assert value(m, "naive_device_ops_per_call") >= value(m, "naive_graph_ops")
    if fixed_layout_prefix():  # execute_notebook started the kernel under setarch -R
        assert value(m, "address_layout") == "fixed"
    # the floor checked is the one 05 measured in the same run folder, not one of A3's own
    served = read_metrics(out.parent / "05_compare_variants")["notebooks"]["05_compare_variants"]
    for shape in ("small", "large"):
        measured = value(served, f"{shape}_copy_gb_per_s") / value(served, f"{shape}_triad_gb_per_s")
        assert value(m, f"{shape}_copy_over_triad") == pytest.approx(measured)
        assert value(m, f"{shape}_floor_sound") == value(served, f"{shape}_floor_sound")


def check_A4_trace_reconciliation(m, out):
    # 06: on cpu the wrappers' time lies inside the counted operations (elsewhere the check is skipped, None)
    if BACKEND == "cpu":
        assert value(m, "to_copy_us") > 0 and value(m, "to_copy_inside_counted_us") == pytest.approx(value(m, "to_copy_us"))
    # 06: HTA beside the series on the recorded A100 step (tests/test_hta_view.py holds the full agreement test)
    assert abs(value(m, "hta_minus_series_span_us")) <= 1
    assert value(m, "hta_minus_series_busy_us") == pytest.approx(value(m, "recorded_sync_records_us"), abs=1)
    if BACKEND == "cpu":  # no GPU stream in a cpu trace: HTA's breakdowns have nothing to read
        assert value(m, "hta_errors_this_run") == ["idle-time breakdown", "temporal breakdown"]
    elif BACKEND == "cuda":
        assert value(m, "hta_errors_this_run") == []
    # 06's recorded A100 step: the event synchronize blocked the host longer than its kernel still ran
    assert 0 < value(m, "recorded_event_sync_device_left_us") <= value(m, "recorded_event_sync_wait_us")
    # 09: every checked counter agrees with its data, *_percent are fractions of 1 in the recorded files
    assert value(m, "unit_checks_hold") is True and value(m, "unit_check_worst") <= m["unit_check_worst"]["tolerance"]
    assert value(m, "percent_counters_are_fractions") is True
    # a lane leaves out the semaphore waits (EVENT_SEMAPHORE) and holds every other instruction, the range clears
    # included: within the unit check's 0.5% in the recorded files (0.37% worst; leaving the clears out misses by 14%)
    assert value(m, "lane_against_non_semaphore_worst") <= 0.005
    assert value(m, "static_dma_matches") == 2
    assert any("DMA metadata" in w for w in value(m, "warnings"))


CHECKS = {name.removeprefix("check_"): fn for name, fn in globals().items() if name.startswith("check_")}


class SeriesRun:
    """One run folder for every notebook, as `make run` has: an appendix reads what the lesson
    notebook it checks saved there (helpers.series NotebookInfo.reads)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.ran = folder, set()

    def run(self, path: Path) -> dict:
        """Run `path` into the folder (its executed copy beside the folder); what it reads first."""
        for stem in notebook_info(path.stem).reads:  # selected alone (-k A5): what it reads runs first
            if stem not in self.ran:
                self.run(next(p for p in NOTEBOOKS if p.stem == stem))
        executed = self.folder.parent / path.name
        metrics = run_notebook(path, self.folder, executed, **NOTEBOOK_CI_PARAMETERS.get(path.stem, {}))
        self.ran.add(path.stem)
        return metrics


@pytest.fixture(scope="session")
def series_run(tmp_path_factory):
    return SeriesRun(tmp_path_factory.mktemp("series") / "run")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(path, series_run):
    assert path.stem in CHECKS, f"{path.name} has no metric checks: add check_{path.stem} to this file"
    metrics = series_run.run(path)
    CHECKS[path.stem](metrics, series_run.folder / path.stem)
    assert_claims_hold(metrics, path.stem)


def assert_claims_hold(metrics: dict, stem: str) -> None:
    """Every conclusion the notebook printed agrees with the metrics it cites (analysis.claims)."""
    if stem in NOTEBOOKS_WITH_CLAIMS:
        claims = value(metrics, "claims")
        assert claims, f"{stem} published no claims for its summary"
        assert claims_problems(claims, metrics) == [], f"{stem}: a conclusion disagrees with its own metrics"


# The notebooks whose summaries state rankings and comparisons, and a second parameter set that
# turns their shapes around (the first is CI_PARAMETERS): the same sentences must still agree.
NOTEBOOKS_WITH_CLAIMS = (
    "04_torch_compile",
    "05_compare_variants",
    "06_reading_traces",
    "08_many_processes",
    "09_trainium_device_view",
)
CONTRASTING_PARAMETERS = {"TOKENS": 8, "HIDDEN": 64, "SMALL_TOKENS": 64, "SMALL_HIDDEN": 512}


@pytest.mark.parametrize("stem", ("05_compare_variants", "06_reading_traces"))  # whose conclusions depend on the shape
def test_conclusions_hold_at_contrasting_parameters(stem, tmp_path):
    path = next(p for p in NOTEBOOKS if p.stem == stem)
    overrides = {**NOTEBOOK_CI_PARAMETERS.get(stem, {}), **CONTRASTING_PARAMETERS}
    metrics = run_notebook(path, tmp_path / "run", tmp_path / path.name, **overrides)
    assert_claims_hold(metrics, stem)


@pytest.fixture(scope="session")
def student_dir(tmp_path_factory):
    from series_tools.student import write_student_copies

    out = tmp_path_factory.mktemp("student")
    write_student_copies(NOTEBOOKS, out)
    return out


def names_bound_and_read(source: str) -> tuple[set[str], set[str]]:
    """Names a cell binds (assignments, defs, imports, loop targets) and names it reads."""
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source))
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound, read


def solution_dependencies(cells: list[dict]) -> list[str]:
    """Problems a student copy would hit: a later cell reading a name that only a solution cell
    binds, or a solution that publishes metrics (the copy would publish fewer)."""
    problems, only_in_solutions = [], {}
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        bound, read = names_bound_and_read(source)
        if "solution" in cell["metadata"].get("tags", []):
            if ".publish(" in source:
                problems.append(f"cell {index}: a solution publishes metrics")
            only_in_solutions.update({name: index for name in bound})
            continue
        for name in sorted(read & set(only_in_solutions)):
            problems.append(f"cell {index} reads {name!r}, bound only in solution cell {only_in_solutions[name]}")
        for name in bound:
            only_in_solutions.pop(name, None)
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"student-{p.stem}" for p in NOTEBOOKS])
def test_student_copy_needs_nothing_from_a_solution(path, student_dir):
    """Without its solutions a notebook still has every name its later cells read and publishes
    the same metrics. Static, so every notebook is covered without running each one twice; one
    copy is executed below."""
    copy = json.loads((student_dir / path.name).read_text())
    assert not any("solution" in c["metadata"].get("tags", []) for c in copy["cells"])
    stubs = [c for c in copy["cells"] if "exercise" in c["metadata"].get("tags", []) and c["cell_type"] == "code"]
    assert stubs and all("".join(c["source"]).lstrip().startswith("# Exercise") for c in stubs)
    assert solution_dependencies(json.loads(path.read_text())["cells"]) == [], f"{path.name}: the student copy would break"


def test_solution_dependencies_are_caught():
    def cell(source, *tags):
        return {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)}}

    cells = [
        cell("x = 1"),
        cell("%matplotlib inline\ny = x + 1\nimport os.path", "solution"),
        cell("print(y, os.sep, x)"),
        cell("y = 2"),
        cell("print(y)"),
        cell("session.publish({})", "solution"),
    ]
    assert solution_dependencies(cells) == [
        "cell 2 reads 'os', bound only in solution cell 1",
        "cell 2 reads 'y', bound only in solution cell 1",
        "cell 5: a solution publishes metrics",
    ]


def test_student_copy_runs_end_to_end(student_dir, tmp_path):
    """One copy, executed: the stubs run as no-ops and the metrics checks still pass."""
    path = next(p for p in NOTEBOOKS if p.stem.startswith("01_"))
    metrics = run_notebook(student_dir / path.name, tmp_path / "run", tmp_path / path.name, cwd=path.parent)
    CHECKS[path.stem](metrics, tmp_path / "run" / path.stem)


def test_every_notebook_is_found():
    assert [p.stem for p in NOTEBOOKS] == [info.stem for info in SERIES], "discovery and the series table disagree"
    assert set(CHECKS) == {p.stem for p in NOTEBOOKS}, "every notebook has its metric checks, and no check is orphaned"


def test_wrong_parameter_type_stops_with_its_name(tmp_path):
    path = ROOT / "notebooks" / "01_profiler_setup.ipynb"
    with pytest.raises(pm.PapermillExecutionError) as err:
        execute_notebook(path, tmp_path / "out.ipynb", {"HIDDEN": "abc", "OUT_DIR": str(tmp_path)}, cwd=path.parent)
    assert err.value.ename == "ParameterError"
    assert "HIDDEN must be an integer >= 1, got 'abc'" in err.value.evalue
    assert len(err.value.traceback) == 1  # the message, not a traceback from inside torch
