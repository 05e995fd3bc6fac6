"""A bot process over gRPC as an opponent of :class:`train_env.single.SingleAgentEnv`
(docs/training.md#a-bot-process-as-the-opponent): the same bots the arena runs, started by the
referee's one launcher (:func:`referee.run_bot`: its own process group, its token in ``GIN_TOKEN``,
``GIN_MATCHES=0`` so that it plays one match per episode on one session), connected over gRPC on
127.0.0.1 to the environment, which serves ``BotService.Play`` for that seat itself: the bot is sent
what the referee would send its seat — ``MatchStarted`` (the rules and the seed's commitment as the
game's wire gives them), ``DealStarted``, ``event``, ``ActionRequest``, ``DealFinished``,
``GameFinished`` built by the game's own wire from the environment's engine — and ``MatchFinished``
when an episode ends. The learner's observations are those of the in-process case (the same engine,
the same requests).

The gRPC server runs on grpcio's threads; the bot's process is run by trio in a thread of its own.
Every process is ended by :meth:`BotSeats.close`, also when the environment is collected or the
interpreter exits.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import secrets
import shlex
import threading
import time
import weakref
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
import trio

import referee
from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2

CONNECT_S = 240.0
"""How long a started bot may take to connect and say hello (a loaded machine starts Python slowly)."""
ANSWER_S = 600.0
"""How long one answer may take before the bot is called hung (an environment has no time control:
this only bounds a hang)."""
EXIT_GRACE_S = 1.0
"""How long a bot may take to exit by itself when the environment closes, before its group is ended."""
EXIT_REPORT_S = 10.0
"""How long a bot whose session ended is waited for to exit, so that the error names its exit code."""
POLL_S = 0.05
"""How often a wait looks again whether the bot's process or stream ended."""
OUTBOX = 4096
"""Messages queued for one bot at most (a decision's few are sent before its answer is awaited)."""
PROTOCOL_VERSION = 2
"""The protocol version the environment speaks."""


class BotProcessError(RuntimeError):
    """A bot process that could not start, did not connect, crashed, hung or answered wrongly."""


@dataclass(frozen=True, slots=True)
class BotProcess:
    """An opponent played by a bot process over gRPC: the command the arena would run for it."""

    command: tuple[str, ...]
    """The program and its arguments, ``{python}`` for this interpreter (as in manifests), e.g.
    ``("{python}", "-m", "sample_bots.greedy_bot")``; ``--referee`` and ``--name`` are appended."""
    name: str = "opponent"
    """The name it is started with (``--name``, ``GIN_BOT_NAME``) and its log lines show."""
    log_path: str = ""
    """A file the process's output is appended to; empty: dropped."""
    connect_s: float = CONNECT_S
    """How long it may take to connect."""
    answer_s: float = ANSWER_S
    """How long one answer may take."""


_CLOSED = object()


class _Link:
    """One seat's session: what goes to the bot and what comes back."""

    def __init__(self, spec: BotProcess, seat: int) -> None:
        self.spec = spec
        self.seat = seat
        self.token = secrets.token_urlsafe(24)
        self.outbox: queue.Queue[Any] = queue.Queue(OUTBOX)
        self.inbox: queue.Queue[Any] = queue.Queue(OUTBOX)
        self.hello: bot_pb2.Hello | None = None
        self.said_hello = threading.Event()
        self.stream_ended = threading.Event()
        self.exited = threading.Event()
        self.exit_code: int | None = None
        self.start_error = ""
        self.closing = threading.Event()
        self.until: trio.Event | None = None
        self.trio_token: trio.lowlevel.TrioToken | None = None
        self.thread: threading.Thread | None = None

    def send(self, match_id: str, **kind: Any) -> None:
        self.outbox.put(bot_pb2.RefereeMessage(match_id=match_id, **kind), timeout=self.spec.answer_s)

    def gone(self) -> str:
        """Why the bot can no longer answer (``""``: it still can)."""
        if self.start_error:
            return f"could not be started: {self.start_error}"
        if self.exited.is_set():
            return f"{_exit_words(self.exit_code)}"
        if self.stream_ended.is_set():
            return "closed its gRPC session"
        return ""


def _exit_words(code: int | None) -> str:
    """How a bot's process ended, in words."""
    if code is None:
        return "ended"
    if code < 0:
        return f"was killed by signal {-code}"
    return f"exited with code {code}"


class _Servicer(bot_pb2_grpc.BotServiceServicer):
    def __init__(self, links: dict[str, _Link]) -> None:
        self.links = links

    def Play(self, requests: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext) -> Iterator[Any]:
        first = next(requests, None)
        link = self.links.get(first.hello.token) if first is not None and first.HasField("hello") else None
        if link is None or link.hello is not None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token, or its seat is already connected")
            return
        assert first is not None
        link.hello = first.hello
        threading.Thread(target=_read, args=(link, requests), daemon=True).start()
        yield bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(
            protocol_version=PROTOCOL_VERSION, session_id=secrets.token_hex(4), referee_info="gin-arena train_env"))
        link.said_hello.set()
        while context.is_active() and not link.closing.is_set():
            with contextlib.suppress(queue.Empty):
                msg = link.outbox.get(timeout=POLL_S)
                if msg is _CLOSED:
                    return
                yield msg


def _read(link: _Link, requests: Iterator[bot_pb2.BotMessage]) -> None:
    """Hand the bot's answers to the environment until its stream ends."""
    try:
        for msg in requests:
            kind = msg.WhichOneof("kind")
            if kind == "ping":
                link.outbox.put(bot_pb2.RefereeMessage(pong=bot_pb2.Pong(
                    ping_id=msg.ping.ping_id, referee_time_ms=int(time.time() * 1000))))
            elif kind in ("action", "resign"):
                link.inbox.put(msg)
    except grpc.RpcError:
        pass
    finally:
        link.stream_ended.set()


