"""analysis.key_averages: the profiler's table read from a real cpu profile made here, and the
device-time verdict for each reason device time may be missing (tables written by hand)."""

import pandas as pd
import torch
from torch.profiler import ProfilerActivity, profile

from analysis.key_averages import DEVICE_COLUMNS, device_time_verdict, key_averages_frame


def test_a_real_cpu_profile_is_read_with_the_series_columns():
    x = torch.randn(64, 64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (x * 2).sum()
    table = key_averages_frame(prof)
    assert {"name", "calls", "self_cpu_us", "cpu_total_us", *DEVICE_COLUMNS} <= set(table.columns)
    mul = table[table["name"] == "aten::mul"]
    assert len(mul) == 1 and mul["calls"].iloc[0] == 1 and mul["self_cpu_us"].iloc[0] > 0


def test_each_missing_device_time_says_why():
    busy = pd.DataFrame({"name": ["k"], "self_device_us": [12.0]})
    zero = pd.DataFrame({"name": ["k"], "self_device_us": [0.0]})
    assert device_time_verdict(busy, True, "cuda", True) == (True, "device time captured")
    captured, why = device_time_verdict(busy, False, "cuda", True)
    assert not captured and "synchronize()" in why
    captured, why = device_time_verdict(busy, True, "cpu", False)
    assert not captured and "cpu has no separate device timeline" in why
    captured, why = device_time_verdict(zero, True, "neuron", True, correlate_device_time=True)
    assert not captured and "correlate_device_time passed: True" in why and "Neuron Explorer" in why
    captured, why = device_time_verdict(zero, True, "cuda", True)
    assert not captured and "CUPTI" in why
