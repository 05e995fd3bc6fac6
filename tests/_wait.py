"""Waiting on other processes without asking how fast the machine is.

A test that starts a real process waits for an event it can observe (a line, a file, a row)
with :func:`until`; the bound only catches a hang, so it is far above what a machine loaded by
other work needs (the per-test timeout of pyproject.toml is the last resort above it)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

from gin_arena.v2 import referee_pb2

HANG_S = 240.0
"""How long a test waits for something another process does before calling it a hang: far
above what it takes on a loaded two-core machine, below pytest's per-test ``timeout``."""

RUN_HANG_S = 600.0
"""How long one command that plays games (``arena tournament``, a ladder's run) may take before
a test calls it a hang: far above its time on a machine loaded by other work (a random bot's
game on a busy core takes minutes), below pytest's per-test ``timeout``; tests/conftest.py shows
what the command had written by then."""

POLL_S = 0.05
"""How often :func:`until` looks again."""


def until(ready: Callable[[], object], what: str, *, alive: subprocess.Popen[Any] | None = None,
          bound_s: float = HANG_S) -> None:
    """Return once ``ready()`` is true; fail naming ``what`` if the process ``alive`` (when
    given) ended first, or after ``bound_s`` (a hang)."""
    deadline = time.monotonic() + bound_s
    while not ready():
        if alive is not None and alive.poll() is not None:
            if ready():  # what it did just before it ended
                return
            raise AssertionError(f"waiting for {what}: the process ended (exit {alive.returncode}) first")
        if time.monotonic() > deadline:
            raise AssertionError(f"waiting for {what}: nothing after {bound_s:.0f} s (a hang)")
        time.sleep(POLL_S)


def finished_match(ops: Any, match_id: str, metadata: Any) -> referee_pb2.MatchStatus:
    """The status of a match once the referee reports it finished (``ops``: a synchronous
    ``RefereeServiceStub``): the bots may end before the referee has written the match's end."""

    def now() -> referee_pb2.MatchStatus:
        found: referee_pb2.MatchStatus = ops.GetMatch(referee_pb2.GetMatchRequest(match_id=match_id),
                                                      metadata=metadata).match
        return found

    until(lambda: now().state == referee_pb2.MATCH_STATE_FINISHED, f"match {match_id} to finish")
    return now()