def _launch(link: _Link, address: str) -> None:
    """Run the bot's process until the environment closes (trio, in this thread)."""
    spec = link.spec
    launch = referee.BotLaunch(command=spec.command, name=spec.name, log_path=spec.log_path,
                               token_in_argv=False, env=(("GIN_MATCHES", "0"),))

    async def run() -> None:
        link.until = trio.Event()
        link.trio_token = trio.lowlevel.current_trio_token()
        if link.closing.is_set():  # closed while this thread was starting
            link.until.set()
        link.exit_code = await referee.run_bot(launch, address, link.token, link.until,
                                               label=f"train-env seat {link.seat}", exit_grace_s=EXIT_GRACE_S)

    try:
        trio.run(run, strict_exception_groups=True)
    except* OSError as failed:
        link.start_error = "; ".join(str(e) for e in failed.exceptions)
    finally:
        link.exited.set()


_OPEN: weakref.WeakSet[BotSeats] = weakref.WeakSet()
"""The bot seats not yet closed."""


def _close_all() -> None:
    for seats in list(_OPEN):
        seats.close()


# An environment left open when the interpreter exits: its seats are closed before the interpreter
# joins the gRPC server's worker threads (those that serve a session never end by themselves), by
# the hook concurrent.futures itself uses (``atexit`` runs only after that join).
getattr(threading, "_register_atexit", atexit.register)(_close_all)


class BotSeats:
    """The bot processes of an environment's gRPC seats and the server they connect to."""

    def __init__(self, specs: dict[int, BotProcess]) -> None:
        _OPEN.add(self)
        self.links = {seat: _Link(spec, seat) for seat, spec in specs.items()}
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2 * len(self.links) + 1))
        bot_pb2_grpc.add_BotServiceServicer_to_server(_Servicer({k.token: k for k in self.links.values()}),
                                                      self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.address = f"127.0.0.1:{port}"
        """Where the bots connect."""
        self._finalizer = weakref.finalize(self, _shutdown, self._server, list(self.links.values()))
        for link in self.links.values():
            link.thread = threading.Thread(target=_launch, args=(link, self.address), daemon=True,
                                           name=f"train-env bot seat {link.seat}")
            link.thread.start()
        for link in self.links.values():
            self._wait(link, link.said_hello, "connect", link.spec.connect_s)

    def _wait(self, link: _Link, ready: threading.Event, what: str, bound_s: float) -> None:
        deadline = time.monotonic() + bound_s
        while not ready.wait(POLL_S):
            why = link.gone()
            if why:
                self.close()
                raise BotProcessError(f"the bot process of seat {link.seat} ({shlex.join(link.spec.command)}) "
                                      f"{why} before it could {what}")
            if time.monotonic() > deadline:
                self.close()
                raise BotProcessError(f"the bot process of seat {link.seat} did not {what} within {bound_s:g} s")

    def check_game(self, game: str) -> None:
        """``BotProcessError`` (the bots ended) if a bot did not declare ``game`` in its hello (as
        the referee refuses to seat it: ``ERROR_CODE_UNSUPPORTED_GAME``; none declared: gin)."""
        for link in self.links.values():
            games = list(link.hello.games) if link.hello is not None else []
            if game not in (games or ["gin"]):
                self.close()
                raise BotProcessError(f"the bot of seat {link.seat} ({shlex.join(link.spec.command)}) does not "
                                      f"play {game}: its hello declares {', '.join(games) or 'gin'}")

    def send(self, seat: int, match_id: str, **kind: Any) -> None:
        """Send the seat's bot one message about ``match_id``."""
        self.links[seat].send(match_id, **kind)

    def wants_events(self, seat: int) -> bool:
        """Whether the seat's bot asked for ``event`` messages (``Hello.skip_event_messages`` off)."""
        hello = self.links[seat].hello
        return hello is None or not hello.skip_event_messages

    def ask(self, seat: int, match_id: str, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        """Send the request; the bot's answer (``BotProcessError`` if it cannot answer)."""
        link = self.links[seat]
        link.send(match_id, action_request=request)
        deadline = time.monotonic() + link.spec.answer_s
        while True:
            try:
                msg = link.inbox.get(timeout=POLL_S)
            except queue.Empty:
                if link.stream_ended.is_set():
                    link.exited.wait(EXIT_REPORT_S)
                why = link.gone()
                if why or time.monotonic() > deadline:
                    raise BotProcessError(f"the bot process of seat {seat} ({shlex.join(link.spec.command)}) "
                                          f"{why or f'did not answer within {link.spec.answer_s:g} s'} "
                                          f"during a match (its log: {link.spec.log_path or 'not kept'})") from None
                continue
            if msg.HasField("resign"):
                raise BotProcessError(f"the bot of seat {seat} resigned: {msg.resign.reason}")
            if msg.action.match_id == match_id and msg.action.request_id == request.request_id:
                action: common_pb2.Action = msg.action.action
                return action

    def close(self) -> None:
        """End every bot process (its whole group) and the server."""
        self._finalizer()


def _shutdown(server: grpc.Server, links: list[_Link]) -> None:
    for link in links:
        link.closing.set()
        if link.until is not None and link.trio_token is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(link.until.set, trio_token=link.trio_token)
        with contextlib.suppress(queue.Full):
            link.outbox.put_nowait(_CLOSED)
    for link in links:
        if link.thread is not None:
            link.thread.join()
    server.stop(grace=None)
