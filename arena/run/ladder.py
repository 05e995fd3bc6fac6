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

from arena.competition.formats import get_continuous
from arena.competition.matchmaking import Matchmaking, met_at
from arena.competition.ratings import Rating, los_between, mle_ratings
from arena.competition.ratings.units import scoring_units
from arena.console import Console, Progress, log_to_file
from arena.model.manifest import BotSpec, not_playing, startup_problem
from arena.model.records import Outcome
from arena.model.schedule import GameJob, PlayConfig
from arena.results.report import PlayedGame, build_report, ranking_text, table
from arena.results.stats import format_elo
from arena.run.placement import ClusterSpec
from arena.run.procs import BotLogs
from arena.run.runner import Runner, StallMonitor, default_startup_slots
from arena.run.tournament import (
    PLAINTEXT,
    RemoteAccess,
    open_cluster,
    open_context,
    report_time_losses,
    run_folder,
)
from arena.store import open_db, outcome_from_row, play_columns, record_game, seats_by_game, transaction
from referee import DEFAULT_GAME

log = structlog.get_logger("arena")

DEFAULT_DB = Path("~/.gin-arena/ladder.sqlite")


class LadderError(Exception):
    """A ladder command that cannot be carried out (unknown bot, too few bots…)."""


@dataclass(frozen=True, slots=True)
class LadderGame:
    """A stored ladder game."""

    pair_key: str
    """The duplicate pair it belongs to."""
    outcome: Outcome
    """How it ended."""


@dataclass(frozen=True, slots=True)
class LadderRun:
    """One ``ladder run`` as stored."""

    run_id: str
    """The run's id (the prefix of its match ids)."""
    started_at: float
    """When it started (seconds since the epoch)."""
    games: int
    """Its games still on the ladder."""
    bots: tuple[str, ...]
    """The bots that played in it."""


