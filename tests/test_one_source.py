"""One source for each function the lesson writes: the notebook cell marked `# @save <module>`.

Where a helper must hold the same function (later notebooks, the sweep tool, the tests import
it), the helper's copy must be the notebook cell's, character for character, as in d2l's
`#@save` convention. Nothing is printed with inspect.getsource to stand in for a cell.
"""

import ast
import importlib
import inspect
import json
import re

import pytest

from helpers.series import notebook_paths

SAVE_MARK = re.compile(r"^# @save (?P<module>[\w/]+)\.py\s*$")


def saved_functions(notebook):
    """(module, function name, source) for every function defined in a `# @save` cell."""
    found = []
    for cell in json.loads(notebook.read_text())["cells"]:
        source = "".join(cell["source"])
        first = source.splitlines()[0] if source else ""
        if cell["cell_type"] != "code" or not (m := SAVE_MARK.match(first)):
            continue
        tree = ast.parse(source)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found.append((m["module"].replace("/", "."), node.name, ast.get_source_segment(source, node)))
    return found


SAVED = [(nb.stem, *f) for nb in notebook_paths() for f in saved_functions(nb)]


def test_the_lesson_functions_are_written_in_notebooks():
    names = {(module, name) for _, module, name, _ in SAVED}
    assert {("lesson.rmsnorm", "rmsnorm_naive"), ("lesson.rmsnorm", "rmsnorm_torch")} <= names


@pytest.mark.parametrize("notebook, module, name, source", SAVED, ids=[f"{s[0]}:{s[2]}" for s in SAVED])
def test_helper_copy_matches_the_notebook_cell(notebook, module, name, source):
    helper = getattr(importlib.import_module(module), name)
    assert inspect.getsource(helper).rstrip() == source.rstrip(), (
        f"{module}.{name} differs from its source in notebooks/{notebook}.ipynb: "
        "edit the notebook cell and copy the function to the module (or the reverse), so the two agree"
    )


def test_no_notebook_prints_a_function_instead_of_writing_it():
    for nb in notebook_paths():
        assert "inspect.getsource" not in nb.read_text(), f"{nb.name} shows a function with inspect.getsource"
