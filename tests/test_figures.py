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


def test_a_title_names_the_backend():
    assert backend_title("Time per call", "cuda") == "Time per call  [measured on cuda]"
