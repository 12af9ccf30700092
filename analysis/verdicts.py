"""Verdicts: the one place where a comparison becomes a conclusion and its one-line sentence.

Every notebook, tool and test that says "A is slower than B" or "no measurable difference" takes
the words from here, so that the series has one rule for "measurable":

- **measurable**: a paired ratio (the per-round ratios of interleaved timings, analysis.timing)
  whose whole p10-p90 lies at least RESOLUTION (5%) above or below 1.0 (at or above 1.05, at or
  below 1/1.05), measured on a quiet machine;
- **no measurable difference**: any other spread: it holds 1.0, or reaches within RESOLUTION of
  it (separate runs of the series do not agree on so small a difference). That is not a negative
  finding: the sentence says how large a difference the spread still allows, and no conclusion
  follows from it ("X does not explain Y" is never said);
- **busy**: either side was timed while other work took CPU time from this process
  (analysis.contention): the block concludes nothing, whatever the ratio reads;
- **withheld**: a precondition of the comparison failed (the copy floor's check, too few
  samples): the reason is the sentence.

Figures that were not measured in pairs (two ranks' arrival times, two runs' timings) are compared
by their p10-p90 ranges: measurable only where the ranges are apart by at least RESOLUTION, the same
5% (ranges that touch, or lie closer than that, are not: `ranges_apart`).
A statement about repeated steps ("the last rank to arrive also left last") holds only where it
held in every step.

Two timings taken in separate blocks (a condition against a quiet block, a profiled step against
the timer) are compared by their ranges too (`judge_timings`), and conclude nothing where either
block was busy.

Notebooks call `judge_ratio` / `judge_ranges` / `judge_timings` / `judge_steps`, print `verdict_table(...)` and one
line per verdict (`print(verdict)`), and record `verdict.claim(metric)` so that the tests re-check
the sentence against the published numbers (analysis.claims).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from .contention import BUSY_WAITED_FRACTION, Contention, combined

RELATIONS = ("min", "max", "<", "above 1", "below 1", "about 1", "inconclusive", "overlap", "busy")


@dataclass(frozen=True)
class Claim:
    """A conclusion recorded with the published metrics it compares; analysis.claims re-checks it."""

    relation: str
    metrics: tuple[str, ...]
    text: str

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"unknown relation {self.relation!r}; one of {RELATIONS}")

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "metrics": list(self.metrics)}


KINDS = ("slower", "faster", "no measurable difference", "busy", "withheld", "holds", "does not hold", "count", "estimate")


# The band around 1.0 a paired ratio's spread must clear to count as a difference. Separate quiet
# runs of notebook 05 agree on its speed-ups within about 5% (benchmarks/ratio_benchmark.py, whose
# goal this is), and a run with another process beside it moved a 0.99 to 0.98: a spread that
# reaches closer to 1 than this can fall on the other side in the next run, however tight it is.
# The rule asks the whole p10-p90 to clear the band (an interval against a region of practical
# equivalence), not only its median, so that a run that moves a ratio by a little does not flip it.
RESOLUTION = 1.05
# RESOLUTION's share taken off 1 (0.95): a reading lies apart from a range below its p10 x this or above its p90 / this
# (apart_bounds), and a ratio end printed at it reads as on the margin (ratio_bound)
APART_FACTOR = 1 - (RESOLUTION - 1)

# The one phrase for two figures this run does not order by the ratio rule: the table's word for a paired ratio
# whose p10-p90 neither clears the margin around 1 nor lies inside it (inside: "no measurable difference"), and
# the word for a ranking's group of variants whose pair verdicts are not measurable. The table, the rankings, the
# lessons' lines and 05's figure all use it: 05's readers met this one rule under four names ("cannot rank", "not
# ranked apart", "not told apart", "the pair does not rank them") and asked whether they were four rules. It is
# not a finding that the two are equal: a line that prints it without its verdict's sentence (whose words are
# "inconclusive, not a finding that they cost the same") says so, with CANNOT_TELL_ALONE.
CANNOT_TELL = "cannot tell apart"
CANNOT_TELL_ALONE = f"{CANNOT_TELL}, inconclusive"
# The word for a paired ratio (or a reading against a count) whose whole p10-p90 lies within the margin of 1.
NO_DIFFERENCE = "no measurable difference"


def relation_of(p10: float, p90: float) -> str:
    """The rule: what a spread of ratios supports. "above 1" / "below 1" when the whole p10-p90 lies
    at or beyond RESOLUTION on one side of 1.0 (measurable), "about 1" otherwise (no measurable
    difference: the spread holds 1.0, or reaches closer to it than separate runs agree on)."""
    if p10 >= RESOLUTION:
        return "above 1"
    if p90 <= 1 / RESOLUTION:
        return "below 1"
    return "about 1"


def about_one(p10: float, p90: float) -> str:
    """The word for a p10-p90 of ratios the rule puts on neither side of 1, the one place that picks it:
    NO_DIFFERENCE where the whole p10-p90 lies within RESOLUTION of 1 (the noise of this series is the finding),
    CANNOT_TELL where it reaches past that (an inconclusive test); "" where the rule puts it on one side. Why one
    place: 05's exercise 1 said "cannot tell apart from the source count" for a range wholly within 5% of it,
    the glossary's "no measurable difference"."""
    if relation_of(p10, p90) != "about 1":
        return ""
    return NO_DIFFERENCE if _inside_margin(p10, p90) else CANNOT_TELL


def _within_resolution(p10: float, p90: float) -> bool:
    """True for a spread that clears 1.0 but reaches within RESOLUTION of it: a difference this run
    shows that separate runs do not agree on."""
    return (p10 > 1 or p90 < 1) and relation_of(p10, p90) == "about 1"


