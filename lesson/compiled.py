"""Notebook 04's reading of Inductor's generated kernel beside the measured allocations, and its
break-even.

Why: the lesson cell should show the allocation table, not the arithmetic that turns the listing's
buffers into a ratio.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from analysis.compiles import cold_call_origin
from analysis.floor import SLOW_ROUND, slow_rounds
from analysis.verdicts import Verdict, estimate, judge_ratio, withheld
from helpers.metrics import METRICS_FILE, read_metrics

if TYPE_CHECKING:
    import torch

    from analysis.compiles import GeneratedKernel


def written_over_input(kernel: GeneratedKernel | None, x: torch.Tensor) -> float:
    """The elements the generated kernel writes (its `out_ptr` buffers) over the input's elements.

    Why: set beside the measured `alloc_over_input`, it shows that a compiled call allocates
    what its kernel writes and nothing more (no full-size intermediate).

    Args:
        kernel: `analysis.read_generated_kernel(...)`'s result, or None where the backend has no
            Inductor listing.
        x: the input the kernel was compiled for.

    Returns:
        The ratio; NaN where there is no listing or it writes no buffer.
    """
    pointers = kernel.pointers if kernel is not None else []
    written = sum(math.prod(int(d) for d in dims) for pointer, _, dims, _ in pointers if pointer.startswith("out_ptr"))
    return written / x.numel() if written else math.nan


def _duration(seconds: float) -> str:
    """Seconds as the machine line prints them, so one call reads the same in both lines."""
    return f"{seconds:.1f} s" if seconds >= 1 else f"{seconds * 1e3:.0f} ms"


# why break_evens and 04's exercise 2 withhold what they would draw from a busy cold call (ColdCall.busy)
# 04 on neuron, TorchNeuron deletes each graph's compile artifacts unless told before torch loads (N43);
# the NEFF itself stays in the NEFF cache (N43, as 04's markdown says); the listing's place on neuron
KEEP_NEFF = (
    "its NEFF stays in the NEFF cache (TORCH_NEURONX_NEFF_CACHE_DIR, else /tmp/neff_cache; N14); the copy under TORCH_NEURONX_DEBUG_DIR, its StableHLO and neuronx-cc's working"
    " files stay only if the kernel started with TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS=1 (N43); what ran: the"
    " cpu reference run's listing (docs/reference-runs/README.md, 04), and a NEFF's device view in notebook 09"
)
BUSY_COLD_CALL = "a cold call's block was BUSY (its machine line above): one sample, nothing to conclude"
_START_UP = "is expected to include Inductor's start-up (not measured)"
CHECKS_RECORD = "warmup.json"  # series_tools.inductor_warmup.RECORD: `make run` copied Inductor's CPU checks into the cache


def _checks_record(folder: Path) -> dict | None:
    """The run cache's record of Inductor's CPU checks, written where `make run` built or copied them in
    before the notebooks (series_tools/inductor_warmup.py); None where absent (Jupyter: the first compile pays them)."""
    import json

    path = Path(folder) / CHECKS_RECORD
    return json.loads(path.read_text()) if path.exists() else None


def _setup_paid(cold: ColdCall) -> str:
    """What one-time setup the process's first compile paid, true in each case: the CPU checks built or copied
    into the cache before the notebooks (`cold.checks`), written by this call (its probe files), or neither.

    Why: "CPU checks excluded" read as if something was subtracted; the call never paid them, and it still
    includes Inductor's start-up, which one run cannot split from the compile (hence "expected", "not measured")."""
    if "NEFF cache files added" in cold.counts:  # neuron: no Inductor, no CPU checks
        return "is expected to include the backend's one-time setup (not measured)"
    if cold.checks:
        how = f"built beforehand in {cold.checks['seconds']} s" if cold.checks.get("built") else "copied in beforehand"
        return f"did not pay the CPU checks ({how}; the run's summary.md says so); it {_START_UP}"
    if cold.added_kinds.get(_PROBE):
        return f"paid its CPU checks (this call wrote their probe files); it {_START_UP}"
    return _START_UP


