"""The instructor guide's exercises and agenda are generated from the notebooks and the series
table (series_tools.guide): a changed exercise that the guide does not show fails here."""

import json

import pytest

from series_tools import guide


def test_guide_matches_the_notebooks():
    text = guide.GUIDE.read_text(encoding="utf-8")
    assert guide.render(text) == text, "docs/INSTRUCTOR_GUIDE.md has drifted: run `python -m series_tools.guide`"
    assert guide.main(["--check"]) == 0


def test_a_changed_exercise_is_caught(tmp_path, monkeypatch):
    """Drift is detected: the guide rendered from a notebook whose exercise changed differs."""
    source = guide.notebook_paths()[4]
    nb = json.loads(source.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and "## Exercises" in "".join(cell["source"]):
            cell["source"] = ["## Exercises\n", "1. A new question?\n", "2. Another one?\n"]
    changed = tmp_path / source.name
    changed.write_text(json.dumps(nb))
    paths = [changed if p == source else p for p in guide.notebook_paths()]
    monkeypatch.setattr(guide, "notebook_paths", lambda: paths)
    text = guide.GUIDE.read_text(encoding="utf-8")
    assert guide.render(text) != text and "1. A new question?" in guide.render(text)


def test_exercises_are_one_line_each_and_numbered_as_in_the_notebook():
    for path in guide.notebook_paths():
        items = guide.notebook_exercises(path)
        assert 2 <= len(items) <= 4 and all("\n" not in i and "###" not in i for i in items), path.name


def test_agenda_core_path_first_and_optional_marked():
    agenda = guide.agenda_markdown()
    rows = [r for r in agenda.splitlines() if r.startswith("| ") and "`" in r]
    parts = [r.rsplit("|", 2)[-2].strip() for r in rows]
    assert parts == sorted(parts), "the core notebooks come before the optional ones"  # "core" < "optional"
    assert any("`07_shapes_and_recompiles`" in r and "optional" in r for r in rows)


def test_every_slot_budgets_login_prediction_reading_and_exercises():
    """Each slot holds its notebook's whole reading time (the committed run's, else the limit) plus the
    prediction and the exercises; the first slot holds the login; no session runs past its length."""
    from helpers.series import NOTEBOOKS

    for info in (i for i in NOTEBOOKS if not i.appendix):
        plan = guide.slot(info)
        recorded = guide.reading_minutes(info.stem)
        assert plan["read"] >= (recorded if recorded is not None else 0) and plan["predict"] > 0
        assert plan["exercises"] == guide.MINUTES_PER_EXERCISE * len(
            guide.notebook_exercises(guide.NOTEBOOK_DIR / f"{info.stem}.ipynb")
        )
        assert plan["slot"] == plan["login"] + plan["predict"] + plan["read"] + plan["exercises"]
        assert (plan["login"] > 0) == info.stem.startswith("00_")
    rows = [r.split("|") for r in guide.agenda_markdown().splitlines() if r.startswith("| ") and "`" in r]
    starts = [int(r[1].split(":")[0]) * 60 + int(r[1].split(":")[1]) for r in rows]
    ends = [start + int(r[7]) for start, r in zip(starts, rows)]
    per_session = guide.SESSION_MINUTES + guide.BREAK_MINUTES
    assert all(end - (start // per_session) * per_session <= guide.SESSION_MINUTES for start, end in zip(starts, ends))


def test_missing_markers_name_the_fix():
    with pytest.raises(ValueError, match="markers"):
        guide.render("# a guide without markers\n")


def test_timings_are_generated_for_every_notebook_from_the_recorded_run():
    table = guide.timings_markdown()
    assert all(f"| `{info.stem}` | {info.cpu_seconds:.1f} |" in table for info in guide.NOTEBOOKS)
    assert guide.CPU_SECONDS_MEASURED_ON in table


def test_every_notebook_has_a_recorded_run_time_equal_to_its_reference_run():
    """No notebook shows NaN for its run time (00's table, the agenda), and each time is that of the
    committed cpu reference run (its README's table), read from the run_times.json `make publish`
    wrote beside it: a reference run published by hand without it fails here."""
    import re

    from helpers.series import CPU_SECONDS_MEASURED_ON, NOTEBOOKS, REFERENCE_RUNS_DIR

    assert all(info.cpu_seconds for info in NOTEBOOKS), (
        f"no run time for {[i.stem for i in NOTEBOOKS if not i.cpu_seconds]}: publish a cpu run with `make publish`"
    )
    readmes = list(REFERENCE_RUNS_DIR.glob("cpu-*/README.md"))
    assert len(readmes) == 1, readmes
    text = readmes[0].read_text(encoding="utf-8")
    date = re.search(r"\| date \(UTC\) \| (\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)", text)
    assert f"run {''.join(date.groups()[:3])}T{''.join(date.groups()[3:])}Z" in CPU_SECONDS_MEASURED_ON
    recorded = dict(re.findall(r"^\| \[(\w+)\]\(\w+\.ipynb\) \| [^|]+ \| ([\d.]+) \|", text, flags=re.M))
    assert {i.stem: f"{i.cpu_seconds:.1f}" for i in NOTEBOOKS} == recorded, readmes[0]
