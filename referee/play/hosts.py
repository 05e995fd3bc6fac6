"""Where a match is played: the referee embedded in this process, or a referee in another process
or on another machine reached through its operator service (``RefereeService``). Both give
:func:`referee.play_match_async` the same handle on a match."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import grpc
import structlog
import trio

from gin_arena.v2 import referee_pb2, referee_pb2_grpc
from referee.model.replay import write_atomic
from referee.model.spec import MatchReport, MatchSpec
from referee.table.flow import Table
from referee.transport.auth import OPERATOR_TOKEN_ENV, operator_metadata
from referee.transport.runtime import aio
from referee.transport.server import Referee
from referee.transport.tls import ClientConfigError, ClientTLS, open_channel, tls_mismatch, tls_probe
from referee.wire.envelope import create_match_request, match_report_from_proto

log = structlog.get_logger("referee")


async def first(*waits: Callable[[], Awaitable[object]]) -> int:
    """Wait until the first of some waits returns; returns its index (the others are cancelled)."""
    winner = -1
    async with trio.open_nursery() as nursery:
        for i, fn in enumerate(waits):

            async def one(i: int = i, fn: Callable[[], Awaitable[object]] = fn) -> None:
                nonlocal winner
                await fn()
                if winner < 0:
                    winner = i
                nursery.cancel_scope.cancel()

            nursery.start_soon(one)
    return winner


class HostedMatch(Protocol):
    """One match being played, as the caller sees it."""

    match_id: str
    finished: trio.Event
    """Set when the match is over and :meth:`report` is available."""

    def connected(self, seat: int) -> trio.Event:
        """Set once the seat's bot has connected (the referee then starts the clock)."""

    async def follow(self) -> None:
        """Track the match until it is over (a task of the match's nursery)."""

    def crashed(self, seat: int, detail: str) -> bool:
        """The seat's bot process ended before the match did; whether that counts (``False``:
        the match had already been decided, the bot merely exited before hearing it was saved)."""

    def bot_process(self, seat: int, pid: int) -> None:
        """The seat's bot runs as process ``pid`` on this machine, leading its process group: a
        referee that can read its CPU time times the seat by it (``referee.table.seat_clock``)."""

    def stop(self, reason: str) -> None:
        """Abort the match at once where that can be done without waiting (an embedded
        referee); :meth:`cancel` still follows."""

    async def cancel(self, reason: str) -> None:
        """Abort the match (the caller is stopping)."""

    def report(self) -> MatchReport:
        """How the match ended (after :attr:`finished`)."""

    async def replay(self) -> bytes:
        """The replay file's bytes (after :attr:`finished`; empty if they cannot be read here)."""


class MatchHost(Protocol):
    """Creates matches."""

    bot_address: str
    """The address bots connect to."""
    description: str
    remote: bool
    """Whether the referee is another process (its reports carry no deal counts or think times)."""
    bot_env: tuple[tuple[str, str], ...]
    """Environment variables the bots started for its matches get (TLS: ``GIN_TLS``, ``GIN_CA``,
    and for mutual TLS the arena's client certificate: ``GIN_TLS_CERT``, ``GIN_TLS_KEY``)."""

    async def create(self, spec: MatchSpec) -> HostedMatch:
        """Register a match; its seats' tokens are ``spec.seat_tokens``."""


# ----- embedded -----
class _AbsentSession:
    """Stands in for a bot whose process ended before it connected, so that the referee plays
    the match and scores the seat's crash by the fault policy (the referee only looks at a
    ``crashed`` report once a seat is connected)."""

    def __init__(self, name: str) -> None:
        self.bot_name = name
        self.nonce = b""
        self.skip_event_messages = True

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        pass

    def close(self, code: str, detail: str) -> None:
        pass


