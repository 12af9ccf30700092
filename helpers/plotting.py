"""Plot defaults and the series' charts.

Defaults are set once here: readable sizes, the Okabe-Ito colour-blind-safe palette, and
titles that name the backend, so that a chart copied out of a notebook still says where its
numbers were measured.
"""
from __future__ import annotations

import matplotlib as mpl

# Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def set_plot_defaults() -> None:
    mpl.rcParams.update(
        {
            "figure.figsize": (9.0, 4.5),
            "figure.dpi": 100,
            "savefig.dpi": 120,
            "savefig.bbox": "tight",
            "font.size": 11,
            "axes.titlesize": 12,
            "axes.labelsize": 11,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.prop_cycle": mpl.cycler(color=OKABE_ITO),
            "legend.frameon": False,
        }
    )


def backend_title(text: str, backend: str) -> str:
    """A chart title that names the backend the numbers came from."""
    return f"{text}  [measured on {backend}]"


LANE_ROWS = ("framework", "runtime", "device")
LANE_COLORS = {"framework": OKABE_ITO[0], "runtime": OKABE_ITO[1], "device": OKABE_ITO[2]}


def plot_timeline(traces: dict, backend: str, step: int | None = None, max_us: float | None = None):
    """One profiler step of each trace (its median-length step by default), stacked on one time
    scale, in three lanes.

    framework: PyTorch ops on the host; runtime: the device API on the host; device: the
    operations that did the work (on cpu, where there is no device lane, the compute ops, drawn
    in that row and labelled so). Idle gaps between device operations are shaded, and the
    largest is labelled with its length.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .traces import gap_table, representative_step, step_ops

    fig, axes = plt.subplots(len(traces), 1, figsize=(11, 1.9 * len(traces) + 0.8), sharex=True, squeeze=False)
    spans = []
    for ax, (label, trace) in zip(axes[:, 0], traces.items()):
        s = representative_step(trace) if step is None else step
        start = float(trace.steps.set_index("step").loc[s, "ts"])
        ev = trace.events[(trace.events["step"] == s) & ~trace.events["name"].astype(str).str.startswith("ProfilerStep#")]
        ops = step_ops(trace, s)
        rows = {"framework": list(zip(ev.loc[ev["lane"] == "framework", "ts"] - start, ev.loc[ev["lane"] == "framework", "dur"])),
                "runtime": list(zip(ev.loc[ev["lane"] == "runtime", "ts"] - start, ev.loc[ev["lane"] == "runtime", "dur"])),
                "device": list(zip(ops["start_us"], ops["duration_us"]))}
        for y, lane in enumerate(reversed(LANE_ROWS)):
            ax.broken_barh([(x0, max(w, 0.05)) for x0, w in rows[lane]], (y - 0.35, 0.7),
                           facecolors=LANE_COLORS[lane], alpha=0.45 if lane == "framework" else 0.9,
                           edgecolor="black", linewidth=0.3)
        gaps = gap_table(trace, s)
        for _, g in gaps.iterrows():
            ax.axvspan(g["start_us"], g["start_us"] + g["gap_us"], ymin=0.0, ymax=0.33, color=OKABE_ITO[3],
                       alpha=0.25, lw=0)
        if len(gaps):
            big = gaps.loc[gaps["gap_us"].idxmax()]
            ax.annotate(f"largest gap {big['gap_us']:,.1f} us", xy=(big["start_us"] + big["gap_us"] / 2, 0.35),
                        xytext=(0, 14), textcoords="offset points", ha="center", fontsize=9,
                        arrowprops={"arrowstyle": "->", "lw": 0.8})
        device_label = "device" if trace.has_device_lane else "compute ops (cpu)"
        ax.set_yticks([0, 1, 2], [device_label, "runtime", "framework"])
        ax.set_ylim(-0.6, 2.6)
        ax.set_title(f"{label}: step {s}, {len(ops)} operation{'' if len(ops) == 1 else 's'}", loc="left", fontsize=10)
        spans.append(float(trace.steps.set_index("step").loc[s, "dur"]))
    axes[-1, 0].set_xlabel("time since the start of the step (us)")
    axes[-1, 0].set_xlim(0, max_us or max(spans) * 1.02)
    fig.legend(handles=[Patch(color=LANE_COLORS[k], label=k) for k in LANE_ROWS]
               + [Patch(color=OKABE_ITO[3], alpha=0.25, label="idle gap")], loc="upper right", ncol=4, fontsize=9)
    fig.suptitle(backend_title("One profiler step per variant, same time scale", backend), x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig

