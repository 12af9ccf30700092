"""Notebook 09's published figures and the readings it states from them.

Why here: none of it is what 09 teaches (reading engine lanes, accounting for HBM bytes, the
profiler's warnings); in the notebook it was about 40 lines a learner had to skip. The metric names
are the ones tests/test_notebooks.py and the regression checks read.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

# The recorded profiles' origin, as every 09 figure and table labels it.
ORIGIN = "recorded on a trn2.3xlarge by the trainium-kernel-fusion project, not this run"
DTYPES = ("bf16", "fp32")


def device_view_metrics(
    exports: dict[str, Any], work: dict[str, pd.DataFrame], accounts: pd.DataFrame, warnings_by_message: pd.Series
) -> dict[str, Any]:
    """Notebook 09's figures per recorded profile, ready for `session.publish`.

    Args:
        exports: profile name ("baseline_bf16_s512", ...) -> its NeuronExport (analysis.load_exports).
        work: profile name -> analysis.engine_work of it (computing_us per engine).
        accounts: the HBM table, one row per profile, with columns "profile read", "profile write",
            "intermediates" (bytes) and "matches" (source accounting holds).
        warnings_by_message: profiler warning message -> the profiles that carry it.

    Returns:
        name -> metric: per profile `<kernel>_<dtype>_total_us`, `_dma_active_us`, `_hbm_bytes`,
        `_hbm_read_bytes`, `_hbm_write_bytes`, `_hbm_matches_source`, `_longest_computing_engine`,
        `_<engine>_busy`, `_<engine>_computing_us`; per dtype `<dtype>_hbm_saved_bytes` and
        `<dtype>_intermediates_bytes`; and profiles, warnings, warnings_in_every_profile.
    """
    from analysis import ENGINES
    from helpers.metrics import metric

    moved = accounts["profile read"] + accounts["profile write"]
    metrics = {
        "profiles": metric(list(exports), "profiles", ORIGIN),
        "warnings": metric(list(warnings_by_message.index), "messages", "distinct profiler warnings"),
        "warnings_in_every_profile": metric(bool(warnings_by_message.map(len).eq(len(exports)).all()), "bool"),
    }
    for name, e in exports.items():
        key, w = name.removesuffix("_s512"), work[name]
        metrics[f"{key}_total_us"] = metric(e.total_time_ns / 1e3, "us", ORIGIN)
        metrics[f"{key}_dma_active_us"] = metric(e.counter("dma_active_time") * 1e6, "us", ORIGIN)
        for what, figure in (("hbm", moved[name]), ("hbm_read", accounts.at[name, "profile read"])):
            metrics[f"{key}_{what}_bytes"] = metric(int(figure), "bytes", ORIGIN)
        metrics[f"{key}_hbm_write_bytes"] = metric(int(accounts.at[name, "profile write"]), "bytes", ORIGIN)
        metrics[f"{key}_hbm_matches_source"] = metric(bool(accounts.at[name, "matches"]), "bool")
        metrics[f"{key}_longest_computing_engine"] = metric(w["computing_us"].idxmax(), "engine", "computing instructions only")
        for engine in ENGINES:
            metrics[f"{key}_{engine}_busy"] = metric(e.counter(f"{engine}_engine_active_time_percent"), "fraction", "lane")
            metrics[f"{key}_{engine}_computing_us"] = metric(w.at[engine, "computing_us"], "us", ORIGIN)
    for dtype in DTYPES:
        saved = int(moved[f"baseline_{dtype}_s512"] - moved[f"fused_{dtype}_s512"])
        metrics[f"{dtype}_hbm_saved_bytes"] = metric(saved, "bytes", "baseline minus fused HBM traffic")
        intermediates = int(accounts.at[f"baseline_{dtype}_s512", "intermediates"])
        metrics[f"{dtype}_intermediates_bytes"] = metric(intermediates, "bytes", "the score buffer: 2 stores + 2 loads")
    return metrics


def _keys() -> list[str]:
    return [f"{k}_{d}" for k in ("baseline", "fused") for d in DTYPES]


def against_spread(ratio: float, spread: tuple[float, float]) -> str:
    """09's one rule for a time from one execution each: which side of the tensor lane's fused / baseline
    range (the same computing instructions in both kernels: a yardstick, not a measured run-to-run
    spread) a ratio lies on.

    Args:
        ratio: fused / baseline of one counter in one dtype.
        spread: the tensor lane's (smallest, largest) fused / baseline over the dtypes.

    Returns:
        "below" or "above" (analysis.ranges_apart: clear of the spread by its 5% margin), else "".
    """
    from analysis import ranges_apart

    return ranges_apart((ratio, ratio), spread)


def device_view_claims(metrics: dict[str, Any], band: bool = False) -> tuple[dict[str, Any], pd.DataFrame]:
    """The readings 09 states from its published figures: per profile, the engine that spent the
    longest in computing instructions; per dtype, fused below baseline in HBM bytes, and in total time
    where its ratio lies outside the tensor lane's range under the same computing-instruction count (`against_spread`).

    Args:
        metrics: `device_view_metrics`' result.
        band: add the total-time verdicts of the stand-in rule (A4 only since 09 states times as readings).

    Returns:
        ({"claims": metric}, every reading, ready for `session.publish`; DataFrame with columns reading
        and numbers, each fused-against-baseline reading beside the published numbers it compares).
    """
    from analysis import ENGINES, Claim
    from helpers.metrics import metric

    claims, reading = [], "(one execution each)"
    lane = {k: metrics[f"{k}_tensor_busy"]["value"] * metrics[f"{k}_total_us"]["value"] for k in _keys()}
    spread = tuple(sorted(lane[f"fused_{d}"] / lane[f"baseline_{d}"] for d in DTYPES))
    for key in _keys():
        top = metrics[f"{key}_longest_computing_engine"]["value"]
        names = (f"{key}_{top}_computing_us", *(f"{key}_{e}_computing_us" for e in ENGINES if e != top))
        claims.append(Claim("max", names, f"{key}: the {top} engine spent the longest in computing instructions {reading}"))
    for dtype in DTYPES:
        fused, base = f"fused_{dtype}", f"baseline_{dtype}"
        claims.append(Claim("<", (f"{fused}_hbm_bytes", f"{base}_hbm_bytes"), f"{dtype}: fused below baseline in hbm_bytes"))
        ratio = metrics[f"{fused}_total_us"]["value"] / metrics[f"{base}_total_us"]["value"]
        if band and against_spread(ratio, spread) == "below":  # the rule of A4's guess table: outside the same-work spread
            text = f"{dtype}: fused below baseline in total_us, past the cut-off (one execution each: a reading)"
            claims.append(Claim("<", (f"{fused}_total_us", f"{base}_total_us"), text))
    shown = {m: f"{metrics[m]['value']:,.{0 if 'bytes' in m else 1}f} {metrics[m]['unit']}" for c in claims for m in c.metrics}
    label = {m: m.split("_")[2 if "_computing_" in m else 0] for m in shown}  # the engine, or the kernel
    # the longest-engine readings repeat 09's per-engine table: published, not shown again
    compared = [c for c in claims if c.relation != "max"]
    table = pd.DataFrame(
        [{"reading": c.text, "numbers": "; ".join(f"{label[m]} {shown[m]}" for m in c.metrics)} for c in compared]
    )
    published = {"claims": metric([c.record() for c in claims], "claims", "the conclusions above (analysis.claims)")}
    return published, table


def counter_readings(exports: dict[str, Any], guesses: dict[str, str]) -> pd.DataFrame:
    """09's predict-then-check table: per guessed counter, fused / baseline in each dtype, the learner's guess,
    what the row shows, and the guess against it. Only the bytes rows are graded: instructions declare them, so
    their direction is a count. A time from one execution each is a reading, not graded; which time rows moved
    more than an assumed stand-in for noise is A4's section (`guesses_against_counters`, `spread_line`), not 09's: the
    stand-in's row is left out here, since a row 09 gives no rule for stopped its readers (its values stay on the page,
    in the per-engine table's tensor lane).

    Args:
        exports: profile name ("baseline_bf16_s512", ...) -> its NeuronExport (analysis.load_exports).
        guesses: counter name -> the learner's "down", "up", "same" or "?".

    Returns:
        DataFrame, one row per guessed counter: `bf16`, `fp32` (fused / baseline), `your_guess`, `shows` (bytes
        rows: "down", "up" or "same", per dtype where they differ; time rows: "a reading" (the caption says one execution each), the
        DMA row with the profiler's warning where an export carries it) and `match` ("✓"/"✗" on a bytes row both
        dtypes agree on, "dtypes differ" where not; "" on time rows and unfilled guesses).
    """
    ratios = pd.DataFrame(
        {
            d: {c: exports[f"fused_{d}_s512"].counter(c) / exports[f"baseline_{d}_s512"].counter(c) for c in guesses}
            for d in DTYPES
        }
    ).assign(your_guess=pd.Series(guesses))
    warned = any(e.warnings.message.str.contains("DMA values may be inaccurate").any() for e in exports.values())
    shows, match = [], []
    for c in ratios.index:
        guess = ratios.at[c, "your_guess"]
        if "bytes" not in c:  # a time: one execution each, so a reading, never graded
            note = "; profiler: DMA values may be inaccurate" * (c.startswith("dma_") and warned)
            shows.append(f"a reading{note}")
            match.append("")
            continue
        words = {d: "down" if ratios.at[c, d] < 1 else "up" if ratios.at[c, d] > 1 else "same" for d in DTYPES}
        one = len(set(words.values())) == 1
        shows.append(words["bf16"] if one else ", ".join(f"{w} in {d}" for d, w in words.items()))
        match.append(
            "" if guess not in ("down", "up", "same") else ("✓" if guess == words["bf16"] else "✗") if one else "dtypes differ"
        )
    return ratios.assign(shows=shows, match=match)


def guesses_against_counters(exports: dict[str, Any], work: dict[str, pd.DataFrame], guesses: dict[str, str]) -> pd.DataFrame:
    """09's predict-then-check table: per guessed counter, fused over baseline in each dtype, the
    learner's guess, and the direction the recordings show.

    Why here: building the `shows` words took about 20 lines of formatting the lesson does not teach.

    Args:
        exports: profile name ("baseline_bf16_s512", ...) -> its NeuronExport (analysis.load_exports).
        work: profile name -> analysis.engine_work of it (`computing`: computing instructions per engine).
        guesses: counter name -> the learner's "down", "up", "same" or "?"; the tensor lane's row (the
            yardstick) is added where it is missing, with an empty guess.

    Returns:
        DataFrame, one row per counter: `bf16`, `fp32` (fused / baseline), `your_guess`, `computing
        instructions` (engine counters only: "fused / baseline" per dtype) and `shows`: "down", "up" or
        "same" for bytes (exact counts: no cut-off; per dtype where they differ); a time reads "down"/"up, past
        the cut-off" (per dtype where they differ), else "no verdict" (`against_spread`: the tensor lane's
        range, cut-offs 5% beyond it; `spread_line` names these rows); an engine row starts
        with its computing instructions ("fewer", "more"), and one whose counts are equal in both kernels
        (the tensor engine) sets the band: no verdict. A DMA row notes the profiler's warning
        that DMA values may be inaccurate where an export carries it: the verdict rests on those values. `match`: the guess against a
        direction every dtype shows ("✓"/"✗"), else "no verdict (not 'same')"; "" for an unfilled guess.
    """
    kernels = ("fused", "baseline")
    guesses = {**guesses, "tensor_engine_active_time": guesses.get("tensor_engine_active_time", "")}  # the yardstick, not graded
    ratios = pd.DataFrame(
        {
            d: {c: exports[f"fused_{d}_s512"].counter(c) / exports[f"baseline_{d}_s512"].counter(c) for c in guesses}
            for d in DTYPES
        }
    ).assign(your_guess=pd.Series(guesses))
    engine_of = {c: c.split("_")[0] for c in ratios.index if "_engine_" in c}
    counts = {c: [tuple(work[f"{k}_{d}_s512"].at[g, "computing"] for k in kernels) for d in DTYPES] for c, g in engine_of.items()}
    ratios["computing instructions, fused / baseline (bf16, fp32)"] = pd.Series(
        {c: ", ".join(f"{f:.0f} / {b:.0f}" for f, b in n) for c, n in counts.items()}
    )
    spread = same_work_spread(ratios)
    side = {"below": "down, past the cut-off", "above": "up, past the cut-off"}
    lo, hi = spread

    def time_word(ratio: float) -> str:
        return side.get(
            against_spread(ratio, spread), "inside the band" if lo <= ratio <= hi else "outside the band, inside the cut-off"
        )

    shows, directions = [], []  # directions: the one direction every dtype shows, else "" (for `match`)
    for c in ratios.index:
        if c in counts and all(f == b for f, b in counts[c]):  # the same count: its spread is the yardstick
            shows.append("same computing instructions: it sets the band; no verdict")
            directions.append("")
            continue
        if "bytes" in c:  # counted, not timed: the direction alone
            words = {d: "down" if ratios.at[c, d] < 1 else "up" if ratios.at[c, d] > 1 else "same" for d in DTYPES}
        else:
            words = {d: time_word(ratios.at[c, d]) for d in DTYPES}
        (word,) = set(words.values()) if len(set(words.values())) == 1 else ("",)
        directions.append(word.split(",")[0] if word in {"down", "up", "same", *side.values()} else "")
        if "bytes" not in c and not set(words.values()) & set(side.values()):  # not judged: spread_line names it
            text = "no verdict"
        else:
            text = words["bf16"] if len(set(words.values())) == 1 else ", ".join(f"{w} in {d}" for d, w in words.items())
        if c in counts:  # the rule in the row itself: the count says whether the engine's work changed
            fewer = {"fewer" if f < b else "more" if f > b else "same" for f, b in counts[c]}
            text = f"{'/'.join(sorted(fewer))} computing instructions; time: {text}"
        if c.startswith("dma_") and any(
            e.warnings.message.str.contains("DMA values may be inaccurate").any() for e in exports.values()
        ):
            text += " (on values the profiler warns may be inaccurate: below)"
        shows.append(text)
    ratios["shows"] = shows
    ratios["match"] = [_match(ratios.at[c, "your_guess"], d) for c, d in zip(ratios.index, directions)]
    return ratios.fillna("")


def _match(guess: str, direction: str) -> str:
    """The `match` column: "✓" or "✗" where the row has one direction in every dtype, "no verdict
    (not 'same')" where it has none or the dtypes differ, "" for an unfilled guess."""
    if guess not in ("down", "up", "same"):
        return ""
    return ("✓" if guess == direction else "✗") if direction else "no verdict (not 'same')"


