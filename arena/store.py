"""The arena's one storage schema (stdlib ``sqlite3``, WAL, synchronous=FULL), shared by a run's
``run.sqlite``, the ladder's ``ladder.sqlite`` and ``arena serve``'s ``serve.sqlite``:

- ``meta`` (``schema_version``, ``kind`` = run | ladder | serve, a run's ``config`` …), ``bots``
  (a server's registered bots keep only their token's SHA-256 digest, ``token_digest``, with their
  ``state`` and its ``reason``: ``arena.hosted.registry``), ``runs`` (the ladder's runs);
- ``games``: a row per game (the game played, schedule, rules and time control, status, how it
  ended, its replay) and ``game_seats``: a row per seat (``bot``, ``place``, ``points``,
  ``games_won``, ``think_ms``), so 2–6 seats fit;
- ``discarded`` and ``procs`` (a run's thrown-away results and live bot processes).

Databases made by gin-arena 0.1 (schema 1: ``seat0``/``seat1`` columns) are migrated when opened
(:func:`migrate`, one transaction); columns added to schema 2 since are added when opened
(``games.game``: filled from the run's or the ladder run's configuration).

A game's ``rules`` are stored as its game writes them (``Game.rules_to_dict`` of the registered
game, JSON), its ``time_control`` in the canonical form of ``TimeControl.to_json`` (rows written
before keep the text ``TimeControl.from_dict`` still reads): :func:`play_columns`.

A run's database holds the run's configuration, its bots, every scheduled game and every result. A result is
committed the moment its game ends, so a run stopped in any way (Ctrl-C, ``kill -9``, power)
keeps every finished game; ``--resume`` re-plays only the games that were not finished (a game
that was running is played again from scratch under a new match id, ``…-rN``).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import trio

from arena.competition.formats import PlayedRound, Round, get_format
from arena.model.manifest import BotSpec
from arena.model.paths import find_replay
from arena.model.records import Outcome
from arena.model.schedule import GameJob, RunConfig, field_of, round_jobs, schedule_fingerprint
from referee import DEFAULT_GAME, TimeControl, games

SCHEMA_VERSION = 3
"""Version 1: gin-arena 0.1's three schemas (``seat0``/``seat1`` columns; a serve database had
no version). Version 2: one schema for a run, the ladder and ``arena serve``, a row per seat.
Version 3: people's accounts and their games, apart from the bots' (``people``,
``person_sessions``, ``people_games``, ``people_seats``); a version 2 database gets the new
tables, empty, when opened (:data:`UPGRADES`)."""
DB_NAME = "run.sqlite"
Kind = Literal["run", "ladder", "serve"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY, position INTEGER NOT NULL DEFAULT 0, spec TEXT NOT NULL,
    token TEXT NOT NULL DEFAULT '', active INTEGER NOT NULL DEFAULT 1, added_at REAL NOT NULL DEFAULT 0,
    token_digest TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'enabled', reason TEXT NOT NULL DEFAULT '',
    token_set_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, started_at REAL NOT NULL, config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    idx INTEGER PRIMARY KEY,
    run TEXT NOT NULL DEFAULT '',
    game TEXT NOT NULL DEFAULT '',
    seed TEXT NOT NULL DEFAULT '', pairing TEXT NOT NULL DEFAULT '', pair INTEGER NOT NULL DEFAULT 0,
    leg INTEGER NOT NULL DEFAULT 0, pair_key TEXT NOT NULL DEFAULT '',
    rules TEXT NOT NULL DEFAULT '', time_control TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    match_id TEXT, started_at REAL, finished_at REAL,
    winner INTEGER, termination TEXT, faulting_seat INTEGER, detail TEXT, deals INTEGER, decisions INTEGER,
    substituted TEXT, replay_path TEXT, replay_hash TEXT, revealed_seed TEXT, duration REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS games_match ON games (match_id);
CREATE INDEX IF NOT EXISTS games_run ON games (run);
CREATE INDEX IF NOT EXISTS games_pair_key ON games (pair_key);
CREATE TABLE IF NOT EXISTS game_seats (
    game INTEGER NOT NULL REFERENCES games (idx) ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    place INTEGER, points INTEGER, games_won INTEGER, think_ms INTEGER,
    fallbacks INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS game_seats_bot ON game_seats (bot);
CREATE TABLE IF NOT EXISTS discarded (
    idx INTEGER NOT NULL, match_id TEXT NOT NULL, reason TEXT NOT NULL, replay_path TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS people (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS person_sessions (
    digest TEXT PRIMARY KEY, person INTEGER NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at REAL NOT NULL, expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS people_games (
    idx INTEGER PRIMARY KEY, match_id TEXT NOT NULL UNIQUE, game TEXT NOT NULL, preset TEXT NOT NULL,
    started_at REAL, finished_at REAL NOT NULL, duration REAL NOT NULL DEFAULT 0,
    winner INTEGER, termination TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',
    replay_path TEXT NOT NULL DEFAULT '', replay_hash TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS people_seats (
    game INTEGER NOT NULL REFERENCES people_games (idx) ON DELETE CASCADE,
    seat INTEGER NOT NULL, person INTEGER REFERENCES people (id), name TEXT NOT NULL,
    place INTEGER, points INTEGER,
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS people_seats_person ON people_seats (person);
CREATE TABLE IF NOT EXISTS procs (
    pid INTEGER NOT NULL, start_ticks INTEGER NOT NULL, match_id TEXT NOT NULL, bot TEXT NOT NULL,
    PRIMARY KEY (pid, start_ticks)
);
"""

