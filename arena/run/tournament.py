"""A tournament run: its folder, its database, the referee, the runner, the results."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
import trio

from arena.competition.seating import base_name
from arena.console import Console, Progress, log_to_file
from arena.model.manifest import BotSpec, new_token
from arena.model.paths import in_folder
from arena.model.records import Outcome
from arena.model.schedule import GameJob
from arena.results.report import (
    SPRT_DECISION,
    PlayedGame,
    build_report,
    interim_text,
    render_text,
    sprt_summary,
    write_files,
)
from arena.results.stats import SprtSpec, sprt_counts, sprt_state
from arena.run.placement import ClusterSpec
from arena.run.procs import BotLogs
from arena.run.runner import Runner, StallMonitor, default_startup_slots
from arena.store import DbWriter, RunStore, proc_start_ticks

if TYPE_CHECKING:
    from arena.run.cluster import Cluster
from referee import ClientTLS, Limits, MatchContext, open_match_context

STALE_SUFFIXES = (".jsonl", ".journal", ".live", ".seed")
"""The files a match leaves in the run's ``replays/`` (a replay, a referee's journal while it
runs, …): an abandoned game's are removed before it is played again."""
log = structlog.get_logger("arena")

RESULTS_EVERY_S = 5.0
"""Results files are rewritten at most this often during a run (and at its end)."""


def run_folder(base: Path, name: str) -> Path:
    """A new run folder ``base/<name>-<YYYYmmdd-HHMMSS>`` (a suffix if it exists)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = base / f"{name}-{stamp}"
    n = 1
    while folder.exists():
        n += 1
        folder = base / f"{name}-{stamp}-{n}"
    return folder


def new_run_id(run_dir: Path) -> str:
    """A match-id prefix unique to the run: the folder's name and a random suffix."""
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "-", run_dir.name).strip("-")[:40] or "run"
    return f"{clean}-{secrets.token_hex(3)}"


def new_bot_tokens(bots: list[BotSpec], instances: int = 1) -> dict[str, str]:
    """A long-lived token for each remote bot (the bot plays all its games with it), and one for
    each further instance of it (``name#2`` …) when a bot may fill several seats of a table."""
    return {name: new_token() for b in bots if b.remote
            for name in (b.name, *(f"{b.name}#{k}" for k in range(2, instances + 1)))}


TIME_LOSSES = "time_losses_by_worker"
"""The run's games lost on time by the Dask worker that played them (a meta key and a key of
results.json; absent when no game was lost on time on a worker)."""


def report_for(store: RunStore, raters: Sequence[str] = ()) -> dict[str, Any]:
    """The results of a run so far, rated by ``raters`` (none: the run's own, ``--rater``); the
    replays are named relative to the run folder (it may be copied or moved:
    :mod:`arena.model.paths`)."""
    cfg = store.config
    rows = store.games()
    played = [PlayedGame(r.job.idx, r.job.pair_key,
                         dataclasses.replace(r.outcome, replay_path=in_folder(r.outcome.replay_path, store.run_dir)))
              for r in rows if r.outcome is not None]
    sprt = SprtSpec.parse(cfg.sprt) if cfg.sprt else None
    order = list(cfg.bots)
    if cfg.challenger:  # (a gauntlet's: its challenger first)
        order = [cfg.challenger, *[b for b in order if b != cfg.challenger]]
    extra: dict[str, Any] = {
        "rounds": [r.to_dict() for r in store.rounds()],
        "discarded": [{**d, "replay_path": in_folder(str(d["replay_path"] or ""), store.run_dir)}
                      for d in store.discarded()],
        "run": {
            **cfg.to_dict(),
            "time_control": str(cfg.play.time_control),  # the report is read by people: the text
            "seat_clock": store.meta("seat_clock"),  # the clock the bots it started were timed by
            "status": store.meta("status"),
            "stop_reason": store.meta("stop_reason"),
            "folder": str(store.run_dir),
        },
    }
    if losses := store.meta(TIME_LOSSES):
        extra[TIME_LOSSES] = json.loads(losses)
    if decided := store.meta(SPRT_DECISION):
        extra[SPRT_DECISION] = json.loads(decided)
    return build_report(order, played, duplicate=cfg.duplicate, sprt=sprt, scheduled=len(rows), extra=extra,
                        raters=raters or cfg.raters)


