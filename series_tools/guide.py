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
import math
import re
import sys
from pathlib import Path

from helpers.series import is_appendix, CPU_SECONDS_MEASURED_ON, NOTEBOOK_DIR, NOTEBOOKS, REPO_ROOT, notebook_paths
from series_tools.lesson_limits import minutes_limit, reference_run_minutes

GUIDE = REPO_ROOT / "docs" / "INSTRUCTOR_GUIDE.md"

# The teaching plan of each slot, in minutes, beside the reading time measured on the committed
# reference run (measured on its executed copy: series_tools.lesson_limits). A plan, not a
# measurement: change it to suit the room. Every slot holds its notebook's reading time whole.
LOGIN_MINUTES = 10  # the first slot: logging in, opening the first notebook, checking the kernel
PREDICT_MINUTES = 3  # the room writes down its predictions before running the cells
MINUTES_PER_EXERCISE = 3
BREAK_MINUTES = 15  # at least, between the two sessions of a day
SESSION_MINUTES = 180  # a workshop session; the core path takes two
SESSIONS_PER_DAY = 2  # a further session (the optional notebooks that do not fit) is on the next day
REFERENCE_MINUTES = reference_run_minutes()


def reading_minutes(stem: str) -> float | None:
    """A notebook's reading time, measured on its executed copy in the committed cpu reference run
    (series_tools.lesson_limits); None where that run does not hold it."""
    return REFERENCE_MINUTES.get(stem)


def slot(info) -> dict:
    """One notebook's agenda slot: login (first slot only), prediction, reading, exercises, and their sum."""
    read = reading_minutes(info.stem)
    read_min = math.ceil(read) if read is not None else minutes_limit(info.stem)
    parts = {
        "login": LOGIN_MINUTES if info.stem.startswith("00_") else 0,
        "predict": PREDICT_MINUTES,
        "read": read_min,
        "exercises": MINUTES_PER_EXERCISE * len(notebook_exercises(NOTEBOOK_DIR / f"{info.stem}.ipynb")),
    }
    return {**parts, "slot": sum(parts.values()), "read_recorded": read is not None}


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
        if is_appendix(path.stem):
            continue
        lines.append(f"- **{path.stem}**")
        lines += [f"  {n}. {text}" for n, text in enumerate(notebook_exercises(path), start=1)]
    return "\n".join(lines)


def _hmm(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def agenda_markdown() -> str:
    """The core path first (00-06, then 09), in sessions of SESSION_MINUTES, then the optional
    notebooks; each slot budgets login, prediction, reading and exercises, with a running clock per
    day. A day holds SESSIONS_PER_DAY sessions, the second starting BREAK_MINUTES after the first
    session's planned end; a break row says when a session ends and how long the break is."""
    lessons = [i for i in NOTEBOOKS if not i.appendix]
    core, optional = [i for i in lessons if not i.optional], [i for i in lessons if i.optional]
    header = "| start (h:mm) | notebook | login | predict | read | exercises | slot (min) | run on a 2-core CPU (s) | part |"
    blank = " | | | | | | | |"
    rows = [header, "|---|---|---|---|---|---|---|---|---|", f"| 0:00 | session 1 (day 1){blank}"]
    clock, session, day, in_day, core_sessions = 0, 0, 1, 0, 0
    for info in core + optional:
        plan = slot(info)
        if clock + plan["slot"] > in_day * (SESSION_MINUTES + BREAK_MINUTES) + SESSION_MINUTES:
            ended, session = clock, session + 1
            if in_day + 1 < SESSIONS_PER_DAY:
                in_day += 1
                clock = in_day * (SESSION_MINUTES + BREAK_MINUTES)  # the session's planned start, a break after the last one
                rows.append(f"| {_hmm(ended)} | break ({clock - ended} min){blank}")
            else:
                rows.append(f"| {_hmm(ended)} | end of day {day}{blank}")
                day, in_day, clock = day + 1, 0, 0
            rows.append(f"| {_hmm(clock)} | session {session + 1} (day {day}){blank}")
        read = f"{plan['read']}" if plan["read_recorded"] else f"{plan['read']} (limit; not recorded)"
        run = f"{info.cpu_seconds:.0f}" if info.cpu_seconds else "not recorded"
        rows.append(
            f"| {_hmm(clock)} | `{info.stem}` | {plan['login'] or ''} | {plan['predict']} | {read} | "
            f"{plan['exercises']} | {plan['slot']} | {run} | {'optional' if info.optional else 'core'} |"
        )
        clock += plan["slot"]
        core_sessions = core_sessions if info.optional else session + 1
    rows.append(f"| {_hmm(clock)} | end of day {day}{blank}")
    core_minutes = sum(slot(i)["slot"] for i in core)
    rows.append("")
    rows.append(
        f"Core path: {core_minutes} min of slots ({sum(slot(i)['read'] for i in core)} of them reading), in "
        f"{core_sessions} session(s) of at most {SESSION_MINUTES} min, {SESSIONS_PER_DAY} sessions a day; the second "
        f"session of a day starts {SESSION_MINUTES + BREAK_MINUTES} min after the first, so the break is at least "
        f"{BREAK_MINUTES} min (its row gives its length). The clock restarts at 0:00 each day. Reading "
        f"times and run times: {CPU_SECONDS_MEASURED_ON}; on Trainium the first run of a notebook adds its compiles "
        "(pre-warm the caches, below). The appendix notebooks (A1-A5) are for self-study: each checks the numbers of "
        "the lesson notebooks it names."
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
        # the 00 sentence: readers of 00 saw two reference-run figures for one column
        f"cpu: {CPU_SECONDS_MEASURED_ON}, the committed cpu reference run (docs/reference-runs/): its README lists "
        "the same times beside each executed notebook. Notebook 00's plan in any run quotes the reference run "
        "committed when that run started, so the committed run's own 00 quotes the run before it. cuda and Trainium: no run of this project has timed them; "
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
