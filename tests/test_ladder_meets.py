"""Issue 29, "a ladder where everyone meets", with real processes: ``arena serve --ladder`` and
six registered bots, each its own process connected with the kits' defaults (``--matches 0``: one
game at a time). Over its first 300 games every pair meets and the most-played pair has at most
twice the games of the least-played; a seventh bot that joins late meets every other bot within
its first 2×(N−1) games. (Before the ladder's matchmaking, the two bots a finished match freed
were the only ones with room, so they met again, forever: three pairs of the fifteen.)

No clock is asserted: the test waits for games to be stored, however long a loaded machine takes."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests._wait import RUN_HANG_S, until

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LADDER = '[[play]]\npreset = "short"\ntc = "st=2 timemargin=200"\n'
GAMES = 300
"""The games over which every pair must have met."""
FIRST = [f"bot{i}" for i in range(6)]
LATE = "late"


def _games(folder: Path) -> list[tuple[str, ...]]:
    """The bots of every finished game in ``serve.sqlite``, by seat, in the order stored."""
    db = folder / "serve.sqlite"
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT g.idx, s.bot FROM games g JOIN game_seats s ON s.game = g.idx "
                            "WHERE g.status = 'done' ORDER BY g.idx, s.seat").fetchall()
    except sqlite3.OperationalError:  # (the schema is not written yet)
        return []
    finally:
        conn.close()
    return [tuple(str(r[1]) for r in seats) for _, seats in itertools.groupby(rows, key=lambda r: r[0])]


def _bot(address: str, token: str, name: str) -> subprocess.Popen[str]:
    """The lean greedy test bot with the kits' defaults: one game at a time, until stopped."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena._testbot", "--referee", address, "--token", token, "--matches", "0",
         "--name", name], cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def test_every_pair_meets_and_a_late_bot_meets_everyone_soon(tmp_path: Path,
                                                             procs: list[subprocess.Popen[str]]) -> None:
    folder = tmp_path / "srv"
    (tmp_path / "ladder.toml").write_text(LADDER, encoding="utf-8")
    tokens = {}
    for name in [*FIRST, LATE]:
        added = subprocess.run([sys.executable, "-m", "arena.cli", "bots", "add", name, "--dir", str(folder)],
                               cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=RUN_HANG_S)
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip()
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(folder),
         "--ladder", str(tmp_path / "ladder.toml"), "--limit", "bot_matches_per_minute=100000"],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    procs.append(server)
    assert server.stdout is not None
    line = server.stdout.readline()
    assert line.startswith("referee listening on "), line
    address = line.split()[3].rstrip(";")
    procs += [_bot(address, tokens[name], name) for name in FIRST]

    until(lambda: len(_games(folder)) >= GAMES, f"{GAMES} games", alive=server, bound_s=RUN_HANG_S)
    first = _games(folder)[:GAMES]
    met = Counter(frozenset(p) for g in first for p in itertools.combinations(g, 2))
    pairs = {frozenset(p): met[frozenset(p)] for p in itertools.combinations(FIRST, 2)}
    shown = {"–".join(sorted(p)): n for p, n in pairs.items()}
    assert all(pairs.values()), f"pairs that never met in {GAMES} games: {shown}"
    assert max(pairs.values()) <= 2 * min(pairs.values()), f"games per pair over {GAMES} games: {shown}"

    procs.append(_bot(address, tokens[LATE], LATE))
    window = 2 * len(FIRST)  # 2×(N−1) with N = 7 bots

    def late_games() -> list[tuple[str, ...]]:
        return [g for g in _games(folder) if LATE in g]

    until(lambda: len(late_games()) >= window, f"{window} games of the late bot", alive=server, bound_s=RUN_HANG_S)
    opponents = {b for g in late_games()[:window] for b in g if b != LATE}
    assert opponents == set(FIRST), f"the late bot's first {window} games met only {sorted(opponents)}"
