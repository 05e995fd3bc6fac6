"""Plays scheduled games: a dispatcher under trio that keeps up to ``concurrency`` games running
(and no more than a bot's own limit for each bot), each game one ``referee.play_match_async``
call on the run's match context (which starts the game's bots and ends them after it); the sink,
the bots' logs, the stall monitor and the start-up slots stay here, around that call. Which
planned game starts when a slot is free — one whose bots are free — is
:class:`arena.run.dispatch.BotsInPlay`'s choice."""

from __future__ import annotations

import dataclasses
import os
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import structlog
import trio

from arena.competition.seating import base_name
from arena.console import Progress
from arena.model.manifest import BotSpec
from arena.model.records import Outcome, from_report
from arena.model.schedule import GameJob, PlayConfig
from arena.run.dispatch import BotsInPlay
from arena.run.placement import ClusterObserver, GameCluster, InfrastructureFailure, NoWorkers, Stalls
from arena.run.procs import BotLogs, launch_for
from referee import (
    BotFailed,
    MatchContext,
    MatchReport,
    MatchSpec,
    TimeControl,
    play_match_async,
)

log = structlog.get_logger("arena")


STARTUP_HOLD_S = 5.0
"""A game gives up its start-up slot after this long even if its bots have not connected yet
(a bot that hangs must not hold up every other game); the referee's connect timeout still
applies to it."""


MAX_SUSPECT_REPLAYS = 2
"""A game lost on time while the arena itself was stalled is played again at most this often."""


class StallMonitor:
    """Watches the arena's own event loop (where the referee timestamps the bots' answers): a
    ticker that should wake every ``period`` seconds records how late it woke. If the loop was
    stalled for longer than a time control's margin around a time loss, the loss may be the
    arena's (or the host's) fault rather than the bot's."""

    def __init__(self, period: float = 0.02, keep_s: float = 120.0) -> None:
        self.period = period
        self.keep_s = keep_s
        self._stalls: deque[tuple[float, float]] = deque()  # (woke at, stall seconds)
        self.worst = 0.0

    async def run(self) -> None:
        while True:
            before = trio.current_time()
            await trio.sleep(self.period)
            now = trio.current_time()
            stall = now - before - self.period
            if stall > 0.005:
                self._stalls.append((now, stall))
                self.worst = max(self.worst, stall)
            while self._stalls and self._stalls[0][0] < now - self.keep_s:
                self._stalls.popleft()

    def stalled(self, start: float, end: float) -> float:
        """The longest stall (seconds) that overlapped ``[start, end]``."""
        return max((s for woke, s in self._stalls if woke >= start and woke - s - self.period <= end), default=0.0)

    def recent(self, seconds: float) -> Stalls:
        """The stalls of the last ``seconds``, as (seconds before now it woke, seconds stalled)."""
        now = trio.current_time()
        return tuple((now - woke, s) for woke, s in self._stalls if woke >= now - seconds)


