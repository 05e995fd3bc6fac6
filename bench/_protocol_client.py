"""The processes ``bench/protocol.py`` starts (besides ``referee serve``).

    _protocol_client.py bare-server --port 0        # prints "PORT <n>"
    _protocol_client.py ping --target ADDR -n STREAMS
    _protocol_client.py bots --target ADDR -n MATCHES [--points 100]

Clients print ``READY`` once every stream has done a round trip (``ping``) or every match has
sent its first action request (``bots``), keep the load going, and on a ``STOP <t0> <t1>`` line
on stdin (``time.monotonic()`` values; one clock for every process on Linux) print
``RESULT <json>`` with what happened inside [t0, t1] and exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from array import array
from collections import Counter
from typing import Any

import grpc
from gin_arena.v1 import bot_pb2, bot_pb2_grpc, game_pb2, referee_pb2, referee_pb2_grpc

CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # one TCP connection per channel, like separate bots
mono = time.monotonic


# ----------------------------------------------------------------- bare server
class Echo(bot_pb2_grpc.BotServiceServicer):
    """Answers every message of the stream with a small one: the floor of a lock-step exchange."""

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        while True:
            msg = await context.read()
            if msg is grpc.aio.EOF:
                return
            await context.write(bot_pb2.RefereeMessage(pong=bot_pb2.Pong(ping_id=msg.ping.ping_id)))


async def bare_server(port: int) -> None:
    from referee._server import SERVER_OPTIONS  # noqa: PLC0415 - the referee's options, for parity

    server = grpc.aio.server(options=SERVER_OPTIONS)
    bot_pb2_grpc.add_BotServiceServicer_to_server(Echo(), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(f"PORT {bound}", flush=True)
    await server.wait_for_termination()


# ----------------------------------------------------------------- shared client plumbing
class Recorder:
    def __init__(self, n: int) -> None:
        self.n = n
        self.ready = 0
        self.at = array("d")  # when a sample was taken
        self.val = array("d")  # the sample (seconds)
        self.ops = array("d")  # when an operation (round trip / decision) completed
        self.decisions_per_match: list[int] = []
        self.abnormal = 0
        self.errors: list[str] = []
        self.where: list[list[str]] = []  # per match slot: how far it and its two seats got

    def one_ready(self) -> None:
        self.ready += 1
        if self.ready == self.n:
            print("READY", flush=True)

    def result(self, t0: float, t1: float) -> dict[str, Any]:
        samples = [round(v, 7) for t, v in zip(self.at, self.val, strict=True) if t0 <= t <= t1]
        count = sum(1 for t in self.ops if t0 <= t <= t1)
        dpm = sorted(self.decisions_per_match)
        return {
            "count": count, "samples": samples, "abnormal": self.abnormal, "errors": self.errors[:5],
            "decisions_per_match": dpm[len(dpm) // 2] if dpm else 0, "matches_finished": len(dpm),
            "stages": dict(Counter("/".join(w) for w in self.where)),
        }


async def until_stopped(rec: Recorder, tasks: list[asyncio.Task[Any]]) -> None:
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def read_stdin() -> None:
        text = sys.stdin.readline()
        loop.call_soon_threadsafe(lambda: line.done() or line.set_result(text))

    threading.Thread(target=read_stdin, daemon=True).start()
    text = await line
    parts = text.split()
    if len(parts) != 3 or parts[0] != "STOP":
        os._exit(3)
    result = rec.result(float(parts[1]), float(parts[2]))
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # the streams simply break; the server notices at once


def report_crash(rec: Recorder, task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        rec.errors.append(repr(task.exception()))
        import traceback  # noqa: PLC0415

        traceback.print_exception(task.exception(), file=sys.stderr)


# ----------------------------------------------------------------- ping client
async def ping_stream(target: str, rec: Recorder) -> None:
    async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as ch:
        call = bot_pb2_grpc.BotServiceStub(ch).Play()
        msg = bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=1))
        at, val, ops = rec.at, rec.val, rec.ops
        t0 = mono()
        await call.write(msg)
        await call.read()
        rec.one_ready()
        while True:
            t0 = mono()
            await call.write(msg)
            reply = await call.read()
            t1 = mono()
            if reply is grpc.aio.EOF:
                raise RuntimeError("the server ended the stream")
            at.append(t1)
            val.append(t1 - t0)
            ops.append(t1)


async def ping_main(target: str, n: int) -> None:
    rec = Recorder(n)
    tasks = [asyncio.ensure_future(ping_stream(target, rec)) for _ in range(n)]
    for t in tasks:
        t.add_done_callback(lambda t: report_crash(rec, t))
    await until_stopped(rec, tasks)


# ----------------------------------------------------------------- trivial bots
KNOCK, BIG_GIN = game_pb2.ACTION_KIND_KNOCK, game_pb2.ACTION_KIND_BIG_GIN
DRAW_STOCK, TAKE_UPCARD, DISCARD = game_pb2.ACTION_KIND_DRAW_STOCK, game_pb2.ACTION_KIND_TAKE_UPCARD, \
    game_pb2.ACTION_KIND_DISCARD
PASS = game_pb2.Action(kind=game_pb2.ACTION_KIND_PASS)


def choose(req: bot_pb2.ActionRequest) -> game_pb2.Action:
    """Knock or big gin if legal; else draw stock, pass the upcard, discard the highest deadwood."""
    legal = req.legal_actions
    for a in legal:
        if a.kind == KNOCK or a.kind == BIG_GIN:
            return a
    first = legal[0]
    if first.kind == DRAW_STOCK:
        return first
    if first.kind == TAKE_UPCARD:
        return PASS
    discards = {a.card for a in legal if a.kind == DISCARD}
    for card in reversed(req.state.my_deadwood_cards):
        if card in discards:
            return game_pb2.Action(kind=DISCARD, card=card)
    return first


class Match:
    __slots__ = ("last", "decisions", "started")

    def __init__(self) -> None:
        self.last = 0.0  # when a bot last wrote an action (0: no decision yet)
        self.decisions = 0
        self.started = False


async def seat(ch: grpc.aio.Channel, token: str, m: Match, rec: Recorder, first_request: Any, where: list[str],
               i: int) -> None:
    where[i] = "open"
    call = bot_pb2_grpc.BotServiceStub(ch).Play()
    await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="trivial", token=token, protocol_version=1)))
    where[i] = "hello"
    at, val, ops = rec.at, rec.val, rec.ops
    while True:
        msg = await call.read()
        if msg is grpc.aio.EOF:
            where[i] = "eof"
            return
        kind = msg.WhichOneof("kind")
        where[i] = kind
        if kind == "action_request":
            now = mono()
            if m.last:
                at.append(now)
                val.append(now - m.last)
                m.last = 0.0
            elif not m.started:
                m.started = True
                first_request()
            req = msg.action_request
            out = bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                match_id=msg.match_id, request_id=req.request_id, action=choose(req)))
            m.decisions += 1
            m.last = sent = mono()
            await call.write(out)
            ops.append(sent)
        elif kind == "match_finished":
            if msg.match_finished.result.termination != game_pb2.TERMINATION_NORMAL:
                rec.abnormal += 1
                rec.errors.append(msg.match_finished.result.detail)
            m.last = 0.0
            await call.done_writing()
        elif kind == "error":
            rec.errors.append(msg.error.message)


async def slot(target: str, ops_stub: referee_pb2_grpc.RefereeServiceStub, points: int, rec: Recorder) -> None:
    """One match after another, each seat on its own connection (kept across matches)."""
    ready = [False]

    def first_request() -> None:
        if not ready[0]:
            ready[0] = True
            rec.one_ready()

    request = referee_pb2.CreateMatchRequest(
        seats=[referee_pb2.SeatSpec(name="north"), referee_pb2.SeatSpec(name="south")],
        rules=game_pb2.RuleSet(name="classic", target=points),
        time_control=game_pb2.TimeControl(text="st=10", per_move=game_pb2.FixedPerMove(move_ms=10_000)),
        reconnect_grace_ms=200,
    )
    chans = [grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) for _ in range(2)]
    where = ["create", "", ""]
    rec.where.append(where)
    while True:
        where[0] = "create"
        created = await ops_stub.CreateMatch(request)
        where[0] = "created"
        m = Match()
        await asyncio.gather(*(seat(ch, t.token, m, rec, first_request, where, i + 1)
                               for i, (ch, t) in enumerate(zip(chans, created.seat_tokens, strict=True))))
        rec.decisions_per_match.append(m.decisions)


async def bots_main(target: str, n: int, points: int) -> None:
    rec = Recorder(n)
    ops_channel = grpc.aio.insecure_channel(target)
    ops_stub = referee_pb2_grpc.RefereeServiceStub(ops_channel)
    tasks = [asyncio.ensure_future(slot(target, ops_stub, points, rec)) for _ in range(n)]
    for t in tasks:
        t.add_done_callback(lambda t: report_crash(rec, t))
    await until_stopped(rec, tasks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["bare-server", "ping", "bots"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--target", default="")
    parser.add_argument("-n", type=int, default=1)
    parser.add_argument("--points", type=int, default=100)
    args = parser.parse_args()
    if args.mode == "bare-server":
        asyncio.run(bare_server(args.port))
    elif args.mode == "ping":
        asyncio.run(ping_main(args.target, args.n))
    else:
        asyncio.run(bots_main(args.target, args.n, args.points))


if __name__ == "__main__":
    main()