def write_results(store: RunStore, raters: Sequence[str] = ()) -> dict[str, Any]:
    """Write the run's results files (rated by ``raters``; none: the run's own) and return the report."""
    report = report_for(store, raters)
    write_files(store.run_dir, report)
    return report


class RunSink:
    """Records games in the run database as they start and end. The writes run on the
    :class:`DbWriter` thread with their own connection (``wstore``); nothing here blocks the
    event loop."""

    def __init__(self, wstore: RunStore, writer: DbWriter, progress: Progress | None, rating_interval: int = 0
                 ) -> None:
        self.wstore = wstore
        self.rating_interval = rating_interval
        """Print the standings every this many finished games (0: never; ``--rating-interval``)."""
        self.writer = writer
        self.progress = progress
        self.done = wstore.counts()["done"]
        self._last_write = time.monotonic()
        self.stop_reason = ""
        self._logged_stop = False
        cfg = wstore.config
        self.sprt = SprtSpec.parse(cfg.sprt) if cfg.sprt and len(cfg.bots) == 2 else None
        self._check_sprt()

    def started(self, job: GameJob, match_id: str) -> None:
        at = time.time()  # (the writer thread may run it later: the game's times are the runner's)
        self.writer.submit(lambda: self.wstore.mark_running(job.idx, match_id, at))

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        self.done += 1
        at = time.time()
        now = time.monotonic()
        rewrite = now - self._last_write >= RESULTS_EVERY_S
        if rewrite:
            self._last_write = now
        show = bool(self.rating_interval) and self.done % self.rating_interval == 0

        def record() -> None:
            self.wstore.mark_done(job.idx, outcome, at)  # committed at once
            self._check_sprt()
            if rewrite:
                write_results(self.wstore)
            if show and self.progress is not None:  # (printed above the progress bar)
                self.progress.console.line(interim_text(report_for(self.wstore)))

        self.writer.submit(record)
        if self.progress is not None:
            self.progress.update(done=self.done)

    def abandoned(self, job: GameJob) -> None:
        self.writer.submit(lambda: self.wstore.mark_pending(job.idx))

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        def record() -> None:
            kept = outcome.replay_path
            src = Path(outcome.replay_path) if outcome.replay_path else None
            if src is not None and src.exists():  # keep it aside, for inspection
                dest = src.parent / "discarded" / src.name
                dest.parent.mkdir(exist_ok=True)
                os.replace(src, dest)
                kept = str(dest)
            self.wstore.discard(job.idx, outcome, reason, kept)

        self.writer.submit(record)

    def proc_started(self, pid: int, match_id: str, bot: str) -> object:
        ticks = proc_start_ticks(pid)
        if ticks is not None:
            self.writer.submit(lambda: self.wstore.proc_started(pid, ticks, match_id, bot))
        return ticks

    def proc_ended(self, pid: int, ticket: object) -> None:
        if isinstance(ticket, int):
            self.writer.submit(lambda: self.wstore.proc_ended(pid, ticket))

    def _check_sprt(self) -> None:
        """(On the writer thread.) Decide whether the SPRT is over."""
        if self.sprt is None or self.stop_reason:
            return
        cfg = self.wstore.config
        a = cfg.challenger or cfg.bots[0]
        b = next(x for x in cfg.bots if x != a)
        facts = [
            r.outcome.result(r.job.pair_key if cfg.duplicate else "")
            for r in self.wstore.games()
            if r.outcome is not None
        ]
        state = sprt_state(sprt_counts(facts, a, b), self.sprt)
        if state.decision:
            decided = {**sprt_summary(facts, [a, b], self.sprt), "games_played": len(facts)}
            if not self.wstore.meta(SPRT_DECISION):  # (a resumed run keeps the decision it stopped on)
                self.wstore.set_meta(**{SPRT_DECISION: json.dumps(decided)})
            self.stop_reason = f"SPRT {state.decision} accepted after {len(facts)} games (LLR {state.llr:.2f})"

    def stop(self) -> bool:
        if self.writer.error is not None and not self.stop_reason:
            self.stop_reason = f"results could not be saved: {self.writer.error!r}"
        if self.stop_reason and not self._logged_stop:
            self._logged_stop = True
            log.info("run_stopping", reason=self.stop_reason)
            if self.progress is not None:
                self.progress.update(note=self.stop_reason, force=True)
        return bool(self.stop_reason)


