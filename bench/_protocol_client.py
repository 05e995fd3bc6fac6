"""The processes ``bench/protocol.py`` starts (besides ``referee serve``).

    _protocol_client.py bare-server --port 0        # grpc.aio echo; prints "PORT <n>"
    _protocol_client.py relay-server --port 0      # pairs streams, relays each message to the partner
    _protocol_client.py ping --target ADDR -n STREAMS [--replies 1|3]
    _protocol_client.py relay --target ADDR -n STREAMS   # STREAMS/2 lock-step pairs
    _protocol_client.py bots --target ADDR -n MATCHES [--points 100] [--think-ms 0] [--hold] [--skip-events]

Clients print ``READY`` once every stream has done a round trip (``ping``) or every match has
sent its first action request (``bots``; with ``--hold`` they first print ``STARTED`` and wait
for a ``GO`` line), keep the load going, and on a ``STOP <t0> <t1>`` line on stdin
(``time.monotonic()`` values: one clock for every process on Linux) print ``RESULT <json>`` with
what happened inside [t0, t1] and exit. They also exit when stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import threading
import time
from array import array
from collections import Counter, deque
from typing import Any

import grpc

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2

EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # one TCP connection per channel, like separate bots
mono = time.monotonic


# ----------------------------------------------------------------- bare server
def typical_request() -> bot_pb2.RefereeMessage:
    """A real mid-deal action request (about the referee's average size), built once."""
    from referee import gin
    from referee.gin import wire

    match = gin.Match(gin.RuleSet.classic(), b"bench-protocol")
    while len(match.deal.history) < 24 or match.deal.phase != "discard":
        legal = match.legal_actions()
        pick = next((a for a in legal if a.kind in ("pass", "draw_stock")), legal[0])
        match.apply(pick)
    seat = match.to_move
    assert seat is not None
    state = match.view(seat)
    return bot_pb2.RefereeMessage(match_id="0123456789abcdef", action_request=wire.action_request(
        7, state, [10_000, 10_000], 0, 10_000, wire.EventLog()))


OPERATOR_METADATA = (("authorization", "Bearer " + os.environ.get("GIN_ARENA_OPERATOR_TOKEN", "")),)
"""The referee's operator token (``bench/protocol.py`` gives the referee and its clients one)."""


class Echo(bot_pb2_grpc.BotServiceServicer):
    """Answers every Ping with a Pong: the floor of a lock-step exchange. ``ping_id = k > 1``
    asks for the referee's pattern instead: k-1 small messages, then a typical action request
    (each built anew, as the referee does)."""

    def __init__(self) -> None:
        self.big = typical_request()
        self.small = bot_pb2.RefereeMessage(match_id="0123456789abcdef", event=common_pb2.Event(
            seat=1, think_ms=0, gin=gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DISCARD, card="Td", stock_size_after=20)))

    async def Play(  # type: ignore[override]
        self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        big, small = self.big, self.small
        while True:
            msg = await context.read()
            if msg is EOF:
                return
            k = msg.ping.ping_id
            if k <= 1:
                await context.write(bot_pb2.RefereeMessage(pong=bot_pb2.Pong(ping_id=k)))
                continue
            for _ in range(k - 1):
                m = bot_pb2.RefereeMessage()
                m.CopyFrom(small)
                await context.write(m)
            m = bot_pb2.RefereeMessage()
            m.CopyFrom(big)
            await context.write(m)


async def bare_server(port: int) -> None:
    from referee.transport.server import SERVER_OPTIONS

    server = grpc.aio.server(options=SERVER_OPTIONS)
    bot_pb2_grpc.add_BotServiceServicer_to_server(Echo(), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(f"PORT {bound}", flush=True)
    await server.wait_for_termination()


class Relay(bot_pb2_grpc.BotServiceServicer):
    """The gRPC floor of a two-seat referee, without the game: streams pair up in the order they
    open (each first sends one Ping to register); every Ping then goes to the partner stream as
    a typical action request (pre-serialised), through the partner's queue and writer task, as
    the referee's sessions do. One write and one read per decision, half the streams waiting."""

    def __init__(self) -> None:
        self.big = typical_request().SerializeToString()
        self.waiting: tuple[deque[bytes], asyncio.Event, asyncio.Future[Any]] | None = None

    async def Play(  # type: ignore[override]
        self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        if await context.read() is EOF:
            return
        queue: deque[bytes] = deque()
        wake = asyncio.Event()
        if self.waiting is None:
            partner: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.waiting = (queue, wake, partner)
            other_queue, other_wake = await partner
        else:
            other_queue, other_wake, fut = self.waiting
            self.waiting = None
            fut.set_result((queue, wake))

        async def writer() -> None:
            while True:
                if not queue:
                    wake.clear()
                    await wake.wait()
                    continue
                await context.write(queue.popleft())

        w = asyncio.ensure_future(writer())
        big = self.big
        try:
            while True:
                if await context.read() is EOF:
                    return
                other_queue.append(big)
                other_wake.set()
        finally:
            w.cancel()


async def relay_server(port: int) -> None:
    from referee.transport.server import SERVER_OPTIONS

    server = grpc.aio.server(options=SERVER_OPTIONS)
    handler = grpc.method_handlers_generic_handler("gin_arena.v2.BotService", {
        "Play": grpc.stream_stream_rpc_method_handler(
            Relay().Play, request_deserializer=bot_pb2.BotMessage.FromString,
            response_serializer=lambda b: b)})
    server.add_generic_rpc_handlers((handler,))
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
            "ops_total": len(self.ops),
            "stages": dict(Counter("/".join(w) for w in self.where)),
        }


async def until_stopped(rec: Recorder, go: asyncio.Event | None = None) -> None:
    """Serve stdin commands: ``GO`` (release held bots), ``STOP <t0> <t1>`` (report and exit)."""
    loop = asyncio.get_running_loop()
    stop_line: asyncio.Future[str] = loop.create_future()

    def on_line(text: str) -> None:
        if text.startswith("GO") and go is not None:
            go.set()
        elif not stop_line.done():
            stop_line.set_result(text)

    def read_stdin() -> None:
        for text in sys.stdin:
            loop.call_soon_threadsafe(on_line, text)
        loop.call_soon_threadsafe(on_line, "EOF")

    threading.Thread(target=read_stdin, daemon=True).start()
    parts = (await stop_line).split()
    if len(parts) != 3 or parts[0] != "STOP":
        os._exit(3)
    result = rec.result(float(parts[1]), float(parts[2]))
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # the streams simply break; the server notices at once


def report_crash(rec: Recorder, task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        rec.errors.append(repr(task.exception()))
        import traceback

        traceback.print_exception(task.exception(), file=sys.stderr)


# ----------------------------------------------------------------- ping client
async def ping_stream(target: str, rec: Recorder, replies: int) -> None:
    async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as ch:
        call = bot_pb2_grpc.BotServiceStub(ch).Play()  # type: ignore[call-arg]
        msg = bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=replies))
        at, val, ops = rec.at, rec.val, rec.ops
        t0 = mono()
        await call.write(msg)
        for _ in range(replies):
            await call.read()
        rec.one_ready()
        while True:
            t0 = mono()
            await call.write(msg)
            for _ in range(replies):
                reply = await call.read()
            t1 = mono()
            if reply is EOF:
                raise RuntimeError("the server ended the stream")
            at.append(t1)
            val.append(t1 - t0)
            ops.append(t1)


async def relay_pair(target: str, rec: Recorder) -> None:
    """Two streams of one relay pair, lock-step: each answers what it reads with a Ping, which
    the server relays to the other; a sample is the time from a stream's answer to its
    partner's next message (like a decision's overhead)."""
    msg = bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=1))
    async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as ca, \
            grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as cb:
        calls = [bot_pb2_grpc.BotServiceStub(c).Play() for c in (ca, cb)]  # type: ignore[call-arg]
        for call in calls:  # register, in order: the server pairs consecutive streams
            await call.write(msg)
            await asyncio.sleep(0.02)
        sent_at = [0.0]
        at, val, ops = rec.at, rec.val, rec.ops

        async def side(call: Any, first: bool) -> None:
            if first:
                sent_at[0] = mono()
                await call.write(msg)
            while True:
                reply = await call.read()
                t1 = mono()
                if reply is EOF:
                    raise RuntimeError("the server ended the stream")
                at.append(t1)
                val.append(t1 - sent_at[0])
                ops.append(t1)
                sent_at[0] = mono()
                await call.write(msg)

        rec.one_ready()
        await asyncio.gather(side(calls[0], True), side(calls[1], False))


