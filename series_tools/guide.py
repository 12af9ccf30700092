"""The instructor guide's generated sections: the 3-hour agenda and the exercises of every notebook.

    python -m series_tools.guide            # rewrite them in docs/INSTRUCTOR_GUIDE.md
    python -m series_tools.guide --check    # exit 1 if the guide differs from the notebooks

The exercises live in the notebooks (their "## Exercises" cell), the recorded run times in
helpers.series; the guide shows both (the agenda, the timings table and the exercises), so each section is generated between two markers instead
of typed twice (tests/test_guide.py fails when the guide has drifted).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from helpers.series import CPU_SECONDS_MEASURED_ON, NOTEBOOKS, REPO_ROOT, notebook_paths

GUIDE = REPO_ROOT / "docs" / "INSTRUCTOR_GUIDE.md"

# The teaching plan: minutes of explanation, prediction and exercises per notebook, beside the
# measured run time. A plan, not a measurement: change it to suit the room.
TEACHING_MINUTES = {
    "00_environment_check": 5,
    "01_profiler_setup": 20,
    "02_naive_rmsnorm": 20,
    "03_fused_rms_norm": 15,
    "04_torch_compile": 15,
    "05_compare_variants": 20,
    "06_reading_traces": 15,
    "09_trainium_device_view": 10,
    "07_shapes_and_recompiles": 20,
    "08_many_processes": 20,
}
BREAKS_MINUTES = 10  # one break in the middle of the core path


def notebook_exercises(path: Path) -> list[str]:
    """The numbered exercises of one notebook, each on one line (markdown wrapping undone)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown" and "## Exercises" in "".join(c["source"])
    )
    section = cell.split("## Exercises", 1)[1]
    items = re.split(r"^(\d+)\. ", section, flags=re.M)[1:]
    return [" ".join(text.split()) for text in items[1::2]]


def exercises_markdown() -> str:
    lines = []
    for path in notebook_paths():
        lines.append(f"- **{path.stem}**")
        lines += [f"  {n}. {text}" for n, text in enumerate(notebook_exercises(path), start=1)]
    return "\n".join(lines)


def agenda_markdown() -> str:
    """The core path first (00-06, then 09), then the optional notebooks, with a running clock."""
    core = [i for i in NOTEBOOKS if not i.optional]
    optional = [i for i in NOTEBOOKS if i.optional]
    rows, clock = ["| start (h:mm) | notebook | teach (min) | run on a 2-core CPU (s) | part |", "|---|---|---|---|---|"], 0
    for n, info in enumerate(core + optional):
        if n == len(core) // 2:
            rows.append(f"| {clock // 60}:{clock % 60:02d} | break | {BREAKS_MINUTES} | | |")
            clock += BREAKS_MINUTES
        run = f"{info.cpu_seconds:.0f}" if info.cpu_seconds else "not recorded"
        rows.append(
            f"| {clock // 60}:{clock % 60:02d} | `{info.stem}` | {TEACHING_MINUTES[info.stem]} | {run} | "
            f"{'optional' if info.optional else 'core'} |"
        )
        clock += TEACHING_MINUTES[info.stem]
    core_minutes = sum(TEACHING_MINUTES[i.stem] for i in core) + BREAKS_MINUTES
    rows.append("")
    rows.append(
        f"Core path: {core_minutes // 60} h {core_minutes % 60:02d} min with the break; the optional notebooks "
        f"and questions fill the rest of 3 hours ({clock} min on the agenda in all, the break included). Run times: {CPU_SECONDS_MEASURED_ON}; on Trainium the "
        "first run of a notebook adds its compiles (pre-warm the caches, below)."
    )
    return "\n".join(rows)


def timings_markdown() -> str:
    """Each notebook's recorded wall time (helpers.series, the committed cpu reference run), with a
    column per backend that no run of this project has timed yet for the instructor to fill."""
    rows = ["| notebook | cpu, 2 cores (s) | cuda (s) | Trainium trn2 (s) |", "|---|---|---|---|"]
    for info in NOTEBOOKS:
        run = f"{info.cpu_seconds:.1f}" if info.cpu_seconds else "not recorded"
        rows.append(f"| `{info.stem}` | {run} | not measured yet | fill in from your run |")
    total = sum(info.cpu_seconds or 0 for info in NOTEBOOKS)
    rows.append(f"| **sum of the notebooks** | **{total:.1f}** | | |")
    rows += [
        "",
        f"cpu: {CPU_SECONDS_MEASURED_ON}, the committed cpu reference run (docs/reference-runs/): its README lists "
        "the same times beside each executed notebook. cuda and Trainium: no run of this project has timed them; "
        "`make run` on one writes the column's numbers to its run folder's `status.json`.",
    ]
    return "\n".join(rows)


SECTIONS = {"agenda": agenda_markdown, "timings": timings_markdown, "exercises": exercises_markdown}


def marker(name: str, end: bool = False) -> str:
    return f"<!-- {'end ' if end else ''}generated: {name} (python -m series_tools.guide) -->"


def render(text: str) -> str:
    """The guide's text with every generated section replaced by its current content."""
    for name, make in SECTIONS.items():
        start, stop = marker(name), marker(name, end=True)
        if start not in text or stop not in text:
            raise ValueError(f"{GUIDE.name} lacks the markers of the generated section '{name}': {start} ... {stop}")
        head, rest = text.split(start, 1)
        text = head + start + "\n" + make() + "\n" + stop + rest.split(stop, 1)[1]
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m series_tools.guide", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the guide differs from the notebooks")
    args = parser.parse_args(argv)
    text = GUIDE.read_text(encoding="utf-8")
    fresh = render(text)
    if args.check:
        if fresh != text:
            print(f"{GUIDE} differs from the notebooks: run `python -m series_tools.guide`")
            return 1
        return 0
    GUIDE.write_text(fresh, encoding="utf-8")
    print(f"wrote the generated sections of {GUIDE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
