"""analysis.module_calls on the three TraceLens traces shipped in data/recorded-rmsnorm/ (an NVIDIA
H100 and an AMD MI300X running Qwen1.5-0.5B, whose RMSNorm is written as separate ops; an MI300X
running torch.nn.RMSNorm). Every per-call figure is checked against a plain scan of the gzipped
JSON written here, not against the module's own output."""

import gzip
import json
import math
import re
import statistics

import matplotlib
import pytest

matplotlib.use("Agg")

from analysis.errors import TraceFileError  # noqa: E402
from analysis.module_calls import (  # noqa: E402
    FUSED_CALL,
    NAIVE_CALL,
    RECORDED_RMSNORM,
    TRACELENS_CAUTION,
    at_rate,
    call_kernels,
    calls_summary,
    device_names,
    fused_comparison,
    fused_rate,
    kernel_bytes,
    kernels_by_op,
    call_table,
    plot_call_kernels,
    recorded_rmsnorm_path,
)
from analysis.traces import load_trace  # noqa: E402
from helpers.environment import TOKEN_LIKE  # noqa: E402  (the token formats make publish refuses)

CASES = {"h100_qwen": NAIVE_CALL, "mi300x_qwen": NAIVE_CALL, "mi300x_norms": FUSED_CALL}


def raw(key):
    return json.loads(gzip.decompress(recorded_rmsnorm_path(key).read_bytes()))


