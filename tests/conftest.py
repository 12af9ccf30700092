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


@pytest.fixture(scope="session")
def naive_cpu_profile(tmp_path_factory):
    """The naive RMSNorm profiled on cpu (64x512, 3 recorded steps, memory recorded), once for every
    test module that reads a real trace of it: namespace with x, w and the loaded `trace`."""
    from types import SimpleNamespace

    import torch

    from analysis.traces import load_trace
    from helpers.backend import select_backend
    from lesson.profiling import profile_steps
    from lesson.rmsnorm import rmsnorm_naive

    x, w = torch.randn(64, 512), torch.ones(512)
    result = profile_steps(
        lambda: rmsnorm_naive(x, w),
        select_backend("cpu"),
        tmp_path_factory.mktemp("naive_cpu_profile"),
        label="naive",
        wait=0,
        warmup=1,
        active=3,
        profile_memory=True,
    )
    return SimpleNamespace(x=x, w=w, trace=load_trace(result.trace_path))


def fake_tool(folder, name: str, prints: str):
    """An executable `folder/name` (a FAKE of a Neuron command-line tool) that prints `prints`;
    `folder` is made if it is missing. Returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text(f"#!/bin/sh\necho '{prints}'\n")
    tool.chmod(0o755)
    return tool
