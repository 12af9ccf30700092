"""analysis.device_view on real traces recorded on A100 GPUs (data/recorded/, by the HTA project):
launches and their latency, host against device time, host waits in synchronize, idle gaps."""

import numpy as np
import pytest

from analysis.device_view import annotation_window, busy_summary, device_work, host_vs_device, host_waits, idle_gaps, launches
from analysis.recorded import ALEXNET_FORWARD, load_recorded


@pytest.fixture(scope="module")
def event_sync():
    return load_recorded("event_sync")


@pytest.fixture(scope="module")
def alexnet():
    return load_recorded("alexnet")


@pytest.fixture(scope="module")
def forward(alexnet):
    return annotation_window(alexnet, ALEXNET_FORWARD)


@pytest.mark.parametrize("key", ["event_sync", "alexnet"])
def test_launch_links_are_the_traces_own_flow_arrows(key):
    """The correlation id joins each device op to its launch; the trace's ac2g arrows, written
    independently, start at that launch and end at that op."""
    trace = load_recorded(key)
    ops = launches(trace)
    assert len(ops) > 0 and (ops["latency_us"] > 0).all()  # nothing runs before its launch began
    flows = trace.flows.pivot_table(index="id", columns="ph", values="ts", aggfunc="min")
    linked = ops.set_index(ops["correlation"].astype(str)).join(flows, how="inner")
    assert len(linked) == len(ops)
    assert np.allclose(linked["s"], linked["launch_ts"]) and np.allclose(linked["f"], linked["ts"])


def test_host_against_device_time(event_sync, alexnet, forward):
    small = host_vs_device(event_sync)
    assert (small["host_us"] > small["device_us"]).all()  # tiny ops: the host takes longer than the kernel
    table = host_vs_device(alexnet, window=forward)
    assert table["device_ops"].sum() == len(launches(alexnet, window=forward))  # every launch has its op
    assert table["device_us"].sum() == pytest.approx(launches(alexnet, window=forward)["device_us"].sum())
    assert (table.loc[table["device_ops"] > 0, "kernels"].map(len) >= 1).all()


def test_host_waits_for_the_running_kernel(event_sync):
    waits = host_waits(event_sync)
    assert set(waits["call"]) == {"cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize"}
    waited = waits.dropna(subset=["waited_for"])
    assert len(waited) >= 1
    for _, w in waited.iterrows():  # the kernel ended inside the wait, and the host woke after it
        assert 0 < w["device_left_us"] <= w["wait_us"] and w["wake_us"] >= 0
        assert w["device_left_us"] + w["wake_us"] == pytest.approx(w["wait_us"])
    event = waits[waits["call"] == "cudaEventSynchronize"].iloc[0]
    assert event["kind"] == "Event Sync" and "spin_kernel" in event["waited_for"]


@pytest.mark.parametrize("selection", ["whole", "forward"])
def test_gaps_partition_the_span(alexnet, forward, selection):
    window = forward if selection == "forward" else None
    gaps, summary = idle_gaps(alexnet, window=window), busy_summary(alexnet, window=window)
    assert gaps["gap_us"].sum() == pytest.approx(summary["idle_us"])
    assert summary["busy_us"] + summary["idle_us"] == pytest.approx(summary["span_us"])
    assert summary["busy_us"] <= device_work(alexnet, window=window)["dur"].sum()  # streams overlap: union <= sum
    assert set(gaps["cause"]) <= {"launched late", "queued", "no launch linked"}


def test_gap_causes_read_from_the_launches(event_sync):
    gaps = idle_gaps(event_sync)
    ops = launches(event_sync).set_index("name")
    assert len(gaps) == busy_summary(event_sync)["device_ops"] - 1  # one stream, nothing overlaps
    for _, g in gaps.iterrows():  # launched late: the launch began after the device went idle
        assert g["cause"] == "launched late" and ops.loc[g["before"], "launch_ts"] >= g["start"]


def test_step_and_whole_trace_agree_on_a_one_step_trace(event_sync):
    assert busy_summary(event_sync, step=100) == busy_summary(event_sync)


def test_missing_annotation_names_it(event_sync):
    with pytest.raises(ValueError, match="no event named 'nope'"):
        annotation_window(event_sync, "nope")
