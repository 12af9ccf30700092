"""Compare two runs (or a run against a baseline file) metric by metric.

    python -m series_tools.compare RUN_A RUN_B [--tolerance 0.10] [--allow-missing NAME ...]
    python -m series_tools.compare RUN --baseline baseline.json [--tolerance 0.10]

A is the reference (older run or baseline), B the candidate. Each metric is judged by its record
(helpers.metrics), never by its name: renaming a metric in a notebook changes no verdict. What
counts as a regression:

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
          analysis.contention), or while another series run was timing beside it (the run's
          `identity.concurrent_runs`, series_tools.run_series), is never a regression: it is marked
          `busy`, with what was seen under the table, and concludes nothing;
- ops:    more device operations per call (unit "ops");
- errors: a flag that must stay true (`"better": "true"`: an accuracy check) that turned False, or
          an error beyond the tolerance stored with it (`"tolerance"`, written by the notebook that
          measured it).

What is compared must be the same thing: the backend, the device, the notebook's parameters
(TOKENS, HIDDEN, ...: the run's `identity`, or its status.json for a run from before it was
recorded) and each metric's own shape and dtype (`"of"`) and unit are part of its identity. A
metric whose identity differs is `not comparable (what differs)`, never a regression: a run at
TOKENS 4096 is not slower than one at 64.

Missing is a failure: a metric of A that B lacks (unless B holds one with the same record under
another name: a rename, paired by its `of`), a notebook that failed or did not run, a run marked
INCOMPLETE. `--allow-missing NAME` (repeatable) names what is expected to be missing: a notebook
(`02` or `02_naive_rmsnorm`), a metric (`02_naive_rmsnorm/time_per_call_us`, or its name alone),
or `INCOMPLETE` for a run marked so with no notebook to name.

A record from before directions were published (an old baseline) is judged by the direction of
the other run's record. Every other metric is listed for information with its change, so that,
for example, the movement of idle times between two runs of the same commit can be read off.
"""

from __future__ import annotations

import difflib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from series_tools.cli import OneLineParser
from analysis.contention import is_busy
from helpers.errors import SeriesError
from helpers.metrics import METRICS_FILE, read_metrics


EXIT_CODES = {
    0: "no regression, nothing missing, everything comparable",
    1: "a regression",
    2: "bad input (a path, a file, an option)",
    3: "not comparable: the runs differ in backend, device, parameters or a metric's shape/dtype/unit",
    4: "missing: a metric, a notebook (failed or not run) or a whole run (INCOMPLETE) that --allow-missing does not name",
}
EXIT_ORDER = (1, 4, 3)  # where several apply, the first of these is the exit status
NOT_COMPARABLE = "not comparable"
RUNNER_PARAMETERS = ("BACKEND", "OUT_DIR")  # set by the runner per run: the backend is compared on its own
DEFAULT = "(the notebook's default)"


@dataclass
class Source:
    label: str
    metrics: dict[str, dict[str, dict[str, Any]]]  # notebook -> metric -> {value, unit, ...}
    backend: str | None
    incomplete: bool
    address_layout: str | None = None  # the kernels' (environment.json): fixed, randomized, or unknown
    device: str | None = None  # environment.json's device_name
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)  # notebook -> parameter -> value
    parameters_complete: bool = False  # every parameter's value (identity), not only the overridden ones
    overridden: dict[str, set[str]] = field(default_factory=dict)  # notebook -> names set with -p
    statuses: dict[str, dict[str, Any]] | None = None  # notebook -> status.json record; None: unknown
    run_status: str | None = None  # status.json's status: passed, failed, interrupted, running
    concurrent_runs: list[str] = field(default_factory=list)  # other series runs seen timing beside it


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SeriesError(
            f"{path} cannot be read ({exc})", "re-run the series into a new folder, or compare another run"
        ) from exc
    return data if isinstance(data, dict) else {}


