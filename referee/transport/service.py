"""The gRPC side: the bot session stream and the operator service, on grpc.aio.

Handlers run on the asyncio host loop; they hand each answer to its match with a plain call
(``SeatLink.deliver``: the match's step runs in that call), and messages go out through a
per-session queue drained by the session's writer task.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NoReturn, Protocol

import grpc
import structlog
import trio
from google.protobuf.message import DecodeError

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, referee_pb2, referee_pb2_grpc
from referee import games
from referee.model.events import MatchEvent
from referee.model.limits import LimitExceeded, Limits, check_spec
from referee.model.replay import PROTOCOL_VERSION
from referee.model.spec import DEFAULT_GAME, MatchSpec
from referee.table.events import MatchEventHub
from referee.table.faults import CLOSED_BY_BOT
from referee.table.finished import HeldMatch
from referee.table.flow import Table
from referee.table.seats import SeatLink
from referee.wire import envelope as wire

log = structlog.get_logger("referee")
_EOF = grpc.aio.EOF  # type: ignore[attr-defined]

HELLO_TIMEOUT_S = 10.0
"""A new stream must say hello within this time."""
REFUSAL_READ_S = 1.0
"""How long a ``Play`` stream the referee refuses (a limit reached) may take to write its first
message, read before the refusal is sent (so the client's write never races the status)."""
DEFAULT_LIST_LIMIT = 100
"""Matches ListMatches returns when the request gives no limit."""
LIST_AFTER_KEY = "gin-arena-after"
"""ListMatches request metadata: list the matches after this match id (the next page)."""
LIST_LEFT_OFF_KEY = "gin-arena-left-off"
"""ListMatches trailing metadata: how many matches (past the request's limit or the reply's
byte bound, ``Limits.list_bytes``) were left off after the last one listed."""
CLOSE_DRAIN_S = 1.0
"""How long a session the referee ends waits for the message being written to finish (a client
that does not read never lets it: then the stream is ended without waiting)."""
STATUS_SEND_S = 1.0
"""How long ending a stream the referee cut off waits for its status to go out (a client
that never reads never lets it: :func:`end_stream`)."""
MAX_NONCE_BYTES = 64
"""The longest nonce a bot may contribute."""
UNKNOWN_TOKEN = ("unknown token: it opens no seat of a match here and is no enabled registered bot's "
                 "(a disabled, suspended or removed bot's token, and one replaced by rotate-token, are refused)")
"""The status text of a hello whose token nothing here accepts."""


class Referee(Protocol):
    """What the services need of the referee that holds the matches (``_server.Referee``)."""

    tables: dict[str, HeldMatch]
    """Every match the referee keeps, by id (a finished one as its compact record)."""
    limits: Limits
    """The referee's limits."""
    open_streams: int
    """``Play``, ``WatchMatch`` and ``WatchMatches`` streams open now (bounded by
    ``limits.streams_per_server``)."""
    streams_by_peer: dict[str, int]
    """The same streams by the connection they came over (``context.peer()``; bounded by
    ``limits.streams_per_connection``); a connection with none has no entry."""
    events: MatchEventHub
    """The publication of the matches' starts and ends (``WatchMatches``)."""

    def create_match(self, spec: MatchSpec) -> Table:
        """Register a match and start it."""

    def links_for_token(self, token: str) -> list[SeatLink]:
        """The seats a token opens."""

    def session_opened(self, session: GrpcSession) -> None:
        """A bot's session was authenticated."""

    def session_closed(self, session: GrpcSession) -> None:
        """A bot's session ended."""

    def identify(self, token: str) -> str | None:
        """The registered bot a token that opens no seat belongs to (its bot directory's
        answer; ``None`` without a directory)."""

    def refusal(self, token: str) -> str:
        """Why a token that opens nothing here is refused (the status text)."""


class GrpcSession:
    """One bot's stream: implements the table's ``Session``."""

    def __init__(self, hello: bot_pb2.Hello, context: grpc.aio.ServicerContext[Any, Any], limits: Limits) -> None:
        self.bot_name = hello.bot_name or "bot"
        self.nonce = hello.nonce
        self.token = hello.token
        self.skip_event_messages = hello.skip_event_messages
        self.games = tuple(hello.games)
        self.presets = tuple(hello.presets)
        self.max_concurrent = max(1, hello.max_concurrent_matches)
        """Matches this session plays at once (``Hello.max_concurrent_matches``, 0 counted as 1)."""
        self.registered = ""
        """The registered bot this session is (its token identified by the bot directory), or ""."""
        self.session_id = secrets.token_hex(6)
        self.links: dict[str, SeatLink] = {}
        self._context = context
        self._queue: deque[tuple[bytes, Callable[[float], None] | None]] = deque()
        self._idle: asyncio.Future[None] | None = None  # the writer's, while it waits for a message
        self.closed: asyncio.Future[tuple[grpc.StatusCode, str]] = asyncio.get_running_loop().create_future()
        self._limits = limits
        self._queued = 0  # bytes queued, not yet written
        self._asked = 0  # requests sent whose answers are not yet in: each pays for one message
        self._budget = float(limits.inbound_burst)  # messages the bot may send beyond those asked
        self._budget_at = time.monotonic()

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        """Queue a serialised message; ``on_written`` is called with the time it was written.
        Never blocks: a client that lets more than ``limits.outbound_bytes`` pile up is cut off."""
        if self.closed.done():
            return
        self._queued += len(data)
        if self._queued > self._limits.outbound_bytes:
            self.close("RESOURCE_EXHAUSTED", f"the client did not read: more than {self._limits.outbound_bytes} "
                       "bytes queued for it (limit outbound_bytes)")
            return
        if on_written is not None:
            self._asked += 1
        self._queue.append((data, on_written))
        self._wake()

    def send_first(self, msg: bot_pb2.RefereeMessage) -> None:
        """Queue a message ahead of everything queued so far (the welcome)."""
        data = msg.SerializeToString()
        self._queued += len(data)
        self._queue.appendleft((data, None))
        self._wake()

    def _wake(self) -> None:
        """Wake the writer if it waits (a bare future: cheaper than an ``asyncio.Event``, whose
        wait and set cost a few µs of every decision)."""
        idle = self._idle
        if idle is not None:
            self._idle = None
            if not idle.done():
                idle.set_result(None)

    def inbound(self) -> bool:
        """Count one message from the bot; False once it sent more than it was asked for and
        its budget allows (``limits.inbound_burst``, refilled at ``limits.inbound_per_second``)."""
        if self._asked:
            self._asked -= 1
            return True
        now = time.monotonic()
        limits = self._limits
        self._budget = min(float(limits.inbound_burst),
                           self._budget + (now - self._budget_at) * limits.inbound_per_second)
        self._budget_at = now
        if self._budget < 1:
            return False
        self._budget -= 1
        return True

    def close(self, code: str, detail: str) -> None:
        if not self.closed.done():
            self.closed.set_result((getattr(grpc.StatusCode, code), detail))
            self._wake()  # the writer stops after the write in flight

    async def write_loop(self) -> None:
        ctx = self._context
        queue = self._queue
        loop = asyncio.get_running_loop()
        while not self.closed.done():
            if not queue:
                self._idle = idle = loop.create_future()
                await idle
                continue
            data, on_written = queue.popleft()
            await ctx.write(data)
            self._queued -= len(data)
            if on_written is not None:
                on_written(trio.current_time())


def _already_serialised(data: bytes) -> bytes:
    return data


def add_bot_service(servicer: BotServicer, server: grpc.aio.Server) -> None:
    """Register ``BotService`` with a pass-through response serialiser: the table serialises
    each message once (for the seat's digest) and the stream writes those very bytes."""
    handler = grpc.method_handlers_generic_handler(
        "gin_arena.v2.BotService",
        {"Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play, request_deserializer=_already_serialised,  # decoded by Play: a bad one is a fault
            response_serializer=_already_serialised)},
    )
    server.add_generic_rpc_handlers((handler,))


