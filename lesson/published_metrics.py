"""What notebooks 01 to 04 publish for `compare`, the regression checks and the tests.

Why a module: the metrics are plumbing, not the lesson; one call keeps each notebook ending on what
it teaches, while the names and figures stay the ones the notebook printed (tests/test_notebooks.py
and the regression checks read them by name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import torch

from analysis.verdicts import Verdict
from helpers.metrics import error_metric, metric, quantity, ratio_metric, timing_metric

RECORDED_DEVICES = {"an NVIDIA H100": "h100", "an AMD MI300X": "mi300x"}  # priced's columns -> metric prefixes


def setup_metrics(
    cold_us: float,
    warm: Any,
    device_time: tuple[bool, str],
    issue_ratio: float,
    unsynced: Any,
    costs: dict[str, tuple[Any, Verdict]],
    trace_path: Path,
    active_steps: int,
) -> dict[str, Any]:
    """Notebook 01's published figures (metrics.json), for the tests and for comparing runs.

    Args:
        cold_us: the first call (us); warm: the steady state's Timing.
        device_time: (captured, why) of lesson.profiling.judge_device_time.
        issue_ratio: time to the last call's return over time to synchronize()'s return.
        unsynced: the ProfileResult profiled without synchronize(), or None where not shown.
        costs: metric name -> (paired ratio, its judge_ratio verdict), the profiler's cost per call size.
        trace_path: the Chrome trace written; active_steps: the schedule's recorded steps.

    Returns:
        name -> metric (helpers.metrics), ready for `session.publish`; the verdicts go under "claims".
    """
    captured, why = device_time
    metrics = {
        "cold_call_us": metric(cold_us, "us"),
        "warm_call_us": timing_metric(warm),
        "cold_over_warm": metric(cold_us / warm.median_us, "ratio"),
        "device_time_captured": metric(captured, "bool", why),
        "issue_over_finish_ratio": metric(issue_ratio, "ratio"),
        "unsynchronized_flagged": metric(None if unsynced is None else not unsynced.device_time_captured, "bool"),
    }
    for name, (ratio, _) in costs.items():
        metrics[name] = ratio_metric(ratio, "per-round time ratio, interleaved")
    metrics |= {
        "trace_bytes": metric(trace_path.stat().st_size, "bytes"),
        "active_steps": metric(active_steps, "steps"),
        "intra_op_threads": metric(torch.get_num_threads(), "threads"),
        "claims": metric([verdict.claim(name).record() for name, (_, verdict) in costs.items()], "claims"),
    }
    return metrics


def naive_call_metrics(
    per_call: dict[str, Any],
    device_op_kind: str,
    timing: Any,
    x: Any,
    allocated_over_input: float,
    idle_share: float,
    error: float,
    tolerance: float,
    device_time: tuple[bool, str],
) -> dict[str, Any]:
    """Notebook 02's published metrics: its ops, allocations and gaps per call, time, error and
    whether device time was captured.

    Args:
        per_call: `analysis.per_call_summary` of the profile; device_op_kind: the trace's `device_op_kind`.
        timing: the `time_per_call` Timing; x: the input (names the timed quantity).
        allocated_over_input: allocated bytes per call over the input's; idle_share: `gap_share`'s share.
        error, tolerance: the max error against float64 and its tolerance.
        device_time: (captured, why) of `lesson.judge_device_time`.

    Returns:
        name -> metric (helpers.metric and kin), ready for `session.publish`.
    """
    units = {"device_ops_per_call": "ops", "allocations_per_call": "allocations", "allocated_bytes_per_call": "bytes"}
    units.update(busy_us_per_call="us", idle_gaps_per_call="gaps", idle_total_us_per_call="us")
    captured, why = device_time
    return {
        **{name.replace("idle_total", "idle"): metric(per_call[name], unit, device_op_kind) for name, unit in units.items()},
        "time_per_call_us": timing_metric(timing, of=quantity("naive", x)),
        "time_spread": metric(timing.spread, "ratio", "(p90-p10)/median"),
        "allocated_over_input": metric(allocated_over_input, "ratio"),
        "idle_share": metric(idle_share, "ratio", "idle gaps / (busy + idle), median over the recorded steps"),
        "max_error": error_metric(error, tolerance),
        "error_within_tolerance": metric(error <= tolerance, "bool", better="true"),
        "device_time_captured": metric(captured, "bool", why),
    }


def fused_metrics(
    timings: dict[str, Any],
    ratio: Any,
    per_call: dict[str, dict[str, float]],
    op_kinds: dict[str, str],
    x: torch.Tensor,
    removed: list[str],
    dispatches_fused: bool,
    errors: dict[str, float],
    tolerance: float,
    fused_calls: pd.DataFrame,
) -> dict[str, dict[str, Any]]:
    """Notebook 03's metrics: both variants' times and ratio, operations, allocations, errors, and the
    recorded MI300X trace's kernels per call (the byte model's rates and estimates: `byte_model_metrics`, A2).

    Args:
        timings: "naive" and "torch.rms_norm" -> their interleaved Timing; ratio: torch.rms_norm / naive
            (analysis.timing.paired_ratio).
        per_call: variant -> `per_call_summary` of its trace; op_kinds: variant -> its trace's `device_op_kind`.
        x: the input (its shape, dtype and bytes name the timings and scale the allocations).
        removed: ops the fused variant no longer runs; dispatches_fused: its tree holds aten::_fused_rms_norm.
        errors: variant -> max error against float64; tolerance: the dtype's.
        fused_calls: `call_table` of the recorded MI300X norms trace.

    Returns:
        name -> metric, ready for `session.publish`.
    """
    fused, naive = per_call["torch.rms_norm"], per_call["naive"]
    metrics = {
        "naive_time_us": timing_metric(timings["naive"], of=quantity("naive", x)),
        "fused_time_us": timing_metric(timings["torch.rms_norm"], of=quantity("torch.rms_norm", x)),
        "fused_over_naive": ratio_metric(ratio, "per-round time ratio, interleaved", of=quantity("torch.rms_norm / naive", x)),
        "naive_device_ops_per_call": metric(naive["device_ops_per_call"], "ops", op_kinds["naive"]),
        "fused_device_ops_per_call": metric(fused["device_ops_per_call"], "ops", op_kinds["torch.rms_norm"]),
        "fused_allocated_over_input": metric(fused["allocated_bytes_per_call"] / (x.numel() * x.element_size()), "ratio"),
        "ops_removed_by_fusion": metric(removed, "names"),
        "dispatches_fused_rms_norm": metric(dispatches_fused, "bool"),
        "fused_max_error": error_metric(errors["torch.rms_norm"], tolerance),
        "errors_within_tolerance": metric(all(e <= tolerance for e in errors.values()), "bool", better="true"),
        "recorded_fused_kernels_per_call": metric(
            float(fused_calls["kernels"].median()), "kernels", "torch.nn.RMSNorm, MI300X, TraceLens"
        ),
    }
    return metrics


def byte_model_metrics(priced: pd.DataFrame, saved_basis: str) -> dict[str, dict[str, Any]]:
    """The byte model's rates and estimates (A2 prices 03's recorded calls): the fused rate, the H100 figures, each
    device's saving at the naive rate.

    Args:
        priced: `fused_comparison` per recorded device, columns "an NVIDIA H100" and "an AMD MI300X".
        saved_basis: how the saved estimate was made (the printed estimate's basis).

    Returns:
        name -> metric, ready for `session.publish`. `recorded_h100_naive_at_fused_rate_us` is kept for
        the tests, which re-check the byte model with it; the notebook never prints it.
    """
    h100 = "an NVIDIA H100"
    metrics = {
        "recorded_fused_gb_per_s": metric(priced.at["fused_gb_per_s", "an AMD MI300X"], "GB/s", "MI300X fused kernel, TraceLens"),
        "recorded_h100_naive_at_fused_rate_us": metric(priced.at["naive_at_fused_rate_us", h100], "us"),
        "recorded_h100_naive_kernel_us": metric(priced.at["naive_kernel_us", h100], "us"),
        "recorded_h100_fused_min_at_naive_rate_us": metric(priced.at["fused_min_at_naive_rate_us", h100], "us"),
    }
    for device, saved_us in priced.loc["saved_at_naive_rate_us"].items():
        metrics[f"recorded_{RECORDED_DEVICES[device]}_saved_estimate_us"] = metric(saved_us, "us", saved_basis)
    return metrics


def compile_metrics(
    cold: dict[str, float],
    explanation: Any,
    kernel_names: list[str] | None,
    reports: dict[str, Any],
    ratios: dict[str, Any],
    verdicts: list[Any],
    x: torch.Tensor,
    inductor: bool,
    after_setup: dict[str, float] | None = None,
) -> dict[str, dict[str, Any]]:
    """Notebook 04's metrics: the cold call and its cache counts, the graphs, the three variants' times,
    the compiled call's ratios, operations, allocations and error, and the verdicts' claims.

    Args:
        cold: the notebook's `cold_call` result ("seconds", "cache files added" and the counters).
        explanation: `torch._dynamo.explain`'s result (its graph_count and graph_break_count).
        kernel_names: the generated kernels' names (None where the compiler is not Inductor).
        reports: "naive", "torch.rms_norm", "torch.compile" -> their VariantReport (`study_variant`).
        ratios: "compiled_over_naive" and "compiled_over_fused" -> their PairedRatio.
        verdicts: the two `judge_ratio` verdicts, in the order of `ratios`.
        x: the input (its shape and dtype name the timings); inductor: the compiler is Inductor.
        after_setup: `cold_call`'s result for a new shape compiled after the first call's one-time setup,
            the compile that repeats per shape (None where not timed: its metric is then empty).

    Returns:
        name -> metric, ready for `session.publish`.
    """
    naive, fused, comp = (reports[n] for n in ("naive", "torch.rms_norm", "torch.compile"))
    denominators = {"compiled_over_naive": "naive", "compiled_over_fused": "torch.rms_norm"}
    cache_note = ", ".join(f"{k} {v}" for k, v in cold.items() if k != "seconds")
    metrics = {
        "cold_call_s": metric(cold["seconds"], "s", cache_note),
        "inductor_cache_files_added": metric(cold["cache files added"] if inductor else None, "files"),
        "warm_call_us": timing_metric(comp.timing, of=quantity("torch.compile", x)),
        "cold_over_warm": metric(cold["seconds"] * 1e6 / comp.timing.median_us, "ratio"),
        "compile_after_setup_s": metric(after_setup["seconds"] if after_setup else None, "s", "a new shape, after the setup"),
        "graph_count": metric(explanation.graph_count, "graphs"),
        "graph_break_count": metric(explanation.graph_break_count, "breaks"),
        "generated_kernels": metric(
            len(kernel_names) if kernel_names is not None else None, "kernels", "Inductor kernels in the generated code"
        ),
        "naive_time_us": timing_metric(naive.timing, of=quantity("naive", x)),
        "fused_time_us": timing_metric(fused.timing, of=quantity("torch.rms_norm", x)),
        "naive_device_ops_per_call": metric(naive.per_call["device_ops_per_call"], "ops"),
        "compiled_device_ops_per_call": metric(comp.per_call["device_ops_per_call"], "ops", comp.trace.device_op_kind),
        "compiled_allocated_over_input": metric(comp.row()["alloc_over_input"], "ratio"),
        "compiled_max_error": error_metric(comp.max_error, comp.tolerance),
        "errors_within_tolerance": metric(naive.error_ok and fused.error_ok and comp.error_ok, "bool", better="true"),
        "claims": metric([v.claim(m).record() for v, m in zip(verdicts, ratios)], "claims"),
    }
    for name, ratio in ratios.items():
        of = quantity(f"torch.compile / {denominators[name]}", x)
        metrics[name] = ratio_metric(ratio, "per-round time ratio, interleaved", of=of)
    return metrics
