"""``ListMatches`` never grows past ``Limits.list_bytes`` (a default gRPC client refuses replies
over 4 MiB): matches past the bound are left off, the trailing metadata says how many, and the
request metadata ``gin-arena-after`` pages through the rest."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

import referee
import referee.lowlevel
from gin_arena.v2 import referee_pb2, referee_pb2_grpc
from referee import Limits
from referee.transport.service import LIST_AFTER_KEY, LIST_LEFT_OFF_KEY

LONGEST = Limits().name_length


async def _call(call: Any) -> Any:
    return await call


async def _create(ops: Any, meta: tuple[tuple[str, str], ...], n: int) -> list[str]:
    ids = []
    for i in range(n):
        request = referee_pb2.CreateMatchRequest(
            seats=[referee_pb2.SeatSpec(name=(f"{i}-" + "n" * LONGEST)[:LONGEST]),
                   referee_pb2.SeatSpec(name=(f"{i}-" + "s" * LONGEST)[:LONGEST])],
            match_id=(f"{i:03d}-" + "m" * LONGEST)[:LONGEST], connect_timeout_ms=600_000)
        ids.append((await ops.CreateMatch(request, metadata=meta)).match_id)
    return ids


async def _page(ops: Any, meta: tuple[tuple[str, str], ...],
                after: str | None) -> tuple[list[str], int, int]:
    extra = ((LIST_AFTER_KEY, after),) if after is not None else ()
    call = ops.ListMatches(referee_pb2.ListMatchesRequest(limit=100_000), metadata=meta + extra)
    reply = await call
    left = dict(await call.trailing_metadata())[LIST_LEFT_OFF_KEY]
    return [m.match_id for m in reply.matches], int(left), reply.ByteSize()


def test_list_matches_stays_under_its_byte_bound_and_pages_through_the_rest() -> None:
    bound = 3_000

    async def main() -> None:
        async with referee.open_referee(limits=Limits(list_bytes=bound)) as ref, \
                grpc.aio.insecure_channel(ref.address) as ch:
            ops, meta = referee_pb2_grpc.RefereeServiceStub(ch), referee.lowlevel.operator_metadata(ref.operator_token)
            created = await referee.aio(_create(ops, meta, 40))
            listed: list[str] = []
            after = None
            while True:
                ids, left, size = await referee.aio(_page(ops, meta, after))
                assert ids and size <= bound
                listed += ids
                assert left == 40 - len(listed)
                if not left:
                    break
                after = ids[-1]
            assert len(listed) > len(ids)  # more than one page was needed
            assert listed == created[::-1]  # every match once, newest first
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await referee.aio(_page(ops, meta, "no-such-match"))
            assert e.value.code() == grpc.StatusCode.NOT_FOUND and LIST_AFTER_KEY in str(e.value.details())

    referee.run(main)


def test_the_default_bound_is_inside_a_default_clients_limit_and_names_are_bounded() -> None:
    assert Limits().list_bytes < 4 * 1024 * 1024

    async def main() -> None:
        async with referee.open_referee() as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops, meta = referee_pb2_grpc.RefereeServiceStub(ch), referee.lowlevel.operator_metadata(ref.operator_token)
            for field, request in (
                ("seats[0].name", referee_pb2.CreateMatchRequest(seats=[
                    referee_pb2.SeatSpec(name="n" * (LONGEST + 1)), referee_pb2.SeatSpec(name="b")])),
                ("match_id", referee_pb2.CreateMatchRequest(match_id="m" * (LONGEST + 1), seats=[
                    referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")])),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    await referee.aio(_call(ops.CreateMatch(request, metadata=meta)))
                assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and field in str(e.value.details())

    referee.run(main)