_RESULT_COLUMNS = (
    "match_id, winner, termination, faulting_seat, detail, deals, decisions, substituted, replay_path, "
    "replay_hash, revealed_seed, duration"
)

_V1_SEATS = """
INSERT INTO game_seats (game, seat, bot, place, points, games_won, think_ms)
SELECT {key}, 0, seat0, {place0}, points0, games_won0, think0 FROM games_v1
UNION ALL
SELECT {key}, 1, seat1, {place1}, points1, games_won1, think1 FROM games_v1;
"""
_PLACE = "CASE WHEN winner IS NULL OR winner = {seat} THEN 1 ELSE 2 END"
_RUN_PLACE = "CASE WHEN status != 'done' THEN NULL ELSE " + _PLACE + " END"

_V1_MIGRATIONS: dict[Kind, str] = {
    "run": (
        "INSERT INTO games (idx, run, seed, pairing, pair, leg, pair_key, status, attempts, started_at, finished_at, "
        f"{_RESULT_COLUMNS}) SELECT idx, :run, seed, pairing, pair, leg, pair_key, status, attempts, started_at, "
        f"finished_at, {_RESULT_COLUMNS} FROM games_v1;"
        + _V1_SEATS.format(key="idx", place0=_RUN_PLACE.format(seat=0), place1=_RUN_PLACE.format(seat=1))
    ),
    "ladder": (
        "INSERT INTO runs (id, started_at, config) SELECT run, MIN(played_at), json_object('rules', json(rules), "
        "'time_control', time_control) FROM games_v1 GROUP BY run;"
        "INSERT INTO games (idx, run, seed, pair_key, rules, time_control, status, attempts, finished_at, "
        f"{_RESULT_COLUMNS}) SELECT id, run, seed, pair_key, rules, time_control, 'done', 1, played_at, "
        f"{_RESULT_COLUMNS} FROM games_v1;"
        + _V1_SEATS.format(key="id", place0=_PLACE.format(seat=0), place1=_PLACE.format(seat=1))
    ),
    "serve": (
        "INSERT INTO games (rules, time_control, status, attempts, finished_at, "
        f"{_RESULT_COLUMNS}) SELECT rules, time_control, 'done', 1, finished_at, {_RESULT_COLUMNS} "
        "FROM games_v1 ORDER BY finished_at;"
        + _V1_SEATS.format(
            key="(SELECT idx FROM games WHERE games.match_id = games_v1.match_id)",
            place0=_PLACE.format(seat=0),
            place1=_PLACE.format(seat=1),
        )
    ),
}


ROUNDS = "rounds"
"""The meta key of a run's rounds (JSON, one entry a round: its first game, its number of games,
its fingerprint, its label and byes). A run written before rounds were stored has none: its games
are one round."""


