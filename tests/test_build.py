"""The build under test is the one CI asked for: ``.ci/run`` runs the engine, wire and referee
tests a second time on the compiled build (``GIN_ARENA_COMPILE=require``) with
``GIN_ARENA_EXPECT_COMPILED=1``; everywhere else the pure-Python modules run."""

from __future__ import annotations

import os
from pathlib import Path

from referee import _gin_wire, _wire, gin


def test_the_engine_and_the_encoders_are_the_build_asked_for() -> None:
    want = os.environ.get("GIN_ARENA_EXPECT_COMPILED") == "1"
    assert gin.COMPILED is want
    assert _wire.COMPILED is want
    for module in (gin, _wire, _gin_wire):
        assert (Path(module.__file__ or "").suffix == ".so") is want, module.__file__
