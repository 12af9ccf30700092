"""The facts of docs/NEURON_NOTES.md read back, for a notebook's "On Trainium" box.

The notes are the one record of each Neuron fact and its status; a notebook names the ids it
relies on (helpers.series: `neuron_facts`), and its "> **On Trainium:**" markdown box cites them
at the cell that uses them. `trainium_box` reads each named fact back with its status as the notes
give it now (tests/test_neuron_box.py checks the names against the notes; a Neuron-only cell may
print it). The start cell no longer prints the list: a dump of fact codes before the lesson says
nothing the learner can place (issue 38). Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .series import REPO_ROOT, notebook_info

NOTES_PATH = REPO_ROOT / "docs" / "NEURON_NOTES.md"
COLUMNS = ("id", "fact", "source", "status", "on hardware", "used in")


@dataclass(frozen=True)
class NeuronFact:
    id: str
    fact: str
    status: str  # as the notes write it: documented / **UNVERIFIED** ... / observed in recorded data ...
    on_hardware: str  # "not yet" until a Trainium run confirms it
    used_in: str

    @property
    def kind(self) -> str:
        """documented, UNVERIFIED or observed: the one word a learner needs first."""
        status = self.status.replace("*", "")
        if "UNVERIFIED" in status:
            return "UNVERIFIED"
        if status.startswith("observed"):
            return "observed"
        return "documented"

    def short(self, width: int = 110) -> str:
        text = re.sub(r"`([^`]*)`", r"\1", self.fact)
        return text if len(text) <= width else text[: width - 3].rsplit(" ", 1)[0] + " ..."


def read_notes(path: Path | str = NOTES_PATH) -> dict[str, NeuronFact]:
    """Every row of the notes' table, by id (N1, N2, ...)."""
    facts = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not re.match(r"^\| N\d+ \|", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != len(COLUMNS):
            raise ValueError(f"{path}: row {cells[0]} has {len(cells)} columns, expected {len(COLUMNS)} ({', '.join(COLUMNS)})")
        facts[cells[0]] = NeuronFact(cells[0], cells[1], cells[3], cells[4], cells[5])
    return facts


def trainium_box(stem: str, path: Path | str = NOTES_PATH) -> list[str]:
    """The "On Trainium" lines of one notebook: each fact it relies on, with its status in the notes."""
    ids = notebook_info(stem).neuron_facts
    if not ids:
        return []
    facts = read_notes(path)
    missing = [i for i in ids if i not in facts]
    if missing:
        raise KeyError(f"helpers/series.py names {', '.join(missing)} for {stem}, but docs/NEURON_NOTES.md has no such row")
    confirmed = [i for i in ids if facts[i].on_hardware != "not yet"]
    lines = [
        "On Trainium this notebook relies on these facts of docs/NEURON_NOTES.md (documented: in the vendor's docs; "
        "UNVERIFIED: not in them, checked at run time; observed: seen in recorded data; each cut to one line, the "
        "whole fact is in the notes; the names in them are explained where this notebook's cells use them, and the "
        "environment variables in docs/CHEATSHEET.md's 'Neuron environment' table); "
        + (f"seen on a trn2: {', '.join(confirmed)}." if confirmed else "none yet confirmed on Trainium by this project.")
    ]
    lines += [f"  {i:4s} {facts[i].kind:10s} {facts[i].short()}" for i in ids]
    return lines


def trainium_note(*ids: str, path: Path | str = NOTES_PATH) -> str:
    """The facts a recorded section leans on for Trainium, each with its status as the notes give
    it now ("docs/NEURON_NOTES.md N19: UNVERIFIED ..."), so the text follows the notes."""
    facts = read_notes(path)
    missing = [i for i in ids if i not in facts]
    if missing:
        raise KeyError(f"{', '.join(missing)} not in docs/NEURON_NOTES.md")
    return "docs/NEURON_NOTES.md " + "; ".join(f"{i}: {facts[i].status.replace('*', '').strip()}" for i in ids)
