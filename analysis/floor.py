"""The copy floor, and the bandwidth probe that says whether the floor itself is sound.

The floor of an RMSNorm is a same-size copy (`x.clone()`): it reads x once and writes a new
tensor once, as an ideal RMSNorm must, and it pays for allocating its output as every variant
does. A floor is only useful if it is measured well, so it is timed beside a STREAM-style triad
(`a = b + s * c` on preallocated tensors) that moves the same number of bytes: the bandwidth the
machine reaches without allocating. A copy much faster than the triad did not move its bytes (a
timing error); one far slower, or with a wide spread, was disturbed. Either is re-measured, and
flagged if it stays so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import torch

from .timing import PairedRatio, Timing, paired_ratio, time_interleaved
from .verdicts import CANNOT_TELL_ALONE, Claim, Verdict, decimals_apart, judge_ratio, withheld

WIDE_SPREAD = 0.25  # (p90 - p10) / median of the copy's samples
PLAUSIBLE_COPY_OVER_PROBE = (0.25, 1.5)  # copy bandwidth / triad bandwidth, at a memory-bound shape
SLOW_ROUND = 1.5  # a round this many times its case's median is a slow one (naive 2.4x in 2 of 15 rounds)


def slow_round_mask(t: Timing) -> np.ndarray:
    """Which of `t`'s rounds reach SLOW_ROUND times its median: the one test every "slow round" count and name
    uses (05's ranking, 04's slow-rounds line, 03's `ratio_ends`)."""
    return t.samples_us >= SLOW_ROUND * t.median_us


def rounds_over_slow(t: Timing) -> int:
    """How many of `t`'s rounds reach SLOW_ROUND times its median, wherever its p90 lies."""
    return int(slow_round_mask(t).sum())


def slow_rounds(t: Timing) -> int:
    """How many of `t`'s rounds are slow (at least SLOW_ROUND times its median), counted only where its p90 is over
    that: a slow round or two inside the p10-p90 moves no verdict."""
    return rounds_over_slow(t) if t.p90_us > SLOW_ROUND * t.median_us else 0


def copy_floor(x: torch.Tensor) -> torch.Tensor:
    """A same-size copy: reads x once and writes a new tensor once, like an ideal RMSNorm."""
    return x.clone()


def triad_probe(x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """A triad over three preallocated tensors of 2/3 of x's elements: two reads and one write
    move the bytes of the copy (read x, write y), with no allocation inside the timed call."""
    n = max(1, math.ceil(2 * x.numel() / 3))
    b, c = (torch.randn(n, device=x.device).to(x.dtype) for _ in range(2))
    a = torch.empty_like(b)
    return lambda: torch.add(b, c, alpha=0.5, out=a)


def floor_probes(x: torch.Tensor) -> dict[str, Callable[[], torch.Tensor]]:
    """The two cases timed beside the copy to check it: "triad probe" (`triad_probe`, the check
    `time_with_floor` makes) and "copy into" (the same copy into a tensor allocated beforehand, which
    appendix A3 sets against the copy to show what the allocation costs).

    Args:
        x: the copied tensor.

    Returns:
        {"triad probe": ..., "copy into": ...}, callables to add to an interleaved timing's cases.
    """
    out = torch.empty_like(x)
    return {"triad probe": triad_probe(x), "copy into": lambda: out.copy_(x)}


@dataclass
class FloorCheck:
    """The copy's and the probe's bandwidth over the same bytes, and what is wrong with the copy."""

    copy_gb_per_s: float
    probe_gb_per_s: float
    copy_spread: float
    problems: list[str] = field(default_factory=list)
    memory_bound: bool = True  # whether the bandwidths were compared (see check_floor)
    bytes_moved: int = 0  # read and written by one copy
    measurements: int = 1  # how many times time_with_floor measured it (a failed floor is measured again)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def copy_over_probe(self) -> float:
        return self.copy_gb_per_s / self.probe_gb_per_s if self.probe_gb_per_s else math.nan

    @property
    def summary(self) -> str:
        """The check in one clause, for the line beside a timing: what it compared and its verdict
        (`explain` says why; appendix A3 shows the check in full)."""
        if not self.ok:  # 05 said "after a second measurement" while the line showed one failure
            times = f" in {self.measurements} of {self.measurements} measurements" if self.measurements > 1 else ""
            return f"copy floor failed its check{times} ({'; '.join(self.problems)})"
        low, high = PLAUSIBLE_COPY_OVER_PROBE
        bandwidth = f"{self.copy_over_probe:.2f}x the triad's bandwidth, {low}-{high}x accepted; " if self.memory_bound else ""
        spread = decimals_apart(self.copy_spread, WIDE_SPREAD)  # 0.249 is not printed as the limit's 0.25
        # "passed its check", not "sound": the check only catches a copy far off the triad; without the
        # bandwidth comparison "passed" read as a byte floor where the copy times a call
        which, floor = (
            ("its check", "")
            if self.memory_bound
            else (
                "its spread check",
                "; no bandwidth check: the bytes are expected to stay in the caches (not measured here), A3",
            )
        )
        return f"copy floor passed {which} ({bandwidth}spread {spread}, at most {WIDE_SPREAD} allowed{floor})"

    def explain(self, copy_into_over_probe: float | None = None) -> str:
        """The verdict, what the check compared and why the verdict holds, in this check's numbers.

        Why: a table that says "sound" beside a copy at 0.4x the triad's bandwidth reads as a
        contradiction. The check asks only whether the copy moved its bytes and was timed steadily,
        not whether it was fast; a copy below the triad is expected, because it allocates its output
        inside the timed call and the triad does not. `copy_into_over_probe`, the same copy into
        memory it already had over the triad, shows how much of the distance is that allocation; where it
        stays below 1, the allocation is only part of the distance and the sentence says so."""
        low, high = PLAUSIBLE_COPY_OVER_PROBE
        spread = (
            f"the copy's spread, {decimals_apart(self.copy_spread, WIDE_SPREAD)}, is "
            + ("within" if self.copy_spread <= WIDE_SPREAD else "above")
            + f" the {WIDE_SPREAD} allowed"
        )
        verdict = "sound" if self.ok else "FLAGGED"
        if not self.memory_bound:
            return (
                f"{verdict}: at this shape both calls take microseconds and move {self.bytes_moved / 1024:,.0f} KiB, which can "
                "stay in the processor's caches, so their bandwidths say nothing about memory and are not compared; only the "
                "timing is checked, "
                f"and {spread}."
            )
        text = (
            f"{verdict}: the check compares the copy's bandwidth with the triad's over the same bytes and accepts "
            f"{low}-{high}x (here {self.copy_over_probe:.2f}x). Above {high}x the copy would have outrun the triad by more than "
            f"a copy that moves its bytes can; below {low}x something disturbed it. Below 1x is expected"
        )
        known = copy_into_over_probe is not None and math.isfinite(copy_into_over_probe)
        text += ", partly because" if known and copy_into_over_probe < 1 else ":"  # allocating explains only part
        text += " the copy allocates its output inside the timed call, the triad works on tensors allocated beforehand"
        if known:
            text += f" (the same copy into memory it already had reached {copy_into_over_probe:.2f}x the triad"
            text += "; the rest this run does not explain)" if copy_into_over_probe < 1 else ")"
        return text + f"; and {spread}."


def check_floor(copy: Timing, probe: Timing, bytes_moved: int, *, memory_bound: bool) -> FloorCheck:
    """Judge a copy timing against the triad timed in the same rounds.

    The bandwidth comparison applies only where the shape is memory-bound: at a few kilobytes both
    calls are launch overhead, and their "bandwidth" says nothing about memory."""
    copy_bw = bytes_moved / (copy.median_us * 1e-6) / 1e9
    probe_bw = bytes_moved / (probe.median_us * 1e-6) / 1e9
    check = FloorCheck(copy_bw, probe_bw, copy.spread, memory_bound=memory_bound, bytes_moved=bytes_moved)
    if copy.spread > WIDE_SPREAD:
        check.problems.append(f"the copy's spread is wide ({decimals_apart(copy.spread, WIDE_SPREAD)} > {WIDE_SPREAD})")
    low, high = PLAUSIBLE_COPY_OVER_PROBE
    if memory_bound and not low <= check.copy_over_probe <= high:
        check.problems.append(f"the copy reached {check.copy_over_probe:.2f}x the triad's bandwidth (plausible: {low}-{high}x)")
    return check


def nominal_memory_gb_per_s(backend: str) -> tuple[float | None, str]:
    """The device memory's nominal (peak) bandwidth in GB/s and where it came from; None with
    the reason where the device does not report it; `backend` is "neuron", "cuda" or "cpu".

    A measured copy is judged against what the memory can do at best: on cuda, the theoretical
    peak from two device properties, twice the memory clock (double data rate) times the bus
    width in bytes. A CPU reports neither (its triad probe is the reference), and
    torch-neuronx documents no such property (docs/NEURON_NOTES.md N31: on Trainium a device
    profile's bandwidth utilisation in Neuron Explorer's Summary is the measure)."""
    if backend == "cuda":
        props = torch.cuda.get_device_properties(0)
        clock_khz, bus_bits = getattr(props, "memory_clock_rate", 0), getattr(props, "memory_bus_width", 0)
        if clock_khz and bus_bits:
            return (
                2 * clock_khz * 1e3 * bus_bits / 8 / 1e9,
                f"2 x memory clock {clock_khz / 1e3:.0f} MHz x {bus_bits}-bit bus (device properties)",
            )
        return None, f"this torch ({torch.__version__}) reports no memory clock or bus width for {props.name}"
    if backend == "neuron":
        return None, (
            "torch-neuronx documents no memory-bandwidth property; on Trainium read the bandwidth "
            "utilisation in Neuron Explorer's Summary of a device profile (HBU from Neuron 2.34, MBU before)"
        )
    return None, "a CPU reports no nominal memory bandwidth; the triad probe, measured here, is the reference"


def time_with_floor(
    cases: dict[str, Callable[[], Any]],
    backend: Any,
    bytes_moved: int,
    *,
    memory_bound: bool,
    attempts: int = 2,
    copy: str = "copy",
    probe: str = "triad probe",
    **timing: Any,
) -> tuple[dict[str, Timing], FloorCheck]:
    """Time `cases` interleaved (analysis.timing.time_interleaved) and check the copy floor on the
    same rounds; a block whose floor fails its check is measured again, up to `attempts` times in all.

    Why: every ratio to the copy is only as good as the copy's own timing, and a single disturbed
    block should not withhold a ranking that a second measurement can give; a floor that fails
    every time stays flagged, and its problems say why. Slow rounds in a variant are not re-timed:
    on the 2-core VM they come from memory traffic or page faults, a second block of the large
    shape (about 6 s of `make run`) varied again in the run that tried it, and the verdicts
    that include them say so (lesson.study.quiet_note, Ranking.slow_mark).

    Args:
        cases: the callables to time; they must include `copy` and `probe` (a triad_probe).
        backend: what time_interleaved synchronizes.
        bytes_moved: read and written by one copy (twice x's bytes).
        memory_bound: whether the bandwidths are compared (see check_floor).
        attempts: measurements at most.
        timing: passed to time_interleaved (repeats, min_sample_s, ...).

    Returns:
        The last measurement's timings and its FloorCheck.
    """
    for made in range(1, max(1, attempts) + 1):
        timings = time_interleaved(cases, backend, **timing)
        floor = check_floor(timings[copy], timings[probe], bytes_moved, memory_bound=memory_bound)
        if floor.ok:
            break
    return timings, replace(floor, measurements=made)


def cannot_tell_group(group: list[str], word: str = CANNOT_TELL_ALONE) -> str:
    """A group of a ranking whose pair verdicts do not tell its members apart, with those verdicts' own word
    (`group_word`; no verdict sentence stands beside it): "a and b (no measurable difference)", "a, b and c
    (cannot tell apart, inconclusive)"; one member alone as it is. Why words, not "a ≈ b": an inconclusive pair
    is not a tie (05's readers took "3.26x ≈ 4.14x" for "about equal"); why the pair's own word: 05's ranking
    said "cannot tell apart, inconclusive" of a pair its table called "no measurable difference".

    Args:
        group: the members as they are to be printed, e.g. "naive 3.26x".
        word: the group's verdict word (`group_word`, `Ranking.tier_word`).

    Returns:
        The group in one phrase.
    """
    if len(group) < 2:
        return "".join(group)
    return f"{', '.join(group[:-1])} and {group[-1]} ({word})"


def group_word(words: list[str]) -> str:
    """One word for a group from its neighbouring pairs' words (`Verdict.short_word`: NO_DIFFERENCE or
    CANNOT_TELL_ALONE, or a group's word): the word they share, else both, so neither pair is misquoted."""
    parts = [part for w in words for part in w.removeprefix(_BY_PAIR).split(" or ")]
    unique = list(dict.fromkeys(parts)) or [CANNOT_TELL_ALONE]
    return unique[0] if len(unique) == 1 else f"{_BY_PAIR}{' or '.join(unique)}"


_BY_PAIR = "by pair: "


@dataclass
class Ranking:
    """Variants ranked by their per-round time ratio to the copy floor, and each pair compared directly.

    The one ranking a notebook shows: the table, the summary and any "best" metric read `order`,
    so two orderings of the same shape (one by medians of times, one by ratios) cannot disagree.
    `gate` is set where no ranking may be drawn: the floor failed its check (withheld), or the
    machine was busy while timing (a busy verdict). The pairs are compared directly, without the
    copy, so a failed floor withholds the ranking, not them."""

    label: str
    order: list[str]
    over_floor: dict[str, PairedRatio]
    pairs: list[Verdict]
    gate: Verdict | None = None
    slow: dict[str, int] = field(default_factory=dict)  # name -> its slow rounds (`slow_rounds`), where it has any

    def slow_mark(self, name: str) -> str:
        """ " (2 slow rounds set one end of its range)" after a name whose rounds include slow ones, else "": its
        ranges and verdicts include those rounds (only the timing cell's line said so, not the ranking it
        moved); not "from its slow rounds", which read as if the median came from them; not "its range includes
        them": `slow_rounds` counts them only where they reach the p90, at the range's end."""
        return f" ({self.slow[name]} slow rounds set one end of its range)" if self.slow.get(name) else ""

    @property
    def verdicts(self) -> list[Verdict]:
        """What the notebook prints: the gate where it is set, then each pair's verdict."""
        return ([self.gate] if self.gate else []) + self.pairs

    @property
    def sentence(self) -> str:
        """The ranking in one line, or the gate's sentence."""
        if self.gate:
            return self.gate.sentence
        ranked = ", ".join(f"{n} {self.over_floor[n].median:.2f}x" for n in self.order)
        return f"{self.label}, from closest to the copy: {ranked} (median per-round ratio to the copy; the verdicts below say which pairs differ measurably)"

    def __str__(self) -> str:
        return self.sentence

    def tiers(self) -> list[list[str]]:
        """The order in groups: a name joins its predecessor's group where their pair verdict is not a
        measurable difference. Why: two medians in order are not an order where the verdict calls them
        indistinguishable. Empty where the ranking is withheld."""
        measurable = {frozenset((v.subject, v.reference)): v.measurable for v in self.pairs}
        groups: list[list[str]] = []
        for name in self.order:
            if groups and not measurable.get(frozenset((groups[-1][-1], name)), True):
                groups[-1].append(name)
            else:
                groups.append([name])
        return groups

    def tier_word(self, tier: list[str]) -> str:
        """The verdict word of a group of `tiers`: its neighbouring pairs' `short_word`s (`group_word`)."""
        verdicts = {frozenset((v.subject, v.reference)): v for v in self.pairs}
        return group_word([verdicts[frozenset(p)].short_word for p in zip(tier, tier[1:]) if frozenset(p) in verdicts])

    def tier_phrase(self, tier: list[str], ratios: bool = True) -> str:
        """A group of `tiers` in words, each name with its ratio to the copy (`ratios`), the group's word after it.
        In a group the slow rounds join that word, by name: one parenthetical, no "its" that could mean either."""
        shown = [f"{n} {self.over_floor[n].median:.2f}x" if ratios else n for n in tier]
        if len(tier) < 2:
            return "".join(shown) + "".join(self.slow_mark(n) for n in tier)
        slow = "".join(f"; {self.slow[n]} slow rounds set one end of {n}'s range" for n in tier if self.slow.get(n))
        return cannot_tell_group(shown, self.tier_word(tier) + slow)

    @property
    def sentence_with_ties(self) -> str:
        """The ranking in one line, a group the pair verdicts do not tell apart said with their word ("a 3.26x and b
        4.14x (cannot tell apart, inconclusive)"; 05's "a ≈ b" read as "about equal" for medians 27% apart), or
        the gate's sentence."""
        if self.gate:
            return self.gate.sentence
        ranked = ", then ".join(self.tier_phrase(g) for g in self.tiers())
        return f"{self.label}, from closest to the copy: {ranked} (median per-round ratio to the copy)"

    def table(self) -> Any:
        """One row per variant in ranking order (the names as given where withheld): its ratio to the copy and p10-p90,
        and `not_told_apart_from`: the others in its group of `tiers` (a tie showed only in the sentence below)."""
        import pandas as pd

        names = self.order or list(self.over_floor)
        group = {n: [m for m in t if m != n] for t in self.tiers() for n in t}
        rows = [
            {"variant": n, "over_copy": r.median, "p10": r.p10, "p90": r.p90, "not_told_apart_from": ", ".join(group.get(n, []))}
            for n, r in ((n, self.over_floor[n]) for n in names)
        ]
        return pd.DataFrame(rows).set_index("variant").round(3)

    def claims(self, floor_metric: Callable[[str], str], pair_metric: Callable[[str, str], str]) -> list[Claim]:
        """The claims the tests re-check (analysis.claims): the ranking ("<" between the published ratios to
        the copy of names in consecutive groups of `tiers`, or "busy"; none where the floor was flagged), and
        each pair verdict on its published ratio.

        Args:
            floor_metric: name -> the published metric of its ratio to the copy.
            pair_metric: (numerator, denominator) -> the published metric of that paired ratio.
        """
        metrics = tuple(floor_metric(n) for n in self.order or self.over_floor)
        pairs = [v.claim(pair_metric(v.subject, v.reference)) for v in self.pairs]
        if self.gate is None:
            # "<" only across groups of `tiers`: within a group the pairs do not tell the names apart, so their
            # median order is no conclusion (a busy benchmark run "flipped" naive and torch.rms_norm, 3.39x and
            # 3.36x in a group); every name of a group sits below every name of the next (tiers follow medians)
            tiers = self.tiers()
            if all(len(t) == 1 for t in tiers):  # no group: one claim over the whole order
                return [Claim("<", metrics, self.sentence), *pairs]
            order = [
                Claim("<", (floor_metric(a), floor_metric(b)), self.sentence_with_ties)
                for low, high in zip(tiers, tiers[1:])
                for a in sorted(low)
                for b in sorted(high)
            ]
            return [*order, *pairs]
        return ([Claim("busy", metrics, self.sentence)] if self.gate.kind == "busy" else []) + pairs


def rank_over_floor(timings: dict[str, Timing], names: list[str], floor: FloorCheck, label: str, copy: str = "copy") -> Ranking:
    """Rank `names` by their per-round time ratio to the copy timed in the same rounds.

    Args:
        timings: one interleaved block (time_with_floor) holding `copy` and every name.
        names: the variants, in the order their pairs are compared (a over b for a before b).
        floor: the copy floor's check of the same block: a failed check withholds the ranking.
        label: what is ranked, e.g. "large 8192x4096".

    Returns:
        A Ranking: withheld (no order) where the floor failed, gated by a busy verdict where the machine
        was busy, else ordered closest to the copy first, with every pair judged by analysis.verdicts.
    """
    over = {n: paired_ratio(timings, n, copy) for n in names}
    pairs = [judge_ratio(paired_ratio(timings, a, b)) for i, a in enumerate(names) for b in names[i + 1 :]]
    if not floor.ok:
        reason = "the copy floor failed its check (" + "; ".join(floor.problems) + ")"
        return Ranking(label, [], over, pairs, withheld(f"{label}: the ranking against the copy", reason))
    busy = next((judge_ratio(r) for r in over.values() if r.busy), None)
    order = sorted(names, key=lambda n: over[n].median)
    return Ranking(label, order, over, pairs, busy, {n: k for n in names if (k := slow_rounds(timings[n]))})


def bytes_per_op(fn: Callable[..., Any], *args: Any, copy_of: torch.Tensor | None = None) -> Any:
    """Each ATen op `fn(*args)` issues, with the bytes of the tensors it reads and writes.

    Why: a ratio to the copy reads as "passes over memory" only beside the bytes the source's ops
    must move; pass tensors on the "meta" device and nothing is computed, so the count costs nothing
    at any shape.

    Args:
        fn, args: the function and its arguments (tensors, typically on device="meta").
        copy_of: where given, a `copies` column: (read + written) over one copy of this tensor
            (reading it once and writing it once).

    Returns:
        A pandas.DataFrame with one row per op in call order: op, read, written (bytes)[, copies].
    """
    import pandas as pd
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    def tensor_bytes(tree: Any) -> int:
        return sum(t.nbytes for t in tree_leaves(tree) if isinstance(t, torch.Tensor))

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[dict[str, Any]] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.ops.append(
                {"op": func.overloadpacket.__name__, "read": tensor_bytes((args, kwargs)), "written": tensor_bytes(out)}
            )
            return out

    with Recorder() as recorder:
        fn(*args)
    ops = pd.DataFrame(recorder.ops, columns=["op", "read", "written"])
    if copy_of is not None:
        ops["copies"] = (ops["read"] + ops["written"]) / (2 * copy_of.nbytes)
    return ops