@dataclass(slots=True)
class RunResult:
    status: str
    """``finished``, ``stopped`` (SPRT decided), ``interrupted`` (Ctrl-C, SIGTERM), ``incomplete``
    (games left because a bot's games were stopped or the cluster could not play them) or
    ``failed``."""
    report: dict[str, Any]
    failed_bots: dict[str, str] = field(default_factory=dict)
    """Bots whose games were stopped (their process failed to start or crashed too often)."""
    infrastructure_failures: list[str] = field(default_factory=list)
    """Games that could not be played on the cluster (they stay pending)."""


@dataclass(frozen=True, slots=True)
class RemoteAccess:
    """How the arena reaches a remote referee (given on each command line; never stored)."""

    operator_token: str = ""
    """The remote referee's operator token."""
    tls: ClientTLS | None = None
    """TLS to the referee (``None``: plaintext)."""
    limits: Limits | None = None
    """The embedded referee's limits (``--limit``; ``None``: the defaults). Only without a
    remote referee, which has its own."""


PLAINTEXT = RemoteAccess()
"""A remote referee reached without a token or TLS (an embedded referee needs neither)."""


@asynccontextmanager
async def open_context(
    referee: str, listen: str, folder: Path, access: RemoteAccess | None = None, clock: str = "cpu",
) -> AsyncIterator[MatchContext]:
    """Where a run's (or a ladder run's) games are played: the remote referee at ``referee``
    (reached as ``access`` says), or (``""``) one embedded for the run, listening on ``listen``
    and writing replays to ``folder/replays``; ``clock``: how the bots it starts are timed
    (``PlayConfig.clock``; the context's ``clock`` says which it uses)."""
    access = access or PLAINTEXT
    async with open_match_context(listen=listen, replay_dir=folder / "replays", referee=referee,
                                  operator_token=access.operator_token, tls=access.tls, limits=access.limits,
                                  clock=clock) as ctx:
        log.info("seat_clock", clock=ctx.clock, asked=clock)
        yield ctx


def _announce_remote(console: Console, store: RunStore, bots: list[BotSpec], address: str) -> None:
    tokens = store.tokens()
    remote = [b for b in bots if b.remote]
    if not remote:
        return
    lines = [f"# remote bots of run {store.config.run_id}: connect to {address} with these tokens"]
    names = [n for b in remote for n in sorted(tokens) if base_name(n) == b.name]
    for name in names:
        lines.append(f"{name}\t{tokens[name]}")
    path = store.run_dir / "remote-tokens.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"Remote bots must connect to {address} (tokens also in {path}):")
    for name in names:
        print(f"  {name}: --referee {address} --token {tokens[name]} --name {name} --matches 0")
    print(flush=True)


def games_on_workers(store: RunStore) -> int:
    """The run's pending games that Dask workers may play (a game with a remote seat is played on
    the arena's own referee, where that bot connects)."""
    remote = {b.name for b in store.bots() if b.remote}
    return sum(1 for job, _ in store.pending() if not remote & {base_name(p) for p in job.players})


