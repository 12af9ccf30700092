"""What torch.compile did in this process: graphs compiled, the FX-graph cache's hits and misses,
and Dynamo's recompile log, captured instead of printed (notebook 07 and lesson.shapes read them);
and what Inductor generated, read down to the lines a learner needs (notebook 04).
"""

from __future__ import annotations

import logging
import re
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


def cold_call_origin(counts: dict[str, int]) -> str:
    """Where one cold call's compiled code came from, read from the counters it changed.

    Why: a cold call that loaded Inductor's on-disk cache costs far less than one that compiled
    from scratch, so its time (and any break-even count built on it) holds only for a machine
    whose cache is in the same state.

    Args:
        counts: what changed during the call: `compile_counters()` differences ("graphs",
            "cache_hits", "cache_misses"), and optionally "cache files added" and, on neuron,
            "NEFF cache files added" (files added under the NEFF cache directory).

    Returns:
        One line: compiled from scratch, loaded from Inductor's on-disk cache, compiled by neuronx-cc
        or served from the NEFF cache (neuron), or neither counted.
    """
    hits, misses, added = counts.get("cache_hits", 0), counts.get("cache_misses", 0), counts.get("cache files added", 0)
    said = f"(cache_hits {hits}, cache_misses {misses}, cache files added {added})"
    if misses or (added and not hits):
        return f"compiled from scratch: Inductor's on-disk cache did not hold this graph {said}"
    if hits and added:
        return f"found this graph in Inductor's FX-graph cache but wrote new files to its on-disk cache: part was built in this call {said}"
    if hits:
        return f"loaded the compiled code from Inductor's on-disk cache, compiling nothing from scratch {said}"
    if "NEFF cache files added" in counts:  # neuron: neuronx-cc writes its NEFFs to the NEFF cache
        neff = counts["NEFF cache files added"]
        where = (
            "compiled by neuronx-cc (new NEFF cache files)" if neff else "no new NEFF cache files: the NEFF came from the cache"
        )
        return f"{where} (NEFF cache files added {neff}; UNVERIFIED on a trn2: docs/NEURON_NOTES.md N14)"
    return f"no Inductor cache lookup counted: this backend compiles without Inductor's cache {said}"


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


@dataclass
class GeneratedKernel:
    """The first kernel of Inductor's generated code, read for a learner: its loops and statements
    in order, the tensors behind its pointers, and how often it loads the input.

    Why: the generated file is hundreds of lines of includes and wrappers; the lesson is in a few
    lines (which buffers the kernel writes, how many passes it makes over x). The whole file stays
    in the run folder."""

    names: list[str]  # every kernel the code compiles (`name = async_compile.cpp_pybinding(...)`)
    reads: list[str]  # in_ptrN of the first kernel
    writes: list[str]  # out_ptrN of the first kernel
    outline: list[str]  # its loops and statements, indented by loop depth (C++ only; Triton: statements only)
    pointers: list[tuple[str, str, tuple[str, ...], str]]  # (pointer, tensor, dims, what it is)
    x_pointer: str | None
    x_loads: int  # statements that load x
    reads_x_per_loop: bool  # each of two loads of x in its own loop, with an accumulator: two passes over x

    def report(self) -> list[str]:
        """The lines notebook 04 prints."""
        lines = [
            f"Inductor generated {len(self.names)} kernel(s): {', '.join(self.names)}",
            f"it reads {len(self.reads)} input buffer(s) ({', '.join(self.reads)}) and writes {len(self.writes)} "
            f"({', '.join(self.writes)}).",
            "its loops and statements, in order (int64 casts, bounds checks and accumulator set-up left out):",
            *(f"    {line}" for line in self.outline),
            "the tensors behind its pointers (the call passes them in the kernel's parameter order):",
        ]
        for pointer, tensor, dims, what in self.pointers:
            lines.append(
                f"    {pointer} is {tensor} ({' x '.join(dims) or 'shape not found'}): {what}"
                + (", read and written in place" if pointer.startswith("in_out") else "")
            )
        if self.x_loads:
            lines.append(
                f"x ({self.x_pointer}) is loaded by {self.x_loads} statement(s)"
                + (
                    ", each in its own loop over the row: x is loaded twice (sum of squares, then scale and "
                    "store; the second may hit the CPU's data cache, which the listing cannot show). Fusion removed the "
                    "full-size intermediates, not the second load."
                    if self.reads_x_per_loop
                    else "."
                )
            )
        return lines


_STATEMENT = r"\s*(auto )?tmp\w* = |\s*\w*out_ptr\d+\[.*\] = |.*\.store\(|.*tl\.store\("
_CPP_LOOP = r"for\(int64_t (\w+)=.*?; \1<static_cast<int64_t>\((\d+)L\); \1\+=static_cast<int64_t>\((\d+)L\)\)"


def _outline(body: str) -> list[str]:
    """The first kernel's loops (C++) and statements, in order, indented by loop depth."""
    outline, open_loops, depth = [], [], 0  # open_loops: [brace depth at the loop's `for`, whether its body opened]
    for line in body[: body.find("\n''')")].splitlines():  # the first kernel's source, up to the end of its string
        text = line.strip()
        loop = re.match(_CPP_LOOP, text)
        if loop:  # C++ (cpu); a Triton kernel's loops are Python and show as statements only
            outline.append("    " * len(open_loops) + f"for {loop[1]} in range(0, {loop[2]}, {loop[3]}):")
            open_loops.append([depth, False])
        elif re.match(_STATEMENT, line):
            text = re.sub(r"static_cast<int64_t>\(([^()]*)\)", r"\1", text).replace("at::vec::Vectorized<float>", "Vectorized")
            outline.append("    " * len(open_loops) + text)  # whole: a cut line would hide how it ends
        depth += text.count("{") - text.count("}")
        if open_loops and depth > open_loops[-1][0]:
            open_loops[-1][1] = True
        while open_loops and open_loops[-1][1] and depth <= open_loops[-1][0]:
            open_loops.pop()
    return outline