class BotServicer(bot_pb2_grpc.BotServiceServicer):
    """``BotService.Play``: hello, welcome, then the matches of the token."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def Play(  # type: ignore[override]
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        async with stream_slot(self.referee, context, client_writes=True):
            await self._play(context)

    async def _hello(self, context: grpc.aio.ServicerContext[Any, Any]) -> bot_pb2.Hello | None:
        """The stream's hello (``None`` if it ended first); aborts the stream if it is wrong."""
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT_S)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"no hello within {HELLO_TIMEOUT_S:g} s")
        if first is _EOF:
            return None
        try:
            msg = bot_pb2.BotMessage.FromString(first)
        except DecodeError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"undecodable message: {e}")
        if msg.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a hello")
        hello = msg.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version} is not supported; this referee speaks "
                f"{PROTOCOL_VERSION}",
            )
        if len(hello.nonce) > MAX_NONCE_BYTES:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"nonce longer than {MAX_NONCE_BYTES} bytes")
        try:
            self.referee.limits.check_length("hello.bot_name", hello.bot_name, "name_length")
        except ValueError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        return hello

    async def _play(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        hello = await self._hello(context)
        if hello is None:
            return
        links = self.referee.links_for_token(hello.token)
        registered = self.referee.identify(hello.token) if not links else None
        if not links and registered is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, self.referee.refusal(hello.token))
        session = GrpcSession(hello, context, self.referee.limits)
        session.registered = registered or ""
        refusals, unsupported = [], []
        for link in links:
            why = link.attach(session)
            if why is None:
                session.links[link.table.match_id] = link
            else:
                refusals.append(why)
                if link.game_refusal(session) is not None:
                    unsupported.append((link.table.match_id, why))
        for match_id, why in unsupported:  # never a game the bot did not declare: say so precisely
            report = bot_pb2.RefereeMessage(match_id=match_id, error=bot_pb2.ErrorReport(
                code=bot_pb2.ERROR_CODE_UNSUPPORTED_GAME, message=why, fatal=not session.links))
            if session.links:
                session.send(report.SerializeToString())
            else:
                await context.write(report.SerializeToString())
        if not session.links and refusals:
            live = "live session" in refusals[0]
            code = grpc.StatusCode.ALREADY_EXISTS if live else grpc.StatusCode.FAILED_PRECONDITION
            await context.abort(code, "; ".join(refusals))
        self.referee.session_opened(session)
        bound = structlog.contextvars.bound_contextvars(bot=session.bot_name, session=session.session_id)
        bound.__enter__()
        log.info("session_opened", matches=sorted(session.links))
        session.send_first(bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(
            protocol_version=PROTOCOL_VERSION, session_id=session.session_id,
            referee_info="gin-arena referee", match_ids=sorted(session.links),
        )))
        writer = asyncio.ensure_future(session.write_loop())
        reader = asyncio.ensure_future(self._read_loop(session, context))
        detail = "the stream ended"
        try:
            waits: set[asyncio.Future[Any]] = {writer, reader, session.closed}
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if session.closed in done:
                code, detail = session.closed.result()
                reader.cancel()
                # A write in flight ends first: the status sent over it fails in gRPC's core
                # (the call's operations clash) and the client would never get it.
                await asyncio.wait({writer}, timeout=CLOSE_DRAIN_S)
                writer.cancel()
                await end_stream(context, code, detail)
            for task in done:
                if task is not session.closed and task.exception() is not None:
                    detail = f"stream error: {task.exception()!r}"
                elif task is reader and not session.closed.done():  # it read the end of the stream
                    detail = CLOSED_BY_BOT
        finally:
            for task in (reader, writer):
                task.cancel()
            for link in session.links.values():
                link.detach(session, detail)
            self.referee.session_closed(session)  # (after: a registered bot's other session may take the seats)
            session.links.clear()  # (the stream's garbage, freed at a collection, must not hold its matches)
            log.info("session_closed", detail=detail)
            bound.__exit__(None, None, None)

    async def _read_loop(self, session: GrpcSession, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        while True:
            raw = await context.read()
            if raw is _EOF:
                return
            at = trio.current_time()
            if not session.inbound():
                limits = self.referee.limits
                session.close("RESOURCE_EXHAUSTED", f"too many messages: more than {limits.inbound_burst} beyond "
                              f"those asked for (limits inbound_burst, inbound_per_second={limits.inbound_per_second})")
                return
            try:
                msg = bot_pb2.BotMessage.FromString(raw)
            except DecodeError as e:
                detail = f"undecodable message ({len(raw)} bytes): {e}"
                for link in session.links.values():
                    link.malformed(detail)
                session.close("INVALID_ARGUMENT", detail)
                return
            self._dispatch(session, msg, at)

    @staticmethod
    def _link(session: GrpcSession, match_id: str, request_id: int = 0) -> SeatLink | None:
        """The session's seat in ``match_id`` (empty: its only one), or ``None`` with an error sent."""
        link = session.links.get(match_id)
        if link is None and not match_id and len(session.links) == 1:
            link = next(iter(session.links.values()))
        if link is None:
            session.send(_error(bot_pb2.ERROR_CODE_UNKNOWN_MATCH, f"this session plays no match {match_id[:64]!r}",
                                request_id))
        return link

    def _dispatch(self, session: GrpcSession, msg: bot_pb2.BotMessage, at: float) -> None:
        kind = msg.WhichOneof("kind")
        if kind == "action":
            response = msg.action
            if (link := self._link(session, response.match_id, response.request_id)) is not None:
                link.deliver(response, at)
        elif kind == "resign":
            resign = msg.resign
            if (link := self._link(session, resign.match_id)) is not None:
                link.resigned(resign.reason, self.referee.limits.text_length)
        elif kind == "ping":
            session.send(bot_pb2.RefereeMessage(pong=bot_pb2.Pong(
                ping_id=msg.ping.ping_id, referee_time_ms=int(time.time() * 1000))).SerializeToString())
        elif kind == "hello":
            session.send(_error(bot_pb2.ERROR_CODE_PROTOCOL_VIOLATION, "hello may be sent only once"))
        else:
            session.send(_error(bot_pb2.ERROR_CODE_MALFORMED,
                                "a BotMessage must set one of hello, action, ping, resign"))


@asynccontextmanager
async def stream_slot(referee: Referee, context: grpc.aio.ServicerContext[Any, Any], *,
                      client_writes: bool = False) -> AsyncIterator[None]:
    """Hold one of the server's ``limits.streams_per_server`` stream slots and one of its
    connection's ``limits.streams_per_connection`` (or refuse the stream with a status that
    names the limit: a client past it opens another connection, it never waits unanswered).
    ``client_writes``: the client writes its first message after opening the stream (``Play``'s
    hello), which is read before a refusal (:func:`_refuse`)."""
    limits = referee.limits
    if referee.open_streams >= limits.streams_per_server:
        await _refuse(context, client_writes,
                      f"the referee has {limits.streams_per_server} streams open (limit streams_per_server)")
    peer = context.peer()
    by_peer = referee.streams_by_peer
    if by_peer.get(peer, 0) >= limits.streams_per_connection:
        await _refuse(context, client_writes,
                      f"this connection has {limits.streams_per_connection} streams open (limit "
                      "streams_per_connection): open another connection for more")
    referee.open_streams += 1
    by_peer[peer] = by_peer.get(peer, 0) + 1
    try:
        yield
    finally:
        referee.open_streams -= 1
        left = by_peer[peer] - 1
        if left:
            by_peer[peer] = left
        else:
            del by_peer[peer]


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], client_writes: bool, why: str) -> None:
    """End a stream the referee cannot take with ``RESOURCE_EXHAUSTED`` and ``why``. For a
    stream the client writes to, its first message is read first (up to ``REFUSAL_READ_S``):
    a stream ended while the client's write of it is still in flight fails that write in
    gRPC's core, and grpc.aio then gives the client its own status, ``INTERNAL`` "Internal
    error from Core", instead of the referee's (about 45 of 1,000 refused hellos did)."""
    if client_writes:
        with contextlib.suppress(Exception):  # (timed out, or the stream broke: the abort says it anyway)
            await asyncio.wait_for(context.read(), REFUSAL_READ_S)
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, why)


