"""The tests' plugin game (tests/plugin_game, registered as ``toy3``) is installed the way a third
party's game is — by pip, editable, with its entry point — but not into the user's venv, where it
would show in ``arena games`` and in every "known: …" message: ``.ci/run`` installs it into
:data:`SITE`, a folder of the checkout (ignored by git) that only the tests' processes put on
their path (:func:`activate`, from tests/conftest.py: ``sys.path`` here, ``PYTHONPATH`` for the
processes the tests start)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / ".test-site"
"""Where ``.ci/run`` installs the plugin game (``pip install --target``)."""
SOURCE = ROOT / "tests" / "plugin_game"
"""The plugin's own folder (its editable install imports ``toy3_game`` from here)."""
DIST = "gin-arena-toy3"
"""The plugin's distribution."""
INSTALL = ".venv/bin/pip install --no-deps --target .test-site -e tests/plugin_game"
"""The command that installs it there (``.ci/run`` runs it)."""


def paths() -> list[str]:
    """What a test process needs on its path to find the plugin: the install's folder (its
    dist-info, with the entry point) and the plugin's folder (an editable install's ``.pth`` is
    read only in a site folder, and ``PYTHONPATH`` is not one)."""
    return [str(SITE), str(SOURCE)] if SITE.is_dir() else []


def without(env: dict[str, str]) -> dict[str, str]:
    """``env`` with :func:`paths` taken out of its ``PYTHONPATH`` (what a user's shell has)."""
    mine = set(paths())
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in mine]
    out = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    if kept:
        out["PYTHONPATH"] = os.pathsep.join(kept)
    return out


def activate() -> None:
    """Put the plugin on this process's path and on the path of the processes it starts."""
    mine = paths()
    for p in mine:
        if p not in sys.path:
            sys.path.append(p)
    listed = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([*listed, *(p for p in mine if p not in listed)])