def same_work_spread(ratios: pd.DataFrame) -> tuple[float, float]:
    """The tensor lane's (smallest, largest) fused / baseline over the dtypes: the same computing
    instructions in both kernels, so it is the yardstick for a time; not a measured run-to-run spread
    (one execution each: repeating the capture on a trn2 would measure that).

    Args:
        ratios: `guesses_against_counters`' table (or any with a tensor_engine_active_time row and dtype columns).

    Returns:
        (smallest, largest).
    """
    tensor = [float(ratios.at["tensor_engine_active_time", d]) for d in DTYPES]
    return min(tensor), max(tensor)


def _rule_parts(ratios: pd.DataFrame) -> tuple[Any, ...]:
    """The stand-in rule's pieces, for `spread_line` (A4):
    the tensor range, its cut-offs (analysis.apart_bounds), the time rows past a cut-off in every dtype, in none,
    in some, and a function giving a no-verdict row's distance to its nearer cut-off per dtype."""
    from analysis import apart_bounds, cut_off_miss

    lo, hi = same_work_spread(ratios)
    below, above = apart_bounds((lo, hi))  # the rule's own cut-offs for one ratio against the range
    times = [c for c in ratios.index if "bytes" not in c and c != "tensor_engine_active_time"]
    outside = {c: sum(bool(against_spread(float(ratios.at[c, d]), (lo, hi))) for d in DTYPES) for c in times}
    out = [c for c, n in outside.items() if n == len(DTYPES)]
    rest = [c for c, n in outside.items() if n == 0]
    mixed = [c for c, n in outside.items() if 0 < n < len(DTYPES)]

    def inside(c: str) -> str:  # a no-verdict counter's distance to its nearer cut-off, per dtype
        r = {d: float(ratios.at[c, d]) for d in DTYPES if not against_spread(float(ratios.at[c, d]), (lo, hi))}
        cuts = (round(below, 3), round(above, 3))  # the miss from the printed values: the reader's arithmetic

        def words(v: float) -> str:  # "misses by 0.046" read as outside the cut-offs: name the side it is inside
            said = cut_off_miss(v, cuts)
            side = "above the low" if v - cuts[0] <= cuts[1] - v else "below the high"
            return f"inside, {said.removeprefix('misses by ')} {side} cut-off" if said.startswith("misses by") else said

        return "; ".join(f"{d} x{v:.3f} {words(round(v, 3))}" for d, v in r.items())

    return (lo, hi), (below, above), out, rest, mixed, inside


