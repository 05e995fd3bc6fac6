"""The run database: ``run.sqlite`` in the run folder (stdlib ``sqlite3``, WAL, synchronous=FULL).

It holds the run's configuration, its bots, every scheduled game and every result. A result is
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from .manifest import BotSpec
from .records import Outcome
from .schedule import GameJob, RunConfig, build_schedule, schedule_fingerprint

SCHEMA_VERSION = 1
DB_NAME = "run.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY, position INTEGER NOT NULL, spec TEXT NOT NULL, token TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS games (
    idx INTEGER PRIMARY KEY,
    seat0 TEXT NOT NULL, seat1 TEXT NOT NULL, seed TEXT NOT NULL,
    pairing TEXT NOT NULL, pair INTEGER NOT NULL, leg INTEGER NOT NULL, pair_key TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    match_id TEXT, started_at REAL, finished_at REAL,
    winner INTEGER, termination TEXT, faulting_seat INTEGER, detail TEXT,
    points0 INTEGER, points1 INTEGER, games_won0 INTEGER, games_won1 INTEGER, deals INTEGER,
    decisions INTEGER, think0 INTEGER, think1 INTEGER, substituted TEXT,
    replay_path TEXT, replay_hash TEXT, revealed_seed TEXT, duration REAL
);
CREATE TABLE IF NOT EXISTS discarded (
    idx INTEGER NOT NULL, match_id TEXT NOT NULL, reason TEXT NOT NULL, replay_path TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS procs (
    pid INTEGER NOT NULL, start_ticks INTEGER NOT NULL, match_id TEXT NOT NULL, bot TEXT NOT NULL,
    PRIMARY KEY (pid, start_ticks)
);
"""


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
                if self.error is not None:
                    continue
                try:
                    await trio.to_thread.run_sync(fn)  # not abandoned on cancel: writes complete
                except Exception as e:
                    self.error = e
        finally:
            self._done.set()

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
    attempts: int
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


def outcome_columns(o: Outcome) -> dict[str, Any]:
    """An outcome as the result columns of ``games`` (shared with the ladder)."""
    return {
        "match_id": o.match_id,
        "winner": o.winner,
        "termination": o.termination,
        "faulting_seat": o.faulting_seat,
        "detail": o.detail,
        "points0": o.points[0],
        "points1": o.points[1],
        "games_won0": o.games_won[0],
        "games_won1": o.games_won[1],
        "deals": o.deals,
        "decisions": o.decisions,
        "think0": o.think_ms[0],
        "think1": o.think_ms[1],
        "substituted": ",".join(map(str, o.substituted)),
        "replay_path": o.replay_path,
        "replay_hash": o.replay_hash,
        "revealed_seed": o.seed_hex,
        "duration": o.duration_s,
    }


