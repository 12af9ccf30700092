"""The hosted-notebook route: the first lines of every notebook's `import helpers` cell.

A learner may open a notebook in a hosted kernel (a notebook service with a GPU) that has no
checkout of the series, so `import helpers` fails there. Those lines then clone the series and
install it (editable) into the kernel's own Python, so that the kernel and the processes it
starts (notebook 07's second process, notebook 08's torchrun ranks) import it; in the series'
own kernel `import helpers` succeeds and nothing else runs. They must work before `helpers`
exists, so they are standard-library code inside the cell, and HOSTED_PREAMBLE is their one
source: `python -m series_tools.hosted` writes it into every notebook and
tests/test_hosted.py fails when a notebook's cell differs from it.

Why a clone and not `pip install git+URL`: the series reads files beside its packages
(`data/recorded-neuron/` in notebook 09, `runs/` for results, the git commit in
environment.json), all found from the repository root (helpers.series.REPO_ROOT), which a
wheel installed into site-packages does not have.

A checkout opened in the wrong kernel (a `../helpers` folder beside the notebook) is not a
hosted kernel: the cell then says which kernel to select and installs nothing.

    python -m series_tools.hosted          # rewrite the first helpers cell of every notebook
    python -m series_tools.hosted --check  # exit 1 when a notebook's cell differs from HOSTED_PREAMBLE
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from helpers.series import NOTEBOOK_DIR, notebook_paths

# The series' public git repository. None is published yet: a hosted learner sets the
# environment variable SERIES_GIT_URL (README, "Hosted notebooks"). Once there is one, put it
# here and run `python -m series_tools.hosted` so that every notebook carries it. The lines are
# written as `ruff format` writes them, so that `make lint` (which checks the format) leaves them alone.
SERIES_GIT_URL_DEFAULT = ""
# Where a hosted kernel keeps its checkout (under the kernel's home folder).
CHECKOUT_NAME = "trainium-profiling-series"

HOSTED_PREAMBLE = f"""\
try:
    import helpers  # in the series' kernel that is all: the lines below run only where helpers is missing
except ModuleNotFoundError:  # a hosted kernel with no checkout: clone and install the series (README, "Hosted notebooks")
    import os, pathlib, subprocess, sys

    url, src = os.environ.get("SERIES_GIT_URL", {json.dumps(SERIES_GIT_URL_DEFAULT)}), pathlib.Path.home() / {json.dumps(CHECKOUT_NAME)}
    if pathlib.Path("../helpers/__init__.py").exists() or not url:  # a checkout in the wrong kernel, or no URL
        raise ModuleNotFoundError(
            "No module named 'helpers'. In a checkout: select the kernel 'Python (trainium-profiling)' "
            "(`make kernel`). Hosted: %env SERIES_GIT_URL=<the series' git URL> (README, 'Hosted notebooks')"
        ) from None
    if not src.exists():
        subprocess.run(["git", "clone", "--depth", "1", url, str(src)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", str(src)], check=True)
    sys.path.insert(0, str(src))  # this kernel started before the install; its subprocesses find the series installed
    import helpers
"""


def helpers_cell_index(nb: dict) -> int:
    """Index (in nb['cells']) of the code cell that opens the session: the first after the parameters."""
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and "helpers.start(" in "".join(cell["source"]):
            return i
    raise ValueError("no cell calls helpers.start(")


def session_lines(source: str) -> str:
    """The cell's own lines after the preamble (or after a bare `import helpers` line)."""
    lines = source.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("session = "))
    return "".join(lines[start:])


def with_preamble(source: str) -> str:
    return HOSTED_PREAMBLE + session_lines(source)


def preamble_problems(notebook_dir: Path = NOTEBOOK_DIR) -> list[str]:
    """Notebooks whose helpers cell does not start with the current HOSTED_PREAMBLE."""
    problems = []
    for path in notebook_paths(notebook_dir):
        nb = json.loads(path.read_text())
        if not "".join(nb["cells"][helpers_cell_index(nb)]["source"]).startswith(HOSTED_PREAMBLE):
            problems.append(path.name)
    return problems


def write_preambles(notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Rewrite every notebook's helpers cell to HOSTED_PREAMBLE + its own lines; return the changed ones."""
    import nbformat

    changed = []
    for path in notebook_paths(notebook_dir):
        nb = nbformat.read(path, as_version=4)
        cell = nb.cells[helpers_cell_index(nb)]
        new = with_preamble(cell.source)
        if new != cell.source:
            cell.source = new
            nbformat.write(nb, path)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m series_tools.hosted", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks whose cell differs (exit 1)")
    parser.add_argument("--notebook-dir", default=str(NOTEBOOK_DIR), help="where the notebooks are (default: notebooks/)")
    args = parser.parse_args(argv)
    if args.check:
        problems = preamble_problems(Path(args.notebook_dir))
        for name in problems:
            print(f"{name}: its helpers cell does not start with series_tools.hosted.HOSTED_PREAMBLE")
        return 1 if problems else 0
    for path in write_preambles(Path(args.notebook_dir)):
        print(f"rewrote the helpers cell of {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