def spread_line(ratios: pd.DataFrame) -> str:
    """Two lines, in the words of 09's rule: what the range is (tensor_engine_active_time's fused /
    baseline per dtype, beside the computing-instruction counts, equal in both kernels: the stand-in for noise (the band),
    assumed, not measured); the cut-offs and how each is computed (analysis.apart_bounds: the low end x0.95,
    the high end /0.95, and where the 5% comes from); which time ratios lie past a cut-off in both dtypes,
    which in neither ("no verdict in either dtype"), and which in one only (named only where there is one).
    No longer the widest margin the verdicts survive: 09's self-paced reader stopped at it, and the lesson needs
    only the cut-offs.

    Why the ratios and counts are printed, not only the range: a reader must be able to work the cut-offs
    out from the page (09's cold readers could not tell "the range" of what).

    Args:
        ratios: `guesses_against_counters`' table (its computing-instructions column: the tensor row's counts).

    Returns:
        Two lines: the rule worked with its numbers (six bullets of rule in 09's markdown stopped every reader),
        e.g. "the band: the same instruction counts (56 / 56, 60 / 60 computing instructions) moved the tensor lane
        x0.912-x1.068; cut-offs: low x0.95, high /0.95 (...): only moves below x0.867 or above x1.124 count" (as computed:
        a reader could not get x1.124 from "widened by 5%"), and "past a cut-off in
        both dtypes: total_time, ...; no verdict in either dtype: vector_engine_active_time (bf16 x0.869 at the
        edge: ..., fp32 x0.913 inside, 0.046 above the low cut-off)": each no-verdict ratio with its distance to the nearer cut-off.
    """
    from analysis.verdicts import APART_FACTOR

    (lo, hi), (below, above), out, rest, mixed, inside = _rule_parts(ratios)
    counts = ratios.at["tensor_engine_active_time", "computing instructions, fused / baseline (bf16, fp32)"]
    return (
        f"the band: the same instruction counts ({counts} computing instructions) moved the tensor lane x{lo:.3f}-x{hi:.3f}; "
        f"cut-offs: low x{APART_FACTOR:.2f}, high /{APART_FACTOR:.2f} (the series' margin, from cpu runs of notebook 05, no trn2 basis): "
        f"only moves below x{below:.3f} or above x{above:.3f} count\n"
        f"past a cut-off in both dtypes: {', '.join(out) or 'none'}; "
        f"no verdict in either dtype: {', '.join(f'{c} ({inside(c)})' for c in rest) or 'none'}"
        + (f"; past a cut-off in one dtype only: {', '.join(f'{c} ({inside(c)})' for c in mixed)}" if mixed else "")
    )


