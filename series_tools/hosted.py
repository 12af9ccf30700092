"""The start cell every notebook opens with, and the hosted-notebook route.

Every notebook's first code cell after its parameters is three lines (START_CELL): `import
helpers`, `helpers.start(...)` (which checks the kernel and the parameters and picks the backend)
and `backend = session.backend`. `python -m series_tools.hosted` writes it into every notebook and
tests/test_hosted.py fails when a notebook's cell differs from it.

A learner may open a notebook in a hosted kernel (a notebook service with a GPU) that has no
checkout of the series, so `import helpers` fails there. The route is a cell of two lines the
learner adds above it (HOSTED_INSTALL_CELL, in the README's "Hosted notebooks"): clone the series and
install it editable into the kernel's Python, then restart the kernel, so that the kernel and the
processes it starts (notebook 07's second process, notebook 08's torchrun ranks) import it.

Why a clone and not `pip install git+URL`: the series reads files beside its packages
(`data/recorded-neuron/` in notebook 09, `runs/` for results, the git commit in
environment.json), all found from the repository root (helpers.series.REPO_ROOT), which a
wheel installed into site-packages does not have.

    python -m series_tools.hosted          # rewrite the start cell of every notebook
    python -m series_tools.hosted --check  # exit 1 when a notebook's start cell differs from START_CELL
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from helpers.series import NOTEBOOK_DIR, notebook_paths

# Where a hosted kernel keeps its checkout (under the kernel's home folder).
CHECKOUT_NAME = "trainium-profiling-series"
# The hosted route: the cell a learner adds above the start cell, with the series' git URL for
# {url} (README, "Hosted notebooks"); then they restart the kernel, which finds the series installed.
HOSTED_INSTALL_CELL = f"!git clone -q --depth 1 {{url}} ~/{CHECKOUT_NAME}\n%pip install -q --no-deps -e ~/{CHECKOUT_NAME}"
IMPORT_LINE = (
    'import helpers  # ModuleNotFoundError? select the kernel "Python (trainium-profiling)", or README "Hosted notebooks"'
)


def start_cell(stem: str) -> str:
    """The three lines that open notebook `stem`'s session."""
    return (
        f"{IMPORT_LINE}\n"
        f"session = helpers.start({json.dumps(stem)}, globals())  # checks the kernel and the parameters above, picks the backend\n"
        "backend = session.backend"
    )


def helpers_cell_index(nb: dict) -> int:
    """Index (in nb['cells']) of the code cell that opens the session: the first after the parameters."""
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and "helpers.start(" in "".join(cell["source"]):
            return i
    raise ValueError("no cell calls helpers.start(")


def start_cell_problems(notebook_dir: Path = NOTEBOOK_DIR) -> list[str]:
    """Notebooks whose start cell is not START_CELL, one line each."""
    problems = []
    for path in notebook_paths(notebook_dir):
        nb = json.loads(path.read_text())
        if "".join(nb["cells"][helpers_cell_index(nb)]["source"]).strip() != start_cell(path.stem):
            problems.append(
                f"{path.name}: its start cell differs from series_tools.hosted.start_cell: run `python -m series_tools.hosted`"
            )
    return problems


def write_start_cells(notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Rewrite every notebook's start cell to start_cell(stem); return the changed ones."""
    import nbformat

    changed = []
    for path in notebook_paths(notebook_dir):
        nb = nbformat.read(path, as_version=4)
        cell = nb.cells[helpers_cell_index(nb)]
        if cell.source.strip() != start_cell(path.stem):
            cell.source = start_cell(path.stem)
            nbformat.write(nb, path)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m series_tools.hosted", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks whose start cell differs (exit 1)")
    parser.add_argument("--notebook-dir", default=str(NOTEBOOK_DIR), help="where the notebooks are (default: notebooks/)")
    args = parser.parse_args(argv)
    if args.check:
        problems = start_cell_problems(Path(args.notebook_dir))
        print("\n".join(problems))
        return 1 if problems else 0
    for path in write_start_cells(Path(args.notebook_dir)):
        print(f"rewrote the start cell of {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