class EmbeddedMatch:
    """A match on the referee of this process."""

    def __init__(self, table: Table, host: EmbeddedHost) -> None:
        self.table = table
        self.host = host
        self.match_id = table.match_id
        self.finished = table.finished
        self._dead: dict[int, str] = {}
        """Seats whose process ended before connecting, not yet handed to the referee."""
        self._poke = trio.Event()

    def connected(self, seat: int) -> trio.Event:
        return self.table.links[seat].connected

    async def follow(self) -> None:
        table = self.table
        while not table.finished.is_set():
            if self._dead:
                self._settle_dead()
                if self._dead:  # wait for the other seat(s) to connect, or end
                    with trio.move_on_after(0.05):
                        await table.finished.wait()
                    continue
            await first(table.finished.wait, self._poke.wait)

    def _settle_dead(self) -> None:
        # A seat whose bot ended before connecting is handed to the referee as crashed only once
        # every other seat is connected: then the match starts and the crash is scored by the
        # fault policy. If no other seat ever connects, the referee's connect timeout ends the
        # match without a winner (both failed) — as it should.
        table = self.table
        if table.state in ("finished", "aborted"):
            self._dead.clear()
            return
        others = [link for link in table.links if link.seat not in self._dead]
        if not others:
            table.cancel("every seat's bot process ended before connecting: " + "; ".join(self._dead.values()))
            self._dead.clear()
            return
        if all(link.connected.is_set() for link in others):
            for seat, detail in sorted(self._dead.items()):
                link = table.links[seat]
                link.attach(_AbsentSession(f"{link.name} (ended before connecting)"))
                link.crashed(detail)
            self._dead.clear()

    def crashed(self, seat: int, detail: str) -> bool:
        table = self.table
        if table.state in ("finished", "aborted"):
            return False
        link = table.links[seat]
        if link.connected.is_set():
            link.crashed(detail)
            return True
        self._dead[seat] = detail
        self._settle_dead()
        self._poke.set()
        self._poke = trio.Event()
        return True

    def bot_process(self, seat: int, pid: int) -> None:
        self.table.bot_process(seat, pid)

    def stop(self, reason: str) -> None:
        if self.table.state not in ("finished", "aborted"):
            self.table.cancel(reason)

    async def cancel(self, reason: str) -> None:
        if self.table.state not in ("finished", "aborted"):
            self.table.cancel(reason)
            with trio.move_on_after(5):
                await self.table.finished.wait()

    def report(self) -> MatchReport:
        report = self.table.report
        assert report is not None, "report() before the match finished"
        # The referee keeps a finished table for its operator service: ours are asked for here,
        # so forget them (a long run would grow without bound).
        ref = self.host.referee
        held = ref.tables.get(self.match_id)  # (the compact record of our table, once over)
        if held is not None and held.over:
            del ref.tables[self.match_id]
        return report if self.host.keep_replays else dataclasses.replace(report, replay_path="")

    async def replay(self) -> bytes:
        path = self.table.report.replay_path if self.table.report is not None else ""
        if not path:
            return b""
        data = await trio.to_thread.run_sync(Path(path).read_bytes)
        if not self.host.keep_replays:  # the context's scratch folder
            Path(path).unlink(missing_ok=True)
        return data


class EmbeddedHost:
    """The referee running in this process."""

    remote = False
    bot_env: tuple[tuple[str, str], ...] = ()

    def __init__(self, referee: Referee, *, keep_replays: bool) -> None:
        self.referee = referee
        self.keep_replays = keep_replays
        """Whether replay files stay where the referee wrote them (else only their bytes are kept)."""
        self.bot_address = referee.address
        self.description = f"embedded referee on {referee.address}"

    async def create(self, spec: MatchSpec) -> HostedMatch:
        return EmbeddedMatch(self.referee.create_match(spec), self)


# ----- remote -----
async def _call(make: Callable[[], Any]) -> Any:
    """Run a grpc.aio call (the stubs type it as a plain call) on the host loop."""

    async def run() -> Any:
        return await make()

    return await aio(run())


_OVER = (referee_pb2.MATCH_STATE_FINISHED, referee_pb2.MATCH_STATE_ABORTED, referee_pb2.MATCH_STATE_INTERRUPTED)
REMOTE_RETRIES = 8
"""Status calls in a row a remote referee may leave unanswered (about 10 s) before the match,
and the run, stop with a :class:`ConnectionError` saying it went away."""
REPLAY_COMPLETE_WAIT_S = 120.0
"""How long a remote referee that reports a match over may take to complete its replay file
(``GetReplay`` answers ``FAILED_PRECONDITION`` meanwhile) before the fetch gives up: a hang
catcher, far above what a loaded machine needs."""
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 256 * 1024 * 1024)]
"""The operator channel's options: a replay (``GetReplay``) may be large."""


