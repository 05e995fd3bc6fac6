"""The stdio bridge: play a program that speaks JSON lines on stdin/stdout.

For programs written where no gRPC library is at hand. The bridge connects to the referee as
an ordinary gRPC bot (same options as every kit bot), starts the program, and passes the
session's messages to it, one JSON object per line::

    python -m sample_bots.stdio_bridge --referee HOST:PORT --token T [--name N] -- <command...>
    python -m sample_bots.stdio_bridge --token T -- node sample_bots/stdio/bot.js

The stdio protocol (version 2)
------------------------------
Every line is a protocol v2 message (``proto/gin_arena/v2/bot.proto``) in the proto3 JSON
mapping, exactly as ``google.protobuf.json_format`` writes it with its standard options:
fields by their lowerCamelCase JSON names (``matchId``, ``legalActions``), enums by name
(``"ACTION_KIND_KNOCK"``), 64-bit integers as strings (``"requestId": "7"``), bytes in base64,
and a field at its default value (0, ``""``, ``false``, an empty list, an unset message)
left out. A message's game content is its ``oneof game``: ``gin`` or ``rummy``, or a plugin
game's ``other`` (an ``Any``, written as its message with an ``@type``; the bridge asks the
referee's gRPC reflection for the types it does not know).

Bridge → program (stdin): one ``RefereeMessage`` per line, for the session's matches:
``matchStarted``, ``dealStarted``, ``actionRequest``, ``actionRejected``, ``dealFinished``,
``gameFinished``, ``matchFinished`` and match-level ``error``; never ``welcome``, ``pong`` or
``event`` (a request's ``events`` hold the deal so far). A program must ignore messages and
fields it does not know: more may come.

Program → bridge (stdout): one line per ``actionRequest``, a ``BotMessage``, either
``{"action": {"action": <one of the request's legalActions>}}`` (an ``ActionResponse``; its
``matchId`` and ``requestId`` may be left out — the bridge fills them in — and must be the
request's when given) or ``{"resign": {"reason": "why"}}`` (the program gives the match up).
Blank lines are skipped. The program's stderr passes through to the bridge's stderr (use it
for logs; never log to stdout).

Faults: an answer that is not JSON, not a ``BotMessage``, neither ``action`` nor ``resign``,
names another request, or carries no action — or the program closing stdout or exiting — is
reported on stderr (what was expected, what came, and the line); the bridge resigns the match
with that reason (the referee records a ``bot_error`` fault whose detail says it and applies
its fault policy) and ends the session with exit code 1. With ``--on-error fallback`` an
unreadable answer is replaced by the first legal action instead, marked as a fallback for the
referee to count (``ActionResponse.fallback`` is the bridge's: a program's is not passed on);
a ``resign`` line still resigns and a program that exits still ends the session. An action
that is well formed but not legal is passed on: the referee judges it. The program is stopped
(stdin closed, then terminated) when the session ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import subprocess
import sys
import time

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message

from gin_arena.v2 import bot_pb2, common_pb2

from .kit import Bot, BotCodeError, BotConfig, SessionResult, make_parser, parse_config
from .kit.games import action_text
from .kit.session import EXIT_FAILED, channel_credentials, open_session, run_until_signal, setup_logging

log = logging.getLogger("gin_bot.stdio")

# ----- JSON lines -----
def message_line(msg: Message, pool: DescriptorPool | None = None) -> str:
    """A message as one line of the stdio protocol: its proto3 JSON mapping, compact. A plugin
    game's message packed in an ``Any`` needs its type's descriptor: in ``pool``, or else in
    this process's (``TypeError`` if neither has it)."""
    return json.dumps(json_format.MessageToDict(msg, descriptor_pool=pool), separators=(",", ":"),
                      ensure_ascii=False)


def referee_line(match_id: str, kind: str, msg: Message, pool: DescriptorPool | None = None) -> str:
    """The line of a ``RefereeMessage`` about ``match_id`` whose ``kind`` (a member of its
    ``oneof kind``, e.g. ``"action_request"``) is ``msg``."""
    out = bot_pb2.RefereeMessage(match_id=match_id)
    getattr(out, kind).CopyFrom(msg)
    return message_line(out, pool)


class ReflectedTypes:
    """The descriptors of a plugin game's messages (which travel packed in ``Any``), asked of the
    referee through gRPC server reflection the first time a message holds a type this process
    does not know; the referee serves them (protocol.md)."""

    def __init__(self, config: BotConfig) -> None:
        self.config = config
        """How to reach the referee (its address, TLS)."""
        self._pool: DescriptorPool | None = None
        self._channel: grpc.Channel | None = None

    def pool(self) -> DescriptorPool:
        """A descriptor pool that finds every type the referee's reflection serves."""
        if self._pool is None:
            from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
                ProtoReflectionDescriptorDatabase,
            )

            creds = channel_credentials(self.config)
            self._channel = (grpc.secure_channel(self.config.referee, creds) if creds is not None
                             else grpc.insecure_channel(self.config.referee))
            self._pool = DescriptorPool(ProtoReflectionDescriptorDatabase(self._channel))
        return self._pool

    def close(self) -> None:
        """Close the reflection channel, if one was opened."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None


class AnswerError(ValueError):
    """An answer line that does not follow the protocol; the text says how."""


class Resignation(Exception):
    """The program answered with a ``resign`` line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        """The program's reason (may be empty)."""


def parse_answer(line: str, match_id: str, request: bot_pb2.ActionRequest,
                 pool: DescriptorPool | None = None) -> common_pb2.Action:
    """The action of an answer line to ``request`` (of ``match_id``), or :class:`AnswerError`
    saying precisely what is wrong; :class:`Resignation` for a ``resign`` line. ``pool``: where
    a plugin game's ``Any`` types are found (as :func:`message_line`)."""
    rid = request.request_id
    shown = line.rstrip("\n")
    shown = shown if len(shown) <= 200 else shown[:200] + "…"
    example = '{"action": {"action": <one of the request\'s legalActions>}}'
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise AnswerError(f"the answer to request {rid} is not JSON ({e}): {shown!r}") from None
    if not isinstance(obj, dict):
        raise AnswerError(f"the answer to request {rid} must be a JSON object like {example}; got {shown!r}")
    msg = bot_pb2.BotMessage()
    try:
        json_format.ParseDict(obj, msg, descriptor_pool=pool)
    except json_format.ParseError as e:
        raise AnswerError(f"the answer to request {rid} is not a BotMessage ({e}): {shown!r}") from None
    kind = msg.WhichOneof("kind")
    if kind == "resign":
        if msg.resign.match_id and msg.resign.match_id != match_id:
            raise AnswerError(f"the resign names match {msg.resign.match_id!r} but request {rid} is of "
                              f"match {match_id!r}: {shown!r}")
        raise Resignation(msg.resign.reason)
    if kind != "action":
        raise AnswerError(f"the answer to request {rid} must be an action like {example} (or a resign); "
                          f"got {kind or 'nothing'}: {shown!r}")
    answer = msg.action
    if answer.request_id and answer.request_id != rid:
        raise AnswerError(f"the answer names requestId {answer.request_id} but request {rid} was asked: {shown!r}")
    if answer.match_id and answer.match_id != match_id:
        raise AnswerError(f"the answer names matchId {answer.match_id!r} but request {rid} is of match "
                          f"{match_id!r}: {shown!r}")
    if answer.action.WhichOneof("game") is None:
        raise AnswerError(f"the answer to request {rid} has no action (e.g. {example}): {shown!r}")
    return answer.action


