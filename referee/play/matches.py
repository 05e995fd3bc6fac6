"""One call per match: :func:`play_match` runs a match to its end from a plain description
(a :class:`MatchSpec` and a :class:`BotLaunch` per seat) — the bots started, connected, played
and always ended — and returns the report and the replay's bytes.

A :class:`MatchContext` is where matches are played: an embedded referee on a free port (or a
remote referee) that many concurrent matches share. :func:`play_match` without one opens one
for the call. Nothing here changes the process (no GC tuning, no lasting signal handlers).
A context is also the place for what outlives one match on a worker: a long-lived referee,
and a :class:`BotPool` of reused bot processes keyed by their :class:`BotLaunch` (it hashes).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import signal
import tempfile
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import trio

from referee.model.limits import Limits
from referee.model.spec import MatchReport, MatchSpec
from referee.play.hosts import EmbeddedHost, HostedMatch, MatchHost, remote_host
from referee.play.launch import BotLaunch
from referee.play.pool import BotPool, ReusedProcess
from referee.play.procs import SeatProcess, run_seat
from referee.table.seat_clock import cpu_clock_available
from referee.transport.runtime import run
from referee.transport.server import open_referee
from referee.transport.tls import ClientTLS

SEAT_CLOCKS = ("cpu", "wall")
"""How the bots a context starts are timed: ``cpu`` — by their process tree's CPU time where the
referee is embedded and can read it (Linux), else ``wall``; ``wall`` — by the referee loop's
clock without its stalls (``referee.table.seat_clock``)."""

CANCELLED_DETAIL = "the match was cancelled before it ended"
"""The ``aborted`` match's detail when the caller stops it (cancellation, Ctrl-C)."""


@dataclass(frozen=True, slots=True)
class PlayedMatch:
    """What :func:`play_match` returns."""

    report: MatchReport
    """How the match ended."""
    replay: bytes
    """The replay file's bytes (JSON Lines); empty only if a remote referee wrote it where this
    process cannot read it."""
    exits: tuple[str, ...]
    """How each seat's bot process ended (e.g. ``exited with code 0``, ``not started``;
    ``remote`` for a bot that connected by itself)."""


class MatchObserver:
    """Optional callbacks while a match is played; subclass and override what you need. They
    run on the match's trio thread: keep them quick, and never raise."""

    def process_started(self, seat: int, pid: int) -> None:
        """A seat's bot process started (in its own process group, ``pid`` leads it)."""

    def process_ended(self, seat: int, pid: int) -> None:
        """A seat's bot process group ended."""

    def settled(self) -> None:
        """The start-up is over: every started bot connected, ended or never started."""

    def finished(self, report: MatchReport) -> None:
        """The match is over (its bots are still being ended)."""


