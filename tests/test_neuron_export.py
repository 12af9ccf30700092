"""The Neuron profiler's JSON export reader, on the four real trn2 exports in data/recorded-neuron.

No synthetic stand-in: every test reads the recorded files (or a real file with one value
changed, to show that a check can fail). The relations asserted are the ones the notebook
teaches: the counters agree with the data they summarise, in the units the reader states, and
the unfused kernel's extra HBM traffic is exactly its intermediates.
"""

import gzip
import json
import re

import pytest

from analysis.attention_traffic import RECORDED_NEURON_DIR, attention_hbm_traffic, recorded_case
from analysis.neuron_export import (
    ENGINES,
    SAME_VALUE_NAMES,
    UNIT_CHECK_TOLERANCE,
    ExportError,
    MissingCounterError,
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
    with pytest.raises(ExportError, match="neuron-explorer view --output-format json"):
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


# ---------------------------------------------------------------------------------------------
# Bad or changed exports: units decided per file, renamed counters, refused malformed data.
# Each starts from a real recorded export with one thing changed.
# ---------------------------------------------------------------------------------------------
SOURCE = RECORDED_NEURON_DIR / "fused_bf16_s512" / "fused_exec_2_profile_full.json.gz"


def _changed(tmp_path, change):
    data = json.loads(gzip.open(SOURCE).read())
    change(data)
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(data))
    return path


def test_a_file_in_percent_is_read_as_percent_and_converted(tmp_path):
    """Every *_percent counter x100, as the Parquet schema documents the unit: the intervals decide
    the file is in percent, and engine_utilisation converts, saying so (issue 42: no 32.43 "fraction")."""

    def to_percent(data):
        row = data["summary"][0]
        for name in list(row):
            if name.endswith("_percent") and isinstance(row[name], (int, float)):
                row[name] *= 100

    original = load_export(SOURCE)
    export = load_export(_changed(tmp_path, to_percent))
    assert export.percent_unit == "percent" and original.percent_unit == "fraction of 1"
    assert export.unit_checks["holds"].all()
    util, before = export.engine_utilisation(), original.engine_utilisation()
    assert (util["fraction"] <= 1).all() and util["fraction"].to_numpy() == pytest.approx(before["fraction"].to_numpy())
    assert set(util["file_unit"]) == {"percent"} and set(before["file_unit"]) == {"fraction of 1"}
    # an unchecked *_percent counter takes the file's unit too, and says on what ground
    assert export.summary.loc["mfu_estimated_percent", "unit"] == "percent"
    assert "checked *_percent counters are in percent" in export.summary.loc["mfu_estimated_percent", "unit_basis"]


def test_counters_that_match_no_unit_are_refused_where_a_figure_needs_them(tmp_path):
    export = load_export(_changed(tmp_path, lambda d: d["summary"][0].update(tensor_engine_active_time_percent=0.77)))
    assert export.percent_unit is None
    with pytest.raises(ExportError, match="tensor_engine_active_time_percent"):
        export.engine_utilisation()
    assert export.summary.loc["mfu_estimated_percent", "unit"] == "unknown"  # unchecked: takes the file's (none)


def test_one_counter_in_another_unit_than_its_file_fails_its_check(tmp_path):
    export = load_export(
        _changed(
            tmp_path,
            lambda d: d["summary"][0].update(
                scalar_engine_active_time_percent=d["summary"][0]["scalar_engine_active_time_percent"] * 100
            ),
        )
    )
    failed = export.unit_checks[~export.unit_checks["holds"]]
    assert list(failed["counter"]) == ["scalar_engine_active_time_percent"]
    assert "other *_percent counters are in fraction of 1" in failed["checked_against"].iloc[0]
    with pytest.raises(ExportError, match="scalar_engine_active_time_percent"):
        export.fraction("vector_engine_active_time_percent")