@dataclass(frozen=True, slots=True)
class StoredRound:
    """A round as the run stored it when it started."""

    first: int
    """The index of its first game (its games follow one another)."""
    games: int
    """How many games it has."""
    fingerprint: str
    """:func:`arena.model.schedule.schedule_fingerprint` of its games."""
    label: str = ""
    """What the format called it."""
    byes: tuple[str, ...] = ()
    """The bots that sat it out."""

    def to_dict(self) -> dict[str, Any]:
        return {"first": self.first, "games": self.games, "fingerprint": self.fingerprint, "label": self.label,
                "byes": list(self.byes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StoredRound:
        return cls(int(d["first"]), int(d["games"]), str(d["fingerprint"]), str(d.get("label", "")),
                   tuple(d.get("byes") or ()))


def stored_round(planned: Round, jobs: Sequence[GameJob]) -> StoredRound:
    """What is stored of a round when it starts."""
    return StoredRound(jobs[0].idx if jobs else 0, len(jobs), schedule_fingerprint(jobs), planned.label, planned.byes)


class _Barrier:
    """A no-op write that :meth:`DbWriter.flush` waits for (run even after a failed write)."""

    def __init__(self, done: Callable[[], object]) -> None:
        self.done = done

    def __call__(self) -> None:
        self.done()


class DbWriter:
    """Runs database (and results-file) writes on a worker thread, one at a time, in order, so
    that an fsync never stalls the event loop — where the referee timestamps the bots' answers:
    a stalled loop would charge the arena's own latency to a bot's clock."""

    def __init__(self) -> None:
        self._send, self._recv = trio.open_memory_channel[Callable[[], object]](math.inf)
        self._done = trio.Event()
        self.error: BaseException | None = None

    def submit(self, fn: Callable[[], object]) -> None:
        self._send.send_nowait(fn)

    async def run(self) -> None:
        """The writer task: runs until :meth:`close`."""
        try:
            async for fn in self._recv:
                if self.error is not None and not isinstance(fn, _Barrier):
                    continue
                try:
                    await trio.to_thread.run_sync(fn)  # not abandoned on cancel: writes complete
                except Exception as e:
                    self.error = e
        finally:
            self._done.set()

    async def flush(self) -> None:
        """Wait until every write queued so far is done (then raise the first that failed)."""
        done = trio.Event()
        token = trio.lowlevel.current_trio_token()
        self.submit(_Barrier(lambda: token.run_sync_soon(done.set)))
        await done.wait()
        if self.error is not None:
            raise self.error

    async def close(self) -> None:
        """Finish the queued writes and stop (call it shielded when cancelling)."""
        self._send.close()
        await self._done.wait()
        if self.error is not None:
            raise self.error


class StoreError(Exception):
    """A run folder that cannot be used (missing, not a run, a schedule that changed…)."""


class RunLock:
    """An exclusive lock on a run folder (``.lock``, ``flock``): one arena process plays a run at
    a time. The kernel drops it when the process dies, even by ``kill -9``."""

    def __init__(self, run_dir: Path) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = run_dir / ".lock"
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(self._fd)
            raise StoreError(f"{run_dir} is in use by another arena process (pid {holder})") from None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1


def connect(path: Path, *, any_thread: bool = False) -> sqlite3.Connection:
    """Open a database with the arena's settings (WAL, full sync, a busy timeout).
    ``any_thread``: the connection will be used from a worker thread (one at a time)."""
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=not any_thread)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (rollback on error)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@dataclass(frozen=True, slots=True)
class GameRow:
    """A scheduled game and, once done, its outcome."""

    job: GameJob
    status: str
    match_id: str
    outcome: Outcome | None


def proc_start_ticks(pid: int) -> int | None:
    """The start time of a process (clock ticks since boot, /proc/PID/stat field 22), or
    ``None`` if there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def _v1_kind(conn: sqlite3.Connection) -> Kind | None:
    """Which of gin-arena 0.1's databases this is (``None``: not one of them)."""
    if _columns(conn, "matches"):
        return "serve"
    games = _columns(conn, "games")
    if "seat0" not in games:
        return None
    return "ladder" if "played_at" in games else "run"


def migrate(conn: sqlite3.Connection) -> Kind | None:
    """Bring a database made by gin-arena 0.1 to this schema, in one transaction (on any error
    nothing changes); returns the kind migrated, or ``None`` if there was nothing to do."""
    kind = _v1_kind(conn)
    if kind is None:
        return None
    old = "matches" if kind == "serve" else "games"
    run_id = ""
    if kind == "run":
        row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        run_id = str(json.loads(row[0])["run_id"]) if row is not None else ""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"ALTER TABLE {old} RENAME TO games_v1")
        conn.execute("DROP INDEX IF EXISTS games_pair")
        for stmt in _statements(_SCHEMA):
            conn.execute(stmt)
        for column, decl in (("position", "INTEGER NOT NULL DEFAULT 0"), ("token", "TEXT NOT NULL DEFAULT ''"),
                             ("active", "INTEGER NOT NULL DEFAULT 1"), ("added_at", "REAL NOT NULL DEFAULT 0")):
            if column not in _columns(conn, "bots"):
                conn.execute(f"ALTER TABLE bots ADD COLUMN {column} {decl}")
        for stmt in _statements(_V1_MIGRATIONS[kind]):
            conn.execute(stmt, {"run": run_id} if ":run" in stmt else {})
        conn.execute("DROP TABLE games_v1")
        _write_meta(conn, {"schema_version": str(SCHEMA_VERSION), "kind": kind, "migrated_from": "1"})
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return kind