# ----- the bridge -----
class StdioBot(Bot):
    """A bot whose decisions come from a program over stdin/stdout."""

    name = "stdio"

    def __init__(self, command: list[str], matches: int = 1, games: tuple[str, ...] = (),
                 types: ReflectedTypes | None = None) -> None:
        self.command = command
        self.games = games
        self.matches = matches
        self.finished = 0
        self.types = types
        """Where a plugin game's message types are found (``None``: only in this process)."""
        self._pool: DescriptorPool | None = None
        self.proc = subprocess.Popen(  # stderr passes through
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
        )
        log.info("started %s (pid %d)", " ".join(command), self.proc.pid)

    @property
    def done(self) -> bool:
        """Whether the program has been told of every match it was started for."""
        return bool(self.matches) and self.finished >= self.matches

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return "the program closed its stdout but is still running"
        return f"the program exited with code {code}"

    def send(self, match_id: str, kind: str, msg: Message) -> None:
        """Write one ``RefereeMessage`` line (about ``match_id``, ``kind`` ``msg``) to the program."""
        assert self.proc.stdin is not None
        line = self._line(match_id, kind, msg)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise BotCodeError(match_id, f"{self._exit_text()}; could not send it the {kind} line") from None

    def _line(self, match_id: str, kind: str, msg: Message) -> str:
        """The message's line; a type this process does not know is asked of the referee."""
        try:
            return referee_line(match_id, kind, msg, self._pool)
        except TypeError as e:  # json_format: an Any of an unknown type
            if self.types is None or self._pool is not None:
                raise BotCodeError(match_id, f"cannot write the {kind} message as JSON: {e}") from None
            self._pool = self.types.pool()
        try:
            return referee_line(match_id, kind, msg, self._pool)
        except Exception as e:  # reflection failed, or the referee does not know the type either
            raise BotCodeError(match_id, f"cannot write the {kind} message as JSON (its types asked of "
                               f"the referee): {e}") from None

    def receive(self, match_id: str, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        """Read the answer line to a request."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise BotCodeError(match_id, f"{self._exit_text()} before answering request {request.request_id}")
            if line.strip():
                break
        try:
            return parse_answer(line, match_id, request, self._pool)
        except AnswerError as e:
            raise BotCodeError(match_id, f"stdio protocol error: {e}") from None
        except Resignation as e:
            raise BotCodeError(match_id, f"the program resigned: {e.reason or 'no reason given'}",
                               deliberate=True) from None

    def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        return self.decide_in_match("", request)

    def decide_in_match(self, match_id: str, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        """Send the request line and read the answer line."""
        started = time.monotonic()
        self.send(match_id, "action_request", request)
        chosen = self.receive(match_id, request)
        log.debug("request %d answered in %.0f ms: %s", request.request_id,
                  (time.monotonic() - started) * 1000, action_text(chosen))
        return chosen

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        self.send(match_id, "match_started", info)

    def on_deal_started(self, match_id: str, deal: bot_pb2.DealStarted) -> None:
        self.send(match_id, "deal_started", deal)

    def on_action_rejected(self, match_id: str, rejected: bot_pb2.ActionRejected) -> None:
        self.send(match_id, "action_rejected", rejected)

    def on_deal_finished(self, match_id: str, result: common_pb2.DealResult) -> None:
        self.send(match_id, "deal_finished", bot_pb2.DealFinished(result=result))

    def on_game_finished(self, match_id: str, result: common_pb2.GameResult) -> None:
        self.send(match_id, "game_finished", bot_pb2.GameFinished(result=result))

    def on_match_finished(self, match_id: str, result: common_pb2.MatchResult) -> None:
        self.send(match_id, "match_finished", bot_pb2.MatchFinished(result=result))
        self.finished += 1

    def on_error(self, match_id: str, error: bot_pb2.ErrorReport) -> None:
        if match_id:
            self.send(match_id, "error", error)

    def close(self) -> None:
        """Close the program's stdin, then stop it if it does not exit by itself."""
        if self.types is not None:
            self.types.close()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1:]


async def bridge_session(bot: StdioBot, config: BotConfig) -> SessionResult:
    """Play the session; end it if the program exits early."""
    running = open_session(bot, config)
    session = asyncio.ensure_future(running.run())
    exited = asyncio.ensure_future(asyncio.to_thread(bot.proc.wait))
    try:
        await asyncio.wait({session, exited}, return_when=asyncio.FIRST_COMPLETED)
        if not session.done():
            # Give a pending decide() the chance to report the exit precisely.
            await asyncio.wait({session}, timeout=0.5)
        if session.done():
            return session.result()
        if bot.done:
            return await session
        reason = f"the program exited with code {bot.proc.returncode} while the session was running"
        running.give_up(BotCodeError("", reason))  # resigns its matches: the referee records why
        done, _ = await asyncio.wait({session}, timeout=5.0)
        if done:
            return session.result()
        log.error("%s", reason)
        return SessionResult(EXIT_FAILED, reason)
    finally:
        if not session.done():
            session.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await session
        bot.close()
        with contextlib.suppress(asyncio.CancelledError):
            await exited


def main(argv: list[str] | None = None) -> int:
    """Run the bridge from the command line."""
    args = sys.argv[1:] if argv is None else argv
    own, command = _split_argv(args)
    parser = make_parser("stdio", "Connect a stdio (JSON lines) program to the Gin Arena referee. "
                         "Usage: ... [options] -- <command...>")
    config, ns = parse_config(parser, own)
    games = config.games if config.games is not None else ("gin",)  # (--games: what the program plays)
    if not command:
        parser.error("no program given: put its command after --, e.g. -- node sample_bots/stdio/bot.js")
    setup_logging(ns.log_level)
    try:
        bot = StdioBot(command, config.matches, games, ReflectedTypes(config))
    except OSError as e:
        log.error("cannot start %s: %s", " ".join(command), e)
        return EXIT_FAILED
    result = asyncio.run(run_until_signal(bridge_session(bot, config)))
    log.log(logging.INFO if result.ok else logging.ERROR, "session over: %s", result.reason)
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
