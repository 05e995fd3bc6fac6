"""The bot session: connect to the referee, play, reconnect, stop.

A bot is one of:

- a function ``decide(request) -> Action | str`` (stateless: the request holds everything);
- an instance of :class:`Bot` (one object for every match of the session; the hooks get
  the ``match_id``);
- a subclass of :class:`Bot` (the class itself): one new instance per match, so that
  instance attributes are per-match state.

Every hook and ``decide`` runs on one worker thread, one at a time, in the order the
messages arrived; the gRPC stream keeps being read meanwhile (so a match that ends while
the bot thinks is still noticed).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import random
import signal
import sys
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

import grpc
import grpc.aio

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2

from . import channels
from .games import Decision, action_text, is_legal, legal_texts, to_action

log = logging.getLogger("gin_bot")

PROTOCOL_VERSION = 2
DEFAULT_REFEREE = "localhost:50051"

EXIT_OK = 0
"""The requested matches were played (or the bot was stopped by SIGINT/SIGTERM)."""
EXIT_FAILED = 1
"""The session failed: could not connect, refused (bad token), gave up reconnecting,
or the bot aborted it (:class:`SessionAbort`)."""
EXIT_USAGE = 2
"""Bad command line (argparse's convention)."""

OnError = Literal["fault", "fallback"]
"""What an exception in the bot's own code does (``BotConfig.on_error``, ``--on-error``)."""
ON_ERROR_CHOICES: tuple[OnError, ...] = get_args(OnError)
"""Every ``on_error`` value."""
REASON_CHARS = 256
"""The longest reason the kit sends in a ``Resign`` (the referee's ``text_length`` limit, by
default the same, bounds it again)."""
GOODBYE = "goodbye"
"""How a ``Resign.reason`` starts when the bot is being stopped (SIGTERM), not failing: the
referee records the fault as ``said goodbye`` and a hosted ladder does not count it as a crash."""
GOODBYE_WAIT_S = 3.0
"""How long a SIGTERM'd bot gives its sessions to say goodbye before it stops anyway."""

_LIVE: weakref.WeakSet[_Session] = weakref.WeakSet()
"""The sessions running in this process (a SIGTERM makes each say goodbye)."""

# Status codes after which connecting again may help.
_RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL, grpc.StatusCode.ABORTED, grpc.StatusCode.CANCELLED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
# Refusals that may only mean "your previous connection is not gone yet" after a drop.
_RETRYABLE_AFTER_WELCOME = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.ALREADY_EXISTS}


class SessionAbort(Exception):
    """Raise this from a hook or ``decide`` to end the session at once, without answering
    and without reconnecting (the referee then applies its fault policy)."""


def exception_line(e: BaseException) -> str:
    """The last line of the traceback Python would print for ``e`` (``ValueError: bad card``):
    its type, module-qualified unless built in, and the first line of its message."""
    kind = type(e)
    name = kind.__qualname__
    if kind.__module__ not in ("builtins", "__main__"):
        name = f"{kind.__module__}.{name}"
    text = str(e).strip().splitlines()
    return (f"{name}: {text[0]}" if text else name)[:REASON_CHARS]


class BotCodeError(Exception):
    """The bot's own code raised (``decide`` or a hook): under ``on_error="fault"`` the kit
    resigns the match with :attr:`reason` and ends the session."""

    def __init__(self, match_id: str, reason: str, *, deliberate: bool = False) -> None:
        super().__init__(reason)
        self.match_id = match_id
        """The match whose hook or decision raised ("" for a session-level hook)."""
        self.reason = reason
        """The exception's last line, as sent in ``Resign.reason``."""
        self.deliberate = deliberate
        """The bot chose to resign (e.g. a stdio program's ``resign`` line): it resigns under
        ``on_error="fallback"`` too."""


class Bot:
    """Base class for bots with hooks. Override ``decide``; the other hooks are optional."""

    name = "bot"
    """The default bot name (``--name`` / ``GIN_BOT_NAME`` override it)."""
    games: tuple[str, ...] = ()
    """The games this bot plays, declared in Hello by their names (``MatchStarted.game``);
    empty: the referee's default game. The referee seats a bot only in matches of a game it
    declared (``--games`` overrides it)."""
    presets: tuple[str, ...] = ()
    """The presets this bot plays, each ``"GAME/PRESET"`` (``Hello.presets``: a hosted arena pairs
    it only in those); empty: every preset of its games (``--presets`` overrides it)."""

    def decide(self, request: bot_pb2.ActionRequest) -> Decision:
        """Choose one of ``request.legal_actions``."""
        raise NotImplementedError

    def decide_in_match(self, match_id: str, request: bot_pb2.ActionRequest) -> Decision:
        """What the kit calls: override this instead of ``decide`` if you need the match id."""
        return self.decide(request)

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        """A match begins (called once per match, also across reconnects)."""

    def on_deal_started(self, match_id: str, deal: bot_pb2.DealStarted) -> None:
        """A deal begins."""

    def on_event(self, match_id: str, event: common_pb2.Event) -> None:
        """A seat acted (this bot included)."""

    def on_action_rejected(self, match_id: str, rejected: bot_pb2.ActionRejected) -> None:
        """Development option: an illegal answer was refused; a new request follows."""

    def on_deal_finished(self, match_id: str, result: common_pb2.DealResult) -> None:
        """A deal is over (hands revealed)."""

    def on_game_finished(self, match_id: str, result: common_pb2.GameResult) -> None:
        """A game is over."""

    def on_match_finished(self, match_id: str, result: common_pb2.MatchResult) -> None:
        """A match is over."""

    def on_error(self, match_id: str, error: bot_pb2.ErrorReport) -> None:
        """The referee reported an error (already logged)."""

    def close(self) -> None:
        """The session is over. Called once, from the event loop's thread: it may run while
        a hook is still busy on the worker thread (e.g. waiting for a subprocess)."""


