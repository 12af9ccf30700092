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
    assert parts == sorted(parts), "the core notebooks come before the optional ones"   # "core" < "optional"
    assert any("`07_shapes_and_recompiles`" in r and "optional" in r for r in rows)


def test_missing_markers_name_the_fix():
    with pytest.raises(ValueError, match="markers"):
        guide.render("# a guide without markers\n")
