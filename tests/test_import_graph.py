"""The import graph of harness/: no circle between modules, no import back up the stage order.

The graph is built from the source with :mod:`ast` (nothing is imported), so a circle
hidden behind ``if TYPE_CHECKING:`` or inside a function counts like any other import:
each is a module that cannot be read, tested or moved without the other.

:data:`STAGES` is the one declaration of the stage order (the README's module table points
here). A package may import its own stage and the stages before it; an import of a later
stage fails naming the file and line, the two modules and the two stages. The order follows
the data flow (request -> key -> cache -> clients -> execute -> assert -> score -> record ->
report) with two deliberate turns, each said where it is declared: the loader validates
every dataset file with the checkers of the stages it feeds, so ``load`` sits above
``score``; and a run reads earlier runs back (``--rerun``, shard timings), so ``run`` sits
above ``report``. Plain data (records, options, errors, codes) sits below what uses it.

``python tests/test_import_graph.py`` prints the numbers: modules, imports, layers,
circles and back-edges.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

#: The stages, lowest first, each with the packages (or modules) it holds; the longest
#: prefix of a module names its stage (the root ``harness`` holds only its ``__init__``, so
#: a module dropped flat into harness/ has no stage and fails). The wire package is split by
#: stage: its formats (exchange types, codecs, canonical form, placeholder keys) are read by
#: the cache, its binding answers through the clients.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("harness", "harness.core")),
    ("documents", ("harness.documents", "harness.schemas")),
    ("request", ("harness.requests", "harness.wire")),
    ("cache", ("harness.cache",)),
    ("recording", ("harness.refresh",)),
    ("clients", ("harness.clients", "harness.providers")),
    ("wire", ("harness.wire.binding", "harness.wire.batch", "harness.wire.batch_routes",
              "harness.wire.command", "harness.wire.intercept", "harness.wire.adopted",
              "harness.wire.recorder", "harness.wire.recording", "harness.wire.serve")),
    ("execute", ("harness.execute",)),
    ("assert", ("harness.assertions",)),
    ("score", ("harness.graded", "harness.judges", "harness.rubric", "harness.mutants")),
    ("load", ("harness.loading",)),  # validates with the checkers of the stages above: after score
    ("record", ("harness.results",)),
    ("report", ("harness.report",)),
    ("run", ("harness.running",)),  # reads earlier runs back (--rerun, shard timings): after report
    ("check", ("harness.check",)),
    ("adoption", ("harness.adoption",)),
    ("front", ("harness.frontends", "harness.__main__")),
)


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target`` at ``path:line``."""

    source: str
    target: str
    path: str
    line: int
    kind: str
    """``top`` (module level), ``typing`` (under ``if TYPE_CHECKING:``) or ``lazy`` (in a function)."""

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def modules_of(root: Path) -> dict[str, Path]:
    """Every module under ``root/harness`` by its dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted((root / "harness").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: Mapping[str, Path]) -> str:
    """The module ``name`` names (``harness.x.Class`` -> ``harness.x``); ``""`` outside the tree."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def imports_of(root: Path) -> tuple[dict[str, Path], list[Import]]:
    """The modules under ``root/harness`` and every import between them, with file and line."""
    modules = modules_of(root)
    edges: list[Import] = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        where = path.relative_to(root).as_posix()
        for name, line, kind in _statements(ast.parse(path.read_text(encoding="utf-8")), package, modules):
            target = _resolve(name, modules)
            if target and target != module:
                edges.append(Import(module, target, where, line, kind))
    return modules, list(dict.fromkeys(edges))  # one edge per statement and target