_ADDED_COLUMNS = (
    ("game_seats", "fallbacks", "INTEGER NOT NULL DEFAULT 0"),
    ("games", "game", "TEXT NOT NULL DEFAULT ''"),
    ("bots", "token_digest", "TEXT NOT NULL DEFAULT ''"),
    ("bots", "state", "TEXT NOT NULL DEFAULT 'enabled'"),
    ("bots", "reason", "TEXT NOT NULL DEFAULT ''"),
    ("bots", "token_set_at", "REAL NOT NULL DEFAULT 0"),
    ("people", "name_skeleton", "TEXT NOT NULL DEFAULT ''"),  # (arena.model.lookalike; filled by the accounts)
)
"""Columns added to schema 2 after it shipped (table, column, declaration): a database made before
gets them when opened, with their defaults (an arena that predates them ignores them)."""

_FILL_GAME = {
    "run": "UPDATE games SET game = :game WHERE game = ''",
    "ladder": ("UPDATE games SET game = COALESCE((SELECT json_extract(runs.config, '$.game') FROM runs "
               "WHERE runs.id = games.run), :game) WHERE game = ''"),
    "serve": "UPDATE games SET game = :game WHERE game = ''",
}
"""How the rows written before ``games.game`` existed learn their game: a run's from its stored
configuration (its ``game``, else the default game), a ladder's from its run's configuration; a
serve database recorded the default game's matches only."""


UPGRADES = {"2": "3"}
"""Schema versions a database is brought from when opened, to the next: the tables version 3
added are made by the schema script itself (``CREATE TABLE IF NOT EXISTS``), so the upgrade only
writes the new version (a version 2 database stays readable by everything that read it)."""


_ADDED_INDEX = "CREATE UNIQUE INDEX IF NOT EXISTS bots_token ON bots (token_digest) WHERE token_digest != ''"
"""The index on a column added since schema 2 shipped (made once the column exists): a registered
bot is found by its token's digest (``arena.hosted.registry``)."""


def _add_columns(conn: sqlite3.Connection) -> None:
    for table, column, decl in _ADDED_COLUMNS:
        if column not in _columns(conn, table):
            with transaction(conn):  # (asked again inside: another process may have added it meanwhile)
                if column not in _columns(conn, table):
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
    conn.execute(_ADDED_INDEX)
    if conn.execute("SELECT 1 FROM games WHERE game = '' LIMIT 1").fetchone() is None:
        return
    kind = conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
    config = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
    game = str(json.loads(config[0]).get("game", DEFAULT_GAME)) if config is not None else DEFAULT_GAME
    with transaction(conn):
        conn.execute(_FILL_GAME.get(str(kind[0]) if kind is not None else "serve", _FILL_GAME["serve"]),
                     {"game": game})


def _upgrade(conn: sqlite3.Connection, version: str) -> None:
    """Bring a database from ``version`` to :data:`SCHEMA_VERSION` (the schema script has made the
    new tables already)."""
    while version in UPGRADES:
        version = UPGRADES[version]
    with transaction(conn):
        _write_meta(conn, {"schema_version": version})


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _write_meta(conn: sqlite3.Connection, values: Mapping[str, str]) -> None:
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        values.items(),
    )


def open_db(path: Path, kind: Kind, *, any_thread: bool = False) -> sqlite3.Connection:
    """Open (creating it if needed, migrating it if it is older) a database of ``kind``."""
    conn = connect(path, any_thread=any_thread)
    try:
        migrate(conn)
        conn.executescript(_SCHEMA)
        _add_columns(conn)
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if version is None:
            with transaction(conn):
                _write_meta(conn, {"schema_version": str(SCHEMA_VERSION), "kind": kind})
        elif version[0] in UPGRADES:
            _upgrade(conn, str(version[0]))
        elif version[0] != str(SCHEMA_VERSION):
            raise StoreError(f"{path}: schema version {version[0]!r}; this arena reads {SCHEMA_VERSION}")
        found = conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
        if found is not None and found[0] != kind:
            raise StoreError(f"{path} is a {found[0]} database, not a {kind} database")
    except BaseException:
        conn.close()
        raise
    return conn


def play_columns(game: str, rules: Any, time_control: TimeControl) -> dict[str, str]:
    """The ``games`` columns of how a game was played: its game, its rules as that game writes
    them (JSON) and its time control in the canonical form (``TimeControl.to_json``)."""
    return {"game": game, "rules": json.dumps(games.get(game).game.rules_to_dict(rules)),
            "time_control": time_control.to_json()}


def insert_game(conn: sqlite3.Connection, values: Mapping[str, Any], players: Sequence[str]) -> int:
    """Add a game (its ``games`` columns) and its seats; returns its ``idx``. Call it inside a transaction."""
    names = ", ".join(values)
    marks = ", ".join(f":{k}" for k in values)
    cur = conn.execute(f"INSERT INTO games ({names}) VALUES ({marks})", dict(values))
    idx = int(cur.lastrowid or values["idx"])
    conn.executemany("INSERT INTO game_seats (game, seat, bot) VALUES (?, ?, ?)",
                     [(idx, seat, bot) for seat, bot in enumerate(players)])
    return idx