def _start_and_tail(export: Any) -> tuple[float, float]:
    """Where an execution's start ends (its first MATMUL) and its tail begins (the DMA row's last bar ends), in ns:
    the two cuts `execution_start`'s table and `start_tail_opcodes`' line both read."""
    ins = export.instructions
    return ins.loc[ins["opcode"] == "MATMUL", "start_ns"].min(), export.dma["end_ns"].max()


def execution_start(exports: dict[str, Any], detail: bool = True) -> pd.DataFrame:
    """09's evidence for what fills each execution's start: the time before the first MATMUL, when the
    first instruction that reads HBM starts, which DMA queue types move before it, and which opcodes run.

    Why here: the figure shows every lane busy before the first MATMUL and DMA moving; without this
    table a learner reads that DMA as the inputs arriving. About 10 lines of pandas the lesson does not teach.

    Args:
        exports: profile name ("baseline_bf16_s512", ...) -> its NeuronExport (analysis.load_exports).

    Returns:
        DataFrame, one row per profile: `first MATMUL (us)`, `first MATMUL / total_time`,
        `first HBM-reading instruction starts (us)`, `DMA packets before the first HBM read, by queue type` (the DMA
        packets that start before that instruction, per queue type: "type: packets", joined by ", "), `computing before
        MATMUL` (analysis.COMPUTING_OPCODES instructions that start before the first MATMUL), the tail after the DMA
        row's last packet ends (`after the DMA row's last bar (us)`) and the computing instructions that start in it
        (`computing there`). The bars' opcodes are named by `start_tail_opcodes`, one line, not in this table.
        With `detail=False` (09's table) the two setup columns (first HBM read, DMA queue types) are left out:
        09 reads the start and the tail; the setup inside the start is A4's (a reader could not place them).
    """
    from analysis import COMPUTING_OPCODES

    rows = {}
    for name, e in exports.items():
        ins = e.instructions
        first_matmul_ns, last_dma_ns = _start_and_tail(e)
        first_read_ns = ins.loc[ins["hbm_read_bytes"] > 0, "start_ns"].min()
        before = ins.loc[ins["start_ns"] < first_matmul_ns, "opcode"]
        queues = e.dma.loc[e.dma["start_ns"] < first_read_ns, "queue_type"].value_counts()
        rows[name] = {
            "first MATMUL (us)": first_matmul_ns / 1e3,
            "first MATMUL / total_time": first_matmul_ns / e.total_time_ns,
            "first HBM-reading instruction starts (us)": first_read_ns / 1e3,
            "DMA packets before the first HBM read, by queue type": ", ".join(f"{q}: {n}" for q, n in queues.items() if n),
            "computing before MATMUL": int(before.isin(COMPUTING_OPCODES).sum()),
            "after the DMA row's last bar (us)": (e.total_time_ns - last_dma_ns) / 1e3,
            "computing there": int(ins.loc[ins["start_ns"] >= last_dma_ns, "opcode"].isin(COMPUTING_OPCODES).sum()),
        }
    table = pd.DataFrame(rows).T
    setup = ["first HBM-reading instruction starts (us)", "DMA packets before the first HBM read, by queue type"]
    return table if detail else table.drop(columns=setup)


