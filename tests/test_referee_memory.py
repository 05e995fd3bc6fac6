"""Memory that comes back: a referee that forgets finished matches frees them at once (no
reference cycles left for a full collection), so thousands of abandoned matches leave the
live match objects and the process's RSS bounded."""

from __future__ import annotations

import asyncio
import gc
import os
import weakref
from pathlib import Path
from typing import Any

import pytest
import trio

import referee
from referee import Limits, MatchSpec


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
def test_thousands_of_abandoned_matches_give_their_memory_back() -> None:
    kept = 100
    seen: dict[int, tuple[int, float]] = {}

    async def main() -> None:
        tables: list[weakref.ref[referee.Table]] = []
        async with referee.open_referee(limits=Limits(finished_matches=kept, waiting_matches=10_000)) as ref:
            gc.collect()
            gc.disable()  # what the referee frees must come back without a collection
            try:
                for i in range(1, 5_001):
                    tables.append(weakref.ref(ref.create_match(MatchSpec(players=("a", "b"), connect_timeout_ms=1))))
                    if i % 250 == 0:  # let them time out (no seat ever connects: abandoned)
                        while ref.waiting:
                            await trio.sleep(0.005)
                    if i in (500, 5_000):
                        await trio.sleep(0.05)
                        seen[i] = (sum(r() is not None for r in tables), _rss_mb())
            finally:
                gc.enable()

    referee.run(main)
    print(f"after 500: {seen[500][0]} live tables, RSS {seen[500][1]:.1f} MB; "
          f"after 5000: {seen[5_000][0]} live tables, RSS {seen[5_000][1]:.1f} MB")
    assert seen[500][0] <= kept and seen[5_000][0] <= kept
    assert seen[5_000][1] <= seen[500][1] + 10


def test_matches_whose_seats_say_hello_and_vanish_are_freed_without_a_collection(tmp_path: Path) -> None:
    """Issue 20: seats that connect over gRPC, say hello and vanish; the match ends when its
    reconnect grace runs out, its replay is written and, past ``finished_matches``, it is
    forgotten. Forgotten matches must be freed by reference counting: the long-lived server's
    tuned collector reaches them only at a rare full collection, and until then each left ~16 KB
    (a reference cycle through the journal's opener, and the forfeiting fault's traceback)."""
    import grpc

    from gin_arena.v2 import bot_pb2, bot_pb2_grpc

    kept = 20
    seen: dict[str, int] = {}

    async def vanish(address: str, token: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            stub: Any = bot_pb2_grpc.BotServiceStub(channel)
            call: Any = stub.Play()
            await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="v", token=token, protocol_version=2)))
            eof = grpc.aio.EOF  # type: ignore[attr-defined]
            while (msg := await call.read()) is not eof and msg.WhichOneof("kind") != "match_started":
                pass
            call.cancel()

    async def both(address: str, tokens: list[str]) -> None:
        await asyncio.gather(*(vanish(address, token) for token in tokens))

    async def main() -> None:
        tables: list[weakref.ref[referee.Table]] = []
        async with referee.open_referee(replay_dir=tmp_path, limits=Limits(finished_matches=kept)) as ref:
            gc.collect()
            gc.disable()  # what the referee forgets must come back without a collection
            try:
                for _ in range(120):
                    table = ref.create_match(MatchSpec(players=("a", "b"), reconnect_grace_ms=1))
                    tables.append(weakref.ref(table))
                    await referee.aio(both(ref.address, [link.token for link in table.links]))
                    await table.finished.wait()
                    del table
                await trio.sleep(0.05)
                seen["live"] = sum(r() is not None for r in tables)
            finally:
                gc.enable()

    referee.run(main)
    assert seen["live"] <= kept, seen