def break_evens(
    cold: ColdCall, after_setup: ColdCall, naive: Any, verdict: Any, hidden: int, new_hidden: int, compiled: Any = None
) -> list[Verdict | str]:
    """How many warm calls pay the process's first compile back against naive, its basis, what the
    cache files say about setup, and how long a later compile took: one idea a line.

    Why: the first cold call, in a fresh process with an empty cache, also pays a one-time setup
    (Inductor's start-up) that later compiles skip; the evidence is that it added more cache files than a later
    compile did, and one run cannot split its time into RMSNorm's compile and that start-up. The
    first is set against the time a warm call saves at the timed shape, less the naive call the cold
    call replaces (exercise 2's formula for a compile loaded from the cache). The later compile ran at
    another shape, whose saving is not timed, so its break-even is withheld: only its seconds are given (a
    compile at one shape over the saving at another answers no real question; the two cold calls' ratio, one
    sample each at different shapes, measured neither the setup nor a compile and read as both: not printed).

    Args:
        cold: the first compile's `cold_call` result (its counts: "seconds", optionally "cache files added").
        after_setup: `cold_call`'s result for a compile after the first, at a new shape.
        naive: naive's interleaved Timing (its `median_us`), at `hidden`.
        verdict: `judge_ratio` of compiled / naive: a warm call saves naive's median times one minus
            its median (p10, p90 for the range); the first break-even is given only where its kind
            is "faster", else withheld with its sentence.
        hidden: the timed shape's HIDDEN; new_hidden: the HIDDEN the later compile was timed at.
        compiled: the compiled variant's interleaved Timing, or None: with `naive`, where one variant's slow
            rounds set an end of the calls' range (`_set_by_slow_rounds`), the range says so.

    Returns:
        The first compile's break-even (an estimate in whole calls, rounded up, printed as a short headline
        "break-even: about N warm calls (estimated)" with its caveats on indented lines under it, or
        withheld; labelled the process's first compile only where `cold`'s counts allow it: no graph
        captured before, no cache hit and, on neuron, NEFF cache files added; else "this cold call": 04's
        cold-call cell re-run in one kernel loads from the cache, and a pre-warmed NEFF cache serves a
        NEFF); where it is given, its basis (one line); where the first compile added more cache files
        than the later one, a line naming the kinds of the extra files (which setup ran, not its cost); and the later compile's
        break-even, withheld, whose subject gives that call's time (called a compile only with its cache_misses beside it).
        Slow rounds that set an end of the range are named there, with what makes a round slow.
        The evidence line names the kinds of the extra files (`ColdCall.added_kinds`), Inductor's
        CPU-feature probes apart from the rest (without the per-check counts, which buried the break-even).
    """
    # the paired ratio's median, as its p10-p90 below: the difference of the table's medians put the
    # estimate at the edge of its own range
    saved_us = naive.median_us * (1 - verdict.median)
    seconds = cold.counts["seconds"]
    extra_us = seconds * 1e6 - naive.median_us  # the cold call replaces a naive call, as in exercise 2
    first, later = _duration(seconds), _duration(after_setup.counts["seconds"])
    lines: list[Verdict | str] = []
    # the label follows the counts: re-run in the same kernel (or on a filled cache), the cold call is no first compile
    counts = cold.counts
    first_compile = not (counts.get("graphs captured before", 0) or counts.get("cache_hits", 0))
    first_compile = first_compile and counts.get("NEFF cache files added", 1) > 0  # neuron: none added, a NEFF load
    if cold.busy:  # a busy block concludes nothing: its seconds are no basis
        lines.append(withheld("the break-even against naive", BUSY_COLD_CALL))
    elif verdict.kind != "faster":  # the ratio's median may be 1 or more: no saving to divide by
        lines.append(withheld("the break-even against naive", verdict.sentence))
    else:
        spread = ""
        if 0 < verdict.p90 < 1:  # 04's "about 162" hid a spread of about 100-180: the saving moves with the paired ratio
            fewest, most = (math.ceil(extra_us / (naive.median_us * (1 - r))) for r in (verdict.p10, verdict.p90))
            # the range is the warm ratio's alone; the cold call is one sample (its basis line)
            # 161-164 read as the uncertainty; the one cold-call sample's unknown spread is said beside it
            spread = f"{fewest:,.0f}-{most:,.0f} calls from the per-round ratio's p10-p90 alone"
            spread += _set_by_slow_rounds(verdict, naive, compiled) + " (the cold call is one sample; its spread is unknown)"
        what = (
            f"the process's first compile ({first})"
            if first_compile
            else f"this cold call ({first}; not a first compile: its origin is below)"
        )
        calls = math.ceil(extra_us / saved_us)
        cannot = "a compile loaded from the cache"
        paid = estimate("break-even", {"this run": calls}, "warm calls", spread or "one cold-call sample", cannot)
        # the headline first and short; each caveat on its own indented line under it (the estimate's parts)
        said = [f"break-even: about {calls:,} warm calls (estimated), each {saved_us / 1e3:.1f} ms faster than naive"]
        said.append(f"  of {what} against naive, rounded up to whole calls")
        said += [f"  that compile {_setup_paid(cold)}"] if first_compile else []
        said += [f"  range: {spread}"] if spread else []
        lines.append(dataclasses.replace(paid, sentence="\n".join(said)))
        # how a warm call's saving is taken: 04's markdown above it (said once)
        lines.append(f"  its basis: one cold-call sample, less the naive call it replaces, over the saving at HIDDEN = {hidden}")
    if first_compile and lines[0].kind == "withheld":  # busy or not: what setup it paid is a fact of the cache
        lines.append(f"the process's first compile {_setup_paid(cold)}")
    files = (cold.counts.get("cache files added", 0), after_setup.counts.get("cache files added", 0))
    if files[0] > files[1]:  # the setup named by its evidence; what kinds of files the first added beyond the later
        more = Counter(cold.added_kinds)
        more.subtract(after_setup.added_kinds)
        # the per-check probe inventory buried the break-even above it: one short line
        # "probes" with its evidence: the checks their sources define (`ColdCall.probe_names`), two named
        checks = sorted(cold.probe_names, key=lambda name: (-cold.probe_names[name], name))[:2]
        probe = f"files of CPU-feature probes (sources defining {', '.join(checks)}...)" if checks else _PROBE + " files"
        kinds = ", ".join(f"{n} {probe if kind == _PROBE else _GLOSS.get(kind, kind)}" for kind, n in more.most_common() if n > 0)
        lines.append(
            f"which setup ran (not its cost): the first compile added {files[0]} cache files, the later one {files[1]}"
            + (f"; the {files[0] - files[1]} more: {kinds}" if kinds else "")
        )
    # another shape, later in the process: the ratio must not read as the first compile's setup cost
    # "took 1.0 s, 0.082x" beside a 12.71 s first: the seconds with the digits the ratio was taken from
    later_s = after_setup.counts["seconds"]
    took = f"{later_s:.2f} s" if later_s >= 1 else later
    # "(at another shape, so not the setup's cost)" left unclear what the gap measures: one plain line
    # a compile only with its evidence, as the first cold call's origin line (a cache hit or neuron: "cold call")
    misses = after_setup.counts.get("cache_misses", 0)
    later_call = f"a later compile at HIDDEN = {new_hidden} (cache_misses {misses})"
    later_call = later_call if misses else f"a later cold call at HIDDEN = {new_hidden}"
    later_subject = f"{later_call} took {took}"
    if cold.busy or after_setup.busy:
        later_subject, reason = later_call, BUSY_COLD_CALL
    else:
        reason = verdict.sentence if verdict.kind != "faster" else "that shape's saving was not timed"
    return [*lines, withheld(later_subject + "; its break-even", reason)]


