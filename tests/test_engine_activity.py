"""Per-engine computing time (analysis.engine_activity), on the four real trn2 exports in data/recorded-neuron.

The lanes (and the active-time counters) hold every instruction an engine processed; the
computing time holds only those that transform data. The relations asserted: computing time lies
within the lane's time, every opcode of the recorded files is classified, and with waits left out
the matrix engine computed longest in every profile (an attention kernel is mostly matmuls),
while the lane activity of the bf16 baseline put two engines within a percentage point.
"""

import pytest

from analysis.attention_traffic import RECORDED_NEURON_DIR
from analysis.engine_activity import WAIT_OPCODES, engine_of, engine_work, opcode_kind
from analysis.neuron_export import ENGINES, UNIT_CHECK_TOLERANCE, interval_union_ns, load_exports


@pytest.fixture(scope="module")
def exports():
    return load_exports(RECORDED_NEURON_DIR)


@pytest.fixture(scope="module")
def work(exports):
    return {name: engine_work(e) for name, e in exports.items()}


def test_every_recorded_opcode_is_classified(work):
    for table in work.values():
        assert list(table.index) == list(ENGINES) and (table["unclassified"] == 0).all()


def test_computing_time_lies_within_the_lane(work):
    for table in work.values():
        assert (table["computing_us"] <= table["lane_us"] * 1.005).all()  # the counter's unit check tolerance
        assert (table["computing_us"] < table["lane_us"]).any()  # the lanes hold waits too


def test_a_lane_is_the_union_of_its_engines_non_wait_instructions(work, exports):
    for name, table in work.items():
        assert ((table["lane_us"] - table["non_wait_us"]).abs() <= UNIT_CHECK_TOLERANCE * table["lane_us"]).all(), name
        # the semaphore range clear is in the lane: leaving it out too (a prefix match) falls short by over 1%
        ins = exports[name].instructions.assign(engine=exports[name].instructions["engine"].map(engine_of))
        kept = ins[(ins["engine"] == "gpsimd") & ~ins["opcode"].str.startswith("EVENT_SEMAPHORE")]
        assert interval_union_ns(kept["start_ns"], kept["end_ns"]) / 1e3 < 0.99 * table.at["gpsimd", "lane_us"]
    assert WAIT_OPCODES == {"EVENT_SEMAPHORE"}


def test_the_matrix_engine_computes_longest_where_the_lanes_nearly_tie(work):
    for table in work.values():
        assert table["computing_us"].idxmax() == "tensor"
        assert "MATMUL" in table.at["tensor", "computing_opcodes"]
        assert table.at["sync", "computing"] == 0  # the sync engine only waits and issues DMA here
    bf16 = work["baseline_bf16_s512"]
    lanes = (bf16["lane_us"] / (bf16["computing_us"] / bf16["computing_share"]).max()).sort_values(ascending=False)
    assert lanes.iloc[0] - lanes.iloc[1] < 0.01  # the lanes' near tie: within one percentage point of the total time


def test_an_unknown_opcode_is_reported_not_counted():
    assert opcode_kind("MATMUL") == "computing" and opcode_kind("DRAIN") == "control"
    assert opcode_kind("SOMETHING_NEW") == "unclassified"
    assert engine_of("TensorMatrix") == "tensor" and engine_of("GpSimd") == "gpsimd"
