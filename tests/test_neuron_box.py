"""The "On Trainium" box of each notebook comes from docs/NEURON_NOTES.md and agrees with it."""

import re

import pytest

from helpers.neuron_notes import read_notes, trainium_box
from helpers.notebook import orientation, threads_line
from helpers.series import NOTEBOOKS


def test_every_listed_fact_is_a_row_of_the_notes():
    facts = read_notes()
    for info in NOTEBOOKS:
        assert set(info.neuron_facts) <= set(facts), f"{info.stem}: {set(info.neuron_facts) - set(facts)} not in the notes"


def test_a_notebook_named_in_used_in_lists_that_fact():
    """Where the notes say a fact is used in notebook NN, that notebook's box shows it."""
    by_number = {info.stem[:2]: info for info in NOTEBOOKS}
    for fact in read_notes().values():
        for group in re.findall(r"notebooks? ((?:\d\d(?:, | and )?)+)", fact.used_in):
            for number in re.findall(r"\d\d", group):
                assert fact.id in by_number[number].neuron_facts, f"{fact.id} is used in notebook {number}: list it there"


@pytest.mark.parametrize("info", [i for i in NOTEBOOKS if i.stem >= "01" and not i.appendix], ids=lambda i: i.stem)
def test_box_from_01_on_shows_each_fact_with_its_status(info):
    box = trainium_box(info.stem)
    assert box, f"{info.stem} has no On Trainium box: list its facts in helpers/series.py"
    for fact_id in info.neuron_facts:
        assert any(re.match(rf"\s+{fact_id}\s+(documented|UNVERIFIED|observed) ", line) for line in box)


def test_a_status_changed_in_the_notes_changes_the_box(tmp_path):
    from helpers.neuron_notes import NOTES_PATH

    text = NOTES_PATH.read_text(encoding="utf-8")
    changed = re.sub(r"^(\| N26 \|.*?\| )documented( \| )not yet( \|)", r"\1**UNVERIFIED**\2seen on trn2\3", text, flags=re.M)
    assert changed != text
    (tmp_path / "notes.md").write_text(changed, encoding="utf-8")
    box = trainium_box("07_shapes_and_recompiles", tmp_path / "notes.md")
    assert any(line.split()[:2] == ["N26", "UNVERIFIED"] for line in box) and "seen on a trn2: N26" in box[0]


def test_orientation_names_the_recorded_run_time_as_another_runs():
    lines = orientation("05_compare_variants")
    assert lines[0].startswith("Run time: ") and "in the committed reference run (" in lines[0]
    assert lines[0].endswith("this run's own time is in its summary.md.")
    assert " run 20" in lines[0]
    assert any("Optional" in line for line in orientation("08_many_processes"))
    # "skip it if time is short" read wrong to a reader bound for a trn2 whose shapes vary
    assert any(
        line.endswith("unless your model's input shapes vary: the Neuron docs say each new shape compiles anew.")
        for line in orientation("07_shapes_and_recompiles")
    )
    assert not any("Optional" in line for line in orientation("05_compare_variants"))


def test_the_start_lines_list_no_fact_codes_and_promise_no_outcome():
    """The facts belong in the box of the cell that uses them, not in a dump before the lesson; the
    threads line says where both settings are timed, not that a run "shows why" (01 showed the opposite)."""
    for info in NOTEBOOKS:
        assert not any(re.search(r"\bN\d+\b", line) for line in orientation(info.stem)), info.stem
    assert any(line.startswith("Appendix:") and "01_profiler_setup" in line for line in orientation("A1_timing_checks"))
    line = threads_line(1, 2)
    assert (
        line.startswith("Threads: 1 of PyTorch's default 2 in this Jupyter kernel (one CPU left free") and "A1, section 4" in line
    )
    assert "shows why" not in line and "notebook 01" not in line
