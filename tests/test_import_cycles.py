"""The project's own modules import each other without cycles, and none shadows the standard library.

The graph is read from the source, not from ``sys.modules``: every ``import`` statement in every
module of ``cola_core`` and ``airflow_provider_cola`` counts, the lazy ones inside functions
included (a layer never imports the one above it, not even lazily), except those under
``if TYPE_CHECKING:``, which never run. Imports of anything outside the two packages are left
out. ``lint-imports`` (run by ``scripts/check``) checks the same graph against the layer
contracts; this test needs nothing but the standard library, so it also runs where the tools
are not installed.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cola_core", "airflow_provider_cola")


@dataclass(frozen=True)
class Edge:
    """One import statement: ``importer`` imports ``imported`` at ``path:line``."""

    importer: str
    imported: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported}  ({self.path}:{self.line})"


def module_files() -> dict[str, Path]:
    """Every module of the two packages, by dotted name (a package by its ``__init__``)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that can run: all of them, minus the bodies of ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules (``a.b.C`` imports ``a.b``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _base_of_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{target}" if target else package


def import_edges() -> tuple[dict[str, Path], list[Edge]]:
    """All runtime imports between the two packages' modules."""
    modules = module_files()
    edges: list[Edge] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        shown = str(path.relative_to(ROOT))
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = (
                    _base_of_relative(module, path.name == "__init__.py", node.level, node.module)
                    if node.level
                    else node.module or ""
                )
                # ``from pkg import sub`` imports the submodule when ``sub`` is one.
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            for target in targets:
                imported = _known(target, modules)
                if imported is not None and imported != module:
                    edges.append(Edge(module, imported, shown, node.lineno))
    return modules, edges


# Tarjan's algorithm, iterative (no recursion limit on a deep import graph), kept whole so
# that it reads as the textbook's.
def find_cycles(modules: dict[str, Path], edges: list[Edge]) -> list[list[Edge]]:  # noqa: C901
    """One cycle (as its import statements) for each group of modules that import each other."""
    graph: dict[str, dict[str, Edge]] = {module: {} for module in modules}
    for edge in edges:
        graph[edge.importer].setdefault(edge.imported, edge)

    # Tarjan's strongly connected components, iteratively (no recursion limit to meet).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    cycles = []
    for component in components:
        members = set(component)
        # The shortest way back to the component's first module, breadth first.
        first = component[0]
        came_from: dict[str, Edge] = {}
        frontier = [first]
        while frontier and first not in came_from:
            following = []
            for node in frontier:
                for successor, edge in sorted(graph[node].items()):
                    if successor in members and successor not in came_from:
                        came_from[successor] = edge
                        following.append(successor)
            frontier = following
        path = [came_from[first]]
        while path[0].importer != first:
            path.insert(0, came_from[path[0].importer])
        cycles.append(path)
    return cycles


def test_the_import_graph_is_read_from_every_module():
    modules, edges = import_edges()
    assert {"cola_core", "cola_core.cli.main", "cola_core.checks", "airflow_provider_cola.operators"} <= set(modules)
    assert any(edge.importer == "cola_core.cli.main" for edge in edges)


def test_no_module_imports_itself_back():
    modules, edges = import_edges()
    cycles = find_cycles(modules, edges)
    report = "\n\n".join("\n".join(f"  {edge}" for edge in cycle) for cycle in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s):\n{report}"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_shadows_the_standard_library(package):
    # spark-submit puts the job file's folder first on sys.path, so a cola_core/io.py is found
    # before the standard library's io by every import in the driver.
    names = {name.rpartition(".")[2] for name in module_files() if name.startswith(f"{package}.")}
    assert sorted(names & sys.stdlib_module_names) == []