def _inside_margin(p10: float, p90: float) -> bool:
    """True for a spread whose both ends lie within RESOLUTION of 1.0: the noise of this series, where
    "no measurable difference" is the finding; a wider spread that holds 1 is an inconclusive test."""
    return 1 / RESOLUTION <= p10 and p90 <= RESOLUTION


def ranges_apart(subject_range: tuple[float, float], reference_range: tuple[float, float]) -> str:
    """Which side of the reference's p10-p90 the subject's lies on, "above" or "below", or "" where the
    two cannot be told apart: they overlap, touch, or the gap between the nearest ends is under
    RESOLUTION - 1 (5%) of the larger end's size. Why the margin: the paired rule's 5% (separate runs
    of this series differ by about that), so two ranges 0.005 apart (01's exercise 2) are not a finding.

    Args:
        subject_range, reference_range: each one's (p10, p90).

    Returns:
        "above", "below" or "".
    """
    (a10, a90), (b10, b90) = subject_range, reference_range
    for side, low, high in (("above", b90, a10), ("below", a90, b10)):  # low end of the upper range past the other's top
        if high - low > (RESOLUTION - 1) * max(abs(low), abs(high)):
            return side
    return ""


def apart_bounds(reference_range: tuple[float, float]) -> tuple[float, float]:
    """The values one reading of a positive quantity must pass to lie apart from `reference_range` by
    `ranges_apart`'s rule: strictly below the first, or strictly above the second. Why: a line that
    prints its cut-offs (09: "cut-offs: below x0.867 ... or above x1.124") takes them from the rule itself.

    Args:
        reference_range: the reference's (p10, p90), both above zero.

    Returns:
        (below, above): p10 less the margin's share, p90 over one less that share.
    """
    low, high = reference_range
    return low * APART_FACTOR, high / APART_FACTOR


# A reading within this distance of a cut-off (apart_bounds) is "at the edge": a margin one point wider or
# narrower would flip it, so its miss is no evidence either way ("misses by 0.002" read as a finding).
EDGE = 0.01


def cut_off_miss(value: float, cut_offs: tuple[float, float]) -> str:
    """How far a reading inside the cut-offs (`apart_bounds`) stays from the nearer one, in words.

    Args:
        value: the reading, between the two cut-offs.
        cut_offs: (below, above) from `apart_bounds`.

    Returns:
        "at the edge: not evidence either way" within EDGE of a cut-off, else e.g. "misses by 0.047".
    """
    miss = min(value - cut_offs[0], cut_offs[1] - value)
    return "at the edge: not evidence either way" if miss < EDGE else f"misses by {miss:.3f}"


def ratio_bound(value: float, median: float | None = None) -> str:
    """A ratio's p10 or p90 printed with the decimals that place it against 1.0, the band's edges
    (RESOLUTION, 1/RESOLUTION) and the median beside it: a p10 of 1.0497 beside "no measurable
    difference" prints as 1.0497, not as a 1.05 that reads as clearing the band; a p90 of 0.361 beside
    a median of 0.356 does not print as the median's 0.36. The margin read as "5% below 1" (0.95) is an
    edge too: a p10 of 0.9496 beside "past the 5% margin" prints as 0.9496, not as a 0.950 on the edge."""
    limits = (1.0, RESOLUTION, 1 / RESOLUTION, APART_FACTOR) + (() if median is None else (median,))
    return max((decimals_apart(value, limit) for limit in limits), key=len)


def _ratio_figures(median: float, p10: float, p90: float, pairing: str) -> tuple[str, str]:
    """A ratio's median and "per-<pairing> p10-p90 a-b" at one precision, the fewest decimals (2 to 4)
    that set each apart from 1.0, the band's edges and the other two: "0.98-1.051" read as two
    kinds of number."""
    texts = (ratio_bound(p10, median), ratio_bound(p90, median), _median_text(median, p10, p90))
    places = max(len(text.split(".")[1]) for text in texts)
    # below 1 the sentence also prints the factor 1 / median to 2 decimals: the median gets the decimals that
    # give back that factor by hand (04's reader divided 1 by "0.35x" and found 2.86, not the printed 2.89x)
    while 0 < median < 1 and places < 4 and f"{1 / round(median, places):.2f}" != f"{1 / median:.2f}":
        places += 1
    return f"{median:.{places}f}", f"{_per(pairing)} p10-p90 {p10:.{places}f}-{p90:.{places}f}"


def _per(pairing: str) -> str:
    """ "per-round", but "per off step": a hyphen only joins a one-word pairing (08 printed "per-off step")."""
    return f"per {pairing}" if " " in pairing else f"per-{pairing}"


def _median_text(median: float, p10: float, p90: float) -> str:
    """The median with the decimals that keep it apart from its p10 and p90 (04 printed "0.36x (p10-p90
    0.34-0.36)", a median that seemed to sit on its own p90)."""
    return max((decimals_apart(median, bound) for bound in (p10, p90)), key=len)


def decimals_apart(value: float, limit: float) -> str:
    """`value` printed with as many decimals (2 to 4) as it takes to differ from `limit` where it
    does: a p10 of 1.0036 beside "slower" prints as 1.004, not as a 1.00 that reads as holding 1.0;
    "0.2503 > 0.25", not "0.25 > 0.25"."""
    for places in (2, 3, 4):
        text = f"{value:.{places}f}"
        if value == limit or text != f"{limit:.{places}f}":
            return text
    return f"{value:.4f}"


