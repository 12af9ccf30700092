"""lesson.published_metrics: notebooks 03 and 04 publish the same names and figures as before the move,
from real recorded traces (03) and synthetic interleaved timings (04)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from analysis import FUSED_CALL, NAIVE_CALL, call_kernels, call_table, fused_comparison, load_trace, recorded_rmsnorm_path
from analysis.claims import check_claims
from analysis.timing import Timing, paired_ratio
from analysis.verdicts import judge_ratio
from lesson.published_metrics import byte_model_metrics, compile_metrics, fused_metrics

WOBBLE = np.array([0.98, 1.0, 1.02, 0.99, 1.01, 1.0, 0.97, 1.03, 1.0, 1.0])  # the same each round: steady ratios


def block(medians_us: dict[str, float]) -> dict[str, Timing]:
    """SYNTHETIC timings of one interleaved block, 10 rounds around each median."""
    return {name: Timing(name, median * WOBBLE, inner=1) for name, median in medians_us.items()}


def test_03s_metrics_and_a2s_byte_model_metrics():
    norms = load_trace(recorded_rmsnorm_path("mi300x_norms"))
    kernels = call_kernels(norms, FUSED_CALL)
    devices = {"an NVIDIA H100": "h100_qwen", "an AMD MI300X": "mi300x_qwen"}
    naive = {d: call_table(load_trace(recorded_rmsnorm_path(k)), NAIVE_CALL) for d, k in devices.items()}
    priced = pd.DataFrame({d: fused_comparison(calls, kernels) for d, calls in naive.items()})
    timings = block({"naive": 300.0, "torch.rms_norm": 303.0})
    x = torch.zeros(64, 32)
    per_call = {
        "naive": {"device_ops_per_call": 7.0, "allocated_bytes_per_call": 3 * x.nbytes + 256},
        "torch.rms_norm": {"device_ops_per_call": 7.0, "allocated_bytes_per_call": 3 * x.nbytes},
    }
    m = fused_metrics(
        timings,
        paired_ratio(timings, "torch.rms_norm", "naive"),
        per_call,
        {"naive": "compute ops", "torch.rms_norm": "compute ops"},
        x,
        [],
        True,
        {"naive": 1e-7, "torch.rms_norm": 2e-7},
        1e-5,
        call_table(norms, FUSED_CALL, kernels),
    )
    assert m["fused_over_naive"]["value"] == pytest.approx(1.01)
    assert m["fused_allocated_over_input"]["value"] == pytest.approx(3.0)
    assert m["recorded_fused_kernels_per_call"]["value"] == 1.0 and m["errors_within_tolerance"]["value"] is True
    assert "recorded_h100_saved_estimate_us" not in m  # the byte model is A2's
    m = byte_model_metrics(priced, "a byte model")
    assert m["recorded_fused_gb_per_s"]["value"] > 0
    saved = m["recorded_mi300x_saved_estimate_us"]["value"]
    h100 = priced["an NVIDIA H100"]
    assert m["recorded_h100_saved_estimate_us"]["value"] == pytest.approx(
        m["recorded_h100_naive_kernel_us"]["value"] - m["recorded_h100_fused_min_at_naive_rate_us"]["value"]
    )
    assert 0 < saved < priced.at["naive_kernel_us", "an AMD MI300X"] and h100["naive_at_fused_rate_us"] > h100["naive_kernel_us"]
    assert m["recorded_h100_saved_estimate_us"]["note"] == "a byte model"


def test_04s_metrics_publish_every_metric_its_claims_cite_and_the_claims_hold():
    timings = block({"naive": 300.0, "torch.rms_norm": 310.0, "torch.compile": 100.0})
    x = torch.zeros(64, 32)

    def report(name, ops, alloc):
        row = {"alloc_over_input": alloc}
        return SimpleNamespace(
            name=name,
            timing=timings[name],
            per_call={"device_ops_per_call": ops},
            trace=SimpleNamespace(device_op_kind="compute ops"),
            row=lambda: row,
            max_error=1e-7,
            tolerance=1e-5,
            error_ok=True,
        )

    reports = {n: report(n, ops, a) for n, ops, a in (("naive", 7, 3.0), ("torch.rms_norm", 7, 3.0), ("torch.compile", 1, 1.0))}
    ratios = {
        "compiled_over_naive": paired_ratio(timings, "torch.compile", "naive"),
        "compiled_over_fused": paired_ratio(timings, "torch.compile", "torch.rms_norm"),
    }
    verdicts = [judge_ratio(r) for r in ratios.values()]
    cold = {"seconds": 0.5, "graphs captured before": 0, "cache files added": 36, "graphs": 1}
    explanation = SimpleNamespace(graph_count=1, graph_break_count=0)
    m = compile_metrics(cold, explanation, ["cpp_fused_add_mean_mul_pow_rsqrt_0"], reports, ratios, verdicts, x, True)
    assert [v.kind for v in verdicts] == ["faster", "faster"] and check_claims(m["claims"]["value"], m) == []
    assert m["cold_over_warm"]["value"] == pytest.approx(5000.0) and m["generated_kernels"]["value"] == 1
    assert m["compiled_over_naive"]["value"] == pytest.approx(1 / 3) and m["inductor_cache_files_added"]["value"] == 36
    assert m["cold_call_s"]["note"] == "graphs captured before 0, cache files added 36, graphs 1"
    no_inductor = compile_metrics(cold, explanation, None, reports, ratios, verdicts, x, False)
    assert no_inductor["generated_kernels"]["value"] is None and no_inductor["inductor_cache_files_added"]["value"] is None
    assert no_inductor["compile_after_setup_s"]["value"] is None  # not timed: empty, not zero
    after = compile_metrics(cold, explanation, None, reports, ratios, verdicts, x, False, {"seconds": 0.05, "graphs": 1})
    assert after["compile_after_setup_s"]["value"] == pytest.approx(0.05) and after["cold_call_s"]["value"] == 0.5