def per_call_bounds(start: pd.DataFrame) -> str:
    """A4's refinement of 09's per-call reading (moved from 09: its readers could not follow the
    three hypotheses). Two lines linking 09's two findings: the start before the first MATMUL (its span over every
    profile, and whether it computes anything), and fused / baseline per dtype from the first MATMUL to the
    DMA row's last bar against the whole execution (total_time).

    Why here: the whole-execution ratio includes the start and the tail after the DMA row's last bar, which
    both kernels spend; a reader who sees the two ratios apart has to reconcile them by hand. The middle
    stretch leaves out both (09's cold reader: the tail, about 2 us in every profile, dilutes the gain too).
    Computed from the start table alone (total time = first MATMUL / (first MATMUL / total_time)).

    Args:
        start: `execution_start`'s result (rows named "<kernel>_<dtype>_s512").

    Returns:
        Two lines, e.g. "the start (before the first MATMUL: setup, then, from the first HBM-reading instruction, loads of Q, K, V and the NEFF's constants): 17.2-18.2 us
        in every profile, no computing instruction; fused / baseline in the compute window (first MATMUL to the DMA
        row's last bar): bf16 x0.49 (34.9 -> 17.0 us), ..." and "per call (total_time, start and tail included): bf16
        x0.67, ...; setup and tail once: bf16 x0.53, ...; only the compute window per call: bf16 x0.49, ...; one profile
        cannot tell which" ("if once, the gain approaches the compute window's" was false: the start's stretch after
        setup loads the inputs every call needs; so three bounds, each from the profile's own intervals).
        The profiled call is the 2nd execution (N37: the first carries the one-time warm-up), so the start is not
        first-call warm-up; whether it recurs on every call, one profile cannot show: total_time is the per-call
        figure, the middle ratio a bound on it (09's cold reader).
    """
    first = start["first MATMUL (us)"].astype(float)
    total = first / start["first MATMUL / total_time"].astype(float)
    tail = start["after the DMA row's last bar (us)"].astype(float)
    middle = total - first - tail
    per_call = total - start["first HBM-reading instruction starts (us)"].astype(float) - tail  # setup and tail once
    computing = start["computing before MATMUL"].astype(int)
    span = f"{first.min():.1f}" if f"{first.min():.1f}" == f"{first.max():.1f}" else f"{first.min():.1f}-{first.max():.1f}"
    before = (
        "no computing instruction"
        if computing.eq(0).all()
        else "computing instructions in " + ", ".join(computing.index[computing > 0])
    )
    middle_parts, whole_parts, once_parts, middle_ratios = [], [], [], []
    for dtype in sorted({name.split("_")[1] for name in start.index}):
        base, fused = (next(n for n in start.index if n.startswith(f"{k}_{dtype}_")) for k in ("baseline", "fused"))
        middle_ratio, whole_ratio = middle[fused] / middle[base], total[fused] / total[base]
        middle_parts.append(f"{dtype} x{middle_ratio:.2f} ({middle[base]:.1f} -> {middle[fused]:.1f} us)")
        whole_parts.append(f"{dtype} x{whole_ratio:.2f}")
        once_parts.append(f"{dtype} x{per_call[fused] / per_call[base]:.2f}")
        middle_ratios.append(f"{dtype} x{middle_ratio:.2f}")
    return (
        f"the start (before the first MATMUL: setup, then, from the first HBM-reading instruction, loads of Q, K, V and the NEFF's constants): {span} us in every profile, "
        f"{before}; fused / baseline in the compute window (first MATMUL to the DMA row's last bar): {', '.join(middle_parts)}"
        f"\nper call, if all recurs (total_time): {', '.join(whole_parts)}; setup and tail once: {', '.join(once_parts)}; "
        f"only the compute window per call: {', '.join(middle_ratios)}; one profile cannot tell which"
    )


def after_first_matmul_reading(start: pd.DataFrame) -> str:
    """09's time readings: the start's share of each execution, and fused / baseline per dtype in total_time (the per-call figure: one
    execution each) and in the compute window (first MATMUL to the DMA row's last bar, which leaves out the
    start and the tail both kernels spend).

    Why two readings only: readers stopped at the three-hypothesis line (`per_call_bounds`,
    now in A4). Computed from the start table alone (total time = first MATMUL / (first MATMUL / total_time)).

    Args:
        start: `execution_start`'s result (rows named "<kernel>_<dtype>_s512").

    Returns:
        four lines: the start's share of each execution (the lesson's main finding: the first MATMUL's start in us, the
        same reference in every profile, and its share, with no computing instruction before it), e.g. "the start, before the first MATMUL: 17.2-18.2 us, 31-47% of each execution; no
        opcode this page counts as computing", the per-call hedge (the profile is the 2nd execution, not the 1st that
        N37 says carries the one-time warm-up; whether it recurs per call inside a larger program, A4's three cases), then "fused / baseline,
        whole execution (total_time): bf16 x0.67, fp32 x0.65" and "compute window (ends at a DMA bar the profiler warns may be inaccurate): bf16 x0.49, fp32 x0.49"
        (the window ends at a DMA bar, and the profiler warns DMA values may be inaccurate; the why of two
        ratios: the window leaves out the start and the tail the table lists for both kernels).
    """
    first = start["first MATMUL (us)"].astype(float)
    total = first / start["first MATMUL / total_time"].astype(float)
    middle = total - first - start["after the DMA row's last bar (us)"].astype(float)
    whole_parts, middle_parts = [], []
    for dtype in sorted({name.split("_")[1] for name in start.index}):
        base, fused = (next(n for n in start.index if n.startswith(f"{k}_{dtype}_")) for k in ("baseline", "fused"))
        whole_parts.append(f"{dtype} x{total[fused] / total[base]:.2f}")
        middle_parts.append(f"{dtype} x{middle[fused] / middle[base]:.2f}")  # the us: the fusion line
    share = start["first MATMUL / total_time"].astype(float) * 100
    idle = "no" if start["computing before MATMUL"].astype(int).eq(0).all() else "some profile runs an"
    return (
        f"the start, before the first MATMUL: {first.min():.1f}-{first.max():.1f} us, {share.min():.0f}-{share.max():.0f}% of each execution; {idle} opcode this page counts as computing\n"
        "profiled: the 2nd execution, not the 1st that carries the one-time warm-up (N37); whether the start recurs per call inside a larger program is not shown (A4)\n"
        f"fused / baseline, whole execution (total_time): {', '.join(whole_parts)}\n"
        f"compute window (ends at a DMA bar the profiler warns may be inaccurate): {', '.join(middle_parts)}"
    )


