"""The code's shape, read from its syntax trees: no import circles, short functions, Gin named
only by Gin's own modules, no dead code, no path that only exists on one machine."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from collections import defaultdict

import pytest

from tests import _structure as src

CIRCLE_FREE = ("referee", "arena", "sample_bots", "bench", "train_env")
"""The packages whose modules must not import each other in a circle."""

REFEREE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("referee", "referee.lowlevel", "referee.cli", "referee.conformance"),
    ("referee.play",),
    ("referee.transport",),
    ("referee.table",),
    ("referee.gin.wire", "referee.rummy.wire"),
    ("referee.wire",),
    ("referee.model", "referee.replays"),
    ("referee.games",),
    ("referee.gin", "referee.rummy"),
    ("referee.cardcore",),
)
"""The referee's layers, top first: a module imports only its own layer's and the layers' below
(the public surface's two layers, the command and a game plugin's conformance checks; one call per match; the
gRPC transport; one match at a table; each game's protobuf conversion, its package's ``wire``
module; the game-neutral envelope; the values and typed replays; the game seam; the games; their
core)."""
ARENA_LAYERS: tuple[tuple[str, ...], ...] = (
    ("arena", "arena.cli"),
    ("arena.web",),
    ("arena.hosted",),
    ("arena.run",),
    ("arena.results", "arena.replays"),
    ("arena.store", "arena.model"),
    ("arena.competition",),
    ("arena.console", "arena.exit_codes", "arena._testbot", "arena.certs"),
)
"""The arena's layers, top first: the command line; the live web (it reads the arena); the
hosted arena (registered bots); running games; results and replays; storage and the run's
values; the competition core (pure: who plays whom, what results mean); the console, exit codes
and the certificate maker."""
REFEREE_SURFACE = frozenset({
    "referee", "referee.games", "referee.replays", "referee.conformance", "referee.gin", "referee.rummy",
    "referee.cardcore",
})
"""The referee's stable layer, what a game author, a bot author or the arena relies on
(docs/referee-api.md): the package (its ``__all__``) and its public modules (a game's package
with its public modules: ``referee.gin.records``)."""
LOWLEVEL = "referee.lowlevel"
"""The referee's second layer: the plumbing the arena shares (``referee.lowlevel.__all__``)."""
GAME_PACKAGES = ("referee.gin", "referee.rummy", "referee.cardcore")
"""The public packages whose public modules are part of the surface."""
OUTSIDE_REFEREE = ("arena", "sample_bots", "bench", "tests", "train_env")
"""The folders that use the referee from outside: none may import a private ``referee._…`` name."""
ON_THE_SURFACE = {"arena": REFEREE_SURFACE | {LOWLEVEL}, "sample_bots": REFEREE_SURFACE,
                  "train_env": REFEREE_SURFACE}
"""The folders that import only the referee's public surface, and the part each may import: the
arena both layers, the bots and the training environment the stable one (tests and benches may import the subpackages'
modules: ``referee.table.flow``; no one outside the referee imports ``referee.cli``, the command)."""

SHORT_FUNCTIONS = ("referee", "arena", "sample_bots", "bench", "train_env")
"""The folders whose functions must stay within ``MAX_FUNCTION_LINES``."""
MAX_FUNCTION_LINES = 100
"""From a function's ``def`` line to its last line, both included (decorators not counted)."""

GIN_OWN = ("referee/gin/",)
"""The only files of ``referee`` that may name Gin: the game's folder (the pure engine and its
protobuf conversion, ``wire.py``). Everything else reaches Gin through the game seam."""
PROJECT_NAMES = frozenset({"gin_arena"})
"""Identifiers that contain the word but name the project (its protobuf package), not the game."""


def test_referee_and_arena_have_no_import_circle() -> None:
    edges = src.imports(src.modules(*CIRCLE_FREE))
    circles = src.cycles(edges)
    assert not circles, "import circles (function-local and TYPE_CHECKING imports count):\n" + "\n".join(
        f"  {src.describe(c)}\n    all the modules in this circle's group: {', '.join(src.members(edges, c))}"
        for c in circles
    )


def _layer_report(layers: tuple[tuple[str, ...], ...], package: str) -> tuple[list[str], list[str]]:
    mods = src.modules(package)
    unplaced = [m.name for m in mods if src.layer_of(m.name, layers) is None]
    edges = src.imports(mods)
    up = [f"  {e.source} line {e.line} ({e.where}) imports {e.target}" for e in src.upward(edges, layers)]
    return unplaced, up


@pytest.mark.parametrize(("layers", "package"), [(REFEREE_LAYERS, "referee"), (ARENA_LAYERS, "arena")],
                         ids=["referee", "arena"])
def test_imports_point_down_the_layers(layers: tuple[tuple[str, ...], ...], package: str) -> None:
    unplaced, up = _layer_report(layers, package)
    assert not unplaced, f"modules of {package} in no layer (add them to the layers in {__file__}): {unplaced}"
    assert not up, f"imports pointing up {package}'s layers {layers}:\n" + "\n".join(up)


