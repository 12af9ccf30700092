"""The folders show the layering: lesson helpers never import the command-line tools."""
import ast
from pathlib import Path

import pytest

from helpers.series import REPO_ROOT

TOOL_PACKAGE = "series_tools"
LESSON_MODULES = sorted((REPO_ROOT / "helpers").glob("*.py"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):  # imports inside functions count too
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def tool_imports(path: Path) -> list[str]:
    return sorted(m for m in imported_modules(path) if m == TOOL_PACKAGE or m.startswith(TOOL_PACKAGE + "."))


@pytest.mark.parametrize("path", LESSON_MODULES, ids=[p.stem for p in LESSON_MODULES])
def test_lesson_module_imports_no_tool(path):
    assert tool_imports(path) == [], f"helpers/{path.name} imports the tooling package: move that code to {TOOL_PACKAGE}/"


def test_the_check_finds_a_tool_import(tmp_path):
    """The layering check itself can fail: a lesson module importing a tool is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from series_tools.compare import main\n    return main\n")
    assert tool_imports(bad) == ["series_tools.compare"]


ANALYSIS_MODULES = sorted((REPO_ROOT / "analysis").glob("*.py"))


@pytest.mark.parametrize("path", ANALYSIS_MODULES, ids=[p.stem for p in ANALYSIS_MODULES])
def test_analysis_imports_neither_helpers_nor_tools(path):
    """The analysis library stands alone: the plumbing and the tools use it, never the reverse."""
    bad = sorted(m for m in imported_modules(path) if m.split(".")[0] in ("helpers", TOOL_PACKAGE))
    assert bad == [], f"analysis/{path.name} imports {bad}: the analysis library must not depend on them"


def test_notebooks_use_only_lesson_helpers():
    for nb in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        assert TOOL_PACKAGE not in nb.read_text(), f"{nb.name} imports the tooling package"


def test_helpers_init_lists_every_module():
    doc = (REPO_ROOT / "helpers" / "__init__.py").read_text()
    missing = [p.stem for p in LESSON_MODULES if p.stem != "__init__" and f"- {p.stem}:" not in doc]
    assert not missing, f"helpers/__init__.py's module map lacks {missing}"


def module_graph() -> dict[str, set[str]]:
    """Every module of analysis, helpers and series_tools, and the series' modules it imports
    (relative imports resolved; imports inside functions count)."""
    graph = {}
    for package in ("analysis", "helpers", "series_tools"):
        for path in sorted((REPO_ROOT / package).glob("*.py")):
            name = f"{package}.{path.stem}"
            tree = ast.parse(path.read_text())
            targets = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    base = f"{package}.{node.module}" if node.level == 1 and node.module else node.module or package
                    targets.add(base)
                    targets.update(f"{base}.{a.name}" for a in node.names)
                elif isinstance(node, ast.Import):
                    targets.update(a.name for a in node.names)
            graph[name] = targets
    return {m: {t for t in ts if t in graph and t != m} for m, ts in graph.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return path[path.index(t):] + [t]
            if t not in state and (cycle := visit(t)):
                return cycle
        state[m] = 2
        path.pop()
        return []

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return []


def test_no_import_cycle():
    cycle = find_cycle(module_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
