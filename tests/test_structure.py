"""The code's shape, read from its syntax trees: no import circles, short functions, Gin named
only by Gin's own modules, no dead code, no path that only exists on one machine."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import defaultdict

from tests import _structure as src

CIRCLE_FREE = ("referee", "arena")
"""The packages whose modules must not import each other in a circle."""

SHORT_FUNCTIONS = ("referee", "arena", "sample_bots", "bench")
"""The folders whose functions must stay within ``MAX_FUNCTION_LINES``."""
MAX_FUNCTION_LINES = 100
"""From a function's ``def`` line to its last line, both included (decorators not counted)."""

GIN_OWN = ("referee/gin/", "referee/wire/gin.py")
"""The only files of ``referee`` that may name Gin: the pure game package (a folder) and its one
protobuf-conversion module. Everything else reaches Gin through the game seam."""
PROJECT_NAMES = frozenset({"gin_arena"})
"""Identifiers that contain the word but name the project (its protobuf package), not the game."""


def test_referee_and_arena_have_no_import_circle() -> None:
    edges = src.imports(src.modules(*CIRCLE_FREE))
    circles = src.cycles(edges)
    assert not circles, "import circles (function-local and TYPE_CHECKING imports count):\n" + "\n".join(
        f"  {src.describe(c)}\n    all the modules in this circle's group: {', '.join(src.members(edges, c))}"
        for c in circles
    )


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


def test_vulture_finds_no_dead_code() -> None:
    # The paths, the confidence (60: unused functions, methods and attributes count) and the
    # reviewed names used from outside are in pyproject.toml's [tool.vulture].
    out = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=src.ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, f"vulture (exit {out.returncode}):\n{out.stdout}{out.stderr}"


# Spelled in pieces so that this file does not name what it looks for.
MACHINE_ONLY = ("../" + "shared", "/wo" + "rk/", "se" + "eds/")
"""What points at files that only one machine has: the folder beside the checkout, the
workplace's absolute paths, the seed texts."""
MAY_NAME_MACHINE_PATHS = frozenset({".ci/run"})
"""CI compares ``tests/vectors`` and ``docs/rules-gin.md`` with the originals beside the
checkout, when they are there."""
MAY_NAME = {"docs/rules-gin.md": ("se" + "eds/",), "docs/rules-rummy.md": ("se" + "eds/",)}
"""The rules are the authorities copied byte for byte: their first paragraph names the source
documents' folder they were written from (a name, not a path anything reads)."""


def test_no_tracked_file_names_a_machine_path_or_the_folder_beside_the_checkout() -> None:
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=src.ROOT, capture_output=True, check=False)
    assert listing.returncode == 0, f"this check reads the tracked files of a git checkout: {listing.stderr!r}"
    listed = listing.stdout.decode().split("\0")
    hits: list[str] = []
    for rel in filter(None, listed):
        path = src.ROOT / rel
        if rel in MAY_NAME_MACHINE_PATHS or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            # Binary files are data: the v0_1 fixture databases keep, byte for byte, the paths of
            # the machine that made them, and the tests copy them before use.
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            hits.extend(f"  {rel}:{number}: {line.strip()[:120]}" for bad in MACHINE_ONLY
                        if bad in line and bad not in MAY_NAME.get(rel, ()))
    assert not hits, f"tracked files naming {list(MACHINE_ONLY)} (only .ci/run may):\n" + "\n".join(hits)


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