class _FunctionBot(Bot):
    def __init__(self, fn: Callable[[bot_pb2.ActionRequest], Decision]) -> None:
        self._fn = fn
        self.name = getattr(fn, "__name__", "bot")

    def decide(self, request: bot_pb2.ActionRequest) -> Decision:
        return self._fn(request)


BotLike = Bot | type[Bot] | Callable[[bot_pb2.ActionRequest], Decision]
"""Anything :func:`run_bot` and :func:`play` accept."""


@dataclass
class BotConfig:
    """How to connect and how long to play."""

    token: str
    """The seat token (from CreateMatch) or a registered bot's token."""
    referee: str = DEFAULT_REFEREE
    """The referee's ``host:port``."""
    name: str = "bot"
    """The bot's name, shown to the opponent and in results."""
    matches: int = 1
    """Stop after this many matches have finished; 0 = play until stopped: the session waits
    for matches (a Welcome that lists none is not the end), and a lost connection is retried
    for as long as it takes (``retries`` bounds only refusals of the token after a welcome)."""
    concurrent: int = 1
    """Matches the bot plays at once on the session (``Hello.max_concurrent_matches``)."""
    games: tuple[str, ...] | None = None
    """The games declared in Hello; ``None``: the bot's own (:attr:`Bot.games`)."""
    presets: tuple[str, ...] | None = None
    """The presets declared in Hello (``"GAME/PRESET"``); ``None``: the bot's own
    (:attr:`Bot.presets`)."""
    tls: bool = False
    """Connect with TLS instead of plaintext (the referee's certificate checked against ``ca``,
    or the system's root certificates)."""
    ca: str = ""
    """A PEM file of CA certificates to trust (implies ``tls``); empty: the system's roots."""
    cert: str = ""
    """The bot's own certificate chain (PEM), for a referee that asks for one (mutual TLS)."""
    key: str = ""
    """The private key of ``cert`` (PEM)."""
    retries: int = 10
    """Connection attempts in a row that may fail before giving up (with ``matches=0``, only
    those the referee refuses the token in, after a welcome: a lost connection is retried
    until stopped)."""
    backoff_s: float = 0.25
    """First wait before reconnecting; doubles on each failure up to ``backoff_max_s`` (kept
    short: the referee holds a dropped seat for its reconnect grace, 5 s by default)."""
    backoff_max_s: float = 2.0
    """Longest wait between reconnection attempts while a match is in progress."""
    idle_backoff_max_s: float = 30.0
    """Longest wait between reconnection attempts while no match is in progress (a session of
    ``matches=0`` waiting for a referee that is down)."""
    nonce: bytes = field(default_factory=lambda: os.urandom(16))
    """Randomness for the shuffle's commit–reveal; ``b""`` sends none."""
    on_error: OnError = "fault"
    """What an exception in ``decide`` or a hook does. ``"fault"`` (the default): the kit sends
    the referee a ``Resign`` with the exception's last line, which the referee records as the
    seat's ``bot_error`` fault (its fault policy applies), and the session ends (exit code 1);
    an illegal action is sent as it is (the referee's ``illegal_action`` fault). ``"fallback"``:
    the kit logs it and answers the first legal action instead, marked
    ``ActionResponse.fallback`` so that the referee counts it (results show the fallbacks per
    bot); an exception in a hook is logged and play goes on."""
    client_info: str = field(
        default_factory=lambda: (
            f"gin-arena python kit; python {platform.python_version()}; grpcio {grpc.__version__}"
        )
    )
    """Free text about the client, sent in Hello."""
    event_messages: bool | None = None
    """Whether to receive the referee's ``event`` messages (``Bot.on_event``). ``None``: only
    if the bot overrides ``on_event``; otherwise the session asks for none
    (``Hello.skip_event_messages``) — every event is still in each request's state, and the
    referee sends one message per decision instead of three."""


