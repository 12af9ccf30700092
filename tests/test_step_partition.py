"""Per-step device figures partition the trace: summed over the profiler steps, device busy and
idle time equal the figures for the whole trace, also where the device runs behind the host and
one step's device work overlaps the next step's.

Checked on every recorded trace in data/recorded/ (real A100 traces by the HTA project; each file
is one rank of its job, so this is per rank), on a SYNTHETIC trace in which the device lags the
host by more than a step, and on a cpu trace made here. The expected figures come from an
independent oracle: the union of the step-assigned device intervals, merged by a plain sweep.
"""

from pathlib import Path

import pytest

from analysis.device_view import busy_summary, idle_gaps
from analysis.steps import step_summary
from analysis.traces import device_ops, load_trace

RECORDED = sorted((Path(__file__).resolve().parents[1] / "data" / "recorded").glob("*.json.gz"))


def union_figures(intervals: list[tuple[float, float]]) -> dict[str, float]:
    """span (first start to last end), busy (time covered by at least one interval), idle (the rest)."""
    if not intervals:
        return {"span_us": 0.0, "busy_us": 0.0, "idle_us": 0.0}
    busy, cur_start, cur_end = 0.0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                busy += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    busy += cur_end - cur_start
    span = max(e for _, e in intervals) - min(s for s, _ in intervals)
    return {"span_us": span, "busy_us": busy, "idle_us": span - busy}


def step_work(trace) -> list[tuple[float, float]]:
    """The device operations the steps launched (device lane, not GPU-side annotations), as intervals."""
    ev = trace.events
    dev = ev[(ev["lane"] == "device") & (ev["cat"].astype(str).str.lower() != "gpu_user_annotation") & ev["step"].notna()]
    return list(zip(dev["ts"], dev["end"]))


def close(value: float):
    return pytest.approx(value, rel=1e-9, abs=1e-6)


def assert_partition(trace, expected: dict[str, float]):
    """step_summary and busy_summary, per step and whole, against the oracle's figures."""
    s = assert_step_rows_add_up(trace, expected)
    whole = busy_summary(trace)
    assert whole["busy_us"] == close(expected["busy_us"]) and whole["idle_us"] == close(expected["idle_us"])
    assert whole["span_us"] == close(expected["span_us"])
    per_step = {k: busy_summary(trace, step=k) for k in trace.steps["step"]}
    assert sum(p["busy_us"] for p in per_step.values()) == close(whole["busy_us"])
    assert sum(p["idle_us"] for p in per_step.values()) == close(whole["idle_us"])
    assert sum(p["device_ops"] for p in per_step.values()) == whole["device_ops"]
    for k, p in per_step.items():  # the two per-step readings are one definition
        assert (p["busy_us"], p["idle_us"], p["span_us"]) == (
            close(s.at[k, "busy_us"]),
            close(s.at[k, "idle_us"]),
            close(s.at[k, "window_us"]),
        )
        gaps = idle_gaps(trace, step=k)
        assert len(gaps) == s.at[k, "idle_gaps"] and gaps["gap_us"].sum() == close(s.at[k, "idle_total_us"])
    assert idle_gaps(trace)["gap_us"].sum() == close(whole["idle_us"])  # the whole trace's gaps, between steps included


def assert_step_rows_add_up(trace, expected: dict[str, float]):
    """step_summary's rows: each window split into busy and idle, the windows summing to the span,
    busy and idle summing to the oracle's; returns the summary."""
    s = step_summary(trace)
    assert (s["busy_us"] >= 0).all() and (s["idle_total_us"] >= 0).all() and (s["idle_before_next_us"] >= 0).all()
    assert (s["busy_us"] + s["idle_us"]).to_list() == [close(w) for w in s["window_us"]]
    assert (s["idle_total_us"] + s["idle_before_next_us"]).to_list() == [close(i) for i in s["idle_us"]]
    assert s["window_us"].sum() == close(expected["span_us"])
    assert s["busy_us"].sum() == close(expected["busy_us"])
    assert s["idle_us"].sum() == close(expected["idle_us"])
    return s


@pytest.mark.parametrize("path", RECORDED, ids=[p.name.removesuffix(".json.gz") for p in RECORDED])
def test_partition_on_every_recorded_trace(path):
    trace = load_trace(path)
    if not len(trace.steps):  # the AlexNet benchmark has no ProfilerStep: no step to sum over
        assert step_summary(trace).empty
        dev = trace.events[trace.events["lane"] == "device"]
        assert busy_summary(trace)["busy_us"] == close(union_figures(list(zip(dev["ts"], dev["end"])))["busy_us"])
        return
    assert_partition(trace, union_figures(step_work(trace)))