@dataclass(frozen=True)
class Verdict:
    """One comparison judged: what was compared, the verdict's kind and its one-line sentence.

    `kind` is one of KINDS; `median`, `p10`, `p90` are the ratio (or, for ranges, the subject's
    figures) it rests on; `seen` says what the busy check saw. `form` says what those figures are
    ("ratio": a paired ratio; "ranges": two ranges of `unit`, `median` the subject's median where
    `judge_ranges` was given it, else the midpoint of the subject's p10-p90 (`median_is_midpoint`);
    "busy range": a busy `judge_timings`, `median` the subject's median; "too few": a
    `judge_timings` withheld for want of samples, likewise; "too few ranges": a `judge_ranges`
    withheld for want of samples, `median` as for "ranges"; "steps": `median` the
    steps that held out of `total`; "count", "estimate", "withheld"),
    so that the table never shows a midpoint or a count under a ratio's heading."""

    subject: str
    reference: str
    kind: str
    sentence: str
    median: float = math.nan
    p10: float = math.nan
    p90: float = math.nan
    seen: str = ""
    form: str = "ratio"
    unit: str = ""
    total: int = 0
    reference_range: str = ""  # a range verdict's reference p10-p90, as printed: the table shows what the subject was set against
    direction_word: str = ""  # judge_ratio's own word for the side of 1 ("longer compute"), shown in the table
    within_noise: bool = False  # "no measurable difference" with both sides inside the margin: the noise is the finding
    not_apart: str = ""  # ranges not told apart: how ("one range lies inside the other", "the ranges overlap", ...)
    reason: str = ""  # judge_ranges' inconclusive verdict: why, from the rule's own numbers (how + the joint span); 02 prints it
    median_is_midpoint: bool = False  # a range verdict's `median` is the midpoint of the subject's p10-p90, not its median

    def __str__(self) -> str:
        return self.sentence

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """A notebook cell that ends in a Verdict shows its sentence, as print() would (IPython's hook)."""
        printer.text(self.sentence)

    @property
    def figure_parts(self) -> tuple[str, str]:
        """A paired ratio's median and p10-p90 as its sentence prints them, ("1.001", "p10-p90 0.946-1.008"): the
        decimals that place each bound against 1 and the margin's edges. Why: 05 printed "p10-p90 0.95-1.01"
        beside "cannot tell apart", a p10 of 0.946 that read as inside the margin."""
        shown, spread = _ratio_figures(self.median, self.p10, self.p90, "round")
        return shown, spread.removeprefix("per-round ")

    @property
    def figures(self) -> str:
        """`figure_parts` in one phrase, "1.001, p10-p90 0.946-1.008"."""
        return ", ".join(self.figure_parts)

    @property
    def measurable(self) -> bool:
        """True for a difference the rule accepts (slower/faster on a quiet machine, a statement that held every time)."""
        return self.kind in ("slower", "faster", "holds")

    @property
    def relation(self) -> str:
        """The relation a claim records for this verdict (analysis.claims). A paired ratio withheld
        for want of rounds is a reading, not a verdict: its claim records the side of 1 its printed
        p10-p90 lies on, so that the re-check compares the printed figures with the published ones."""
        if self.kind == "busy":
            return "busy"
        if self.kind == "withheld" and self.form == "ratio" and math.isfinite(self.p10) and math.isfinite(self.p90):
            return relation_of(self.p10, self.p90)
        if self.kind == "no measurable difference" and self.form == "ratio" and not self.within_noise:
            return "inconclusive"  # "about 1" beside "inconclusive, not a finding" read as a finding
        return {"slower": "above 1", "faster": "below 1"}.get(self.kind, "about 1")

    def claim(self, *metrics: str) -> Claim:
        """A claim (re-checked by analysis.claims) that this sentence rests on the published ratio `metrics`."""
        return Claim(self.relation, tuple(metrics), self.sentence)

    def ranges_claim(self, subject_metric: str, reference_metric: str) -> Claim:
        """The claim of a range verdict (`judge_ranges` / `judge_timings`) on published metrics: each
        metric's value is its median and `<metric>_p10` / `<metric>_p90` its range. A range apart
        records "<" from the lower to the higher median, ranges not told apart record "overlap" on
        the four bounds, a busy verdict "busy"."""
        pair = (subject_metric, reference_metric)
        if self.kind == "busy":
            return Claim("busy", pair, self.sentence)
        if self.kind in ("slower", "faster"):
            return Claim("<", pair[::-1] if self.kind == "slower" else pair, self.sentence)
        bounds = tuple(f"{m}_{q}" for m in pair for q in ("p10", "p90"))
        return Claim("overlap", bounds, self.sentence)

    @property
    def short_word(self) -> str:
        """A paired ratio's "no measurable difference" verdict without its reason: NO_DIFFERENCE where the whole
        p10-p90 lies inside the margin, else CANNOT_TELL_ALONE (`word` adds the reason; 05's line against the
        copy prints this after its own p10-p90)."""
        return NO_DIFFERENCE if self.within_noise else CANNOT_TELL_ALONE

    @property
    def word(self) -> str:
        """The verdict as the table shows it: a range verdict compares figures, not times, so its
        "slower"/"faster" read "higher"/"lower", and "no measurable difference" reads "cannot tell apart,
        inconclusive (p10-p90 holds 1 and reaches past the 5% margin)" (CANNOT_TELL_ALONE: the word stands without its sentence in tables and
        take-home lines, where "cannot tell apart ... 1.21" read as a 21% cost) or "inconclusive (the
        ranges overlap)", never a bare negative (`kind`, which claims record, stays as it is)."""
        if self.kind == "no measurable difference":  # never read as a negative finding
            if self.form == "ranges" and self.within_noise:
                return f"no measurable difference (ranges within {margin_percent()}% of each other)"
            if self.form == "ranges":
                return f"inconclusive ({self.not_apart or f'ranges not {margin_percent()}% apart'})"
            # "p10-p90", not "spread": 05's glossary gives "spread" as (p90 - p10) / median too
            if self.within_noise:
                return f"{self.short_word} (p10-p90 within {margin_percent()}% of 1)"
            if _within_resolution(self.p10, self.p90):
                return f"{self.short_word} (p10-p90 reaches within {margin_percent()}% of 1)"
            # "(p10-p90 holds 1)" beside 03's "no measurable difference", whose range held 1 too
            return f"{self.short_word} (p10-p90 holds 1 and reaches past the {margin_percent()}% margin)"
        if self.form == "ranges":
            return {"slower": "higher", "faster": "lower"}.get(self.kind, self.kind)
        if self.form == "steps" and self.kind == "does not hold" and self.median > 0:  # "2 of 3 | does not hold" read as none
            return "not in every step"
        return self.direction_word or self.kind

    def row(self) -> dict[str, Any]:
        """This verdict as one row of `verdict_table`: what was compared, what the figures are, the
        figure itself, the p10 and p90 it rests on (blank where there are none) and the verdict."""
        blank = ""
        if self.form == "ratio" and all(map(math.isfinite, (self.median, self.p10, self.p90))):
            # the decimals that keep a bound apart from the band's edges: 05 showed a p10 of 1.0498 as 1.050
            # beside "not measurable (spread reaches within 5% of 1)", a bound that seemed to clear the band
            shown, _ = _ratio_figures(self.median, self.p10, self.p90, "round")
            places = max(3, len(shown.split(".")[1]))
            ratio_row = ("median ratio", *(round(v, places) for v in (self.median, self.p10, self.p90)))
        else:
            ratio_row = ("median ratio", _round(self.median), _round(self.p10), _round(self.p90))
        # a range row's figures are the subject's; the reference's p10-p90 is in the comparison: the label says
        # whose (08 read the value, p10 and p90 beside the reference's range as ambiguous)
        whose = f"subject's {'p10-p90 midpoint' if self.median_is_midpoint else 'median'} ({self.unit})"
        subject_figures = (_round(self.median), _round(self.p10), _round(self.p90))
        figure, value, p10, p90 = {
            "ratio": ratio_row,
            "ranges": (whose, *subject_figures),
            "busy range": (whose, *subject_figures),
            "too few": (f"{whose}, too few samples", *subject_figures),
            "too few ranges": (f"{whose}, too few samples", *subject_figures),
            "steps": ("steps it held in", f"{self.median:.0f} of {self.total}", blank, blank),
            "count": (f"count ({self.unit})", _round(self.median), blank, blank),
            "estimate": (f"estimate ({self.unit})", _round(self.median), blank, blank),
        }.get(self.form, (blank, blank, blank, blank))
        if self.form == "ratio":
            comparison = f"{self.subject} / {self.reference}"
        else:
            comparison = f"{self.subject} against {self.reference}" if self.reference else self.subject
            if self.reference_range:  # p10 and p90 are the subject's: the reference's range is named beside it
                # right after the reference's name, so it is the reference's ("the reference's" was undefined, 08;
                # repeating the name read as a stutter)
                comparison += f" (p10-p90 {self.reference_range})"
        return {"comparison": comparison, "figure": figure, "value": value, "p10": p10, "p90": p90, "verdict": self.word}