def test_the_layer_check_sees_an_import_pointing_up() -> None:
    layers = (("p", "p.top"), ("p.mid",), ("p.low",))
    assert [src.layer_of(n, layers) for n in ("p", "p.top.x", "p.mid", "p.mid.a.b", "p.low", "p.new")] == [
        0, 0, 1, 1, 2, None]
    down = src.Import("p.top.cmd", "p.low.values", 1, "top")
    up = src.Import("p.low.values", "p.mid.flow", 7, "function")
    side = src.Import("p.mid.a", "p.mid.b", 3, "TYPE_CHECKING")
    assert src.upward([down, up, side], layers) == [up]


def _private_referee_name(name: str) -> bool:
    """A private name of the referee's own: ``referee._x`` or one inside its plumbing. A game's
    package keeps its internal modules for the engine's own unit tests (``referee.gin._melds``);
    the arena and the bots may not reach them either (the surface test)."""
    return src.is_private(name) and not name.startswith(tuple(f"{p}." for p in GAME_PACKAGES))


def _private_referee_names(folders: tuple[str, ...]) -> list[str]:
    return [f"  {m.rel}:{line}: {name}" for m in src.modules(*folders)
            for line, _, name in src.names_of(m, "referee") if _private_referee_name(name)]


def test_nothing_outside_the_referee_imports_a_private_referee_name() -> None:
    hits = _private_referee_names(OUTSIDE_REFEREE)
    assert not hits, ("private referee names used from outside the referee (export them in referee/__init__.py, "
                      "or reach a subpackage's public module):\n" + "\n".join(hits))


def _on_the_surface(module: str, surface: frozenset[str]) -> bool:
    return module in surface or (
        module.startswith(tuple(f"{p}." for p in GAME_PACKAGES)) and not src.is_private(module))


def _beyond_the_surface(folder: str, surface: frozenset[str]) -> list[str]:
    referee_modules = {m.name for m in src.modules("referee")}
    hits: list[str] = []
    for m in src.modules(folder):
        for line, _, name in src.names_of(m, "referee"):
            parts = name.split(".")
            reached = next(d for i in range(len(parts), 0, -1) if (d := ".".join(parts[:i])) in referee_modules)
            if not _on_the_surface(reached, surface):
                hits.append(f"  {m.rel}:{line}: {reached}")
    return hits


@pytest.mark.parametrize("folder", sorted(ON_THE_SURFACE))
def test_the_arena_and_the_bots_import_only_the_referees_public_surface(folder: str) -> None:
    surface = ON_THE_SURFACE[folder]
    hits = _beyond_the_surface(folder, surface)
    assert not hits, (f"imports beyond the referee's public surface ({sorted(surface)}; export what is needed "
                      "in referee/__init__.py, or plumbing in referee/lowlevel.py):\n" + "\n".join(hits))


TRAINING_LIBRARIES = frozenset({"numpy", "gymnasium", "pettingzoo", "train_env"})
"""The training extra's libraries (pyproject's ``train``) and the training environment itself."""
MAY_IMPORT_TRAINING = ("train_env", "sample_bots.kit.encodings")
"""The only modules of the packages that may import them: the training environment and the kit's
observation encoders (imported by nothing else of the kit, so a bot without NumPy still runs)."""


def training_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """The imports of a training library in a module's tree (anywhere in it: function-local ones too)."""
    hits = []
    for node, _ in src.import_statements(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if node.level == 0 else [])
        hits += [(node.lineno, n) for n in names if n.split(".")[0] in TRAINING_LIBRARIES]
    return hits


def test_only_the_training_package_imports_numpy_gymnasium_or_pettingzoo() -> None:
    allowed = (*MAY_IMPORT_TRAINING, *(f"{p}." for p in MAY_IMPORT_TRAINING))
    hits = [f"  {m.rel}:{line}: {name}" for m in src.modules("referee", "arena", "sample_bots")
            if not (m.name in MAY_IMPORT_TRAINING or m.name.startswith(allowed))
            for line, name in training_imports(m.tree)]
    assert not hits, ("the referee, the arena and the sample bots import no training library (the optional "
                      "`train` extra): only train_env and sample_bots.kit.encodings may:\n" + "\n".join(hits))
    assert any(training_imports(m.tree) for m in src.modules("train_env")), "the finder sees train_env's own imports"


def test_the_training_import_finder() -> None:
    code = ("import numpy as np\nfrom gymnasium import spaces\nfrom . import numpy\n"
            "def f():\n    import pettingzoo.utils\n")
    assert [n for _, n in training_imports(ast.parse(code))] == ["numpy", "gymnasium", "pettingzoo.utils"]


def test_the_surface_check_sees_the_command_and_the_subpackages() -> None:
    arena = ON_THE_SURFACE["arena"]
    assert _on_the_surface("referee.lowlevel", arena) and _on_the_surface("referee.cardcore.present", arena)
    assert not _on_the_surface("referee.cli", arena) and not _on_the_surface("referee.table.flow", arena)
    assert not _on_the_surface("referee.lowlevel", ON_THE_SURFACE["sample_bots"])