def default_startup_slots() -> int:
    """Games starting at once: one per two cores."""
    return max(1, (os.cpu_count() or 2) // 2)


class Sink(Protocol):
    """Where the runner reports (the run database, the ladder, a benchmark)."""

    def started(self, job: GameJob, match_id: str) -> None: ...

    def finished(self, job: GameJob, outcome: Outcome) -> None: ...

    def abandoned(self, job: GameJob) -> None: ...

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        """A finished game whose result is thrown away (it will be played again)."""

    def proc_started(self, pid: int, match_id: str, bot: str) -> object: ...

    def proc_ended(self, pid: int, ticket: object) -> None: ...


class Runner:
    """Runs games on a match context (an embedded referee, or a remote one)."""

    def __init__(
        self,
        context: MatchContext,
        bots: Mapping[str, BotSpec],
        bot_tokens: Mapping[str, str],
        play: PlayConfig,
        logs: BotLogs,
        sink: Sink,
        progress: Progress | None = None,
        *,
        run_id: str,
        stalls: StallMonitor | None = None,
        cluster: GameCluster | None = None,
        startup_slots: int = 1,
    ) -> None:
        """``play``: how every game is played (the run's stored configuration, as it is);
        ``startup_slots``: games whose bots start at once (from creating the match until its
        bots connected) — a starting interpreter is a CPU hog, and throttling start-ups keeps it
        from slowing down the bots already playing (the connect timeout only runs once a game's
        turn to start came)."""
        self.context = context
        self.run_id = run_id
        self.stalls = stalls
        self.bots = dict(bots)
        self.bot_tokens = dict(bot_tokens)
        self.play = play
        self.logs = logs
        self.sink = sink
        self.progress = progress
        self.starting = trio.CapacityLimiter(max(1, startup_slots))
        self.running = 0
        self.in_play = BotsInPlay({name: b.limit for name, b in self.bots.items()})
        """The bots of the games being played (which game may start next)."""
        self._changed = trio.Event()
        self._queue: list[tuple[GameJob, int]] = []
        self.cluster = cluster
        """Where games without a remote seat run (Dask workers); ``None``: on ``context``."""
        self.infrastructure_failures: list[str] = []
        """Games that could not be played on the cluster (they stay pending)."""
        self.duplicates = 0
        """Results that arrived for a match already recorded (not stored again)."""
        self._recorded: set[str] = set()
        self.time_losses: Counter[str] = Counter()
        """Games lost on time, by the worker that played them (an overloaded worker shows here)."""
        self.failed: dict[str, str] = {}
        """Bots whose games were stopped (their process failed to start or crashed too
        often), with why; their games stay pending (``--resume`` plays them)."""

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _fits(self, job: GameJob) -> bool:
        """Whether a slot is free for ``job`` (its bots are :attr:`in_play`'s business)."""
        # A game played on the cluster may be submitted before a worker is free (it waits
        # there, queued, for the worker's current game to end); the others are played here.
        concurrency = self.play.concurrency
        if self.cluster is not None and not any(self.bots[name].remote for name in _bots_of(job)):
            concurrency = self.cluster.slots(concurrency, len(self._queue))
        return self.running < concurrency

    async def run(self, work: Sequence[tuple[GameJob, int]], stop: Callable[[], bool] = lambda: False) -> None:
        """Play ``work`` (games with the attempts made so far) as capacity allows: whenever a
        slot is free, the first game in ``work``'s order whose bots are free
        (:meth:`BotsInPlay.pick`); stop starting new games once ``stop()`` is true. Cancelling
        aborts the running games (their bots are ended and the sink is told they were
        abandoned)."""
        self._queue = list(work)
        self.in_play.plan([job for job, _ in self._queue], self.play.concurrency)
        async with trio.open_nursery() as nursery:
            if self.stalls is not None:
                nursery.start_soon(self.stalls.run)
            if self.cluster is not None:
                nursery.start_soon(self.cluster.watch, self._workers_changed)
            while (self._queue or self.running) and not stop():
                pick = self.in_play.pick([job for job, _ in self._queue], self._fits)
                if pick is None:
                    await self._changed.wait()
                    continue
                job, attempt = self._queue.pop(pick)
                self.running += 1
                self.in_play.take(job)
                nursery.start_soon(self._game, job, attempt)
                self._report()
            if stop():  # let the running games end
                while self.running:
                    await self._changed.wait()
            nursery.cancel_scope.cancel()
        if self.duplicates:
            log.warning("duplicate_results_ignored", count=self.duplicates)
        log.info("runner_processes", processes=sum(self.in_play.processes.values()),
                 games_with_a_further_process=self.in_play.extra_processes)
        self._report(force=True)

    def _suspect(self, outcome: Outcome, game: _Game, tc: TimeControl) -> str:
        """Why a time loss looks like the arena's fault (``""``: it does not): the event loop
        that timed the decision — the arena's own, or the worker's that played the game —
        stalled, around the end of the game, for longer than the time control's margin (at
        least 50 ms), so the referee may have read the answer late. ``tc`` is the faulting
        seat's time control."""
        if outcome.termination != "time_forfeit" or game.attempt >= MAX_SUSPECT_REPLAYS:
            return ""
        margin_s = max(tc.margin_ms, 50) / 1000
        window = (tc.per_move_ms if tc.is_fixed else min(max(tc.base_ms, tc.increment_ms), 10_000)) / 1000
        lookback = window + margin_s + 0.5
        end = trio.current_time()
        whose, stall = "the arena's event loop", self.stalls.stalled(end - lookback, end) if self.stalls else 0.0
        on_worker = max((s for ago, s in game.worker_stalls if ago <= lookback), default=0.0)
        if on_worker > stall:
            whose, stall = f"the event loop of worker {game.worker}", on_worker
        if stall < margin_s:
            return ""
        return (f"{whose} stalled for {stall * 1000:.0f} ms (more than the {margin_s * 1000:.0f} ms "
                "margin) while the decision was timed; the game is played again")

    def _report(self, force: bool = False) -> None:
        if self.progress is not None:
            self.progress.update(running=self.running, force=force)

    async def _game(self, job: GameJob, attempt: int) -> None:
        match_id = job.match_id(self.run_id, attempt)
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.running -= 1
                self.in_play.give(job)
                self._signal()
                self._report()  # (the progress line's count of running games, before its next line)

        try:
            with structlog.contextvars.bound_contextvars(match_id=match_id):
                await self._play(job, attempt, match_id, release)
        finally:
            release()
            self._report()

    def _spec(self, job: GameJob, match_id: str, time_controls: tuple[TimeControl, ...]) -> MatchSpec:
        # Both games of a duplicate pair are dealt from this seed and may run at once: no seat
        # hears it before both are over (the run's replays then hold it).
        return self.play.spec(job.players, match_id=match_id, seed=job.seed, reveal_seed=not job.pair_key,
                              seat_time_controls=time_controls)

    async def _play(self, job: GameJob, attempt: int, match_id: str, release: Callable[[], None]) -> None:
        bots = [self.bots[base_name(name)] for name in job.players]
        # A bot's own time control (the manifest's per-bot ``tc``; part ARENA adds the field).
        time_controls = tuple(getattr(b, "time_control", None) or self.play.time_control for b in bots)
        spec = self._spec(job, match_id, time_controls)
        launches = [launch_for(b, self.logs, self.bot_tokens, name if name != b.name else "")
                    for b, name in zip(bots, job.players, strict=True)]
        self.sink.started(job, match_id)
        game = _Game(self, job, attempt, time_controls, release)
        try:
            await self.starting.acquire_on_behalf_of(game)
            game.holding = True
            game.started = trio.current_time()  # the game's turn to start came
            log.debug("game_started", idx=job.idx, players=list(job.players))
            async with trio.open_nursery() as nursery:
                nursery.start_soon(game.hold_slot, min(self.play.connect_timeout_ms / 1000, STARTUP_HOLD_S))
                try:
                    if self.cluster is not None and not any(b.remote for b in launches):
                        await self.cluster.play(spec, launches, game)
                    else:  # a remote seat connects to the arena's own referee
                        await play_match_async(spec, launches, context=self.context, observer=game)
                except BotFailed as e:
                    self._bot_failed(e)
                except InfrastructureFailure as e:
                    self._infrastructure_failure(job, e)
                nursery.cancel_scope.cancel()
        finally:
            game.settled()
            if not game.done:
                self.sink.abandoned(job)

    def _workers_changed(self, count: int) -> None:
        """The cluster has ``count`` workers now (one was lost, or joined): the progress line says so."""
        if self.progress is not None:
            self.progress.workers = count
            self.progress.update(force=True)

    def _infrastructure_failure(self, job: GameJob, e: InfrastructureFailure) -> None:
        """A game the cluster could not play stays pending; a lost scheduler (or no worker for
        ``--worker-wait`` seconds) stops the run."""
        self.infrastructure_failures.append(str(e))
        log.error("game_infrastructure_failure", idx=job.idx, detail=str(e))
        if self.cluster is not None and self.cluster.lost and self._queue:
            log.error("cluster_lost", games_left=len(self._queue))
            self._queue.clear()  # (they stay pending: --resume plays them)
            if self.progress is not None:
                why = "no Dask worker" if isinstance(e, NoWorkers) else "the Dask scheduler was lost"
                self.progress.update(note=f"{why}: stopping", force=True)
            self._signal()

    def _time_loss_on(self, worker: str) -> None:
        """Count a time loss against the worker that played the game (shown in the progress line)."""
        self.time_losses[worker] += 1
        if self.progress is not None:
            losses = ", ".join(f"{w.removeprefix('tcp://')} {n}" for w, n in sorted(self.time_losses.items()))
            self.progress.update(note=f"time losses by worker: {losses}")

    def _bot_failed(self, e: BotFailed) -> None:
        """Stop the games of a bot that gets no more matches (they stay pending)."""
        if e.name in self.failed:
            return
        self.failed[e.name] = e.detail
        log.error("bot_games_stopped", bot=e.name, detail=e.detail)
        self._queue = [(job, a) for job, a in self._queue if e.name not in job.players]
        if self.progress is not None:
            self.progress.update(note=f"{e.name}'s games stopped: {e.detail}", force=True)
        self._signal()

    def _finished(self, game: _Game, report: MatchReport) -> None:
        """A game is over (its bots may still be exiting): record it, or play it again."""
        job = game.job
        if report.match_id in self._recorded:  # (a task's result delivered twice)
            self.duplicates += 1
            log.warning("duplicate_result", match_id=report.match_id)
            return
        self._recorded.add(report.match_id)
        outcome = from_report(report, game.seconds if game.worker else trio.current_time() - game.started)
        if self.context.remote:  # a remote referee's report does not count the deals
            outcome = dataclasses.replace(outcome, deals=None)
        seat = outcome.faulting_seat
        tc = game.time_controls[seat] if seat is not None else self.play.time_control
        suspect = self._suspect(outcome, game, tc)
        if outcome.termination == "time_forfeit" and game.worker:
            self._time_loss_on(game.worker)
        game.done = True
        if suspect:
            self.sink.discarded(job, outcome, suspect)
            log.warning("time_loss_discarded", idx=job.idx, detail=outcome.detail, reason=suspect)
            self._queue.insert(0, (job, game.attempt + 1))
            game.release()
            return
        # Released before the sink moves the progress line on, which would otherwise show the
        # game as both done and running ("2/2 games 100% | 1 running") while its bots exit; the
        # next game may start meanwhile.
        game.release()
        self.sink.finished(job, outcome)
        log.info(
            "game_finished",
            idx=job.idx,
            players=list(job.players),
            winner=outcome.winner_name,
            termination=outcome.termination,
            points=list(outcome.points),
            deals=outcome.deals,
            detail=outcome.detail if outcome.termination != "normal" else None,
        )


def _bots_of(job: GameJob) -> list[str]:
    """The bots of a game's seats, once per seat (a bot's instances count as the bot's games)."""
    return [base_name(name) for name in job.players]


class _Game(ClusterObserver):
    """One game being played: what the runner hears of its match (processes for the sink's
    table of processes, the end of the start-up for the start-up slot, the worker that played
    it, the end of the game)."""

    def __init__(
        self, runner: Runner, job: GameJob, attempt: int, time_controls: tuple[TimeControl, ...],
        release: Callable[[], None],
    ) -> None:
        self.runner = runner
        self.job = job
        self.attempt = attempt
        self.time_controls = time_controls
        self.release = release
        self.started = trio.current_time()
        self.done = False
        """Whether the game's result was recorded (or discarded to be played again)."""
        self.holding = False
        """Whether the game holds a start-up slot."""
        self.worker = ""
        """The Dask worker that played the game (``""``: this process)."""
        self.worker_stalls: Stalls = ()
        """That worker's loop stalls before the game's end."""
        self.seconds = 0.0
        """The game's time on that worker."""
        self._tickets: dict[int, object] = {}

    def process_started(self, seat: int, pid: int) -> None:
        match_id = self.job.match_id(self.runner.run_id, self.attempt)
        self._tickets[pid] = self.runner.sink.proc_started(pid, match_id, self.job.players[seat])

    def process_ended(self, seat: int, pid: int) -> None:
        self.runner.sink.proc_ended(pid, self._tickets.pop(pid, None))

    def settled(self) -> None:
        """Give up the start-up slot (once)."""
        if self.holding:
            self.holding = False
            self.runner.starting.release_on_behalf_of(self)

    async def hold_slot(self, seconds: float) -> None:
        """A game gives up its start-up slot after ``seconds`` even if its bots are still starting."""
        await trio.sleep(seconds)
        self.settled()

    def played_on(self, worker: str, stalls: Stalls, seconds: float) -> None:
        self.worker, self.worker_stalls, self.seconds = worker, stalls, seconds

    def finished(self, report: MatchReport) -> None:
        self.runner._finished(self, report)