def _set_by_slow_rounds(verdict: Any, naive: Any, compiled: Any) -> str:
    """Returns ", its low end set by naive's 2 slow rounds" where they set it, else "" (and the same for the compiled
    variant's at the high end).

    Why: the calls' low end came from two rounds in which only naive ran about 2.5x slow, yet read
    as the compile saving's spread. A slow naive round lowers that round's compiled / naive ratio (more saved,
    fewer calls); a slow compiled round raises it. An end is named only where that variant has slow rounds
    (`analysis.floor.slow_rounds`: its p90 is SLOW_ROUND times its median or more) and the ratio's end is as far
    from its median as one such round moves it."""
    ends = [
        (end, name, n)
        for end, name, timing, beyond in (
            ("low", "naive", naive, verdict.p10 * SLOW_ROUND <= verdict.median),
            ("high", "the compiled variant", compiled, verdict.p90 >= SLOW_ROUND * verdict.median),
        )
        if timing is not None and beyond and hasattr(timing, "samples_us") and (n := slow_rounds(timing))
    ]
    slow = f"slow round{{}}, {SLOW_ROUND:g}x its median or more"
    return "".join(f", its {end} end set by {name}'s {n} {slow.format('s' * (n > 1))}" for end, name, n in ends)


def beside_03(out_dir: str | Path, here: Verdict) -> str:
    """03's published verdict on torch.rms_norm / naive beside this block's, and whether they disagree.

    Why: 03 and 04 each time the pair once; the page said "where the two disagree" without saying
    whether they did. An inconclusive block disagrees with neither; the lesson cell
    prints this line, not the metrics reading behind it.

    Args:
        out_dir: this notebook's output folder; 03's is its sibling in the same run folder.
        here: this block's verdict on torch.rms_norm / naive.
    """
    path = Path(out_dir).parent / "03_fused_rms_norm" / METRICS_FILE
    if not path.exists():
        return "03's verdict on the pair: not in this run folder (03 did not run here)"
    m = read_metrics(path)["notebooks"]["03_fused_rms_norm"]["fused_over_naive"]
    pair = dataclasses.make_dataclass("Ratio", ["numerator", "denominator", "median", "p10", "p90"])
    then = judge_ratio(pair("torch.rms_norm", "naive", m["value"], m["p10"], m["p90"]))
    if "busy" in (then.kind, here.kind):
        relation = "a busy block judges nothing"
    elif then.word == here.word and "inconclusive" in here.relation:  # "the same verdict" read as "equal"
        relation = "two inconclusive results, not agreement that they are equal"
    elif then.word == here.word:
        relation = "the same verdict"
    elif "inconclusive" in (then.relation, here.relation):
        relation = "an inconclusive block disagrees with neither"
    else:
        relation = "they disagree: this run does not settle which holds"
    if relation == "the same verdict":  # "here: the same: the same verdict" read as garbled
        return f"03's verdict: {then.word}; here: the same verdict"
    here_word = "the same" if then.word == here.word else here.word  # the verdict's words once, not twice
    return f"03's verdict: {then.word}; here: {here_word}: {relation}"


