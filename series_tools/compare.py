"""Compare two runs (or a run against a baseline file) metric by metric.

    python -m series_tools.compare RUN_A RUN_B [--tolerance 0.10]
    python -m series_tools.compare RUN --baseline baseline.json [--tolerance 0.10]

A is the reference (older run or baseline), B the candidate. Exit codes: 0 no regression,
1 regression, 2 bad input. What counts as a regression:

- time:   a time-per-call metric (`*time_us`, `time_per_call_us`, `*_device_us`, `warm_call_us`) of B above A by more
          than the tolerance and, where both runs published their p10/p90, beyond the noise: B's
          p10 above A's p90 (the middle 80% of the samples do not overlap). A slowdown inside the
          noise is marked `noise`: on a shared machine, microsecond timings move by more than 10%
          between two runs of the same commit;
- ratio:  a paired ratio (taken per interleaved round, published with the p10/p90 of its rounds)
          that moved the bad way by more than the tolerance and beyond both runs' per-round spread:
          a ratio to the copy floor (`*_over_copy`) whose B p10 is above A's p90, or a speed-up
          (`*speedup*`) whose B p90 is below A's p10. Inside the spread it is `noise`;
          A ratio to the copy whose rise comes from the copy alone is `floor moved`, not a
          regression: where both runs published the two times it divides (`{shape}_copy_time_us`
          and `{shape}_{variant}_time_us`), the copy ran faster in B beyond its noise and the
          variant did not run slower beyond its own. On a shared machine a small copy can run
          20% slower or faster for a while with the variants unmoved (benchmarks/ratio_benchmark.py
          has the measurement); a line under the table gives the two changes;
- ops:    more device operations per call (any metric in unit "ops");
- busy:   a time or ratio that either run measured while the machine was busy (the metric's
          `contention` record, analysis.contention) is never a regression: it is marked `busy`,
          with what was seen under the table, and concludes nothing;
- errors: an accuracy flag (`*within_tolerance`) that turned False, or an error metric beyond
          the tolerance stored with it (`"tolerance"`, written by the notebook that measured it).

Every other metric is listed for information with its change, so that, for example, the
movement of the speed-up ratios between two runs of the same commit can be read off the table.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.contention import is_busy
from helpers.errors import SeriesError
from helpers.metrics import METRICS_FILE, read_metrics

TIME_METRIC = re.compile(r"(time_us|time_per_call_us|_device_us|warm_call_us)$")
RATIO_WORSE_WHEN_HIGHER = re.compile(r"_over_copy$")
RATIO_WORSE_WHEN_LOWER = re.compile(r"speedup")


@dataclass
class Source:
    label: str
    metrics: dict[str, dict[str, dict[str, Any]]]  # notebook -> metric -> {value, unit, ...}
    backend: str | None
    incomplete: bool
    address_layout: str | None = None  # the kernels' (environment.json): fixed, randomized, or unknown


def load_source(path: Path | str) -> Source:
    """A run folder (metrics.json + environment.json) or a baseline file (a metrics.json copy)."""
    path = Path(path)
    if path.is_dir():
        if not (path / "environment.json").exists():
            raise SeriesError(f"{path} is not a run folder (it has no environment.json)",
                              "pass a folder made by `make run` (runs/<UTC time>-<backend>/) or a baseline file")
        if not (path / METRICS_FILE).exists():
            raise SeriesError(f"Run {path} has no metrics.json: it did not finish writing its results",
                              "re-run it, or compare another run")
        data = read_metrics(path)
        layout = json.loads((path / "environment.json").read_text()).get("address_layout")
        return Source(str(path), data["notebooks"], data.get("backend"), (path / "INCOMPLETE").exists(), layout)
    if path.is_file():
        data = read_metrics(path)
        return Source(str(path), data["notebooks"], data.get("backend"), False)
    raise SeriesError(f"{path} does not exist", "pass a run folder under runs/ or a baseline metrics file")


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def judge(name: str, unit: str, a: Any, b: Any, tolerance: float,
          spread_a: tuple[Any, Any] = (None, None), spread_b: tuple[Any, Any] = (None, None),
          error_tolerance: Any = None) -> tuple[str, float | None]:
    """(verdict, relative change) for one metric; verdict is ok / noise / REGRESSION / info.

    `error_tolerance` is the tolerance stored with an error metric by the notebook that measured it.
    """
    na, nb = _number(a), _number(b)
    change = (nb - na) / na if na not in (None, 0.0) and nb is not None else None
    if name.endswith("within_tolerance"):
        return ("REGRESSION" if a is True and b is not True else "ok"), None
    if (limit := _number(error_tolerance)) is not None:
        return ("REGRESSION" if nb is not None and nb > limit else "ok"), change
    if unit == "ops":
        return ("REGRESSION" if na is not None and nb is not None and nb > na else "ok"), change
    worse_when_higher = (TIME_METRIC.search(name) and unit == "us") or (unit == "ratio" and RATIO_WORSE_WHEN_HIGHER.search(name))
    worse_when_lower = unit == "ratio" and RATIO_WORSE_WHEN_LOWER.search(name)
    if worse_when_higher or worse_when_lower:
        if change is None or (change <= tolerance if worse_when_higher else change >= -tolerance):
            return "ok", change
        beyond = _beyond_noise(spread_a, spread_b, upward=bool(worse_when_higher))
        if beyond is None and unit == "ratio":
            return "info", change  # a ratio without its per-round spread cannot be judged
        return ("noise" if beyond is False else "REGRESSION"), change
    return "info", change


def _beyond_noise(spread_a: tuple[Any, Any], spread_b: tuple[Any, Any], upward: bool) -> bool | None:
    """Whether B moved beyond the noise (upward: B's p10 above A's p90; downward: B's p90 below A's
    p10), i.e. the middle 80% of A's and B's samples (or per-round ratios) do not overlap; None
    where the two edges that decide it were not published."""
    edge_a, edge_b = (_number(spread_a[1]), _number(spread_b[0])) if upward else (_number(spread_a[0]), _number(spread_b[1]))
    if edge_a is None or edge_b is None:
        return None
    return edge_b > edge_a if upward else edge_b < edge_a


def _spread(entry: dict[str, Any]) -> tuple[Any, Any]:
    return entry.get("p10"), entry.get("p90")


def floor_moved(name: str, ma: dict[str, Any], mb: dict[str, Any]) -> str | None:
    """For a `{shape}_{variant}_over_copy` ratio that rose beyond its noise: why, where only the copy
    moved (B's copy faster beyond its noise, the variant's time not slower beyond its own); None
    where the variant's time did rise, or either time is missing."""
    shape = name.split("_", 1)[0]
    variant, copy = name.removesuffix("_over_copy") + "_time_us", f"{shape}_copy_time_us"
    if not all(isinstance(m.get(k), dict) and _number(m[k].get("value")) for m in (ma, mb) for k in (variant, copy)):
        return None
    if not _beyond_noise(_spread(ma[copy]), _spread(mb[copy]), upward=False) or \
            _beyond_noise(_spread(ma[variant]), _spread(mb[variant]), upward=True):
        return None
    change = lambda k: (mb[k]["value"] - ma[k]["value"]) / ma[k]["value"] * 100  # noqa: E731
    return (f"{name}: the copy's time changed {change(copy):+.1f}% (beyond its p10-p90) and {variant}'s "
            f"{change(variant):+.1f}% (inside its noise): the floor moved, not the variant")


