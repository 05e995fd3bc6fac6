"""Plays scheduled games: a dispatcher under trio that keeps up to ``concurrency`` games running
(and no more than a bot's own limit for each bot), one referee match per game, the bots' processes
started for it and ended after it."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog
import trio

from referee import FaultPolicy, MatchSpec, TimeControl
from referee.gin import RuleSet

from .backend import Backend, MatchHandle
from .console import Progress
from .manifest import BotSpec, new_token
from .procs import BotLogs, BotRunner
from .records import Outcome
from .schedule import GameJob

log = structlog.get_logger("arena")

STARTUP_HOLD_S = 5.0
"""A game gives up its start-up slot after this long even if its bots have not connected yet
(a bot that hangs must not hold up every other game); the referee's connect timeout still
applies to it."""


@dataclass(frozen=True, slots=True)
class PlaySettings:
    """How every game of a run is played."""

    rules: RuleSet
    time_control: TimeControl
    fault_policy: FaultPolicy = "forfeit"
    connect_timeout_ms: int = 60_000
    """How long the referee waits for a game's bots to connect (generous: bots start while
    other games are played; start-up is throttled by ``startup_slots``)."""
    concurrency: int = 2
    startup_slots: int = 1
    """Games whose bots start at once (from creating the match until its bots connected). A
    starting interpreter is a CPU hog; throttling start-ups keeps it from slowing down the bots
    already playing, and the connect timeout only runs once a game's turn to start came."""


def default_startup_slots() -> int:
    """Games starting at once: one per two cores."""
    return max(1, (os.cpu_count() or 2) // 2)


class Sink(Protocol):
    """Where the runner reports (the run database, the ladder, a benchmark)."""

    def started(self, job: GameJob, match_id: str) -> None: ...

    def finished(self, job: GameJob, outcome: Outcome) -> None: ...

    def abandoned(self, job: GameJob) -> None: ...

    def proc_started(self, pid: int, match_id: str, bot: str) -> object: ...

    def proc_ended(self, pid: int, ticket: object) -> None: ...


class Runner:
    """Runs games on a backend."""

    def __init__(
        self,
        backend: Backend,
        bots: Mapping[str, BotSpec],
        bot_tokens: Mapping[str, str],
        settings: PlaySettings,
        logs: BotLogs,
        sink: Sink,
        progress: Progress | None = None,
    ) -> None:
        self.backend = backend
        self.bots = dict(bots)
        self.bot_tokens = dict(bot_tokens)
        self.settings = settings
        self.sink = sink
        self.progress = progress
        self.procs = BotRunner(logs, sink.proc_started, sink.proc_ended)
        self.starting = trio.CapacityLimiter(max(1, settings.startup_slots))
        self.running = 0
        self.finished_count = 0
        self._per_bot: Counter[str] = Counter()
        self._changed = trio.Event()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _fits(self, job: GameJob) -> bool:
        if self.running >= self.settings.concurrency:
            return False
        for name in job.players:
            limit = self.bots[name].limit
            if limit and self._per_bot[name] >= limit:
                return False
        return True

    async def run(
        self, work: Sequence[tuple[GameJob, str]], stop: Callable[[], bool] = lambda: False
    ) -> None:
        """Play ``work`` (games with their match ids) in order as capacity allows; stop starting
        new games once ``stop()`` is true. Cancelling aborts the running games (their bots are
        ended and the sink is told they were abandoned)."""
        queue = list(work)
        async with trio.open_nursery() as nursery:
            while queue and not stop():
                pick = next((i for i, (job, _) in enumerate(queue) if self._fits(job)), None)
                if pick is None:
                    await self._changed.wait()
                    continue
                job, match_id = queue.pop(pick)
                self.running += 1
                for name in job.players:
                    self._per_bot[name] += 1
                nursery.start_soon(self._game, job, match_id)
                self._report()
        self._report(force=True)

    def _report(self, force: bool = False) -> None:
        if self.progress is not None:
            self.progress.update(running=self.running, force=force)

    async def _game(self, job: GameJob, match_id: str) -> None:
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.running -= 1
                for name in job.players:
                    self._per_bot[name] -= 1
                self._signal()

        try:
            with structlog.contextvars.bound_contextvars(match_id=match_id):
                await self._play(job, match_id, release)
        finally:
            release()
            self._report()

    async def _play(self, job: GameJob, match_id: str, release: Callable[[], None]) -> None:
        s = self.settings
        bots = [self.bots[name] for name in job.players]
        tokens = tuple(self.bot_tokens[b.name] if b.remote else new_token() for b in bots)
        spec = MatchSpec(
            players=job.players,
            rules=s.rules,
            time_control=s.time_control,
            fault_policy=s.fault_policy,
            connect_timeout_ms=s.connect_timeout_ms,
            seed=job.seed,
            match_id=match_id,
            seat_tokens=tokens,
        )
        self.sink.started(job, match_id)
        started = trio.current_time()  # reset once the game's turn to start came
        handle: MatchHandle | None = None
        done = False
        try:
            async with trio.open_nursery() as nursery:
                async with self.starting:
                    handle = await self.backend.create(spec)
                    started = trio.current_time()
                    log.debug("game_started", idx=job.idx, players=list(job.players))
                    nursery.start_soon(handle.follow)
                    settled = []
                    for seat, bot in enumerate(bots):
                        if not bot.remote:
                            settled.append(trio.Event())
                            nursery.start_soon(
                                self.procs.run,
                                handle,
                                seat,
                                bot,
                                self.backend.bot_address,
                                tokens[seat],
                                settled[-1],
                            )
                    with trio.move_on_after(min(s.connect_timeout_ms / 1000, STARTUP_HOLD_S)):
                        for ev in settled:
                            await ev.wait()
                await handle.finished.wait()
                outcome = handle.outcome(trio.current_time() - started)
                self.sink.finished(job, outcome)
                done = True
                self.finished_count += 1
                release()  # the next game may start while these bots exit
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
        finally:
            if not done:
                with trio.CancelScope(shield=True):
                    if handle is not None:
                        await handle.cancel("the arena stopped before the game ended")
                    self.sink.abandoned(job)
