"""``streams_per_connection`` never stalls silently (issue 20): a client that opens more streams
over one connection than the referee takes gets a clear status for each stream past the limit
(``RESOURCE_EXHAUSTED``, naming the limit) instead of waiting unanswered, and the kit, when one
process runs many sessions, opens more connections. A real ``referee serve`` process; the
clients in this one."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from referee.transport.server import ANNOUNCED_STREAMS_FACTOR
from sample_bots.kit import BotConfig, play
from sample_bots.kit import channels as kit_channels
from sample_bots.kit.actions import legal_texts
from tests._wait import HANG_S
from tests.test_bots_anywhere import RefereeProcess

EOF_: object = grpc.aio.EOF  # type: ignore[attr-defined]


async def _create(address: str, metadata: tuple[tuple[str, str], ...], matches: int) -> list[str]:
    """``matches`` two-seat matches; their seat tokens."""
    async with grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        ops = referee_pb2_grpc.RefereeServiceStub(channel)
        tokens: list[str] = []
        for _ in range(matches):
            created = await ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")],
                gin=gin_pb2.RuleSet(name="short")), metadata=metadata)
            tokens += [t.token for t in created.seat_tokens]
        return tokens


def _hellos(tmp_path: Path, streams: int) -> dict[str, int]:
    """``streams`` ``Play`` streams at once over one connection to a referee that takes 40 a
    connection (each its own hello); how many got which first answer."""
    ref = RefereeProcess(tmp_path, limits=["streams_per_connection=40"])
    ref.start()

    async def main() -> dict[str, int]:
        tokens = await _create(ref.address, ref.metadata, (streams + 1) // 2)
        calls = []
        async with grpc.aio.insecure_channel(ref.address, options=[("grpc.use_local_subchannel_pool", 1)]) as one:
            stub: Any = bot_pb2_grpc.BotServiceStub(one)
            await referee_pb2_grpc.RefereeServiceStub(one).ListMatches(  # the server's SETTINGS are in
                referee_pb2.ListMatchesRequest(limit=1), metadata=ref.metadata)

            async def hello(token: str) -> str:
                call = stub.Play()
                calls.append(call)
                try:
                    with contextlib.suppress(grpc.aio.UsageError):  # (written to a refused stream)
                        await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="b", token=token,
                                                                                protocol_version=2)))
                    first = await call.read()
                except grpc.aio.AioRpcError:
                    pass  # its status, below
                else:
                    if first is not EOF_:
                        kind: str = first.WhichOneof("kind")
                        return kind  # (the stream stays open: it holds its slot)
                return f"{(await call.code()).name}: {await call.details()}"

            answers = await asyncio.wait_for(asyncio.gather(*(hello(t) for t in tokens[:streams])), HANG_S)
            for call in calls:
                call.cancel()
        counts: dict[str, int] = {}
        for answer in answers:
            counts[answer] = counts.get(answer, 0) + 1
        return counts

    try:
        return asyncio.run(main())
    finally:
        ref.kill()


REFUSED = ("RESOURCE_EXHAUSTED: this connection has 40 streams open (limit streams_per_connection): open "
           "another connection for more")


def test_hellos_past_the_limit_up_to_the_announced_bound_are_refused_naming_it(tmp_path: Path) -> None:
    """As many ``Play`` streams at once over one connection as its SETTINGS announce (twice
    the referee's 40): 40 welcomed, and each of the 40 others refused by the service with
    ``RESOURCE_EXHAUSTED`` naming ``streams_per_connection``, none by gRPC's core."""
    counts = _hellos(tmp_path, ANNOUNCED_STREAMS_FACTOR * 40)
    assert counts == {"welcome": 40, REFUSED: 40}, counts


def test_a_thousand_hellos_over_one_connection_all_get_an_answer(tmp_path: Path) -> None:
    """1,000 ``Play`` streams at once over one connection to a referee that takes 40 a
    connection: 40 welcomed, and every one of the 960 others answered at once, none waits.
    Past the announced bound the answer is not always the service's: with gRPC's overload
    protection on (the referee's defence against rapid reset, docs/security.md), the core
    refuses a new stream while refused ones are still being freed (``UNAVAILABLE``, or
    ``INTERNAL`` when the refusal meets the hello's write); a client keeps to the bound by
    opening another connection past the limit, as the kit does."""
    counts = _hellos(tmp_path, 1_000)
    print(counts)
    core = {"UNAVAILABLE: Stream removed (RST_STREAM (Received RST_STREAM with error code 7))",
            "INTERNAL: Internal error from Core"}
    assert counts.pop("welcome") == 40 and counts.get(REFUSED, 0) >= 40, counts
    assert sum(counts.values()) == 960 and set(counts) <= {REFUSED, *core}, counts


def test_one_process_with_many_kit_sessions_opens_more_connections(tmp_path: Path) -> None:
    """150 sessions in one process against a referee that takes 60 streams a connection: all of
    them play their match (a connection per 50 sessions), none is refused."""
    ref = RefereeProcess(tmp_path, limits=["streams_per_connection=60"])
    ref.start()

    def decide(request: bot_pb2.ActionRequest) -> str:
        legal = legal_texts(request)
        return next((a for a in legal if a.startswith(("knock", "big_gin", "gin"))), legal[0])

    async def main() -> tuple[list[int], int]:
        tokens = await _create(ref.address, ref.metadata, 75)
        most = 0

        async def count() -> None:
            nonlocal most
            while True:
                open_now = sum(len(v) for v in kit_channels.pool()._open.values())
                most = max(most, open_now)
                await asyncio.sleep(0.05)

        counter = asyncio.ensure_future(count())
        results = await asyncio.wait_for(asyncio.gather(*(
            play(decide, BotConfig(token=t, referee=ref.address, name=f"s{i}", retries=0))
            for i, t in enumerate(tokens))), HANG_S * 2)
        counter.cancel()
        return [r.exit_code for r in results if not r.results], most

    try:
        failed, most = asyncio.run(main())
    finally:
        ref.kill()
    assert failed == [] and most == 3
