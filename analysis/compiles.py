"""What torch.compile did in this process: graphs compiled, the FX-graph cache's hits and misses,
and Dynamo's recompile log, captured instead of printed (notebook 07 and lesson.shapes read them).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import torch


def compile_counters() -> dict[str, int]:
    """Graphs Dynamo compiled, and Inductor's FX-graph cache hits and misses, so far in this process."""
    from torch._dynamo.utils import counters

    return {
        "graphs": int(counters["stats"]["unique_graphs"]),
        "cache_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
        "cache_misses": int(counters["inductor"]["fxgraph_cache_miss"]),
    }


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
