"""Misuse that must end in a clear message, with earlier results left intact."""

import errno
import os

import pandas as pd
import pytest
import torch

from helpers import outputs
from helpers.backend import make_backend
from helpers.errors import CompileError, OutputDirError
from helpers.outputs import write_atomic
from lesson.profiling import judge_device_time
from lesson.rmsnorm import call_compiled, rmsnorm_naive

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_full_disk_is_a_clear_error_and_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "metrics.json"
    target.write_text("earlier result")

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", no_space)
    with pytest.raises(OutputDirError) as err:
        write_atomic(target, "new result")
    assert "No space left" in str(err.value) and "OUT_DIR" in str(err.value)
    assert target.read_text() == "earlier result"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]  # no half-written leftovers


def test_zero_device_column_on_cuda_says_why():
    table = pd.DataFrame({"name": ["aten::mul"], "self_device_us": [0.0]})
    captured, note = judge_device_time(make_backend("cuda", "test"), table, True, None)
    assert not captured and "device columns are all zero" in note and "CUPTI" in note


def test_compile_backend_failure_names_the_cause():
    def broken_backend(gm, example_inputs):
        raise RuntimeError("lowering of aten::rsqrt is not implemented")

    compiled = torch.compile(rmsnorm_naive, backend=broken_backend, fullgraph=True)
    with pytest.raises(CompileError) as err:
        call_compiled(compiled, torch.ones(2, 8), torch.ones(8), 1e-6)
    assert "the torch.compile backend failed: RuntimeError: lowering of aten::rsqrt" in str(err.value)


def tracked_files():
    import subprocess

    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [os.path.join(ROOT, f) for f in out.stdout.split()]


def test_no_instance_ids_or_credentials_in_committed_files():
    import re

    secret = re.compile(r"\b(i-[0-9a-f]{8,17}|AKIA[0-9A-Z]{16})\b|aws_secret_access_key" + r"\s*[=:]\s*\S{16,}")
    hits = []
    for path in tracked_files():
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        hits += [f"{os.path.relpath(path, ROOT)}: {m.group(0)}" for m in secret.finditer(text)]
    assert not hits, hits


def test_jupyterlab_binds_loopback_only():
    makefile = open(os.path.join(ROOT, "Makefile")).read()
    lab = [line for line in makefile.splitlines() if "jupyter lab" in line]
    assert lab and all("--ip 127.0.0.1" in line for line in lab)
    assert all("token=''" not in line and "--NotebookApp.token=" not in line for line in lab)
