"""Compare two runs (or a run against a baseline file) metric by metric.

    python -m series_tools.compare RUN_A RUN_B [--tolerance 0.10]
    python -m series_tools.compare RUN --baseline baseline.json [--tolerance 0.10]

A is the reference (older run or baseline), B the candidate. Exit codes: 0 no regression,
1 regression, 2 bad input. Each metric is judged by its record (helpers.metrics), never by its
name: renaming a metric in a notebook changes no verdict. What counts as a regression:

- direction: a figure that says which way is better (`"better": "lower"` or `"higher"`: times
          per call, ratios to the copy floor, speed-ups, device time) that moved the bad way by more
          than the tolerance and, where both runs published their p10/p90, beyond the noise: the
          middle 80% of A's and B's samples (or per-round ratios) do not overlap. A change inside the
          noise is `noise`: on a shared machine, microsecond timings move by more than 10% between
          two runs of the same commit. A ratio without its spread is only listed (`info`);
- floor moved: a ratio that names the timings it divides (`"divides": [numerator, denominator]`)
          and rose only because its denominator ran faster in B beyond its noise, the numerator
          inside its own, is `floor moved`, not a regression. On a shared machine a small copy can
          run 20% slower or faster for a while with the variants unmoved
          (benchmarks/ratio_benchmark.py has the measurement); a line under the table gives the two
          changes;
- busy:   a figure that either run measured while the machine was busy (its `contention` record,
          analysis.contention) is never a regression: it is marked `busy`, with what was seen under
          the table, and concludes nothing;
- ops:    more device operations per call (unit "ops");
- errors: a flag that must stay true (`"better": "true"`: an accuracy check) that turned False, or
          an error beyond the tolerance stored with it (`"tolerance"`, written by the notebook that
          measured it).

A record from before directions were published (an old baseline) is judged by the direction of
the other run's record. Every other metric is listed for information with its change, so that,
for example, the movement of idle times between two runs of the same commit can be read off.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.contention import is_busy
from helpers.errors import SeriesError
from helpers.metrics import METRICS_FILE, read_metrics


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
            raise SeriesError(
                f"{path} is not a run folder (it has no environment.json)",
                "pass a folder made by `make run` (runs/<UTC time>-<backend>/) or a baseline file",
            )
        if not (path / METRICS_FILE).exists():
            raise SeriesError(
                f"Run {path} has no metrics.json: it did not finish writing its results", "re-run it, or compare another run"
            )
        data = read_metrics(path)
        layout = json.loads((path / "environment.json").read_text()).get("address_layout")
        return Source(str(path), data["notebooks"], data.get("backend"), (path / "INCOMPLETE").exists(), layout)
    if path.is_file():
        data = read_metrics(path)
        return Source(str(path), data["notebooks"], data.get("backend"), False)
    raise SeriesError(f"{path} does not exist", "pass a run folder under runs/ or a baseline metrics file")


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def judge(ea: dict[str, Any], eb: dict[str, Any], tolerance: float) -> tuple[str, float | None]:
    """(verdict, relative change) for one metric's records in A and B; verdict is ok / noise /
    REGRESSION / info. Read from the records only: value, unit, better, tolerance, p10/p90."""
    a, b = ea.get("value"), eb.get("value")
    na, nb = _number(a), _number(b)
    change = (nb - na) / na if na not in (None, 0.0) and nb is not None else None
    better, unit = eb.get("better") or ea.get("better"), eb.get("unit") or ea.get("unit")
    if better == "true":
        return ("REGRESSION" if a is True and b is not True else "ok"), None
    if (limit := _number(eb.get("tolerance"))) is not None:
        return ("REGRESSION" if nb is not None and nb > limit else "ok"), change
    if unit == "ops":
        return ("REGRESSION" if na is not None and nb is not None and nb > na else "ok"), change
    if better in ("lower", "higher"):
        upward = better == "lower"  # the bad way
        if change is None or (change <= tolerance if upward else change >= -tolerance):
            return "ok", change
        beyond = _beyond_noise(_spread(ea), _spread(eb), upward=upward)
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
    """For a ratio that rose beyond its noise and names what it divides: why, where only the
    denominator moved (B's faster beyond its noise, the numerator not slower beyond its own); None
    where the numerator did rise, or either timing is missing."""
    divides = (mb.get(name) or {}).get("divides") or (ma.get(name) or {}).get("divides")
    if not divides:
        return None
    variant, copy = divides
    if not all(isinstance(m.get(k), dict) and _number(m[k].get("value")) for m in (ma, mb) for k in (variant, copy)):
        return None
    if not _beyond_noise(_spread(ma[copy]), _spread(mb[copy]), upward=False) or _beyond_noise(
        _spread(ma[variant]), _spread(mb[variant]), upward=True
    ):
        return None
    change = lambda k: (mb[k]["value"] - ma[k]["value"]) / ma[k]["value"] * 100  # noqa: E731
    return (
        f"{name}: the copy's time changed {change(copy):+.1f}% (beyond its p10-p90) and {variant}'s "
        f"{change(variant):+.1f}% (inside its noise): the floor moved, not the variant"
    )


def compare(a: Source, b: Source, tolerance: float) -> list[dict[str, Any]]:
    rows = []
    for notebook in sorted(set(a.metrics) | set(b.metrics)):
        ma, mb = a.metrics.get(notebook, {}), b.metrics.get(notebook, {})
        for name in sorted(set(ma) | set(mb)):
            ea, eb = ma.get(name), mb.get(name)
            unit = (eb or ea or {}).get("unit", "")
            if ea is None or eb is None:
                rows.append(
                    {
                        "notebook": notebook,
                        "metric": name,
                        "unit": unit,
                        "a": (ea or {}).get("value"),
                        "b": (eb or {}).get("value"),
                        "change": None,
                        "verdict": "new" if ea is None else "missing",
                    }
                )
                continue
            verdict, change = judge(ea, eb, tolerance)
            row = {
                "notebook": notebook,
                "metric": name,
                "unit": unit,
                "a": ea.get("value"),
                "b": eb.get("value"),
                "change": change,
                "verdict": verdict,
                "better": eb.get("better") or ea.get("better"),
            }
            if verdict == "REGRESSION" and (why := floor_moved(name, ma, mb)):
                row.update(verdict="floor moved", note=f"{notebook}/{why}")
            busy = [(label, e["contention"]["seen"]) for label, e in (("A", ea), ("B", eb)) if is_busy(e.get("contention"))]
            if busy:
                row.update(
                    verdict="busy",
                    note=f"{notebook}/{name}: "
                    + "; ".join(f"{label} was timed while the machine was busy ({seen})" for label, seen in busy)
                    + ": not judged",
                )
            rows.append(row)
    return rows


CELL_CHARS = 40  # a value longer than this (a list of claims, a table of names) is cut, so rows stay one line


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        return f"{len(v)} records"
    text = ",".join(map(str, v)) if isinstance(v, list) else str(v)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 3] + "..."


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ("notebook", "metric", "unit", "A", "B", "change", "verdict")
    body = [
        (
            r["notebook"],
            r["metric"],
            r["unit"],
            _fmt(r["a"]),
            _fmt(r["b"]),
            "" if r["change"] is None else f"{r['change'] * 100:+.1f}%",
            r["verdict"],
        )
        for r in rows
    ]
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
        print(
            f"warning: A's kernels ran with a {a.address_layout} address layout, B's with a {b.address_layout} one: "
            "small-shape times and ratios can differ by several percent for that alone (series_tools/execute.py)",
            file=sys.stderr,
        )
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
    ratios = [abs(r["change"]) for r in rows if r["unit"] == "ratio" and r["change"] is not None and r.get("better")]
    if ratios:
        print(
            f"\nthe judged ratios (speed-ups, ratios to the copy floor) moved by at most {max(ratios) * 100:.1f}% "
            f"(median {sorted(ratios)[len(ratios) // 2] * 100:.1f}%)"
        )
    print(
        f"\n{len(regressions)} regression(s)"
        + (": " + ", ".join(f"{r['notebook']}/{r['metric']}" for r in regressions) if regressions else "")
    )
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
