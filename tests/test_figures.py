"""analysis.figures: the step timeline drawn from real A100 traces (data/recorded/, by the HTA
project), and the title that names where the numbers came from."""

import matplotlib

matplotlib.use("Agg")

from analysis.figures import backend_title, plot_timeline  # noqa: E402
from analysis.recorded import RECORDED_ORIGIN, load_recorded  # noqa: E402
from analysis.traces import representative_step  # noqa: E402


def test_the_timeline_draws_one_panel_per_trace_with_its_step():
    trace = load_recorded("event_sync")
    fig = plot_timeline({"event_sync": trace}, RECORDED_ORIGIN)
    (ax,) = fig.axes
    assert ax.get_title(loc="left").startswith(f"event_sync: step {representative_step(trace)} ")
    assert RECORDED_ORIGIN in fig._suptitle.get_text()
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "framework"


def test_the_largest_gap_is_labelled_with_its_length_and_the_ops_either_side():
    from analysis.figures import short_op_name
    from analysis.steps import gap_table

    trace = load_recorded("event_sync")
    big = gap_table(trace).nlargest(1, "gap_us").iloc[0]
    (ax,) = plot_timeline({"event_sync": trace}, RECORDED_ORIGIN).axes
    (label,) = [t.get_text() for t in ax.texts if t.get_text().startswith("largest gap")]
    ends = f"{short_op_name(big['after'])} -> {short_op_name(big['before'])}"  # kernels: no aten:: names here
    assert label == f"largest gap in the drawn step {big['gap_us']:,.1f} us, {ends}"


def test_a_title_names_the_backend():
    assert backend_title("Time per call", "cuda") == "Time per call  [measured on cuda]"


def test_the_rank_and_stream_figures_draw_every_rank_and_strategy():
    import matplotlib.pyplot as plt
    import pandas as pd

    from analysis.figures import plot_cumulative_calls, plot_rank_steps

    waits = pd.DataFrame(
        [
            {
                "rank": r,
                "step": s,
                "start": 10.0 * s,
                "compute_end": 10.0 * s + 4 + 3 * r,
                "compute_ms": 4 + 3 * r,
                "wait_ms": 3 * (1 - r),
                "exchange_ms": 1.0,
            }
            for s in range(3)
            for r in range(2)
        ]
    )
    fig, ax = plt.subplots()
    plot_rank_steps(ax, waits, straggler_rank=1)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rank 0", "rank 1 (straggler)"]
    assert len(ax.collections) == 3 * len(waits)  # compute, wait and exchange per rank and step
    assert [t.get_text() for t in ax.texts] == ["0", "1", "2"]  # each step numbered above its bars
    fig, ax = plt.subplots()
    plot_rank_steps(ax, waits.assign(straggling=waits["step"] % 2 == 1), straggler_rank=1)
    assert [t.get_text() for t in ax.texts] == ["0", "1*", "2"] and "* a slow step" in ax.get_xlabel()
    calls = pd.DataFrame({"strategy": ["a"] * 4 + ["b"] * 4, "seconds": [1.0, 0.1] * 4, "compiled": [True, False] * 4})
    fig, ax = plt.subplots()
    plot_cumulative_calls(ax, calls, pass_starts_at=2)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a (2 compiles)", "b (2 compiles)"]
    plt.close("all")


def test_the_device_lanes_can_draw_non_computing_bars_light():
    from analysis import RECORDED_NEURON_DIR, draw_lanes, load_exports, recorded_case

    exports = load_exports(RECORDED_NEURON_DIR)
    cases = {name: recorded_case(name) for name in exports}
    pair = ("baseline_bf16_s512", "fused_bf16_s512")
    plain = draw_lanes(exports, cases, pair, "o", 128)
    light = draw_lanes(exports, cases, pair, "o", 128, computing=True)
    assert {c.get_alpha() for c in plain.axes[0].collections} == {None}  # default: today's drawing
    assert 0.3 in {c.get_alpha() for c in light.axes[0].collections}
    labels = [t.get_text() for t in light.axes[-1].get_legend().get_texts()]
    assert labels[-1] == "light: no computing opcode"