@pytest.mark.parametrize("layer", ["referee", LOWLEVEL])
def test_every_public_referee_name_is_named_once_and_resolves(layer: str) -> None:
    package = importlib.import_module(layer)
    init = next(m for m in src.modules("referee") if m.name == layer)
    typed = {alias.asname or alias.name for node, where in src.import_statements(init.tree)
             if where == "TYPE_CHECKING" and isinstance(node, ast.ImportFrom) for alias in node.names}
    typed |= {node.target.id for node in ast.walk(init.tree)
              if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    assert typed == set(package.__all__), (
        f"names for type checkers but not loaded: {sorted(typed - set(package.__all__))}; "
        f"loaded but not typed: {sorted(set(package.__all__) - typed)}")
    for name in package.__all__:
        assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = package.Nope


def test_the_private_name_finder_sees_every_way_of_reaching_one() -> None:
    code = (
        "import referee\nimport referee._x\nfrom referee import _y, games\nfrom referee._z import w\n"
        "from referee.table import _q\nfrom referee.gin import records\n"
        "def f() -> None:\n    from referee.table.flow import _hidden\n"
        "v = referee._wire.COMPILED\nu = referee.play_match\n"
    )
    module = src.Module("tests.fake", src.ROOT / "tests" / "fake.py", False)
    tree = ast.parse(code)
    found = [n for _, _, n in src._names_in(module, tree, "referee") if _private_referee_name(n)]
    assert set(found) == {"referee._x", "referee._y", "referee._z.w", "referee.table._q",
                          "referee.table.flow._hidden", "referee._wire.COMPILED", "referee._wire"}
    shadowed = ast.parse("import referee\ndef g(referee: object) -> None:\n    print(referee._connections)\n")
    assert [n for _, _, n in src._names_in(module, shadowed, "referee") if src.is_private(n)] == []
    assert not src.is_private("referee.__version__") and src.is_private("referee.gin._cards")
    assert not _private_referee_name("referee.gin._cards.Card") and _private_referee_name("referee.wire._x")
    assert not _on_the_surface("referee.gin._cards", REFEREE_SURFACE)
    assert _on_the_surface("referee.gin.records", REFEREE_SURFACE)


def test_the_circle_finder_sees_local_and_type_checking_imports() -> None:
    edges = src.imports(src.modules("tests"))
    assert ("tests.test_structure", "tests._structure", 1) in {(e.source, e.target, 1) for e in edges}
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from . import b\n"
        "def f() -> None:\n    import p.c\n"
        "class K:\n    async def m(self) -> None:\n        from .d import x\n"
    )
    where = [(w, getattr(n, "module", None)) for n, w in src.import_statements(ast.parse(code))]
    assert where == [("top", "typing"), ("TYPE_CHECKING", None), ("function", None), ("function", "d")]
    a = src.Import("p.a", "p.b", 1, "function")
    b = src.Import("p.b", "p.c", 2, "TYPE_CHECKING")
    c = src.Import("p.c", "p.a", 3, "top")
    d = src.Import("p.c", "p.d", 4, "top")
    circles = src.cycles([a, b, c, d])
    assert circles == [[a, b, c]]
    assert src.describe(circles[0]).startswith("p.a -> p.b -> p.c -> p.a")
    assert src.members([a, b, c, d], circles[0]) == ["p.a", "p.b", "p.c"]
    assert src.cycles([a, b, d]) == []