def _round(value: float) -> float:
    return round(value, 3) if isinstance(value, float) and math.isfinite(value) else value


def _allowed(p10: float, p90: float, faster: str, slower: str, pairing: str = "round", per_round: Any = None) -> str:
    """What a spread that holds 1.0 says, in words: the honest end of "no measurable difference".

    It names the rounds (or steps), not the variants, and no percentages: "between 41% faster and 1%
    slower" beside a measured "1.69x faster" read as two sizes of one effect (07), and a p10 below 1
    read as one variant being cheaper. Given the per-round ratios it counts each side ("with 2 of 15
    rounds below 1, 13 above"): "some faster and others slower" read as a balance where 2 of 15 set the
    p10 (the count 05's line test prints, lesson.study.line_test_answer).
    """
    if p10 < 1 < p90:
        if per_round is None:
            return f"the p10-p90 holds 1, with some {pairing}s {faster} and others {slower}"
        values = [float(value) for value in per_round]
        below, above = sum(value < 1 for value in values), sum(value > 1 for value in values)
        # the sides of 1, not the verdict words: "faster" means a gap beyond the margin
        return f"the p10-p90 holds 1, with {below} of {len(values)} {pairing}s below 1, {above} above"
    return "the p10-p90 touches 1"


def _percent(value: float) -> str:
    """A percentage without decimals, unless that would print a bound that is not 0 as "0"."""
    text = f"{value:.0f}"
    return decimals_apart(value, 0.0) if value != 0 and float(text) == 0 else text


def margin_percent() -> str:
    """RESOLUTION as the margin every verdict sentence names ("5"); read at call time, as tests may change it."""
    return _percent((RESOLUTION - 1) * 100)


