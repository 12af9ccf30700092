"""Notebooks are stored clean and follow the series' shape."""

import json
from pathlib import Path

import pytest

from helpers.series import NOTEBOOKS as SERIES
from helpers.series import is_appendix, notebook_paths
from series_tools.hosted import start_cell

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebook_paths()
LESSONS = [p for p in NOTEBOOKS if not is_appendix(p.stem)]


def load(path):
    return json.loads(path.read_text())


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def text(cell):
    return "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    for cell in code_cells(load(path)):
        assert cell["outputs"] == [] and cell["execution_count"] is None, f"{path.name} has outputs: clear them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_cell_has_a_unique_id(path):
    """nbformat 4.5 cells carry ids: a cell added by a script without one warns in every run."""
    ids = [cell.get("id") for cell in load(path)["cells"]]
    assert None not in ids, f"{path.name}: cell {ids.index(None)} has no id"
    assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_one_parameters_cell_first(path):
    cells = code_cells(load(path))
    tagged = [i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", [])]
    assert tagged == [0], f"{path.name}: exactly one parameters cell, the first code cell"
    assert 'BACKEND = "auto"' in text(cells[0]) and 'OUT_DIR = ""' in text(cells[0])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_kernelspec_python3(path):
    assert load(path)["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_teaching_shape(path):
    nb = load(path)
    intro = text(nb["cells"][0])
    cells = code_cells(nb)
    # the first cell after the parameters: the three-line start cell (series_tools.hosted), which checks
    # the kernel and the parameters (helpers.start does both) and opens the session; no search for the repository
    assert text(cells[1]).strip() == start_cell(path.stem), f"{path.name}: run `python -m series_tools.hosted`"
    assert "sys.path" not in json.dumps(nb) and "check_parameters(" not in json.dumps(nb)
    assert text(cells[-1]).strip() == "session.finish()", "the last cell releases the device"
    if is_appendix(path.stem):  # an appendix checks a lesson's numbers: it names the lesson it checks
        assert intro.startswith(f"# {path.stem[:2]}") and "](0" in intro, (
            f"{path.name}: title '# A<n> ...' and a link to its lesson"
        )
        return
    assert "**What you will learn:**" in intro and "**What it needs:**" in intro
    markdown = "\n".join(text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "## Summary" in markdown and "## Exercises" in markdown
    assert "**Predict first:**" in markdown, f"{path.name}: a lesson asks for a prediction before it measures"


def test_numbered_names_match_series_table():
    every_ipynb = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(every_ipynb) == sorted(NOTEBOOKS), "a notebook without the NN_ or A<n>_ prefix is not part of the series"
    assert [p.stem for p in NOTEBOOKS] == [info.stem for info in SERIES]
    assert all((p.stem[:2].isdigit() or is_appendix(p.stem)) and p.stem[2] == "_" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_each_exercise_has_a_strippable_solution(path):
    import re

    nb = load(path)
    markdown = "\n".join(text(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    exercises = markdown.split("## Exercises", 1)[1]
    listed = re.findall(r"^(\d+)\. ", exercises, flags=re.M)
    solutions = [c for c in code_cells(nb) if "solution" in c["metadata"].get("tags", [])]
    assert 2 <= len(listed) <= 4, f"{path.name}: 2 to 4 exercises"
    assert [re.match(r"# Exercise (\d+)", text(c)).group(1) for c in solutions] == listed, (
        f"{path.name}: one solution cell per exercise, in order, starting with '# Exercise N'"
    )
    headers = [c for c in nb["cells"] if c["cell_type"] == "markdown" and "solution" in c["metadata"].get("tags", [])]
    assert len(headers) == 1 and "### Solutions" in text(headers[0])