def outcome_columns(o: Outcome) -> dict[str, Any]:
    """An outcome's columns of ``games`` (the per-seat ones go to ``game_seats``: :func:`write_outcome`)."""
    return {
        "match_id": o.match_id,
        "winner": o.winner,
        "termination": o.termination,
        "faulting_seat": o.faulting_seat,
        "detail": o.detail,
        "deals": o.deals,
        "decisions": o.decisions,
        "substituted": ",".join(map(str, o.substituted)),
        "replay_path": o.replay_path,
        "replay_hash": o.replay_hash,
        "revealed_seed": o.seed_hex,
        "duration": o.duration_s,
    }


def write_outcome(conn: sqlite3.Connection, idx: int, o: Outcome) -> None:
    """Store an outcome's per-seat results (call it inside a transaction)."""
    conn.executemany(
        "UPDATE game_seats SET place = ?, points = ?, games_won = ?, think_ms = ?, fallbacks = ? "
        "WHERE game = ? AND seat = ?",
        [(o.places[s], o.points[s], o.games_won[s], o.think_ms[s], o.fallbacks[s] if o.fallbacks else 0, idx, s)
         for s in range(len(o.players))],
    )


def record_game(conn: sqlite3.Connection, values: Mapping[str, Any], o: Outcome) -> int:
    """Add a finished game (ladder, serve): its columns, its outcome and its seats, in one transaction."""
    with transaction(conn):
        idx = insert_game(conn, {**values, **outcome_columns(o), "status": "done", "attempts": 1}, o.players)
        write_outcome(conn, idx, o)
    return idx


def seats_by_game(conn: sqlite3.Connection, where: str = "", args: Sequence[Any] = ()) -> dict[int, list[sqlite3.Row]]:
    """Every game's seat rows, in seat order (``where`` filters on ``game_seats``)."""
    out: dict[int, list[sqlite3.Row]] = {}
    for r in conn.execute(f"SELECT * FROM game_seats {where} ORDER BY game, seat", args):
        out.setdefault(int(r["game"]), []).append(r)
    return out


def resolve_replay(path: str, folder: Path | None) -> str:
    """A stored replay path as the file in the run ``folder`` (the database may come from
    another machine or folder, or the folder was copied): see :func:`find_replay`; unchanged
    if no file is found."""
    if not path or folder is None:
        return path
    found = find_replay(path, folder)
    return str(found) if found is not None else path


LIVE_RATERS = "live_raters"
"""The meta key of the raters of a store's live standings (JSON: their names, the first ordering;
``arena serve`` writes its ladder file's ``raters``)."""


def set_live_raters(conn: sqlite3.Connection, names: Sequence[str]) -> None:
    """Store the raters of the live standings (none: the key is removed, the default applies)."""
    with transaction(conn):
        if names:
            _write_meta(conn, {LIVE_RATERS: json.dumps(list(names))})
        else:
            conn.execute("DELETE FROM meta WHERE key = ?", (LIVE_RATERS,))


