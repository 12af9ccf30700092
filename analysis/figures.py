"""The series' chart conventions, and the figure the trace analysis draws: one step's timeline.

Every chart names the backend its numbers came from (`backend_title`), so that a chart copied out
of a notebook still says where it was measured; the palette is Okabe & Ito's, and one colour
stands for one meaning (a lane of the timeline and the same share of a step in the time split).
matplotlib is imported where a figure is drawn, so that importing the conventions costs nothing.
"""

from __future__ import annotations

# Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def backend_title(text: str, backend: str) -> str:
    """A chart title that names the backend the numbers came from."""
    return f"{text}  [measured on {backend}]"


# One colour per meaning in every chart of the series: a lane of the timeline and the same
# share of a step in the time split are the same colour.
MEANING_COLORS = {
    "framework": OKABE_ITO[0],  # PyTorch ops on the host
    "runtime": OKABE_ITO[1],  # the device API on the host (launches, driver calls)
    "device busy": OKABE_ITO[2],  # a device operation (on cpu: a compute op) running
    "idle": OKABE_ITO[3],  # between two device operations of a step
    "host only": "#999999",  # the rest of a step: only the host works
    "unverified": OKABE_ITO[4],  # device-like events on neuron, not counted (N19)
}
LANE_ROWS = ("framework", "runtime", "device")
LANE_COLORS = {
    "framework": MEANING_COLORS["framework"],
    "runtime": MEANING_COLORS["runtime"],
    "device": MEANING_COLORS["device busy"],
}


IDLE_ALPHA = 0.45  # idle is drawn translucent everywhere: it is the absence of work


def short_op_name(name: str) -> str:
    """An op's name as a bar label: `aten::mul` -> `mul`; a compiled graph call -> `compiled graph`;
    a kernel -> its name without namespaces, templates and arguments."""
    from .device_view import short_kernel_name
    from .traces import COMPILED_GRAPH_PREFIX

    return "compiled graph" if name.startswith(COMPILED_GRAPH_PREFIX) else short_kernel_name(name)


def _label_bars(ax, bars: list[tuple[float, float, str]], y: float, min_fraction: float) -> None:
    """Write each operation's name on its bar where the bar is wide enough to hold it, widest bars
    first, and never over a name already written on this row (nested ops share their parent's span)."""
    lo, hi = ax.get_xlim()
    per_char = (hi - lo) * 5.0 / max(ax.get_window_extent().width, 1.0)  # an 8-point character, in data units
    placed: list[tuple[float, float]] = []  # (centre, half width) of the names written so far
    for x0, width, name in sorted(bars, key=lambda bar: -bar[1]):
        centre, half = x0 + width / 2, len(name) * per_char / 2
        if width < min_fraction * (hi - lo) or any(abs(centre - c) < half + h for c, h in placed):
            continue
        placed.append((centre, half))
        ax.text(centre, y, name, ha="center", va="center", fontsize=8, clip_on=True)


