"""The Neuron profiler's JSON export reader, on the four real trn2 exports in data/recorded-neuron.

No synthetic stand-in: every test reads the recorded files (or a real file with one value
changed, to show that a check can fail). The relations asserted are the ones the notebook
teaches: the counters agree with the data they summarise, in the units the reader states, and
the unfused kernel's extra HBM traffic is exactly its intermediates.
"""

import gzip
import json

import pytest

from analysis.attention_traffic import RECORDED_NEURON_DIR, attention_hbm_traffic, recorded_case
from analysis.neuron_export import (
    ENGINES,
    UNIT_CHECK_TOLERANCE,
    ExportError,
    interval_union_ns,
    load_export,
    load_exports,
    merged_intervals,
)

CASES = ("baseline_bf16_s512", "baseline_fp32_s512", "fused_bf16_s512", "fused_fp32_s512")
D_HEAD = 128  # kernels/*.py: d_head == PMAX == 128


@pytest.fixture(scope="module")
def exports():
    return load_exports(RECORDED_NEURON_DIR)


def test_all_four_real_exports_load(exports):
    assert tuple(exports) == CASES
    for name, export in exports.items():
        assert export.counter("instance_type") == "trn2.3xlarge"
        assert export.metadata["is_simulation"] is False  # measured on hardware, not simulated
        assert set(export.engine_intervals["engine"]) == set(ENGINES)
        assert export.total_time_ns > 0 and len(export.instructions) > 100 and len(export.dma) > 100
        # every counter carries the profiler's own meaning (terminology), and the meanings are real text
        assert export.summary.loc["hbm_read_bytes", "meaning"].startswith("Total bytes of data read from HBM")
        assert (export.summary["meaning"] != "").mean() > 0.9


@pytest.mark.parametrize("case", CASES)
def test_counters_agree_with_the_data_they_summarise(exports, case):
    """Engine and DMA active times equal the union of their intervals; HBM bytes the instructions' sum."""
    checks = exports[case].unit_checks
    assert len(checks) == 2 * len(ENGINES) + 4
    worst = checks.loc[checks["relative_difference"].idxmax()]
    assert checks["holds"].all(), f"{case}: {worst['counter']} differs by {worst['relative_difference']:.3%}"
    assert (checks["relative_difference"] <= UNIT_CHECK_TOLERANCE).all()
    hbm = checks[checks["counter"].str.startswith("hbm_")]
    assert (hbm["relative_difference"] == 0).all()  # whole bytes: equal, not close


def test_percent_counters_hold_fractions_and_time_counters_seconds(exports):
    """The surprise the reader guards against: `*_percent` is a fraction of 1, `*_time` is seconds."""
    export = exports["baseline_bf16_s512"]
    tensor = export.engine_intervals[export.engine_intervals["engine"] == "tensor"]
    union_ns = interval_union_ns(tensor["start_ns"], tensor["end_ns"])
    assert export.counter("tensor_engine_active_time") == pytest.approx(union_ns * 1e-9, rel=UNIT_CHECK_TOLERANCE)
    fraction = export.counter("tensor_engine_active_time_percent")
    assert 0 < fraction < 1 and fraction == pytest.approx(union_ns / export.total_time_ns, rel=UNIT_CHECK_TOLERANCE)
    assert "Percentage" in export.summary.loc["tensor_engine_active_time_percent", "meaning"]  # the name and text say percent
    assert export.summary.loc["tensor_engine_active_time_percent", "unit"] == "fraction of 1"
    assert export.summary.loc["tensor_engine_active_time", "unit_basis"].startswith("checked:")
    # the summed per-core unions overcount: the counter unions both physical cores' intervals together
    per_core = sum(interval_union_ns(g["start_ns"], g["end_ns"]) for _, g in tensor.groupby("physical_core"))
    assert per_core > union_ns or tensor["physical_core"].nunique() == 1


def test_a_check_fails_when_a_counter_does_not_match(tmp_path):
    """A real export with one counter scaled by 100 (as if it were in percent): the reader says so."""
    source = RECORDED_NEURON_DIR / "fused_bf16_s512" / "fused_exec_2_profile_full.json.gz"
    data = json.loads(gzip.open(source).read())
    data["summary"][0]["vector_engine_active_time_percent"] *= 100
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data))
    export = load_export(changed)
    failed = export.unit_checks[~export.unit_checks["holds"]]
    assert list(failed["counter"]) == ["vector_engine_active_time_percent"]
    assert export.summary.loc["vector_engine_active_time_percent", "unit_basis"].startswith("CHECK FAILED")


@pytest.mark.parametrize("dtype", ("bf16", "fp32"))
def test_fusion_removes_exactly_the_intermediates_traffic(exports, dtype):
    baseline, fused = exports[f"baseline_{dtype}_s512"], exports[f"fused_{dtype}_s512"]
    moved = {k: e.counter("hbm_read_bytes") + e.counter("hbm_write_bytes") for k, e in (("baseline", baseline), ("fused", fused))}
    assert moved["fused"] < moved["baseline"] / 4  # measured: 7.7x less in bf16, 4.8x in fp32
    assert fused.total_time_ns < baseline.total_time_ns
    for kernel, export in (("baseline", baseline), ("fused", fused)):
        case = recorded_case(export.path.parent.name)
        need = attention_hbm_traffic(kernel, D_HEAD, case["seqlen"], dtype).groupby("direction")["bytes"].sum()
        weights = export.counter("weight_size_bytes")  # the NEFF's weights, read once (not in the kernel source)
        assert export.counter("hbm_read_bytes") == need["read"] + weights
        assert export.counter("hbm_write_bytes") == need["write"]
    # the fused kernel moves what the profiler calls necessary: inputs, outputs and weights, once
    assert moved["fused"] == fused.counter("inputs_outputs_weights_size_bytes")


@pytest.mark.parametrize("case", CASES)
def test_dma_packets_add_up_to_the_dma_size_counters(exports, case):
    export = exports[case]
    sizes = sum(export.counter(f"{kind}_dma_size") for kind in ("static", "hardware_dynamic", "software_dynamic"))
    assert export.dma["bytes"].sum() == sizes


@pytest.mark.parametrize("case", CASES)
def test_the_warning_about_dma_metadata_shows_in_the_dma_table(exports, case):
    """The profiler warns that dynamic DMA metadata is missing: no packet names the tensor it moved."""
    export = exports[case]
    assert export.warnings["message"].str.contains("Missing additional dynamic DMA metadata").any()
    assert (export.dma["variable"] == "unknown").all()
    assert export.warnings["message"].str.contains("Missing HLO stats").any() and export.counter("model_flops") == 0


def test_layers_and_hbm_instructions(exports):
    export = exports["baseline_bf16_s512"]
    hbm = export.hbm_instructions()
    assert hbm["hbm_read_bytes"].sum() == export.counter("hbm_read_bytes")
    assert set(hbm["opcode"]) == {"DMA_DIRECT2D"}
    assert {"/sg00", "/sg01"} <= set(export.layers["name"])


def test_bad_input_names_the_fix(tmp_path):
    with pytest.raises(ExportError, match="neuron-profile view --output-format json"):
        load_export(tmp_path / "missing.json")
    source = RECORDED_NEURON_DIR / "fused_fp32_s512" / "fused_exec_2_profile_full.json.gz"
    summary_only = tmp_path / "summary.json"  # what summary-json writes holds no intervals
    summary_only.write_text(json.dumps({"summary": json.loads(gzip.open(source).read())["summary"]}))
    with pytest.raises(ExportError, match="not a full Neuron profile export"):
        load_export(summary_only)
    with pytest.raises(ExportError, match="No Neuron profile export matches"):
        load_exports(tmp_path)
    with pytest.raises(ValueError, match="expected <baseline|fused>"):
        recorded_case("attention_s512")


def test_interval_union_counts_overlaps_once():
    assert interval_union_ns([0, 5, 20], [10, 12, 25]) == 17
    assert merged_intervals([5, 0, 20], [12, 10, 25]) == [(0, 12), (20, 25)]
    assert interval_union_ns([], []) == 0