def start_tail_opcodes(exports: dict[str, Any], name: str = "baseline_bf16_s512", top: int = 3) -> str:
    """Two lines: the most frequent opcodes drawn as bars (neither computing nor waits) of one profile before its
    first MATMUL and in its tail.

    Why here: 09 says the start's and the tail's bars are "other opcodes"; its cold readers asked which.
    The line names and counts them; it reads no meaning in. The waits (analysis.WAIT_OPCODES) are left out
    because the bars leave them out.

    Args:
        exports: profile name -> its NeuronExport (analysis.load_exports).
        name: the profile to read.
        top: how many opcodes per stretch.

    Returns:
        e.g. "top 3 bars before the first MATMUL (baseline_bf16_s512, count): DRAIN 88, SET_ORDERING_MODE 20, ..." and
        "top 3 bars in its tail (count): DRAIN 16, EVENT_SEMAPHORE_RANGE_CLEAR 5, ..." (a line each: at most 4 numbers).
    """
    from analysis import COMPUTING_OPCODES, WAIT_OPCODES

    e = exports[name]
    ins = e.instructions[~e.instructions["opcode"].isin(COMPUTING_OPCODES | WAIT_OPCODES)]
    first_matmul_ns, last_dma_ns = _start_and_tail(e)

    def most(mask: Any) -> str:
        return ", ".join(f"{op} {n}" for op, n in ins.loc[mask, "opcode"].value_counts().head(top).items())

    before, tail = most(ins["start_ns"] < first_matmul_ns), most(ins["start_ns"] >= last_dma_ns)
    return f"top {top} bars before the first MATMUL ({name}, count): {before}\ntop {top} bars in its tail (count): {tail}"


def start_reads(exports: dict[str, Any]) -> str:
    """Two lines: what the start's HBM-reading instructions read in every profile (Q, K and V from the kernel's
    source plus the NEFF's constants, `weight_size_bytes`, or not) and when the first of them starts; then which DMA
    queue types move before it, and whether the export names their tensor.

    Why: 09's start holds no computing instruction, but its DMA row is busy from its first microsecond; a reader
    took the whole start for Q, K and V arriving. The reads start late in the start, and the DMA bars before them
    belong to a DMA queue type (here `instruction`, a queue type: nothing in the export says it holds the program),
    whose contents the export does not give. The line gives those bars' span, to find them in the figure, and says
    they fall outside the HBM counters only where each HBM counter is the sum of the HBM instructions and none of those
    starts before the first read (the room's first question about the figure's early DMA bars).
    """
    from analysis import attention_hbm_traffic, recorded_case

    fits, firsts, queues, tensors, spans, outside = [], [], set(), set(), [], True
    for name, e in exports.items():
        case = recorded_case(name)
        need = attention_hbm_traffic(case["kernel"], 128, case["seqlen"], case["dtype"])
        qkv = need.loc[need["tensor"].isin(["Q", "K", "V"]), "bytes"].sum()
        hbm = e.hbm_instructions()
        read = hbm.loc[hbm["start_ns"] < _start_and_tail(e)[0], "hbm_read_bytes"].sum()
        fits.append(read == qkv + e.counter("weight_size_bytes"))
        first = hbm.loc[hbm["hbm_read_bytes"] > 0, "start_ns"].min()
        firsts.append(first / 1e3)
        early = e.dma[e.dma["start_ns"] < first]
        queues |= set(early["queue_type"])
        tensors |= set(early["variable"])
        spans += [early["start_ns"].min() / 1e3, early["end_ns"].max() / 1e3] if len(early) else []
        # the HBM counters are the HBM instructions' sums, and none of those starts before `first`
        sums = all(e.counter(f"hbm_{d}_bytes") == hbm[f"hbm_{d}_bytes"].sum() for d in ("read", "write"))
        outside &= sums and bool((hbm["start_ns"] >= first).all())
    carry = "contents not exported" if tensors <= {"unknown"} else f"their tensor: {'/'.join(sorted(tensors))}"
    one = len(queues) == 1
    counters = "before any HBM instruction" if outside else "the HBM counters may hold them"
    kinds = f'{counters}: queue{"" if one else "s"} "{"/".join(sorted(queues))}"{" only" if one else ""}; {carry}'
    bars = f"DMA bars at {min(spans):.1f}-{max(spans):.1f} us, {kinds}" if queues else "DMA bars before that: none"
    return (
        f"the start's HBM-reading instructions read as many bytes as Q, K, V plus the NEFF's constants in {sum(fits)} of {len(fits)} profiles; "
        f"first at {min(firsts):.1f}-{max(firsts):.1f} us\n{bars}"
    )


