"""Every relative link in a stored notebook's markdown, the README and docs/ resolves to a file in the repository.

Why: a link that points one folder too high reads fine in the source and leads nowhere from the page
(the trn2 box's six links, its reader's only way to the next steps).
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # reference runs' indexes included
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(path: Path) -> list[str]:
    """The link targets that are files, in a notebook's markdown cells or a markdown page: no scheme, no bare anchor;
    anchors and queries dropped; links inside `inline code` are examples, not links."""
    if path.suffix == ".ipynb":
        text = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")
    else:
        text = path.read_text()
    targets = LINK.findall(re.sub(r"`[^`\n]*`", "", text))
    return [t.split("#")[0].split("?")[0] for t in targets if not re.match(r"^[a-z]+:|^#", t)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_relative_links_resolve(path):
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.name}: links to nothing: {missing}"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_links_resolve(path):
    """The README once linked a reference-run folder that make publish had replaced with a newer date's."""
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.relative_to(ROOT)}: links to nothing: {missing}"


def test_a_link_one_folder_too_high_is_caught(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "X.md").write_text("x")
    cell = {"cell_type": "markdown", "source": ["[ok](../docs/X.md#a) [bad](../../docs/X.md)"]}
    nb = tmp_path / "notebooks" / "n.ipynb"
    nb.write_text(json.dumps({"cells": [cell]}))
    assert [t for t in relative_links(nb) if not (nb.parent / t).exists()] == ["../../docs/X.md"]


def test_a_page_link_to_a_replaced_folder_is_caught_and_code_examples_are_not_links(tmp_path):
    page = tmp_path / "README.md"
    (tmp_path / "docs").mkdir()
    page.write_text("[run](docs/run-2026-12-06/README.md) and `[A2](A2.ipynb)` and [ok](docs)")
    assert [t for t in relative_links(page) if not (page.parent / t).exists()] == ["docs/run-2026-12-06/README.md"]