# kinds a reader may not know; the first compile's extra files were mostly these probes, not compiled kernels
_PROBE = "CPU-feature probe"
_GLOSS = {
    "in locks/": "in locks/ (file locks)",
    ".so": ".so (compiled code)",
}


def _files_in(folder: str | Path) -> set[Path]:
    return {p.relative_to(folder) for p in Path(folder).rglob("*") if p.is_file()} if Path(folder).exists() else set()


def _key(relative: Path) -> str:
    """The hash a cache file is named after: a source, its .so and its lock share it."""
    return relative.name.split(".")[0]


def _probes(folder: str | Path, files: set[Path]) -> set[str]:
    """The keys of the CPU-feature probes among `files`.

    Why: before its first CPU kernel in a process, Inductor compiles a tiny C++ program per vector
    instruction set (`__avx_chk_kernel`, `__avx512_chk_kernel`...) to learn which ones this CPU runs,
    and its cache keeps each as a .cpp, its .so and a lock: most of the files a first compile adds on
    cpu (torch 2.13), which a reader took for compiled kernels when they were counted as .so files.
    """
    sources = (p for p in files if p.suffix == ".cpp")
    return {_key(p) for p in sources if "_chk_kernel" in (Path(folder) / p).read_text(errors="replace")}


def _probe_names(folder: str | Path, files: set[Path], probes: set[str]) -> dict[str, int]:
    """How many of the probes' sources define each check (`__avx512_vnni_chk_kernel`...): what a reader
    can look up to see that the files are probes, not kernels."""
    texts = ((Path(folder) / p).read_text(errors="replace") for p in files if p.suffix == ".cpp" and _key(p) in probes)
    return dict(Counter(name for text in texts for name in set(re.findall(r"__\w+?_chk_kernel", text))))


