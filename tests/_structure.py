"""Reading the packages' sources for the structural tests: modules, their imports, functions.

Everything here works on the syntax trees of the files in the repository, so a test that uses
it sees an import wherever it is written: at the top, inside a function, or under
``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's top folder."""


@dataclass(frozen=True)
class Module:
    """One Python source file of a package."""

    name: str
    """Its dotted module name (``referee.gin._deal``; a package's ``__init__.py`` is the package)."""
    path: Path
    """The file."""
    is_package: bool
    """Whether the file is a package's ``__init__.py``."""

    @property
    def rel(self) -> str:
        """The file's path relative to the repository, with ``/`` separators."""
        return self.path.relative_to(ROOT).as_posix()

    @property
    def tree(self) -> ast.Module:
        """The file's syntax tree."""
        return parse(self.path)


@dataclass(frozen=True)
class Import:
    """One module naming another in an import statement."""

    source: str
    """The importing module."""
    target: str
    """The imported module (a package's name stands for its ``__init__.py``)."""
    line: int
    """The statement's line in the importing file."""
    where: str
    """``top``, ``function`` (inside a function or method) or ``TYPE_CHECKING``."""


@cache
def parse(path: Path) -> ast.Module:
    """The syntax tree of ``path`` (each file is parsed once per test session)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def modules(*packages: str) -> list[Module]:
    """Every module of the given top-level packages (folders under the repository)."""
    found: list[Module] = []
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found.append(Module(".".join(parts), path, is_package))
    return found


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module name an ``from … import`` statement names before its ``import``."""
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    # In a package's __init__ the package itself is level 1; in a module, its package is.
    drop = node.level - 1 if module.is_package else node.level
    base = base[: len(base) - drop] if drop else base
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_statements(tree: ast.AST, where: str = "top") -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement under ``tree`` with where it is written."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, where
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from import_statements(child, "function")
        elif isinstance(child, ast.If) and _is_type_checking(child.test) and where == "top":
            for stmt in child.body:
                yield from import_statements(ast.Module(body=[stmt], type_ignores=[]), "TYPE_CHECKING")
            for stmt in child.orelse:
                yield from import_statements(ast.Module(body=[stmt], type_ignores=[]), where)
        else:
            yield from import_statements(child, where)


