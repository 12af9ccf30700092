"""On a trn2/trn3: check every Neuron fact the series assumes but the vendor does not document.

    make verify-neuron                 (python -m series_tools.verify_neuron [--out runs/])

Writes `runs/<UTC time>-neuron-verify/neuron-verification.md` and `.json`: one row per check,
"assumed -> observed", and whether the assumption held. Every UNVERIFIED fact of
docs/NEURON_NOTES.md has a check (a test fails otherwise); a few documented facts the series
depends on most are observed too (profile layout, Explorer flags, first-compile times). Please
attach both files to a bug report, or use them to fill the notes' "on hardware" column.

Anywhere else it says that it needs Trainium and exits 3: nothing is faked. The tests run the
same checks against a FAKE probe (tests/test_verify_neuron.py), and their report says so.
"""

from __future__ import annotations

import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from series_tools.cli import OneLineParser
from helpers.errors import SeriesError
from helpers.outputs import RUNS_DIR, ensure_writable_dir, new_run_dir, write_json
from helpers.series import REPO_ROOT

from .observation import Observation

NOTES = REPO_ROOT / "docs" / "NEURON_NOTES.md"
NEEDS_TRAINIUM = 3
PROVOKE_DROPS_MAX_EVENTS = 100  # far below one profiled step's events, so the runtime must drop some


class Probe(Protocol):
    """Where observations come from: the hardware (HardwareProbe) or a test's fake."""

    label: str
    work_dir: Path  # where its profiles go (the report's folder, set before the checks run)

    def device_properties(self) -> dict[str, str]: ...

    def visible_cores(self) -> str: ...

    def profile(
        self,
        variant: str,
        *,
        compiled: bool = False,
        correlate: bool = True,
        capture: str | None = None,
        max_events: int | None = None,
        deterministic: bool = False,
    ) -> Observation: ...

    def explorer(self) -> dict[str, Any]: ...


@dataclass
class Row:
    fact: str
    check: str
    assumed: str
    observed: str
    holds: bool | None  # None: observed, nothing to judge (or not distinguishable on this machine)


def _lanes(observation: Observation, lane: str) -> list[str]:
    return sorted(category for category, its_lane in observation.categories.items() if its_lane == lane)


def check_n5(probe: Probe) -> list[Row]:
    props = probe.device_properties()
    return [
        Row(
            "N5",
            "torch.neuron.get_device_properties(0) fields",
            "has name and total_memory (as torch.cuda)",
            ", ".join(f"{k}={v}" for k, v in sorted(props.items())) or "no fields",
            {"name", "total_memory"} <= set(props),
        )
    ]


def check_n11(probe: Probe) -> list[Row]:
    with_c = probe.profile("naive", correlate=True)
    without = probe.profile("naive", correlate=False)
    fmt = lambda o: "no device column" if o.device_time_us is None else f"{o.device_time_us:,.1f} us"  # noqa: E731
    return [
        Row(
            "N11",
            "device time in key_averages(), with and without correlate_device_time",
            "filled only with correlate_device_time=True (where NeuronConfig accepts it)",
            f"with (passed: {with_c.correlate_passed}): {fmt(with_c)}; without: {fmt(without)}",
            bool(with_c.device_time_us) and not without.device_time_us if with_c.correlate_passed else None,
        )
    ]


def check_n19(probe: Probe) -> list[Row]:
    rows = []
    for compiled in (False, True):
        o = probe.profile("naive", compiled=compiled)
        shown = ", ".join(f"{category}->{lane}" for category, lane in sorted(o.categories.items()))
        rows.append(
            Row(
                "N19",
                f"Chrome-trace categories, naive {'compiled' if compiled else 'eager'}",
                "no device-side category (the source snapshot adds no device events)",
                shown,
                not _lanes(o, "unverified"),
            )
        )
    return rows


