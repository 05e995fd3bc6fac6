"""The processes of ``bench/attack.py`` (127.0.0.1 only, bounded in time and rate):

    _attacker.py honest --target ADDR -n 100 --first 0 --points 5   # N matches, each to its end
    _attacker.py flood --target ADDR --rate 5000 --seconds S    # pings/empty/unknown-match, reconnecting
    _attacker.py noread --target ADDR --seconds S               # streams that never read a byte
    _attacker.py reset --target ADDR --rate 10000 --seconds S   # HEADERS+RST_STREAM, 1/20 every 50 ms
    _attacker.py reset --target ADDR --rate 10000 --burst ...   # all of a second's at once, once a second
    _attacker.py idle --target ADDR -n 300 --seconds S          # idle connections held open

``honest`` plays N matches at once (seeds ``attack-<first + i>``: the calm and the attacked phase play
the same deals with the same trivial bots), each seat on its own connection, and prints
``DONE <json>``: every match's termination and every decision's latency (a bot's answer sent →
the next request of its match arrives). The attackers pin themselves to one CPU and each keeps
its own CPU time under ``--cpu-share`` of the wall time (default 0.25: four of them use at most
one core), sleeping when ahead; they hold seat tokens like an enrolled bot gone rogue (they
create their matches with the bench's operator token, as an organiser would for a bot). Each
prints ``READY``, then ``DONE <json>`` with what it sent and its measured CPU share. Their raw
connections (``tests/_h2.py``) acknowledge the server's SETTINGS and answer its PINGs, as every
real client does (gRPC's core refuses most streams of a connection that never acknowledges).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc
from _protocol_client import CHANNEL_OPTIONS, EOF, OPERATOR_METADATA, choose

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from tests._h2 import RawConnection


class Governor:
    """Keeps this process's CPU time under ``share`` of the wall time since it started."""

    def __init__(self, share: float) -> None:
        self.share = share
        self.wall0 = time.monotonic()
        self.cpu0 = time.process_time()

    def pace(self, period: float) -> None:
        """Sleep out the rest of ``period`` seconds, and longer if the CPU share is used up."""
        used = time.process_time() - self.cpu0
        ahead = used / self.share - (time.monotonic() - self.wall0)  # the wall time that CPU is due
        time.sleep(max(period, ahead))

    def measured(self) -> float:
        """The CPU share used so far."""
        return round((time.process_time() - self.cpu0) / max(1e-9, time.monotonic() - self.wall0), 4)


def _seat_token(target: str) -> str:
    """A seat of a fresh match that will never start (the attacker holds its seat 0)."""
    with grpc.insecure_channel(target) as ch:
        created = referee_pb2_grpc.RefereeServiceStub(ch).CreateMatch(referee_pb2.CreateMatchRequest(
            seats=[referee_pb2.SeatSpec(name="x"), referee_pb2.SeatSpec(name="y")], connect_timeout_ms=600_000),
            metadata=OPERATOR_METADATA)
        return str(created.seat_tokens[0].token)


def flood(target: str, rate: int, seconds: float, gov: Governor, stats: dict[str, Any]) -> None:
    host, _, port = target.rpartition(":")
    hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token=_seat_token(target), protocol_version=2)).SerializeToString()
    junk = [bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=7)).SerializeToString(), b"",
            bot_pb2.BotMessage(action=bot_pb2.ActionResponse(match_id="nope")).SerializeToString()]
    stats.update(sent=0, streams=1)
    end = time.monotonic() + seconds
    conn = RawConnection(host, int(port))
    stream = conn.open_stream([hello])
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            conn.write(stream, [junk[i % 3] for i in range(rate // 20)])
            stats["sent"] += rate // 20
            if stats["sent"] % (rate * 2) < rate // 20:  # every ~2 s: a new stream (the old one was cut off)
                stream = conn.open_stream([hello])
                stats["streams"] += 1
        except OSError:
            conn = RawConnection(host, int(port))
            stream = conn.open_stream([hello])
            stats["streams"] += 1
        gov.pace(max(0.0, 0.05 - (time.monotonic() - t)))


def noread(target: str, seconds: float, gov: Governor, stats: dict[str, Any]) -> None:
    host, _, port = target.rpartition(":")
    conns = []
    for _ in range(10):
        conn = RawConnection(host, int(port))
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token=_seat_token(target), protocol_version=2))
        stream = conn.open_stream([hello.SerializeToString()])
        conns.append((conn, stream))
    ping = bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=2**62)).SerializeToString()
    stats.update(connections=len(conns), sent=0)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for conn, stream in conns:
            try:
                conn.write(stream, [ping] * 10)
                stats["sent"] += 10
            except OSError:
                pass
        gov.pace(0.1)