def test_no_function_is_over_100_lines() -> None:
    long = [
        f"  {m.rel}:{fn.lineno} {name}: {n} lines"
        for m in src.modules(*SHORT_FUNCTIONS)
        for name, fn in src.functions(m)
        if (n := (fn.end_lineno or fn.lineno) - fn.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def _is_gin_own(rel: str) -> bool:
    return any(rel.startswith(own) if own.endswith("/") else rel == own for own in GIN_OWN)


def test_the_gin_modules_named_as_gin_own_exist() -> None:
    missing = [own for own in GIN_OWN if not (src.ROOT / own).exists()]
    assert not missing, f"GIN_OWN names files that do not exist (point it at Gin's own modules): {missing}"


def test_nothing_in_referee_outside_gins_own_modules_names_gin() -> None:
    hits: dict[str, set[tuple[int, str]]] = defaultdict(set)
    for m in src.modules("referee"):
        if _is_gin_own(m.rel):
            continue
        for ident, line in src.identifiers(m.tree):
            if ident not in PROJECT_NAMES and "gin" in src.words(ident):
                hits[m.rel].add((line, ident))
    report = [
        f"  {rel}: " + ", ".join(f"{line}:{ident}" for line, ident in sorted(found))
        for rel, found in sorted(hits.items())
    ]
    assert not hits, (
        f"modules of referee outside {list(GIN_OWN)} name Gin (imports of referee.gin, Gin's names; "
        "line:identifier):\n" + "\n".join(report)
    )


def test_the_gin_word_finder() -> None:
    assert src.words("ACTION_KIND_BIG_GIN") == ["action", "kind", "big", "gin"]
    assert src.words("BigGin") == ["big", "gin"]
    assert src.words("GinRuleSet") == ["gin", "rule", "set"]
    assert "gin" not in src.words("margin") + src.words("begin") + src.words("engine") + src.words("origin")
    tree = ast.parse("from .gin import RuleSet\nimport referee.gin._cards as c\nx = spec.big_gin_bonus\n")
    names = {ident for ident, _ in src.identifiers(tree)}
    assert {"gin", "big_gin_bonus", "RuleSet", "c"} <= names


GAME_WORDS = frozenset({"gin", "rummy"})
"""The first-party games' names: no module of ``arena/`` names them (issue 19)."""
PROJECT_TEXTS = re.compile(r"gin[_-]arena|Gin Arena|\bGIN_[A-Z_]+\b")
"""Texts that contain the word but name the project, not the game: its package and distribution
(``gin_arena``, ``gin-arena``), its name, and the environment variables users set (``GIN_TOKEN``)."""
HELP_KEYWORDS = frozenset({"help", "description", "epilog", "usage"})
"""The keyword arguments whose strings are help text (argparse's): they may name a game."""
ARENA_NAMES_A_GAME_FOR_NOW: frozenset[str] = frozenset()
"""Modules of ``arena/`` that still name a game, each for a reason given here."""


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (of modules, classes, functions and
    attributes: a string standing alone as a statement)."""
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def _help_texts(tree: ast.AST) -> set[int]:
    """The ids of the string constants inside a help text: a ``help=``, ``description=``,
    ``epilog=`` or ``usage=`` argument (however it is put together)."""
    return {id(c) for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg in HELP_KEYWORDS
            for c in ast.walk(n.value) if isinstance(c, ast.Constant)}


def names_a_game(rel: str, tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module (its path ``rel`` and syntax tree) names a first-party game: its file name,
    identifiers, string literals (docstrings, comments, the project's own name and the allowed
    help texts aside)."""
    hits: list[tuple[int, str]] = []
    if GAME_WORDS & set(src.words(rel.rsplit("/", 1)[-1].removesuffix(".py"))):
        hits.append((0, f"file name {rel}"))
    hits += [(line, ident) for ident, line in src.identifiers(tree)
             if ident not in PROJECT_NAMES and GAME_WORDS & set(src.words(ident))]
    allowed = _docstrings(tree) | _help_texts(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed
                and GAME_WORDS & set(src.words(PROJECT_TEXTS.sub(" ", node.value)))):
            hits.append((node.lineno, repr(node.value[:50])))
    return sorted(hits)


def test_no_module_of_the_arena_names_a_game() -> None:
    mods = {m.rel: m for m in src.modules("arena")}
    found = {rel: names_a_game(rel, m.tree) for rel, m in mods.items() if rel not in ARENA_NAMES_A_GAME_FOR_NOW}
    report = [f"  {rel}: " + ", ".join(f"{line}:{what}" for line, what in hits) for rel, hits in found.items() if hits]
    assert not report, ("modules of arena/ name a game (they reach it through the seam: referee.games, its "
                        "presentation; line:name):\n" + "\n".join(report))
    clean = sorted(rel for rel in ARENA_NAMES_A_GAME_FOR_NOW
                   if rel not in mods or not names_a_game(rel, mods[rel].tree))
    assert not clean, f"these no longer name a game (or are gone): take them off ARENA_NAMES_A_GAME_FOR_NOW: {clean}"


def test_the_game_name_finder() -> None:
    tree = ast.parse('"""Gin and rummy."""\nimport gin_arena.v1\nfrom referee import rummy\n'
                     'x = "GIN_TOKEN"\ny = "the gin-arena kit"\nz = game == "gin"\nw = RummyView\n'
                     'v = os.environ["GIN_ARENA_HOME"]\n')
    assert [line for line, _ in names_a_game("arena/x.py", tree)] == [3, 6, 7]
    helps = ast.parse('p.add_argument("--game", help="gin (default) or " + "rummy")\n'
                      'p.add_argument("--rules", default="rummy", epilog=f"{x} gin")\n')
    assert [line for line, _ in names_a_game("arena/x.py", helps)] == [2]  # a default is no help text
    assert names_a_game("arena/rummy_text.py", ast.parse("")) == [(0, "file name arena/rummy_text.py")]


def test_vulture_finds_no_dead_code() -> None:
    # The paths, the confidence (60: unused functions, methods and attributes count) and the
    # reviewed names used from outside are in pyproject.toml's [tool.vulture].
    out = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=src.ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, f"vulture (exit {out.returncode}):\n{out.stdout}{out.stderr}"


# Spelled in pieces so that this file does not name what it looks for.
MACHINE_ONLY = ("../" + "shared", "/wo" + "rk/", "se" + "eds/", "/t" + "mp/", "/ho" + "me/", "/ro" + "ot/",
                "/Us" + "ers/", "/private/" + "var/", "/var/" + "folders/")
"""What points at files that only one machine has: the folder beside the checkout, the
workplace's and the usual machines' absolute folders (temporary, home), the seed texts."""
MAY_NAME_MACHINE_PATHS = frozenset({".ci/run"})
"""CI compares ``tests/vectors`` and ``docs/rules-gin.md`` with the originals beside the
checkout, when they are there."""
MAY_NAME = {"docs/rules-gin.md": ("se" + "eds/",), "docs/rules-rummy.md": ("se" + "eds/",)}
"""The rules are the authorities copied byte for byte: their first paragraph names the source
documents' folder they were written from (a name, not a path anything reads)."""


def machine_paths(rel: str, data: bytes) -> list[str]:
    """Where ``data`` (a tracked file's bytes) names a machine path: ``rel:line: text`` for a text
    file, ``rel@offset: bytes`` for a binary one (a database keeps what it was given)."""
    allowed = MAY_NAME.get(rel, ())
    wanted = [bad for bad in MACHINE_ONLY if bad not in allowed]
    if b"\0" in data:
        hits = []
        for bad in wanted:
            at = data.find(bad.encode())
            while at != -1:
                hits.append(f"  {rel}@{at}: {data[max(0, at - 20):at + 60]!r}")
                at = data.find(bad.encode(), at + 1)
        return hits
    return [f"  {rel}:{number}: {line.strip()[:120]}"
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1)
            for bad in wanted if bad in line]


def test_no_tracked_file_names_a_machine_path_or_the_folder_beside_the_checkout() -> None:
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=src.ROOT, capture_output=True, check=False)
    assert listing.returncode == 0, f"this check reads the tracked files of a git checkout: {listing.stderr!r}"
    hits: list[str] = []
    for rel in filter(None, listing.stdout.decode().split("\0")):
        path = src.ROOT / rel
        if rel in MAY_NAME_MACHINE_PATHS:
            continue
        if path.is_symlink():  # a committed link: git keeps its target as text, which dangles elsewhere
            hits.extend(link_paths(rel, os.readlink(path)))
        elif path.is_file():
            hits.extend(machine_paths(rel, path.read_bytes()))
    assert not hits, f"tracked files naming {list(MACHINE_ONLY)} (only .ci/run may):\n" + "\n".join(hits)


