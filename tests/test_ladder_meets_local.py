"""Issue 29, "a ladder where everyone meets", on the local ladder (``arena ladder run``), with real
processes: six bots, each its own reused process, three tables at once (one game at a time per
bot). Over 300 games every pair meets and the most-played pair has at most twice the games of the
least-played; a seventh bot added later meets every other bot within its first 2×(N−1) games.
(``tests/test_ladder_meets.py`` checks the same of the hosted ladder, ``arena serve``.)

No clock is asserted: the runs take however long a loaded machine makes them."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.cli import main as arena_main
from tests._wait import RUN_HANG_S

FIRST = [f"bot{i}" for i in range(6)]
LATE = "late"
GAMES = 300
PLAY = ["--rules", "short", "--tc", "st=2 timemargin=200", "--concurrency", "3", "--workers", "1"]


def _games(db: Path) -> list[tuple[int, frozenset[str]]]:
    """Every stored game's number and its bots, in the order stored."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT game, group_concat(bot, '|') FROM game_seats GROUP BY game "
                            "ORDER BY game").fetchall()
    finally:
        conn.close()
    return [(int(g), frozenset(str(b).split("|"))) for g, b in rows]


def _hang_s(games: int) -> float:
    """When a run of ``games`` is called a hang: :data:`RUN_HANG_S` for every 100 games (a run of
    300 took over 600 s at load 12-14, a clean-clone CI run beside a benchmark)."""
    return RUN_HANG_S * max(1.0, games / 100)


def _run(db: Path, games: int) -> None:
    out = subprocess.run([sys.executable, "-m", "arena.cli", "ladder", "run", "--games", str(games), *PLAY,
                          "--no-progress", "--db", str(db)],
                         capture_output=True, text=True, timeout=_hang_s(games))
    assert out.returncode == 0, out.stderr[-3000:]


def _add(db: Path, name: str) -> None:
    assert arena_main(["ladder", "add", name, "--command", "{python} -m arena._testbot", "--db", str(db)]) == 0


@pytest.mark.timeout(_hang_s(GAMES) + _hang_s(6 * len(FIRST)) + 120)  # (above pytest's usual bound)
def test_every_pair_meets_on_the_local_ladder_and_a_late_bot_meets_everyone_soon(tmp_path: Path) -> None:
    db = tmp_path / "lad" / "ladder.sqlite"
    for name in FIRST:
        _add(db, name)
    _run(db, GAMES)
    played = _games(db)
    assert len(played) == GAMES
    pairs = Counter(p for _, bots in played for p in _pairs(bots))
    assert len(pairs) == 15, pairs  # every pair of the six
    assert max(pairs.values()) <= 2 * min(pairs.values()), pairs

    _add(db, LATE)
    _run(db, 6 * len(FIRST))  # (seven bots play three tables at once: the late one sits out some)
    late = [bots for _, bots in _games(db)[GAMES:] if LATE in bots][:2 * len(FIRST)]
    assert len(late) == 2 * len(FIRST), late
    assert set().union(*late) - {LATE} == set(FIRST), late


def _pairs(bots: frozenset[str]) -> list[frozenset[str]]:
    ordered = sorted(bots)
    return [frozenset((a, b)) for i, a in enumerate(ordered) for b in ordered[i + 1:]]