def read_generated_kernel(code: str, x_shape: tuple[int, ...], weight_shape: tuple[int, ...]) -> GeneratedKernel:
    """Read Inductor's generated code (`torch._inductor.utils.run_and_get_code`'s strings, joined)
    for an RMSNorm called as f(x, weight, eps): `x_shape` and `weight_shape` name its inputs."""
    names = re.findall(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", code, flags=re.M)
    body = code[code.find(names[0]) :] if names else code
    outline = _outline(body)
    # the buffers behind the pointers: `call()` passes the graph's tensors in the order of the kernel's parameters
    call_code = code[code.find("def call") :]
    pointers = list(dict.fromkeys(re.findall(r"\b(?:in_out|in|out)_ptr\d+\b", body)))  # first seen: the signature
    call = re.search(rf"{names[0]}(?:\.run)?\(([^)]*)\)", call_code) if names else None
    passed = [a.strip() for a in call.group(1).split(",")] if call else []
    shapes = {
        name: tuple(d.strip() for d in dims.split(",") if d.strip())
        for name, dims in re.findall(r"assert_size_stride\((\w+), \(([^)]*)\)", code)
        + re.findall(r"(\w+) = empty_strided\w*\(\(([^)]*)\)", code)
    }
    returned_match = re.search(r"return \(([^)]*)\)", call_code)
    returned = {a.strip() for a in returned_match.group(1).split(",")} if returned_match else set()
    x_dims, weight_dims = tuple(map(str, x_shape)), tuple(map(str, weight_shape))
    described = []
    for pointer, tensor in zip(pointers, passed):
        dims = shapes.get(tensor, ())
        if tensor in returned:
            what = "the output y: the call returns it"
        elif not tensor.startswith("buf"):
            what = {x_dims: "the input x", weight_dims: "the weight"}.get(dims, "an input")
        elif re.search(rf"{pointer}\[[^\]]*\] = .*tmp_acc", body):
            what = (
                "one value per row, never returned: the row's sum of x * x, accumulated in the first loop (tmp_acc0) "
                "and read back in the second to scale the row"
            )
        else:
            what = "a buffer Inductor allocated for the kernel, not returned"
        described.append((pointer, tensor, dims, what))
    x_pointer = next((p for p, t in zip(pointers, passed) if shapes.get(t) == x_dims), None)
    x_loads = [i for i, line in enumerate(outline) if x_pointer and re.search(rf"\b{x_pointer}\s*[+\[]", line)]
    own_loops = all(any(line.lstrip().startswith("for ") for line in outline[a:b]) for a, b in zip(x_loads, x_loads[1:]))
    return GeneratedKernel(
        names=names,
        reads=sorted(set(re.findall(r"\bin_ptr\d+", body))),
        writes=sorted(set(re.findall(r"\bout_ptr\d+", body))),
        outline=outline,
        pointers=described,
        x_pointer=x_pointer,
        x_loads=len(x_loads),
        reads_x_per_loop=len(x_loads) == 2 and own_loops and any("tmp_acc" in line for line in outline),
    )


def stream_summary(calls, specialised: tuple[str, ...] = ("static",)):
    """Per strategy, what serving a stream twice cost (notebook 07's side-by-side table).

    Args:
        calls: a DataFrame, one row per call (lesson.shapes.run_stream's rows) with a `strategy`
            and a `pass` column (1: the first pass, where compiles happen; 2: the same stream again).
        specialised: the strategies whose graphs are specialised to one exact shape: there a length
            new to the stream either compiles a graph or, past the recompile limit, runs eagerly.

    Returns:
        A DataFrame indexed by strategy, in the order the strategies first appear: `compiles` (calls
        of pass 1 that compiled a graph), `compile_s` (their wall time), `eager_fallbacks` (for a
        specialised strategy, the new lengths that compiled nothing: they ran eagerly; else 0),
        `pass1_s`, `pass2_s`, `us_per_token` (pass 2's total time over its total tokens: the
        steady state), `cache_misses` and `cache_hits` (pass 1's FX-graph cache lookups).
    """
    import pandas as pd

    rows = {}
    for name in dict.fromkeys(calls["strategy"]):
        p1 = calls[(calls["strategy"] == name) & (calls["pass"] == 1)]
        p2 = calls[(calls["strategy"] == name) & (calls["pass"] == 2)]
        new_length = ~p1["tokens"].duplicated()
        rows[name] = {
            "compiles": int(p1["compiled"].sum()),
            "compile_s": float(p1.loc[p1["compiled"], "seconds"].sum()),
            "eager_fallbacks": int((new_length & ~p1["compiled"]).sum()) if name in specialised else 0,
            "pass1_s": float(p1["seconds"].sum()),
            "pass2_s": float(p2["seconds"].sum()),
            "us_per_token": float(p2["seconds"].sum() / p2["tokens"].sum() * 1e6) if len(p2) else float("nan"),
            "cache_misses": int(p1["cache_misses"].sum()),
            "cache_hits": int(p1["cache_hits"].sum()),
        }
    counts = {"compiles": int, "eager_fallbacks": int, "cache_misses": int, "cache_hits": int}
    return pd.DataFrame(rows).T.astype({**counts, **dict.fromkeys(("compile_s", "pass1_s", "pass2_s", "us_per_token"), float)})
