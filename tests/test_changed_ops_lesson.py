"""lesson.changed_ops: each op of two variants sorted into one kind of change."""

import pandas as pd

from lesson.changed_ops import change_line, op_changes


def _table():
    rows = {
        "aten::mul": (3.0, 3.0),  # both
        "aten::add": (1.0, 0.0),  # naive only, its twin add_ in the fused: changed form
        "aten::add_": (0.0, 1.0),
        "aten::to": (3.0, 5.0),  # count changed
        "aten::pow": (1.0, 0.0),  # removed, no twin
        "aten::type_as": (0.0, 1.0),  # added
    }
    return pd.DataFrame.from_dict(rows, orient="index", columns=["naive", "torch.rms_norm"])


def test_op_changes_tells_a_form_change_from_a_removal():
    change = op_changes(_table(), "naive", "torch.rms_norm")["change"].to_dict()
    assert change == {
        "aten::mul": "both",
        "aten::add": "changed form",
        "aten::add_": "changed form",
        "aten::to": "count changed",
        "aten::pow": "removed",
        "aten::type_as": "added",
    }


def test_change_line_names_each_kind_and_none_where_empty():
    line = change_line(op_changes(_table(), "naive", "torch.rms_norm"))
    assert line == ("removed: aten::pow | added: aten::type_as | changed form: aten::add, aten::add_ | count changed: aten::to")
    same = pd.DataFrame({"a": [1.0], "b": [1.0]}, index=["aten::mul"])
    assert change_line(op_changes(same, "a", "b")) == "removed: none | added: none | changed form: none | count changed: none"


def test_own_time_line_gives_the_part_inside_the_whole_per_step():
    from lesson.changed_ops import own_time_line

    table = pd.DataFrame(
        {
            "name": ["torch.rms_norm", "aten::rms_norm", "aten::mul", "ProfilerStep*"],
            "self_cpu_us": [30.0, 10.0, 900.0, 5.0],
            "cpu_total_us": [1000.0, 960.0, 900.0, 1005.0],
        }
    )
    line = own_time_line(table, "torch.rms_norm", ["torch.rms_norm", "aten::rms_norm"], steps=2)
    assert line == (
        "torch.rms_norm's CPU time per call, with its children: 500 us"
        " (profiler time; variants are compared by time under Side by side)"
        "\n  of which the self CPU time of torch.rms_norm + aten::rms_norm: 20 us, 4.0%"
    )
    alone = own_time_line(table, "torch.rms_norm", ["torch.rms_norm", "aten::_fused_rms_norm"], steps=2)
    assert alone.endswith("of which the self CPU time of torch.rms_norm: 15 us, 3.0%")  # a row not in the table: not named


def test_fused_rate_line_gives_the_second_rate_and_the_range_it_cannot_narrow():
    """The far smaller fused calls' rate is the byte model's other end, not a check of its headline."""
    from analysis.verdicts import estimate
    from lesson.changed_ops import fused_rate_line

    call = pd.Series({"x_dtype": "float32", "x_shape": "8x16x32x32"})
    rows = ["fused_gb_per_s", "fused_rates", "fused_gb_per_s_low", "fused_gb_per_s_high", "fused_min_at_fused_rate_us"]
    rows += ["naive_kernel_us", "fused_min_mb", "fused_bytes", "saved_at_naive_rate_us", "naive_gb_per_s"]
    mixed = pd.DataFrame(
        {
            "an NVIDIA H100": [247.0, 6, 190.5, 255.3, 148.0, 150.5, 36.6, 1.05e6, 133.8, 2192.8],
            "an AMD MI300X": [247.0, 6, 190.5, 255.3, 148.0, 116.6, 36.6, 1.05e6, 103.7, 2829.1],
        },
        index=rows,
    )
    saving = estimate("S", {"an NVIDIA H100": 133.8, "an AMD MI300X": 103.7}, "us", "a byte model", "launch overhead")
    line = fused_rate_line(mixed, call, saving, ["an AMD MI300X"])
    assert line.startswith(
        "naive moves about 9x the one-pass minimum (330 MB, counted from its kernels' shapes in 02, against 36.6 MB):"
        " the room a one-pass kernel has\n"  # the byte model's takeaway, first; the bytes are counted, not derived
        "S:\nH100: about 134 us at the naive rate (one rate only: not a verdict)\n"
        "MI300X: about 104 us at the naive rate, -31 us at the small fused calls' rate: inconclusive;"
        " kernels stamped back to back: times may include idle\n"  # 02's caveat, where the rate is given
        "(estimated, not measured: a byte model; this estimate cannot show launch overhead)\n"
    )  # one plain line per device, each rate named beside its figure; the MI300X's fused rate prices no H100 kernel
    assert line.endswith(
        "the small fused calls' rate: the median of the 6 recorded (MI300X, 35x fewer bytes), 247 GB/s"
    )  # where the second rate comes from; the one-pass time at it is the table's row
    assert "check" not in line and "range above" not in line
    both = mixed.copy()
    both.loc["naive_kernel_us"] = [200.0, 190.0]
    assert "naive moves about 12-15x the one-pass minimum (439-538 MB" in fused_rate_line(both, call, saving)
    assert "MI300X: about 104 us at the naive rate, 42 us at the small fused calls' rate: inconclusive\n" in fused_rate_line(
        both, call, saving
    )  # no device stamped back to back: no caveat