def plot_timeline(
    traces: dict,
    backend: str,
    step: int | None = None,
    max_us: float | None = None,
    min_us: float = 0.0,
    label_lanes: tuple[str, ...] = ("device",),
):
    """One profiler step of each trace (its median-length step by default), stacked on one time
    scale, one row per lane that has events in it (framework, runtime, device); `min_us` and
    `max_us` crop the time axis, and the bars of `label_lanes` carry their names.

    framework: PyTorch ops on the host; runtime: the device API on the host; device: the
    operations that did the work (on cpu, where there is no device lane, the compute ops, drawn
    in that row and labelled so), each named on its bar where it is wide enough. Idle gaps
    between device operations are shaded, and the largest is labelled with its length and the ops
    either side (`after -> before`, as `gap_table` names them; kernels by their short names).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .steps import gap_table, step_ops
    from .traces import representative_step

    steps, rows_of = {}, {}
    for label, trace in traces.items():
        s = representative_step(trace) if step is None else step
        step_row = trace.steps.set_index("step").loc[s]
        start = float(step_row["ts"])
        ev = trace.events[(trace.events["step"] == s) & ~trace.events["name"].astype(str).str.startswith("ProfilerStep#")]
        ops = step_ops(trace, s)
        lane_events = {lane: ev[ev["lane"] == lane] for lane in ("framework", "runtime")}
        rows_of[label] = {lane: list(zip(e["ts"] - start, e["dur"], e["name"].astype(str))) for lane, e in lane_events.items()}
        rows_of[label]["device"] = list(zip(ops["start_us"], ops["duration_us"], ops["name"].astype(str)))
        steps[label] = (s, ops, float(step_row["dur"]))
    shown = [lane for lane in LANE_ROWS if any(rows[lane] for rows in rows_of.values())]  # no empty lanes
    fig, axes = plt.subplots(
        len(traces), 1, figsize=(11, (0.55 * len(shown) + 0.9) * len(traces) + 0.8), sharex=True, squeeze=False
    )
    axes[-1, 0].set_xlim(min_us, max_us or max(span for _, _, span in steps.values()) * 1.02)
    for ax, (label, trace) in zip(axes[:, 0], traces.items()):
        s, ops, _ = steps[label]
        order = list(reversed(shown))
        for y, lane in enumerate(order):
            bars = rows_of[label][lane]
            ax.broken_barh(
                [(x0, max(w, 0.05)) for x0, w, _ in bars],
                (y - 0.35, 0.7),
                facecolors=LANE_COLORS[lane],
                alpha=0.45 if lane == "framework" else 0.9,
                edgecolor="black",
                linewidth=0.3,
            )
            if lane in label_lanes:
                _label_bars(ax, [(x0, w, short_op_name(n)) for x0, w, n in bars], y, 0.04)
        gaps = gap_table(trace, s)
        device_row = order.index("device") if "device" in order else None
        if device_row is not None and len(gaps):
            # in the device row's own band (data coordinates), so a gap never reaches into another lane
            ax.broken_barh(
                [(g["start_us"], g["gap_us"]) for _, g in gaps.iterrows()],
                (device_row - 0.35, 0.7),
                facecolors=MEANING_COLORS["idle"],
                alpha=IDLE_ALPHA,
                lw=0,
            )
            big = gaps.loc[gaps["gap_us"].idxmax()]
            ends = " -> ".join(n if n.startswith("aten::") else short_op_name(n) for n in (big["after"], big["before"]))
            ax.annotate(  # below the device row, where no lane is drawn; the ops either side, as gap_table names them
                f"largest gap in the drawn step {big['gap_us']:,.1f} us, {ends}",  # one step's gap
                xy=(big["start_us"] + big["gap_us"] / 2, device_row - 0.35),
                xytext=(0, -10),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=9,
                arrowprops={"arrowstyle": "->", "lw": 0.8},
            )
        names = {
            "device": "device" if trace.has_device_lane else "compute ops (cpu)",
            "runtime": "runtime",
            "framework": "framework",
        }
        ax.set_yticks(range(len(order)), [names[lane] for lane in order])
        ax.set_ylim(-1.0, len(order) - 0.4)  # room below the bottom row for the gap's label
        # the profiler's own step number (ProfilerStep#N counts the schedule's wait and warm-up steps too)
        which = (
            "its only step" if len(trace.steps) == 1 else f"median length of {len(trace.steps)} recorded, profiler's numbering"
        )
        what = "device operation" if trace.has_device_lane else "compute op"  # as the bottom row is named
        ax.set_title(f"{label}: step {s} ({which}), {len(ops)} {what}{'' if len(ops) == 1 else 's'}", loc="left", fontsize=10)
    axes[-1, 0].set_xlabel("time since the start of the step (us)")
    cpu_only = not any(t.has_device_lane for t in traces.values())
    legend = [
        Patch(
            color=LANE_COLORS[k],
            alpha=0.45 if k == "framework" else 0.9,
            label={
                "device": "compute ops" if cpu_only else "device busy",
                "framework": "framework (darker where calls nest)",
            }.get(k, k),
        )
        for k in shown
    ]
    fig.legend(
        # on cpu the CPU runs framework code in these gaps: "idle" read as the CPU sitting still (06's reader)
        handles=legend
        + [Patch(color=MEANING_COLORS["idle"], alpha=IDLE_ALPHA, label="gap between compute ops" if cpu_only else "idle gap")],
        loc="upper left",
        bbox_to_anchor=(0.01, 0.955),  # its own line under the title, so a long title never runs into it
        ncol=4,
        fontsize=9,
        frameon=False,
    )
    fig.suptitle(backend_title("One profiler step per variant, same time scale", backend), x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    return fig


EXCHANGE_COLOR = "#56B4E9"  # sky blue: apart from the waiting (vermilion, hatched) and the compute (green)


def plot_rank_steps(ax, waits, straggler_rank: int = -1) -> None:
    """Every rank's recorded steps on one time axis (notebook 08): per rank and step, compute (green),
    waiting inside the all-reduce for the last rank to arrive (hatched) and the exchange (blue).

    Args:
        ax: the matplotlib axes to draw on.
        waits: analysis.rank_view.collective_waits rows (start, compute_end, compute_ms, wait_ms,
            exchange_ms in ms on the ranks' shared clock).
        straggler_rank: the rank labelled "(straggler)" on its row; -1 for none.
            Each step's number is written above its bars, with "*" where the rows' `straggling` column
            (where present) marks it as a step with the straggler's extra work.
    """
    from matplotlib.patches import Patch

    idle = {"facecolor": MEANING_COLORS["idle"], "alpha": IDLE_ALPHA, "hatch": "//", "edgecolor": MEANING_COLORS["idle"]}
    for _, s in waits.iterrows():
        y = (s["rank"] - 0.3, 0.6)
        ax.broken_barh([(s["start"], s["compute_ms"])], y, facecolors=MEANING_COLORS["device busy"])
        ax.broken_barh([(s["compute_end"], s["wait_ms"])], y, **idle)
        ax.broken_barh([(s["compute_end"] + s["wait_ms"], s["exchange_ms"])], y, facecolors=EXCHANGE_COLOR)
    ranks = sorted(int(r) for r in waits["rank"].unique())
    ax.set_yticks(ranks, [f"rank {r}" + (" (straggler)" if r == straggler_rank else "") for r in ranks])
    ax.set_ylim(max(ranks) + 0.5, min(ranks) - 0.8)  # inverted: rank 0 on top, a row for the step numbers above it
    slow = "straggling" in waits  # 08's reader matched "slow steps" to the bars by counting: number them
    for step, rows in waits.groupby("step"):
        marked = "*" if slow and bool(rows["straggling"].any()) else ""
        ax.text(rows["start"].min(), min(ranks) - 0.4, f"{step}{marked}", fontsize=7, va="bottom")
    ax.set_xlabel("time (ms, one clock for all ranks); above: step numbers" + (", * a slow step" if slow else ""))
    handles = [
        Patch(color=MEANING_COLORS["device busy"], label="compute"),
        Patch(**idle, label="waiting for the last rank to arrive"),
        Patch(color=EXCHANGE_COLOR, label="exchange"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1, 1))


def plot_cumulative_calls(ax, calls, pass_starts_at: int) -> None:
    """Cumulative wall time of each strategy's calls over a stream served twice (notebook 07); a
    marker (one shape per strategy, drawn largest first so that markers at one point stay visible)
    on every call that compiled a graph, and a dashed line where the second pass begins.

    Args:
        ax: the matplotlib axes to draw on.
        calls: one row per call with `strategy`, `seconds` and `compiled`, in the order served.
        pass_starts_at: the index of the first call of the second pass (the stream's length).
    """
    for i, name in enumerate(dict.fromkeys(calls["strategy"])):
        s = calls[calls["strategy"] == name].reset_index(drop=True)
        total = s["seconds"].cumsum()
        label = f"{name} ({int(s['compiled'].sum())} compiles)"
        marks = list(total.index[s["compiled"]])
        ax.plot(total.index, total, marker="os^"[i % 3], ms=9 - 2.5 * i, markevery=marks, label=label, zorder=2 + i)
    ax.axvline(pass_starts_at - 0.5, color="grey", ls="--", lw=1)
    ax.text(pass_starts_at - 0.3, 0.03, "pass 2 (steady state) ->", transform=ax.get_xaxis_transform(), fontsize=9)
    ax.set_xlabel("request (pass 1, then the same stream again)")
    ax.set_ylabel("cumulative time (s)")
    ax.set_ylim(bottom=0)  # from zero: a raised floor made the strategies' totals look further apart (07's reader)
    ax.legend(loc="upper left", bbox_to_anchor=(0.55, 0.85), title="a marker: a call that compiled", title_fontsize=9)


def draw_lanes(exports, cases, pair, origin: str, d_head: int, bursts=None, computing: bool = False):
    """Notebook 09's device view: per profile of `pair`, one row per engine lane and the DMA row beneath, on one
    time axis, with the first MATMUL (dashed: the start ends), the DMA row's last bar (dotted: the tail starts)
    and the end of the execution (solid).

    Why here: about 20 lines of matplotlib that 09's readers skipped (moved out of 09; what 09 teaches is
    reading the lanes, not drawing them). The tail's line answers a reader (nothing marked it).

    Args:
        exports: profile name -> its NeuronExport (analysis.load_exports).
        cases: profile name -> analysis.recorded_case of it (`kernel`, `dtype` for the titles).
        pair: the profile names to draw, one panel each.
        origin: where the profiles come from, for the title.
        d_head: the head dimension, for the title.
        bursts: optional profile name -> [(label, start_us, end_us)] (lesson.burst_spans), shaded and labelled
            on that panel (a reader: the figure marked no burst).
        computing: when True, an engine lane's bars are drawn light and its computing instructions
            (engine_activity.COMPUTING_OPCODES) solid on top, with a legend entry (a lane is not all work:
            the figure showed it only in the table). Default False: every bar solid.

    Returns:
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .engine_activity import COMPUTING_OPCODES, engine_of
    from .neuron_export import ENGINES, merged_intervals

    lanes = (*ENGINES, "DMA")
    fig, axes = plt.subplots(len(pair), 1, figsize=(11, 5.5), sharex=True)
    for ax, name in zip(axes, pair):
        e = exports[name]
        doing = e.instructions[e.instructions["opcode"].isin(COMPUTING_OPCODES)] if computing else None
        engine = doing["engine"].map(engine_of) if computing else None  # once per profile, not per lane
        for row, lane in enumerate(lanes):
            table = e.dma if lane == "DMA" else e.engine_intervals[e.engine_intervals["engine"] == lane]
            bars = [(s / 1e3, (t - s) / 1e3) for s, t in merged_intervals(table["start_ns"], table["end_ns"])]
            ax.broken_barh(bars, (row - 0.4, 0.8), color=OKABE_ITO[row], alpha=0.3 if computing and lane != "DMA" else None)
            ins = doing[engine == lane] if computing else None
            if computing and len(ins):
                solid = [(s / 1e3, (t - s) / 1e3) for s, t in merged_intervals(ins["start_ns"], ins["end_ns"])]
                ax.broken_barh(solid, (row - 0.4, 0.8), color=OKABE_ITO[row])
        first_matmul_ns = e.instructions.loc[e.instructions["opcode"] == "MATMUL", "start_ns"].min()
        ax.axvline(first_matmul_ns / 1e3, color="black", linestyle="--", label="first MATMUL (the start ends)")
        ax.axvline(e.dma["end_ns"].max() / 1e3, color="black", linestyle=":", label="DMA row's last bar ends (the tail starts)")
        ax.axvline(e.total_time_ns / 1e3, color="black", linewidth=1, label="end of execution")
        for label, lo, hi in (bursts or {}).get(name, []):
            ax.axvspan(lo, hi, color="grey", alpha=0.15, zorder=0)
            ax.text((lo + hi) / 2, -0.5, f"{label} (A4)", ha="center", va="bottom", fontsize=8)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.invert_yaxis()
        ax.set_title(f"{cases[name]['kernel']} ({cases[name]['dtype']})", fontsize=10)
    handles = axes[-1].get_legend_handles_labels()[0]
    if computing:
        handles.append(Patch(color="grey", alpha=0.3, label="light: no computing opcode"))
    axes[-1].legend(handles=handles, loc="center right", fontsize=8)  # the fused kernel ends early: room there
    axes[-1].set_xlabel("time since the start of the execution (us)")
    fig.suptitle(f"Engine lanes and DMA, attention d_head {d_head}, seq 512  [{origin}]", fontsize=10)
    fig.tight_layout()
    return fig
