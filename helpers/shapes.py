"""New shapes and recompiles (notebook 07): the request stream, the strategies that serve it, the
per-call measurement, and a command that serves the same stream again in a fresh process.

`make_strategies` and `bucketed_call` are written in notebook 07, in a cell marked
`# @save helpers/shapes.py`: that cell is their source (tests/test_one_source.py). The rest is
plumbing: which calls compiled (Dynamo's graph counter), how long each took, what the caches
did (Inductor's FX-graph cache counters), and the compile logs captured instead of printed.

    python -m helpers.shapes --lengths 5 17 33 --buckets 64 --hidden 256 --out stream.json

runs every strategy over the lengths in this new process and writes what it measured; notebook
07 uses it to show what an on-disk cache saves a second process.
"""
from __future__ import annotations

import argparse
import os
import json
import logging
import random
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from .backend import Backend
from .errors import ParameterError


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
        raise ParameterError(f"request {i} has length {n!r}: every request needs at least one token",
                             "draw lengths >= 1 (MAX_TOKENS >= 1), or drop the empty requests")
    if not buckets:
        raise ParameterError("BUCKETS is empty: bucketing needs at least one size to pad to",
                             "give sizes, e.g. `-p BUCKETS '[64, 128, 256, 512]'`")
    if any(not isinstance(b, int) or b < 1 for b in buckets):
        raise ParameterError(f"BUCKETS must be positive integers, got {buckets}", "e.g. `-p BUCKETS '[64, 128, 256, 512]'`")
    if max(buckets) < max(lengths):
        raise ParameterError(
            f"the largest bucket ({max(buckets)}) is smaller than the longest request ({max(lengths)} tokens): "
            "that request has no bucket to be padded to",
            f"add a bucket >= {max(lengths)} to BUCKETS, or lower MAX_TOKENS to {max(buckets)}")


# ------------------------------------------------------------------ the strategies (source: notebook 07)
def make_strategies(fn, compiler: str, buckets: list[int], dynamic_ok: bool = True) -> dict:
    """Three ways to serve a stream of shapes with one compiled function."""
    static = torch.compile(fn, backend=compiler, dynamic=False)      # one graph per distinct shape
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
def compile_counters() -> dict[str, int]:
    """Graphs Dynamo compiled, and Inductor's FX-graph cache hits and misses, so far in this process."""
    from torch._dynamo.utils import counters

    return {"graphs": int(counters["stats"]["unique_graphs"]),
            "cache_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
            "cache_misses": int(counters["inductor"]["fxgraph_cache_miss"])}


def recompile_limit_name() -> str:
    """`recompile_limit` in this torch, `cache_size_limit` in older ones."""
    import torch._dynamo.config as config

    return "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"


@dataclass
class CompileLog:
    """Dynamo's log records of one stream: recompile reasons and recompile-limit warnings."""

    records: list[str] = field(default_factory=list)

    @property
    def recompile_reasons(self) -> list[str]:
        return [r for r in self.records if r.startswith("Recompiling function")]

    @property
    def limit_warnings(self) -> list[str]:
        return [r for r in self.records if "hit config." in r and "_limit" in r]


@contextmanager
def captured_compile_logs() -> Iterator[CompileLog]:
    """Turn on Dynamo's recompile log and keep its records here instead of printing them.

    torch writes them through its own handlers on the "torch" loggers; those are set aside for
    the duration, so the notebook shows the records it chooses, once."""
    log = CompileLog()

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            log.records.append(record.getMessage())

    torch._logging.set_logs(recompiles=True)
    loggers = [logging.getLogger(name) for name in ("torch", "torch._dynamo", "torch._inductor")]
    saved = [(lg, lg.handlers[:], lg.propagate) for lg in loggers]
    keep = Keep()
    try:
        for lg in loggers:
            lg.handlers = [keep] if lg.name == "torch" else []
            lg.propagate = lg.name != "torch"
        yield log
    finally:
        for lg, handlers, propagate in saved:
            lg.handlers, lg.propagate = handlers, propagate
        torch._logging.set_logs()


def run_stream(call: Callable[[torch.Tensor], torch.Tensor], lengths: list[int], hidden: int, dtype: torch.dtype,
               backend: Backend, seed: int = 0) -> list[dict[str, Any]]:
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
        rows.append({"request": i, "tokens": tokens, "seconds": seconds,
                     "compiled": after["graphs"] > before["graphs"],
                     "cache_hits": after["cache_hits"] - before["cache_hits"],
                     "cache_misses": after["cache_misses"] - before["cache_misses"]})
    return rows


# ------------------------------------------------------------------ the same stream in a fresh process
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.shapes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--buckets", type=int, nargs="+", required=True)
    parser.add_argument("--hidden", type=int, required=True)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--recompile-limit", type=int, default=8)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    import torch._dynamo

    from .backend import select_backend
    from .rmsnorm import rmsnorm_naive

    from analysis.contention import spare_cpu_threads

    # the kernel's thread policy (helpers.start): Inductor's generated code, and so its cache key,
    # depends on the thread count, and a process with other threads misses every cached graph
    torch.set_num_threads(spare_cpu_threads(torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")))
    backend = select_backend(args.backend)
    dtype = getattr(torch, args.dtype)
    weight = torch.ones(args.hidden, device=backend.device, dtype=dtype)
    setattr(torch._dynamo.config, recompile_limit_name(), args.recompile_limit)
    result = {}
    for name in make_strategies(rmsnorm_naive, backend.compile_backend, args.buckets, backend.name != "neuron"):
        torch._dynamo.reset()
        fn = make_strategies(rmsnorm_naive, backend.compile_backend, args.buckets, backend.name != "neuron")[name]
        rows = run_stream(lambda x, fn=fn: fn(x, weight, 1e-6), args.lengths, args.hidden, dtype, backend)
        result[name] = {"compiles": sum(r["compiled"] for r in rows),
                        "compile_s": sum(r["seconds"] for r in rows if r["compiled"]),
                        "cache_hits": sum(r["cache_hits"] for r in rows),
                        "cache_misses": sum(r["cache_misses"] for r in rows)}
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