def reset(target: str, rate: int, seconds: float, gov: Governor, stats: dict[str, Any], burst: bool = False) -> None:
    """``rate`` resets a second over one connection: a twentieth every 50 ms, or (``burst``)
    all of them at once, once a second."""
    host, _, port = target.rpartition(":")
    conn = RawConnection(host, int(port))
    stats.update(resets=0, connections=1)
    end = time.monotonic() + seconds
    count, period = (rate, 1.0) if burst else (rate // 20, 0.05)
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            conn.rapid_reset(count)
            stats["resets"] += count
        except OSError:  # the server closed it (GOAWAY): again
            conn.close()
            conn = RawConnection(host, int(port))
            stats["connections"] += 1
        gov.pace(max(0.0, period - (time.monotonic() - t)))


def idle(target: str, n: int, seconds: float, gov: Governor, stats: dict[str, Any]) -> None:
    host, _, port = target.rpartition(":")
    conns = [RawConnection(host, int(port)) for _ in range(n)]
    stats["connections"] = len(conns)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        gov.pace(1.0)


# ----------------------------------------------------------------- honest matches
class Honest:
    """N matches played at once by the trivial bots of ``_protocol_client.py``, each to its end."""

    def __init__(self, target: str, points: int, think_s: float) -> None:
        self.target = target
        self.creating = asyncio.Semaphore(32)  # CreateMatch calls at once on the one operator connection
        self.think_s = think_s
        self.points = points
        self.latencies: list[float] = []
        self.endings: Counter[str] = Counter()
        self.details: list[str] = []
        self.durations: list[float] = []
        self.channels: list[grpc.aio.Channel] = []

    async def match(self, ops: Any, i: int) -> None:
        request = referee_pb2.CreateMatchRequest(
            seats=[referee_pb2.SeatSpec(name="north"), referee_pb2.SeatSpec(name="south")],
            gin=gin_pb2.RuleSet(name="classic", target=self.points), seed=f"attack-{i}".encode(),
            time_control=common_pb2.TimeControl(text="st=10", per_move=common_pb2.FixedPerMove(move_ms=10_000)),
            connect_timeout_ms=120_000,
        )
        t0 = time.monotonic()
        async with self.creating:
            created = await ops.CreateMatch(request, metadata=OPERATOR_METADATA)
        last = [0.0]  # when a seat of this match last sent an action
        chans = [grpc.aio.insecure_channel(self.target, options=CHANNEL_OPTIONS) for _ in created.seat_tokens]
        self.channels += chans  # kept open to the end: closing hundreds mid-run crashed grpc's poller once
        ends = await asyncio.gather(*(self.seat(ch, t.token, last, i)
                                      for ch, t in zip(chans, created.seat_tokens, strict=True)))
        self.endings[ends[0]] += 1
        self.durations.append(time.monotonic() - t0)

    async def seat(self, ch: grpc.aio.Channel, token: str, last: list[float], i: int) -> str:
        call = bot_pb2_grpc.BotServiceStub(ch).Play()  # type: ignore[call-arg]
        await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="honest", token=token, protocol_version=2)))
        rng = (i * 7919) % 1000 / 1000  # a fixed spread of thinking times per match
        ending = "no match_finished"
        while True:
            msg: Any = await call.read()
            if msg is EOF:
                return ending
            kind = msg.WhichOneof("kind")
            if kind == "action_request":
                if last[0]:
                    self.latencies.append(time.monotonic() - last[0])
                    last[0] = 0.0
                req = msg.action_request
                await asyncio.sleep(self.think_s * (0.5 + rng))
                out = bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                    match_id=msg.match_id, request_id=req.request_id, action=choose(req)))
                last[0] = time.monotonic()
                await call.write(out)
            elif kind == "match_finished":
                result = msg.match_finished.result
                ending = common_pb2.Termination.Name(result.termination).removeprefix("TERMINATION_").lower()
                if ending != "normal":
                    self.details.append(result.detail)
                last[0] = 0.0
                await call.done_writing()

    async def run(self, first: int, n: int) -> dict[str, Any]:
        ops = referee_pb2_grpc.RefereeServiceStub(grpc.aio.insecure_channel(self.target))
        t0 = time.monotonic()
        outcomes = await asyncio.gather(*(self.match(ops, i) for i in range(first, first + n)),
                                        return_exceptions=True)
        errors = [repr(o) for o in outcomes if isinstance(o, BaseException)]
        if errors:
            self.endings["error"] += len(errors)
        return {"matches": n, "endings": dict(self.endings), "errors": errors[:3], "details": self.details[:3],
                "latencies": [round(v, 6) for v in self.latencies], "wall_s": round(time.monotonic() - t0, 2),
                "longest_match_s": round(max(self.durations, default=0.0), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["honest", "flood", "noread", "reset", "idle"])
    parser.add_argument("--target", required=True)
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--points", type=int, default=5, help="honest: each match's target")
    parser.add_argument("--first", type=int, default=0, help="honest: the first match's number (its seed)")
    parser.add_argument("--think-ms", type=float, default=400.0, help="honest: mean thinking time per decision")
    parser.add_argument("--cpu-share", type=float, default=0.25, help="attackers: the most CPU of one core to use")
    parser.add_argument("--burst", action="store_true", help="reset: a second's resets at once, once a second")
    args = parser.parse_args()
    if not args.target.startswith("127.0.0.1:"):
        raise SystemExit("attackers run against 127.0.0.1 only")
    if args.mode == "honest":
        done = asyncio.run(Honest(args.target, args.points, args.think_ms / 1000).run(args.first, args.n))
        print("DONE " + json.dumps(done), flush=True)
        os._exit(0)  # the report is out; the process's end closes every connection at once
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # all attackers share one core
    signal.signal(signal.SIGTERM, _stop)
    gov = Governor(args.cpu_share)
    stats: dict[str, Any] = {}
    t0 = time.monotonic()
    print("READY", flush=True)
    try:
        if args.mode == "flood":
            flood(args.target, args.rate, args.seconds, gov, stats)
        elif args.mode == "noread":
            noread(args.target, args.seconds, gov, stats)
        elif args.mode == "reset":
            reset(args.target, args.rate, args.seconds, gov, stats, args.burst)
        else:
            idle(args.target, args.n, args.seconds, gov, stats)
    except KeyboardInterrupt:  # SIGTERM: the bench's phase is over
        pass
    wall = time.monotonic() - t0
    per_s = {f"{k}_per_s": round(v / wall) for k, v in stats.items() if k in ("sent", "resets")}
    print("DONE " + json.dumps({**stats, **per_s, "cpu_share": gov.measured()}), flush=True)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