async def end_stream(context: grpc.aio.ServicerContext[Any, Any], code: grpc.StatusCode, detail: str) -> NoReturn:
    """End a stream the referee cut off with ``code`` and ``detail`` (it raises, as
    ``context.abort`` does). gRPC sends the status only after the messages already queued on
    the stream, so for a client that never reads (a shut flow-control window) it never goes
    out: the wait for it is bounded by ``STATUS_SEND_S``, and the handler then ends anyway, so
    the stream's slot, seats and queue are let go at once (gRPC keeps the stream itself, with
    the one message it holds, until the client resets it or goes)."""
    try:
        await asyncio.wait_for(context.abort(code, detail), STATUS_SEND_S)
    except TimeoutError:
        log.info("status_not_sent", code=code.name, detail=detail)
        raise StatusNotSent(detail) from None
    raise AssertionError("context.abort returned")  # (it always raises)


class StatusNotSent(Exception):
    """A stream was ended without its status: the client did not read (:func:`end_stream`)."""


def _error(code: int, message: str, request_id: int = 0) -> bytes:
    return bot_pb2.RefereeMessage(error=bot_pb2.ErrorReport(code=code, message=message,  # type: ignore[arg-type]
                                                            request_id=request_id)).SerializeToString()


_STATE = {
    "waiting": referee_pb2.MATCH_STATE_WAITING_FOR_PLAYERS,
    "running": referee_pb2.MATCH_STATE_RUNNING,
    "finished": referee_pb2.MATCH_STATE_FINISHED,
    "aborted": referee_pb2.MATCH_STATE_ABORTED,
    "interrupted": referee_pb2.MATCH_STATE_INTERRUPTED,
}