def scan(key, name):
    """Per call, from the file alone: (cpu ops inside, kernel durations, launch-to-kernel latencies, the events)."""
    events = [e for e in raw(key)["traceEvents"] if e.get("ph") == "X"]
    kernels = {e["args"]["correlation"]: e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    calls = sorted((e for e in events if re.fullmatch(re.escape(name) + r"(_\d+)?", e["name"])), key=lambda e: e["ts"])
    out = []
    for c in calls:
        inside = [
            e
            for e in events
            if e is not c and e.get("tid") == c["tid"] and e["ts"] >= c["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"]
        ]
        launched = [
            (e, kernels[e["args"]["correlation"]])
            for e in inside
            if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") in kernels
        ]
        out.append(
            {
                "host_ops": sum(e.get("cat") == "cpu_op" for e in inside),
                "durations": [k["dur"] for _, k in launched],
                "latencies": [k["ts"] - launch["ts"] for launch, k in launched],
                "behind": min((k["ts"] for _, k in launched), default=math.nan) - (c["ts"] + c["dur"]),
                "ahead": min((k["ts"] for _, k in launched), default=math.nan)
                - max((launch["ts"] for launch, _ in launched), default=math.nan),
                "late_gap": late_gap([(launch["ts"], k["ts"], k["ts"] + k["dur"]) for launch, k in launched]),
                "inside": inside,
            }
        )
    return out


def late_gap(launched):
    """Whether a kernel started after an idle gap that its own launch opened (launched after the device went idle)."""
    busy_until = None
    for launch_ts, start, end in sorted(launched, key=lambda t: t[1]):
        if busy_until is not None and start > busy_until and launch_ts >= busy_until:
            return True
        busy_until = end if busy_until is None else max(busy_until, end)
    return False


def rms_norm_events():
    """The aten::rms_norm events of the fused trace, in time order, from the file alone."""
    events = [e for e in raw("mi300x_norms")["traceEvents"] if e.get("ph") == "X" and e.get("name") == FUSED_CALL]
    return sorted(events, key=lambda e: e["ts"])


@pytest.fixture(scope="module")
def analysed():
    found = {}
    for key, name in CASES.items():
        trace = load_trace(recorded_rmsnorm_path(key))
        kernels = call_kernels(trace, name)
        found[key] = (trace, kernels, call_table(trace, name, kernels))
    return found


@pytest.mark.parametrize("key", CASES)
def test_per_call_figures_match_a_plain_scan_of_the_file(analysed, key):
    _, _, calls = analysed[key]
    expected = scan(key, CASES[key])
    assert len(calls) == len(expected) > 0
    assert calls["host_ops"].tolist() == [c["host_ops"] for c in expected]
    assert calls["kernels"].tolist() == [len(c["durations"]) for c in expected]
    assert calls["kernel_us"].tolist() == pytest.approx([sum(c["durations"]) for c in expected])
    assert calls["device_behind_us"].tolist() == pytest.approx([c["behind"] for c in expected], abs=1e-3, nan_ok=True)
    assert calls["launched_ahead_us"].tolist() == pytest.approx([c["ahead"] for c in expected], abs=1e-3, nan_ok=True)
    summary = calls_summary(calls)
    assert summary["calls"] == len(expected)
    assert summary["calls_with_a_late_launch"] == sum(c["late_gap"] for c in expected)
    assert summary["median_kernel_us"] == pytest.approx(statistics.median(sum(c["durations"]) for c in expected))
    assert summary["kernels_per_call"] == statistics.median(len(c["durations"]) for c in expected)
    assert summary["host_ops_per_call"] == statistics.median(c["host_ops"] for c in expected)


@pytest.mark.parametrize("key", CASES)
def test_launch_to_kernel_latency_is_the_kernel_start_minus_its_launch(analysed, key):
    _, kernels, _ = analysed[key]
    expected = [lat for c in scan(key, CASES[key]) for lat in sorted(c["latencies"])]
    got = [lat for _, k in kernels.groupby("call") for lat in sorted(k["latency_us"])]
    assert got == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize("key", ["h100_qwen", "mi300x_qwen"])
def test_the_naive_call_is_eight_kernels_from_eight_ops_moving_nine_times_the_fused_minimum(analysed, key):
    _, kernels, calls = analysed[key]
    ops = kernels_by_op(kernels)["op"].tolist()
    assert ops == ["aten::copy_", "aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul", "aten::copy_", "aten::mul"]
    # the shapes, read from the file: x (bf16) at aten::pow's input, the weight at the last mul's first input
    inside = scan(key, CASES[key])[0]["inside"]
    pow_dims = next(e for e in inside if e["name"] == "aten::pow")["args"]["Input Dims"][0]
    last_mul = [e for e in inside if e["name"] == "aten::mul"][-1]["args"]
    assert last_mul["Input type"][:2] == ["c10::BFloat16", "c10::BFloat16"]
    n, rows, w = math.prod(pow_dims), math.prod(pow_dims[:-1]), math.prod(last_mul["Input Dims"][0])
    # bf16 -> fp32 copy 6n, pow 8n, mean 4n + 4r, add 8r + 8 (a double scalar), rsqrt 8r, mul 8n + 4r,
    # fp32 -> bf16 copy 6n, weight mul 4n + 2w
    expected = 36 * n + 24 * rows + 2 * w + 8
    minimum = 2 * (2 * n) + 2 * w  # read x (bf16), write y (bf16), read the weight
    assert calls["bytes"].tolist() == [expected] * len(calls)
    assert calls["min_bytes"].tolist() == [minimum] * len(calls)
    assert calls["bytes_ratio"].iloc[0] == pytest.approx(expected / minimum)
    assert calls["bytes_over_x"].iloc[0] == pytest.approx(expected / (2 * n))
    assert (calls["unsized_kernels"] == 0).all()
    # the passes over memory: the full-size (n-element) inputs of the launching ops, read from the file
    # (a copy_'s two inputs are its source read and its destination written), plus the full-size outputs
    # that pow and the two muls write; float32 among them ("float")
    launching = [e for e in inside if e["name"] in {"aten::copy_", "aten::pow", "aten::mean", "aten::mul"}]
    full_inputs = [
        t for e in launching for d, t in zip(e["args"]["Input Dims"], e["args"]["Input type"]) if d and math.prod(d) == n
    ]
    writers = [e for e in launching if e["name"] in {"aten::pow", "aten::mul"}]  # each writes one full-size output
    out_types = [max(e["args"]["Input type"][:2], key=lambda t: t == "float") for e in writers]
    assert calls["full_size_ios"].tolist() == [len(full_inputs) + len(writers)] * len(calls) == [11] * len(calls)
    float32 = full_inputs.count("float") + out_types.count("float")
    assert calls["wider_ios"].tolist() == [float32] * len(calls) == [7] * len(calls)
    assert set(calls["wider_dtype"]) == {"float32"} and set(calls["x_dtype"]) == {"bfloat16"}
    summary = calls_summary(calls)
    assert (summary["x_dtype"], summary["x_shape"]) == ("bfloat16", "x".join(map(str, pow_dims)))


def test_the_fused_call_is_one_kernel_launched_by_fused_rms_norm_near_the_minimum(analysed):
    _, kernels, calls = analysed["mi300x_norms"]
    assert set(kernels["op"]) == {"aten::_fused_rms_norm"}
    assert (calls["kernels"] == 1).all()
    assert (calls["bytes_ratio"] < 1.01).all()  # its extra: one fp32 statistic per row
    assert (calls["full_size_ios"] == 2).all() and (calls["wider_ios"] == 0).all()  # read x once, write y once
    # the weight: the calls whose aten::rms_norm has a second tensor input, read from the file
    expected_weights = [
        "x".join(map(str, dims[2])) if len(dims) > 2 and dims[2] else ""
        for dims in (e["args"]["Input Dims"] for e in rms_norm_events())
    ]
    assert calls["weight_shape"].tolist() == expected_weights and set(expected_weights) == {"32x32", ""}
    rate = fused_rate(kernels)
    assert rate == pytest.approx(statistics.median((k["bytes"] / k["device_us"] / 1e3) for _, k in kernels.iterrows()))
    naive = analysed["h100_qwen"][1]
    priced = at_rate(naive, rate)
    assert priced["at_rate_us"].sum() == pytest.approx(naive["bytes"].sum() / rate / 1e3)
    naive_calls = analysed["mi300x_qwen"][2]
    compared = fused_comparison(naive_calls, kernels)
    one = naive_calls.iloc[0]  # every naive call has the same bytes: the medians are any call's
    assert compared["fused_rates"] == kernels["gb_per_s"].notna().sum()  # the median of these, and their range:
    assert compared["fused_gb_per_s_low"] <= compared["fused_gb_per_s"] <= compared["fused_gb_per_s_high"]
    assert compared["naive_at_fused_rate_us"] == pytest.approx(one["bytes"] / rate / 1e3)
    assert compared["fused_min_at_fused_rate_us"] == pytest.approx(one["min_bytes"] / rate / 1e3)
    naive_rate = statistics.median(naive_calls["bytes"] / naive_calls["kernel_us"]) / 1e3
    assert compared["fused_min_at_naive_rate_us"] == pytest.approx(one["min_bytes"] / naive_rate / 1e3)
    saved = statistics.median(naive_calls["kernel_us"]) - compared["fused_min_at_naive_rate_us"]
    assert compared["saved_at_naive_rate_us"] == pytest.approx(saved)


@pytest.mark.parametrize("key", ["h100_qwen", "mi300x_qwen"])
def test_the_gaps_are_the_calls_span_less_its_kernel_time_where_kernels_do_not_overlap(analysed, key):
    _, _, calls = analysed[key]
    assert calls["gaps_us"].to_numpy() == pytest.approx((calls["device_span_us"] - calls["kernel_us"]).to_numpy(), abs=1e-6)
    assert (calls["late_gaps_us"] <= calls["gaps_us"] + 1e-9).all()


def test_bytes_are_sized_only_where_the_output_follows_from_the_inputs():
    assert kernel_bytes("aten::copy_", [[4, 8], [4, 8]], ["float", "c10::BFloat16"], ["", ""]) == (64.0, 128.0)
    assert kernel_bytes("aten::mean", [[4, 8], []], ["float", "ScalarList"], ["", "[-1]", "True"]) == (128.0, 16.0)
    assert kernel_bytes("aten::mul", [[8], [4, 8]], ["c10::BFloat16", "c10::BFloat16"], ["", ""]) == (80.0, 64.0)
    read, written = kernel_bytes("aten::mm", [[4, 8], [8, 4]], ["float", "float"], ["", ""])
    assert math.isnan(read) and math.isnan(written)  # not sized, and so never counted as zero


def test_the_devices_are_the_ones_the_traces_name():
    assert device_names(recorded_rmsnorm_path("h100_qwen")) == ["NVIDIA H100 80GB HBM3"]
    assert device_names(recorded_rmsnorm_path("mi300x_qwen")) == ["AMD Instinct MI300X VF"]
    assert set(device_names(recorded_rmsnorm_path("mi300x_norms"))) == {"AMD Instinct MI300X"}
    with pytest.raises(TraceFileError, match="use one of"):
        recorded_rmsnorm_path("a100")


@pytest.mark.parametrize("key", RECORDED_RMSNORM)
def test_the_shipped_traces_hold_no_environment_block_and_no_token(key):
    text = gzip.decompress(recorded_rmsnorm_path(key).read_bytes()).decode()
    system = json.loads(text).get("metadata", {}).get("system", {})
    assert "env" not in system and "environ" not in system
    assert not TOKEN_LIKE.findall(text)
    assert not re.findall(r'"[A-Z_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)[A-Z_]*"\s*:', text)


def test_the_token_check_finds_a_planted_token():
    assert TOKEN_LIKE.findall('{"HF_TOKEN": "hf_' + "a" * 30 + '"}')


def test_the_figure_labels_each_panel_with_its_device_and_origin(analysed):
    panels = {
        device: analysed[key][1].query("call == 3")
        for device, key in (("an NVIDIA H100", "h100_qwen"), ("an AMD MI300X", "mi300x_qwen"))
    }
    fig = plot_call_kernels(panels)
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert "recorded on an NVIDIA H100, shipped by TraceLens, not this run" in titles[0]
    assert "recorded on an AMD MI300X, shipped by TraceLens, not this run" in titles[1]
    assert titles[0].startswith("8 kernels")
    assert TRACELENS_CAUTION in fig._suptitle.get_text()
    assert " us idle between them" in titles[1]
    unread = plot_call_kernels(panels, unread=["an AMD MI300X"])  # a recording stamped back to back: no idle figure
    titles = [ax.get_title(loc="left") for ax in unread.axes]
    assert "(stamped back to back: idle not read, may be in these times)" in titles[1] and "idle between" not in titles[1]
    assert " us idle between them" in titles[0]
    assert not unread.axes[1].collections[1].get_paths()  # and shades no idle