def link_paths(rel: str, target: str) -> list[str]:
    """Where a tracked symbolic link points at a place only one machine has: any absolute target,
    or one that names :data:`MACHINE_ONLY` (a link is kept by git as its target's text)."""
    if target.startswith("/") or any(bad in target for bad in MACHINE_ONLY):
        return [f"  {rel} -> {target} (a link to a place of one machine: it dangles in every other clone)"]
    return []


def test_the_machine_path_finder_reads_links() -> None:
    venv = "/wo" + "rk/main/.venv"
    assert link_paths(".venv-main", venv) == [f"  .venv-main -> {venv} (a link to a place of one machine: "
                                              "it dangles in every other clone)"]
    assert link_paths("docs/x.md", "../README.md") == []
    assert link_paths("x", "../" + "shared/RULES.md") != []


def test_the_machine_path_finder_reads_binary_files() -> None:
    tmp = ("/t" + "mp/").encode()
    assert machine_paths("x.sqlite", b"SQLite format 3\0\0" + tmp + b"fx/run/replays/a.jsonl\0") != []
    assert machine_paths("x.sqlite", b"SQLite format 3\0\0replays/a.jsonl\0") == []
    assert machine_paths("a.csv", b"0,a," + tmp + b"fx/a.jsonl\n") == ["  a.csv:1: 0,a," + tmp.decode() + "fx/a.jsonl"]
    assert machine_paths("docs/rules-gin.md", ("from se" + "eds/").encode()) == []


CREDENTIAL_NAMES = re.compile(r"(^|/)(operator-token|[^/]*\.(pem|key|p12|pfx|jks)|id_(rsa|ecdsa|ed25519)|\.env)$")
"""File names that hold credentials: token files, certificates' keys and key stores, ssh keys."""
CREDENTIAL_TEXT = re.compile(
    rb"-----BEGIN ([A-Z]+ )?PRIVATE KEY-----|(token|secret|password)\s*[=:]\s*['\"]?[0-9a-f]{32,}")
"""Text that is a credential: a private key in PEM, or a long hex secret assigned to a token's name."""


def test_no_tracked_file_holds_a_credential() -> None:
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=src.ROOT, capture_output=True, check=False)
    assert listing.returncode == 0, f"this check reads the tracked files of a git checkout: {listing.stderr!r}"
    hits: list[str] = []
    for rel in filter(None, listing.stdout.decode().split("\0")):
        path = src.ROOT / rel
        if CREDENTIAL_NAMES.search(rel):
            hits.append(f"  {rel}: a credential's file name")
        elif path.is_file() and (m := CREDENTIAL_TEXT.search(path.read_bytes())):
            hits.append(f"  {rel}: {m.group(0)[:40]!r}")
    assert not hits, "tracked files holding credentials (tests make theirs at run time):\n" + "\n".join(hits)


def test_the_credential_finder_sees_keys_and_token_files() -> None:
    for name in ("operator-token", "sub/operator-token", "server.key", "ca.pem", "x/.env", "id_ed25519"):
        assert CREDENTIAL_NAMES.search(name), name
    for name in ("operator_token.py", "tokens.md", "keys.py", "env.py"):
        assert not CREDENTIAL_NAMES.search(name), name
    begin = b"-----BEGIN "
    assert CREDENTIAL_TEXT.search(begin + b"PRIVATE KEY-----\nMII")
    assert CREDENTIAL_TEXT.search(begin + b"EC PRIVATE KEY-----")
    assert CREDENTIAL_TEXT.search(b'token = "' + b"ab" * 32 + b'"')
    assert not CREDENTIAL_TEXT.search(b"token = secrets.token_hex(32)")


COMPETITION_SHARED = frozenset({"__init__", "base", "units", "score"})
"""The modules of ``arena/competition/formats`` and ``ratings`` that belong to no single format or
rater (the registry, the protocol, the scoring units, the score on the Elo scale)."""
CHOOSERS = frozenset({"get_format", "get_raters", "FORMATS", "RATERS"})
"""The registry's look-ups: a literal handed to one of these chooses a format or rater by name."""


