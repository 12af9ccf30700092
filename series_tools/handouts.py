"""HTML handouts of executed notebooks, each page headed by where its numbers were measured.

Two per notebook: `<name>.html` for the instructor (everything, solutions included) and
`<name>.student.html` for learners, whose solution cells are replaced by the empty answer cells
of the student copies (series_tools.student), and whose cells under a "Predict first" prompt have
no outputs: handing it out gives no answer away.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

HEADER_KEYS = (
    "backend",
    "device_name",
    "device_count",
    "torch",
    "torch_neuronx",
    "neuronx_cc",
    "instance_type",
    "git_commit",
    "date_utc",
)


def environment_header(env: dict) -> str:
    cells = " · ".join(f"**{k}**: {env.get(k) if env.get(k) is not None else '—'}" for k in HEADER_KEYS)
    return f"> Measured on this run: {cells}"


@lru_cache(maxsize=1)
def _exporter():  # one per process: a new HTMLExporter loads its templates again (0.3 s a page against 0.2 s reused)
    from nbconvert import HTMLExporter

    return HTMLExporter()


def render_handout(executed: Path) -> Path:
    """Write `<name>.html` (instructor) and `<name>.student.html` (no solutions) beside the
    executed notebook, each with the run's environment on top; return the instructor's."""
    import nbformat

    from helpers.outputs import write_atomic
    from series_tools.student import to_student

    env_path = executed.parent / "environment.json"
    env = json.loads(env_path.read_text()) if env_path.exists() else {}
    nb = nbformat.read(executed, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(environment_header(env)))
    out = executed.with_suffix(".html")
    for target, node in ((out, nb), (executed.with_suffix(".student.html"), to_student(nb))):
        body, _ = _exporter().from_notebook_node(node)
        write_atomic(target, body)  # whole or not at all: a full disk leaves no cut-off handout
    return out