def match_status(table: HeldMatch) -> referee_pb2.MatchStatus:
    """What an operator may see of a match (public information)."""
    status = referee_pb2.MatchStatus(
        match_id=table.match_id, state=_STATE[table.state], player_names=table.spec.players,
        connected=table.connected, game_name=table.spec.game,
    )
    match = table.match
    if match is not None:
        status.scores.extend(match.scores)
        status.game_number = match.game_number
        status.deal_number = match.deal_number
        status.games_won.extend(match.games_won)
    if table.report is not None:
        status.result.CopyFrom(table.match_result())
        status.replay_path = table.report.replay_path
    return status


class RefereeServicer(referee_pb2_grpc.RefereeServiceServicer):
    """The operator service: create, inspect, watch and cancel matches."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def CreateMatch(
        self, request: referee_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> referee_pb2.CreateMatchResponse:
        try:
            spec = spec_from_request(request)
            check_spec(spec, self.referee.limits)
        except ValueError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        if spec.match_id and spec.match_id in self.referee.tables:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, f"match {spec.match_id!r} exists")
        try:
            table = self.referee.create_match(spec)
        except LimitExceeded as e:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(e))
        return referee_pb2.CreateMatchResponse(
            match_id=table.match_id,
            seat_tokens=[referee_pb2.SeatToken(seat=link.seat, token=link.token) for link in table.links],
            seed_commitment=table.commitment,
        )

    async def GetMatch(
        self, request: referee_pb2.GetMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> referee_pb2.GetMatchResponse:
        table = self.referee.tables.get(request.match_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        return referee_pb2.GetMatchResponse(match=match_status(table))

    async def ListMatches(
        self, request: referee_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> referee_pb2.ListMatchesResponse:
        tables = list(self.referee.tables.values())[::-1]  # newest first
        if request.state_filter:
            tables = [t for t in tables if _STATE[t.state] == request.state_filter]
        after = dict(context.invocation_metadata() or ()).get(LIST_AFTER_KEY)
        if after is not None:
            ids = [t.match_id for t in tables]
            if after not in ids:
                await context.abort(grpc.StatusCode.NOT_FOUND, f"{LIST_AFTER_KEY}: no match {after!r} to list after")
            tables = tables[ids.index(after) + 1:]
        reply = referee_pb2.ListMatchesResponse()
        budget, count = self.referee.limits.list_bytes, min(len(tables), request.limit or DEFAULT_LIST_LIMIT)
        for table in tables[:count]:
            status = match_status(table)
            size = status.ByteSize() + 8  # the field's tag and length
            if size > budget and len(reply.matches):
                break
            budget -= size
            reply.matches.append(status)
        context.set_trailing_metadata(((LIST_LEFT_OFF_KEY, str(len(tables) - len(reply.matches))),))
        return reply

    async def CancelMatch(
        self, request: referee_pb2.CancelMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> referee_pb2.CancelMatchResponse:
        table = self.referee.tables.get(request.match_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        if table.over or not isinstance(table, Table):
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"match {request.match_id!r} is over")
        try:
            self.referee.limits.check_length("reason", request.reason, "text_length")
        except ValueError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        table.cancel(request.reason)
        return referee_pb2.CancelMatchResponse(match=match_status(table))

    async def GetReplay(
        self, request: referee_pb2.GetReplayRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> referee_pb2.GetReplayResponse:
        table = self.referee.tables.get(request.match_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        report = table.report
        if not table.over or report is None or not table.finished.is_set():
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"match {request.match_id!r} is not over: its replay is not complete")
        try:
            data = await asyncio.to_thread(Path(report.replay_path).read_bytes) if report.replay_path else b""
        except OSError as e:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"the replay of {request.match_id!r}: {e.strerror}")
        if not data:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"match {request.match_id!r} has no replay file")
        return referee_pb2.GetReplayResponse(match_id=table.match_id, replay=data, replay_hash=report.replay_hash)

    async def WatchMatches(
        self, request: referee_pb2.WatchMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[referee_pb2.MatchEvent]:
        hub = self.referee.events
        unknown = sorted(set(request.game_names) - set(games.names()))
        if unknown:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"game_names: no game {', '.join(map(repr, unknown))} on this referee "
                                f"(it has {', '.join(games.names())})")
        after = request.after_sequence
        if after and not request.referee_instance:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "after_sequence needs the referee_instance its events came from")
        if after and request.referee_instance == hub.instance and after > hub.sequence:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"after_sequence {after} is past this referee's last event ({hub.sequence})")
        async with stream_slot(self.referee, context):
            lost = ""
            held: list[MatchEvent] = []
            if after:
                if request.referee_instance != hub.instance:
                    lost = (f"the events are of referee instance {request.referee_instance!r}; this is "
                            f"{hub.instance!r} (another referee, or this one restarted): re-read ListMatches")
                else:
                    kept = hub.held_after(after)
                    if kept is None:
                        lost = (f"the events after {after} are no longer held (the backlog keeps the latest "
                                f"{self.referee.limits.match_events_backlog}, limit match_events_backlog): "
                                "re-read ListMatches")
                    else:
                        held = kept
            watcher = _EventWatcher(hub.queue, frozenset(request.game_names))
            for event in held:  # on top of the queue's bound (the backlog holds them anyway)
                watcher.preload(event)
            hub.attach(watcher)  # no await since the held events were read: none is missed
            live_after = hub.sequence  # (taken now: events published while we send are queued after it)
            try:
                now = time.time_ns() // 1_000_000
                if lost:
                    yield referee_pb2.MatchEvent(sequence=live_after, referee_instance=hub.instance, time_ms=now,
                                                 lost=referee_pb2.MatchEventsLost(reason=lost))
                resumed = bool(after) and not lost
                yield referee_pb2.MatchEvent(  # its sequence: the one the events that follow come after
                    sequence=after if resumed else live_after,
                    referee_instance=hub.instance, time_ms=now,
                    watching=referee_pb2.WatchingMatches(resumed=resumed))
                while True:
                    next_event = await watcher.get()
                    if next_event is None:
                        if watcher.dropped:
                            await end_stream(context, grpc.StatusCode.RESOURCE_EXHAUSTED, watcher.dropped)
                        return  # the referee is closing
                    yield match_event_message(next_event, hub.instance)
            finally:
                hub.detach(watcher)

    async def WatchMatch(  # type: ignore[override]  # (it writes with context.write: see below)
        self, request: referee_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        table = self.referee.tables.get(request.match_id)
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        async with stream_slot(self.referee, context):
            watcher = _Watcher(self.referee.limits.spectator_queue_bytes)
            table.watch(watcher.put, request.from_start)
            watcher.live = True
            try:
                while (ev := await watcher.get()) is not None:
                    # Awaited, not yielded: the write completes once gRPC took the event within
                    # the stream's flow-control window, and until then the event still counts
                    # against the watcher's bound, so a shut window fills the queue and drops it.
                    write = asyncio.ensure_future(context.write(ev))
                    await asyncio.wait({write, watcher.drop}, return_when=asyncio.FIRST_COMPLETED)
                    if not write.done():  # dropped while gRPC holds the write: it ends first (see _play)
                        await asyncio.wait({write}, timeout=CLOSE_DRAIN_S)
                        write.cancel()
                        break
                    write.result()
                    watcher.written(ev)
                    if ev.WhichOneof("kind") == "match_finished":
                        return
            finally:
                if watcher.put in table.spectators:
                    table.spectators.remove(watcher.put)
        await end_stream(context, grpc.StatusCode.RESOURCE_EXHAUSTED, watcher.dropped)


class _Watcher:
    """One spectator's queue: bounded in bytes, so a spectator that does not read is dropped
    (the match never waits for it). An event counts from when the match hands it over until
    gRPC has taken it to send (the write's completion: within the stream's flow-control window),
    so a spectator whose window stays shut is dropped however fast the handler runs. The events
    of the match so far, given when it starts watching, are not counted against the bound (the
    match holds them anyway)."""

    def __init__(self, max_bytes: int) -> None:
        self._queue: asyncio.Queue[referee_pb2.SpectatorEvent | None] = asyncio.Queue()
        self._sizes: dict[int, int] = {}  # id() of an event counted and not yet written -> its size
        self._bytes = 0
        self._max = max_bytes
        self.live = False
        """Whether the events so far were given (from now on the bound counts)."""
        self.dropped = ""
        """Why the spectator was dropped ("" while it is not)."""
        self.drop: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done once the spectator was dropped."""

    def put(self, ev: referee_pb2.SpectatorEvent) -> None:
        if self.dropped:
            return
        size = ev.ByteSize() if self.live else 0
        if self._bytes + size > self._max:
            self.dropped = (f"the spectator did not read: more than {self._max} bytes queued "
                            "(limit spectator_queue_bytes)")
            self._queue.put_nowait(None)
            self.drop.set_result(None)
            return
        if size:
            self._bytes += size
            self._sizes[id(ev)] = self._sizes.get(id(ev), 0) + size
        self._queue.put_nowait(ev)

    async def get(self) -> referee_pb2.SpectatorEvent | None:
        """The next event to write; ``None`` once the spectator was dropped."""
        return await self._queue.get()

    def written(self, ev: referee_pb2.SpectatorEvent) -> None:
        """gRPC took ``ev``: it no longer counts."""
        self._bytes -= self._sizes.pop(id(ev), 0)