class MatchContext:
    """Where matches are played (see :func:`open_match_context`); many may run at once.
    Belongs to the trio run that opened it; from another thread, call :func:`play_match`
    with it."""

    def __init__(self, host: MatchHost, pool: BotPool | None = None, clock: str = "cpu") -> None:
        if clock not in SEAT_CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(SEAT_CLOCKS)}; got {clock!r}")
        self.host = host
        self.pool = pool or BotPool(None, host.bot_address)
        """The context's reused bot processes (and every bot's crash count); without one
        (a context not made by :func:`open_match_context`) every bot has a process per match."""
        self.bot_address = host.bot_address
        """The referee's address the bots are told."""
        self.description = host.description
        self.remote = host.remote
        """Whether the referee is another process (its reports carry no deal counts or think times)."""
        self.trio_token = trio.lowlevel.current_trio_token()
        self.clock = "cpu" if clock == "cpu" and not host.remote and cpu_clock_available() else "wall"
        """How the bots this context starts are timed (:data:`SEAT_CLOCKS`): ``cpu`` only if asked
        for, the referee is embedded and the platform lets it read CPU times."""

    async def play(
        self, spec: MatchSpec, bots: Sequence[BotLaunch], observer: MatchObserver | None = None
    ) -> PlayedMatch:
        """Play one match to its end (see :func:`play_match_async`)."""
        if self.host.bot_env:  # e.g. TLS to a remote referee: every bot must know how to connect
            bots = [b if b.remote else dataclasses.replace(b, env=b.env + self.host.bot_env) for b in bots]
        for seat, launch in enumerate(bots):
            self.pool.check(launch, spec.players[seat])  # BotFailed: the bot gets no more matches
        reused = {seat: self.pool.checkout(b, spec.players[seat]) for seat, b in enumerate(bots)
                  if b.reused and self.pool.reuses}
        spec = with_seat_tokens(spec, bots, {seat: p.token for seat, p in reused.items()})
        watcher = observer or MatchObserver()
        exits = ["remote" if b.remote else "not started" for b in bots]
        report: MatchReport | None = None
        try:
            match = await self.host.create(spec)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(match.follow)
                    settled: list[trio.Event] = []
                    for seat, launch in enumerate(bots):
                        if not launch.remote:
                            settled.append(trio.Event())
                            nursery.start_soon(self._seat, match, spec, seat, launch, watcher, exits, settled[-1],
                                               reused.get(seat))
                    nursery.start_soon(_all_settled, settled, watcher)
                    try:
                        await match.finished.wait()
                    except trio.Cancelled:  # before the bots are ended: their goodbyes must not decide it
                        match.stop(CANCELLED_DETAIL)
                        raise
                    replay = await match.replay()  # before the observer hears of it (it may move the file)
                    report = match.report()  # after the replay: a remote one names the fetched file
                    watcher.finished(report)
            finally:
                if report is None:
                    with trio.CancelScope(shield=True):
                        await match.cancel(CANCELLED_DETAIL)
        finally:
            for seat, p in reused.items():
                self.pool.checkin(p, seat, report)
        assert report is not None  # (the match's end was awaited)
        return PlayedMatch(report, replay, tuple(exits))

    async def _seat(
        self, match: HostedMatch, spec: MatchSpec, seat: int, launch: BotLaunch, watcher: MatchObserver,
        exits: list[str], settled: trio.Event, reused: ReusedProcess | None,
    ) -> None:
        def started(pid: int) -> None:
            if self.clock == "cpu":
                match.bot_process(seat, pid)
            watcher.process_started(seat, pid)

        if reused is not None:
            if reused.proc is not None and self.clock == "cpu":  # (started for an earlier match)
                match.bot_process(seat, reused.proc.pid)
            exits[seat] = await self.pool.serve(
                reused, match, seat, started, lambda pid: watcher.process_ended(seat, pid), settled)
            return
        sp = SeatProcess(
            match=match, seat=seat, launch=launch, address=self.bot_address, token=spec.seat_tokens[seat],
            name=launch.name or spec.players[seat],
            on_start=started,
            on_end=lambda pid: watcher.process_ended(seat, pid),
            on_crash=lambda detail: self.pool.crashed(launch, detail),
            on_start_failed=lambda detail: self.pool.start_failed(launch, detail),
        )
        exits[seat] = await run_seat(sp, settled)


async def _all_settled(events: Sequence[trio.Event], watcher: MatchObserver) -> None:
    for ev in events:
        await ev.wait()
    watcher.settled()


def with_seat_tokens(spec: MatchSpec, bots: Sequence[BotLaunch], fixed: Mapping[int, str] | None = None) -> MatchSpec:
    """``spec`` with a token for every seat: ``fixed``'s (a reused process's bot token), a
    remote seat's own, the spec's, or a fresh one."""
    if len(bots) != len(spec.players):
        raise ValueError(f"{len(spec.players)} players but {len(bots)} bots: give one BotLaunch per seat")
    tokens: list[str] = []
    for seat, bot in enumerate(bots):
        given = spec.seat_tokens[seat] if spec.seat_tokens else ""
        if bot.remote and given and given != bot.remote_token:
            raise ValueError(f"seat {seat}: the spec's seat token and the bot's remote token differ")
        # 192-bit tokens in hex: never starting with "-" (an argument parser would take it for an option)
        tokens.append((fixed or {}).get(seat) or bot.remote_token or given or secrets.token_hex(24))
    if len(set(tokens)) != len(tokens):
        raise ValueError("one bot token holds at most one seat of a match: seat the bot once, or give "
                         "each instance its own token")
    return dataclasses.replace(spec, seat_tokens=tuple(tokens))


