"""The lesson-first limits of a notebook, measured the way ../shared/tools/reading_time.py does.

A core notebook (00-06, 09) reads in at most 25 minutes, 07 and 08 in at most 30: prose (markdown
and printed output) at 180 words a minute, code at 12 non-blank, non-comment lines a minute,
0.5 minute a figure. Before the `Solutions` heading no code cell is over 30 lines and the median
cell is at most 12; lines inside print(...)/f-string/Markdown(...) calls (sentence-building code)
are at most 10% of the code. Appendix notebooks (A<n>_*) have no limits. docs/WRITING_NOTEBOOKS.md
says how a notebook meets them.

    python -m series_tools.lesson_limits [RUN_FOLDER_OR_NOTEBOOKS ...]   # default: the stored notebooks
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

from helpers.series import REFERENCE_RUNS_DIR, is_appendix, notebook_paths

WORDS_PER_MIN, LINES_PER_MIN, FIGURE_MIN = 180, 12, 0.5
CORE_MINUTES, OPTIONAL_MINUTES = 25, 30
LONGEST_CELL, MEDIAN_CELL, SENTENCE_SHARE = 30, 12, 0.10
SENTENCE_CALL = re.compile(r"\b(print|Markdown|display_markdown|say|Claim)\s*\(")


def _output_text(output: dict) -> str:
    if "text" in output:
        return "".join(output["text"])
    data = output.get("data", {})
    if "text/markdown" in data:
        return "".join(data["text/markdown"])
    if "text/plain" in data and "image/png" not in data:
        return "".join(data["text/plain"])
    return ""


def _sentence_lines(source: str) -> int:
    """Lines inside a print(...)/Markdown(...)-like call, counted by parenthesis depth."""
    count = depth = 0
    for line in source.splitlines():
        stripped = line.strip()
        opened = depth > 0 or SENTENCE_CALL.search(stripped)
        if opened and stripped and not stripped.startswith("#"):
            count += 1
        if opened:
            depth = max(depth + line.count("(") - line.count(")"), 0)
    return count


def measure(notebook: dict) -> dict:
    """Reading minutes, code-cell sizes (before Solutions) and sentence share of one notebook.

    Args:
        notebook: the notebook's JSON; outputs count where it was executed.

    Returns:
        {"minutes", "words", "code_lines", "figures", "path_cells": [lines per code cell before
        the Solutions heading], "sentence_share"}.
    """
    words = code_lines = figures = sentence = 0
    path_cells: list[int] = []
    in_solutions = False
    for cell in notebook.get("cells", []):
        source = "".join(cell.get("source", []))
        if cell["cell_type"] == "markdown":
            words += len(source.split())
            first = source.lstrip().splitlines()[0] if source.strip() else ""
            in_solutions = in_solutions or (first.startswith("#") and "solution" in first.lower())
        elif cell["cell_type"] == "code":
            lines = [line for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
            code_lines += len(lines)
            if not in_solutions:
                path_cells.append(len(lines))
            sentence += _sentence_lines(source)
            for output in cell.get("outputs", []):
                words += len(_output_text(output).split())
                figures += any(kind in output.get("data", {}) for kind in ("image/png", "image/svg+xml"))
    minutes = words / WORDS_PER_MIN + code_lines / LINES_PER_MIN + figures * FIGURE_MIN
    share = sentence / code_lines if code_lines else 0.0
    return {
        "minutes": minutes,
        "words": words,
        "code_lines": code_lines,
        "figures": figures,
        "path_cells": path_cells,
        "sentence_share": share,
    }


def minutes_limit(stem: str) -> int | None:
    """The reading-time limit of a notebook: None for an appendix."""
    if is_appendix(stem):
        return None
    return OPTIONAL_MINUTES if stem[:2] in ("07", "08") else CORE_MINUTES


def shape_problems(stem: str, measured: dict) -> list[str]:
    """What breaks the limits that hold for the stored notebook (cell sizes, sentence share), one line each."""
    if is_appendix(stem):
        return []
    problems = []
    cells = measured["path_cells"]
    long = [n for n in cells if n > LONGEST_CELL]
    if long:
        problems.append(
            f"{stem}: {len(long)} code cell(s) over {LONGEST_CELL} lines before Solutions ({', '.join(map(str, long))}): move the audit to the appendix or split the cell"
        )
    if cells and statistics.median(cells) > MEDIAN_CELL:
        problems.append(f"{stem}: median code cell {statistics.median(cells):.0f} lines (limit {MEDIAN_CELL})")
    if measured["sentence_share"] > SENTENCE_SHARE:
        problems.append(
            f"{stem}: {measured['sentence_share']:.0%} of code lines build sentences (limit {SENTENCE_SHARE:.0%}): print verdicts and tables (docs/WRITING_NOTEBOOKS.md)"
        )
    return problems


def reading_problems(stem: str, measured: dict) -> list[str]:
    """The reading-time limit, which holds for the executed notebook."""
    limit = minutes_limit(stem)
    if limit is None or measured["minutes"] <= limit:
        return []
    return [f"{stem}: {measured['minutes']:.1f} min to read (limit {limit}): shorten it (docs/WRITING_NOTEBOOKS.md)"]


def reference_run_minutes(backend: str = "cpu", reference_dir: Path = REFERENCE_RUNS_DIR) -> dict[str, float]:
    """{stem: reading minutes} of the executed notebooks in the committed reference run of `backend`
    (docs/reference-runs/<backend>-*/), at the default parameters; empty where none is committed."""
    runs = sorted(reference_dir.glob(f"{backend}-*/"))
    if not runs:
        return {}
    return {path.stem: measure(json.loads(path.read_text(encoding="utf-8")))["minutes"] for path in notebook_paths(runs[-1])}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths: list[Path] = []
    for arg in args or [None]:
        folder = Path(arg) if arg else None
        paths += notebook_paths() if folder is None else notebook_paths(folder) if folder.is_dir() else [folder]
    problems = []
    for path in paths:
        measured = measure(json.loads(path.read_text(encoding="utf-8")))
        executed = any(
            c.get("outputs") for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"
        )
        problems += shape_problems(path.stem, measured) + (reading_problems(path.stem, measured) if executed else [])
        print(
            f"{path.stem:34s} {measured['minutes']:5.1f} min  {measured['code_lines']:4d} code lines  sentence share {measured['sentence_share']:.2f}"
        )
    print("\n".join(problems) or "every notebook within the lesson-first limits")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
