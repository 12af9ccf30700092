"""The lesson-first limits (docs/WRITING_NOTEBOOKS.md) on the stored notebooks, and the measure
itself against the shared reading-time tool where it is present."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from helpers.series import REPO_ROOT, is_appendix, notebook_paths
from series_tools.lesson_limits import measure, reading_problems, shape_problems

LESSONS = [p for p in notebook_paths() if not is_appendix(p.stem)]
SHARED_TOOL = REPO_ROOT.parent / "shared" / "tools" / "reading_time.py"


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_lesson_notebooks_cells_are_short_and_print_few_sentences(path):
    assert shape_problems(path.stem, measure(json.loads(path.read_text()))) == []


def test_the_limits_fail_a_long_notebook():
    cell = {"cell_type": "code", "source": "\n".join(f"print('line {i}')" for i in range(40)), "outputs": []}
    measured = measure({"cells": [cell]})
    problems = shape_problems("02_naive_rmsnorm", measured)
    assert any("over 30 lines" in p for p in problems) and any("build sentences" in p for p in problems)
    assert shape_problems("A2_checks_naive_and_fused", measured) == []  # an appendix has no limits
    words = {"cell_type": "markdown", "source": "word " * 5000}
    assert reading_problems("02_naive_rmsnorm", measure({"cells": [words]}))
    assert (
        reading_problems("07_shapes_and_recompiles", measure({"cells": [{"cell_type": "markdown", "source": "w " * 5000}]})) == []
    )


def test_the_measure_agrees_with_the_shared_reading_time_tool():
    if not SHARED_TOOL.exists():
        pytest.skip(f"{SHARED_TOOL} is not beside this checkout (it is on the project's machines)")
    spec = importlib.util.spec_from_file_location("reading_time", SHARED_TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for path in notebook_paths():
        ours, theirs = measure(json.loads(path.read_text())), tool.measure(Path(path))
        assert (
            round(ours["minutes"], 1) == theirs["minutes"] and round(ours["sentence_share"], 2) == theirs["sentence_code_share"]
        )
        assert sum(n > 30 for n in ours["path_cells"]) == theirs["path_cells_over_30"]