@asynccontextmanager
async def open_match_context(
    *, listen: str = "127.0.0.1:0", replay_dir: Path | None = None, referee: str = "", bot_address: str = "",
    operator_token: str = "", tls: ClientTLS | None = None, limits: Limits | None = None, clock: str = "cpu",
) -> AsyncIterator[MatchContext]:
    """A place to play matches, inside :func:`referee.run` (or another trio run hosted by
    asyncio): an embedded referee listening on ``listen`` (``HOST:PORT``, port 0: a free one)
    or, with ``referee="HOST:PORT"``, the referee there (bots are told ``bot_address``,
    default that address; ``listen`` is then the remote referee's business, and each finished
    replay is fetched from it into ``replay_dir``), reached with ``operator_token`` (its operator
    service's secret) and ``tls`` (``None``: plaintext). An embedded referee's operator token
    stays in memory (no file); ``limits`` are the embedded referee's (a remote referee has its
    own: ``ValueError`` if both are given).
    Replays are written to ``replay_dir`` and kept; without one, to a scratch folder and only
    their bytes are kept. ``clock``: how the bots it starts are timed (:data:`SEAT_CLOCKS`; the
    context's ``clock`` says which it uses). On exit, running matches are aborted."""
    if referee and limits is not None:
        raise ValueError("limits are set on the remote referee itself (referee serve / arena serve --limit)")
    async with contextlib.AsyncExitStack() as stack:
        if referee:
            host: MatchHost = await stack.enter_async_context(
                remote_host(referee, bot_address, operator_token, tls, replay_dir))
        else:
            name, _, port = listen.rpartition(":")
            folder = replay_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gin-replays-")))
            ref = await stack.enter_async_context(open_referee(name or "127.0.0.1", int(port or 0), folder,
                                                                         limits))
            host = EmbeddedHost(ref, keep_replays=replay_dir is not None)
        nursery = await stack.enter_async_context(trio.open_nursery())  # the reused bots' processes
        stack.callback(nursery.cancel_scope.cancel)
        yield MatchContext(host, BotPool(nursery, host.bot_address), clock)


async def play_match_async(
    spec: MatchSpec, bots: Sequence[BotLaunch], *, context: MatchContext | None = None,
    observer: MatchObserver | None = None,
) -> PlayedMatch:
    """Play one match to its end: start the seats' bots (each in its own process group), wait
    for them to connect, play, end every process (also on errors and cancellation), and return
    the report and the replay. Without ``context``, an embedded referee is opened for the call."""
    if context is not None:
        return await context.play(spec, bots, observer)
    async with open_match_context() as ctx:
        return await ctx.play(spec, bots, observer)


def play_match(
    spec: MatchSpec, bots: Sequence[BotLaunch], *, context: MatchContext | None = None
) -> PlayedMatch:
    """:func:`play_match_async` from synchronous code. Without ``context`` it runs its own trio
    run (Ctrl-C aborts the match, ends its bots and then raises ``KeyboardInterrupt``); with
    one, it plays on that context's trio run, from another thread."""
    bots = tuple(bots)
    if context is not None:
        return trio.from_thread.run(context.play, spec, bots, trio_token=context.trio_token)
    if threading.current_thread() is not threading.main_thread():
        return run(play_match_async, spec, bots)
    previous = signal.getsignal(signal.SIGINT)
    try:
        return run(_play_interruptible, spec, bots)
    finally:
        if previous is not None:  # (None: set outside Python, cannot be restored from here)
            signal.signal(signal.SIGINT, previous)  # as the caller had it


async def _play_interruptible(spec: MatchSpec, bots: tuple[BotLaunch, ...]) -> PlayedMatch:
    interrupted = False
    with trio.CancelScope() as scope:
        token = trio.lowlevel.current_trio_token()

        def on_sigint() -> None:
            nonlocal interrupted
            interrupted = True
            token.run_sync_soon(scope.cancel)

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await play_match_async(spec, bots)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
    assert interrupted
    raise KeyboardInterrupt
