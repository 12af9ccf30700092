import os

import pytest

from helpers.environment import configure_allocator

configure_allocator()  # the notebooks' host-memory settings, before any test imports torch

# Under pytest-xdist (`pytest -n 2`) every worker, and every notebook kernel it starts, would run
# torch with one OpenMP thread per core: on a 2-core machine two workers then oversubscribe the
# cores and spinning threads slow some timing samples down tens of times. One thread per worker
# keeps parallel runs from disturbing each other's measurements.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture
def cpu_backend():
    from helpers.backend import select_backend

    return select_backend("cpu")


def fake_tool(folder, name: str, prints: str):
    """An executable `folder/name` (a FAKE of a Neuron command-line tool) that prints `prints`;
    `folder` is made if it is missing. Returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text(f"#!/bin/sh\necho '{prints}'\n")
    tool.chmod(0o755)
    return tool
