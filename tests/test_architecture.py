"""The import graph of ``judge`` and ``sandbox``, read from the source: no import circle, and arrows only
point down the layers of ``LAYERS`` (docs/architecture.md, "Layers").

Every ``import`` and ``from ... import`` counts, at module level, inside functions and under
``TYPE_CHECKING`` (a circle through a function's import is still two modules that need each other);
relative imports are resolved; ``from package import name`` is an arrow to ``package.name`` when that is a
module, else to the package itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("judge", "sandbox")

#: The entry points above every room: they wire the rooms together (the ``judge`` command line).
ENTRY_POINTS = frozenset({"judge.cli", "judge.__main__"})

#: Room -> the rooms it must never import. A room is a package prefix; the longest prefix names a module's
#: room, so ``judge`` (its flat modules: the helpers problem packages import) does not include
#: ``judge.core``. The core may import ``judge.check``: ``judge new`` (``judge.authoring.scaffold``) holds a
#: new package to the package rules ``judge check`` defines. ``sandbox.inside`` runs inside a sandbox, where
#: only the ``sandbox`` package is visible: it imports ``sandbox.shared`` and nothing else of the host side.
LAYERS: Mapping[str, frozenset[str]] = {
    "judge.authoring": frozenset(
        {"judge.dispatch", "judge.service", "judge.store", "judge.submissions", "judge.web"}
    ),
    "judge.check": frozenset({"judge.dispatch", "judge.service", "judge.submissions", "judge.web"}),
    "judge.core": frozenset(
        {"judge.dispatch", "judge.service", "judge.store", "judge.submissions", "judge.web"}
    ),
    "judge.dispatch": frozenset({"judge.service", "judge.submissions", "judge.web"}),
    "judge.feedback": frozenset(
        {"judge.check", "judge.dispatch", "judge.service", "judge.store", "judge.submissions", "judge.web"}
    ),
    "judge.grading": frozenset(
        {"judge.dispatch", "judge.service", "judge.store", "judge.submissions", "judge.web"}
    ),
    # Argument kinds sit below the spec (``judge.core.spec`` builds ``ArgSpec.kind`` from their registry):
    # they read only the converters and the menu of the core, never a room that grades or serves.
    "judge.kinds": frozenset(
        {
            "judge.authoring",
            "judge.check",
            "judge.dispatch",
            "judge.feedback",
            "judge.grading",
            "judge.service",
            "judge.store",
            "judge.submissions",
            "judge.web",
        }
    ),
    "judge.store": frozenset({"judge.dispatch", "judge.service", "judge.submissions", "judge.web"}),
    "judge.submissions": frozenset({"judge.service", "judge.web"}),
    "judge": frozenset({"judge.dispatch", "judge.service", "judge.store", "judge.submissions", "judge.web"}),
    "sandbox.backends": frozenset({"judge", "sandbox.inside"}),
    "sandbox.host": frozenset({"judge", "sandbox.backends", "sandbox.inside", "sandbox.session"}),
    "sandbox.inside": frozenset({"judge", "sandbox.backends", "sandbox.host", "sandbox.session"}),
    "sandbox.session": frozenset({"judge", "sandbox.inside"}),
    "sandbox.shared": frozenset(
        {"judge", "sandbox.backends", "sandbox.host", "sandbox.inside", "sandbox.session"}
    ),
    "sandbox": frozenset({"judge"}),
}
#: The rooms a module can belong to (``LAYERS``' keys and what they name).
ROOMS = frozenset(LAYERS) | frozenset().union(*LAYERS.values())


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, whether it is a package's ``__init__``)."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


def _known(name: str, modules: Mapping[str, object]) -> str | None:
    """The module ``name`` is (or is inside of: an attribute path), or None for a module of neither
    package."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def _imported(module: str, path: Path, is_package: bool) -> Iterator[str]:
    """Every name ``module`` imports (dotted), relative imports resolved; ``from a import b`` as ``a.b``."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            for alias in node.names:
                yield f"{origin}.{alias.name}"


@cache
def graph() -> dict[str, frozenset[str]]:
    """Module -> the modules of ``judge`` and ``sandbox`` it imports."""
    modules = _modules()
    edges: dict[str, frozenset[str]] = {}
    for module, (path, is_package) in modules.items():
        targets = {_known(name, modules) for name in _imported(module, path, is_package)}
        edges[module] = frozenset(t for t in targets if t is not None and t != module)
    return edges


def circles(edges: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def room(module: str) -> str | None:
    """The room of ``LAYERS`` a module lives in (the longest matching prefix), or None for an entry point."""
    if module in ENTRY_POINTS:
        return None
    parts = module.split(".")
    while parts:
        if ".".join(parts) in ROOMS:
            return ".".join(parts)
        parts.pop()
    return None


def upward(edges: Mapping[str, frozenset[str]]) -> list[str]:
    """Every import that breaks ``LAYERS``, as ``importer -> imported``."""
    broken = []
    for importer, targets in sorted(edges.items()):
        own = room(importer)
        if own is None:
            continue
        for target in sorted(targets):
            if room(target) in LAYERS.get(own, frozenset()):
                broken.append(f"{importer} -> {target}")
    return broken


def test_the_graph_is_read_from_the_source() -> None:
    edges = graph()
    assert {
        "judge.core.grader",
        "sandbox.session.monitor",
        "sandbox.inside.tracer",
        "judge.service.app",
    } <= set(edges)
    assert "sandbox.session.monitor" in edges["judge.core.grader"]  # a module-level import
    assert "judge.dispatch.node" in edges["judge.cli"]  # an import inside a function
    assert "judge.store.listing" in edges["judge.store.pages"]  # ``from package import module``


def test_a_circle_and_an_upward_arrow_are_found() -> None:
    """The checks themselves: a made-up graph with one circle through three modules and one upward
    arrow."""
    edges = {
        "judge.a": frozenset({"judge.b"}),
        "judge.b": frozenset({"judge.c"}),
        "judge.c": frozenset({"judge.a", "judge.service.app"}),
        "judge.service.app": frozenset({"judge.a"}),
        "sandbox.x": frozenset(),
        "judge.cli": frozenset({"judge.service.app"}),
    }
    assert circles(edges) == [["judge.a", "judge.b", "judge.c", "judge.service.app"]]
    assert upward(edges) == ["judge.c -> judge.service.app"]


@pytest.mark.parametrize(
    "module", ["judge.core.grader", "judge.feedback.cost", "judge.service.state", "sandbox.session.monitor"]
)
def test_every_module_has_a_room(module: str) -> None:
    assert room(module) is not None


def test_no_import_circle() -> None:
    found = circles(graph())
    assert not found, "import circles (each a set of modules that import each other):\n" + "\n".join(
        " <-> ".join(component) for component in found
    )


def test_arrows_only_point_down() -> None:
    broken = upward(graph())
    assert not broken, "imports against the layers (LAYERS):\n" + "\n".join(broken)