def _one_of_each() -> tuple[frozenset[str], frozenset[str]]:
    """The registered names (formats and raters) and the modules of single formats and raters."""
    from arena.competition.formats import FORMATS
    from arena.competition.ratings import RATERS

    files = {f"arena.competition.{pkg}.{p.stem}" for pkg in ("formats", "ratings")
             for p in (src.ROOT / "arena" / "competition" / pkg).glob("*.py") if p.stem not in COMPETITION_SHARED}
    return frozenset(FORMATS) | frozenset(RATERS), frozenset(files)


def _chosen_literals(node: ast.AST) -> list[ast.Constant]:
    """The string literals of ``node`` that choose something by name: compared (``==``, ``in``),
    a default (a parameter's, a field's, an assignment's, ``default=``/``choices=``), or handed to a
    registry look-up. Dict keys and a stored record's subscripts name fields, not choices; a
    comparison with a command's name (``args.subcommand == "ladder"``) names a command."""
    def flat(e: ast.AST | None) -> list[ast.Constant]:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return [e]
        if isinstance(e, ast.Tuple | ast.List | ast.Set):
            return [c for x in e.elts for c in flat(x)]
        return []

    if isinstance(node, ast.Compare):
        sides = (node.left, *node.comparators)
        if any(isinstance(e, ast.Attribute) and e.attr.endswith("command") for e in sides):
            return []
        return [c for e in sides for c in flat(e)]
    if isinstance(node, ast.arguments):
        return [c for e in (*node.defaults, *node.kw_defaults) for c in flat(e)]
    if isinstance(node, ast.keyword) and node.arg in ("default", "choices"):
        return flat(node.value)
    if isinstance(node, ast.AnnAssign | ast.Assign):
        return flat(node.value) if isinstance(node.value, ast.Constant) else []
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in CHOOSERS:
        return flat(node.slice)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CHOOSERS:
        return [c for e in node.args for c in flat(e)]
    return []


def names_a_format_or_rater(tree: ast.AST, names: frozenset[str], files: frozenset[str]) -> list[tuple[int, str]]:
    """Where a module picks a format or a rater itself: imports one's own module, or chooses one by
    its registered name (:func:`_chosen_literals`)."""
    hits: list[tuple[int, str]] = []
    for node, _ in src.import_statements(tree):
        if isinstance(node, ast.Import):
            hits += [(node.lineno, a.name) for a in node.names if a.name in files]
        elif node.module:
            hits += [(node.lineno, m) for m in (node.module, *(f"{node.module}.{a.name}" for a in node.names))
                     if m in files]
    hits += [(c.lineno, repr(c.value)) for n in ast.walk(tree) for c in _chosen_literals(n) if c.value in names]
    return sorted(set(hits))


def test_no_module_outside_the_competition_core_names_a_format_or_a_rater() -> None:
    names, files = _one_of_each()
    found = {m.rel: names_a_format_or_rater(m.tree, names, files) for m in src.modules("arena")
             if not m.rel.startswith("arena/competition/")}
    report = [f"  {rel}: " + ", ".join(f"{line}:{what}" for line, what in hits) for rel, hits in found.items() if hits]
    assert not report, ("modules outside arena/competition pick a format or a rater themselves (ask the registries: "
                        "FORMATS, RATERS, default_raters; line:what):\n" + "\n".join(report))


def test_the_format_and_rater_finder() -> None:
    names, files = _one_of_each()
    code = ('from arena.competition.ratings.elo import EloRater\nfrom arena.competition.formats import swiss\n'
            'from arena.competition.ratings import RATERS\n'
            'def f(fmt: str = "knockout") -> bool:\n    return fmt == "gauntlet" or RATERS["glicko2"] is None\n'
            'row = {"elo": 1}\nx = row["elo"]\np.add_argument("--rater", default="bt")\nget_format("swiss")\n'
            'class C:\n    format: str = "round-robin"\n'
            'from arena.competition.formats.ladder import pair_wave\nimport arena.competition.formats.ladder\n'
            'from arena.competition.formats import ladder\nok = args.subcommand == "ladder"\nno = fmt == "ladder"\n')
    hits = names_a_format_or_rater(ast.parse(code), names, files)
    assert [line for line, _ in hits] == [1, 2, 4, 5, 5, 8, 9, 11, 12, 13, 14, 16]


PROCESS_STARTERS = frozenset({
    "subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.getoutput", "subprocess.getstatusoutput", "trio.run_process", "trio.lowlevel.open_process",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell", "os.system", "os.popen", "os.fork",
    "os.forkpty", "os.posix_spawn", "os.posix_spawnp", "multiprocessing.Process", "pty.spawn",
})
"""The calls that start a process (``os.exec*`` and ``os.spawn*`` count too: :func:`starts_a_process`)."""
BOT_SPAWNER = "referee/play/spawn.py"
"""The one module that starts a bot's process (``referee.run_bot`` and the match context's seats and pool)."""
STARTS_NO_BOT = {
    "referee/transport/auth.py": "asks git whether the operator's token file is tracked (git ls-files)",
    "arena/model/manifest.py": "checks, before a run, that a bot's interpreter can import its module (python -c)",
    "arena/web/hashing.py": "the web's password-hashing worker (a process of the web's own code)",
    "arena/web/process.py": "the live web's own process (arena serve --web runs the site apart from the referee)",
    "arena/cli/protogen_cmd.py": "runs protoc for arena protogen",
}
"""The modules of the referee and the arena that start a process that is no bot, each with what it starts."""