def placed(store: RunStore, spec: ClusterSpec) -> ClusterSpec:
    """Where the run's pending games are played (``auto`` sized for them)."""
    cfg = store.config
    return spec.sized(concurrency=cfg.play.concurrency, games=games_on_workers(store), referee=cfg.referee)


def where_played(referee: str, spec: ClusterSpec) -> str:
    """Where a run's games are played, for its header (``spec`` already :meth:`~ClusterSpec.sized`)."""
    if referee:
        return f"the remote referee at {referee}"
    if spec.scheduler:
        return f"the Dask cluster of the scheduler at {spec.scheduler} (a referee per worker)"
    if spec.distributed:
        return f"{spec.workers} local Dask workers (a referee each)"
    return "the embedded referee"


async def open_cluster(spec: ClusterSpec, run_dir: Path, bots: list[BotSpec], *, concurrency: int, games: int,
                       referee: str = "", limits: Limits | None = None, clock: str = "cpu") -> Cluster | None:
    """The Dask cluster the games run on (``None``: this process plays them; ``auto`` is sized
    for ``games`` games, ``concurrency`` at once, on ``referee``; each worker's referee keeps
    ``limits`` and times the bots it starts by ``clock``); the bots are checked on every worker first."""
    spec = spec.sized(concurrency=concurrency, games=games, referee=referee)
    if not spec.distributed:
        return None
    from arena.run.cluster import Cluster  # (Dask is imported only when used)

    cluster = await trio.to_thread.run_sync(Cluster, spec, run_dir / "replays", limits, run_dir / "logs", clock)
    try:
        await cluster.wait_for_workers()  # (with none, the bots' check below would pass vacuously)
        if spec.ship_bots:
            await trio.to_thread.run_sync(cluster.ship, bots)
        await trio.to_thread.run_sync(cluster.check_bots, bots, run_dir / "logs")
        await trio.to_thread.run_sync(cluster.refresh)
    except BaseException:
        cluster.close()
        raise
    where = spec.scheduler or f"{spec.workers} local worker processes"
    print(f"Games run on Dask ({where}, {cluster.workers()} workers now); dashboard: {cluster.dashboard or 'off'}",
          flush=True)
    log.info("cluster_opened", scheduler=cluster.scheduler_address, workers=cluster.workers(),
             dashboard=cluster.dashboard, worker_addresses=await trio.to_thread.run_sync(cluster.listening))
    return cluster


def report_time_losses(losses: Counter[str]) -> None:
    """Log and print a run's (or a ladder run's) games lost on time by the Dask worker that
    played them (nothing if there were none)."""
    if losses:
        log.info(TIME_LOSSES, **losses)
        print("Time losses by worker: " + ", ".join(f"{w}: {n}" for w, n in sorted(losses.items())), flush=True)


def record_time_losses(store: RunStore, losses: Counter[str]) -> None:
    """Add a run's time losses by worker to the ones stored (results.json shows them), log and
    print them."""
    if not losses:
        return
    known = Counter[str](json.loads(store.meta(TIME_LOSSES) or "{}"))
    known.update(losses)
    store.set_meta(**{TIME_LOSSES: json.dumps(dict(sorted(known.items())))})
    report_time_losses(losses)


def _forget_abandoned(store: RunStore) -> list[str]:
    """(On ``--resume``.) The match ids of the games a killed arena left running, now pending
    again, their files in ``replays/`` removed so that they are played from scratch."""
    replays = store.run_dir / "replays"
    abandoned = store.reset_running()
    # A game marked running is written behind its start: one killed just after its referee
    # match began is still pending, with that match's files left. It is played again too.
    abandoned += [mid for job, attempt in store.pending()
                  if (mid := job.match_id(store.config.run_id, attempt)) not in abandoned
                  and any((replays / f"{mid}{suffix}").exists() for suffix in STALE_SUFFIXES)]
    for mid in abandoned:  # played again: its replay, or the journal a killed referee left, goes
        for suffix in STALE_SUFFIXES:
            (replays / f"{mid}{suffix}").unlink(missing_ok=True)
    return abandoned