@pytest.mark.contract
def test_contract_neuron_2_34_counter_names_read_under_both_names(tmp_path):
    """Contract test standing in for a Neuron 2.34 export (announcement of the deprecated Summary
    fields, docs/NEURON_NOTES.md N33): hbm_read_bytes renamed instruction_hbm_read_bytes (same value),
    mbu_estimated_percent renamed hbm_mbu_estimated_percent. The file below is a recorded export with
    the old names replaced by the new ones; nothing here was written by a 2.34 Explorer."""

    def rename(data):
        row = data["summary"][0]
        for old, new in SAME_VALUE_NAMES.items():
            row[new] = row.pop(old)

    old, new = load_export(SOURCE), load_export(_changed(tmp_path, rename))
    for name in ("hbm_read_bytes", "instruction_hbm_read_bytes", "hbm_write_bytes", "mbu_estimated_percent"):
        assert new.counter(name) == old.counter(name)
    assert new.counter_name("hbm_read_bytes") == "instruction_hbm_read_bytes"
    assert old.counter_name("instruction_hbm_write_bytes") == "hbm_write_bytes"
    assert new.unit_checks["holds"].all()
    assert "instruction_hbm_read_bytes" in set(new.unit_checks["counter"])
    # the "more accurate" packet counts are a different value: never read in place of the old name
    with pytest.raises(MissingCounterError, match="packet_hbm_read_bytes"):
        old.counter("packet_hbm_read_bytes")


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d["summary"][0].pop("total_time"), "total_time"),
        (lambda d: d["summary"][0].pop("dma_active_time_percent"), "dma_active_time_percent"),
        (lambda d: d.update(summary=[{}]), "'summary' is empty"),
        (lambda d: d.update(summary=[]), "'summary' must hold one row"),
        (lambda d: [r.pop("pcore_idx") for r in d["active_time"]], "'pcore_idx'"),
        (lambda d: d["active_time"][3].pop("end_ts"), "'end_ts'"),
        (lambda d: d["active_time"][0].update(end_ts=d["active_time"][0]["start_ts"] - 5), "end before they start"),
        (lambda d: d["active_time"][0].update(start_ts="soon"), "non-number in 'start_ts'"),
        (lambda d: d["dma"][0].pop("transfer_size"), "'transfer_size'"),
        (lambda d: d["instruction"][0].pop("timestamp"), "'timestamp'"),
        (lambda d: d["summary"][0].update(total_time=0), "'total_time' is 0"),
    ],
)
def test_malformed_exports_get_export_error_naming_the_field(tmp_path, change, named):
    """Issue 42: a missing counter or a malformed interval is refused with the field named, never a raw
    KeyError/ValueError from deep inside pandas."""
    with pytest.raises(ExportError, match=re.escape(named)):
        load_export(_changed(tmp_path, change))


def test_a_missing_counter_is_an_export_error_and_still_a_key_error(exports):
    export = exports["fused_fp32_s512"]
    with pytest.raises(ExportError, match="no summary counter 'no_such_counter'"):
        export.counter("no_such_counter")
    with pytest.raises(KeyError):  # code written against the earlier reader catches KeyError
        export.counter("no_such_counter")


def test_a_folder_is_refused_with_the_fix(tmp_path):
    with pytest.raises(ExportError, match="is a folder"):
        load_export(tmp_path)


def test_mfu_hlo_zero_is_explained_not_read_as_a_measurement(exports):
    """The recorded NKI kernels have no HLO stats: mfu_hlo_estimated_percent is 0 by definition (N45)."""
    for export in exports.values():
        assert export.counter("mfu_hlo_estimated_percent") == 0
        assert "HLO stats are missing" in export.counter_notes()["mfu_hlo_estimated_percent"]


def test_duplicate_dma_packets_are_counted_once(exports, tmp_path):
    export = exports["fused_bf16_s512"]
    assert not export.dma["duplicate"].any() and "dma" not in export.counter_notes()  # recorded: every packet "no"
    assert export.dma_bytes() == export.dma["bytes"].sum()
    first_packet_bytes = int(json.loads(gzip.open(SOURCE).read())["dma"][0]["transfer_size"])
    doubled = load_export(_changed(tmp_path, lambda d: d["dma"].append({**d["dma"][0], "duplicate": "yes"})))
    assert doubled.dma_bytes() == export.dma_bytes()
    assert doubled.dma_bytes(include_duplicates=True) == export.dma_bytes() + first_packet_bytes
    assert "1 of" in doubled.counter_notes()["dma"]