def judge_ratio(ratio: Any, faster: str = "faster", slower: str = "slower") -> Verdict:
    """Judge a paired ratio by the series' one rule.

    Args:
        ratio: an analysis.timing.PairedRatio, or anything with `numerator`, `denominator`,
            `median`, `p10`, `p90` and optionally `pairing` and `contention` (a Contention or None).
        faster, slower: the words for below and above 1 (e.g. "fewer", "more").

    Returns:
        A Verdict whose sentence is one line: "A took 2.00x the time of B: slower
        (per-round p10-p90 1.95-2.05)" (below 1: "A took 0.50x the time of B: 2.00x faster (...)"), "this run cannot tell A and B apart: the p10-p90 holds 1, with 2 of 15 rounds
        below 1, 13 above (...): inconclusive, not a finding that they cost the same" (a spread that
        reaches past the 5% margin) or "no measurable difference between A and B: the whole p10-p90 lies within
        5% of 1 (...)" (as `judge_ranges` words ranges inside the margin; 08's "cannot rank rank 1 against
        rank 0" stumbled), or "not measurable here: the machine was busy (...)".
        A ratio of fewer than MIN_RANGE_SAMPLES rounds (`per_round`) is a "withheld" reading, its
        p10-p90 about its smallest and largest: "A / B read 1.16 (per-step p10-p90 1.08-1.30) over
        3 steps, too few for a spread (a verdict needs 5 steps): a reading, not a verdict".
    """
    contention: Contention | None = getattr(ratio, "contention", None)
    busy_seen = contention.seen(short=True) if contention is not None and contention.busy else None
    figures = (float(ratio.median), float(ratio.p10), float(ratio.p90))
    pairing = getattr(ratio, "pairing", "round")
    rounds = getattr(ratio, "per_round", None)
    if busy_seen is None and rounds is not None and len(rounds) < MIN_RANGE_SAMPLES:
        return _too_few_rounds(ratio.numerator, ratio.denominator, figures, pairing, len(rounds))
    return _judge(ratio.numerator, ratio.denominator, figures, pairing, busy_seen, faster, slower, rounds)


def _too_few_rounds(num: str, den: str, figures: tuple[float, float, float], pairing: str, n: int) -> Verdict:
    """A paired ratio of fewer than MIN_RANGE_SAMPLES rounds: a reading, as `_reading` words one."""
    med, p10, p90 = figures
    shown, spread = _ratio_figures(med, p10, p90, pairing)
    text = (
        f"{num} / {den} read {shown} ({spread}) over {n} {pairing}{'' if n == 1 else 's'}, too few for a spread "
        f"(a verdict needs {MIN_RANGE_SAMPLES} {pairing}s): a reading, not a verdict"
    )
    return Verdict(subject=num, reference=den, kind="withheld", sentence=text, median=med, p10=p10, p90=p90)


def _judge(
    num: str,
    den: str,
    figures: tuple[float, float, float],
    pairing: str,
    busy_seen: str | None,
    faster: str,
    slower: str,
    rounds: Any = None,
) -> Verdict:
    med, p10, p90 = figures
    shown, spread = _ratio_figures(med, p10, p90, pairing)
    fields = {"subject": num, "reference": den, "median": med, "p10": p10, "p90": p90}
    if busy_seen is not None:
        text = f"not measurable here: the machine was busy ({busy_seen}); {num} / {den} read {shown} ({spread}) and concludes nothing"
        return Verdict(kind="busy", sentence=text, seen=busy_seen, **fields)
    relation = relation_of(p10, p90)
    if relation == "about 1":
        if _within_resolution(p10, p90):
            side = "above" if p10 >= 1 else "below"  # one side of 1, too near it for this run to rank them
            allowed = f"the p10-p90 lies {side} 1 but reaches within {margin_percent()}% of it"
        else:
            allowed = _allowed(p10, p90, faster, slower, pairing, rounds)
        # the reason first, and "no measurable difference" only for a spread inside the margin on both sides: beside
        # a wide spread (07's 0.91-1.86, median 1.28) or one that clears 1 (04's 1.04-1.11) it read as "they cost the same"
        figures_shown = f"median {_per(pairing)} {num} / {den} = {shown}, {spread}"
        noise = about_one(p10, p90) == NO_DIFFERENCE
        if noise:
            # not "cannot tell apart", the inconclusive verdict's words (glossary "verdict words")
            text = f"no measurable difference between {num} and {den}: the whole p10-p90 lies within {margin_percent()}% of 1 ({figures_shown})"
        else:
            text = f"this run cannot tell {num} and {den} apart: {allowed} ({figures_shown}): inconclusive, not a finding that they cost the same"
        return Verdict(kind="no measurable difference", sentence=text, within_noise=noise, **fields)
    word = slower if relation == "above 1" else faster
    # above 1 the factor is the ratio itself: said once (01's "took 1.29x the time of tiny bare: 1.29x costlier")
    said = word if med > 1 else f"{1 / med:.2f}x {word}"
    text = f"{num} took {shown}x the time of {den}: {said} ({spread})"
    return Verdict(kind="slower" if relation == "above 1" else "faster", sentence=text, direction_word=word, **fields)