async def run_tournament(
    store: RunStore, console: Console, *, resumed: bool = False, cancel_scope: trio.CancelScope | None = None,
    access: RemoteAccess = PLAINTEXT,
    cluster: ClusterSpec | None = None,
    rating_interval: int = 0,
    web: Callable[..., Awaitable[object]] | None = None,
) -> RunResult:
    """Play every pending game of a run and write its results. Cancelling ``cancel_scope`` (Ctrl-C)
    stops it cleanly: running games are aborted (and will be re-played by ``--resume``). A remote
    referee is reached as ``access`` says. Every ``rating_interval`` finished games (0: never) the
    standings are printed to the console. ``web(referee, task_status=…)``, if given, is started
    once the games' referee is up (``referee``: the embedded one, ``None`` for a remote one) and
    stopped when the run ends (the live web)."""
    cfg = store.config
    run_dir = store.run_dir
    log_to_file(run_dir / "run.log")
    bots = store.bots()
    if resumed:
        killed = store.kill_leftover_procs()
        abandoned = _forget_abandoned(store)
        log.info("run_resumed", run_dir=str(run_dir), replayed=len(abandoned), leftover_bots_killed=killed)
        if abandoned:
            print(f"Resuming {run_dir}: {len(abandoned)} game(s) that were running will be played again.")
    counts = store.counts()
    total = sum(counts.values())
    dask = await open_cluster(cluster or ClusterSpec(), run_dir, bots, concurrency=cfg.play.concurrency,
                              games=games_on_workers(store), referee=cfg.referee,
                              limits=access.limits, clock=cfg.play.clock)  # (before the clock starts)
    progress = Progress(console, total, counts["done"])
    wstore = RunStore.open(run_dir, any_thread=True)
    writer = DbWriter()
    sink = RunSink(wstore, writer, progress, rating_interval)
    logs = BotLogs(run_dir / "logs")
    status = "finished"
    store.set_meta(status="running")
    log.info(
        "run_started",
        run_id=cfg.run_id,
        games=total,
        pending=counts["pending"],
        format=cfg.format,
        bots=list(cfg.bots),
        game=cfg.play.game,
        seats=cfg.seats,
        rules=cfg.play.rules_name,
        time_control=str(cfg.play.time_control),
        concurrency=cfg.play.concurrency,
        duplicate=cfg.duplicate,
        referee=cfg.referee or "embedded",
    )
    scope = cancel_scope or trio.CancelScope()
    failed: dict[str, str] = {}
    infra: list[str] = []
    losses: Counter[str] = Counter()
    if dask is not None:
        progress.workers = dask.workers()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            try:
                with scope:
                    async with open_context(cfg.referee, cfg.listen, run_dir, access, cfg.play.clock) as context:
                        store.set_meta(seat_clock=context.clock)
                        _announce_remote(console, store, bots, context.bot_address)
                        runner = Runner(
                            context, {b.name: b for b in bots}, store.tokens(), cfg.play, logs, sink, progress,
                            run_id=cfg.run_id, stalls=StallMonitor(), cluster=dask,
                            startup_slots=default_startup_slots(),
                        )
                        progress.update(force=True)
                        # (filled while it runs)
                        failed, infra, losses = runner.failed, runner.infrastructure_failures, runner.time_losses
                        await _play(runner, Rounds(store, writer, progress), sink, context, web)
                if scope.cancelled_caught:
                    status = "interrupted"
            finally:
                with trio.CancelScope(shield=True):
                    await writer.close()
    except BaseException:
        status = "failed"
        raise
    finally:
        if dask is not None:
            record_time_losses(store, losses)
            dask.close()
        wstore.close()
        progress.finish()
        counts = store.counts()
        if status == "finished" and sink.stop_reason:
            status = "stopped"
        elif status == "finished" and counts["pending"]:
            # (games left, not by Ctrl-C: a bot's games were stopped, or the cluster could not play some)
            status = "incomplete" if failed or infra else "interrupted"
        store.set_meta(status=status, stop_reason=sink.stop_reason)
        report = write_results(store)
        log.info("run_finished", status=status, games_done=counts["done"], games_pending=counts["pending"])
        log_to_file(None)
    return RunResult(status, report, failed, infra)


