"""One attacker process of ``bench/attack.py`` (127.0.0.1 only, bounded in time and rate):

    _attacker.py flood --target ADDR --rate 5000 --seconds S    # pings/empty/unknown-match, reconnecting
    _attacker.py noread --target ADDR --seconds S               # streams that never read a byte
    _attacker.py reset --target ADDR --rate 10000 --seconds S   # HEADERS+RST_STREAM bursts
    _attacker.py idle --target ADDR -n 300 --seconds S          # idle connections held open

Each pins itself to CPU 0 (all four together use at most one core) and prints ``READY``, then
``DONE <json>`` with what it sent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from gin_arena.v1 import bot_pb2, referee_pb2, referee_pb2_grpc
from tests._h2 import RawConnection


def _seat_token(target: str) -> str:
    """A seat of a fresh match that will never start (the attacker holds its seat 0)."""
    with grpc.insecure_channel(target) as ch:
        created = referee_pb2_grpc.RefereeServiceStub(ch).CreateMatch(referee_pb2.CreateMatchRequest(
            seats=[referee_pb2.SeatSpec(name="x"), referee_pb2.SeatSpec(name="y")], connect_timeout_ms=600_000))
        return str(created.seat_tokens[0].token)


def flood(target: str, rate: int, seconds: float) -> dict[str, int]:
    host, _, port = target.rpartition(":")
    hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token=_seat_token(target), protocol_version=1)).SerializeToString()
    junk = [bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=7)).SerializeToString(), b"",
            bot_pb2.BotMessage(action=bot_pb2.ActionResponse(match_id="nope")).SerializeToString()]
    sent = reconnects = 0
    end = time.monotonic() + seconds
    conn = RawConnection(host, int(port))
    stream = conn.open_stream([hello])
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            conn.write(stream, [junk[i % 3] for i in range(rate // 20)])
            sent += rate // 20
            if sent % (rate * 2) < rate // 20:  # every ~2 s: a new stream (the old one was cut off)
                stream = conn.open_stream([hello])
                reconnects += 1
        except OSError:
            conn = RawConnection(host, int(port))
            stream = conn.open_stream([hello])
            reconnects += 1
        time.sleep(max(0.0, 0.05 - (time.monotonic() - t)))
    return {"sent": sent, "streams": reconnects + 1}


def noread(target: str, seconds: float) -> dict[str, int]:
    host, _, port = target.rpartition(":")
    conns = []
    for _ in range(10):
        conn = RawConnection(host, int(port))
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token=_seat_token(target), protocol_version=1))
        stream = conn.open_stream([hello.SerializeToString()])
        conns.append((conn, stream))
    ping = bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=2**62)).SerializeToString()
    end, sent = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        for conn, stream in conns:
            try:
                conn.write(stream, [ping] * 10)
                sent += 10
            except OSError:
                pass
        time.sleep(0.1)
    return {"connections": len(conns), "sent": sent}


def reset(target: str, rate: int, seconds: float) -> dict[str, int]:
    host, _, port = target.rpartition(":")
    conn, sent = RawConnection(host, int(port)), 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            conn.rapid_reset(rate // 20)
            sent += rate // 20
        except OSError:  # the server closed it (GOAWAY): again
            conn = RawConnection(host, int(port))
        time.sleep(max(0.0, 0.05 - (time.monotonic() - t)))
    return {"resets": sent}


def idle(target: str, n: int, seconds: float) -> dict[str, int]:
    host, _, port = target.rpartition(":")
    conns = [RawConnection(host, int(port)) for _ in range(n)]
    time.sleep(seconds)
    return {"connections": len(conns)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["flood", "noread", "reset", "idle"])
    parser.add_argument("--target", required=True)
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    if not args.target.startswith("127.0.0.1:"):
        raise SystemExit("attackers run against 127.0.0.1 only")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # all attackers share one core
    print("READY", flush=True)
    if args.mode == "flood":
        done = flood(args.target, args.rate, args.seconds)
    elif args.mode == "noread":
        done = noread(args.target, args.seconds)
    elif args.mode == "reset":
        done = reset(args.target, args.rate, args.seconds)
    else:
        done = idle(args.target, args.n, args.seconds)
    print("DONE " + json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
