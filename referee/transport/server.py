"""The referee: a registry of matches and tokens, the gRPC server, and how to start it."""

from __future__ import annotations

import gc
import hashlib
import hmac
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import grpc
import structlog
import trio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from gin_arena.v2 import bot_pb2, referee_pb2, referee_pb2_grpc
from referee.model.limits import LimitExceeded, Limits
from referee.model.presence import BotDirectory, BotPresence
from referee.model.spec import MatchReport, MatchSpec
from referee.table.events import MatchEventHub, MatchEvents, table_event
from referee.table.finished import FinishedMatch, HeldMatch
from referee.table.flow import Table
from referee.table.interrupted import recover_folder
from referee.table.seats import SeatLink
from referee.transport.auth import OperatorAuth, new_operator_token
from referee.transport.runtime import aio
from referee.transport.service import UNKNOWN_TOKEN, BotServicer, GrpcSession, RefereeServicer, add_bot_service
from referee.transport.tls import ServerTLS, bind

log = structlog.get_logger("referee")

MAX_MESSAGE_BYTES = 64 * 1024
"""The largest message a bot or operator may send; larger ones are refused by gRPC."""
SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.so_reuseport", 0),
]


ANNOUNCED_STREAMS_FACTOR = 2
"""HTTP/2 ``SETTINGS_MAX_CONCURRENT_STREAMS`` is this many times ``streams_per_connection``: the
service itself refuses a connection's streams past the limit with a status that names it, so the
streams past it must reach the service (gRPC queues a stream past the announced value on the
client, unanswered, for as long as the others stay open). The announced bound is also what gRPC's
overload protection holds one connection to (:data:`OVERLOAD_PROTECTION`), which is what keeps a
rapid-reset connection from touching any other (docs/security.md, measured): so it stays small."""


OVERLOAD_PROTECTION = 1
"""gRPC's ``grpc.http.overload_protection``: on (its default). gRPC's core then refuses a
connection's new stream (RST_STREAM REFUSED_STREAM) while more streams of that connection are
allocated on the server than ``SETTINGS_MAX_CONCURRENT_STREAMS`` announces, reset ones
included until the referee's handler has let them go. That is the one bound on a connection
that sends HEADERS+RST_STREAM in bursts ("rapid reset", CVE-2023-44487): without it the reset
streams leave the HTTP/2 map at once, the core accepts all of them, and they crowd every other
connection's new calls out (8 bursts of 10,000 from a client that acknowledges the SETTINGS:
42 of 47 new sessions on other connections ``CANCELLED`` and none of 12 honest seats got its
``match_finished``; with it on, 0 of 2,141 and all 12, ``tests/test_rapid_reset.py``). The price: a client with
more streams at once than announced (past the limit and past the headroom the factor gives)
sees some of the extra ones refused by the core (``UNAVAILABLE``) rather than by the service
with the status that names ``streams_per_connection``, since a stream the service refused is
still allocated a moment after the client opened the next (``tests/test_streams_per_connection.py``)."""


def server_options(limits: Limits) -> list[tuple[str, int]]:
    """The gRPC server's options: :data:`SERVER_OPTIONS` and the limits' transport part."""
    streams = ANNOUNCED_STREAMS_FACTOR * limits.streams_per_connection
    return [*SERVER_OPTIONS, ("grpc.max_concurrent_streams", streams),
            ("grpc.http.overload_protection", OVERLOAD_PROTECTION)]


