"""A committed reference run (docs/reference-runs/) never drifts from the notebooks silently.

Each reference run's executed notebooks must hold the current notebooks' code cells (papermill's
injected-parameters cell aside); otherwise the suite fails with the command that refreshes it.
The comparison itself is checked on SYNTHETIC notebooks, so it is tested even while no
reference run is committed.
"""

from pathlib import Path

import nbformat
import pytest

from series_tools.publish import REFERENCE_RUNS_DIR, REFRESH_COMMAND, reference_runs, stale_notebooks

COMMITTED = reference_runs()


@pytest.mark.parametrize("reference", COMMITTED or [None], ids=[p.name for p in COMMITTED] or ["none committed"])
def test_reference_run_has_the_current_notebooks_code(reference):
    if reference is None:
        pytest.skip(
            f"no reference run is committed under {REFERENCE_RUNS_DIR.relative_to(REFERENCE_RUNS_DIR.parents[1])}/ "
            f"(`{REFRESH_COMMAND}` makes one): nothing to compare"
        )
    problems = stale_notebooks(reference)
    assert not problems, (
        f"reference run {reference.name} is stale: "
        + "; ".join(problems)
        + f". Refresh it: `{REFRESH_COMMAND}` (then commit docs/reference-runs/)"
    )


def write_notebook(path: Path, codes: list[str], injected: str | None = None, outputs: bool = False) -> None:
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_markdown_cell("# A synthetic notebook")]
    for i, code in enumerate(codes):
        cell = nbformat.v4.new_code_cell(code)
        if outputs:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"output {i}\n")]
            cell.execution_count = i + 1
        cells.append(cell)
        if i == 0 and injected is not None:
            extra = nbformat.v4.new_code_cell(injected)
            extra.metadata["tags"] = ["injected-parameters"]
            cells.append(extra)
    nb.cells = cells
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


CODES = ['BACKEND = "auto"\nTOKENS = 8', "import helpers", "print(TOKENS * 2)"]


def test_same_code_with_outputs_and_other_parameter_values_is_current(tmp_path):
    write_notebook(tmp_path / "notebooks" / "00_a.ipynb", CODES)
    write_notebook(tmp_path / "ref" / "00_a.ipynb", CODES, injected='BACKEND = "cpu"\nTOKENS = 4096', outputs=True)
    assert stale_notebooks(tmp_path / "ref", tmp_path / "notebooks") == []


def test_a_changed_code_cell_is_stale_and_named(tmp_path):
    write_notebook(tmp_path / "notebooks" / "00_a.ipynb", CODES[:2] + ["print(TOKENS * 3)"])
    write_notebook(tmp_path / "ref" / "00_a.ipynb", CODES, injected='BACKEND = "cpu"', outputs=True)
    assert stale_notebooks(tmp_path / "ref", tmp_path / "notebooks") == [
        "00_a.ipynb: code cell 3 (of 3 now, 3 then) differs from notebooks/00_a.ipynb"
    ]


def test_an_added_cell_and_added_or_removed_notebooks_are_stale(tmp_path):
    write_notebook(tmp_path / "notebooks" / "00_a.ipynb", CODES + ["print('new')"])
    write_notebook(tmp_path / "notebooks" / "01_new.ipynb", CODES)
    write_notebook(tmp_path / "ref" / "00_a.ipynb", CODES)
    write_notebook(tmp_path / "ref" / "02_gone.ipynb", CODES)
    problems = stale_notebooks(tmp_path / "ref", tmp_path / "notebooks")
    assert problems == [
        "01_new.ipynb: not in ref (a notebook added since it ran)",
        "02_gone.ipynb: in ref but no longer in notebooks/",
        "00_a.ipynb: code cell 4 (of 4 now, 3 then) differs from notebooks/00_a.ipynb",
    ]