def lane_not_all_work(work: dict[str, pd.DataFrame]) -> str:
    """Two lines under 09's per-engine table: the engines whose lane holds no computing instruction in any
    profile, with their lane's range, and each computing engine's computing time as a share of its lane.

    Why these, not which engine's lane outranks another's: two lanes within a few percent cannot be told
    apart from one execution each (09's own cut-off), but a lane with no computing instruction, or one
    that computes for about half its length, shows "a lane is not all work" without a comparison.

    Args:
        work: profile name -> analysis.engine_work of it (`lane_us`, `computing_us`, `computing` per engine).

    Returns:
        e.g. "lanes with no computing instruction in every profile: gpsimd 4.0-4.3 us, sync 4.0-7.2 us" and
        "computing time / lane, range over the profiles: tensor 70-77%, vector 64-68%, scalar 49-53% (one
        execution each: a reading)"; the first line says "none" where every lane computes somewhere.
    """
    frames = list(work.values())
    idle = [e for e in frames[0].index if all(w.at[e, "computing"] == 0 and w.at[e, "lane_us"] > 0 for w in frames)]
    busy = [e for e in frames[0].index if e not in idle]

    def span(values: list[float], f: str) -> str:
        lo, hi = f.format(min(values)), f.format(max(values))
        return lo if lo == hi else f"{lo}-{hi}"

    lanes = ", ".join(f"{e} {span([w.at[e, 'lane_us'] for w in frames], '{:.1f}')} us" for e in idle) or "none"
    shares = [[w.at[e, "computing_us"] / w.at[e, "lane_us"] * 100 for w in frames] for e in busy]
    share_text = ", ".join(f"{e} {span(v, '{:.0f}')}%" for e, v in zip(busy, shares))
    return (
        f"lanes with no computing instruction in every profile: {lanes}\n"
        f"computing time / lane, range over the profiles: {share_text} (one execution each: a reading)"
    )


def engine_opcode_counts(exports: dict[str, Any], engine: str = "scalar") -> str:
    """One line: per dtype, how fusion changed an engine's computing instructions, opcode by opcode.

    Why: 09's predict step asks about the scalar lane, which shrinks with fusion; the per-engine table gives only
    the count, and 09's cold readers had to subtract two lists to see which opcodes went. The line prints
    the changed opcodes as "baseline->fused" and names the unchanged ones, so it never points at an opcode that
    stayed. Which source lines the removed instructions come from, the profile does not say.

    Args:
        exports: profile name -> analysis.neuron_export.NeuronExport, named "<kernel>_<dtype>_s<seqlen>".
        engine: an analysis.ENGINES name.

    Returns:
        e.g. "scalar computing instructions, baseline->fused: bf16 CAST 4->1, COPY 6->3 (ACTIVATE 4 in both); fp32 ...".
    """
    from analysis.engine_activity import engine_of, opcode_kind

    def counts(e: Any) -> dict[str, int]:
        ins = e.instructions
        mine = ins[(ins["engine"].map(engine_of) == engine) & (ins["opcode"].map(opcode_kind) == "computing")]
        return {str(op): int(n) for op, n in mine["opcode"].value_counts().items()}

    parts = []
    for name in sorted(n for n in exports if n.startswith("baseline_")):
        dtype = name.split("_")[1]
        fused_name = name.replace("baseline_", "fused_", 1)
        if fused_name not in exports:
            continue
        base, fused = counts(exports[name]), counts(exports[fused_name])
        ops = sorted(set(base) | set(fused))
        changed = ", ".join(f"{op} {base.get(op, 0)}->{fused.get(op, 0)}" for op in ops if base.get(op, 0) != fused.get(op, 0))
        same = ", ".join(f"{op} {base[op]}" for op in ops if op in fused and base[op] == fused[op])
        parts.append(f"{dtype} {changed or 'no change'}" + (f" ({same} in both)" if same else ""))
    return f"{engine} computing instructions, baseline->fused: " + "; ".join(parts)


def per_engine_table(work: dict[str, pd.DataFrame], origin: str) -> Any:
    """09's per-engine table, styled for display: per profile, each engine's `lane_us` and `computing_us` (one
    decimal) and `computing (count)`, the number of its computing instructions (whole).

    Why here: building and formatting the table is display plumbing, not the taught step (analysis.engine_work
    is, and stays in the notebook); moving it freed 09's reading time for plain-words explanations.

    Args:
        work: profile name -> analysis.engine_work of it.
        origin: where the profiles come from, for the caption.

    Returns:
        A pandas Styler with the caption "Per engine: us, and computing instructions (count; computing opcodes:
        ACTIVATE, ...) [origin]": the opcode list moved from a print in 09 (09's sentence-building share).
    """
    from analysis import COMPUTING_OPCODES

    cols = ("lane_us", "computing_us", "computing")
    table = pd.DataFrame({(name, col): work[name][col] for name in work for col in cols}).T
    table = table.rename(index={"computing": "computing (count)"}, level=1)
    return (
        table.style.format("{:,.1f}")
        .format("{:,.0f}", subset=pd.IndexSlice[pd.IndexSlice[:, "computing (count)"], :])
        .set_caption(
            f"Per engine: us, and computing instructions (count; computing opcodes: {', '.join(sorted(COMPUTING_OPCODES))}) [{origin}]"
        )
    )


def _bursts(e: Any) -> tuple[list[list[Any]], list[tuple[float, float]]]:
    """A profile's bursts: runs of HBM stores then loads between its first and last MATMUL, and each burst's DMA
    bar span (us): the merged DMA bars that start between its first instruction and the next burst's (or the
    last MATMUL), so that matching a burst to its bars by time can be checked. `burst_spans` runs
    each round trip from its first store instruction instead (the stores start before the bars)."""
    from analysis.neuron_export import merged_intervals

    mm = e.instructions.loc[e.instructions["opcode"] == "MATMUL", "start_ns"]
    hbm = e.hbm_instructions()
    bursts: list[list[Any]] = []
    for row in hbm[(hbm["start_ns"] > mm.min()) & (hbm["start_ns"] < mm.max())].itertuples():
        if row.hbm_write_bytes and (not bursts or bursts[-1][-1].hbm_read_bytes):
            bursts.append([])
        bursts[-1].append(row)
    edges = [rows[0].start_ns for rows in bursts] + [mm.max()]
    bars = merged_intervals(e.dma["start_ns"], e.dma["end_ns"])
    spans = []
    for lo, hi in zip(edges, edges[1:]):
        inside = [(s, t) for s, t in bars if lo <= s < hi]
        spans.append((inside[0][0] / 1e3, max(t for _, t in inside) / 1e3) if inside else (float("nan"), float("nan")))
    return bursts, spans


