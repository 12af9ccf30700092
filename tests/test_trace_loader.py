"""The msgspec loader gives exactly the DataFrames of the json loader it replaced, on every
recorded trace and on a trace the series writes; bad event fields give a clear error."""

import gzip
import json

import numpy as np
import pandas as pd
import pytest
import torch

from analysis import traces
from analysis.traces import Trace, load_trace
from helpers.errors import TraceFileError
from analysis.recorded import RECORDED_DIR

RECORDED_FILES = sorted(RECORDED_DIR.glob("*.json.gz"))


def load_trace_with_json(path, backend=None) -> Trace:
    """THE FORMER LOADER, kept here only as the oracle: json.load, then one hand-written pass
    filling parallel lists; the rest as analysis.traces does it."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        raw = json.load(fh)["traceEvents"]
    names, cats, ts, dur, pids, tids, corr = [], [], [], [], [], [], []
    mem_ts, mem_bytes, mem_dev, mem_addr = [], [], [], []
    flow_id, flow_ph, flow_ts, flow_tid = [], [], [], []
    for e in raw:
        ph = e.get("ph")
        if ph == "X":
            names.append(e.get("name", ""))
            cats.append(e.get("cat") or "")
            ts.append(e.get("ts", 0.0))
            dur.append(e.get("dur", 0.0))
            pids.append(e.get("pid", ""))
            tids.append(e.get("tid", ""))
            args = e.get("args")
            corr.append(args.get("correlation", -1) if isinstance(args, dict) else -1)
        elif ph in ("i", "I") and e.get("name") == "[memory]" and isinstance(e.get("args"), dict):
            mem_ts.append(e.get("ts", 0.0))
            mem_bytes.append(e["args"].get("Bytes", 0))
            mem_dev.append(e["args"].get("Device Type", 0))
            mem_addr.append(e["args"].get("Addr", -1))
        elif ph in ("s", "f") and "id" in e:
            flow_id.append(e["id"])
            flow_ph.append(ph)
            flow_ts.append(e.get("ts", 0.0))
            flow_tid.append(e.get("tid", ""))
    ts_arr, dur_arr = np.asarray(ts, dtype=float), np.asarray(dur, dtype=float)
    cat_col = pd.Categorical(cats)
    lane_names = pd.Series(cat_col.categories).map(traces.lane_of)
    if backend == "neuron":
        lane_names = lane_names.replace("device", "unverified")
    lanes = pd.Categorical(lane_names.to_numpy()[cat_col.codes] if len(cat_col.categories) else [])
    events = pd.DataFrame(
        {
            "name": pd.Categorical(names),
            "cat": cat_col,
            "lane": lanes,
            "ts": ts_arr,
            "dur": dur_arr,
            "end": ts_arr + dur_arr,
            "pid": traces._str_categorical(pids),
            "tid": traces._str_categorical(tids),
            "correlation": np.asarray(corr, dtype=np.int64),
        }
    )
    is_step = (events["lane"] == "framework") & events["name"].str.startswith("ProfilerStep#")
    steps = events.loc[is_step, ["name", "ts", "end"]].copy()
    steps["step"] = steps["name"].astype(str).str.slice(len("ProfilerStep#")).astype(int)
    steps = steps.sort_values("ts").reset_index(drop=True)
    origin = float(steps["ts"].min()) if len(steps) else (float(ts_arr.min()) if len(ts_arr) else 0.0)
    steps["dur"] = steps["end"] - steps["ts"]
    events["ts"] -= origin
    events["end"] -= origin
    steps[["ts", "end"]] -= origin
    events["step"] = traces._assign_steps(events["ts"].to_numpy(), steps)
    traces._steps_from_launches(events)
    memory = pd.DataFrame(
        {
            "ts": np.asarray(mem_ts, dtype=float) - origin,
            "bytes": np.asarray(mem_bytes, dtype=np.int64),
            "device_type": np.asarray(mem_dev, dtype=np.int64),
            "addr": np.asarray(mem_addr, dtype=np.int64),
        }
    )
    memory["step"] = traces._assign_steps(memory["ts"].to_numpy(), steps)
    flows = pd.DataFrame(
        {
            "id": [str(i) for i in flow_id],
            "ph": flow_ph,
            "ts": np.asarray(flow_ts, dtype=float) - origin,
            "tid": [str(t) for t in flow_tid],
        }
    )
    return Trace(
        path=path,
        events=events[traces.EVENT_COLUMNS],
        steps=steps[["step", "ts", "end", "dur"]],
        memory=memory,
        flows=flows,
        backend=backend,
        origin_us=origin,
    )


def assert_same_trace(new: Trace, old: Trace) -> None:
    for frame in ("events", "steps", "memory", "flows"):
        pd.testing.assert_frame_equal(getattr(new, frame), getattr(old, frame), check_exact=True, obj=frame)
    assert (new.origin_us, new.backend) == (old.origin_us, old.backend)


def test_every_recorded_trace_is_present():
    assert len(RECORDED_FILES) >= 6


@pytest.mark.parametrize("path", RECORDED_FILES, ids=lambda p: p.name.split("__")[0])
def test_recorded_trace_loads_as_before(path):
    new = load_trace(path)
    assert len(new.events) > 0
    assert_same_trace(new, load_trace_with_json(path))


def test_neuron_lanes_load_as_before():
    path = RECORDED_DIR / "trace_filter__sampled_rank-0.json.gz"
    new = load_trace(path, backend="neuron")
    assert (new.events["lane"] == "unverified").any()
    assert_same_trace(new, load_trace_with_json(path, backend="neuron"))


def test_a_trace_the_series_writes_loads_as_before(tmp_path):
    from helpers.backend import select_backend
    from lesson.profiling import profile_steps
    from lesson.rmsnorm import rmsnorm_naive

    x, w = torch.randn(32, 256), torch.ones(256)
    result = profile_steps(
        lambda: rmsnorm_naive(x, w),
        select_backend("cpu"),
        tmp_path,
        label="naive",
        wait=0,
        warmup=1,
        active=2,
        profile_memory=True,
    )
    new = load_trace(result.trace_path)
    assert len(new.steps) == 2 and len(new.memory) > 0
    assert_same_trace(new, load_trace_with_json(result.trace_path))


@pytest.mark.parametrize(
    "event, field",
    [
        ({"ph": "X", "name": "a", "ts": "soon", "dur": 1}, "ts"),
        ({"ph": "X", "name": "a", "ts": 0, "dur": 1, "args": {"correlation": "seven"}}, "correlation"),
        ({"ph": "Z", "name": "a", "ts": 0}, "'Z'"),  # not a Trace Event Format phase
        ({"name": "a", "ts": 0}, "`ph`"),  # no phase at all
    ],
)
def test_an_event_field_of_the_wrong_type_is_named(tmp_path, event, field):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [event]}))
    with pytest.raises(TraceFileError) as err:
        load_trace(path)
    assert str(path) in str(err.value) and "wrong type" in str(err.value) and field in str(err.value)
    assert "Fix:" in str(err.value)


@pytest.mark.parametrize("text", ["[1, 2]", '{"traceEvents": 5}', '{"traceEvents": {"ph": "X"}}'])
def test_json_without_an_event_list_is_not_a_trace(tmp_path, text):
    (tmp_path / "x.json").write_text(text)
    with pytest.raises(TraceFileError, match="not a Chrome trace"):
        load_trace(tmp_path / "x.json")


def test_invalid_utf8_is_a_clear_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(b'{"traceEvents": [{"ph": "X", "name": "\xff\xfe"}]}')
    with pytest.raises(TraceFileError, match="not complete JSON|truncated or corrupt"):
        load_trace(path)
