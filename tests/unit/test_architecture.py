"""The package's structure: no import circles, and the engine's small public face.

The import graph is grimp's (import-linter's library), imports under ``TYPE_CHECKING``
included: a circle that only the type checker follows still ties two modules together.
"""

from __future__ import annotations

from collections.abc import Iterator

import grimp
import pytest

import sparkstorm.engine


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("sparkstorm")


def _cycles(graph: grimp.ImportGraph) -> Iterator[list[str]]:
    """The import circles: strongly connected groups of modules (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(
                        graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    yield sorted(group)


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    circles = list(_cycles(graph))
    assert not circles, (
        f"import circles: {circles}; move what both sides need into a module of its own, "
        "or pass it in (a Protocol for the type checker)")


def test_the_cycle_finder_finds_a_circle() -> None:
    circle = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c"):
        circle.add_module(module)
    circle.add_import(importer="p.a", imported="p.b")
    circle.add_import(importer="p.b", imported="p.a")
    circle.add_import(importer="p.c", imported="p.a")
    assert list(_cycles(circle)) == [["p.a", "p.b"]]


def test_nothing_outside_the_engine_imports_its_internals(graph: grimp.ImportGraph) -> None:
    deep = sorted(
        (importer, imported)
        for importer in graph.modules if not importer.startswith("sparkstorm.engine")
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.startswith("sparkstorm.engine."))
    assert not deep, (
        f"imports of engine internals from outside it: {deep}; import the name from "
        "sparkstorm.engine, adding it to engine/__init__.py's _WHERE if it is new")


def test_every_public_engine_name_resolves() -> None:
    for name in sparkstorm.engine.__all__:
        assert getattr(sparkstorm.engine, name) is not None, name


def test_engine_packages_import_nothing_when_a_module_of_theirs_is_imported() -> None:
    """A package's ``__init__`` runs whenever one of its modules is imported.

    grimp's graph does not show that, so an ``__init__`` that imported its package's
    modules would tie them all together.
    """
    from pathlib import Path

    engine = Path(sparkstorm.engine.__file__).parent
    for init in sorted(engine.glob("*/__init__.py")):
        code = [line for line in init.read_text().splitlines()
                if line.startswith(("import ", "from "))]
        assert not code, f"{init} imports {code}; import from the modules themselves"
