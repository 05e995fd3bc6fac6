"""The optional compiled build: ``GIN_ARENA_COMPILE=1 pip install .`` compiles the games' pure
packages and the hand-made protobuf encoders with mypyc (it ships with mypy; a C compiler is
needed). ``GIN_ARENA_COMPILE=require`` fails the build where ``1`` falls back to the pure-Python
modules; unset (or ``0``), nothing is compiled and this file adds nothing to pyproject.toml.

The same ``.py`` files are the source of both builds: ``referee.gin.COMPILED`` and
``referee.wire.envelope.COMPILED`` tell which one is running (``arena --version`` prints them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

COMPILED_PACKAGES = ["referee/cardcore", "referee/gin", "referee/rummy"]
"""The games' pure packages and their shared core (a new game's package joins here)."""
INTERPRETED = {"records.py", "present.py", "knowledge.py"}
"""Modules of those packages left to run as Python: a game's replay content classes, whose
annotations the replay codec reads as text (compiled, a class's annotations become classes); its
presentation and what a seat may know (the viewers' and the audit's, off the referee's path)."""
COMPILED_MODULES = ["referee/wire/envelope.py",
                    "referee/table/match_flow.py", "referee/table/clocks.py", "referee/table/digests.py"]
"""The game-neutral byte encoders (each game's, its ``wire.py``, is compiled with its package);
the match flow (the synchronous state machine of a match, run on every decision) and the
clocks and story digests it drives."""
BUILD_REQUIRES = ["mypy>=2", "types-protobuf"]
"""What compiling needs in the build environment (mypyc, and the stubs that the encoders'
protobuf messages are checked against)."""

_MODE = os.environ.get("GIN_ARENA_COMPILE", "").strip().lower()
_WANTED = _MODE not in ("", "0", "no", "false", "off")
_REQUIRED = _MODE == "require"


def _note(text: str) -> None:
    print(f"gin-arena: {text}", file=sys.stderr)


class _BuildExt(build_ext):  # type: ignore[misc]  # setuptools has no type hints
    """Builds the compiled modules, or (unless required) leaves them out whole when the C build
    fails: a part of a mypyc build without the rest would not import."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:
            if _REQUIRED:
                raise
            _note(f"the compiled build failed ({e}); installing the pure-Python modules")
            for path in self.get_outputs():
                Path(path).unlink(missing_ok=True)
            self.extensions.clear()


def _extensions() -> list[Any]:
    """The mypyc extensions, or none (with a note) when compiling is off or impossible."""
    if not _WANTED:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        if _REQUIRED:
            sys.exit("gin-arena: GIN_ARENA_COMPILE=require but mypyc is not importable (pip install mypy)")
        _note("mypyc is not importable: installing the pure-Python modules")
        return []
    paths = [
        str(p) for d in COMPILED_PACKAGES for p in sorted(Path(d).glob("*.py")) if p.name not in INTERPRETED
    ] + COMPILED_MODULES
    try:
        # Imports beyond the compiled modules (grpc, trio, …) need not be installed to build.
        return list(mypycify(["--follow-imports=silent", *paths], opt_level="3"))
    except (Exception, SystemExit) as e:
        if _REQUIRED:
            raise
        _note(f"mypyc could not compile the modules ({e}); installing the pure-Python modules")
        return []


if _WANTED and "egg_info" in sys.argv[1:]:
    # setuptools' build backend asks for the build's requirements this way (pip installs them
    # into the isolated build environment, then builds).
    setup(setup_requires=BUILD_REQUIRES)
else:
    setup(ext_modules=_extensions(), cmdclass={"build_ext": _BuildExt})