def imports(mods: list[Module]) -> list[Import]:
    """The imports among ``mods``: ``from p import m`` names module ``p.m`` when that is one of
    them, else ``p``; imports of anything outside ``mods`` are left out."""
    known = {m.name for m in mods}
    found: list[Import] = []
    for module in mods:
        for node, where in import_statements(module.tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = _resolve(module, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}" if base else alias.name
                    targets.append(sub if sub in known else base)
            for target in dict.fromkeys(targets):
                if target in known and target != module.name:
                    found.append(Import(module.name, target, node.lineno, where))
    return found


def cycles(edges: list[Import]) -> list[list[Import]]:
    """One shortest circle of imports through each strongly connected group of modules (its
    first module in name order); ``members`` names the whole group."""
    graph: dict[str, list[Import]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge)
        graph.setdefault(edge.target, [])
    found: list[list[Import]] = []
    for group in _components(graph):
        if len(group) > 1:
            found.append(_shortest_circle(graph, group))
    return found


def _components(graph: dict[str, list[Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            edges = graph[node]
            if i < len(edges):
                work.append((node, i + 1))
                nxt = edges[i].target
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups


def _shortest_circle(graph: dict[str, list[Import]], group: list[str]) -> list[Import]:
    """The shortest circle through the group's first module, found breadth first."""
    members = set(group)
    start = group[0]
    came: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for edge in graph[node]:
                if edge.target not in members:
                    continue
                if edge.target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came[path[0].source])
                    return path
                if edge.target not in came:
                    came[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no circle through {start} in {group}")  # a component always has one


def members(edges: list[Import], circle: list[Import]) -> list[str]:
    """Every module of the strongly connected group that ``circle`` goes through."""
    graph: dict[str, list[Import]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge)
        graph.setdefault(edge.target, [])
    return next(g for g in _components(graph) if circle[0].source in g)


def describe(circle: list[Import]) -> str:
    """``a -> b -> a`` with where each import is written."""
    path = " -> ".join([circle[0].source, *(e.target for e in circle)])
    steps = "; ".join(f"{e.source} line {e.line} ({e.where}) imports {e.target}" for e in circle)
    return f"{path}  [{steps}]"


def functions(module: Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method of the module with its qualified name (``Class.method``)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(module.tree, "")


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def words(identifier: str) -> list[str]:
    """An identifier's words, lower-cased: ``BIG_GIN`` and ``BigGin`` are ``["big", "gin"]``."""
    return [w.lower() for w in _WORD.findall(identifier)]


def identifiers(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Every name written in the code (not in strings or comments) with its line: variables,
    attributes, definitions, arguments, keywords and imported names."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            yield node.id, line
        elif isinstance(node, ast.Attribute):
            yield node.attr, line
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, line
        elif isinstance(node, ast.arg):
            yield node.arg, line
        elif isinstance(node, ast.keyword):
            yield node.arg or "", line
        elif isinstance(node, ast.alias):
            yield from ((part, line) for part in node.name.split("."))
            if node.asname:
                yield node.asname, line
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield from ((part, line) for part in node.module.split("."))


def is_private(dotted: str) -> bool:
    """Whether a dotted name has a private part (``_x``, not ``__x__``) after its first."""
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in dotted.split(".")[1:])


def names_of(module: Module, package: str) -> Iterator[tuple[int, str, str]]:
    """Every name of ``package`` that ``module`` reaches, with its line: as ``(line, module,
    name)``, where ``module`` is the dotted module an import statement names and ``name`` the
    dotted name it binds from it (``from referee.x import y`` gives ``referee.x`` and
    ``referee.x.y``; ``import referee.x`` gives ``referee.x`` twice). When the module imports the
    package itself, every attribute read through it counts too (``referee._x.y``), unless the
    module binds the package's name to something else as well (a variable called ``referee``)."""
    yield from _names_in(module, module.tree, package)


def _names_in(module: Module, tree: ast.Module, package: str) -> Iterator[tuple[int, str, str]]:
    prefix = package + "."
    binds_package = False
    rebinds = False
    for node, _ in import_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == package or alias.name.startswith(prefix):
                    binds_package |= alias.asname is None
                    yield node.lineno, alias.name, alias.name
        else:
            base = _resolve(module, node)
            if base == package or base.startswith(prefix):
                for alias in node.names:
                    yield node.lineno, base, f"{base}.{alias.name}"
    for found in ast.walk(tree):
        if isinstance(found, ast.Name | ast.arg) and isinstance(getattr(found, "ctx", ast.Store()), ast.Store):
            rebinds |= (found.id if isinstance(found, ast.Name) else found.arg) == package
        elif isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            rebinds |= found.name == package
    if not binds_package or rebinds:
        return
    for found in ast.walk(tree):
        if isinstance(found, ast.Attribute):
            chain: list[str] = []
            inner: ast.expr = found
            while isinstance(inner, ast.Attribute):
                chain.insert(0, inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == package:
                dotted = ".".join([package, *chain])
                yield found.lineno, dotted, dotted


def layer_of(name: str, layers: Sequence[Sequence[str]]) -> int | None:
    """The index of the layer that holds module ``name``: the layer naming it or, for a module
    inside a subpackage, the layer naming its longest enclosing package (a top-level package
    named in a layer holds only its ``__init__``). ``None`` when no layer holds it."""
    best: tuple[int, int] | None = None
    for index, layer in enumerate(layers):
        for entry in layer:
            inside = name == entry or ("." in entry and name.startswith(entry + "."))
            if inside and (best is None or len(entry) > best[0]):
                best = (len(entry), index)
    return None if best is None else best[1]


def upward(edges: list[Import], layers: Sequence[Sequence[str]]) -> list[Import]:
    """The imports that point up: from a module to one of a layer above its own (the first layer
    is the top; modules of one layer may import each other)."""
    found: list[Import] = []
    for edge in edges:
        source, target = layer_of(edge.source, layers), layer_of(edge.target, layers)
        if source is not None and target is not None and target < source:
            found.append(edge)
    return found