class _EventWatcher:
    """One ``WatchMatches`` stream's queue of match events, on the asyncio side: at most
    ``bound`` unread (the limit ``match_events_queue``), past it the hub drops it. Events of
    games the request did not ask for are passed over (they count for nothing)."""

    def __init__(self, bound: int, game_names: frozenset[str]) -> None:
        self._queue: asyncio.Queue[tuple[MatchEvent | None, bool]] = asyncio.Queue()  # counted?
        self._live = 0
        self._bound = bound
        self._games = game_names
        self.dropped = ""
        """Why the hub dropped this stream ("" while it did not)."""

    def _wanted(self, event: MatchEvent) -> bool:
        return not self._games or event.game in self._games

    def preload(self, event: MatchEvent) -> None:
        """Queue a held event (a resume's), outside the bound."""
        if self._wanted(event):
            self._queue.put_nowait((event, False))

    def offer(self, event: MatchEvent) -> bool:
        if not self._wanted(event):
            return True
        if self._live >= self._bound:
            return False
        self._live += 1
        self._queue.put_nowait((event, True))
        return True

    def end(self, dropped: str = "") -> None:
        self.dropped = dropped
        self._queue.put_nowait((None, False))

    async def get(self) -> MatchEvent | None:
        """The next event; ``None`` once the stream ended (:attr:`dropped` says whether it was dropped)."""
        event, counted = await self._queue.get()
        self._live -= counted
        return event