def _meta_json(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row is not None else None


def live_raters(conn: sqlite3.Connection) -> tuple[str, ...]:
    """The raters of a store's live standings, by name: those :func:`set_live_raters` stored, else a
    run's chosen raters (its ``config``), else none (the caller's default)."""
    config = _meta_json(conn, "config")
    for names in (_meta_json(conn, LIVE_RATERS), config.get("raters") if isinstance(config, dict) else None):
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            return tuple(names)
    return ()


def _plain_winner(g: Mapping[str, Any], players: Sequence[str]) -> int | None:
    """The winning seat of a results file's game: ``winner`` as a name or a seat, or ``winner_seat``."""
    w = g.get("winner")
    if isinstance(w, str) and w in players:
        return players.index(w)
    seat = g.get("winner_seat", w if isinstance(w, int) and not isinstance(w, bool) else None)
    return seat if isinstance(seat, int) and 0 <= seat < len(players) else None


def outcome_from_plain(g: Mapping[str, Any], i: int) -> Outcome:
    """A game of a results file as an outcome: ``results.json``'s games, or a plain list of games
    as older or hand-written files have them (``players``, ``winner`` — a name — or
    ``winner_seat``, ``points``, and ``places`` where known: a two-seat game written before every
    game had them has its places derived from its winner)."""
    players = tuple(str(p) for p in g.get("players") or [])
    pts = [int(p) for p in g.get("points") or []]
    places = [int(p) for p in g.get("places") or []]
    zeros = (0,) * len(players)
    return Outcome(
        match_id=str(g.get("match_id") or f"game {i}"), players=players, winner=_plain_winner(g, players),
        termination=str(g.get("termination") or "normal"), faulting_seat=None, detail="",
        points=tuple(pts) if len(pts) == len(players) else zeros, games_won=zeros, deals=None, decisions=0,
        think_ms=zeros, substituted=(), replay_path="", replay_hash="", seed_hex="",
        places=tuple(places) if len(places) == len(players) else (),
    )


def outcome_from_row(r: sqlite3.Row, seats: Sequence[sqlite3.Row], folder: Path | None = None) -> Outcome:
    """A finished game's outcome from its ``games`` row and its ``game_seats`` rows."""
    return Outcome(
        match_id=r["match_id"],
        players=tuple(str(s["bot"]) for s in seats),
        winner=r["winner"],
        termination=r["termination"],
        faulting_seat=r["faulting_seat"],
        detail=r["detail"] or "",
        points=tuple(int(s["points"] or 0) for s in seats),
        games_won=tuple(int(s["games_won"] or 0) for s in seats),
        deals=r["deals"],
        decisions=r["decisions"] or 0,
        think_ms=tuple(int(s["think_ms"] or 0) for s in seats),
        substituted=tuple(int(s) for s in (r["substituted"] or "").split(",") if s),
        replay_path=resolve_replay(r["replay_path"] or "", folder),
        replay_hash=r["replay_hash"] or "",
        seed_hex=r["revealed_seed"] or "",
        duration_s=r["duration"] or 0.0,
        places=tuple(int(s["place"]) for s in seats) if all(s["place"] is not None for s in seats) else (),
        fallbacks=fallbacks if any(fallbacks := tuple(int(s["fallbacks"] or 0) for s in seats)) else (),
    )


class RunStore:
    """One run's database."""

    def __init__(self, run_dir: Path, conn: sqlite3.Connection, lock: RunLock | None = None) -> None:
        self.run_dir = run_dir
        self.conn = conn
        self.lock = lock
        self._config: RunConfig | None = None

    # ----- opening -----
    @classmethod
    def create(
        cls,
        run_dir: Path,
        config: RunConfig,
        bots: Sequence[BotSpec],
        tokens: dict[str, str],
        manifest_text: str = "",
    ) -> RunStore:
        """Create the database of a new run (the folder may exist but must hold no run). It is
        built under a temporary name and renamed: ``run.sqlite`` exists only complete."""
        lock = RunLock(run_dir)
        path = run_dir / DB_NAME
        if path.exists():
            lock.release()
            raise StoreError(f"{run_dir} already holds a run; use --resume {run_dir} to finish it")
        tmp = run_dir / f".{DB_NAME}.creating"
        tmp.unlink(missing_ok=True)
        first = get_format(config.format).plan(field_of(config), [])
        planned = first or Round(0, ())
        jobs = round_jobs(config, planned)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(_SCHEMA)
            with transaction(conn):
                _write_meta(conn, {
                    "schema_version": str(SCHEMA_VERSION),
                    "kind": "run",
                    "config": json.dumps(config.to_dict()),
                    "created_at": str(time.time()),
                    "status": "running",
                    "stop_reason": "",
                    "fingerprint": schedule_fingerprint(jobs),
                    "manifest": manifest_text,
                    "instance_tokens": json.dumps({k: v for k, v in tokens.items() if "#" in k}),
                    ROUNDS: json.dumps([stored_round(planned, jobs).to_dict()]),
                })
                conn.executemany(
                    "INSERT INTO bots(name, position, spec, token) VALUES (?, ?, ?, ?)",
                    [(b.name, i, json.dumps(b.to_dict()), tokens.get(b.name, "")) for i, b in enumerate(bots)],
                )
                for j in jobs:
                    insert_game(conn, {"idx": j.idx, "run": config.run_id, "game": config.play.game,
                                       "seed": j.seed.hex(), "pairing": j.pairing,
                                       "pair": j.pair, "leg": j.leg, "pair_key": j.pair_key}, j.players)
        finally:
            conn.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return cls(run_dir, connect(path), lock)

    @classmethod
    def open(cls, run_dir: Path, *, any_thread: bool = False, lock: bool = False) -> RunStore:
        """Open an existing run (migrating a run of gin-arena 0.1) and check that its schedule is
        what its config gives; with ``lock``, take the run's lock (to play it)."""
        path = run_dir / DB_NAME
        if not path.exists():
            raise StoreError(f"{run_dir} is not a run folder (no {DB_NAME})")
        held = RunLock(run_dir) if lock else None
        try:
            conn = open_db(path, "run", any_thread=any_thread)
        except BaseException:
            if held is not None:
                held.release()
            raise
        store = cls(run_dir, conn, held)
        try:
            store.replan(results=False)
        except StoreError:
            store.close()
            raise
        return store

    # ----- rounds -----
    def rounds(self) -> list[StoredRound]:
        """The rounds stored so far (a run from before rounds were stored: its games, one round)."""
        raw = self.meta(ROUNDS)
        if raw is None:
            count = self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            return [StoredRound(0, int(count), self.meta("fingerprint") or "")]
        return [StoredRound.from_dict(d) for d in json.loads(raw)]

    def replan(self, results: bool = True) -> list[PlayedRound]:
        """Plan every stored round again from the results of the rounds before it, check that
        the stored games are those (``StoreError`` if not: the schedule is a function of the
        configuration and the results), and return the rounds with their results so far (the
        last round's only with ``results``: opening a run of one round reads no outcome)."""
        cfg = self.config
        fmt, field = get_format(cfg.format), field_of(cfg)
        stored = self.rounds()
        rows = (self.games() if results or len(stored) > 1 else
                [GameRow(j, "", "", None) for j in self.jobs()])
        history: list[PlayedRound] = []
        where = self.run_dir / DB_NAME
        for number, entry in enumerate(stored):
            planned = fmt.plan(field, history) or Round(number, ())
            jobs = round_jobs(cfg, planned, entry.first)
            mine = rows[entry.first:entry.first + entry.games]
            if schedule_fingerprint(jobs) != entry.fingerprint or len(mine) != len(jobs):
                raise StoreError(f"{where}: the stored schedule does not match its configuration"
                                 + (f" (round {number + 1})" if number else ""))
            for a, b in zip(jobs, mine, strict=True):
                if a != b.job:
                    raise StoreError(f"{where}: scheduled game {a.idx} differs from its configuration")
            history.append(PlayedRound(planned, tuple(
                r.outcome.result(r.job.pair_key) for r in mine if r.outcome is not None)))
        if sum(e.games for e in stored) != len(rows):
            raise StoreError(f"{where}: the stored schedule does not match its configuration")
        return history

    def plan_next_round(self) -> int:
        """Once every game of the stored rounds is done: plan the next round from their results,
        store and fingerprint it (one transaction) and return its number of games; 0 if games are
        left or the format has no more rounds."""
        if self.counts()["done"] != len(self.jobs()):
            return 0
        history = self.replan()
        cfg = self.config
        planned = get_format(cfg.format).plan(field_of(cfg), history)
        if planned is None:
            return 0
        rounds = self.rounds()
        jobs = round_jobs(cfg, planned, sum(e.games for e in rounds))
        with transaction(self.conn):
            for j in jobs:
                insert_game(self.conn, {"idx": j.idx, "run": cfg.run_id, "game": cfg.play.game, "seed": j.seed.hex(),
                                        "pairing": j.pairing, "pair": j.pair, "leg": j.leg, "pair_key": j.pair_key},
                            j.players)
            _write_meta(self.conn, {ROUNDS: json.dumps([e.to_dict() for e in (*rounds, stored_round(planned, jobs))])})
        return len(jobs)

    def close(self) -> None:
        self.conn.close()
        if self.lock is not None:
            self.lock.release()

    # ----- meta -----
    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_meta(self, **values: str) -> None:
        with transaction(self.conn):
            _write_meta(self.conn, values)

    def replace_config(self, config: RunConfig) -> None:
        """Store a changed configuration (what a resumed run's command line may change: the
        embedded referee's address)."""
        self.set_meta(config=json.dumps(config.to_dict()))
        self._config = config

    @property
    def config(self) -> RunConfig:
        if self._config is None:
            raw = self.meta("config")
            if raw is None:
                raise StoreError(f"{self.run_dir}: the run has no configuration")
            self._config = RunConfig.from_dict(json.loads(raw))
        return self._config

    def bots(self) -> list[BotSpec]:
        rows = self.conn.execute("SELECT spec FROM bots ORDER BY position").fetchall()
        return [BotSpec.from_dict(json.loads(r["spec"])) for r in rows]

    def tokens(self) -> dict[str, str]:
        """Bot tokens of remote bots and of their further instances (``name#2``; stable over resumes)."""
        rows = self.conn.execute("SELECT name, token FROM bots WHERE token != ''").fetchall()
        extra = json.loads(self.meta("instance_tokens") or "{}")
        return {**{r["name"]: r["token"] for r in rows}, **extra}

    # ----- games -----
    @staticmethod
    def _job(r: sqlite3.Row, seats: Sequence[sqlite3.Row]) -> GameJob:
        return GameJob(
            r["idx"],
            tuple(str(s["bot"]) for s in seats),
            bytes.fromhex(r["seed"]),
            r["pairing"],
            r["pair"],
            r["leg"],
            r["pair_key"],
        )

    def _rows(self, where: str = "") -> list[tuple[sqlite3.Row, list[sqlite3.Row]]]:
        seats = seats_by_game(self.conn)
        rows = self.conn.execute(f"SELECT * FROM games {where} ORDER BY idx").fetchall()
        return [(r, seats.get(int(r["idx"]), [])) for r in rows]

    def jobs(self) -> list[GameJob]:
        return [self._job(r, seats) for r, seats in self._rows()]

    def games(self) -> list[GameRow]:
        out = []
        for r, seats in self._rows():
            outcome = outcome_from_row(r, seats, self.run_dir) if r["status"] == "done" else None
            out.append(GameRow(self._job(r, seats), r["status"], r["match_id"] or "", outcome))
        return out

    def pending(self) -> list[tuple[GameJob, int]]:
        """Games still to play, in schedule order, with the attempts made so far."""
        return [(self._job(r, seats), r["attempts"]) for r, seats in self._rows("WHERE status = 'pending'")]

    def counts(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT status, COUNT(*) AS n FROM games GROUP BY status").fetchall()
        out = {"pending": 0, "running": 0, "done": 0}
        out.update({r["status"]: r["n"] for r in rows})
        return out

    def reset_running(self) -> list[str]:
        """After a crash: games left ``running`` go back to ``pending`` (played again from scratch);
        returns their abandoned match ids."""
        rows = self.conn.execute("SELECT idx, match_id FROM games WHERE status = 'running'").fetchall()
        with transaction(self.conn):
            self.conn.execute("UPDATE games SET status = 'pending' WHERE status = 'running'")
        return [r["match_id"] for r in rows if r["match_id"]]

    def mark_running(self, idx: int, match_id: str, at: float | None = None) -> None:
        """The game started (``at``: when, by ``time.time()``; default now — a writer thread that
        runs this later passes the time the runner started the game)."""
        with transaction(self.conn):
            self.conn.execute(
                "UPDATE games SET status = 'running', attempts = attempts + 1, match_id = ?, started_at = ? "
                "WHERE idx = ? AND status = 'pending'",
                (match_id, time.time() if at is None else at, idx),
            )

    def mark_pending(self, idx: int) -> None:
        """An attempt that did not finish (interrupted): the game will be played again."""
        with transaction(self.conn):
            self.conn.execute(
                "UPDATE games SET status = 'pending' WHERE idx = ? AND status = 'running'", (idx,)
            )

    def discard(self, idx: int, outcome: Outcome, reason: str, replay_path: str) -> None:
        """A finished attempt whose result is thrown away: the game goes back to ``pending``."""
        with transaction(self.conn):
            self.conn.execute("UPDATE games SET status = 'pending' WHERE idx = ? AND status = 'running'", (idx,))
            self.conn.execute("INSERT INTO discarded VALUES (?, ?, ?, ?, ?)",
                              (idx, outcome.match_id, reason, replay_path, time.time()))

    def discarded(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT idx, match_id, reason, replay_path FROM discarded ORDER BY at")
        return [dict(r) for r in rows]

    def mark_done(self, idx: int, outcome: Outcome, at: float | None = None) -> None:
        cols = outcome_columns(outcome)
        sets = ", ".join(f"{k} = :{k}" for k in cols)
        with transaction(self.conn):
            cur = self.conn.execute(
                f"UPDATE games SET status = 'done', finished_at = :finished_at, {sets} "
                "WHERE idx = :idx AND status = 'running'",
                {**cols, "idx": idx, "finished_at": time.time() if at is None else at},
            )
            if cur.rowcount != 1:
                raise StoreError(f"game {idx} was not running; its result was not recorded twice")
            write_outcome(self.conn, idx, outcome)

    # ----- bot processes (so that a resumed run can end the ones a killed arena left) -----
    def proc_started(self, pid: int, ticks: int, match_id: str, bot: str) -> None:
        with transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO procs VALUES (?, ?, ?, ?)", (pid, ticks, match_id, bot))

    def proc_ended(self, pid: int, ticks: int) -> None:
        with transaction(self.conn):
            self.conn.execute("DELETE FROM procs WHERE pid = ? AND start_ticks = ?", (pid, ticks))

    def kill_leftover_procs(self) -> list[int]:
        """End the process groups of bots a killed arena left running (only if the process with
        that id is still the one started then); returns their ids."""
        killed = []
        for r in self.conn.execute("SELECT pid, start_ticks FROM procs").fetchall():
            pid = int(r["pid"])
            if proc_start_ticks(pid) == r["start_ticks"]:
                try:
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, signal.SIGKILL)
                        killed.append(pid)
                except ProcessLookupError:
                    pass
        with transaction(self.conn):
            self.conn.execute("DELETE FROM procs")
        return killed