def _kind(relative: Path, probes: frozenset[str] | set[str] = frozenset()) -> str:
    """A cache file's kind: a CPU-feature probe's (any of its files, by key in `probes`), else its
    named cache subfolder ("fxgraph", "locks"; not a two-letter hash bucket) where it has one, else
    its suffix (".cpp", ".so", ".py")."""
    if _key(relative) in probes:
        return _PROBE
    top = relative.parts[0] if len(relative.parts) > 1 else ""
    return f"in {top}/" if len(top) > 2 else (relative.suffix or "without a suffix")


@dataclasses.dataclass(frozen=True)
class ColdCall:
    """What `cold_call` measured.

    Attributes:
        counts: numbers by name, shown as a table ("seconds", "graphs captured before", "cache files
            added", "graphs", "cache_hits", "cache_misses"; on neuron "NEFF cache files added").
        added_kinds: the files it added to Inductor's cache, counted by kind (`_kind`): the setup's
            evidence in `break_evens`.
        probe_names: among them, the CPU-feature probes' sources counted by the check each defines
            (`_probe_names`): the evidence that they are probes, for a reader of the cache.
        busy: whether its machine line said BUSY (None where unknown): a busy cold call concludes nothing,
            so `break_evens` and 04's exercise 2 withhold what they would draw from it (04's exercise 2
            printed a BUSY line, then a ratio and a break-even from the same call).
        checks: the cache's record of Inductor's CPU checks built before the notebooks (`_checks_record`), or None.
    """

    counts: dict[str, float]
    added_kinds: dict[str, int] = dataclasses.field(default_factory=dict)
    probe_names: dict[str, int] = dataclasses.field(default_factory=dict)
    busy: bool | None = None
    checks: dict | None = None


def cold_call(fn: Callable[[], Any], backend: Any) -> ColdCall:
    """Times one call that may compile and counts what the compiler did meanwhile; prints whether
    other work took CPU time during it (one machine line), since one sample has no spread to show it.

    Why: a cold call's time holds only for a cache in the same state: the counts say whether it
    compiled or loaded its code, and the machine line whether a busy seat inflated it.

    Args:
        fn: the call, e.g. `lambda: call_compiled(compiled, x, weight, eps)`.
        backend: the session's backend (its `name` and `synchronize`).

    Returns:
        A ColdCall: in `counts`, "seconds", "graphs captured before" (by this process: compiled or loaded),
        "cache files added" (Inductor's on-disk cache, `cache_dir()`), on neuron "NEFF cache files added",
        and the changes of `compile_counters()` ("graphs", "cache_hits", "cache_misses"); in `added_kinds`,
        the kinds of the files added to Inductor's cache.
    """
    import torch
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    from analysis.compiles import compile_counters
    from analysis.contention import contention_between, read_counters
    from analysis.timing import time_once
    from analysis.verdicts import machine_line
    from helpers.neuron_runtime import neff_cache_dir

    folders = {"cache files added": cache_dir()} | (
        {"NEFF cache files added": neff_cache_dir()} if backend.name == "neuron" else {}
    )
    files, before, cpu_before = {k: _files_in(f) for k, f in folders.items()}, compile_counters(), read_counters()
    with torch.no_grad():
        seconds, _ = time_once(fn, backend)
    # the block's wall time set to the timed call's, so the machine line and the table give one value for it
    contention = dataclasses.replace(contention_between(cpu_before, read_counters()), wall_s=seconds)
    print(machine_line({"cold call": contention}, block="compiling"))
    counts = {k: v - before[k] for k, v in compile_counters().items()}
    added = {k: _files_in(f) - files[k] for k, f in folders.items()}
    inductor = added["cache files added"]
    probes = _probes(folders["cache files added"], inductor)
    return ColdCall(
        {"seconds": seconds, "graphs captured before": before["graphs"], **{k: len(v) for k, v in added.items()}, **counts},
        dict(Counter(_kind(p, probes) for p in inductor)),
        _probe_names(folders["cache files added"], inductor, probes),
        contention.busy,
        _checks_record(folders["cache files added"]),
    )