@dataclass
class SessionResult:
    """How a session ended."""

    exit_code: int
    """``EXIT_OK`` or ``EXIT_FAILED``: what a bot process should exit with."""
    reason: str
    """Why the session ended, for humans."""
    results: list[common_pb2.MatchResult] = field(default_factory=list)
    """The results of the matches that finished, in order."""

    @property
    def ok(self) -> bool:
        """Whether the session ended as asked."""
        return self.exit_code == EXIT_OK


def channel_credentials(config: BotConfig) -> grpc.ChannelCredentials | None:
    """The TLS credentials ``config`` asks for (``tls``, ``ca``, ``cert``/``key``); ``None``:
    plaintext."""
    if not (config.tls or config.ca or config.cert):
        return None
    roots = Path(config.ca).read_bytes() if config.ca else None
    key = Path(config.key).read_bytes() if config.key else None
    chain = Path(config.cert).read_bytes() if config.cert else None
    return grpc.ssl_channel_credentials(roots, key, chain)


def _enum_name(enum: Any, value: int) -> str:
    """An enum value's name; the number if this client does not know it (a newer referee)."""
    try:
        return str(enum.Name(value))
    except ValueError:
        return str(value)


class _Ended(Exception):
    """The current connection ended; ``retry`` says whether connecting again may help."""

    def __init__(self, reason: str, *, retry: bool, code: grpc.StatusCode | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry
        self.code = code


_T = TypeVar("_T")


def _overrides(bot: Bot, hook: str) -> bool:
    """Whether ``bot`` has its own ``hook`` (its class's or set on the instance): the base
    class's hooks do nothing, and queueing one on the worker thread would cost two thread
    hand-overs and trips through the event loop for nothing."""
    return hook in getattr(bot, "__dict__", ()) or getattr(type(bot), hook, None) is not getattr(Bot, hook)


class _Session:
    def __init__(self, bot: BotLike, config: BotConfig) -> None:
        self.config = config
        self._shared: Bot | None = None
        self._factory: type[Bot] | None = None
        if isinstance(bot, type):
            self._factory = bot
        elif isinstance(bot, Bot):
            self._shared = bot
        else:
            self._shared = _FunctionBot(bot)
        self._bots: dict[str, Bot] = {}  # per match, while it runs
        self._all_bots: list[Bot] = [self._shared] if self._shared else []
        self._started: set[str] = set()
        self._finished: set[str] = set()
        self.results: list[common_pb2.MatchResult] = []
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot")
        self._pending: set[asyncio.Future[Any]] = set()
        self._answers: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self._abort: str | None = None
        self._goodbye: str | None = None
        self._done = False
        self._welcomed_ever = False
        self._call: grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.RefereeMessage] | None = None
        self._write_lock = asyncio.Lock()

    # ----- running bot code on the worker thread -----
    def _bot_for(self, match_id: str) -> Bot:
        if self._shared is not None:
            return self._shared
        bot = self._bots.get(match_id)
        if bot is None:
            assert self._factory is not None
            bot = self._bots[match_id] = self._factory()
            self._all_bots.append(bot)
        return bot

    def _submit(self, fn: Callable[[], _T]) -> asyncio.Future[_T]:
        fut = asyncio.get_running_loop().run_in_executor(self._worker, fn)
        self._pending.add(fut)
        fut.add_done_callback(self._check_hook)  # (one callback: each is a trip through the loop)
        return fut

    def _check_hook(self, fut: asyncio.Future[Any]) -> None:
        self._pending.discard(fut)
        if fut.cancelled():
            return
        exc = fut.exception()
        if isinstance(exc, SessionAbort):
            self._request_abort(f"the bot aborted the session: {exc}")
        elif isinstance(exc, BotCodeError):
            self.give_up(exc)
        elif exc is not None:
            log.error("a bot hook raised %r", exc, exc_info=exc)

    def _hook(self, match_id: str, name: str, *args: Any) -> None:
        if self._factory is not None and (not match_id or match_id in self._finished):
            return  # per-match bots: no instance for session-level or late messages
        bot = self._bot_for(match_id)
        if _overrides(bot, name):
            self._submit(lambda: self._run_hook(bot, match_id, name, *args))

    def _run_hook(self, bot: Bot, match_id: str, name: str, *args: Any) -> None:
        """On the worker thread: a hook; what it raises is the bot's error (``on_error``)."""
        try:
            getattr(bot, name)(match_id, *args)
        except (SessionAbort, BotCodeError):
            raise
        except Exception as e:
            if self.config.on_error == "fallback":
                log.exception("%s() raised %r; playing on (--on-error fallback)", name, e)
                return
            log.exception("%s() raised %r; resigning", name, e)
            raise BotCodeError(match_id, f"{name}: {exception_line(e)}") from e

    def give_up(self, error: BotCodeError) -> None:
        """The bot's code failed: resign the match concerned and every other match in progress
        (``Resign``), then end the session (exit code 1). Once; later calls do nothing."""
        if self._abort is not None:
            return
        where = f" in match {error.match_id}" if error.match_id else ""
        self._abort = f"the bot's code raised{where}: {error.reason}"
        log.error("%s; resigning and ending the session", self._abort)
        call = self._call
        in_progress = sorted(self._started - self._finished - {error.match_id})
        resigns = [(error.match_id, error.reason)] if error.match_id else []
        resigns += [(mid, f"the session ended: {error.reason}{where}") for mid in in_progress]

        async def send_then_stop() -> None:
            try:
                if call is not None and call is self._call and not call.done():
                    async with self._write_lock:
                        for mid, reason in resigns:
                            await call.write(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id=mid, reason=reason)))
            except Exception as e:  # the stream closed meanwhile: the referee sees a disconnect
                log.warning("could not send the resignation: %r", e)
            finally:
                self._stop.set()

        task = asyncio.ensure_future(send_then_stop())
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    def say_goodbye(self, reason: str) -> bool:
        """The bot is being stopped (SIGTERM): resign every match in progress with a goodbye
        (``Resign.reason`` starting with :data:`GOODBYE`: the referee records that the bot was
        stopped, not that it crashed, and a hosted ladder does not count it toward a
        suspension), then close the stream cleanly and end the session (exit code 0). Returns
        whether there was a connection to say it on (if not, the caller just stops)."""
        call = self._call
        if self._goodbye is not None or self._abort is not None:
            return False
        self._goodbye = reason
        if call is None or call.done():
            self._stop.set()
            return False
        in_progress = sorted(self._started - self._finished)

        async def send_then_stop() -> None:
            try:
                async with self._write_lock:
                    for mid in in_progress:
                        await call.write(bot_pb2.BotMessage(resign=bot_pb2.Resign(
                            match_id=mid, reason=f"{GOODBYE}: {reason}")))
            except Exception as e:  # the stream closed meanwhile
                log.warning("could not say goodbye: %r", e)
            finally:
                self._stop.set()  # the connection closes its side of the stream (a clean close)

        task = asyncio.ensure_future(send_then_stop())
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)
        return True

    def _request_abort(self, reason: str) -> None:
        if self._abort is None:
            self._abort = reason
            log.error("%s", reason)
        self._stop.set()

    def _decide(self, bot: Bot, match_id: str, request: bot_pb2.ActionRequest) -> tuple[common_pb2.Action, bool]:
        """On the worker thread: the bot's answer and whether it is the kit's fallback (the
        bot's code failed and ``on_error`` is ``"fallback"``); raises :class:`BotCodeError`
        if it failed under ``"fault"``."""
        fallback = request.legal_actions[0] if request.legal_actions else common_pb2.Action()
        try:
            chosen = to_action(bot.decide_in_match(match_id, request), request)
        except SessionAbort:
            raise
        except Exception as e:
            if self.config.on_error != "fallback" or (isinstance(e, BotCodeError) and e.deliberate):
                if isinstance(e, BotCodeError):  # the bot's own account (the stdio bridge's)
                    log.error("%s; resigning", e.reason)
                    raise
                log.exception("decide() raised %r; resigning", e)
                raise BotCodeError(match_id, exception_line(e)) from e
            log.exception("decide() raised %r; answering %s instead (a fallback, counted by the referee)",
                          e, action_text(fallback))
            return fallback, True
        if self.config.on_error == "fallback" and not is_legal(request, chosen):
            log.error(
                "decide() chose %r, which is not legal (legal: %s); answering %s instead (a fallback)",
                action_text(chosen), ", ".join(legal_texts(request)), action_text(fallback),
            )
            return fallback, True
        if log.isEnabledFor(logging.DEBUG):  # (the text costs more than the check, every decision)
            log.debug("match %s request %d: %s", match_id, request.request_id, action_text(chosen))
        return chosen, False

    def _ask(
        self,
        call: grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
        match_id: str,
        request: bot_pb2.ActionRequest,
    ) -> None:
        """Queue ``decide`` now (so it runs in message order) and answer when it is done."""
        bot = self._bot_for(match_id)
        decision = self._submit(lambda: self._decide(bot, match_id, request))
        task = asyncio.ensure_future(self._answer(call, match_id, request, decision))
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def _answer(
        self,
        call: grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
        match_id: str,
        request: bot_pb2.ActionRequest,
        decision: asyncio.Future[tuple[common_pb2.Action, bool]],
    ) -> None:
        try:
            chosen, fallback = await decision
        except Exception:
            return  # already reported by _check_hook (abort, or a resignation)
        if match_id in self._finished:
            return
        msg = bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
            match_id=match_id, request_id=request.request_id, action=chosen, fallback=fallback))
        async with self._write_lock:
            if call is not self._call or call.done():
                log.debug("not answering request %d: its connection is gone", request.request_id)
                return
            try:
                await call.write(msg)
            except Exception as e:  # the stream closed meanwhile; the referee will ask again
                log.debug("could not send the answer to request %d: %r", request.request_id, e)

    # ----- one connection -----
    def _channel(self) -> AbstractAsyncContextManager[grpc.aio.Channel]:
        """A channel of the loop's pool (one connection per ``STREAMS_PER_CHANNEL`` sessions)."""
        c = self.config
        creds = channel_credentials(c)
        identity = ("tls", c.ca, c.cert, c.key) if creds is not None else ()
        return channels.pool().session_channel(c.referee, creds, identity)

    def _wants_events(self) -> bool:
        if self.config.event_messages is not None:
            return self.config.event_messages
        cls = self._factory if self._factory is not None else type(self._shared)
        return getattr(cls, "on_event", Bot.on_event) is not Bot.on_event

    def _hello(self) -> bot_pb2.BotMessage:
        c = self.config
        return bot_pb2.BotMessage(hello=bot_pb2.Hello(
            bot_name=c.name, token=c.token, protocol_version=PROTOCOL_VERSION, nonce=c.nonce,
            max_concurrent_matches=max(1, c.concurrent), client_info=c.client_info,
            skip_event_messages=not self._wants_events(), games=list(self._declared("games")),
            presets=list(self._declared("presets")),
        ))

    def _declared(self, what: str) -> tuple[str, ...]:
        """The games or presets the hello declares: the config's, else the bot's own."""
        given: tuple[str, ...] | None = getattr(self.config, what)
        if given is not None:
            return given
        bot = self._factory if self._factory is not None else self._shared
        return tuple(getattr(bot, what, ()))

    async def _connect_once(self) -> bool:
        """Play on one connection. Returns whether a Welcome was received; raises _Ended."""
        welcomed = False
        async with self._channel() as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            call = stub.Play(None)  # we write with call.write()
            self._call = call
            reader: asyncio.Task[None] | None = None
            stopper = asyncio.ensure_future(self._stop.wait())
            try:
                await call.write(self._hello())

                async def read_all() -> None:
                    nonlocal welcomed
                    async for msg in call:
                        if msg.WhichOneof("kind") == "welcome":
                            welcomed = True
                        self._handle(call, msg)
                        if self._done:
                            return

                reader = asyncio.ensure_future(read_all())
                await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if reader.done():
                    reader.result()  # raises the RPC error, if any
                if self._done or self._stop.is_set():
                    await self._close_politely(call)
                    return welcomed
                code = await call.code()
                details = await call.details()
                if code == grpc.StatusCode.OK:
                    raise _Ended("the referee closed the session", retry=self._want_more())
                raise self._classify(code, details, welcomed)
            except grpc.aio.AioRpcError as e:
                raise self._classify(e.code(), e.details() or "", welcomed) from None
            finally:
                stopper.cancel()
                if reader is not None and not reader.done():
                    reader.cancel()
                if not call.done():
                    call.cancel()
                self._call = None

    def _want_more(self) -> bool:
        in_progress = self._started - self._finished
        return bool(in_progress) or self.config.matches == 0

    def _classify(self, code: grpc.StatusCode, details: str, welcomed: bool) -> _Ended:
        retry = code in _RETRYABLE or (
            code in _RETRYABLE_AFTER_WELCOME and (welcomed or self._welcomed_ever)
        )
        return _Ended(f"{code.name}: {details}", retry=retry, code=code)

    async def _close_politely(
        self, call: grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.RefereeMessage]
    ) -> None:
        """Half-close our side and give the referee a moment to end the stream."""
        try:
            async with self._write_lock:
                await call.done_writing()
            await asyncio.wait_for(call.code(), timeout=1.0)
        except Exception:  # already closed, or the referee keeps it open: we cancel it
            pass

    # ----- messages -----
    def _handle(
        self,
        call: grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
        msg: bot_pb2.RefereeMessage,
    ) -> None:
        kind = msg.WhichOneof("kind")
        mid = msg.match_id
        if kind == "welcome":
            w = msg.welcome
            self._welcomed_ever = True
            log.info("welcome: session %s, referee %s, protocol %d, matches %s",
                     w.session_id, w.referee_info or "?", w.protocol_version, list(w.match_ids) or "-")
        elif kind == "match_started":
            ms = msg.match_started
            if mid in self._started:
                log.info("match %s resumed (seat %d)", mid, ms.seat)
                return
            self._started.add(mid)
            log.info("match %s started: game %s, seat %d, players %s, time %s",
                     mid, ms.game_name or "?", ms.seat, list(ms.player_names), ms.time_control.text)
            self._hook(mid, "on_match_started", ms)
        elif kind == "deal_started":
            self._hook(mid, "on_deal_started", msg.deal_started)
        elif kind == "event":
            self._hook(mid, "on_event", msg.event)
        elif kind == "action_request":
            self._ask(call, mid, msg.action_request)
        elif kind == "action_rejected":
            rj = msg.action_rejected
            log.warning("match %s: action %s refused: %s", mid, action_text(rj.action), rj.reason)
            self._hook(mid, "on_action_rejected", rj)
        elif kind == "deal_finished":
            r = msg.deal_finished.result
            log.info("match %s game %d deal %d: winner %d, scores %s", mid, r.game_number,
                     r.deal_number, r.winner, list(r.scores_after))
            self._hook(mid, "on_deal_finished", r)
        elif kind == "game_finished":
            self._hook(mid, "on_game_finished", msg.game_finished.result)
        elif kind == "match_finished":
            self._match_finished(mid, msg.match_finished.result)
        elif kind == "error":
            e = msg.error
            log.log(logging.ERROR if e.fatal else logging.WARNING, "referee error%s: %s %s%s",
                    f" in match {mid}" if mid else "", _enum_name(bot_pb2.ErrorCode, e.code), e.message,
                    " (fatal)" if e.fatal else "")
            self._hook(mid, "on_error", e)
        elif kind == "pong":
            log.debug("pong %d", msg.pong.ping_id)
        else:
            log.debug("ignoring a message of an unknown kind (%s)", kind)

    def _match_finished(self, mid: str, result: common_pb2.MatchResult) -> None:
        if mid in self._finished:
            return
        self._finished.add(mid)
        self._started.add(mid)
        self.results.append(result)
        log.info("match %s finished: winner seat %d (%s), games %s, totals %s%s", mid, result.winner,
                 _enum_name(common_pb2.Termination, result.termination), list(result.games_won),
                 list(result.total_points), f" — {result.detail}" if result.detail else "")
        bot = self._bot_for(mid)
        if _overrides(bot, "on_match_finished"):
            self._submit(lambda: bot.on_match_finished(mid, result))
        self._bots.pop(mid, None)
        if self.config.matches and len(self._finished) >= self.config.matches:
            self._done = True

    # ----- the whole session -----
    async def run(self) -> SessionResult:
        failures = 0
        try:
            while True:
                try:
                    if await self._connect_once():
                        failures = 0
                    if self._abort is not None:
                        return SessionResult(EXIT_FAILED, self._abort, self.results)
                    if self._goodbye is not None:
                        return SessionResult(EXIT_OK, f"said goodbye ({self._goodbye})", self.results)
                    if self._done:
                        n = len(self._finished)
                        return SessionResult(EXIT_OK, f"{n} match{'es' * (n != 1)} finished", self.results)
                    raise _Ended("the connection ended", retry=True)
                except _Ended as e:
                    if self._abort is not None:
                        return SessionResult(EXIT_FAILED, self._abort, self.results)
                    n, want = len(self._finished), self.config.matches
                    if not e.retry:
                        if e.code == grpc.StatusCode.UNAUTHENTICATED:
                            why = f"the referee at {self.config.referee} refused the token ({e.reason})"
                        else:
                            why = e.reason
                        return SessionResult(EXIT_FAILED, f"{why} (after {n} of {want or 'unlimited'} matches)",
                                             self.results)
                    failures += 1
                    forever = want == 0 and e.code not in _RETRYABLE_AFTER_WELCOME
                    if failures > self.config.retries and not forever:
                        return SessionResult(
                            EXIT_FAILED, f"gave up after {failures} failed connections: {e.reason}",
                            self.results,
                        )
                    delay = self._backoff(failures)
                    log.warning("connection to %s ended (%s); reconnecting in %.1f s (attempt %d%s)",
                                self.config.referee, e.reason, delay, failures,
                                " until stopped" if forever else f" of {self.config.retries}")
                    await asyncio.sleep(delay)
        finally:
            await self._shutdown()

    def _backoff(self, failures: int) -> float:
        """The wait before the next attempt: doubling from ``backoff_s``, capped (shorter while a
        match is in progress: its seat is held for the reconnect grace only), jittered ±20%."""
        c = self.config
        cap = c.backoff_max_s if self._started - self._finished else max(c.backoff_max_s, c.idle_backoff_max_s)
        delay: float = min(cap, c.backoff_s * 2.0 ** min(failures - 1, 30))
        return delay * random.uniform(0.8, 1.2)

    async def _shutdown(self) -> None:
        for task in list(self._answers):
            task.cancel()
        pending = set(self._pending)
        if pending:  # let the bot see the last messages (e.g. match_finished)
            await asyncio.wait(pending, timeout=5.0)
        for bot in self._all_bots:
            try:
                bot.close()
            except Exception:
                log.exception("close() raised")
        self._worker.shutdown(wait=False, cancel_futures=True)