def check_n25(probe: Probe) -> list[Row]:
    counts = {
        (v, c): probe.profile(v, compiled=c)
        for v in ("naive", "torch.rms_norm")
        for c in (False, True)
        if not (v == "torch.rms_norm" and c)
    }
    rows = [
        Row(
            "N25",
            f"NEFF count, {v} {'compiled' if c else 'eager'}",
            "naive eager: at most one per op (Adaptive Eager Execution may fuse, N40); compiled: one",
            f"{o.neffs} NEFF, {o.ntffs} NTFF ({o.ntffs_nonempty} non-empty); first call {o.first_call_s:.1f} s",
            None,
        )
        for (v, c), o in counts.items()
    ]
    fused = counts[("torch.rms_norm", False)].neffs
    rows.append(Row("N25", "torch.rms_norm lowers to one NEFF per shape and dtype", "1 NEFF", f"{fused} NEFF", fused == 1))
    return rows


def check_n41(probe: Probe) -> list[Row]:
    """Adaptive Eager Execution (N40) on the naive RMSNorm: the NEFFs of one eager profile with the
    default settings against one in deterministic mode, which the eager-mode FAQ says disables it."""
    default = probe.profile("naive")
    op_by_op = probe.profile("naive", deterministic=True)
    fused = default.neffs < op_by_op.neffs
    return [
        Row(
            "N41",
            "naive RMSNorm eager: NEFFs with Adaptive Eager Execution on, and in deterministic mode",
            "deterministic mode (fusion off) gives at least as many NEFFs as the default; whether the default fuses is observed",
            f"default: {default.neffs} NEFF; torch.use_deterministic_algorithms(True): {op_by_op.neffs} NEFF "
            f"({'the default fused some ops' if fused else 'no fusion seen'})",
            op_by_op.neffs >= default.neffs and op_by_op.neffs > 0,
        )
    ]


def check_n50(probe: Probe) -> list[Row]:
    ex = probe.explorer()
    return [
        Row(
            "N50",
            "neuron-explorer capture without input files",
            "runs the NEFF on zero-filled inputs (an audit's reading; not found in the docs read here)",
            ex.get("capture_inputs", "neuron-explorer not installed"),
            None,
        )
    ]


def _cores(o: Observation) -> str:
    if o.system_event_cores is None:
        return "no system-event export"
    return ", ".join(f"nc_idx {c}: {n} events" for c, n in sorted(o.system_event_cores.items())) or "no core events"


def check_n28(probe: Probe) -> list[Row]:
    """capture_enabled_for_nc enables system-trace capture per NeuronCore (ring buffers, N10), so it
    is checked by the core index of the captured system events (Explorer's `nc_idx`), not by the
    device traces (.ntff), which it is not documented to select."""
    visible = probe.visible_cores()
    as_visible = probe.profile("naive", capture=visible)
    from_zero = probe.profile("naive", capture="0")
    observed = (
        f"NEURON_RT_VISIBLE_CORES={visible}: capture '{visible}' -> {_cores(as_visible)}; capture '0' -> {_cores(from_zero)}"
    )
    if visible == "0":
        holds = None
        observed += " (not distinguishable on core 0: run again with NEURON_RT_VISIBLE_CORES=1)"
    elif as_visible.system_event_cores is None or from_zero.system_event_cores is None:
        holds = None
        observed += " (needs neuron-explorer's Parquet export to judge)"
    else:
        holds = bool(as_visible.system_event_cores) and not from_zero.system_event_cores
    return [
        Row(
            "N28",
            "capture_enabled_for_nc indices",
            "instance-wide, as NEURON_RT_VISIBLE_CORES: core events captured with the visible spec, none with '0'",
            observed,
            holds,
        )
    ]


def check_n29(probe: Probe) -> list[Row]:
    o = probe.profile("naive", max_events=PROVOKE_DROPS_MAX_EVENTS)
    where = ", ".join(o.dropped_seen_at) or "nowhere"
    return [
        Row(
            "N29",
            f"dropped-events warning with max_events_per_nc={PROVOKE_DROPS_MAX_EVENTS}",
            "printed on this process's console at the step that ends the window, at export_trace or at the "
            "profiler's exit (all three watched), with the runtime's default logging",
            f"{o.dropped_events:,} dropped events reported (read at: {where})",
            o.dropped_events > 0,
        )
    ]