def _token_key(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class Referee:
    """Every match of one referee process, and the tokens that open them. Lives in trio; the
    gRPC handlers call its plain methods on the same thread."""

    def __init__(self, nursery: trio.Nursery, replay_dir: Path | None, limits: Limits | None = None,
                 bot_directory: BotDirectory | None = None) -> None:
        self._nursery = nursery
        self.bot_directory = bot_directory
        """Who a token that opens no seat belongs to (registered bots); ``None``: no such bots."""
        self._bot_sessions: dict[str, list[GrpcSession]] = {}  # registered bot -> its live sessions
        self._bot_seats: dict[str, list[SeatLink]] = {}  # registered bot -> its seats of matches not over
        self._presence_changed = trio.Event()
        self.presence_version = 0
        """Bumped whenever a registered bot comes, goes, or takes or leaves a seat (:meth:`wait_presence`)."""
        self.replay_dir = replay_dir
        self.limits = limits or Limits()
        self.tables: dict[str, HeldMatch] = {}
        """Every match kept, by id: those not over as their :class:`Table`, the last
        ``limits.finished_matches`` finished ones as their compact :class:`FinishedMatch`."""
        self._by_token: dict[bytes, list[SeatLink]] = {}
        self._sessions: dict[bytes, list[GrpcSession]] = {}
        self._finished: deque[tuple[str, int]] = deque()  # id and retained bytes, oldest first
        self._finished_bytes = 0
        self.open_streams = 0
        self.streams_by_peer: dict[str, int] = {}
        self.events = MatchEventHub(self.limits.match_events_queue, self.limits.match_events_backlog)
        """The publication of the matches' starts and ends (:meth:`open_match_events`), numbered
        within ``events.instance`` and kept in a backlog for ``WatchMatches`` resumes."""
        self.address = ""
        self.operator_token = ""
        """The secret every ``RefereeService`` call must carry (``referee.lowlevel.operator_metadata``)."""
        if replay_dir is not None:  # the matches a killed referee left: over, listed as interrupted
            for table in recover_folder(replay_dir):
                self.tables[table.match_id] = FinishedMatch.of(table)
                table.release()
                self._finished.append((table.match_id, table.spectator_log.size))
                self._finished_bytes += table.spectator_log.size

    @property
    def waiting(self) -> int:
        """Matches created that have not started (waiting for their seats)."""
        return sum(1 for t in self.tables.values() if t.state == "waiting")

    def create_match(self, spec: MatchSpec) -> Table:
        """Register a match and start running it (it waits for its seats to connect);
        :class:`LimitExceeded` if ``limits.waiting_matches`` are waiting already."""
        bound = self.limits.waiting_matches
        if self.waiting >= bound:
            raise LimitExceeded(f"the referee has {bound} matches waiting for their seats (limit waiting_matches)")
        table = Table(spec, self.replay_dir, self._table_finished, on_start=self._table_started)
        if table.match_id in self.tables:
            raise ValueError(f"match {table.match_id!r} exists")
        self.tables[table.match_id] = table
        for bot, link in zip(spec.seat_bots, table.links, strict=False):
            if bot:
                self._bot_seats.setdefault(bot, []).append(link)
                self._seat_registered(bot, link)
        for link in table.links:
            key = _token_key(link.token)
            self._by_token.setdefault(key, []).append(link)
            for session in self._sessions.get(key, []):  # a bot token with a live session
                if link.attach(session) is None:
                    session.links[table.match_id] = link
                    break
        self._nursery.start_soon(table.run)
        return table

    async def play(self, spec: MatchSpec) -> MatchReport:
        """Create a match and wait for its report."""
        table = self.create_match(spec)
        await table.finished.wait()
        assert table.report is not None
        return table.report

    def open_match_events(self, *, past: bool = False) -> AbstractAsyncContextManager[MatchEvents]:
        """Subscribe to the matches' events (``async with referee.open_match_events() as events:``
        then ``async for event in events``): a ``started`` event when a match's seats have all
        connected, a ``finished`` one when it is over and its replay written. With ``past``, the
        subscription first yields a ``finished`` event for every finished match the referee still
        holds (those a killed referee left, listed as interrupted, included), oldest first. A
        subscriber that lets ``limits.match_events_queue`` events pile up unread is dropped
        (:class:`referee.MatchEventsDropped`); the matches never wait for it. Published events
        carry their ``sequence`` within ``events.instance`` (the held ones of ``past``, 0)."""
        held = [self.tables[match_id] for match_id, _ in self._finished if match_id in self.tables] if past else []
        return self.events.subscribe([table_event(t) for t in held])

    def _table_started(self, table: Table) -> None:
        self.events.publish(table_event(table))  # always: the backlog serves resumes

    def links_for_token(self, token: str) -> list[SeatLink]:
        """The seats a token opens (compared in constant time after the lookup)."""
        if not token:
            return []
        links = self._by_token.get(_token_key(token), [])
        return [link for link in links if hmac.compare_digest(link.token.encode(), token.encode())]

    def session_opened(self, session: GrpcSession) -> None:
        self._sessions.setdefault(_token_key(session.token), []).append(session)
        if session.registered:
            bot = session.registered
            self._bot_sessions.setdefault(bot, []).append(session)
            for link in self._bot_seats.get(bot, []):  # its seats that wait for it (or lost it)
                if link.session is None and not link.table.over and _room(session):
                    self._attach(session, link)
            log.info("bot_online", bot=bot, sessions=len(self._bot_sessions[bot]), games=list(session.games),
                     presets=list(session.presets), max_concurrent=session.max_concurrent)
            self._presence_bump()

    def session_closed(self, session: GrpcSession) -> None:
        sessions = self._sessions.get(_token_key(session.token), [])
        if session in sessions:
            sessions.remove(session)
        if not sessions:
            self._sessions.pop(_token_key(session.token), None)
        bot = session.registered
        if bot and session in self._bot_sessions.get(bot, []):
            self._bot_sessions[bot].remove(session)
            for link in list(session.links.values()):  # seats it left: another live session of the bot takes them
                if link.session is None and not link.table.over:
                    for other in self._bot_sessions[bot]:
                        if _room(other):
                            self._attach(other, link)
                            break
            if not self._bot_sessions[bot]:
                del self._bot_sessions[bot]
                log.info("bot_offline", bot=bot)
            self._presence_bump()

    # ----- registered bots -----
    def identify(self, token: str) -> str | None:
        """The registered bot ``token`` belongs to, by the bot directory (``None`` without one)."""
        return self.bot_directory.identify(token) if self.bot_directory is not None and token else None

    def refusal(self, token: str) -> str:
        """Why a token that opens no seat and identifies no enabled bot is refused."""
        why = self.bot_directory.refusal(token) if self.bot_directory is not None and token else ""
        return why or UNKNOWN_TOKEN

    def presence(self) -> dict[str, BotPresence]:
        """Every registered bot with a live session, by name."""
        out = {}
        for bot, sessions in self._bot_sessions.items():
            seats = [link for link in self._bot_seats.get(bot, []) if not link.table.over]
            out[bot] = BotPresence(
                bot=bot, sessions=len(sessions),
                games=tuple(dict.fromkeys(g for s in sessions for g in s.games)),
                presets=tuple(dict.fromkeys(p for s in sessions for p in s.presets)),
                max_concurrent=sum(s.max_concurrent for s in sessions), playing=len(seats),
                hello_name=sessions[-1].bot_name)
        return out

    async def wait_presence(self, seen: int) -> int:
        """Wait until :attr:`presence_version` is past ``seen`` (at once if it is); returns it."""
        while self.presence_version <= seen:
            await self._presence_changed.wait()
        return self.presence_version

    def disconnect_bot(self, bot: str, reason: str) -> int:
        """End every live session of a registered bot (``UNAUTHENTICATED`` with ``reason``): its
        running matches go on without it and follow their fault policy. Returns how many ended."""
        sessions = list(self._bot_sessions.get(bot, []))
        for session in sessions:
            session.close("UNAUTHENTICATED", reason)
        return len(sessions)

    def recheck_bots(self) -> list[str]:
        """Ask the bot directory again about every registered bot online; disconnect those whose
        token it no longer accepts (disabled, suspended, removed, rotated). Returns their names."""
        gone = []
        for bot, sessions in list(self._bot_sessions.items()):
            for session in list(sessions):
                if self.identify(session.token) != bot:
                    why = f"the token of registered bot {bot!r} is no longer accepted: {self.refusal(session.token)}"
                    session.close("UNAUTHENTICATED", why)
                    gone.append(bot)
        return sorted(set(gone))

    def _seat_registered(self, bot: str, link: SeatLink) -> None:
        """Seat a new match's seat of a registered bot on one of its live sessions with room."""
        for session in self._bot_sessions.get(bot, []):
            if _room(session) and link.game_refusal(session) is None:
                self._attach(session, link)
                break
        self._presence_bump()

    def _attach(self, session: GrpcSession, link: SeatLink) -> None:
        if link.attach(session) is None:
            session.links[link.table.match_id] = link

    def _presence_bump(self) -> None:
        self.presence_version += 1
        self._presence_changed.set()
        self._presence_changed = trio.Event()

    def _table_finished(self, table: Table) -> None:
        for bot in table.spec.seat_bots:
            if bot:
                self._forget_seats(bot, table)
        for link in table.links:
            key = _token_key(link.token)
            links = self._by_token.get(key, [])
            if link in links:
                links.remove(link)
            if not links:
                self._by_token.pop(key, None)
        self.events.publish(table_event(table))  # before the table may be forgotten below
        if self.tables.get(table.match_id) is table:  # (a host may have taken it already)
            self.tables[table.match_id] = FinishedMatch.of(table)
        table.hand_over()  # the record answers for it from now on
        size = table.spectator_log.size
        self._finished.append((table.match_id, size))
        self._finished_bytes += size
        limits = self.limits
        while self._finished and (len(self._finished) > limits.finished_matches
                                  or self._finished_bytes > limits.finished_bytes):
            match_id, size = self._finished.popleft()  # forget the oldest finished matches
            self._finished_bytes -= size
            self.tables.pop(match_id, None)

    def _forget_seats(self, bot: str, table: Table) -> None:
        seats = self._bot_seats.get(bot, [])
        for link in [link for link in seats if link.table is table]:
            seats.remove(link)
            if isinstance(link.session, GrpcSession):
                link.session.links.pop(table.match_id, None)  # a long-lived session keeps only live matches
        if not seats:
            self._bot_seats.pop(bot, None)
        self._presence_bump()


def _room(session: GrpcSession) -> bool:
    """Whether a registered bot's session may take another match."""
    return sum(1 for link in session.links.values() if not link.table.over) < session.max_concurrent


@asynccontextmanager
async def open_referee(
    host: str = "127.0.0.1", port: int = 0, replay_dir: Path | None = None, limits: Limits | None = None, *,
    operator_token: str | None = None, public_watch: bool = False, tls: ServerTLS | None = None,
    bot_directory: BotDirectory | None = None, operator_services: Sequence[Callable[[grpc.aio.Server], str]] = (),
) -> AsyncIterator[Referee]:
    """Start a referee with its gRPC server (inside :func:`referee.run`); yields it with
    ``.address`` and ``.operator_token`` set (without ``operator_token``, a fresh one kept in
    memory only). ``public_watch`` opens WatchMatch to anyone; ``tls`` serves TLS;
    ``bot_directory`` accepts registered bots' tokens (sessions that wait for the matches that
    ``MatchSpec.seat_bots`` seat them in; :meth:`Referee.presence` says who is online). Each of
    ``operator_services`` adds a service of the caller's to the server and returns its full name:
    it is listed by health and reflection, and every call of it needs the operator token. A port
    that cannot be bound raises ``ListenError``. On exit, running matches are cancelled and the
    server stops."""
    token = operator_token or new_operator_token()
    limits = limits or Limits()
    auth = OperatorAuth(token, public_watch=public_watch)
    server = grpc.aio.server(options=server_options(limits), interceptors=[auth])
    bound = bind(server, host, port, tls)  # before anything starts: a busy port is one clear error
    async with trio.open_nursery() as nursery:
        referee = Referee(nursery, replay_dir, limits, bot_directory)
        referee.operator_token = token
        add_bot_service(BotServicer(referee), server)
        referee_pb2_grpc.add_RefereeServiceServicer_to_server(RefereeServicer(referee), server)
        health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        added = [add(server) for add in operator_services]
        for name in added:
            auth.guard(name)
        names = (
            bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name,
            referee_pb2.DESCRIPTOR.services_by_name["RefereeService"].full_name,
            *added,
            health.SERVICE_NAME,
            reflection.SERVICE_NAME,
        )
        reflection.enable_server_reflection(names, server)
        await aio(server.start())
        for name in ("", *names[: 2 + len(added)]):
            await aio(health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING))
        referee.address = f"{host}:{bound}"
        log.info("referee_listening", address=referee.address)
        try:
            yield referee
        finally:
            referee.events.close()
            with trio.CancelScope(shield=True):
                await aio(server.stop(grace=0.2))
            nursery.cancel_scope.cancel()


def tune_gc_for_server() -> None:
    """Tune the garbage collector for a long-lived server process: the objects that exist now
    (the started server's) are frozen, so cyclic scans skip them, and the young generation is
    collected less often (full collections of many matches paused every match 50-200 ms).
    Process-wide, so only a server's entry point calls it (``referee serve``, ``arena serve``),
    once its server is up; :func:`open_referee` and :func:`referee.play_match` do not."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


async def serve_referee(
    host: str = "127.0.0.1", port: int = 50051, replay_dir: Path | None = None, *, operator_token: str | None = None,
    limits: Limits | None = None,
) -> None:
    """Run a standalone referee until cancelled (a server entry point: tunes the GC); its
    operator service takes ``operator_token`` (default: a fresh one, then only in-process);
    ``limits`` are its bounds (default :class:`Limits`)."""
    async with open_referee(host, port, replay_dir, limits, operator_token=operator_token):
        tune_gc_for_server()
        await trio.sleep_forever()
