"""``arena new-game NAME --seats 2-5 [--display-name TEXT] [--dir DIR]``: a game package that plays at once.

The folder ``DIR/NAME`` is a package of its own (``gin-arena-NAME``), outside gin-arena, with
everything docs/adding-a-game.md describes: the engine (``NAME_game/engine.py``: pure, standard
library only, seeded — a small trick-taking toy with hidden hands, for the author to replace),
its presentation (``present.py``, in translatable words), its wire (``wire.py``) with its own
``NAME.proto`` and the code generated from it (by :mod:`arena.cli.protogen_cmd`, with the pinned
tools), the entry point's ``plugin.py``, a seeded random sample bot (``bot.py``, registered with
the game, so ``arena demo``, ``arena play`` and the web's tables offer it), its tests
(``tests/test_NAME.py``: the conformance checks and an audited round robin) and a
``pyproject.toml`` with the entry point. Its registration carries its display name
(``--display-name``, by default NAME capitalized: ``Crazy8``), which the viewers and the web show.
As generated it passes ``arena games --check`` and its own tests. An existing folder is never
touched: the files are written to a temporary folder beside it, which is then renamed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cli import protogen_cmd
from arena.cli.options import UsageError
from arena.exit_codes import EXIT_OK
from referee import games

TEMPLATES = Path(__file__).resolve().parent / "game_template"
"""The package's files, with ``__game__``, ``__pkg__``, ``__min__`` and ``__max__`` to fill."""
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{1,30}$")
"""A game's name: a lower-case identifier (it names the package ``NAME_game`` and ``NAME.v1``)."""
MAX_SEATS = 8
"""The most seats ``--seats`` offers (the scaffold's deck has three cards a seat and three more)."""
SEATS_RE = re.compile(r"^(\d+)(?:-(\d+))?$")


@dataclass(frozen=True, slots=True)
class Made:
    """What ``arena new-game`` wrote."""

    folder: Path
    """The package's folder."""
    files: tuple[str, ...]
    """Its files, relative to the folder."""


def _layout(name: str) -> dict[str, str]:
    """Each file of the package (relative path) and its template (``""``: the generated code)."""
    pkg = f"{name}_game"
    return {
        "pyproject.toml": "pyproject.toml.in", "README.md": "README.md.in",
        f"{pkg}/__init__.py": "init.py.in", f"{pkg}/plugin.py": "plugin.py.in", f"{pkg}/engine.py": "engine.py.in",
        f"{pkg}/present.py": "present.py.in", f"{pkg}/wire.py": "wire.py.in", f"{pkg}/bot.py": "bot.py.in",
        f"{pkg}/{name}.proto": "game.proto.in", f"{pkg}/py.typed": "", f"tests/test_{name}.py": "test_game.py.in",
    }


def seats_range(text: str) -> range:
    """``2-5`` (or ``3``) as the range of seat counts (:class:`UsageError` naming the problem)."""
    m = SEATS_RE.match(text.strip())
    if not m:
        raise UsageError(f"--seats {text!r}: give a number of seats or a range, e.g. 2-5")
    low, high = int(m.group(1)), int(m.group(2) or m.group(1))
    if not 2 <= low <= high <= MAX_SEATS:
        raise UsageError(f"--seats {text}: seats go from 2 to {MAX_SEATS}, the lower first")
    return range(low, high + 1)


def check_name(name: str) -> None:
    """:class:`UsageError` unless ``name`` is a new game's name."""
    if not NAME_RE.match(name):
        raise UsageError(f"bad game name {name!r}: a lower-case letter, then 1-30 lower-case letters, digits or _")
    if name in games.names():
        raise UsageError(f"a game named {name!r} is installed already (arena games); choose another NAME")


def default_display_name(name: str) -> str:
    """A new game's display name when none is given: its name capitalized, ``_`` as a space."""
    return name.replace("_", " ").capitalize()


def write_package(name: str, seats: range, parent: Path, display: str = "") -> Made:
    """Write the package ``parent/name`` (:class:`UsageError`, writing nothing, for a bad name,
    display name or seats, a folder that exists, or codegen tools missing); ``display``: its
    display name (``""``: :func:`default_display_name`)."""
    check_name(name)
    display = display or default_display_name(name)
    problem = games.check_display_name(display)
    if problem is not None:
        raise UsageError(f"--display-name: {problem}; nothing was written")
    folder = parent / name
    if folder.exists() or folder.is_symlink():
        raise UsageError(f"{folder} already exists; nothing was written (choose another NAME or --dir)")
    if not parent.is_dir():
        raise UsageError(f"--dir {parent}: no such folder")
    try:
        protogen_cmd.check_tools()
    except protogen_cmd.CodegenError as e:
        raise UsageError(f"its protobuf code cannot be generated: {e}; nothing was written") from None
    fill = {"__pkg__": f"{name}_game", "__game__": name, "__min__": str(seats.start), "__max__": str(seats[-1]),
            "__display__": json.dumps(display, ensure_ascii=False)}
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=parent))
    try:
        for rel, template in _layout(name).items():
            text = (TEMPLATES / template).read_text(encoding="utf-8") if template else ""
            for key, value in fill.items():
                text = text.replace(key, value)
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(text, encoding="utf-8")
        try:
            protogen_cmd.generate([staging / f"{name}_game"])
        except protogen_cmd.CodegenError as e:
            raise UsageError(f"its protobuf code could not be generated: {e}; nothing was written") from None
        os.chmod(staging, 0o755)  # (mkdtemp's 0700 would keep the folder from others)
        files = tuple(sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()))
        try:
            staging.rename(folder)  # fails if the folder appeared meanwhile: it is never replaced
        except OSError as e:
            raise UsageError(f"{folder} could not be created ({e.strerror}); nothing was written") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return Made(folder, files)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``new-game`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "new-game", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write a new game's package (engine, wire, .proto and its code, presentation, bot, tests)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        epilog="Example:\n  arena new-game crazy8 --seats 2-5 && pip install -e crazy8 && arena games --check\n"
               "  python -m pytest crazy8/tests",
    )
    p.add_argument("name", metavar="NAME", help="the game's name: a lower-case identifier, e.g. crazy8")
    p.add_argument("--seats", default="2-4", metavar="N-M", help="the numbers of seats it is played by (default 2-4)")
    p.add_argument("--display-name", default="", metavar="TEXT",
                   help="the game's name as people read it (default: NAME capitalized, e.g. Crazy8)")
    p.add_argument("--dir", type=Path, default=Path("."), metavar="DIR", help="where the folder NAME goes (default .)")
    return p


def run(args: argparse.Namespace) -> int:
    """``arena new-game``."""
    made = write_package(args.name, seats_range(args.seats), args.dir, args.display_name)
    lines = sum(len((made.folder / f).read_text(encoding="utf-8").splitlines()) for f in made.files)
    print(f"wrote {made.folder}/: {len(made.files)} files, {lines} lines")
    for f in made.files:
        print(f"  {f}")
    print(f"install it:       pip install -e {made.folder}    (then: arena games --check)")
    print(f"run its tests:    python -m pytest {made.folder}/tests")
    print(f"play it:          arena play --game {args.name}    (or arena demo --game {args.name} --games 4)")
    return EXIT_OK