def speedup_lines(verdict: Verdict, naive_alloc: float, compiled_alloc: float) -> list[str]:
    """04's Summary, printed from the run: the speed verdict, then the full-size tensors each call allocated.

    Why: the Summary pointed at three other cells and never tied the speed-up to the memory passes fusion
    removes (naive allocates the output and two full-size intermediates, the compiled call the output and one value per row).
    The allocations are measured; that they cause the speed-up is 02's byte count, not shown by this run.

    Args:
        verdict: `judge_ratio` of torch.compile / naive; a busy or inconclusive one explains nothing.
        naive_alloc, compiled_alloc: each variant's `alloc_over_input` (NaN where the backend reads no allocations).
    """
    lines = [f"speed: {verdict.sentence}"]
    if math.isnan(naive_alloc) or math.isnan(compiled_alloc):
        return [*lines, "memory: allocations not read on this backend (cpu reference run: 3x against 1x the input)"]
    lines.append(
        f"memory: naive allocated {naive_alloc:.2f}x the input (output + 2 full-size intermediates, by 02's count),"
        f" torch.compile {compiled_alloc:.2f}x (output + one value per row)"
    )
    if verdict.kind == "faster":
        lines.append(
            "why, likely: one kernel, no full-size intermediate written and read back (02's count); this run does not isolate it"
        )
    else:
        lines.append("why: no speed-up measured above, so nothing to explain")
    return lines


def cache_load_lines(again: ColdCall, earlier: tuple[ColdCall, ...], naive: Any, verdict: Verdict) -> list[Verdict | str]:
    """04's exercise 2: a cold call after `torch._dynamo.reset()`: its break-even against naive and where its code came from.

    Why: the answer cell held twenty lines of arithmetic and wording (ceil as `break_evens`, the zero case, the
    busy and not-faster cases); the lesson shows the table (both cold calls' seconds) and these lines. Its ratio to
    the first cold call (one sample each) measured neither setup nor compile, yet read as the setup's cost: not printed.

    Args:
        again: the cold call after the reset; earlier: the first cold call, then any other (a busy one withholds all).
        naive: naive's interleaved Timing; verdict: `judge_ratio` of compiled / naive (its median sets the saving).

    Returns:
        the break-even of this cache load (an estimate, 0 where the load took less than a naive call, or withheld),
        and where the call's code came from (`cold_call_origin`).
    """
    busy = again.busy or any(c.busy for c in earlier)  # a BUSY cold call concludes nothing (its machine line)
    saved_us = naive.median_us * (1 - verdict.median)  # as break_evens: from the per-round ratio
    calls = math.ceil((again.counts["seconds"] * 1e6 - naive.median_us) / saved_us)
    subject = "cache-load break-even against naive, in warm calls (rounded up)"
    basis = "the load less the naive call it replaces, over a warm call's saving"
    paid: Verdict | str = estimate(subject, {"this run": calls}, "", basis, "what a new process pays")
    if calls <= 0:
        load, call = f"{again.counts['seconds'] * 1e3:.0f} ms", f"{naive.median_us / 1e3:.0f} ms"
        paid = f"cache-load break-even against naive: 0 warm calls, the load ({load}) took less than a naive call ({call}); one sample"
    if busy or verdict.kind != "faster":
        paid = withheld("the break-even", BUSY_COLD_CALL if busy else "not measurably faster than naive (above)")
    return [paid, f"the cold call after the reset {cold_call_origin(again.counts)}"]