def judge_ranges(
    subject: str,
    subject_range: tuple[float, float],
    reference: str,
    reference_range: tuple[float, float],
    unit: str = "us",
    decimals: int = 1,
    counts: tuple[int, int] | None = None,
    spread: str = "p10-p90",
    median: float | None = None,
) -> Verdict:
    """Compare two figures that were not measured in pairs by their p10-p90 ranges.

    Args:
        subject, reference: the names of the two figures.
        subject_range, reference_range: each one's (p10, p90).
        unit: printed after the numbers.
        decimals: the fewest the numbers are printed with (2 for ratios, whose ranges 1 decimal would
            blur); more (up to 4) where the two nearest ends would print alike but differ, so that a
            reader sees ranges that are apart as apart (`_decimals_for`).
        counts: (subject's, reference's) number of samples behind each range, where known: the p10-p90
            of fewer than MIN_RANGE_SAMPLES is about their smallest and largest, no spread to judge by.
        spread: what the ranges are, for the sentence (e.g. "quotients of the p10-p90 ranges" for a
            range built from two others); the rule is the same.
        median: the subject's median, where known: `verdict_table` shows it as the subject's figure
            (without it, the midpoint of the subject's p10-p90, labelled so). The rule reads the ranges only.

    Returns:
        "slower" (here: higher) when the subject's whole range lies above the reference's, "faster"
        (lower) when below, by at least RESOLUTION (`ranges_apart`), else "no measurable difference":
        ranges that overlap, touch or lie closer cannot be told apart. With `counts` below MIN_RANGE_SAMPLES on either side, a "withheld" reading
        (form "too few ranges"): where the subject lies against the reference's range, not a verdict.
    """
    (a10, a90), (b10, b90) = subject_range, reference_range
    f = f",.{_decimals_for(subject_range, reference_range, decimals)}f"
    few = [(name, n) for name, n in zip((subject, reference), counts or ()) if n < MIN_RANGE_SAMPLES]
    centre = {"median": (a10 + a90) / 2, "median_is_midpoint": True} if median is None else {"median": float(median)}
    if few:
        fields = {"p10": a10, "p90": a90, **centre, "form": "too few ranges", "unit": unit}
        text = _reading(subject, (a10, a90), reference, (b10, b90), unit, f, *few[0])
        return Verdict(subject=subject, reference=reference, kind="withheld", sentence=text, **fields)
    shown = f"{a10:{f}}-{a90:{f}} {unit} against {b10:{f}}-{b90:{f}} {unit}"  # the sentence names both first
    fields = {"subject": subject, "reference": reference, **centre, "p10": a10, "p90": a90, "form": "ranges", "unit": unit}
    fields["reference_range"] = f"{b10:{f}}-{b90:{f}} {unit}"
    side = ranges_apart((a10, a90), (b10, b90))
    if side:
        kind = "slower" if side == "above" else "faster"
        return Verdict(kind=kind, sentence=f"{subject} measurably {side} {reference}: {shown} ({spread})", **fields)
    why = _why_not_apart((a10, a90), (b10, b90), unit, f)
    low, high = min(a10, b10), max(a90, b90)
    noise = low > 0 and high <= RESOLUTION * low  # both whole ranges inside the margin: the noise, not a test that failed
    if noise:
        text = f"no measurable difference between {subject} and {reference}: {why} ({shown}, {spread})"
    else:  # 01's warm-up ranges 3.4-3.7 against 3.1-3.3 ms read "no measurable difference" as "no difference"
        text = f"this run cannot tell {subject} and {reference} apart: {why}: inconclusive, not a finding that they are equal ({shown}, {spread})"
    how = _how_not_apart((a10, a90), (b10, b90))
    # 02's "cannot tell apart, inconclusive (5% margin)" for medians 2.8% apart left the rule off the page
    reason = (
        ""
        if noise or low <= 0
        else f"{how}, and together they span {high / low - 1:.1%}, more than the {margin_percent()}% margin"
    )
    return Verdict(kind="no measurable difference", sentence=text, within_noise=noise, not_apart=how, reason=reason, **fields)


def _ranges_not_apart(a: tuple[float, float], b: tuple[float, float]) -> tuple[str, tuple[float, float], tuple[float, float]]:
    """How two ranges `ranges_apart` does not tell apart sit against each other: "overlap", "touch" or "gap"
    (a gap under the margin), with the lower range (by p10) and the higher one."""
    low, high = sorted((a, b))  # by p10: the lower range first
    return ("overlap" if high[0] < low[1] else "touch" if high[0] == low[1] else "gap"), low, high


def _how_not_apart(a: tuple[float, float], b: tuple[float, float]) -> str:
    """The table's short reason two ranges were not told apart (08: "ranges not 5% apart" understated a range
    lying wholly inside the other)."""
    if (a[0] >= b[0] and a[1] <= b[1]) or (b[0] >= a[0] and b[1] <= a[1]):
        return "one range lies inside the other"
    how = _ranges_not_apart(a, b)[0]
    return f"ranges not {margin_percent()}% apart" if how == "gap" else f"the ranges {how}"


def _why_not_apart(a: tuple[float, float], b: tuple[float, float], unit: str, f: str) -> str:
    """Which condition held for two ranges `ranges_apart` does not tell apart, named as it held (a reader
    who checks the numbers finds ranges 0.8% apart, not an overlap), the gap in the ranges' unit and
    format `f` first (01's reader found "0.4% apart (the gap over the larger end)" cryptic)."""
    how, low, high = _ranges_not_apart(a, b)
    if how != "gap":
        return f"the ranges {how}"
    larger = max(abs(high[0]), abs(low[1]))
    gap = high[0] - low[1]
    # the gap between the ends as printed (ends printed 13.7 and 13.8 beside "lie 0.2 apart");
    # the share is of the larger nearest end; 01's reader lost the thread in "0.3% of 3,079.5 us (the larger of ...)"
    shown = float(f"{high[0]:{f}}".replace(",", "")) - float(f"{low[1]:{f}}".replace(",", ""))
    return f"the ranges are {shown:{f}} {unit} ({gap / larger:.1%}) from each other, under the {margin_percent()}% margin"


def _decimals_for(a: tuple[float, float], b: tuple[float, float], decimals: int) -> int:
    """The decimals two ranges are printed with: `decimals`, or more (up to 4) where their two nearest
    ends differ but would print alike ("2.7-3.0 against 3.0-3.2" judged apart reads as a broken rule),
    or where an end that is not zero would print as zero (08's "rank 1's wait 0.0-0.0 ms" hid a range)."""
    near = min(((a[0], b[1]), (a[1], b[0])), key=lambda ends: abs(ends[0] - ends[1]))
    for places in range(decimals, 5):
        told_apart = near[0] == near[1] or f"{near[0]:.{places}f}" != f"{near[1]:.{places}f}"
        zero_hidden = any(end != 0 and float(f"{end:.{places}f}") == 0 for end in (*a, *b))
        if told_apart and not zero_hidden:
            return places
    return 4


