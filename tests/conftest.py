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