def match_summary(event: MatchEvent) -> referee_pb2.MatchSummary:
    """A match event's match as ``WatchMatches`` sends it: for a finished one, the same result
    and replay path as ``GetMatch`` gives."""
    summary = referee_pb2.MatchSummary(match_id=event.match_id, game_name=event.game,
                                       player_names=event.players, state=_STATE[event.state])
    report = event.report
    if report is not None:
        game_results = games.get(event.game).wire.game_results(report.outcome)
        summary.result.CopyFrom(wire.match_result(report, event.operator_seed, event.nonces, event.summary,
                                                  game_results, event.game))
        summary.replay_path = report.replay_path
    return summary


def match_event_message(event: MatchEvent, instance: str) -> referee_pb2.MatchEvent:
    """A published match event as ``WatchMatches`` sends it (``instance``: the hub's)."""
    message = referee_pb2.MatchEvent(sequence=event.sequence, referee_instance=instance, time_ms=event.time_ms)
    getattr(message, event.kind).CopyFrom(match_summary(event))
    return message


def spec_from_request(request: referee_pb2.CreateMatchRequest) -> MatchSpec:
    """A ``CreateMatch`` request as a match spec (``ValueError`` says what is wrong)."""
    if request.HasField("first_dealer"):
        raise ValueError("first_dealer is derived from the match seed; it cannot be chosen")
    game = request.game_name or DEFAULT_GAME
    rules = games.get(game).wire.rules_from_request(request)
    tc = wire.time_control_from_proto(request.time_control) if request.HasField("time_control") else None
    policy = wire.FAULT_POLICY_FROM_PB.get(request.fault_policy)
    if policy is None:
        raise ValueError(f"unknown fault_policy {request.fault_policy}")
    kwargs: dict[str, Any] = {
        "players": tuple(s.name for s in request.seats),
        "fault_policy": policy,
        "substitute_time_faults": "move" if request.time_forfeit_substitutes_one_decision else "game",
        "repeat_illegal": request.repeat_illegal,
        "seed": request.seed or None,
        "reveal_seed": not request.withhold_seed,
        "match_id": request.match_id,
        "mix_nonces": request.mix_bot_nonces,
        "game": game,
        "seat_time_controls": tuple(wire.time_control_from_proto(t) for t in request.seat_time_controls),
    }
    if any(s.token for s in request.seats):
        kwargs["seat_tokens"] = tuple(s.token for s in request.seats)
    if rules is not None:
        kwargs["rules"] = rules
    if tc is not None:
        kwargs["time_control"] = tc
    if request.reconnect_grace_ms:
        kwargs["reconnect_grace_ms"] = request.reconnect_grace_ms
    if request.connect_timeout_ms:
        kwargs["connect_timeout_ms"] = request.connect_timeout_ms
    if request.max_actions_per_deal:
        kwargs["max_actions_per_deal"] = request.max_actions_per_deal
    return MatchSpec(**kwargs)
