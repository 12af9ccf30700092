"""No measured quantity in a notebook's static text.

A sentence typed into markdown cannot follow the run: "the first compile adds about 20 s" stays
in the text on the machine where it took 4 s. So every markdown cell of every notebook is scanned
for a number with a unit of time, memory or a ratio (s, ms, us, %, 2.5x, GB, MiB, ...), or a number
beside "faster"/"slower"; a measured statement must be printed by a code cell (an f-string or
analysis.claims) or asked as a question. The short allowlist below holds what is not measured:
documented constants, each with its source.
"""

import json
import re

import pytest

from analysis.verdicts import RESOLUTION
from helpers.series import notebook_paths

NOTEBOOKS = notebook_paths()

UNIT = (
    r"(?:s|ms|us|µs|μs|ns|sec|secs|seconds?|minutes?|hours?|%|x(?![ \t]*\d)|times|GB|GiB|MB|MiB|KB|KiB|kB|"
    r"TB|bytes?|GB/s|MB/s)"
)  # "x" followed by a number is a shape (128 x 128), not a ratio
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
# a number and a unit (2.61x, 20 s, 5 GB, 3.0 ms, 40%), a number then faster/slower within a few
# words, or faster/slower then a number ("faster by 3"), or "about N <unit>"
MEASURED = [
    re.compile(NUMBER + r"\s?" + UNIT + r"(?![\w-])"),
    re.compile(NUMBER + r"(?:[ \t]+\S+){0,3}[ \t]+(?:faster|slower)\b", re.I),
    re.compile(r"\b(?:faster|slower)\b(?:[ \t]+\S+){0,3}?[ \t]+" + NUMBER, re.I),
]

# (notebook stem prefix, the exact phrase allowed): documented constants with their source
RULE = f"{(RESOLUTION - 1) * 100:.0f}%"  # the series' rule for "measurable" (analysis.verdicts.RESOLUTION): a rule, not a measurement
# the margin as the verdict code applies it: a factor of RESOLUTION either side of 1, not "5% from 1" (1/1.05 is 0.952)
MARGIN = f"beyond the {RULE} margin of 1 (above {RESOLUTION:g} or below 1/{RESOLUTION:g})"
ALLOWED = {
    ("01", "5 GB of device memory (N22)"),  # docs/NEURON_NOTES.md N22: ProfileMode.DEVICE reserves ~5 GB of HBM
    ("01", MARGIN),  # built from RESOLUTION: the text fails here if the rule changes
    ("A1", MARGIN),  # section 6: 01's tiny-call comparison, the same rules
    ("A1", f"at least {RULE} of the larger end"),
    ("03", MARGIN),
    ("04", MARGIN),
    ("05", MARGIN),
    ("07", MARGIN),
    ("06", f"lie at least {RULE} apart"),
}


def measured_phrases(text: str) -> list[str]:
    """The phrases of `text` that state a number with a unit or a ratio (code spans included:
    a measured number in backticks is still typed text)."""
    found = []
    for pattern in MEASURED:
        found += [m.group(0) for m in pattern.finditer(text)]
    return found


def unexplained(stem: str, text: str) -> list[str]:
    allowed = [phrase for prefix, phrase in ALLOWED if stem.startswith(prefix) and phrase in text]
    for phrase in allowed:
        text = text.replace(phrase, "")
    return measured_phrases(text)


def markdown_cells(path):
    nb = json.loads(path.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_measured_quantity_in_markdown(path):
    problems = [(phrase, cell.splitlines()[0]) for cell in markdown_cells(path) for phrase in unexplained(path.stem, cell)]
    assert not problems, (
        f"{path.name}: a number with a unit in static text (print it from the run, or ask it as a question): {problems}"
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "the very first compile on a machine adds about 20 s",
        "torch.rms_norm was 2.61x faster than the hand-fused one",
        "6 of 80 calls took 1.5-4.8x the median",
        "whichever variant was profiled first took about 40 ms per step",
        "it reserves 5 GB of HBM",
        "the idle share was 12.5% of the span",
        "about 30 seconds on a 2-core CPU (25.1 s measured)",
        "compiled was 3 times faster",
        "it ran 1.26x slower",
        "it allocates 96 MiB per call",
    ],
)
def test_planted_measurements_are_caught(sentence):
    assert unexplained("04_torch_compile", f"Some text. {sentence}. More text.")


@pytest.mark.parametrize(
    "sentence",
    [
        "Set `WARMUP = 1` and `WAIT = 0` and run again.",
        "`schedule(wait=1, warmup=3, active=5, repeat=1)`",
        "notebook 05 and notebooks 02-04",
        "a 2-core machine, one core per rank",
        "the tolerance is 4 units in the last place of the dtype",
        "exercise 2 asks the same at 8 tokens",
        "the events kept per NeuronCore (default 1,000,000)",
        "it reserves about 5 GB of device memory (N22)",
    ],
)
def test_definitions_and_parameters_pass(sentence):
    assert not unexplained("01_profiler_setup", sentence)