def _identity(source: Source, data: dict[str, Any], folder: Path | None) -> None:
    """What the compared figures were measured with: the run's `identity` record in metrics.json
    (series_tools.run_series writes it), else its environment.json and status.json."""
    identity = data.get("identity") if isinstance(data.get("identity"), dict) else {}
    env = _read_json(folder / "environment.json") if folder and (folder / "environment.json").exists() else {}
    status = _read_json(folder / "status.json") if folder and (folder / "status.json").exists() else None
    source.device = identity.get("device") or env.get("device_name")
    source.backend = source.backend or identity.get("backend") or env.get("backend")
    source.concurrent_runs = list(identity.get("concurrent_runs") or [])
    if isinstance(identity.get("parameters"), dict):
        source.parameters = {nb: dict(p) for nb, p in identity["parameters"].items()}
        source.overridden = {nb: set(v) for nb, v in (identity.get("overridden") or {}).items()}
        source.parameters_complete = True
    if status is not None:
        records = [r for r in status.get("notebooks") or [] if isinstance(r, dict) and "notebook" in r]
        source.statuses = {r["notebook"]: r for r in records}
        source.run_status = status.get("status")
        if not source.parameters_complete:  # a run from before the identity was recorded: its overrides
            for r in records:
                given = {k: v for k, v in (r.get("parameters") or {}).items() if k not in RUNNER_PARAMETERS}
                source.parameters[r["notebook"]], source.overridden[r["notebook"]] = given, set(given)


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
        layout = _read_json(path / "environment.json").get("address_layout")
        source = Source(str(path), data["notebooks"], data.get("backend"), (path / "INCOMPLETE").exists(), layout)
        _identity(source, data, path)
        return source
    if path.is_file():
        data = read_metrics(path)
        source = Source(str(path), data["notebooks"], data.get("backend"), False)
        _identity(source, data, None)
        return source
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


def _shown(value: Any) -> str:
    return value if value == DEFAULT else json.dumps(value)


def run_differences(a: Source, b: Source) -> list[str]:
    """What differs between the machines of A and B (backend, device): each makes every metric not comparable."""
    return [
        f"{what} {va} vs {vb}"
        for what, va, vb in (("backend", a.backend, b.backend), ("device", a.device, b.device))
        if va and vb and va != vb
    ]


def parameter_differences(a: Source, b: Source, notebook: str) -> list[str]:
    """The parameters that `notebook` ran with differently in A and B, as "NAME a vs b". Where
    both runs recorded every value, those are compared; where one recorded only its overrides
    (a run from before the identity record), the parameters either run overrode."""
    pa, pb = a.parameters.get(notebook, {}), b.parameters.get(notebook, {})
    if a.parameters_complete and b.parameters_complete:
        names = set(pa) & set(pb)
    else:
        names = a.overridden.get(notebook, set()) | b.overridden.get(notebook, set())
    names -= set(RUNNER_PARAMETERS)
    return [
        f"{name} {_shown(pa.get(name, DEFAULT))} vs {_shown(pb.get(name, DEFAULT))}"
        for name in sorted(names)
        if pa.get(name, DEFAULT) != pb.get(name, DEFAULT)
    ]


def metric_differences(ea: dict[str, Any], eb: dict[str, Any]) -> list[str]:
    """What differs between two records of one metric that makes them different quantities: what
    they measure (`of`: variant, shape, dtype) and their unit."""
    return [
        f"{key} {ea[key]!r} vs {eb[key]!r}"
        for key in ("of", "unit")
        if ea.get(key) is not None and eb.get(key) is not None and ea[key] != eb[key]
    ]


def _signature(entry: dict[str, Any]) -> tuple[Any, ...] | None:
    """What pairs a renamed metric with its old name: the record's quantity (`of`), unit and
    direction; None for a record without `of` (nothing but its name would pair it)."""
    return (entry["of"], entry.get("unit"), entry.get("better")) if entry.get("of") else None


def pair_renames(ma: dict[str, Any], mb: dict[str, Any]) -> dict[str, str]:
    """{name in A: name in B} for each metric of A missing from B that has exactly one metric new in
    B with the same record (`_signature`), and that one no other candidate."""
    gone = [n for n in ma if n not in mb and _signature(ma[n])]
    new = [n for n in mb if n not in ma and _signature(mb[n])]
    pairs = {}
    for old in gone:
        same = [n for n in new if _signature(mb[n]) == _signature(ma[old])]
        if len(same) == 1 and sum(_signature(ma[o]) == _signature(mb[same[0]]) for o in gone) == 1:
            pairs[old] = same[0]
    return pairs


