"""Every game under ``referee`` is pure: standard library only, no I/O, no clock, no randomness
but from the seed it is given. Importing it loads no transport, concurrency or logging library.
The one thing a game may import beyond the standard library and itself is the games' shared
core, ``referee.cardcore`` (the shuffle, rule-set plumbing, the values' base), held to the same
rules. The exception is each game package's ``wire.py``, its protobuf conversion: it may import
protobuf, the protocol's generated code and the referee's game seam and envelope (and is not
imported by the package itself: importing the game stays pure)."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from tests import _structure as src

GAMES = ("referee.gin", "referee.rummy")
"""The game packages under ``referee`` (a new game is added here: it is then held to the same
rules). ``test_every_package_under_referee_is_classified`` keeps this list complete."""
SHARED = "referee.cardcore"
"""The games' shared pure core: the only package beyond the standard library a game may import."""
PURE = (*GAMES, SHARED)
"""Every package held to the purity rules: the games and their shared core."""
PLUMBING = ("referee.model", "referee.wire", "referee.table", "referee.transport", "referee.play")
"""The referee's own subpackages, which name no game (tests/test_structure.py holds them to that)."""
NOT_GAMES: tuple[str, ...] = (SHARED, *PLUMBING)
"""Packages under ``referee`` that are not games (the shared core is pure all the same)."""

FORBIDDEN = ("grpc", "trio", "structlog", "google.protobuf", "asyncio", "socket", "random")
"""Modules that importing a game must not load (transport, concurrency, logging, unseeded chance)."""
PURE_STDLIB = frozenset({
    "__future__", "abc", "bisect", "collections", "copy", "dataclasses", "enum", "fractions", "functools",
    "hashlib", "heapq", "itertools", "math", "operator", "re", "string", "struct", "types", "typing",
})
"""The standard library a game may import: computation only (``hashlib`` turns a seed into
chance; ``time``, ``random``, ``os``, ``io``, ``pathlib``, ``sys`` and the like are out)."""
WIRE_MODULE = "wire.py"
"""A game package's protobuf conversion: the one module held to :data:`WIRE_MAY_IMPORT` instead."""
WIRE_MAY_IMPORT = ("base64", "google.protobuf", "gin_arena.v2", "referee.games", "referee.wire.envelope")
"""What a game's ``wire.py`` may import beyond what the game's other modules may."""
IMPURE_BUILTINS = frozenset({"open", "print", "input", "breakpoint", "exec", "eval", "compile", "__import__"})
"""Built-ins that reach outside the process or around the import checks."""


def _packages_under_referee() -> list[str]:
    return sorted(m.name for m in src.modules("referee") if m.is_package and m.name != "referee")


def test_every_package_under_referee_is_classified() -> None:
    unknown = [p for p in _packages_under_referee() if p not in GAMES and p not in NOT_GAMES]
    assert not unknown, f"packages under referee in neither GAMES nor NOT_GAMES of {__file__}: {unknown}"
    assert set(GAMES) <= set(_packages_under_referee()), f"GAMES lists missing packages: {GAMES}"


@pytest.mark.parametrize("game", PURE)
def test_importing_a_game_loads_no_io_or_concurrency_modules(game: str) -> None:
    code = (
        f"import sys, {game}\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r} or m in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{game} pulled in: {out.stdout.strip()}"


def _allowed(name: str, game: str) -> bool:
    """Whether a source of package ``game`` may import module ``name`` (absolutely)."""
    inside = (game, SHARED)
    return name.split(".")[0] in PURE_STDLIB or any(name == p or name.startswith(f"{p}.") for p in inside)


def _wire_may(name: str, game: str) -> bool:
    """Whether ``game``'s ``wire.py`` may import ``name``: protobuf, the protocol, the seam and the
    envelope, and ``referee`` itself for ``from referee import games, <game>``."""
    return name in ("referee", "referee.wire") or any(name == p or name.startswith(f"{p}.") for p in WIRE_MAY_IMPORT)


@pytest.mark.parametrize("game", PURE)
def test_a_games_sources_use_only_the_pure_standard_library(game: str) -> None:
    folder = game.replace(".", "/") + "/"
    mods = [m for m in src.modules("referee") if m.rel.startswith(folder)]
    assert mods, f"no sources found for {game}"
    bad: list[str] = []
    for m in mods:
        for node, _where in src.import_statements(m.tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif node.level == 0 and node.module:
                names = [node.module]
            elif node.level == 1:
                continue  # relative: inside the game's own package
            else:
                bad.append(f"{m.rel}:{node.lineno} imports from outside its package relatively")
                continue
            wire = m.rel == folder + WIRE_MODULE and game != SHARED
            bad += [f"{m.rel}:{node.lineno} imports {name}" for name in names
                    if not _allowed(name, game) and not (wire and _wire_may(name, game))]
        bad += [
            f"{m.rel}:{node.lineno} uses {node.id}"
            for node in ast.walk(m.tree)
            if isinstance(node, ast.Name) and node.id in IMPURE_BUILTINS
        ]
    assert not bad, f"{game} is not pure:\n" + "\n".join(f"  {b}" for b in bad)