def judge_timings(
    subject: str,
    timing: Any,
    reference: str,
    reference_timing: Any,
    unit: str = "us",
    decimals: int = 1,
    spread: str = "p10-p90",
) -> Verdict:
    """Compare two timings taken in separate blocks (not paired round by round) by their p10-p90
    ranges, as `judge_ranges` does; where either block was timed on a busy machine, conclude nothing.

    Args:
        subject, reference: the names of the two timings, e.g. "one busy process: small call", "quiet: small call".
        timing, reference_timing: analysis.timing.Timing (or anything with `p10_us`, `p90_us`,
            `median_us` and `contention`, a Contention or None).
        unit, decimals: how the numbers are printed ("x" and 2 where the samples are per-round ratios;
            more decimals where the nearest ends would print alike, as in `judge_ranges`).
        spread: what each side's p10/p90 are, for the sentence (`judge_ranges`).

    Returns:
        A "busy" Verdict ("not measurable here: the machine was busy (...)", each side's median and
        p10-p90, so that the reader sees the spread it would have been judged by) when either block's
        contention says busy; a "withheld" one (a reading: where the subject lies against the
        reference's range) when either holds fewer than MIN_RANGE_SAMPLES samples; else
        `judge_ranges` of the two ranges in us (touching is not apart).
    """
    busy = [t.contention for t in (timing, reference_timing) if t.contention is not None and t.contention.busy]
    if busy:
        seen = busy[0].seen(short=True)
        f = f",.{decimals}f"
        read = [f"{t.median_us:{f}} {unit} ({spread} {t.p10_us:{f}}-{t.p90_us:{f}})" for t in (timing, reference_timing)]
        text = f"not measurable here: the machine was busy ({seen}); {subject} read {read[0]} against {reference} {read[1]} and concludes nothing"
        fields = {"p10": timing.p10_us, "p90": timing.p90_us, "median": timing.median_us, "form": "busy range", "unit": unit}
        return Verdict(subject=subject, reference=reference, kind="busy", sentence=text, seen=seen, **fields)
    few = [(name, t) for name, t in ((subject, timing), (reference, reference_timing)) if _samples(t) < MIN_RANGE_SAMPLES]
    if few:
        name, t = few[0]
        (a10, a90), (b10, b90) = (timing.p10_us, timing.p90_us), (reference_timing.p10_us, reference_timing.p90_us)
        text = _reading(subject, (a10, a90), reference, (b10, b90), unit, f",.{decimals}f", name, _samples(t))
        fields = {"p10": a10, "p90": a90, "median": timing.median_us, "form": "too few", "unit": unit}
        return Verdict(subject=subject, reference=reference, kind="withheld", sentence=text, **fields)
    ranges = (timing.p10_us, timing.p90_us), (reference_timing.p10_us, reference_timing.p90_us)
    return judge_ranges(subject, ranges[0], reference, ranges[1], unit, decimals, spread=spread, median=timing.median_us)


# The fewest samples whose p10-p90 `judge_timings` judges: of fewer, p10 and p90 are about their
# smallest and largest (of one, the reading itself), which says nothing of the spread.
MIN_RANGE_SAMPLES = 5


def _reading(
    subject: str, a: tuple[float, float], reference: str, b: tuple[float, float], unit: str, f: str, name: str, n: int
) -> str:
    """The sentence of a comparison withheld for want of samples: where the subject lies, not a verdict (higher/lower than, not the verdict words above/below)."""
    (a10, a90), (b10, b90) = a, b
    where = (
        "higher than" if a10 > b90 else "lower than" if a90 < b10 else "inside" if b10 <= a10 and a90 <= b90 else "overlapping"
    )
    read = f"{a10:{f}}" if a10 == a90 else f"{a10:{f}}-{a90:{f}}"
    return (
        f"{subject} read {read} {unit}, {where} the p10-p90 of {reference} ({b10:{f}}-{b90:{f}} {unit}): {name} is "
        f"{'one reading, with no spread of its own' if n == 1 else f'{n} readings, too few for a spread'} "
        f"(a verdict needs {MIN_RANGE_SAMPLES} readings): not a verdict"
    )


def _samples(timing: Any) -> int:
    """How many samples a timing holds; a figure without `samples_us` counts as enough."""
    samples = getattr(timing, "samples_us", None)
    return MIN_RANGE_SAMPLES if samples is None else len(samples)


def judge_steps(statement: str, held: int, total: int, pairing: str = "step", scope: str = "this run") -> Verdict:
    """A statement about repeated steps holds only where it held in every one of at least
    MIN_RANGE_SAMPLES (5) steps, the readings any verdict of the series needs; a step where it failed
    refutes it as a rule from 3 steps on.

    Args:
        statement: what was checked, e.g. "the last rank to arrive also left last".
        held: in how many steps it held; total: how many were checked.
        pairing: what was repeated ("step", "call").
        scope: what the steps came from, for "... of <scope>, not in every one" (e.g. "these recorded traces"
            where the steps were not this run's).

    Returns:
        kind "holds" ("... in every one of the 8 steps") or "does not hold" ("... in 5 of 8 steps
        of this run, not in every one", "... in none of the 8 steps"); "withheld" where it held in all of
        fewer than 5 steps ("too few steps for a rule (4; a verdict needs 5): ... in 4 of 4 steps") or where fewer than 3 steps were checked: two steps show no rule either way.
    """
    fields = {"subject": statement, "reference": "", "median": float(held), "form": "steps", "total": total}
    plural = pairing if total == 1 else f"{pairing}s"
    if held == total and total >= MIN_RANGE_SAMPLES:
        return Verdict(kind="holds", sentence=f"{statement}: in every one of the {total} {pairing}s", **fields)
    if total < 3 or held == total:
        # the hedge first: "rank 1 arrived last: in 2 of 2 collectives: 2 readings, too few ..." read as a finding (08)
        too_few = f"too few {pairing}s for a rule ({total}; a verdict needs {MIN_RANGE_SAMPLES})"
        return Verdict(kind="withheld", sentence=f"{too_few}: {statement} in {held} of {total} {plural}", **fields)
    if held == 0:  # "in 0 of 5 steps, not a rule" read as if it nearly held
        return Verdict(kind="does not hold", sentence=f"{statement}: in none of the {total} {plural}", **fields)
    return Verdict(
        kind="does not hold", sentence=f"{statement}: in {held} of {total} {plural} of {scope}, not in every one", **fields
    )