def compare(a: Source, b: Source, tolerance: float) -> list[dict[str, Any]]:
    """One row per metric of A or B: notebook, metric, unit, a, b, change, verdict (ok, noise, info,
    REGRESSION, floor moved, busy, not comparable, missing, new) and, where needed, a note."""
    rows = []
    machine = run_differences(a, b)
    for notebook in sorted(set(a.metrics) | set(b.metrics)):
        ma, mb = a.metrics.get(notebook, {}), b.metrics.get(notebook, {})
        renames = pair_renames(ma, mb)
        params = parameter_differences(a, b, notebook)
        for name in sorted((set(ma) | set(mb)) - set(renames.values())):
            ea, eb = ma.get(name), mb.get(name)
            shown, nb_name = name, renames.get(name)
            if nb_name is not None:
                eb, shown = mb[nb_name], f"{name} -> {nb_name}"
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
            row = {"notebook": notebook, "metric": shown, "unit": unit, "a": ea.get("value"), "b": eb.get("value")}
            if differs := machine + params + metric_differences(ea, eb):
                rows.append({**row, "change": None, "verdict": NOT_COMPARABLE, "differs": differs})
                continue
            verdict, change = judge(ea, eb, tolerance)
            row.update(change=change, verdict=verdict, better=eb.get("better") or ea.get("better"))
            if nb_name is not None:
                row["note"] = f"{notebook}/{name}: renamed {nb_name} in B (the same record: {ea['of']}, {unit})"
            if verdict == "REGRESSION" and nb_name is None and (why := floor_moved(name, ma, mb)):
                row.update(verdict="floor moved", note=f"{notebook}/{why}")
            busy = [(label, e["contention"]["seen"]) for label, e in (("A", ea), ("B", eb)) if is_busy(e.get("contention"))]
            busy += [
                (label, "another series run timing beside it: " + ", ".join(src.concurrent_runs))
                for label, src in (("A", a), ("B", b))
                if src.concurrent_runs and unit in ("us", "ratio") and row.get("better") in ("lower", "higher")
            ]
            if busy:
                row.update(
                    verdict="busy",
                    note=f"{notebook}/{shown}: "
                    + "; ".join(f"{label} was timed while the machine was busy ({seen})" for label, seen in busy)
                    + ": not judged",
                )
            rows.append(row)
    return rows


def _allows(allowed: set[str], notebook: str, metric: str | None = None) -> bool:
    """Whether --allow-missing names this notebook (by stem or number) or this metric."""
    names = {notebook, notebook.split("_", 1)[0]}
    if metric is not None:
        names |= {f"{notebook}/{metric}", metric}
    return bool(names & allowed)


def same_run(a: Source, b: Source) -> bool:
    """Whether A and B are one run: the same folder, or a folder and its own metrics.json."""

    def folder(label: str) -> Path:
        path = Path(label).resolve()
        return path.parent if path.is_file() and (path.parent / "environment.json").exists() else path

    return folder(a.label) == folder(b.label)


def unknown_allowances(a: Source, b: Source, allowed: set[str]) -> list[str]:
    """One warning line per --allow-missing NAME that names no notebook or metric of either run:
    a typo there would otherwise allow nothing without a word."""
    names = {"INCOMPLETE"}
    for src in (a, b):
        for nb in {*src.metrics, *(src.statuses or {})}:
            names |= {nb, nb.split("_", 1)[0]}
            for metric in src.metrics.get(nb) or {}:
                names |= {f"{nb}/{metric}", metric}
    lines = []
    for name in sorted(allowed - names):
        close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.5)
        instead = f"--allow-missing {close[0]}" if close else "--allow-missing NOTEBOOK, NOTEBOOK/METRIC or INCOMPLETE"
        lines.append(
            f"warning: --allow-missing {name} names no notebook or metric of A or B, so it allows nothing. "
            f"Fix: drop it, or pass {instead}"
        )
    return lines