def open_session(bot: BotLike, config: BotConfig) -> _Session:
    """A session not yet run: ``await session.run()`` plays it (what :func:`play` does); meanwhile
    ``session.give_up(BotCodeError(match_id, reason))`` resigns its matches and ends it (what the
    stdio bridge does when its program exits)."""
    return _Session(bot, config)


async def play(bot: BotLike, config: BotConfig) -> SessionResult:
    """Play a session to its end (``config.matches`` matches finished, a fatal error, or
    reconnection given up) and return how it ended. Cancel the task to stop early; a SIGTERM
    under :func:`run_until_signal` makes it say goodbye first."""
    session = _Session(bot, config)
    _LIVE.add(session)
    try:
        return await session.run()
    finally:
        _LIVE.discard(session)


# ----- command line -----
def make_parser(default_name: str = "bot", description: str | None = None,
                on_error: OnError = "fault") -> argparse.ArgumentParser:
    """The kit's command line; add your own options to it before :func:`parse_config`.

    Every option can also come from the environment: ``GIN_REFEREE``, ``GIN_TOKEN``,
    ``GIN_BOT_NAME``, ``GIN_MATCHES``, ``GIN_CONCURRENT``, ``GIN_GAMES``, ``GIN_PRESETS``,
    ``GIN_LOG_LEVEL``, ``GIN_TLS`` (1: TLS), ``GIN_CA``,
    ``GIN_TLS_CERT`` and ``GIN_TLS_KEY`` (mutual TLS), ``GIN_ON_ERROR``, ``GIN_IDLE_BACKOFF_MAX``. ``on_error`` is
    ``--on-error``'s default."""
    env = os.environ
    p = argparse.ArgumentParser(description=description or f"Gin Arena bot {default_name!r}")
    p.add_argument("--referee", default=env.get("GIN_REFEREE", DEFAULT_REFEREE), metavar="HOST:PORT",
                   help="the referee's address (env GIN_REFEREE; default %(default)s)")
    p.add_argument("--token", default=env.get("GIN_TOKEN"),
                   help="seat or bot token (env GIN_TOKEN; required)")
    p.add_argument("--name", default=env.get("GIN_BOT_NAME", default_name),
                   help="bot name (env GIN_BOT_NAME; default %(default)s)")
    p.add_argument("--matches", type=int, default=int(env.get("GIN_MATCHES", "1")), metavar="N",
                   help="exit after N matches have finished; 0 = serve until stopped (default %(default)s)")
    p.add_argument("--concurrent", type=int, default=int(env.get("GIN_CONCURRENT", "1")), metavar="N",
                   help="matches to play at once on the session (env GIN_CONCURRENT; default %(default)s)")
    p.add_argument("--games", default=env.get("GIN_GAMES"), metavar="LIST",
                   help="the games the hello declares, comma-separated names (env GIN_GAMES; "
                   "default: the bot's own)")
    p.add_argument("--presets", default=env.get("GIN_PRESETS"), metavar="LIST",
                   help="the presets the hello declares, comma-separated GAME/PRESET "
                   "(env GIN_PRESETS; default: the bot's own, else every preset of its games)")
    p.add_argument("--tls", action="store_true", default=env.get("GIN_TLS", "") in ("1", "true", "yes"),
                   help="connect with TLS (env GIN_TLS=1)")
    p.add_argument("--ca", default=env.get("GIN_CA", ""), metavar="FILE",
                   help="trust the CA certificates in FILE (PEM) for the referee's certificate; implies --tls "
                   "(env GIN_CA; default the system's root certificates)")
    p.add_argument("--tls-cert", default=env.get("GIN_TLS_CERT", ""), metavar="FILE",
                   help="mutual TLS: the bot's certificate (PEM; env GIN_TLS_CERT; implies --tls)")
    p.add_argument("--tls-key", default=env.get("GIN_TLS_KEY", ""), metavar="FILE",
                   help="mutual TLS: the certificate's private key (PEM; env GIN_TLS_KEY)")
    p.add_argument("--retries", type=int, default=10, metavar="N",
                   help="failed connection attempts in a row before giving up (default %(default)s)")
    p.add_argument("--idle-backoff-max", type=float, default=env.get("GIN_IDLE_BACKOFF_MAX", "30"),
                   metavar="S", help="longest wait in seconds between reconnection attempts while no match is in "
                   "progress (a --matches 0 session waiting for a server that is down or restarting; env "
                   "GIN_IDLE_BACKOFF_MAX; default %(default)s)")
    p.add_argument("--no-nonce", action="store_true", help="send no nonce in Hello")
    p.add_argument("--on-error", choices=ON_ERROR_CHOICES, default=env.get("GIN_ON_ERROR", on_error),
                   help="an exception in the bot's code: 'fault' resigns the match with the exception's last "
                   "line and ends the session; 'fallback' answers the first legal action instead, counted by "
                   "the referee (env GIN_ON_ERROR; default %(default)s)")
    p.add_argument("--log-level", default=env.get("GIN_LOG_LEVEL", "INFO"),
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper,
                   help="logging level on stderr (env GIN_LOG_LEVEL; default %(default)s)")
    return p