async def relay_main(target: str, n: int) -> None:
    rec = Recorder(max(1, n // 2))
    tasks = []
    for _ in range(max(1, n // 2)):  # pairs open one after another (the server pairs in order)
        tasks.append(asyncio.ensure_future(relay_pair(target, rec)))
        await asyncio.sleep(0.05)
    for t in tasks:
        t.add_done_callback(lambda t: report_crash(rec, t))
    await until_stopped(rec)


async def ping_main(target: str, n: int, replies: int) -> None:
    rec = Recorder(n)
    tasks = [asyncio.ensure_future(ping_stream(target, rec, replies)) for _ in range(n)]
    for t in tasks:
        t.add_done_callback(lambda t: report_crash(rec, t))
    await until_stopped(rec)


# ----------------------------------------------------------------- trivial bots
KNOCK, BIG_GIN = gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_BIG_GIN
DRAW_STOCK, TAKE_UPCARD, DISCARD = gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_TAKE_UPCARD, \
    gin_pb2.ACTION_KIND_DISCARD
PASS = common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_PASS))


def choose(req: bot_pb2.ActionRequest) -> common_pb2.Action:
    """Knock or big gin if legal; else draw stock, pass the upcard, discard the highest deadwood."""
    legal = req.legal_actions
    for a in legal:
        if a.gin.kind == KNOCK or a.gin.kind == BIG_GIN:
            return a
    first = legal[0]
    if first.gin.kind == DRAW_STOCK:
        return first
    if first.gin.kind == TAKE_UPCARD:
        return PASS
    discards = {a.gin.card for a in legal if a.gin.kind == DISCARD}
    for card in reversed(req.gin.my_deadwood_cards):
        if card in discards:
            return common_pb2.Action(gin=gin_pb2.Action(kind=DISCARD, card=card))
    return first


class Match:
    __slots__ = ("created", "decisions", "last")

    def __init__(self, created: float) -> None:
        self.created = created  # when CreateMatch was called
        self.last = 0.0  # when a bot last wrote an action (0: no decision yet)
        self.decisions = 0


CREATE_AT_ONCE = 64
"""CreateMatch calls one client process keeps in flight at most (below the referee's 100 streams
per connection)."""


class Bots:
    """Match slots in one process: each plays one match after another, each seat on its own
    connection (kept across matches)."""

    def __init__(self, target: str, n: int, points: int, think_s: float, hold: bool, skip_events: bool = False) -> None:
        self.skip_events = skip_events
        self.target = target
        self.rec = Recorder(n)
        self.think_s = think_s
        self.go = asyncio.Event()
        if not hold:
            self.go.set()
        self.ops = referee_pb2_grpc.RefereeServiceStub(grpc.aio.insecure_channel(target))
        # Every slot creates its matches over this one operator connection: more calls at once
        # than the referee's HTTP/2 SETTINGS announce (twice streams_per_connection) are refused with
        # RST_STREAM (REFUSED_STREAM, UNAVAILABLE), which ended slots of the many-matches part.
        self.creating = asyncio.Semaphore(CREATE_AT_ONCE)
        self.request = referee_pb2.CreateMatchRequest(
            seats=[referee_pb2.SeatSpec(name="north"), referee_pb2.SeatSpec(name="south")],
            gin=gin_pb2.RuleSet(name="classic", target=points),
            time_control=common_pb2.TimeControl(text="st=10", per_move=common_pb2.FixedPerMove(move_ms=10_000)),
            reconnect_grace_ms=200,
        )
        self.started = 0  # slots whose first match has sent its first request
        self.n = n
        self.start_at = array("d")  # match start latency: CreateMatch called -> first request
        self.start_val = array("d")

    async def slot(self) -> None:
        chans = [grpc.aio.insecure_channel(self.target, options=CHANNEL_OPTIONS) for _ in range(2)]
        where = ["create", "", ""]
        self.rec.where.append(where)
        first = True
        while True:
            where[0] = "create"
            m = Match(mono())
            async with self.creating:
                created = await self.ops.CreateMatch(self.request, metadata=OPERATOR_METADATA)
            where[0] = "created"
            await asyncio.gather(*(self.seat(ch, t.token, m, where, i + 1, first)
                                   for i, (ch, t) in enumerate(zip(chans, created.seat_tokens, strict=True))))
            first = False
            self.rec.decisions_per_match.append(m.decisions)

    async def seat(self, ch: grpc.aio.Channel, token: str, m: Match, where: list[str], i: int, first: bool) -> None:
        where[i] = "open"
        call = bot_pb2_grpc.BotServiceStub(ch).Play()  # type: ignore[call-arg]
        await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="trivial", token=token, protocol_version=2,
                                                                skip_event_messages=self.skip_events)))
        where[i] = "hello"
        rec = self.rec
        at, val, ops = rec.at, rec.val, rec.ops
        think = self.think_s
        while True:
            msg: Any = await call.read()
            if msg is EOF:
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
                elif not m.decisions:  # the match's first request
                    if not first:  # (first matches all start at once: a ramp, not a steady state)
                        self.start_at.append(now)
                        self.start_val.append(now - m.created)
                    else:
                        self.started += 1
                        if self.started == self.n and not self.go.is_set():
                            print("STARTED", flush=True)
                    if not self.go.is_set():
                        await self.go.wait()
                req = msg.action_request
                out = bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                    match_id=msg.match_id, request_id=req.request_id, action=choose(req)))
                if think:
                    await asyncio.sleep(think * (0.5 + random.random()))
                m.decisions += 1
                m.last = sent = mono()
                await call.write(out)
                ops.append(sent)
            elif kind == "match_finished":
                if msg.match_finished.result.termination != common_pb2.TERMINATION_NORMAL:
                    rec.abnormal += 1
                    rec.errors.append(msg.match_finished.result.detail)
                m.last = 0.0
                await call.done_writing()
            elif kind == "error":
                rec.errors.append(msg.error.message)

    async def main(self) -> None:
        tasks = [asyncio.ensure_future(self.slot()) for _ in range(self.n)]
        for t in tasks:
            t.add_done_callback(lambda t: report_crash(self.rec, t))
        # READY: every slot's first match is playing (after GO when holding).
        async def ready() -> None:
            while self.started < self.n:
                await asyncio.sleep(0.02)
            await self.go.wait()
            print("READY", flush=True)

        ready_task = asyncio.ensure_future(ready())
        orig = self.rec.result

        def result(t0: float, t1: float) -> dict[str, Any]:
            r = orig(t0, t1)
            r["start_latency"] = [round(v, 5) for v in self.start_val]  # the whole run
            return r

        self.rec.result = result  # type: ignore[method-assign]
        await until_stopped(self.rec, self.go)
        del ready_task


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["bare-server", "relay-server", "ping", "relay", "bots"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--target", default="")
    parser.add_argument("-n", type=int, default=1)
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--replies", type=int, default=1, help="ping: messages the server sends per round trip")
    parser.add_argument("--think-ms", type=float, default=0.0, help="bots: mean thinking time (uniform 0.5x-1.5x)")
    parser.add_argument("--skip-events", action="store_true", help="bots: ask for no event messages")
    parser.add_argument("--hold", action="store_true",
                        help="bots: once every match has its first request, print STARTED and answer nothing "
                             "before a GO line on stdin (so that all matches start together)")
    args = parser.parse_args()
    if args.mode == "bare-server":
        asyncio.run(bare_server(args.port))
    elif args.mode == "relay-server":
        asyncio.run(relay_server(args.port))
    elif args.mode == "relay":
        asyncio.run(relay_main(args.target, args.n))
    elif args.mode == "ping":
        asyncio.run(ping_main(args.target, args.n, args.replies))
    else:
        async def bots() -> None:
            await Bots(args.target, args.n, args.points, args.think_ms / 1000, args.hold, args.skip_events).main()

        asyncio.run(bots())


if __name__ == "__main__":
    main()
