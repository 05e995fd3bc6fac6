"""HTTP/2 rapid reset (CVE-2023-44487's class) against a real ``referee serve`` process, from a
raw client that behaves like a real one where it cannot help it (it acknowledges the server's
SETTINGS and answers its PINGs, ``tests/_h2.py``): bursts of HEADERS+RST_STREAM over one
connection must not refuse a single new session, nor end a single running match, on any other
connection."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import grpc

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from tests._bots import Client
from tests._h2 import RawConnection
from tests._wait import HANG_S
from tests.test_bots_anywhere import RefereeProcess

PLAY = "/gin_arena.v2.BotService/Play"
BURSTS = 8
"""Bursts of the attack, one a second."""
BURST = 10_000
"""HEADERS+RST_STREAM pairs in one burst."""
MATCHES = 6
"""Honest matches played during the attack, each seat on its own connection."""


def _attack(address: str, started: threading.Event, stats: dict[str, int]) -> None:
    """``BURSTS`` bursts of ``BURST`` resets, one a second, over one connection (a new one if
    the server closes it)."""
    host, _, port = address.rpartition(":")
    conn = RawConnection(host, int(port))
    stats.update(resets=0, connections=1)
    started.set()
    for _ in range(BURSTS):
        t = time.monotonic()
        try:
            conn.rapid_reset(BURST)
            stats["resets"] += BURST
        except OSError:  # the server closed it: the attacker comes back
            conn.close()
            conn = RawConnection(host, int(port))
            stats["connections"] += 1
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))  # the attacker's pace, not a wait for a result
    stats["goaway"] = int(conn.goaway)
    conn.close()


def _probe(address: str, attacking: threading.Thread) -> dict[str, int]:
    """New sessions, each on a new connection, while the attack lasts (and at least 20): each
    must get its own answer, ``UNAUTHENTICATED`` (its token opens nothing)."""
    hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token="x" * 32, protocol_version=2)).SerializeToString()
    codes: dict[str, int] = {}
    n = 0
    while attacking.is_alive() or n < 20:
        with grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
            play = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)
            try:
                for _ in play(iter([hello]), timeout=HANG_S):
                    pass
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
        codes[code] = codes.get(code, 0) + 1
        n += 1
    return codes


async def _honest(ref: RefereeProcess, started: threading.Event) -> list[str]:
    """``MATCHES`` matches of bots that think a little, started once the attack is on; how each ended."""
    async with grpc.aio.insecure_channel(ref.address) as channel:
        ops = referee_pb2_grpc.RefereeServiceStub(channel)
        tokens = []
        for _ in range(MATCHES):
            created = await ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")],
                gin=gin_pb2.RuleSet(name="classic", target=50)), metadata=ref.metadata)
            tokens.append([t.token for t in created.seat_tokens])
    while not started.is_set():
        await asyncio.sleep(0.01)

    async def think(msg: bot_pb2.RefereeMessage, client: Client) -> common_pb2.Action:
        await asyncio.sleep(0.005)
        legal = list(msg.action_request.legal_actions)
        ends = [a for a in legal if a.gin.kind in (gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_BIG_GIN)]
        return (ends or legal)[0]

    clients = [Client(ref.address, token) for pair in tokens for token in pair]
    await asyncio.wait_for(asyncio.gather(*(c.play(think) for c in clients)), HANG_S)
    endings = []
    for c in clients:
        finished = [m for m in c.received if m.WhichOneof("kind") == "match_finished"]
        endings.append(common_pb2.Termination.Name(finished[0].match_finished.result.termination) if finished
                       else f"no match_finished: {c.status} {c.details}")
    return endings


def test_rapid_reset_from_a_real_client_refuses_and_ends_nothing_on_other_connections(tmp_path: Path) -> None:
    """8 bursts of 10,000 HEADERS+RST_STREAM, one a second, over one connection that
    acknowledged the server's SETTINGS: every new session on another connection meanwhile is
    answered by the service (none ``CANCELLED``: 8-12 of 23 were with gRPC's overload
    protection off), and every honest match played meanwhile ends with its ``match_finished``
    (4 of 8 did not)."""
    ref = RefereeProcess(tmp_path)
    ref.start()
    started = threading.Event()
    stats: dict[str, int] = {}
    attacker = threading.Thread(target=_attack, args=(ref.address, started, stats), daemon=True)
    attacker.start()
    out: dict[str, Any] = {}

    def probe() -> None:
        started.wait(HANG_S)
        out["codes"] = _probe(ref.address, attacker)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    try:
        endings = asyncio.run(_honest(ref, started))
        attacker.join(HANG_S)
        prober.join(HANG_S)
    finally:
        ref.kill()
    print(stats, out, endings)
    assert stats["resets"] >= BURSTS * BURST // 2, stats  # the attack did happen
    assert set(out["codes"]) == {"UNAUTHENTICATED"}, out["codes"]
    assert endings == ["TERMINATION_NORMAL"] * 2 * MATCHES, endings