def parse_config(parser: argparse.ArgumentParser, argv: list[str] | None = None
                 ) -> tuple[BotConfig, argparse.Namespace]:
    """Parse the command line (exits with status 2 on a usage error)."""
    ns = parser.parse_args(argv)
    if not ns.token:
        parser.error("a token is required: --token T or the environment variable GIN_TOKEN")
    if ns.on_error not in ON_ERROR_CHOICES:  # (from the environment: argparse checks only the command line)
        parser.error(f"--on-error must be one of {', '.join(ON_ERROR_CHOICES)}; got {ns.on_error!r}")
    if ns.matches < 0 or ns.concurrent < 1 or ns.retries < 0:
        parser.error("--matches must be >= 0, --concurrent >= 1, --retries >= 0")
    if not ns.idle_backoff_max > 0:  # (also refuses nan)
        parser.error(f"--idle-backoff-max must be > 0 seconds; got {ns.idle_backoff_max}")
    for flag, path in (("--ca", ns.ca), ("--tls-cert", ns.tls_cert), ("--tls-key", ns.tls_key)):
        if path and not os.access(path, os.R_OK):
            parser.error(f"{flag} {path}: cannot read the file")
    if bool(ns.tls_cert) != bool(ns.tls_key):
        parser.error("give both --tls-cert and --tls-key (mutual TLS)")
    presets = _list_option(ns.presets)
    for preset in presets or ():
        game, sep, name = preset.partition("/")
        if not sep or not game or not name:
            parser.error(f"--presets: {preset!r} is not GAME/PRESET")
    config = BotConfig(
        token=ns.token, referee=ns.referee, name=ns.name, matches=ns.matches, concurrent=ns.concurrent,
        tls=ns.tls or bool(ns.ca) or bool(ns.tls_cert), ca=ns.ca, cert=ns.tls_cert, key=ns.tls_key,
        retries=ns.retries, on_error=ns.on_error, games=_list_option(ns.games), presets=presets,
        idle_backoff_max_s=ns.idle_backoff_max,
    )
    if ns.no_nonce:
        config.nonce = b""
    return config, ns