class RemoteMatch:
    """A match on a referee reached through its operator service."""

    def __init__(self, host: RemoteHost, match_id: str, seats: int) -> None:
        self.host = host
        self.match_id = match_id
        self.finished = trio.Event()
        self._connected = [trio.Event() for _ in range(seats)]
        self._status: referee_pb2.MatchStatus | None = None
        self._local = ""  # the replay fetched into the host's replay folder

    def connected(self, seat: int) -> trio.Event:
        return self._connected[seat]

    async def follow(self) -> None:
        failures = 0
        while True:
            try:
                status = await self.host.get_match(self.match_id)
                failures = 0
            except grpc.aio.AioRpcError as e:
                failures += 1
                await self.host.unreachable(e, failures)
                continue
            for seat, up in enumerate(status.connected):
                if up and seat < len(self._connected):
                    self._connected[seat].set()
            if status.state in _OVER:
                self._status = status
                self.finished.set()
                return
            everyone = all(e.is_set() for e in self._connected)
            await trio.sleep(0.5 if everyone else 0.2)

    def crashed(self, seat: int, detail: str) -> bool:
        # The operator service has no call to report a crash: the referee finds out by itself
        # (the stream breaks: ``disconnected`` after the reconnect grace; never connected:
        # ``failed_to_connect`` after its connect timeout).
        log.warning("bot_crashed_remote_referee", seat=seat, detail=detail)
        return True

    def bot_process(self, seat: int, pid: int) -> None:
        """Nothing: the referee is another process, perhaps on another machine (it times the
        seat by its wall clock, without its own loop's stalls)."""

    def stop(self, reason: str) -> None:
        """Nothing at once: :meth:`cancel` asks the remote referee."""

    async def cancel(self, reason: str) -> None:
        if self.finished.is_set():
            return
        with trio.move_on_after(5):
            try:
                await self.host.cancel_match(self.match_id, reason)
            except grpc.aio.AioRpcError as e:
                log.warning("remote_cancel_failed", code=e.code().name, detail=e.details())

    async def _fetch(self) -> bytes:
        """``GetReplay``, again while the referee is still writing the replay of a match it
        reports over (its status changes before the file is complete; up to
        :data:`REPLAY_COMPLETE_WAIT_S`), and again while it is unreachable, as :meth:`follow`
        does: a referee that went away between reporting the match over and handing out its
        replay raises a :class:`ConnectionError`, so that the match is not recorded without
        its replay (it is played again on ``--resume``)."""
        deadline = trio.current_time() + REPLAY_COMPLETE_WAIT_S
        failures = 0
        while True:
            try:
                return await self.host.get_replay(self.match_id)
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    if trio.current_time() >= deadline:
                        raise
                    await trio.sleep(0.1)
                    continue
                failures += 1
                await self.host.unreachable(e, failures)  # re-raises what is not an unreachable referee

    def report(self) -> MatchReport:
        assert self._status is not None, "report() before the match finished"
        return match_report_from_proto(self._status.result, self._local or self._status.replay_path)

    async def replay(self) -> bytes:
        """The replay, fetched from the referee (``GetReplay``) into the host's replay folder
        when it has one; else read where the remote referee wrote it, if this process can."""
        if self._status is None:
            return b""
        if self.host.replay_dir is not None:
            try:
                data = await self._fetch()
            except grpc.aio.AioRpcError as e:
                log.warning("remote_replay_unavailable", match_id=self.match_id, code=e.code().name,
                            detail=e.details())
                return b""
            target = self.host.replay_dir / f"{self.match_id}.jsonl"
            await trio.to_thread.run_sync(write_atomic, target, data)
            self._local = str(target)
            return data
        path = self._status.replay_path
        try:
            return await trio.to_thread.run_sync(Path(path).read_bytes) if path else b""
        except OSError:
            return b""