def counted(
    subject: str, count: float, unit: str, reference: str, reference_count: float, detail: str = "", decimals: int = 0
) -> Verdict:
    """A count read from a trace (kernels, passes over memory) set against a reference count: no
    spread and no rule of measurability, so the sentence states both counts and their ratio, nothing more.

    Args:
        subject: what was counted, with its origin (e.g. "an NVIDIA H100, one naive call").
        count: the count; unit: what it counts ("full-size reads/writes").
        reference: what it is set against ("a fused call"); reference_count: that one's count.
        detail: a qualifier printed after the count, e.g. "7 of them float32".
        decimals: printed decimals of both counts, for a summed quantity (ms of kernel time) shown beside a
            table that prints it to the same decimals (08's reader subtracted whole ms and missed by one).

    Returns:
        kind "count", `median` the count, `p10`/`p90` the ratio count / reference_count.
    """
    ratio = count / reference_count if reference_count else math.nan
    text = f"{subject}: {count:,.{decimals}f} {unit}" + (f" ({detail})" if detail else "")
    text += f" against {reference_count:,.{decimals}f} for {reference}, {ratio:.1f}x"
    fields = {"median": float(count), "p10": ratio, "p90": ratio, "form": "count", "unit": unit}
    return Verdict(subject=subject, reference=reference, kind="count", sentence=text, **fields)


def estimate(subject: str, values: dict[str, float], unit: str, basis: str, cannot_show: str, decimals: int = 0) -> Verdict:
    """A figure computed from a model, not measured: the sentence says "about", names the basis and
    what the model cannot show, so an estimate is never read as a measurement.

    Args:
        subject: what is estimated ("a fused call's kernel time on the naive shape").
        values: where -> value, e.g. {"an NVIDIA H100": 16.7, "an AMD MI300X": 12.9}.
        unit: the values' unit; decimals: printed decimals.
        basis: how it was computed ("a byte model from traces recorded by TraceLens, not this run").
        cannot_show: what the model leaves out ("launch overhead and the gaps between kernels").

    Returns:
        kind "estimate", `median` the first value.
    """
    listed = ", ".join(f"about {v:,.{decimals}f}{f' {unit}' if unit else ''} on {where}" for where, v in values.items())
    text = f"{subject}: {listed} (estimated, not measured: {basis}; this estimate cannot show {cannot_show})"
    first = next(iter(values.values()), math.nan)
    return Verdict(subject=subject, reference="", kind="estimate", sentence=text, median=float(first), form="estimate", unit=unit)


def withheld(subject: str, reason: str) -> Verdict:
    """A comparison that must not be made, e.g. a ranking whose copy floor failed its check."""
    return Verdict(subject=subject, reference="", kind="withheld", sentence=f"{subject}: withheld, {reason}", form="withheld")


def verdict_table(verdicts: Iterable[Verdict]) -> Any:
    """The verdicts as a table (pandas.DataFrame), one row each: comparison ("A / B" for a paired
    ratio, "A against B (p10-p90 of B)" for ranges), figure (what the value is: "median ratio",
    "subject's median (us)" or "subject's p10-p90 midpoint (us)" for ranges, whose p10 and p90 are
    the subject's too, "steps it held in", ...), value, p10, p90 and verdict (`Verdict.word`)."""
    import pandas as pd

    return pd.DataFrame([v.row() for v in verdicts])


def machine_line(timings: dict[str, Any], block: str = "timing", full: bool = False) -> str:
    """One line on whether other work took CPU time while these timings ran (they share one
    interleaved block): printed beside every timed comparison, so a busy machine is never silent.

    Args:
        timings: name -> a Timing (its `.contention`), or name -> a `Contention` itself (a block
            that is not a Timing, such as a profiled loop measured with `contention_between`).
        block: what the block did, for the sentence ("timing", "profiling").
        full: every counter (appendix A1 shows what each one saw), not the short form the lessons print.
    """
    contention = combined([c for c in (getattr(t, "contention", t) for t in timings.values()) if isinstance(c, Contention)])
    if contention is None or contention.busy is None:
        return f"CPU contention while {block}: not measured on this system (no /proc schedstat)"
    if contention.busy:
        what = "these timings" if block == "timing" else "that block"
        return f"BUSY: the machine was busy while {block} ({contention.seen(short=not full)}); comparisons drawn from {what} conclude nothing"
    # the threshold named with whose wait it counts: 04's reader found "quiet" beside "some task ... waited 7%"
    # unexplained, 06's "other tasks waited 11%" beside "BUSY from 10%" a contradiction
    whose = "this process waits" if contention.waited_fraction is not None else "the machine's tasks wait"
    return f"quiet while {block} ({contention.seen(short=not full)}; BUSY when {whose} {BUSY_WAITED_FRACTION:.0%} or more)"
