"""Every relative link in a stored notebook's markdown resolves to a file in the repository.

Why: a link that points one folder too high reads fine in the source and leads nowhere from the page
(cold read r87 02: the trn2 box's six links, its reader's only way to the next steps).
"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(path: Path) -> list[str]:
    """The markdown cells' link targets that are files: no scheme, no bare anchor; anchors and queries dropped."""
    cells = json.loads(path.read_text())["cells"]
    targets = [t for c in cells if c["cell_type"] == "markdown" for t in LINK.findall("".join(c["source"]))]
    return [t.split("#")[0].split("?")[0] for t in targets if not re.match(r"^[a-z]+:|^#", t)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_relative_links_resolve(path):
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.name}: links to nothing: {missing}"


def test_a_link_one_folder_too_high_is_caught(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "X.md").write_text("x")
    cell = {"cell_type": "markdown", "source": ["[ok](../docs/X.md#a) [bad](../../docs/X.md)"]}
    nb = tmp_path / "notebooks" / "n.ipynb"
    nb.write_text(json.dumps({"cells": [cell]}))
    assert [t for t in relative_links(nb) if not (nb.parent / t).exists()] == ["../../docs/X.md"]
