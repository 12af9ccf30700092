"""Trace loading and analysis: real cpu traces made here, synthetic traces for the device lanes,
and malformed files that must give a clear error."""

import gzip
import json

import pytest
import torch

from helpers.errors import TraceFileError
from lesson.rmsnorm import rmsnorm_naive
from analysis.call_trees import CallNode, call_tree, dispatch_tree, folded_by_key_averages
from analysis.steps import gap_table, launch_latency, per_call_summary, step_summary
from analysis.traces import device_ops, lane_of, load_trace


@pytest.fixture
def naive_trace(naive_cpu_profile):
    return naive_cpu_profile.trace


def test_cpu_trace_steps_and_ops(naive_trace):
    assert list(naive_trace.steps["step"]) == [1, 2, 3]
    assert not naive_trace.has_device_lane
    ops = device_ops(naive_trace)
    last = ops[ops["step"] == 3]["name"].astype(str).tolist()
    assert last == ["aten::pow", "aten::sum", "aten::div_", "aten::add", "aten::rsqrt", "aten::mul", "aten::mul"]


def test_folded_by_key_averages_names_the_calls_key_averages_counts_once(naive_trace, tmp_path):
    # naive's mean divides in place: aten::div_ directly inside aten::div_, its only child
    assert folded_by_key_averages(call_tree(naive_trace, "naive", step=3)) == ["aten::div_"]
    # and key_averages() does count one call where the trace holds two events
    x, w = torch.randn(64, 512), torch.ones(512)
    with torch.profiler.profile() as prof:
        rmsnorm_naive(x, w)
    prof.export_chrome_trace(str(tmp_path / "one.json"))
    events = json.loads((tmp_path / "one.json").read_text())["traceEvents"]
    assert sum(e.get("name") == "aten::div_" for e in events) == 2
    assert {e.key: e.count for e in prof.key_averages()}["aten::div_"] == 1
    # a parent with two children of its own name keeps both: nothing is folded
    two = [CallNode(0, "a", "cpu", 2.0), CallNode(1, "a", "cpu", 1.0), CallNode(1, "a", "cpu", 1.0)]
    assert folded_by_key_averages(two) == []
    assert folded_by_key_averages(two[:2]) == ["a"]


def test_cpu_step_summary(naive_trace):
    s = step_summary(naive_trace, memory_device_type=0)
    assert (s["device_ops"] == 7).all() and (s["idle_gaps"] <= 6).all()
    assert (s["busy_us"] > 0).all() and (s["busy_us"] <= s["step_us"]).all()
    # x**2 and x*rsqrt are full size (64*512*4 bytes each) next to the output
    assert (s["allocated_bytes"] >= 3 * 64 * 512 * 4).all()
    pc = per_call_summary(naive_trace, memory_device_type=0)
    assert pc["device_ops_per_call"] == 7


def test_dispatch_tree_and_gaps(naive_trace):
    tree = dispatch_tree(naive_trace, "naive")
    assert tree[0].startswith("naive") and any(line.strip().startswith("aten::mean") for line in tree)
    assert dispatch_tree(naive_trace, "not_there")[0].startswith("(no 'not_there'")
    gaps = gap_table(naive_trace, memory_device_type=0)
    assert len(gaps) <= 6 and (gaps["gap_us"] > 0).all()


@pytest.mark.parametrize(
    "cat, lane",
    [
        ("cpu_op", "framework"),
        ("user_annotation", "framework"),
        ("python_function", "framework"),
        ("cuda_runtime", "runtime"),
        ("cuda_driver", "runtime"),
        ("privateuse1_runtime", "runtime"),
        ("xpu_runtime", "runtime"),
        ("kernel", "device"),
        ("gpu_memcpy", "device"),
        ("gpu_memset", "device"),
        ("privateuse1_driver", "runtime"),
        ("someaccel_device", "device"),
        ("Trace", "other"),
        (None, "other"),
    ],
)
def test_lanes_by_category_not_backend(cat, lane):
    assert lane_of(cat) == lane


def synthetic_cuda_trace(path, gz=False):
    """Two steps; each launches two kernels from the host, 3 us after the launch, 10 us apart."""
    events = []
    for step, t0 in ((1, 0.0), (2, 100.0)):
        events.append(
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1, "ts": t0, "dur": 90.0}
        )
        for k, off in enumerate((5.0, 25.0)):
            corr = step * 10 + k
            events += [
                {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": t0 + off, "dur": 6.0},
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": 1,
                    "tid": 1,
                    "ts": t0 + off + 1,
                    "dur": 4.0,
                    "args": {"correlation": corr},
                },
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": f"mul_kernel_{k}",
                    "pid": 0,
                    "tid": 7,
                    "ts": t0 + off + 4,
                    "dur": 10.0,
                    "args": {"correlation": corr},
                },
                {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 1, "ts": t0 + off + 1},
                {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 7, "ts": t0 + off + 4, "bp": "e"},
            ]
    data = json.dumps({"traceEvents": events}).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True], ids=["json", "gzip"])
