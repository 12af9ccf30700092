"""The folders show the layering (docs/ARCHITECTURE.md): notebooks import one namespace per layer;
the lesson uses the plumbing and the analysis; the plumbing never imports the lesson or the tools;
the analysis imports none of them; and no module imports itself in a cycle."""

import ast
import importlib
import json
import subprocess
import sys
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


@pytest.mark.parametrize("package", ["analysis", "helpers", "lesson"])
def test_each_package_init_lists_every_module(package):
    doc = (REPO_ROOT / package / "__init__.py").read_text()
    modules = sorted((REPO_ROOT / package).glob("*.py"))
    missing = [p.stem for p in modules if p.stem != "__init__" and f"- {p.stem}:" not in doc]
    assert not missing, f"{package}/__init__.py's module map lacks {missing}"


LESSON_PACKAGE_MODULES = sorted((REPO_ROOT / "lesson").glob("*.py"))


@pytest.mark.parametrize("path", LESSON_PACKAGE_MODULES, ids=[p.stem for p in LESSON_PACKAGE_MODULES])
def test_lesson_imports_no_tool(path):
    """The lesson's code runs in a notebook and in the processes it starts, without the tools."""
    assert tool_imports(path) == [], f"lesson/{path.name} imports the tooling package"


@pytest.mark.parametrize(
    "path", LESSON_MODULES + ANALYSIS_MODULES, ids=[f"{p.parent.name}.{p.stem}" for p in LESSON_MODULES + ANALYSIS_MODULES]
)
def test_plumbing_and_analysis_never_import_the_lesson(path):
    bad = sorted(m for m in imported_modules(path) if m.split(".")[0] == "lesson")
    assert bad == [], f"{path.parent.name}/{path.name} imports {bad}: the lesson uses them, never the reverse"


def notebook_submodule_imports(source: str) -> list[str]:
    """`from helpers.x import ...`, `import analysis.x` and the like in a notebook's code: a notebook
    imports from one namespace per layer (`from analysis import load_trace`), never from a module."""
    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    found = []
    for node in ast.walk(tree):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        )
        found += [n for n in names if n.split(".")[0] in FACADES and "." in n]
    return found


FACADES = ("analysis", "helpers", "lesson")


def test_notebooks_import_one_namespace_per_layer():
    for nb in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        bad = notebook_submodule_imports(code)
        assert not bad, f"{nb.name} imports {bad}: import the names from the layer's namespace (`from analysis import ...`)"


def test_the_notebook_check_finds_a_submodule_import():
    assert notebook_submodule_imports(
        "from helpers.metrics import metric\nimport analysis.traces as t\nfrom analysis import load_trace\nimport helpers\n"
    ) == ["helpers.metrics", "analysis.traces"]


@pytest.mark.parametrize("package", FACADES)
def test_every_facade_name_resolves_to_one_module(package):
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert not missing, f"{package}.__all__ names {missing}, which its modules do not define"
    assert len(set(module.__all__)) == len(module.__all__)


def test_importing_the_facades_loads_neither_torch_nor_pandas():
    """helpers.start checks the kernel before torch loads, and helpers.environment reads analysis
    modules then: the facades load a module only when one of its names is used."""
    code = "import sys, analysis, helpers, lesson; print(sorted({'torch', 'pandas'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr or done.stdout


def module_graph() -> dict[str, set[str]]:
    """Every module of analysis, helpers and series_tools, and the series' modules it imports
    (relative imports resolved; imports inside functions count)."""
    graph = {}
    for package in ("analysis", "helpers", "lesson", "series_tools"):
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
                return path[path.index(t) :] + [t]
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


def test_the_architecture_pages_size_sentence_holds():
    """docs/ARCHITECTURE.md says analysis/ and lesson/ are the two large libraries, each over three times helpers/."""
    root = Path(__file__).resolve().parents[1]
    lines = {
        pkg: sum(len(p.read_text().splitlines()) for p in (root / pkg).glob("*.py")) for pkg in ("analysis", "helpers", "lesson")
    }
    assert min(lines["analysis"], lines["lesson"]) > 3 * lines["helpers"], lines
    assert (
        "`analysis/` and `lesson/` are the two large libraries, each over three times `helpers/`"
        in (root / "docs" / "ARCHITECTURE.md").read_text()
    )


def test_the_trace_model_imports_no_analyzer():
    """analysis/traces.py is the model under every analysis (HTA's shape): it may import only the error types."""
    root = Path(__file__).resolve().parents[1]
    tree = ast.parse((root / "analysis" / "traces.py").read_text())
    relative = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
    absolute = {
        m.removeprefix("analysis.") for m in imported_modules(root / "analysis" / "traces.py") if m.startswith("analysis.")
    }
    assert relative | absolute <= {"errors"}, relative | absolute
