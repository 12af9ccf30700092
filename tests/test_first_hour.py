"""docs/FIRST_HOUR_TRN2.md: every fact it cites is a row of docs/NEURON_NOTES.md, and where it calls a
fact UNVERIFIED the notes do too (so the page cannot promote a guess to a documented fact), and the
library names it tells a learner to call exist."""

import importlib.util
import re

import analysis
import lesson
from helpers.neuron_notes import read_notes
from helpers.series import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "FIRST_HOUR_TRN2.md"


def test_every_cited_fact_is_in_the_notes():
    text = PAGE.read_text()
    cited = set(re.findall(r"\bN\d+\b", text))
    assert cited, "the page cites no fact"
    missing = sorted(cited - set(read_notes()), key=lambda i: int(i[1:]))
    assert not missing, f"docs/FIRST_HOUR_TRN2.md cites facts the notes do not have: {missing}"


def test_unverified_on_the_page_is_unverified_in_the_notes():
    facts = read_notes()
    for line in PAGE.read_text().splitlines():
        if "UNVERIFIED" in line and not line.startswith(("**UNVERIFIED**", "reports it")):
            for fact in re.findall(r"\bN\d+\b", line):
                if fact in ("N40",):  # the mechanism, cited beside its unverified outcome (N41)
                    continue
                assert facts[fact].kind == "UNVERIFIED", f"{fact} is {facts[fact].kind} in the notes: {line}"


def test_the_library_names_the_page_uses_exist():
    text = PAGE.read_text()
    for name in re.findall(r"`analysis\.(\w+)", text):
        assert hasattr(analysis, name) or importlib.util.find_spec(f"analysis.{name}"), name
    assert "from lesson import op_by_op" in text and hasattr(lesson, "op_by_op")
