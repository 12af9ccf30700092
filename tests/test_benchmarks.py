"""The benchmarks run (they print figures and assert nothing about speed: see benchmarks/)."""

import importlib.util
import subprocess
import sys

import pytest

from helpers.series import REPO_ROOT


def benchmark_module(name: str):
    """A benchmark script imported by path (benchmarks/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_drift_benchmark_prints_every_window_and_the_deviations():
    out = subprocess.run(
        [sys.executable, "benchmarks/drift_benchmark.py", "--seconds", "0.5", "--tokens", "64", "--hidden", "256"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    windows = [line for line in lines if line.strip()[:1].isdigit()]
    assert windows and all(len(line.split()) == 4 for line in windows)
    for name in ("naive median", "copy median", "naive/copy paired ratio"):
        assert any(line.startswith(name) and "largest deviation" in line for line in lines), name


def synthetic_05_metrics(scale: float, nominal: float | None) -> dict:
    """SYNTHETIC notebook-05 metrics in the published layout: every ratio `scale` times a base value."""
    from helpers.series import RMSNORM_VARIANTS, VARIANT_KEYS

    m = {"nominal_memory_gb_per_s": {"value": nominal, "unit": "GB/s", "note": "FAKE device"}}
    for shape in ("small", "large"):
        for name in RMSNORM_VARIANTS:
            key = VARIANT_KEYS[name]
            m[f"{shape}_{key}_over_copy"] = {"value": 2.0 * scale, "unit": "ratio"}
            m[f"{shape}_{key}_speedup_over_naive"] = {"value": 1.5, "unit": "ratio"}
        m[f"{shape}_copy_over_copy"] = {"value": 1.0, "unit": "ratio"}
        m[f"{shape}_copy_gb_per_s"] = {"value": 10.0 * scale, "unit": "GB/s"}
        m[f"{shape}_triad_gb_per_s"] = {"value": 12.0, "unit": "GB/s"}
        m[f"{shape}_copy_over_nominal"] = {"value": 0.5 * scale if nominal else None, "unit": "fraction"}
    return m


def test_ratio_benchmark_tables_report_each_figures_largest_deviation():
    bench = benchmark_module("ratio_benchmark")
    bandwidths_of, deviation_table, ratios_of = bench.bandwidths_of, bench.deviation_table, bench.ratios_of
    runs = [synthetic_05_metrics(s, nominal=4000.0) for s in (1.0, 1.1, 0.95)]
    lines, worst = deviation_table([ratios_of(m) for m in runs], "ratio")
    assert worst == pytest.approx(0.1)  # the run at 1.1x the median
    row = next(line for line in lines if line.startswith("large_naive_over_copy"))
    assert row.split()[1:] == ["2.00", "2.20", "1.90", "2.00", "10.0%"]
    assert not any(line.startswith("small_copy_over_copy") for line in lines)  # the floor over itself is no ratio
    bandwidth, _ = deviation_table([bandwidths_of(m) for m in runs], "bandwidth", "6.1f")
    assert next(line for line in bandwidth if line.startswith("large_copy_percent_of_nominal")).split()[1:4] == [
        "50.0",
        "55.0",
        "47.5",
    ]
    # where no nominal bandwidth was published (cpu), that row is absent rather than zero
    cpu = [bandwidths_of(synthetic_05_metrics(1.0, nominal=None))]
    assert set(cpu[0]) == {f"{s}_{k}_gb_per_s" for s in ("small", "large") for k in ("copy", "triad")}


def test_ratio_benchmark_tells_a_flagged_busy_run_and_a_flipped_conclusion():
    """SYNTHETIC notebook-05 claims: a withheld ("busy") claim is not a flip; a new ranking is."""
    bench = benchmark_module("ratio_benchmark")
    ranking = {"relation": "<", "metrics": ["small_rms_norm_over_copy", "small_naive_over_copy"], "text": ""}
    speedup = {"relation": "below 1", "metrics": ["small_compile_speedup_over_naive"], "text": ""}

    def run(*claims, busy=False):
        m = synthetic_05_metrics(1.0, nominal=None)
        m["claims"] = {"value": list(claims), "unit": "claims"}
        if busy:
            m["small_naive_over_copy"]["contention"] = {"busy": True}
        return m

    quiet = [run(ranking, speedup), run(ranking, {**speedup, "relation": "about 1"})]
    assert not any(map(bench.flagged, quiet))
    withheld = run(ranking, {**speedup, "relation": "busy"}, busy=True)
    assert bench.flagged(withheld) and bench.flipped(withheld, quiet) == [] and bench.withheld(withheld) == 1
    reversed_rank = {**ranking, "metrics": ranking["metrics"][::-1]}
    wrong = run(reversed_rank, {**speedup, "relation": "above 1"}, busy=True)
    assert bench.flipped(wrong, quiet) == [("<", tuple(reversed_rank["metrics"])), ("above 1", tuple(speedup["metrics"]))]
    assert bench.noticed({"other_runnable_at_start": 1.0}) and not bench.noticed({"other_runnable_at_start": 0.1})
    assert not bench.noticed({})  # an environment.json from before the check was recorded


def test_trace_replica_keeps_steps_launch_links_and_flows_unique(tmp_path):
    """The replica of a recorded trace is that trace `copies` times over, nothing merged: every
    copy's steps, kernel-launch links and flows are counted once each."""
    from analysis.device_view import launches
    from analysis.traces import load_trace
    from analysis.recorded import recorded_path

    bench = benchmark_module("trace_benchmark")
    source = recorded_path("event_sync")  # 36 metadata events, 56 timed ones: one step, flows, kernels
    one = load_trace(source)
    written = bench.replicate(source, 200, tmp_path / "replica.json")  # metadata once, then 3 copies
    replica = load_trace(tmp_path / "replica.json")
    copies = len(replica.steps) // len(one.steps)
    assert copies == 3 and written == 36 + 3 * 56
    assert replica.steps["step"].is_unique and replica.steps["ts"].is_monotonic_increasing
    assert (replica.steps["ts"].diff().dropna() > 0).all()
    assert len(replica.events) == 3 * len(one.events)
    assert len(launches(one)) > 0 and len(launches(replica)) == 3 * len(launches(one))
    assert replica.flows.groupby("id").size().max() == one.flows.groupby("id").size().max()
    assert len(one.flows) > 0 and len(replica.flows) == 3 * len(one.flows)


def test_trace_benchmark_times_both_sides_on_one_replica():
    out = subprocess.run(
        [
            sys.executable,
            "benchmarks/trace_benchmark.py",
            "--events",
            "10000",
            "--source",
            "data/recorded/trace_filter__sampled_rank-0.json.gz",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = lines[0].split()
    assert head[:3] == ["replica", "of", "trace_filter__sampled_rank-0.json.gz:"] and int(head[3].replace(",", "")) >= 10_000
    rows = {
        line.split()[0]: line.split() for line in lines if line.split()[0] in ("series", "HTA") and line.split()[1][0].isdigit()
    }
    assert set(rows) == {"series", "HTA"}
    assert rows["series"][4:6] == ["6", "steps"]  # 3 copies of the source's 2 steps
    assert all(float(rows[side][1]) > 0 and float(rows[side][2].replace(",", "")) > 0 for side in rows)
    assert any(line.startswith("series/HTA time ratio") for line in lines)
    assert any(line.startswith("series peak RSS / file size") for line in lines)