def outcome_from_row(r: sqlite3.Row, players: tuple[str, str]) -> Outcome:
    return Outcome(
        match_id=r["match_id"],
        players=players,
        winner=r["winner"],
        termination=r["termination"],
        faulting_seat=r["faulting_seat"],
        detail=r["detail"] or "",
        points=(r["points0"], r["points1"]),
        games_won=(r["games_won0"], r["games_won1"]),
        deals=r["deals"],
        decisions=r["decisions"] or 0,
        think_ms=(r["think0"] or 0, r["think1"] or 0),
        substituted=tuple(int(s) for s in (r["substituted"] or "").split(",") if s),
        replay_path=r["replay_path"] or "",
        replay_hash=r["replay_hash"] or "",
        seed_hex=r["revealed_seed"] or "",
        duration_s=r["duration"] or 0.0,
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
        jobs = build_schedule(config)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(_SCHEMA)
            with transaction(conn):
                meta = {
                    "schema_version": str(SCHEMA_VERSION),
                    "config": json.dumps(config.to_dict()),
                    "created_at": str(time.time()),
                    "status": "running",
                    "stop_reason": "",
                    "fingerprint": schedule_fingerprint(jobs),
                    "manifest": manifest_text,
                }
                conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", meta.items())
                conn.executemany(
                    "INSERT INTO bots(name, position, spec, token) VALUES (?, ?, ?, ?)",
                    [(b.name, i, json.dumps(b.to_dict()), tokens.get(b.name, "")) for i, b in enumerate(bots)],
                )
                conn.executemany(
                    "INSERT INTO games(idx, seat0, seat1, seed, pairing, pair, leg, pair_key)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (j.idx, j.players[0], j.players[1], j.seed.hex(), j.pairing, j.pair, j.leg, j.pair_key)
                        for j in jobs
                    ],
                )
        finally:
            conn.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return cls(run_dir, connect(path), lock)

    @classmethod
    def open(cls, run_dir: Path, *, any_thread: bool = False, lock: bool = False) -> RunStore:
        """Open an existing run and check that its schedule is what its config gives; with
        ``lock``, take the run's lock (to play it)."""
        path = run_dir / DB_NAME
        if not path.exists():
            raise StoreError(f"{run_dir} is not a run folder (no {DB_NAME})")
        held = RunLock(run_dir) if lock else None
        conn = connect(path, any_thread=any_thread)
        if lock:
            conn.executescript(_SCHEMA)  # tables added since the run was created
        store = cls(run_dir, conn, held)
        version = store.meta("schema_version")
        if version != str(SCHEMA_VERSION):
            raise StoreError(f"{path}: schema version {version!r}; this arena reads {SCHEMA_VERSION}")
        jobs = build_schedule(store.config)
        stored = store.jobs()
        if schedule_fingerprint(jobs) != store.meta("fingerprint") or len(stored) != len(jobs):
            raise StoreError(f"{path}: the stored schedule does not match its configuration")
        for a, b in zip(jobs, stored, strict=True):
            if a != b:
                raise StoreError(f"{path}: scheduled game {a.idx} differs from its configuration")
        return store

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
            self.conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                values.items(),
            )

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
        """Bot tokens of remote bots (stable over resumes)."""
        rows = self.conn.execute("SELECT name, token FROM bots WHERE token != ''").fetchall()
        return {r["name"]: r["token"] for r in rows}

    # ----- games -----
    @staticmethod
    def _job(r: sqlite3.Row) -> GameJob:
        return GameJob(
            r["idx"],
            (r["seat0"], r["seat1"]),
            bytes.fromhex(r["seed"]),
            r["pairing"],
            r["pair"],
            r["leg"],
            r["pair_key"],
        )

    def jobs(self) -> list[GameJob]:
        return [self._job(r) for r in self.conn.execute("SELECT * FROM games ORDER BY idx")]

    def games(self) -> list[GameRow]:
        out = []
        for r in self.conn.execute("SELECT * FROM games ORDER BY idx"):
            job = self._job(r)
            outcome = outcome_from_row(r, job.players) if r["status"] == "done" else None
            out.append(GameRow(job, r["status"], r["attempts"], r["match_id"] or "", outcome))
        return out

    def pending(self) -> list[tuple[GameJob, int]]:
        """Games still to play, in schedule order, with the attempts made so far."""
        rows = self.conn.execute("SELECT * FROM games WHERE status = 'pending' ORDER BY idx").fetchall()
        return [(self._job(r), r["attempts"]) for r in rows]

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

    def mark_running(self, idx: int, match_id: str) -> None:
        with transaction(self.conn):
            self.conn.execute(
                "UPDATE games SET status = 'running', attempts = attempts + 1, match_id = ?, started_at = ? "
                "WHERE idx = ? AND status = 'pending'",
                (match_id, time.time(), idx),
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

    def mark_done(self, idx: int, outcome: Outcome) -> None:
        cols = outcome_columns(outcome)
        sets = ", ".join(f"{k} = :{k}" for k in cols)
        with transaction(self.conn):
            cur = self.conn.execute(
                f"UPDATE games SET status = 'done', finished_at = :finished_at, {sets} "
                "WHERE idx = :idx AND status = 'running'",
                {**cols, "idx": idx, "finished_at": time.time()},
            )
            if cur.rowcount != 1:
                raise StoreError(f"game {idx} was not running; its result was not recorded twice")

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
