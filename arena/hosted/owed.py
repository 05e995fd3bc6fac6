"""The games a duplicate group of the hosted ladder still owes, read from ``serve.sqlite``: after a
server is killed and started again, a group half played is finished on the same deals.

A group's games are its table's seats rotated (one game per seat, :func:`~arena.competition.seating.rotations`),
all dealt from the group's seed, which the store keeps (``games.seed``) and no game of the group
reveals to its seats. What a group owes: each rotation with no stored game, or only
``interrupted`` ones (the match the kill cut: its replay stops mid-game, it is no result). Whether a
server run played duplicate groups at all is what it wrote in ``runs`` when it started
(:func:`record_run`); a run from before that is taken to have played as the ladder file says now.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

INTERRUPTED = "interrupted"
"""The termination of a match a killed server left (it owes its game again)."""


@dataclass(frozen=True, slots=True)
class OwedGame:
    """A game a duplicate group still owes."""

    pair_key: str
    """The group (``hosted-XXXXXX-pNNNNN``)."""
    run: str
    """The server run that started the group (``hosted-XXXXXX``)."""
    pair: int
    """The group's number within that run."""
    leg: int
    """The game within the group: its seats are the table rotated by ``leg``."""
    players: tuple[str, ...]
    """The bots by seat for this game."""
    seed: bytes
    """The group's seed (every game of the group is dealt from it)."""
    game: str
    """The game played (the registry's name)."""
    rules: str
    """Its rules as the store keeps them (JSON, ``arena.store.play_columns``)."""
    time_control: str
    """Its time control as the store keeps it (``TimeControl.to_json``)."""


def record_run(db: sqlite3.Connection, run_id: str, duplicate: bool) -> None:
    """Note in ``runs`` that server run ``run_id`` started, and whether its groups are duplicate."""
    with db:
        db.execute("INSERT OR IGNORE INTO runs (id, started_at, config) VALUES (?, ?, ?)",
                   (run_id, time.time(), json.dumps({"hosted": {"duplicate": duplicate}})))


def _duplicate_runs(db: sqlite3.Connection, default: bool) -> defaultdict[str, bool]:
    runs: defaultdict[str, bool] = defaultdict(lambda: default)
    for r in db.execute("SELECT id, config FROM runs WHERE id LIKE 'hosted-%'"):
        try:
            runs[str(r[0])] = bool(json.loads(r[1])["hosted"]["duplicate"])
        except (ValueError, KeyError, TypeError):
            continue
    return runs


def owed_games(db: sqlite3.Connection, *, before_run: str | None, duplicate_default: bool,
               pair_key: str | None = None) -> list[OwedGame]:
    """The games the duplicate groups of server runs other than ``before_run`` (the one starting;
    ``None``: every run) still owe, oldest group first (only group ``pair_key`` if given)."""
    duplicate = _duplicate_runs(db, duplicate_default)
    keys = [pair_key] if pair_key is not None else _short_groups(db, before_run)
    return [game for key in keys for game in _owed_by(db, key, before_run, duplicate)]


def _short_groups(db: sqlite3.Connection, before_run: str | None) -> list[str]:
    """The hosted groups of runs other than ``before_run`` with fewer games played than seats
    (those that may owe one), oldest first: one pass over the ``pair_key`` index."""
    return [str(r[0]) for r in db.execute(
        "SELECT pair_key FROM games WHERE pair_key LIKE 'hosted-%' AND status = 'done' "
        "AND (:run IS NULL OR run != :run) GROUP BY pair_key "
        f"HAVING COUNT(DISTINCT CASE WHEN termination != '{INTERRUPTED}' THEN leg END) "
        "< (SELECT COUNT(*) FROM game_seats WHERE game = MIN(idx)) ORDER BY MIN(idx)", {"run": before_run})]


def _owed_by(db: sqlite3.Connection, key: str, before_run: str | None,
             duplicate: defaultdict[str, bool]) -> list[OwedGame]:
    """The games group ``key`` owes (its stored games: of runs other than ``before_run``)."""
    rows = db.execute(
        "SELECT g.idx, g.run, g.pair, g.leg, g.seed, g.game, g.rules, g.time_control, g.termination, s.bot "
        "FROM games g JOIN game_seats s ON s.game = g.idx WHERE g.pair_key = :key "
        "AND (:run IS NULL OR g.run != :run) AND g.status = 'done' ORDER BY g.idx, s.seat",
        {"key": key, "run": before_run}).fetchall()
    games: dict[int, dict[str, Any]] = {}
    for r in rows:
        games.setdefault(int(r["idx"]), {"row": r, "seats": []})["seats"].append(str(r["bot"]))
    stored = list(games.values())
    if not stored:
        return []
    first = stored[0]["row"]
    if not duplicate[str(first["run"])] or not first["seed"]:
        return []  # a lone game (its seed revealed): nothing owed
    seats = stored[0]["seats"]
    n, at = len(seats), int(first["leg"])
    table = [seats[(k - at) % n] for k in range(n)]  # the group's first seating
    played = {int(g["row"]["leg"]) for g in stored if g["row"]["termination"] != INTERRUPTED}
    return [OwedGame(key, str(first["run"]), int(first["pair"]), leg, tuple(table[(s + leg) % n] for s in range(n)),
                     bytes.fromhex(first["seed"]), str(first["game"]), str(first["rules"]), str(first["time_control"]))
            for leg in range(n) if leg not in played]


def group_open(db: sqlite3.Connection, pair_key: str) -> bool:
    """Whether duplicate group ``pair_key`` (a tournament's or the hosted ladder's) still has
    games to play: one of its rows not done (a tournament's schedule), or a game owed (the ladder's
    rotations, :func:`owed_games`). Until it has none, its games' replays (every deal) and seed
    reveal the deals its other games are dealt."""
    if not pair_key:
        return False
    if db.execute("SELECT 1 FROM games WHERE pair_key = ? AND status != 'done' LIMIT 1", (pair_key,)).fetchone():
        return True
    return bool(pair_key.startswith("hosted-")
                and owed_games(db, before_run=None, duplicate_default=True, pair_key=pair_key))
