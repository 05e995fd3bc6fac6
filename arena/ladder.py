"""The local ladder: bots registered once, games added run after run to the least-played pairs,
ratings recomputed from every stored game (``~/.gin-arena/ladder.sqlite`` by default)."""

from __future__ import annotations

import json
import random
import secrets
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import trio

from referee import open_match_context

from .console import Console, Progress, log_to_file
from .manifest import BotSpec
from .procs import BotLogs
from .records import Outcome
from .results import PlayedGame, build_report, table
from .runner import PlaySettings, Runner, StallMonitor
from .schedule import GameJob
from .stats import GameFacts, Rating, los_between, mle_ratings, scoring_units
from .store import connect, outcome_columns, outcome_from_row, transaction
from .tournament import run_folder

log = structlog.get_logger("arena")

DEFAULT_DB = Path("~/.gin-arena/ladder.sqlite")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY, spec TEXT NOT NULL, active INTEGER NOT NULL DEFAULT 1, added_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT, match_id TEXT NOT NULL UNIQUE,
    seat0 TEXT NOT NULL, seat1 TEXT NOT NULL, seed TEXT NOT NULL, pair_key TEXT NOT NULL,
    rules TEXT NOT NULL, time_control TEXT NOT NULL, run TEXT NOT NULL, played_at REAL NOT NULL,
    winner INTEGER, termination TEXT, faulting_seat INTEGER, detail TEXT,
    points0 INTEGER, points1 INTEGER, games_won0 INTEGER, games_won1 INTEGER, deals INTEGER,
    decisions INTEGER, think0 INTEGER, think1 INTEGER, substituted TEXT,
    replay_path TEXT, replay_hash TEXT, revealed_seed TEXT, duration REAL
);
CREATE INDEX IF NOT EXISTS games_pair ON games (seat0, seat1);
"""


class LadderError(Exception):
    """A ladder command that cannot be carried out (unknown bot, too few bots…)."""


@dataclass(frozen=True, slots=True)
class LadderGame:
    pair_key: str
    outcome: Outcome


class Ladder:
    """The ladder database."""

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = connect(self.path)
        self.conn.executescript(_SCHEMA)

    def close(self) -> None:
        self.conn.close()

    # ----- bots -----
    def add(self, bot: BotSpec, replace: bool = False) -> None:
        row = self.conn.execute("SELECT active FROM bots WHERE name = ?", (bot.name,)).fetchone()
        if row is not None and row["active"] and not replace:
            raise LadderError(f"bot {bot.name!r} is already on the ladder (use --replace to change it)")
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO bots(name, spec, active, added_at) VALUES (?, ?, 1, ?) "
                "ON CONFLICT(name) DO UPDATE SET spec = excluded.spec, active = 1",
                (bot.name, json.dumps(bot.to_dict()), time.time()),
            )

    def remove(self, name: str) -> None:
        with transaction(self.conn):
            cur = self.conn.execute("UPDATE bots SET active = 0 WHERE name = ?", (name,))
        if cur.rowcount != 1:
            raise LadderError(f"no bot {name!r} on the ladder")

    def bots(self, active_only: bool = True) -> list[BotSpec]:
        sql = (
            "SELECT spec FROM bots"
            + (" WHERE active = 1" if active_only else "")
            + " ORDER BY added_at, name"
        )
        return [BotSpec.from_dict(json.loads(r["spec"])) for r in self.conn.execute(sql)]

    # ----- games -----
    def games(self) -> list[LadderGame]:
        out = []
        for r in self.conn.execute("SELECT * FROM games ORDER BY id"):
            out.append(LadderGame(r["pair_key"], outcome_from_row(r, (r["seat0"], r["seat1"]))))
        return out

    def pair_counts(self) -> Counter[frozenset[str]]:
        counts: Counter[frozenset[str]] = Counter()
        for r in self.conn.execute("SELECT seat0, seat1, COUNT(*) AS n FROM games GROUP BY seat0, seat1"):
            counts[frozenset((r["seat0"], r["seat1"]))] += r["n"]
        return counts

    def record(self, job: GameJob, outcome: Outcome, rules: dict[str, Any], tc: str, run: str) -> None:
        cols = outcome_columns(outcome)
        names = ", ".join(cols)
        marks = ", ".join(f":{k}" for k in cols)
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO games"
                f" (seat0, seat1, seed, pair_key, rules, time_control, run, played_at, {names}) "
                f"VALUES (:seat0, :seat1, :seed, :pair_key, :rules, :tc, :run, :at, {marks})",
                {
                    **cols,
                    "seat0": job.players[0],
                    "seat1": job.players[1],
                    "seed": job.seed.hex(),
                    "pair_key": job.pair_key,
                    "rules": json.dumps(rules),
                    "tc": tc,
                    "run": run,
                    "at": time.time(),
                },
            )

    def plan(self, games: int, run_id: str, rng: random.Random) -> list[GameJob]:
        """``games`` (rounded up to even) new games: duplicate pairs, each for the active pair of
        bots with the fewest games so far (ties broken at random)."""
        bots = [b.name for b in self.bots()]
        if len(bots) < 2:
            raise LadderError(f"the ladder needs at least two active bots; it has {len(bots)}")
        counts = self.pair_counts()
        pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]
        jobs: list[GameJob] = []
        for p in range((games + 1) // 2):
            least = min(counts[frozenset(x)] for x in pairs)
            a, b = rng.choice([x for x in pairs if counts[frozenset(x)] == least])
            if rng.random() < 0.5:
                a, b = b, a
            counts[frozenset((a, b))] += 2
            seed = secrets.token_bytes(32)
            key = f"{run_id}#{p}"
            jobs.append(GameJob(len(jobs), (a, b), seed, f"{a}|{b}", p, 0, key))
            jobs.append(GameJob(len(jobs), (b, a), seed, f"{a}|{b}", p, 1, key))
        return jobs

    # ----- ratings -----
    def standings(self) -> tuple[list[Rating], dict[str, Any]]:
        """Maximum-likelihood ratings from every stored game (duplicate pairs as units), and the
        per-bot summary of ``build_report``."""
        games = self.games()
        names = [b.name for b in self.bots(active_only=False)]
        units = scoring_units(
            [GameFacts(g.outcome.players, g.outcome.winner, g.pair_key) for g in games], True
        )
        played = [PlayedGame(i, g.pair_key, g.outcome) for i, g in enumerate(games)]
        report = build_report(names, played, duplicate=True)
        return mle_ratings(units, [n for n in names if any(n in g.outcome.players for g in games)]), report


def render_ladder(ratings: Sequence[Rating], report: dict[str, Any], active: set[str]) -> str:
    by_bot = {r["bot"]: r for r in report["standings"]}
    rows = []
    for i, r in enumerate(ratings):
        s = by_bot.get(r.bot, {})
        nxt = los_between(r, ratings[i + 1]) if i + 1 < len(ratings) else None
        rows.append(
            [
                i + 1,
                r.bot + ("" if r.bot in active else " (removed)"),
                f"{r.elo:+.0f}",
                f"{r.margin:.0f}",
                "" if nxt is None else f"{100 * nxt:.1f}%",
                r.units,
                s.get("games", 0),
                f"{s.get('wins', 0)}-{s.get('losses', 0)}",
                s.get("faults", 0),
            ]
        )
    unrated = sorted(active - {r.bot for r in ratings})
    text = table(
        ["#", "bot", "Elo", "±95%", "LOS vs next", "pairs", "games", "W-L", "faults"],
        rows,
        right=[0, 2, 3, 4, 5, 6, 8],
    )
    if unrated:
        text += "\nNot rated yet (no games): " + ", ".join(unrated)
    return text


class _LadderSink:
    def __init__(self, ladder: Ladder, progress: Progress, rules: dict[str, Any], tc: str, run: str) -> None:
        self.ladder = ladder
        self.progress = progress
        self.rules = rules
        self.tc = tc
        self.run = run
        self.done = 0

    def started(self, job: GameJob, match_id: str) -> None:
        pass

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        self.ladder.record(job, outcome, self.rules, self.tc, self.run)  # committed at once
        self.done += 1
        self.progress.update(done=self.done)

    def abandoned(self, job: GameJob) -> None:
        pass

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        pass  # played again; nothing is recorded

    def proc_started(self, pid: int, match_id: str, bot: str) -> object:
        return None

    def proc_ended(self, pid: int, ticket: object) -> None:
        pass


async def run_ladder(
    ladder: Ladder,
    console: Console,
    settings: PlaySettings,
    games: int,
    *,
    referee: str = "",
    listen: str = "127.0.0.1:0",
    seed: str = "",
    cancel_scope: trio.CancelScope | None = None,
) -> tuple[int, Path]:
    """Play ``games`` new ladder games; returns how many finished and the run folder."""
    folder = run_folder(ladder.path.parent / "ladder-runs", "ladder")
    folder.mkdir(parents=True)
    log_to_file(folder / "run.log")
    run_id = f"{folder.name}-{secrets.token_hex(3)}"
    jobs = ladder.plan(games, run_id, random.Random(seed or secrets.token_hex(8)))
    bots = {b.name: b for b in ladder.bots()}
    remote = [b.name for b in bots.values() if b.remote]
    if remote:
        raise LadderError(f"remote bots cannot be on the local ladder: {', '.join(remote)}")
    progress = Progress(console, len(jobs))
    sink = _LadderSink(ladder, progress, settings.rules.to_dict(), str(settings.time_control), run_id)
    logs = BotLogs(folder / "logs")
    log.info("ladder_run_started", games=len(jobs), run=run_id, pairs=sorted({j.pairing for j in jobs}))
    scope = cancel_scope or trio.CancelScope()
    try:
        with scope:
            async with open_match_context(listen=listen, replay_dir=folder / "replays", referee=referee) as context:
                await Runner(context, bots, {}, settings, logs, sink, progress, run_id=run_id,
                             stalls=StallMonitor()).run([(j, 0) for j in jobs])
    finally:
        progress.finish()
        log.info("ladder_run_finished", games=sink.done)
        log_to_file(None)
    return sink.done, folder