def lagging_trace(path: Path) -> Path:
    """SYNTHETIC: three 100-us host steps; the device falls behind, so step 1's kernel `b` still
    runs when step 2's copy starts (on another stream), and step 3's work runs 50-170 us after its
    host step ended (more than one step behind). Gaps: 20 us inside step 1 (a launched late), 7 us
    between step 2's last and step 3's first operation, 10 us inside step 3 (f queued).

    Device (us):  a 13-23 | b 43-143 | copy 133-153 (stream 8) | c 143-243 | d 243-343 | e 350-450 | f 460-470
    """
    import json

    kernels = {  # name: (step, launch ts, device start, device end, stream)
        "a": (1, 10, 13, 23, 7),
        "b": (1, 40, 43, 143, 7),
        "copy": (2, 130, 133, 153, 8),
        "c": (2, 110, 143, 243, 7),
        "d": (2, 120, 243, 343, 7),
        "e": (3, 210, 350, 450, 7),
        "f": (3, 290, 460, 470, 8),
    }
    events = [
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": f"ProfilerStep#{k}",
            "pid": 1,
            "tid": 1,
            "ts": 100.0 * (k - 1),
            "dur": 100.0,
        }
        for k in (1, 2, 3)
    ]
    for corr, (name, (_, launch, start, end, stream)) in enumerate(kernels.items()):
        cat = "gpu_memcpy" if name == "copy" else "kernel"
        events += [
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": launch,
                "dur": 2.0,
                "args": {"correlation": corr},
            },
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": 0,
                "tid": stream,
                "ts": start,
                "dur": end - start,
                "args": {"correlation": corr},
            },
        ]
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_partition_when_the_device_lags_more_than_a_step(tmp_path):
    trace = load_trace(lagging_trace(tmp_path / "lagging.json"))
    expected = union_figures(step_work(trace))
    assert expected == {"span_us": 457.0, "busy_us": 420.0, "idle_us": 37.0}  # the oracle, by hand from the docstring
    assert list(device_ops(trace).groupby("step").size()) == [2, 3, 2]  # each op in the step that launched it
    assert_partition(trace, expected)
    s = step_summary(trace)  # the windows: 13-133, 133-350, 350-470 us
    assert s[["window_us", "busy_us", "idle_us"]].values.tolist() == [[120, 100, 20], [217, 210, 7], [120, 110, 10]]
    assert list(s["idle_gaps"]) == [1, 0, 1] and list(s["idle_before_next_us"]) == [0, 7, 0]
    assert list(idle_gaps(trace, step=3)["cause"]) == ["queued"] and list(idle_gaps(trace, step=1)["cause"]) == ["launched late"]


def test_partition_on_a_cpu_trace(tmp_path):
    """On cpu there is no device lane: the work is the compute ops the CPU ran itself, inside each
    step's host time, so no step's work overlaps another's. The property then says that the steps'
    busy and idle time add up to the stretch from the first step's first compute op to the last
    one's end; busy_summary reads only a device lane and has nothing to add here (0 operations)."""
    import torch

    from helpers.backend import select_backend
    from lesson.profiling import profile_steps
    from lesson.rmsnorm import rmsnorm_naive

    x, w = torch.randn(64, 512), torch.ones(512)
    result = profile_steps(
        lambda: rmsnorm_naive(x, w), select_backend("cpu"), tmp_path, label="naive", wait=0, warmup=1, active=3
    )
    trace = load_trace(result.trace_path)
    ops = device_ops(trace)
    s = assert_step_rows_add_up(trace, union_figures(list(zip(ops["ts"], ops["end"]))))
    assert not trace.has_device_lane and busy_summary(trace)["device_ops"] == 0
    # the gaps between a step's own ops are its idle_gaps (at most one fewer than its ops); the time
    # from its last op to the next step's first is idle before the next step
    assert (s["idle_gaps"] <= s["device_ops"] - 1).all()
    assert list(s["idle_before_next_us"] > 0) == [True] * (len(s) - 1) + [False]


def test_contract_neuron_trace_has_no_partition(tmp_path):
    """A SYNTHETIC trace recorded as neuron: no device operation is counted (N19), so there is no
    device window to cut: every step's device figures are NaN (not counted), and the property
    does not apply."""
    import json

    (tmp_path / "environment.json").write_text(json.dumps({"backend": "neuron"}))
    trace = load_trace(lagging_trace(tmp_path / "t.json"))
    s = step_summary(trace)
    assert s[["window_us", "busy_us", "idle_us", "idle_gaps"]].isna().all().all()
    assert busy_summary(trace) == {
        "device_ops": 0,
        "kernels": 0,
        "span_us": 0.0,
        "busy_us": 0.0,
        "idle_us": 0.0,
        "kernel_us": 0.0,
    }