class Ladder:
    """The ladder database."""

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = open_db(self.path, "ladder")

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
        seats = seats_by_game(self.conn)
        return [
            LadderGame(r["pair_key"], outcome_from_row(r, seats.get(int(r["idx"]), [])))
            for r in self.conn.execute("SELECT * FROM games ORDER BY idx")
        ]

    def met(self) -> Counter[frozenset[str]]:
        """Games each pair of bots played at one table."""
        return met_at([str(s["bot"]) for s in players] for players in seats_by_game(self.conn).values())

    def start_run(self, run_id: str, play: PlayConfig) -> None:
        """Record a new ``ladder run`` and how its games are played."""
        with transaction(self.conn):
            self.conn.execute("INSERT INTO runs (id, started_at, config) VALUES (?, ?, ?)",
                              (run_id, time.time(), json.dumps(play.to_dict())))

    def check_game(self, play: PlayConfig) -> None:
        """Refuse a run of another game than the ladder's earlier runs played (one ladder, one game)."""
        for r in self.conn.execute("SELECT config FROM runs"):
            game = str(json.loads(r["config"]).get("game", DEFAULT_GAME))
            if game != play.game:
                raise LadderError(f"this ladder plays {game}; use another --db for {play.game}")

    def record(self, job: GameJob, outcome: Outcome, play: PlayConfig, run: str) -> None:
        """Store a finished game (committed at once)."""
        record_game(self.conn, {"run": run, "seed": job.seed.hex(), "pairing": job.pairing, "pair": job.pair,
                                "leg": job.leg, "pair_key": job.pair_key, "finished_at": time.time(),
                                **play_columns(play.game, play.rules, play.time_control)}, outcome)

    def runs(self) -> list[LadderRun]:
        """Every ladder run with games on the ladder, oldest first."""
        seats = seats_by_game(self.conn)
        games: dict[str, list[int]] = {}
        for r in self.conn.execute("SELECT idx, run FROM games"):
            games.setdefault(str(r["run"]), []).append(int(r["idx"]))
        out = []
        for r in self.conn.execute("SELECT id, started_at FROM runs ORDER BY started_at, id"):
            mine = games.get(str(r["id"]), [])
            bots = sorted({str(s["bot"]) for g in mine for s in seats.get(g, [])})
            out.append(LadderRun(str(r["id"]), float(r["started_at"]), len(mine), tuple(bots)))
        return out

    def drop_run(self, run_id: str) -> int:
        """Delete one run's games (and the run); returns how many games went."""
        with transaction(self.conn):
            cur = self.conn.execute("DELETE FROM games WHERE run = ?", (run_id,))
            known = self.conn.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount
        if not known and not cur.rowcount:
            raise LadderError(f"no run {run_id!r} on the ladder (see `arena ladder runs`)")
        return cur.rowcount

    def drop_bot(self, name: str) -> int:
        """Delete every game ``name`` played (the bot stays registered); returns how many went."""
        if self.conn.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is None:
            raise LadderError(f"no bot {name!r} on the ladder")
        with transaction(self.conn):
            cur = self.conn.execute("DELETE FROM games WHERE idx IN (SELECT game FROM game_seats WHERE bot = ?)",
                                    (name,))
        return cur.rowcount

    def plan(self, games: int, run_id: str, rng: random.Random, seats: int = 2) -> list[GameJob]:
        """``games`` new games (rounded up to whole rotations of ``seats``): a duplicate group
        (the seats rotated on one deal) for each table the ladder's matchmaking makes of the active
        bots — the least-met first, then the nearest in the standings (the ladder format's
        :meth:`~arena.competition.formats.base.Continuous.batch`, the same pairing as the hosted ladder's)."""
        bots = [b.name for b in self.bots()]
        if len(bots) < max(2, seats):
            raise LadderError(f"the ladder needs at least {max(2, seats)} active bots; it has {len(bots)}")
        rated = {r.bot: r.elo for r in self.standings()[0]}
        tables = get_continuous().batch({b: rated.get(b, 0.0) for b in bots}, self.met(), -(-games // seats), seats,
                                        Matchmaking(), rng)
        jobs: list[GameJob] = []
        for group, bots_at in enumerate(tables):
            seed = secrets.token_bytes(32)
            key = f"{run_id}#{group}"
            for leg in range(seats):
                players = tuple(bots_at[(s + leg) % seats] for s in range(seats))
                jobs.append(GameJob(len(jobs), players, seed, "|".join(bots_at), group, leg, key))
        return jobs

    # ----- ratings -----
    def standings(self) -> tuple[list[Rating], dict[str, Any]]:
        """Maximum-likelihood ratings from every stored game (duplicate pairs as units), and the
        per-bot summary of ``build_report``."""
        games = self.games()
        names = [b.name for b in self.bots(active_only=False)]
        units = scoring_units([g.outcome.result(g.pair_key) for g in games])
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
                format_elo(r.elo),
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
    ranking = ranking_text(report)
    return "\n".join([*ranking[1:], "", text]) if ranking else text


class _LadderSink:
    def __init__(self, ladder: Ladder, progress: Progress, play: PlayConfig, run: str, rating_interval: int = 0
                 ) -> None:
        self.ladder = ladder
        self.rating_interval = rating_interval
        """Print the ladder's standings every this many finished games of the run (0: never)."""
        self.progress = progress
        self.play = play
        self.run = run
        self.done = 0
        self.crashes: Counter[str] = Counter()
        """Games each bot lost by not starting or crashing in this run."""
        self.played: Counter[str] = Counter()

    def started(self, job: GameJob, match_id: str) -> None:
        pass

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        self.ladder.record(job, outcome, self.play, self.run)  # committed at once
        self.done += 1
        self.played.update(outcome.players)
        if outcome.faulting_seat is not None and outcome.termination in ("crashed", "failed_to_connect"):
            self.crashes[outcome.players[outcome.faulting_seat]] += 1
        self.progress.update(done=self.done)
        if self.rating_interval and self.done % self.rating_interval == 0:
            ratings, report = self.ladder.standings()
            active = {b.name for b in self.ladder.bots()}
            self.progress.console.line(f"Ladder after {self.done}/{self.progress.total} games of this run:\n"
                                       + render_ladder(ratings, report, active))

    def abandoned(self, job: GameJob) -> None:
        pass

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        pass  # played again; nothing is recorded

    def proc_started(self, pid: int, match_id: str, bot: str) -> object:
        return None

    def proc_ended(self, pid: int, ticket: object) -> None:
        pass


@dataclass(frozen=True, slots=True)
class LadderRunResult:
    """What one ``ladder run`` did."""

    run_id: str
    """The run's id (``arena ladder drop --run`` takes it)."""
    done: int
    """Games finished and stored."""
    folder: Path
    """Its replays and logs."""
    always_crashed: tuple[str, ...]
    """Bots that crashed or never connected in every game they played."""
    time_losses: dict[str, int]
    """Games lost on time by the Dask worker that played them (``{}``: none, or no workers)."""


def check_bots(bots: Sequence[BotSpec]) -> None:
    """Raise :class:`LadderError` if a bot cannot start (before any game is played for it)."""
    problems = [p for p in (startup_problem(b) for b in bots) if p]
    if problems:
        raise LadderError("; ".join(problems))


async def run_ladder(
    ladder: Ladder,
    console: Console,
    play: PlayConfig,
    games: int,
    *,
    referee: str = "",
    listen: str = "127.0.0.1:0",
    seed: str = "",
    cancel_scope: trio.CancelScope | None = None,
    seats: int = 2,
    access: RemoteAccess = PLAINTEXT,
    cluster: ClusterSpec | None = None,
    rating_interval: int = 0,
) -> LadderRunResult:
    """Play ``games`` new ladder games at tables of ``seats`` (a remote ``referee`` reached as
    ``access`` says; on Dask workers with a distributed ``cluster``); the standings are printed
    every ``rating_interval`` finished games (0: never)."""
    bots = {b.name: b for b in ladder.bots()}
    remote = [b.name for b in bots.values() if b.remote]
    if remote:
        raise LadderError(f"remote bots cannot be on the local ladder: {', '.join(remote)}")
    check_bots(list(bots.values()))
    ladder.check_game(play)
    if problems := not_playing(list(bots.values()), play.game):
        raise LadderError("; ".join(problems))
    folder = run_folder(ladder.path.parent / "ladder-runs", "ladder")
    folder.mkdir(parents=True)
    log_to_file(folder / "run.log")
    run_id = f"{folder.name}-{secrets.token_hex(3)}"
    jobs = ladder.plan(games, run_id, random.Random(seed or secrets.token_hex(8)), seats)
    ladder.start_run(run_id, play)
    dask = await open_cluster(cluster or ClusterSpec(), folder, list(bots.values()), concurrency=play.concurrency,
                              games=len(jobs), referee=referee, limits=access.limits, clock=play.clock)
    progress = Progress(console, len(jobs))
    progress.workers = dask.workers() if dask is not None else 0
    sink = _LadderSink(ladder, progress, play, run_id, rating_interval)
    logs = BotLogs(folder / "logs")
    log.info("ladder_run_started", games=len(jobs), run=run_id, pairs=sorted({j.pairing for j in jobs}))
    scope = cancel_scope or trio.CancelScope()
    losses: Counter[str] = Counter()
    try:
        with scope:
            async with open_context(referee, listen, folder, access, play.clock) as context:
                runner = Runner(context, bots, {}, play, logs, sink, progress, run_id=run_id,
                                stalls=StallMonitor(), cluster=dask, startup_slots=default_startup_slots())
                losses = runner.time_losses  # (filled while it runs)
                await runner.run([(j, 0) for j in jobs])
    finally:
        if dask is not None:
            report_time_losses(losses)
            dask.close()
        progress.finish()
        log.info("ladder_run_finished", games=sink.done)
        log_to_file(None)
    crashed = tuple(sorted(b for b, n in sink.crashes.items() if n == sink.played[b]))
    return LadderRunResult(run_id, sink.done, folder, crashed, dict(sorted(losses.items())))