def compare(a: Source, b: Source, tolerance: float) -> list[dict[str, Any]]:
    rows = []
    for notebook in sorted(set(a.metrics) | set(b.metrics)):
        ma, mb = a.metrics.get(notebook, {}), b.metrics.get(notebook, {})
        for name in sorted(set(ma) | set(mb)):
            ea, eb = ma.get(name), mb.get(name)
            unit = (eb or ea or {}).get("unit", "")
            if ea is None or eb is None:
                rows.append({"notebook": notebook, "metric": name, "unit": unit, "a": (ea or {}).get("value"),
                             "b": (eb or {}).get("value"), "change": None, "verdict": "new" if ea is None else "missing"})
                continue
            verdict, change = judge(name, unit, ea.get("value"), eb.get("value"), tolerance, _spread(ea), _spread(eb),
                                    eb.get("tolerance"))
            row = {"notebook": notebook, "metric": name, "unit": unit, "a": ea.get("value"),
                   "b": eb.get("value"), "change": change, "verdict": verdict}
            if verdict == "REGRESSION" and RATIO_WORSE_WHEN_HIGHER.search(name) and (why := floor_moved(name, ma, mb)):
                row.update(verdict="floor moved", note=f"{notebook}/{why}")
            busy = [(label, e["contention"]["seen"]) for label, e in (("A", ea), ("B", eb)) if is_busy(e.get("contention"))]
            if busy:
                row.update(verdict="busy", note=f"{notebook}/{name}: " + "; ".join(
                    f"{label} was timed while the machine was busy ({seen})" for label, seen in busy) + ": not judged")
            rows.append(row)
    return rows