def _statements(tree: ast.AST, package: str, modules: Mapping[str, Path]) -> Iterable[tuple[str, int, str]]:
    """(imported name, line, kind) of every import in ``tree``."""
    pending: list[tuple[ast.AST, str]] = [(tree, "top")]
    while pending:
        node, kind = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                yield from ((alias.name, child.lineno, kind) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in child.names:  # ``from pkg import module`` imports the module
                    full = f"{base}.{alias.name}"
                    yield (full if full in modules else base), child.lineno, kind
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                pending.append((child, "lazy"))
            elif isinstance(child, ast.If) and kind == "top" and "TYPE_CHECKING" in ast.unparse(child.test):
                pending.append((ast.Module(body=child.body, type_ignores=[]), "typing"))
                pending.append((ast.Module(body=child.orelse, type_ignores=[]), kind))
            else:
                pending.append((child, kind))


def stage_of(module: str, stages: Sequence[tuple[str, Sequence[str]]] = STAGES) -> int | None:
    """The index of the stage whose longest package prefix holds ``module`` (None: no stage)."""
    best: tuple[int, int] | None = None
    for index, (_name, packages) in enumerate(stages):
        for package in packages:
            inside = module.startswith(package + ".") and package != "harness"  # the root holds itself
            if (module == package or inside) and (
                    best is None or len(package) > best[1]):
                best = (index, len(package))
    return None if best is None else best[0]


def circles(modules: Iterable[str], edges: Iterable[Import]) -> list[list[str]]:
    """Every import circle: the strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for edge in edges:
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def back_edges(edges: Iterable[Import], stages: Sequence[tuple[str, Sequence[str]]] = STAGES) -> list[str]:
    """Every import of a later stage, and of a module no stage holds, worded for the failure."""
    problems = []
    for edge in edges:
        source, target = stage_of(edge.source, stages), stage_of(edge.target, stages)
        if source is None or target is None:
            missing = edge.source if source is None else edge.target
            problems.append(f"{edge.where()}: {edge.source} -> {edge.target}: {missing} is in no stage; "
                            "add its package to STAGES in tests/test_import_graph.py")
        elif target > source:
            problems.append(f"{edge.where()}: {edge.source} -> {edge.target} runs back up the stage order "
                            f"({stages[source][0]} -> {stages[target][0]}); move the plain data it needs "
                            "below both, or the importing code up")
    return problems


def layers(modules: Iterable[str], edges: Iterable[Import]) -> int:
    """The length of the longest import chain, in modules (the graph must have no circle)."""
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for edge in edges:
        graph[edge.source].add(edge.target)
    depth: dict[str, int] = {}

    def visit(node: str) -> int:  # no circle, so the recursion ends (at most a chain deep)
        if node not in depth:
            depth[node] = 1 + max((visit(target) for target in graph[node]), default=0)
        return depth[node]

    return max((visit(module) for module in graph), default=0)


# -- the project's own graph ---------------------------------------------------------------

@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], list[Import]]:
    return imports_of(REPO_ROOT)


def test_no_module_is_part_of_an_import_circle(graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, edges = graph
    found = circles(modules, edges)
    assert not found, "\n".join(_worded(circle, edges) for circle in found)


def _worded(circle: Sequence[str], edges: Iterable[Import]) -> str:
    """One circle for the failure: its modules, and the imports inside it (the first 12)."""
    inside = [f"  {edge.where()}: {edge.source} -> {edge.target} ({edge.kind})" for edge in edges
              if edge.source in circle and edge.target in circle]
    more = f"\n  ... and {len(inside) - 12} more" if len(inside) > 12 else ""
    return (f"import circle of {len(circle)} modules: {', '.join(circle)}; cut one of its imports:\n"
            + "\n".join(inside[:12]) + more)


def test_no_import_runs_back_up_the_stage_order(graph: tuple[dict[str, Path], list[Import]]) -> None:
    _modules, edges = graph
    problems = back_edges(edges)
    assert not problems, "\n".join(problems)


def test_every_package_has_a_stage_and_every_stage_a_package(
        graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, _edges = graph
    assert [module for module in modules if stage_of(module) is None] == []
    used = {stage_of(module) for module in modules}
    assert [name for index, (name, _packages) in enumerate(STAGES) if index not in used] == []


def test_every_new_stage_package_says_what_it_may_import(graph: tuple[dict[str, Path], list[Import]]) -> None:
    modules, _edges = graph
    silent = [name for name, path in modules.items()
              if path.name == "__init__.py" and name.count(".") == 1 and name != "harness.schemas"
              and "import" not in (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "")]
    assert silent == [], "package docstrings that do not say what the package may import"


# -- the checks themselves fail, on a tree made for it -------------------------------------

def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in {"harness/__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


_TOY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("harness", "harness.core")), ("front", ("harness.frontends",)))


def test_a_back_edge_fails_naming_file_line_modules_and_stages(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "harness/core/__init__.py": "",
        "harness/core/data.py": ('"""Plain data."""\n\n\n'
                                 "def late():\n    from harness.frontends.cli import main\n"),
        "harness/frontends/__init__.py": "",
        "harness/frontends/cli.py": "from harness.core.data import late\n",
    })
    _modules, edges = imports_of(root)
    assert back_edges(edges, _TOY) == [
        "harness/core/data.py:5: harness.core.data -> harness.frontends.cli runs back up the stage order "
        "(base -> front); move the plain data it needs below both, or the importing code up"]


def test_a_module_outside_every_stage_fails(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"harness/stray.py": "from harness.core import data\n",
                            "harness/core/__init__.py": "", "harness/core/data.py": ""})
    _modules, edges = imports_of(root)
    assert back_edges(edges, _TOY) == [
        "harness/stray.py:1: harness.stray -> harness.core.data: harness.stray is in no stage; "
        "add its package to STAGES in tests/test_import_graph.py"]


def test_a_circle_hidden_behind_type_checking_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "harness/core/__init__.py": "",
        "harness/core/a.py": ("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from harness.core.b import B\n"),
        "harness/core/b.py": "from harness.core import c\n",
        "harness/core/c.py": "import harness.core.a\n",
    })
    modules, edges = imports_of(root)
    assert [(edge.path, edge.line, edge.kind) for edge in edges if edge.source == "harness.core.a"] == [
        ("harness/core/a.py", 3, "typing")]
    assert circles(modules, edges) == [["harness.core.a", "harness.core.b", "harness.core.c"]]
    assert back_edges(edges, _TOY) == []  # one stage: only the circle check can catch it
    assert _worded(circles(modules, edges)[0], edges) == (
        "import circle of 3 modules: harness.core.a, harness.core.b, harness.core.c; "
        "cut one of its imports:\n"
        "  harness/core/a.py:3: harness.core.a -> harness.core.b (typing)\n"
        "  harness/core/b.py:1: harness.core.b -> harness.core.c (top)\n"
        "  harness/core/c.py:1: harness.core.c -> harness.core.a (top)")


def test_layers_count_the_longest_chain(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"harness/core/__init__.py": "", "harness/core/c.py": "",
                            "harness/core/a.py": "from harness.core import b, c\n",
                            "harness/core/b.py": "from harness.core import c\n"})
    modules, edges = imports_of(root)
    assert layers(modules, edges) == 3  # a -> b -> c (the package and the root import nothing)


def test_relative_imports_and_parents_resolve_to_the_module(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "harness/core/__init__.py": "from . import data\nfrom .data import Thing\n",
        "harness/core/data.py": "from .. import __version__\n",
    })
    _modules, edges = imports_of(root)
    assert sorted((edge.source, edge.target) for edge in edges) == [
        ("harness.core", "harness.core.data"), ("harness.core", "harness.core.data"),
        ("harness.core.data", "harness")]


def main() -> int:
    """Print the numbers the issue asks for."""
    modules, edges = imports_of(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO_ROOT)
    top = [edge for edge in edges if edge.kind != "lazy"]
    found = circles(modules, edges)
    print(f"modules {len(modules)}, imports {len({(e.source, e.target) for e in edges})}")
    print(f"circles {len(found)} (module level and TYPE_CHECKING only: {len(circles(modules, top))})")
    if not found:
        print(f"layers {layers(modules, edges)} "
              f"(module level and TYPE_CHECKING only: {layers(modules, top)})")
    print(f"back-edges between stages {len(back_edges(edges))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
