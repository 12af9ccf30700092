"""The HBM bytes the recorded attention kernels must move, from their source, to set against a profile.

`data/recorded-neuron/kernels/` holds the two NKI kernels profiled there: both read Q, K and V
(`(d_head, seqlen)`, input dtype) and write the output (`(seqlen, d_head)`, input dtype); the
unfused `baseline` also stores the fp32 scores `Q^T K` (`n_tiles_q x 128 x seqlen`, i.e.
`seqlen x seqlen`) to HBM in phase 1, loads them in phase 2, stores the softmax weights over them,
and loads those in phase 3. The arithmetic is here once, so the notebook and the tests agree.

Facade:
- `recorded_case(folder) -> dict`: kernel, dtype and sequence length from a folder name such as
  `baseline_bf16_s512`;
- `attention_hbm_traffic(kernel, d_head, seqlen, dtype) -> DataFrame`: one row per tensor movement
  (tensor, direction, bytes) that the kernel's source performs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

# The recorded trn2 profiles and the kernels' source, shipped with the repository.
RECORDED_NEURON_DIR = Path(__file__).resolve().parent.parent / "data" / "recorded-neuron"

DTYPE_BYTES = {"bf16": 2, "fp32": 4}
KERNELS = ("baseline", "fused")
SCORE_BYTES = 4  # both kernels keep the scores in fp32 (`dtype=nl.float32` in kernels/*.py)


def recorded_case(folder: str) -> dict:
    """What one recorded profile holds, from its folder's name.

    Arguments: folder: `<kernel>_<dtype>_s<seqlen>`, e.g. "fused_fp32_s512".
    Returns: {"kernel": "fused", "dtype": "fp32", "seqlen": 512}.
    Raises: ValueError naming the expected form.
    """
    match = re.fullmatch(r"(baseline|fused)_(bf16|fp32)_s(\d+)", folder)
    if not match:
        raise ValueError(f"{folder!r} is not a recorded case name: expected <baseline|fused>_<bf16|fp32>_s<seqlen>")
    return {"kernel": match[1], "dtype": match[2], "seqlen": int(match[3])}


def attention_hbm_traffic(kernel: str, d_head: int, seqlen: int, dtype: str) -> pd.DataFrame:
    """The HBM reads and writes the kernel's source performs, tensor by tensor.

    Arguments: kernel: "baseline" or "fused"; d_head, seqlen: the shape; dtype: "bf16" or "fp32".
    Returns: a DataFrame with columns tensor, direction ("read" or "write") and bytes. Data the
        compiler adds (the NEFF's own weights) is not in the source and not here.
    """
    if kernel not in KERNELS or dtype not in DTYPE_BYTES:
        raise ValueError(f"kernel must be one of {KERNELS} and dtype one of {tuple(DTYPE_BYTES)}, got {kernel!r}, {dtype!r}")
    element = DTYPE_BYTES[dtype]
    io = d_head * seqlen * element
    rows = [("Q", "read", io), ("K", "read", io), ("V", "read", io), ("output", "write", io)]
    if kernel == "baseline":
        scores = seqlen * seqlen * SCORE_BYTES
        rows += [
            ("scores S, phase 1 store", "write", scores),
            ("scores S, phase 2 load", "read", scores),
            ("weights P, phase 2 store (over S)", "write", scores),
            ("weights P, phase 3 load", "read", scores),
        ]
    return pd.DataFrame(rows, columns=["tensor", "direction", "bytes"])