def test_own_time_line_takes_the_median_step_from_the_trace(tmp_path):
    """The 5-step mean (one slow step) read 135 ms beside the tree's 103 ms; the share is of the same step."""
    from unittest import mock

    from lesson import changed_ops

    table = pd.DataFrame({"name": ["torch.rms_norm"], "self_cpu_us": [30.0], "cpu_total_us": [1000.0]})
    with mock.patch.object(changed_ops, "_median_step_times", return_value=(400.0, 8.0)):
        line = changed_ops.own_time_line(table, "torch.rms_norm", ["torch.rms_norm"], steps=2, trace_path="t.json")
    assert line.startswith("torch.rms_norm's CPU time in the median profiled step, with its children: 400 us")
    assert line.endswith("torch.rms_norm: 8 us, 2.0%")


def test_priced_table_names_its_rows_in_plain_words():
    """The displayed rows were the metric keys, defined nowhere on the page."""
    from lesson.changed_ops import PRICED_ROWS, priced_table

    priced = pd.DataFrame({"an NVIDIA H100": dict.fromkeys(PRICED_ROWS, 1.04), "an AMD MI300X": dict.fromkeys(PRICED_ROWS, 2.0)})
    shown = priced_table(priced)
    assert list(shown.index) == [*PRICED_ROWS.values(), "saved, fused rate (us, estimate)"] and shown.iloc[0, 0] == 1.0
    assert shown.loc["saved, fused rate (us, estimate)"].tolist() == [
        "none recorded",
        0.0,
    ]  # a saved row per end; MI300X only


def test_ratio_ends_says_which_slow_rounds_set_the_range():
    """A3 prints it under 05's large-shape pair: which round set each end of the range."""
    import numpy as np

    from analysis.timing import Timing, paired_ratio
    from lesson.changed_ops import ratio_ends

    naive = np.full(15, 100.0)
    fused = np.array([100.0 - i * 0.1 for i in range(13)] + [170.0, 180.0])  # its 2 slow rounds: the top two ratios
    timings = {"naive": Timing("naive", naive, 1), "torch.rms_norm": Timing("torch.rms_norm", fused, 1)}
    line = ratio_ends(timings, paired_ratio(timings, "torch.rms_norm", "naive"))
    # an end no slow round sets names the round's furthest variant and its factor
    assert "p10 from a round where torch.rms_norm took 0.99x its median (under 1.5x), p90 from a round slow" in line
    naive[3:5] = [123.0, 124.0]  # naive rounds under the cut; the second lowest ratio (p10 of 15) is 1.23x
    timings["naive"] = Timing("naive", naive, 1)
    assert "p10 from a round where naive took 1.23x its median (under 1.5x)" in ratio_ends(
        timings, paired_ratio(timings, "torch.rms_norm", "naive")
    )
    both = {"naive": Timing("naive", np.array([80_000.0] * 13 + [270_000.0, 272_000.0]), 1)}
    both["fused"] = Timing("fused", np.full(15, 80_000.0), 1)
    assert ratio_ends(both, paired_ratio(both, "fused", "naive")).startswith(
        "p10 from a round slow for naive, p90 from a round where fused took 1.00x its median (under 1.5x)"
    )


def test_saving_sentence_states_its_condition_untested():
    """The line "it would save ... about 134 us" read alone as a finding. Each device's line now names its
    rate and says "untested" or "inconclusive" (`fused_rate_line`); the subject heads them."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "A2_checks_naive_and_fused.ipynb").read_text())
    source = "".join("".join(c["source"]) for c in nb["cells"])
    assert "a one-pass kernel's saving per recorded Qwen2RMSNorm call" in source and "print(fused_rate_line(" in source
