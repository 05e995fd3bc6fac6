"""The operator service, health and reflection over gRPC, and spectators seeing public
information only."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import grpc
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import referee
import referee.lowlevel
from gin_arena.v2 import common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from tests._bots import Client

T = TypeVar("T")


def test_create_watch_get_list_and_cancel_over_grpc() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            md = referee.lowlevel.operator_metadata(ref.operator_token)
            created = await referee.aio(_reply(ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="north"), referee_pb2.SeatSpec(name="south")],
                gin=gin_pb2.RuleSet(name="short", target=25),
                time_control=common_pb2.TimeControl(text="st=2 timemargin=100"),
                match_id="m-1",
            ), metadata=md)))
            assert created.match_id == "m-1" and len(created.seat_tokens) == 2
            assert all(len(t.token) >= 22 for t in created.seat_tokens)  # >= 128 bits
            watch = ops.WatchMatch(referee_pb2.WatchMatchRequest(match_id="m-1", from_start=True), metadata=md)
            seen: list[referee_pb2.SpectatorEvent] = []

            async def spectate() -> None:
                async for ev in watch:
                    seen.append(ev)

            table = ref.tables["m-1"]
            async with trio.open_nursery() as n:
                n.start_soon(referee.aio, spectate())
                for t in created.seat_tokens:
                    n.start_soon(referee.aio, Client(ref.address, t.token).play())
                await table.finished.wait()
            get = ops.GetMatch(referee_pb2.GetMatchRequest(match_id="m-1"), metadata=md)
            status = (await referee.aio(_reply(get))).match
            assert status.state == referee_pb2.MATCH_STATE_FINISHED
            assert status.result.termination == common_pb2.TERMINATION_NORMAL
            assert list(status.player_names) == ["north", "south"]
            kinds = [e.WhichOneof("kind") for e in seen]
            assert kinds[0] == "header" and kinds[-1] == "match_finished" and "deal_finished" in kinds
            # Spectators see public information only.
            for e in seen:
                if e.WhichOneof("kind") == "event" and e.event.gin.kind in (
                    gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_KNOCK
                ):
                    assert e.event.gin.card == ""
                if e.WhichOneof("kind") == "deal_finished":
                    assert e.deal_finished.gin.knock_discard == ""

            # A spectator who comes after the end (the log is kept deflated then) gets the same story.
            async def collect(from_start: bool) -> list[referee_pb2.SpectatorEvent]:
                request = referee_pb2.WatchMatchRequest(match_id="m-1", from_start=from_start)
                watch = ops.WatchMatch(request, metadata=md)
                return [ev async for ev in watch]

            assert await referee.aio(collect(True)) == seen
            assert await referee.aio(collect(False)) == [seen[0], seen[-1]]  # over: header and result

            missing = await referee.aio(_code(ops.GetMatch(referee_pb2.GetMatchRequest(match_id="nope"), metadata=md)))
            assert missing == grpc.StatusCode.NOT_FOUND
            bad = await referee.aio(_code(ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="a")]), metadata=md)))
            assert bad == grpc.StatusCode.INVALID_ARGUMENT
            bad_rules = await referee.aio(_code(ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")],
                gin=gin_pb2.RuleSet(name="nonsense")), metadata=md)))
            assert bad_rules == grpc.StatusCode.INVALID_ARGUMENT

            second = await referee.aio(_reply(ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")]), metadata=md)))
            listed = await referee.aio(_reply(ops.ListMatches(referee_pb2.ListMatchesRequest(
                state_filter=referee_pb2.MATCH_STATE_WAITING_FOR_PLAYERS), metadata=md)))
            assert [m.match_id for m in listed.matches] == [second.match_id]
            cancelled = await referee.aio(_reply(ops.CancelMatch(referee_pb2.CancelMatchRequest(
                match_id=second.match_id, reason="test over"), metadata=md)))
            del cancelled
            await ref.tables[second.match_id].finished.wait()
            report = ref.tables[second.match_id].report
            assert report is not None and report.termination == "aborted" and report.detail == "test over"

    referee.run(main)


async def _reply(call: Awaitable[T]) -> T:
    """Await a grpc.aio call (an awaitable, not a coroutine) inside a coroutine for ``referee.aio``."""
    return await call


async def _code(call: Awaitable[object]) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return e.code()
    raise AssertionError("expected an error status")


def test_health_and_reflection_work_out_of_the_box() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref, grpc.aio.insecure_channel(ref.address) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for service in ("", "gin_arena.v2.BotService", "gin_arena.v2.RefereeService"):
                resp = await referee.aio(health.Check(health_pb2.HealthCheckRequest(service=service)))
                assert resp.status == health_pb2.HealthCheckResponse.SERVING
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)

            async def list_services() -> list[str]:
                call = refl.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
                async for r in call:
                    return [s.name for s in r.list_services_response.service]
                return []

            names = await referee.aio(list_services())
            assert {"gin_arena.v2.BotService", "gin_arena.v2.RefereeService", "grpc.health.v1.Health"} <= set(names)

    referee.run(main)


def test_seat_tokens_are_long_random_and_safe_on_a_command_line() -> None:
    from referee import MatchSpec
    from referee.lowlevel import Table

    tables = [Table(MatchSpec(players=("a", "b")), None, lambda t: None) for _ in range(200)]
    tokens = [link.token for table in tables for link in table.links]
    assert len(set(tokens)) == len(tokens)
    for token in tokens:
        assert len(token) * 4 >= 128 and not token.startswith("-") and token.isalnum()
