"""HTML handouts of executed notebooks, each page headed by where its numbers were measured."""
from __future__ import annotations

import json
from pathlib import Path

HEADER_KEYS = ("backend", "device_name", "device_count", "torch", "torch_neuronx", "neuronx_cc",
               "instance_type", "git_commit", "date_utc")


def environment_header(env: dict) -> str:
    cells = " · ".join(f"**{k}**: {env.get(k) if env.get(k) is not None else '—'}" for k in HEADER_KEYS)
    return f"> Measured on this run: {cells}"


def render_handout(executed: Path) -> Path:
    """Write `<executed>.html` beside the executed notebook, with the run's environment on top."""
    import nbformat
    from nbconvert import HTMLExporter

    env_path = executed.parent / "environment.json"
    env = json.loads(env_path.read_text()) if env_path.exists() else {}
    nb = nbformat.read(executed, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(environment_header(env)))
    body, _ = HTMLExporter().from_notebook_node(nb)
    out = executed.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out
