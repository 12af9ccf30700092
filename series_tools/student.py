"""Student copies of the series: every solution cell replaced by an empty answer cell.

    python -m series_tools.student [--out student/]

Solutions live in the notebooks as code cells tagged `solution`, each starting with a comment
`# Exercise N: ...` (the text after the number may give the answer away, so it is dropped), and
under a markdown cell tagged `solution`. A student copy keeps everything else, and replaces each
solution cell with a cell tagged `exercise` that holds only comments: an unanswered exercise
runs as a no-op, so the copies execute end to end (the test suite runs them).

Applied to an executed notebook (the learners' HTML handout), it also clears the outputs of the
code cells under a "**Predict first**" prompt, up to the next section heading: the answer to a
prediction is what the learner's own run prints, not what the handout already shows.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from series_tools.cli import OneLineParser
from helpers.errors import OutputDirError, SeriesError
from helpers.outputs import REPO_ROOT, ensure_writable_dir
from helpers.series import notebook_paths

EXERCISE = re.compile(r"^#\s*(Exercise\s+\d+)")
ANSWERS_MARKDOWN = (
    "### Your answers\nWrite your answer to each exercise in the cells below. They are yours: the run does not check them."
)


def student_cell_source(solution_source: str) -> str:
    first = solution_source.lstrip().splitlines()[0] if solution_source.strip() else ""
    label = m.group(1) if (m := EXERCISE.match(first)) else "Exercise"
    return f"# {label}: your answer here (this cell is not checked; leave it as comments to skip it)\n"


PREDICT_PROMPT = re.compile(r"\*\*\s*predict first", re.IGNORECASE)  # "**Predict first**:" and "**Predict first:**" alike


def is_prompt(source: str) -> bool:
    """A markdown cell that asks the learner to predict before the cells below answer."""
    return bool(PREDICT_PROMPT.search(source))


def starts_section(cell) -> bool:
    return cell.cell_type == "markdown" and any(line.startswith("#") for line in cell.source.splitlines())


def clear_predicted_outputs(cells) -> None:
    """Empty the outputs of the code cells that answer a "Predict first" prompt (those after it,
    up to the next section heading)."""
    under_prompt = False
    for cell in cells:
        if cell.cell_type == "markdown":
            if starts_section(cell) and not is_prompt(cell.source):
                under_prompt = False
            if is_prompt(cell.source):
                under_prompt = True
        elif under_prompt:
            cell.outputs, cell.execution_count = [], None


def to_student(nb):
    """A copy of the notebook node without solutions, without the outputs that answer a prompt, and without
    papermill's injected parameters cell (the run's own paths)."""
    import copy

    import nbformat

    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        tags = cell.metadata.get("tags", [])
        if (
            "injected-parameters" in tags
        ):  # papermill's cell: this machine's OUT_DIR and backend, not the learner's (08's handout)
            continue
        if "solution" not in tags:
            cells.append(cell)
        elif cell.cell_type == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(ANSWERS_MARKDOWN, metadata={"tags": ["exercise"]}))
        else:
            cells.append(nbformat.v4.new_code_cell(student_cell_source(cell.source), metadata={"tags": ["exercise"]}))
    clear_predicted_outputs(cells)
    out.cells = cells
    return out


def write_student_copies(notebooks: list[Path], out_dir: Path) -> list[Path]:
    import nbformat

    out_dir = ensure_writable_dir(out_dir)
    written = []
    for path in notebooks:
        target = out_dir / path.name
        nbformat.write(to_student(nbformat.read(path, as_version=4)), target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m series_tools.student", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO_ROOT / "student"), help="folder for the copies (default: student/)")
    args = parser.parse_args(argv)
    notebooks = notebook_paths()
    try:
        if notebooks and Path(args.out).resolve() == notebooks[0].parent.resolve():
            raise SeriesError(
                f"--out {args.out} is the series' notebooks folder: the copies would replace the notebooks and their solutions",
                f"pass another folder, e.g. --out {REPO_ROOT / 'student'}",
            )
        written = write_student_copies(notebooks, Path(args.out))
    except SeriesError as exc:
        fix = (
            exc.fix
            if not isinstance(exc, OutputDirError)
            else f"pass --out a folder you can write, e.g. --out {REPO_ROOT / 'student'}"
        )
        print(f"error: {type(exc)(exc.problem, fix)}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} student notebooks to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
