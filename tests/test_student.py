"""Student copies: solutions out, inert answer cells in, nothing of the answer left behind."""

import json
import re

import nbformat

from series_tools.student import is_prompt, main, student_cell_source, to_student


def make_nb():
    nb = nbformat.v4.new_notebook()
    head = nbformat.v4.new_markdown_cell("### Solutions", metadata={"tags": ["solution"]})
    sol = nbformat.v4.new_code_cell("# Exercise 2: the answer is 42 because of X\nprint(41 + 1)", metadata={"tags": ["solution"]})
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


def test_no_output_under_a_predict_prompt_or_in_exercise_cells():
    """The learners' handout is made from an executed notebook: the answer to a prediction must not
    be printed right under it."""
    nb = nbformat.v4.new_notebook()
    answered = nbformat.v4.new_code_cell(
        "print(7)", execution_count=3, outputs=[nbformat.v4.new_output("stream", text="7 ops\n")]
    )
    later = nbformat.v4.new_code_cell("print(8)", outputs=[nbformat.v4.new_output("stream", text="8\n")])
    nb.cells = [
        nbformat.v4.new_markdown_cell("## Ops\n**Predict first**: how many ops?"),
        answered,
        nbformat.v4.new_markdown_cell("The table above counts them."),
        nbformat.v4.new_code_cell("print(7)", outputs=[nbformat.v4.new_output("stream", text="7\n")]),
        nbformat.v4.new_markdown_cell("## Next section"),
        later,
        nbformat.v4.new_markdown_cell("### Solutions", metadata={"tags": ["solution"]}),
        nbformat.v4.new_code_cell(
            "# Exercise 1: 42\nprint(42)",
            metadata={"tags": ["solution"]},
            outputs=[nbformat.v4.new_output("stream", text="42\n")],
        ),
    ]
    out = to_student(nb)
    assert out.cells[1].outputs == [] and out.cells[1].execution_count is None
    assert out.cells[3].outputs == []  # still under the prompt: no heading since
    assert out.cells[5].outputs  # a new section: outputs kept
    assert all(not c.get("outputs") for c in out.cells if "exercise" in c.metadata.get("tags", []))
    assert "print(42)" not in json.dumps(out) and not any("42\n" in str(c.get("outputs")) for c in out.cells)


def test_every_prompt_of_the_series_is_cleared_in_an_executed_copy():
    """Every "Predict first" prompt of the real notebooks is followed by a code cell, so clearing has something to do."""
    from helpers.series import notebook_paths

    prompts = 0
    for path in notebook_paths():
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown" and re.search(r"\*\*[^*]*predict", cell.source, re.IGNORECASE):
                assert is_prompt(cell.source), (
                    f"{path.name}: a prediction prompt the handout would not clear: {cell.source[:80]!r}"
                )
                prompts += 1
                assert any(c.cell_type == "code" for c in nb.cells[i + 1 : i + 4]), (
                    f"{path.name}: a prompt with no cell to answer it"
                )
                for c in nb.cells:
                    if c.cell_type == "code":
                        c.outputs = [nbformat.v4.new_output("stream", text="answer\n")]
                out = to_student(nb)
                assert all(not c.outputs for c in out.cells[i + 1 : i + 2] if c.cell_type == "code")
    assert prompts >= 5


def test_the_injected_parameters_cell_is_not_in_the_handout():
    """08's handout showed papermill's cell: this machine's OUT_DIR and a forced BACKEND."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('BACKEND = "auto"', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell('BACKEND = "cpu"\nOUT_DIR = "/work/main/runs/x"', metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("print(BACKEND)"),
    ]
    sources = [c.source for c in to_student(nb).cells]
    assert sources == ['BACKEND = "auto"', "print(BACKEND)"]