class RemoteHost:
    """A referee in another process or on another machine, through ``RefereeService``."""

    remote = True

    def __init__(self, target: str, bot_address: str, operator_token: str = "", tls: ClientTLS | None = None,
                 replay_dir: Path | None = None, retries: int = REMOTE_RETRIES) -> None:
        self.target = target
        self.retries = retries
        """Calls in a row the referee may leave unanswered before it counts as gone."""
        self.replay_dir = replay_dir
        """Where finished matches' replays are fetched to (``None``: left on the referee)."""
        self.bot_address = bot_address
        self.description = f"remote referee at {target}" + (" (TLS)" if tls else "")
        self.tls = tls
        self.bot_env: tuple[tuple[str, str], ...] = () if tls is None else (
            ("GIN_TLS", "1"), ("GIN_CA", tls.ca), ("GIN_TLS_CERT", tls.cert), ("GIN_TLS_KEY", tls.key))
        self._metadata = operator_metadata(operator_token) if operator_token else ()
        self._channel: grpc.aio.Channel | None = None
        self._stub: referee_pb2_grpc.RefereeServiceStub | None = None

    @property
    def stub(self) -> referee_pb2_grpc.RefereeServiceStub:
        assert self._stub is not None
        return self._stub

    async def open(self) -> None:
        self._channel = open_channel(self.target, self.tls, CHANNEL_OPTIONS)
        self._stub = referee_pb2_grpc.RefereeServiceStub(self._channel)
        stub, md = self._stub, self._metadata
        deadline = time.monotonic() + 15
        probed = False
        while True:
            try:
                await _call(lambda: stub.ListMatches(referee_pb2.ListMatchesRequest(limit=1), timeout=5, metadata=md))
                return
            except grpc.aio.AioRpcError as e:
                if e.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                    raise ClientConfigError(
                        f"the referee at {self.target} refused the operator token ({e.code().name}): give "
                        f"--operator-token-file FILE (the referee's token file) or set {OPERATOR_TOKEN_ENV}"
                    ) from None
                if e.code() == grpc.StatusCode.UNAVAILABLE and not probed:
                    # A server that speaks TLS to a plaintext channel (or the reverse) looks like one
                    # that is not up yet: ask it once with a handshake of our own, not for 15 s.
                    answer = await trio.to_thread.run_sync(tls_probe, self.target, self.tls)
                    probed = bool(answer)
                    if why := tls_mismatch(self.target, self.tls, answer):
                        raise ClientConfigError(why) from None
                if time.monotonic() > deadline or e.code() != grpc.StatusCode.UNAVAILABLE:
                    raise ConnectionError(
                        f"cannot reach the referee at {self.target}: {e.code().name} {e.details()}"
                    ) from None
                await trio.sleep(0.5)

    async def close(self) -> None:
        if self._channel is not None:
            channel = self._channel
            self._channel = None
            with trio.CancelScope(shield=True):
                await _call(lambda: channel.close(None))

    async def create(self, spec: MatchSpec) -> HostedMatch:
        """``CreateMatch``, again while the referee is unreachable (as :meth:`RemoteMatch.follow`
        does, then a :class:`ConnectionError` saying it went away). A retry is safe: the arena
        names its matches, so a first attempt that did land answers ``ALREADY_EXISTS``."""
        request = create_match_request(spec)
        stub = self.stub
        failures = 0
        while True:
            try:
                response: Any = await _call(lambda: stub.CreateMatch(request, timeout=15, metadata=self._metadata))
                return RemoteMatch(self, response.match_id, len(spec.players))
            except grpc.aio.AioRpcError as e:
                if failures and spec.match_id and e.code() == grpc.StatusCode.ALREADY_EXISTS:
                    return RemoteMatch(self, spec.match_id, len(spec.players))
                failures += 1
                await self.unreachable(e, failures)

    async def unreachable(self, e: grpc.aio.AioRpcError, failures: int) -> None:
        """After the ``failures``-th call in a row failed with ``e``: re-raise anything but an
        unreachable referee, give up after :attr:`retries` (a :class:`ConnectionError`
        saying it went away), else wait before the caller tries again."""
        if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise e
        if failures > self.retries:
            raise ConnectionError(f"the referee at {self.target} went away ({e.code().name}: "
                                  f"{e.details()})") from None
        log.warning("remote_referee_unreachable", code=e.code().name, attempt=failures)
        await trio.sleep(min(2.0, 0.2 * 2**failures))

    async def get_match(self, match_id: str) -> referee_pb2.MatchStatus:
        stub = self.stub
        request = referee_pb2.GetMatchRequest(match_id=match_id)
        response: Any = await _call(lambda: stub.GetMatch(request, timeout=10, metadata=self._metadata))
        status: referee_pb2.MatchStatus = response.match
        return status

    async def get_replay(self, match_id: str) -> bytes:
        """The replay of a match that is over (``GetReplay``)."""
        stub = self.stub
        request = referee_pb2.GetReplayRequest(match_id=match_id)
        response: Any = await _call(lambda: stub.GetReplay(request, timeout=60, metadata=self._metadata))
        data: bytes = response.replay
        return data

    async def cancel_match(self, match_id: str, reason: str) -> None:
        stub = self.stub
        request = referee_pb2.CancelMatchRequest(match_id=match_id, reason=reason)
        await _call(lambda: stub.CancelMatch(request, timeout=5, metadata=self._metadata))


@asynccontextmanager
async def remote_host(
    target: str, bot_address: str = "", operator_token: str = "", tls: ClientTLS | None = None,
    replay_dir: Path | None = None,
) -> AsyncIterator[RemoteHost]:
    """Reach the referee at ``target`` (``HOST:PORT``) with the operator token (and TLS, if
    given); bots are told ``bot_address`` (default: the target); finished replays are fetched
    into ``replay_dir`` (if given)."""
    host = RemoteHost(target, bot_address or target, operator_token, tls, replay_dir)
    try:
        await host.open()
        yield host
    finally:
        await host.close()