@dataclass(frozen=True, slots=True)
class Rounds:
    """A run's rounds, one after the other: the games of the rounds stored, then each next round
    planned (from the stored results) once every game before it is done."""

    store: RunStore
    """The run (its main connection: planning happens between rounds, no game running)."""
    writer: DbWriter
    """The writer of the games' results (flushed before a round is planned)."""
    progress: Progress
    """Told of each new round's games."""

    async def next(self, first: bool) -> list[tuple[GameJob, int]]:
        """The games to play now: the pending games (first), else the next round's (none: over)."""
        if first and (pending := self.store.pending()):
            return pending
        await self.writer.flush()
        added = self.store.plan_next_round()
        if not added:
            return []
        self.progress.grow(added)
        rounds = self.store.rounds()
        log.info("round_planned", round=len(rounds), label=rounds[-1].label, games=added, byes=list(rounds[-1].byes))
        return self.store.pending()


async def _play(runner: Runner, rounds: Rounds, sink: RunSink, context: MatchContext,
                web: Callable[..., Awaitable[object]] | None) -> None:
    """Play the run's games round by round, with the live web beside them while they are played
    (if any)."""
    async with trio.open_nursery() as beside:
        if web is not None:
            await beside.start(web, getattr(context.host, "referee", None))
        first = True
        while not sink.stop() and (work := await rounds.next(first)):
            first = False
            await runner.run(work, stop=sink.stop)
        beside.cancel_scope.cancel()


def faults_text(report: dict[str, Any], run_dir: Path) -> str:
    """Which bots faulted, how, an example, and where their logs are."""
    per_bot: dict[str, dict[str, int]] = {}
    example: dict[str, str] = {}
    for g in report["games"]:
        seat = g["faulting_seat"]
        if seat is None or g["termination"] == "normal":
            continue
        bot = base_name(g["players"][seat])  # an instance's log is its bot's
        per_bot.setdefault(bot, {})
        per_bot[bot][g["termination"]] = per_bot[bot].get(g["termination"], 0) + 1
        example.setdefault(bot, f"{g['match_id']}: {g['detail']}")
    if not per_bot:
        return ""
    lines = ["Faults (scored by the fault policy):"]
    for bot in sorted(per_bot):
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(per_bot[bot].items()))
        lines.append(f"  {bot}: {kinds} — e.g. {example[bot]} (log: {run_dir / 'logs' / (bot + '.log')})")
    return "\n".join(lines)


def summary_text(result: RunResult, run_dir: Path) -> str:
    lines = [render_text(result.report), ""]
    faults = faults_text(result.report, run_dir)
    if faults:
        lines += [faults, ""]
    if result.status == "interrupted":
        lines.append(f"Interrupted; finish it with: arena tournament --resume {run_dir}")
    elif result.status == "incomplete":
        left = result.report.get("games_scheduled", 0) - result.report.get("games_played", 0)
        lines.append(f"Incomplete: {left} game(s) not played (why: the arena's last lines)")
    elif result.status == "stopped" and SPRT_DECISION in result.report:
        left = result.report.get("games_scheduled", 0) - result.report.get("games_played", 0)
        lines.append(f"Stopped early by the SPRT's decision above: {left} of {result.report.get('games_scheduled', 0)} "
                     "games were not played.")
    elif result.status == "stopped":
        lines.append(f"Stopped early: {result.report['run']['stop_reason']}")
    lines.append(
        f"Run folder: {run_dir} (results.json, games.csv, standings.csv, crosstable.csv, replays/, "
        "logs/, run.log, run.sqlite)"
    )
    return "\n".join(lines)