def _list_option(text: str | None) -> tuple[str, ...] | None:
    """A comma-separated option's words (``None``: not given)."""
    if text is None:
        return None
    return tuple(word.strip() for word in text.split(",") if word.strip())


def setup_logging(level: str = "INFO") -> None:
    """Log to stderr with timestamps."""
    logging.basicConfig(
        stream=sys.stderr, level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


async def run_until_signal(main: Coroutine[Any, Any, SessionResult]) -> SessionResult:
    """Run ``main``; SIGINT or SIGTERM stops it and ends with exit code 0. On the first
    SIGTERM the sessions say goodbye (``_Session.say_goodbye``: they resign their matches in
    progress as stopped, not crashed, and close their streams cleanly), given
    :data:`GOODBYE_WAIT_S` to do it; SIGINT, a second signal or a session with no connection
    cancels at once."""
    task = asyncio.ensure_future(main)
    loop = asyncio.get_running_loop()
    installed = []
    signalled: list[int] = []

    def on_signal(sig: int) -> None:
        signalled.append(sig)
        if sig != signal.SIGTERM or len(signalled) > 1:
            task.cancel()
            return
        said = [s.say_goodbye("stopped by SIGTERM") for s in list(_LIVE)]
        if not any(said):
            task.cancel()
            return
        loop.call_later(GOODBYE_WAIT_S, task.cancel)  # (a goodbye that hangs does not keep the bot)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
            pass
    try:
        return await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise
        log.info("stopped by a signal")
        return SessionResult(EXIT_OK, "stopped by a signal")
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def run_bot(
    bot: BotLike,
    name: str | None = None,
    *,
    argv: list[str] | None = None,
    config: BotConfig | None = None,
    log_level: str | None = None,
    on_error: OnError = "fault",
) -> int:
    """Connect the bot to the referee and play until done; returns the process exit code.

    Without ``config``, the command line (``argv``, default ``sys.argv[1:]``) and the
    environment are read (see :func:`make_parser`); ``on_error`` is then the default of
    ``--on-error`` (``"fallback"``: answer the first legal action when the bot's code raises,
    each counted by the referee; ``"fault"``: resign and end the session). Typical use::

        if __name__ == "__main__":
            raise SystemExit(run_bot(decide, name="my-bot"))
    """
    if config is None:
        default_name = name or getattr(bot, "name", None) or "bot"
        config, ns = parse_config(make_parser(default_name, on_error=on_error), argv)
        log_level = log_level or ns.log_level
    setup_logging(log_level or "INFO")
    log.info("%s connecting to %s", config.name, config.referee)
    result = asyncio.run(run_until_signal(play(bot, config)))
    log.log(logging.INFO if result.ok else logging.ERROR, "session over: %s", result.reason)
    return result.exit_code
