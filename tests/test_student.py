"""Student copies: solutions out, inert answer cells in, nothing of the answer left behind."""
import json

import nbformat

from series_tools.student import main, student_cell_source, to_student


def make_nb():
    nb = nbformat.v4.new_notebook()
    head = nbformat.v4.new_markdown_cell("### Solutions", metadata={"tags": ["solution"]})
    sol = nbformat.v4.new_code_cell("# Exercise 2: the answer is 42 because of X\nprint(41 + 1)",
                                    metadata={"tags": ["solution"]})
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), head, sol, nbformat.v4.new_code_cell("session.finish()")]
    return nb


def test_solutions_are_replaced_by_inert_stubs():
    out = to_student(make_nb())
    sources = [c.source for c in out.cells]
    assert sources[0] == "x = 1" and sources[-1] == "session.finish()"
    assert "### Your answers" in sources[1]
    assert sources[2].startswith("# Exercise 2: your answer here")
    assert "42" not in "".join(sources) and "print(41" not in "".join(sources)
    assert all(line.startswith("#") for line in sources[2].splitlines())  # runs as a no-op
    assert out.cells[2].metadata["tags"] == ["exercise"]


def test_stub_without_exercise_number():
    assert student_cell_source("print(1)").startswith("# Exercise: your answer here")


def test_command_writes_every_notebook(tmp_path, capsys):
    assert main(["--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.glob("*.ipynb"))
    assert written and written[0].startswith("00_")
    for path in tmp_path.glob("*.ipynb"):
        nb = json.loads(path.read_text())
        assert not any("solution" in c["metadata"].get("tags", []) for c in nb["cells"])