def test_synthetic_device_lane(tmp_path, gz):
    trace = load_trace(synthetic_cuda_trace(tmp_path / ("t.json.gz" if gz else "t.json"), gz))
    assert trace.has_device_lane
    s = step_summary(trace)
    assert list(s["device_ops"]) == [2, 2]
    assert list(s["busy_us"]) == [20.0, 20.0]
    assert list(s["idle_gaps"]) == [1, 1] and list(s["idle_total_us"]) == [10.0, 10.0]
    assert list(s["launch_latency_us"]) == [3.0, 3.0]
    assert len(launch_latency(trace)) == 4
    assert set(trace.flows["ph"]) == {"s", "f"} and len(trace.flows) == 8
    assert "-> mul_kernel_0" in "\n".join(dispatch_tree(trace, "aten::mul", step=1))
    nodes = call_tree(trace, "aten::mul", step=1)  # the structure the lines above are printed from
    assert nodes[0].depth == 0 and nodes[0].name == "aten::mul" and nodes[0].duration_us is not None
    (kernel,) = [n for n in nodes if n.lane == "device"]
    assert kernel.name == "mul_kernel_0" and kernel.duration_us is None and kernel.depth >= 1
    assert call_tree(trace, "not_there", step=1) == []


def test_trace_without_device_events_counts_no_device_ops(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "traceEvents": [
                    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 10}
                ]
            }
        )
    )
    trace = load_trace(path)
    s = step_summary(trace)
    assert not trace.has_device_lane and list(s["device_ops"]) == [0]


def test_missing_file(tmp_path):
    with pytest.raises(TraceFileError, match="No trace file"):
        load_trace(tmp_path / "nope.json")


def test_empty_file(tmp_path):
    (tmp_path / "e.json").write_text("")
    with pytest.raises(TraceFileError, match=r"empty \(0 bytes\)"):
        load_trace(tmp_path / "e.json")


def test_truncated_json_names_file_and_position(tmp_path):
    path = synthetic_cuda_trace(tmp_path / "t.json")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFileError) as err:
        load_trace(path)
    assert str(path) in str(err.value) and "not complete JSON" in str(err.value) and "Fix:" in str(err.value)


def test_truncated_gzip(tmp_path):
    path = synthetic_cuda_trace(tmp_path / "t.json.gz", gz=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFileError, match="truncated or corrupt|not complete JSON"):
        load_trace(path)


def test_json_that_is_not_a_trace(tmp_path):
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(TraceFileError, match="not a Chrome trace"):
        load_trace(tmp_path / "x.json")


def test_parsing_never_evaluates_content(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "traceEvents": [
                    {
                        "ph": "X",
                        "cat": "cpu_op",
                        "name": "__import__('os').system('touch PWNED')",
                        "pid": 1,
                        "tid": 1,
                        "ts": 0,
                        "dur": 1,
                    }
                ]
            }
        )
    )
    trace = load_trace(path)
    assert trace.events["name"].iloc[0].startswith("__import__")
    assert not (tmp_path / "PWNED").exists()


def test_contract_neuron_trace_counts_no_device_ops_from_an_unverified_category(tmp_path):
    """A SYNTHETIC trace in a run folder recorded as neuron: its `kernel` and `privateuse1_runtime`
    events are shown (lanes "unverified" and "runtime") but nothing is counted as device work (N19)."""
    (tmp_path / "environment.json").write_text(json.dumps({"backend": "neuron"}))
    (tmp_path / "large").mkdir()  # a trace one folder below the notebook's (05 writes one per shape)
    trace = load_trace(synthetic_cuda_trace(tmp_path / "large" / "t.json"))
    assert trace.backend == "neuron" and not trace.counts_device_ops and not trace.has_device_lane
    assert trace.category_lanes()["kernel"] == "unverified"
    s = step_summary(trace)
    assert s["device_ops"].isna().all() and s["idle_gaps"].isna().all() and list(s["cpu_ops"]) == [2, 2]
    pc = per_call_summary(trace)
    assert pc["device_ops_per_call"] != pc["device_ops_per_call"]  # NaN: not counted, which is not zero
    assert "not counted" in trace.device_op_kind
    assert load_trace(trace.path, backend="cuda").counts_device_ops  # an explicit backend wins


def test_category_lanes_of_a_cuda_trace(tmp_path):
    lanes = load_trace(synthetic_cuda_trace(tmp_path / "t.json")).category_lanes()
    assert lanes == {"cpu_op": "framework", "cuda_runtime": "runtime", "kernel": "device", "user_annotation": "framework"}


def test_memory_events_keep_their_address_so_a_free_finds_its_allocation(naive_trace):
    # every [memory] event of a cpu profile carries Addr; most frees (negative bytes) find an
    # allocation at the same address inside the profile (the rest were made before it started)
    memory = naive_trace.memory
    assert len(memory) and (memory["addr"] > 0).all()
    allocated = set(memory.loc[memory["bytes"] > 0, "addr"])
    frees = memory[memory["bytes"] < 0]
    assert frees["addr"].isin(allocated).mean() > 0.5
