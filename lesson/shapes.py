"""New shapes and recompiles (notebook 07): the request stream, the strategies that serve it, and
the per-call measurement.

`make_strategies` and `bucketed_call` are written in notebook 07, in a cell marked
`# @save lesson/shapes.py`: that cell is their source (tests/test_one_source.py). `run_stream`
serves a stream and records per call whether it compiled, what the caches did
(analysis.compiles reads Dynamo's and Inductor's counters) and how long it took;
lesson.shape_worker serves the same stream again in a fresh process.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable

import torch

from analysis.compiles import compile_counters
from helpers.backend import Backend
from helpers.errors import ParameterError


# ------------------------------------------------------------------ the stream and its checks
def request_lengths(requests: int, max_tokens: int, seed: int) -> list[int]:
    """Token counts of `requests` requests, drawn log-uniformly from 1..max_tokens with a fixed
    seed: many short requests and a few long ones, as a serving queue sees them."""
    rng = random.Random(seed)
    return [min(max_tokens, max(1, round(max_tokens ** rng.random()))) for _ in range(requests)]


def check_stream(lengths: list[int], buckets: list[int]) -> None:
    """Refuse a stream the strategies cannot serve, naming the fix."""
    bad = [(i, n) for i, n in enumerate(lengths) if not isinstance(n, int) or n < 1]
    if bad:
        i, n = bad[0]
        raise ParameterError(
            f"request {i} has length {n!r}: every request needs at least one token",
            "draw lengths >= 1 (MAX_TOKENS >= 1), or drop the empty requests",
        )
    if not buckets:
        raise ParameterError(
            "BUCKETS is empty: bucketing needs at least one size to pad to", "give sizes, e.g. `-p BUCKETS '[64, 128, 256, 512]'`"
        )
    if any(not isinstance(b, int) or b < 1 for b in buckets):
        raise ParameterError(f"BUCKETS must be positive integers, got {buckets}", "e.g. `-p BUCKETS '[64, 128, 256, 512]'`")
    if max(buckets) < max(lengths):
        raise ParameterError(
            f"the largest bucket ({max(buckets)}) is smaller than the longest request ({max(lengths)} tokens): "
            "that request has no bucket to be padded to",
            f"add a bucket >= {max(lengths)} to BUCKETS, or lower MAX_TOKENS to {max(buckets)}",
        )


# ------------------------------------------------------------------ the strategies (source: notebook 07)
def make_strategies(fn, compiler: str, buckets: list[int], dynamic_ok: bool = True) -> dict:
    """Three ways to serve a stream of shapes with one compiled function."""
    static = torch.compile(fn, backend=compiler, dynamic=False)  # one graph per distinct shape
    per_bucket = torch.compile(fn, backend=compiler, dynamic=False)  # one graph per bucket size used
    strategies = {"static": static}
    if dynamic_ok:  # Neuron rejects dynamic=True (docs/NEURON_NOTES.md N26)
        strategies["dynamic"] = torch.compile(fn, backend=compiler, dynamic=True)  # tokens as a symbol
    strategies["bucketed"] = lambda x, w, eps: bucketed_call(per_bucket, x, w, eps, buckets)
    return strategies


def bucketed_call(compiled, x: torch.Tensor, weight: torch.Tensor, eps: float, buckets: list[int]) -> torch.Tensor:
    """Pad x's rows up to the smallest bucket that holds them, run, and drop the padded rows.
    RMSNorm normalises each row on its own, so zero rows change nothing in the others."""
    tokens = x.shape[0]
    size = min(b for b in buckets if b >= tokens)
    padded = torch.nn.functional.pad(x, (0, 0, 0, size - tokens))
    return compiled(padded, weight, eps)[:tokens]


# ------------------------------------------------------------------ measuring a stream
def run_stream(
    call: Callable[[torch.Tensor], torch.Tensor],
    lengths: list[int],
    hidden: int,
    dtype: torch.dtype,
    backend: Backend,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Serve `lengths` one request at a time: per call its tokens, whether it compiled a graph,
    the cache hits and misses it caused, and its synchronized wall time."""
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for i, tokens in enumerate(lengths):
        x = torch.randn(tokens, hidden, generator=gen).to(backend.device, dtype)
        before = compile_counters()
        backend.synchronize()
        start = time.perf_counter()
        with torch.no_grad():
            call(x)
        backend.synchronize()
        seconds = time.perf_counter() - start
        after = compile_counters()
        rows.append(
            {
                "request": i,
                "tokens": tokens,
                "seconds": seconds,
                "compiled": after["graphs"] > before["graphs"],
                "cache_hits": after["cache_hits"] - before["cache_hits"],
                "cache_misses": after["cache_misses"] - before["cache_misses"],
            }
        )
    return rows