CELL_CHARS = 40  # a value longer than this (a list of claims, a table of names) is cut, so rows stay one line


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        return f"{len(v)} records"
    text = ",".join(map(str, v)) if isinstance(v, list) else str(v)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS - 3] + "..."


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ("notebook", "metric", "unit", "A", "B", "change", "verdict")
    body = [(r["notebook"], r["metric"], r["unit"], _fmt(r["a"]), _fmt(r["b"]),
             "" if r["change"] is None else f"{r['change'] * 100:+.1f}%", r["verdict"]) for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, body)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m series_tools.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="RUN_A RUN_B, or one RUN with --baseline")
    parser.add_argument("--baseline", help="a metrics.json to compare RUN against (it plays A)")
    parser.add_argument("--tolerance", type=float, default=0.10, help="allowed relative slow-down (default 0.10)")
    args = parser.parse_args(argv)
    try:
        if args.baseline:
            if len(args.runs) != 1:
                raise SeriesError("with --baseline pass exactly one run", "python -m series_tools.compare RUN --baseline FILE")
            a, b = load_source(args.baseline), load_source(args.runs[0])
        else:
            if len(args.runs) != 2:
                raise SeriesError("pass two runs to compare", "python -m series_tools.compare RUN_A RUN_B")
            a, b = load_source(args.runs[0]), load_source(args.runs[1])
        if not 0 <= args.tolerance < 10:
            raise SeriesError(f"--tolerance {args.tolerance} is out of range", "use e.g. 0.10 for 10%")
    except SeriesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.backend and b.backend and a.backend != b.backend:
        print(f"warning: A ran on {a.backend}, B on {b.backend}: their times are not comparable", file=sys.stderr)
    if a.address_layout and b.address_layout and a.address_layout != b.address_layout:
        print(f"warning: A's kernels ran with a {a.address_layout} address layout, B's with a {b.address_layout} one: "
              "small-shape times and ratios can differ by several percent for that alone (series_tools/execute.py)",
              file=sys.stderr)
    for src in (a, b):
        if src.incomplete:
            print(f"warning: {src.label} is marked INCOMPLETE: some notebooks failed or did not run", file=sys.stderr)
    rows = compare(a, b, args.tolerance)
    print(f"A: {a.label}\nB: {b.label}\ntolerance: {args.tolerance:.0%} on time per call\n")
    print(format_table(rows))
    notes = [r["note"] for r in rows if r.get("note")]
    if notes:
        print("\n" + "\n".join(notes))
    regressions = [r for r in rows if r["verdict"] == "REGRESSION"]
    ratios = [abs(r["change"]) for r in rows if r["unit"] == "ratio" and r["change"] is not None
              and ("speedup" in r["metric"] or "over_copy" in r["metric"])]
    if ratios:
        print(f"\nspeed-up ratios and ratios to the copy floor moved by at most {max(ratios) * 100:.1f}% "
              f"(median {sorted(ratios)[len(ratios) // 2] * 100:.1f}%)")
    print(f"\n{len(regressions)} regression(s)" + (": " + ", ".join(f"{r['notebook']}/{r['metric']}" for r in regressions)
                                               if regressions else ""))
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