def device_view_reading(exports: dict[str, Any], start: pd.DataFrame, dtype: str = "bf16") -> str:
    """09's fusion lesson in three printed lines: how long the baseline's HBM round trips (shaded bursts) last and how
    much of that no lane runs a computing instruction (two numbers, named, on one line: lanes compute during part of
    each burst), that the fused profile has none (what `_bursts` tests), and both compute windows (first MATMUL to the
    DMA row's last bar) with their drop.

    Why: the page listed empty lanes (gpsimd empty all through the window in both kernels) and never
    stated the lesson. One execution each, so a reading: it does not show the round trips cause the shorter window.
    The idle burst time is printed once, as a measurement beside the shaded time it is part of (the figure shows it:
    shaded, light bars only), not as an "at most" bound on the window's drop, which the page could not derive; the
    third line compares the scalar and vector computing instruction counts (engine_work's `computing`), since fused
    also runs different compute, and says the window's change is attributed to neither.
    """
    from analysis import COMPUTING_OPCODES, engine_work, merged_intervals

    base, fused = (f"{k}_{dtype}_s512" for k in ("baseline", "fused"))
    ins = exports[base].instructions
    ins = ins[ins["opcode"].isin(COMPUTING_OPCODES)]
    span = computing = 0.0
    for _, lo, hi in burst_spans(exports, base)[base]:
        inside = ins[(ins["start_ns"] < hi * 1e3) & (ins["end_ns"] > lo * 1e3)]
        bars = merged_intervals(inside["start_ns"].clip(lower=lo * 1e3), inside["end_ns"].clip(upper=hi * 1e3))
        span, computing = span + hi - lo, computing + sum(t - s for s, t in bars) / 1e3
    has = "has bursts too" if _bursts(exports[fused])[0] else "has none"
    first = start["first MATMUL (us)"].astype(float)
    window = first / start["first MATMUL / total_time"].astype(float) - first - start["after the DMA row's last bar (us)"]
    counts = {k: engine_work(exports[k]).loc[["scalar", "vector"], "computing"].sum() for k in (base, fused)}
    fewer = "fewer" if counts[fused] < counts[base] else "more" if counts[fused] > counts[base] else "as many"
    return (
        f"fusion ({dtype}): baseline's bursts matched to S and P (shaded, A4) last {span:.1f} us, {span - computing:.1f} us of it with no lane computing; fused {has}\n"
        f"compute window ({dtype}), baseline -> fused: {window[base]:.1f} -> {window[fused]:.1f} us, down "
        f"{round(window[base], 1) - round(window[fused], 1):.1f} us\n"
        f"fused also runs {fewer} scalar and vector computing instructions (the per-engine table); one execution each: the window's change is not attributed (bursts or instructions)"
    )


def burst_spans(exports: dict[str, Any], name: str = "baseline_bf16_s512") -> dict[str, list[tuple[str, float, float]]]:
    """{name: [(label, start_us, end_us), ...]}: each round trip, from its first store instruction to its last DMA
    bar, labelled S then P by time order, for analysis.draw_lanes to shade (the figure marked no
    burst; the stores start before the first bar, so the span starts at them)."""
    bursts, spans = _bursts(exports[name])
    return {name: [(label, min(rows[0].start_ns / 1e3, lo), hi) for label, rows, (lo, hi) in zip("SP", bursts, spans)]}


def burst_transfers(exports: dict[str, Any], name: str = "baseline_bf16_s512") -> str:
    """One line per DMA burst of one baseline profile (09's markdown names it: the line does not): its HBM
    store and load instructions (start, bytes) and the span of its DMA bars.

    Why: 09 said the bursts "fit the round trip of S and P" by eye; the HBM instructions between
    the first and the last MATMUL show it. A burst is a run of stores followed by loads; it fits a round trip
    when it loads back the bytes it stored and they equal the source's S (first burst) or P (second) store.
    The bar span lets a reader check the match by time.
    """
    from analysis import attention_hbm_traffic

    bursts, spans = _bursts(exports[name])
    need = attention_hbm_traffic("baseline", 128, int(name.rsplit("_s", 1)[1]), name.split("_")[1])
    source = need[need["direction"] == "write"].set_index("tensor")["bytes"]

    def listing(rows: list[Any], col: str) -> str:
        picked = [r for r in rows if getattr(r, col)]
        return f"{', '.join(f'{r.start_ns / 1e3:.1f}' for r in picked)} us"

    lines = []
    for rows, tensor, (lo, hi) in zip(bursts, ("scores S", "weights P"), spans):
        stored, loaded = (sum(getattr(r, c) for r in rows) for c in ("hbm_write_bytes", "hbm_read_bytes"))
        want = int(source[source.index.str.startswith(tensor)].sum())
        same = "=" if stored == loaded == want else "NOT ="
        lines.append(
            f"burst {tensor[-1]} ({tensor[:-2]}): stores at {listing(rows, 'hbm_write_bytes')}, loads at {listing(rows, 'hbm_read_bytes')}; DMA bars {lo:.1f}-{hi:.1f} us; stored {same} loaded {same} source's {want:,} B"
        )
    return "\n".join(lines)