def check_documented(probe: Probe) -> list[Row]:
    """Documented facts the series depends on most, observed for the record."""
    o = probe.profile("naive")
    ex = probe.explorer()
    return [
        Row(
            "N16",
            "profile folder layout",
            "<dir>/<instance>_pid_<pid>/<timestamp>/ with NEFF, NTFF, .pb",
            "; ".join(o.layout_problems) or "as documented",
            not o.layout_problems,
        ),
        Row(
            "N18",
            "neuron-explorer version and export flags",
            "--output-format parquet / summary-json, --output-file",
            f"{ex.get('version', 'not installed')}; accepts: {', '.join(ex.get('accepts', [])) or 'none checked'}"
            + (f"; {ex['path']}" if ex.get("path") else ""),
            None,
        ),
    ]


CHECKS: dict[str, Callable[[Probe], list[Row]]] = {
    "N5": check_n5,
    "N11": check_n11,
    "N19": check_n19,
    "N25": check_n25,
    "N28": check_n28,
    "N29": check_n29,
    "N41": check_n41,
    "N50": check_n50,
    "documented": check_documented,
}


def unverified_facts(notes: Path = NOTES) -> list[str]:
    """Ids of the rows of the notes' table whose status column says UNVERIFIED."""
    ids = []
    for line in notes.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 5 and re.fullmatch(r"N\d+", cells[1]) and "UNVERIFIED" in cells[4]:
            ids.append(cells[1])
    return ids


@dataclass
class Report:
    probe: str
    rows: list[Row] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # check -> what went wrong running it


def verify(probe: Probe) -> Report:
    report = Report(probe=probe.label)
    for name, check in CHECKS.items():
        try:
            report.rows.extend(check(probe))
        except Exception as exc:  # one failed check must not hide the others' results
            report.errors[name] = f"{type(exc).__name__}: {exc}"
    return report


def to_markdown(report: Report) -> str:
    verdict = {True: "holds", False: "**DOES NOT HOLD**", None: "observed"}
    lines = [
        f"# Neuron verification ({report.probe})",
        "",
        "| fact | check | assumed | observed | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in report.rows:
        lines.append(f"| {r.fact} | {r.check} | {r.assumed} | {r.observed} | {verdict[r.holds]} |")
    for name, error in report.errors.items():
        lines.append(f"| {name} | (check failed to run) | | {error} | **ERROR** |")
    return "\n".join(lines) + "\n"


def write_report(report: Report, out_dir: Path) -> tuple[Path, Path]:
    out_dir = ensure_writable_dir(out_dir)
    md = out_dir / "neuron-verification.md"
    md.write_text(to_markdown(report))
    js = write_json(
        out_dir / "neuron-verification.json",
        {"probe": report.probe, "rows": [asdict(r) for r in report.rows], "errors": report.errors},
    )
    return md, js


def main(argv: list[str] | None = None, probe: Probe | None = None) -> int:
    parser = OneLineParser(prog="python -m series_tools.verify_neuron", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(RUNS_DIR), help="parent folder of the report's run folder (default runs/)")
    args = parser.parse_args(argv)
    try:
        if probe is None:
            from series_tools.neuron_probe import HardwareProbe

            probe = HardwareProbe()
    except SeriesError as exc:
        print(f"verify-neuron needs a Trainium (trn2/trn3) instance with torch-neuronx: {exc}", file=sys.stderr)
        return NEEDS_TRAINIUM
    out_dir = new_run_dir(Path(args.out), "neuron", "verify")
    probe.work_dir = out_dir / "profiles"
    report = verify(probe)
    md, js = write_report(report, out_dir)
    print(md.read_text())
    print(f"wrote {md} and {js}")
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