def starts_a_process(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module starts a process: a call of one of :data:`PROCESS_STARTERS`, ``os.exec*`` or
    ``os.spawn*``, however it was imported (``from subprocess import Popen as P``: ``P(...)``)."""
    aliases: dict[str, str] = {}
    for node, _ in src.import_statements(tree):
        if isinstance(node, ast.Import):
            aliases.update({(a.asname or a.name).split(".")[0]: (a.name if a.asname else a.name.split(".")[0])
                            for a in node.names})
        elif node.module and not node.level:
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})

    def dotted(e: ast.expr) -> str:
        if isinstance(e, ast.Name):
            return aliases.get(e.id, e.id)
        if isinstance(e, ast.Attribute):
            return f"{dotted(e.value)}.{e.attr}"
        return ""

    calls = [(node.lineno, dotted(node.func)) for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return sorted((line, name) for line, name in calls
                  if name in PROCESS_STARTERS or re.fullmatch(r"os\.(exec|spawn)\w+", name))


def test_bot_processes_are_started_by_one_module() -> None:
    found = {m.rel: starts_a_process(m.tree) for m in src.modules("referee", "arena")}
    starters = {rel for rel, hits in found.items() if hits}
    report = [f"  {rel}: " + ", ".join(f"{line}:{name}" for line, name in found[rel])
              for rel in sorted(starters - {BOT_SPAWNER, *STARTS_NO_BOT})]
    assert not report, (f"modules that start a process themselves (a bot's process is started by {BOT_SPAWNER} "
                        "alone: referee.run_bot, or a BotLaunch played by play_match; a process that is no bot is "
                        "named in STARTS_NO_BOT with what it is; line:call):\n" + "\n".join(report))
    assert starters >= {BOT_SPAWNER, *STARTS_NO_BOT}, ("named as starting a process but starting none: "
                                                       f"{sorted({BOT_SPAWNER, *STARTS_NO_BOT} - starters)}")


def test_the_process_start_finder() -> None:
    code = ("import subprocess\nimport trio\nimport os as o\nfrom subprocess import Popen as P\n"
            "from asyncio import create_subprocess_exec\nsubprocess.run(['x'])\n"
            "await trio.lowlevel.open_process(['x'])\nP(['x'])\no.execvp('x', ['x'])\n"
            "await create_subprocess_exec('x')\nsubprocess.DEVNULL\nrun(['x'])\nos.path.join('a')\n"
            "await trio.run_process(['x'])\n")
    assert [line for line, _ in starts_a_process(ast.parse(code))] == [6, 7, 8, 9, 10, 14]


SPEC_BUILDER = "arena/model/schedule.py"
"""The one place a match to be played gets its spec: ``PlayConfig.spec`` (one set of defaults)."""
REBUILDS_A_SPEC = {
    "referee/transport/service.py": "an operator's CreateMatch request, converted as it came over the wire",
    "referee/table/interrupted.py": "an interrupted match's spec, rebuilt from its journal to list it",
    "referee/table/resim.py": "a replay's recorded spec, rebuilt to play the replay again",
}
"""The modules that build a ``MatchSpec`` of a match someone else described, each with which."""


def builds_a_spec(tree: ast.AST) -> list[int]:
    """The lines that call ``MatchSpec(…)`` (``MatchSpec``, ``referee.MatchSpec``, …)."""
    return sorted(node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "MatchSpec")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "MatchSpec")))


def test_match_specs_are_built_in_one_place() -> None:
    found = {m.rel: builds_a_spec(m.tree) for m in src.modules("referee", "arena")}
    builders = {rel for rel, lines in found.items() if lines}
    report = [f"  {rel}: lines {found[rel]}" for rel in sorted(builders - {SPEC_BUILDER, *REBUILDS_A_SPEC})]
    assert not report, (f"modules that build a MatchSpec themselves (a match to be played gets its spec from "
                        f"PlayConfig.spec in {SPEC_BUILDER}, with its one set of defaults):\n" + "\n".join(report))
    assert builders >= {SPEC_BUILDER, *REBUILDS_A_SPEC}, sorted({SPEC_BUILDER, *REBUILDS_A_SPEC} - builders)


def test_the_spec_builder_finder() -> None:
    code = ("import referee\nfrom referee import MatchSpec\nMatchSpec(players=('a', 'b'))\n"
            "referee.MatchSpec(players=('a', 'b'))\nx = MatchSpec\ndataclasses.replace(spec, seed=b'x')\n")
    assert builds_a_spec(ast.parse(code)) == [3, 4]


READS_ITS_OWN_COMMAND_LINE = {
    "arena/_testbot.py": "a bot program (started as its own process): its main parses its own command line",
}
"""The modules of the arena outside ``arena/cli`` that may hold an ``argparse.Namespace``, each with why."""


def names_a_namespace(tree: ast.AST) -> list[int]:
    """The lines that name ``argparse.Namespace`` (or import ``Namespace`` from ``argparse``)."""
    hits = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "Namespace"
            and isinstance(node.value, ast.Name) and node.value.id == "argparse"]
    hits += [node.lineno for node, _ in src.import_statements(tree) if isinstance(node, ast.ImportFrom)
             and node.module == "argparse" and any(a.name == "Namespace" for a in node.names)]
    return sorted(hits)


def test_no_namespace_below_the_command_line() -> None:
    found = {m.rel: names_a_namespace(m.tree) for m in src.modules("arena") if not m.rel.startswith("arena/cli/")}
    report = [f"  {rel}: lines {lines}" for rel, lines in sorted(found.items())
              if lines and rel not in READS_ITS_OWN_COMMAND_LINE]
    assert not report, ("modules below arena/cli that take an argparse.Namespace (its cmd_* function reads the "
                        "options and hands plain values down):\n" + "\n".join(report))
    assert all(found[rel] for rel in READS_ITS_OWN_COMMAND_LINE)


def test_the_namespace_finder() -> None:
    code = ("import argparse\nfrom argparse import Namespace\ndef run(args: argparse.Namespace) -> int: ...\n"
            "x = argparse.ArgumentParser()\n")
    assert names_a_namespace(ast.parse(code)) == [2, 3]


SEAT_BRANCH_FREE = ("arena/results/", "arena/web/", "arena/model/")
"""Where no code branches on two seats versus more (issue 29): a game of any number of seats is
one :class:`arena.competition.result.Result` (places and points; the winner derived), drawn one
way. Readers of older shapes (a results list with a winner and no places) live in the store."""
SEAT_COUNTS = frozenset({"players", "places", "seats", "seat_bots", "n_seats", "seat_count"})
"""The names whose length (``len(g.players)``) or value (``report["seats"]``) is a number of seats."""
WINNERS = frozenset({"winner", "winner_seat", "winner_name"})
"""The names of a game's single winner: testing them against ``None`` chooses between the
two-seat shape (a winner) and the n-seat one (places)."""


def _tail(node: ast.AST) -> str | None:
    """The name an expression ends in: ``g.players``, ``g["players"]``, ``g.get("players", [])``,
    ``g.get("seats") or 2``, ``int(…)`` of one of those; ``None`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if isinstance(node, ast.BoolOp):
        return _tail(node.values[0])
    if isinstance(node, ast.Call):
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            return node.args[0].value
        if isinstance(node.func, ast.Name) and node.func.id in ("int", "len") and len(node.args) == 1:
            return _tail(node.args[0])
    return None


def _is_seat_count(node: ast.AST) -> bool:
    return _tail(node) in SEAT_COUNTS


def seat_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """Where code branches on the number of seats: a seat count (:data:`SEAT_COUNTS`) compared
    with 2 or 3 (``len(g.players) == 2``, ``seats > 2``, ``int(report.get("seats") or 2) <= 2``),
    or the test of an ``if``, a conditional expression or a comprehension's filter that asks
    whether a game has a single winner (``o.winner is None``)."""
    hits: list[tuple[int, str]] = []
    tests: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            if (any(isinstance(s, ast.Constant) and type(s.value) is int and s.value in (2, 3) for s in sides)
                    and any(_is_seat_count(s) for s in sides)):
                hits.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            tests.append(node.test)
        if isinstance(node, ast.comprehension):
            tests += node.ifs
    for test in tests:
        for c in ast.walk(test):
            if (isinstance(c, ast.Compare) and all(isinstance(op, ast.Is | ast.IsNot) for op in c.ops)
                    and _tail(c.left) in WINNERS
                    and all(isinstance(s, ast.Constant) and s.value is None for s in c.comparators)):
                hits.append((c.lineno, ast.unparse(c)))
    return sorted(set(hits))


NOT_A_SEAT_BRANCH: dict[tuple[str, str], str] = {}
"""Hits of :func:`seat_branches` that are no seat branch, each with the reason."""


def test_no_branch_on_two_seats_versus_more() -> None:
    allowed = NOT_A_SEAT_BRANCH.keys()  # no seat branch is left to go: none is allowed
    hits = {m.rel: seat_branches(m.tree) for m in src.modules("arena") if m.rel.startswith(SEAT_BRANCH_FREE)}
    found = {rel: [(line, what) for line, what in h if (rel, what) not in allowed] for rel, h in hits.items()}
    report = [f"  {rel}: " + "; ".join(f"{line}: {what}" for line, what in h) for rel, h in found.items() if h]
    assert not report, ("code branches on two seats versus more (read a game as a Result: places and points, "
                        "the winner derived; line: what):\n" + "\n".join(report))
    gone = sorted(k for k in allowed if k[1] not in {what for _, what in hits.get(k[0], ())})
    assert not gone, f"these are gone: take them off NOT_A_SEAT_BRANCH: {gone}"


def test_the_seat_branch_finder() -> None:
    code = ('a = len(g.players) == 2\nb = 1 if seats > 2 else 0\nc = int(report.get("seats") or 2) <= 2\n'
            'd = len(g.get("players") or []) > 2\ne = [o for o in games if o.winner is not None]\n'
            'f = None if o.winner_seat is None else 1\nif 3 <= len(table.places):\n    pass\n'
            'g = len(bots) == 2\nh = o.winner is None\ni = len(texts) == 2\nj = len(g.players) < 5\n'
            'k = report["seats"] != 2\n')
    assert [line for line, _ in seat_branches(ast.parse(code))] == [1, 2, 3, 4, 5, 6, 7, 13]