def missing_problems(
    a: Source, b: Source, rows: list[dict[str, Any]], allowed: set[str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """(problems as (line, the --allow-missing NAME that would allow it), allowed lines): a notebook
    of either run that failed, a notebook of A that B did not run, a metric of A that B lacks, a run
    marked INCOMPLETE with no notebook to name."""
    problems: list[tuple[str, str]] = []
    excused: list[str] = []
    named: set[str] = set()  # notebooks reported as a whole: their metrics are not listed again

    def note(text: str, name: str, ok: bool) -> None:
        if ok:
            excused.append(text)
        else:
            problems.append((text, name))

    for label, src in (("A", a), ("B", b)):
        for nb, record in sorted((src.statuses or {}).items()):
            if record.get("status") != "passed":
                error = (record.get("error") or "").splitlines()[0] if record.get("error") else ""
                text = f"{label}: notebook {nb} {record.get('status', 'did not pass')}" + (f" ({error})" if error else "")
                note(text, nb, _allows(allowed, nb))
                named.add(nb)
    ran_in_a = set(a.metrics) | set(a.statuses or {})
    ran_in_b = set(b.metrics) | set(b.statuses or {})
    for nb in sorted(ran_in_a - ran_in_b - named):
        note(f"B: notebook {nb} did not run (A ran it)", nb, _allows(allowed, nb))
        named.add(nb)
    for r in rows:
        if r["verdict"] == "missing" and r["notebook"] not in named:
            name = f"{r['notebook']}/{r['metric']}"
            note(f"B: {name} is missing (A has it)", name, _allows(allowed, r["notebook"], r["metric"]))
    for label, src in (("A", a), ("B", b)):
        if src.incomplete and not any(nb in named for nb in src.statuses or {}):
            note(
                f"{label}: {src.label} is marked INCOMPLETE (status {src.run_status or 'unknown'}): "
                "a notebook failed, or the run was cut off",
                "INCOMPLETE",
                "INCOMPLETE" in allowed,
            )
    return problems, excused


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


def fix_allowing(names: list[str]) -> str:
    """The options that allow `names` to be missing, as the command line takes them."""
    return " ".join(f"--allow-missing {name}" for name in names)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m series_tools.compare",
        description=__doc__.split("\n\n")[0],
        epilog="exit status: "
        + "; ".join(f"{code} {why}" for code, why in EXIT_CODES.items())
        + ". Where several apply: 1, then 4, then 3.",
    )
    parser.add_argument("runs", nargs="+", help="RUN_A RUN_B, or one RUN with --baseline")
    parser.add_argument("--baseline", help="a metrics.json to compare RUN against (it plays A)")
    parser.add_argument("--tolerance", type=float, default=0.10, help="allowed relative slow-down (default 0.10)")
    parser.add_argument(
        "--allow-missing",
        action="append",
        default=[],
        metavar="NAME",
        help="a notebook (02 or 02_naive_rmsnorm), a metric (02_naive_rmsnorm/time_per_call_us or its name) or "
        "INCOMPLETE that may be missing or failed without failing the check; repeatable",
    )
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
        if same_run(a, b):
            raise SeriesError(
                f"A and B are the same run ({a.label} and {b.label}): a check against itself cannot fail",
                "pass two different runs: python -m series_tools.compare RUN_A RUN_B (ls runs/ lists them)",
            )
    except SeriesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.address_layout and b.address_layout and a.address_layout != b.address_layout:
        print(
            f"warning: A's kernels ran with a {a.address_layout} address layout, B's with a {b.address_layout} one: "
            "small-shape times and ratios can differ by several percent for that alone (series_tools/execute.py)",
            file=sys.stderr,
        )
    for src in (a, b):
        if not src.parameters_complete and src.statuses is None:
            print(
                f"note: {src.label} records no parameters (no identity in its metrics.json, no status.json beside it): "
                "only each metric's own shape and dtype ('of') and the backend are checked",
                file=sys.stderr,
            )
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
    apart = {}  # what differs -> the metrics it makes not comparable, so a run-wide difference is one line
    for r in rows:
        if r["verdict"] == NOT_COMPARABLE:
            apart.setdefault("; ".join(r["differs"]), []).append(f"{r['notebook']}/{r['metric']}")
    for differs, names in apart.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        print(f"\nnot comparable ({differs}): {shown}")
    if apart:
        print("  fix: compare runs made with the same backend, device and parameters (-p NAME VALUE of run_series)")
    for line in unknown_allowances(a, b, set(args.allow_missing)):
        print(line, file=sys.stderr)
    problems, excused = missing_problems(a, b, rows, set(args.allow_missing))
    if problems:
        print("\n" + "\n".join(f"MISSING {line}" for line, _ in problems))
        names = list(dict.fromkeys(name for _, name in problems))
        print("  fix: re-run what is missing, or name what is expected to be missing: " + fix_allowing(names))
    for line in excused:
        print(f"allowed missing: {line}")
    print(
        f"\n{len(regressions)} regression(s)"
        + (": " + ", ".join(f"{r['notebook']}/{r['metric']}" for r in regressions) if regressions else "")
        + (f", {sum(map(len, apart.values()))} not comparable" if apart else "")
        + (f", {len(problems)} missing" if problems else "")
    )
    failed = {1: bool(regressions), 4: bool(problems), 3: bool(apart)}
    return next((code for code in EXIT_ORDER if failed[code]), 0)


if __name__ == "__main__":
    sys.exit(main())
