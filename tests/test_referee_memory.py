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
import referee.lowlevel
from referee import Limits, MatchSpec


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
def test_thousands_of_abandoned_matches_give_their_memory_back() -> None:
    kept = 100
    seen: dict[int, tuple[int, float]] = {}

    async def main() -> None:
        tables: list[weakref.ref[referee.lowlevel.Table]] = []
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
        tables: list[weakref.ref[referee.lowlevel.Table]] = []
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


def test_a_finished_match_is_kept_as_a_record_that_answers_as_its_table_did(tmp_path: Path) -> None:
    """A finished match is kept as a compact record (``referee.lowlevel.FinishedMatch``): once its seats'
    sessions are gone the whole table — its flow and the game's match — is freed by reference
    counting (the collector off), while ``GetMatch``, ``WatchMatch`` from the start and the web's
    page of the match answer as the table did."""
    import grpc

    from arena.web import data
    from gin_arena.v2 import referee_pb2, referee_pb2_grpc
    from referee.transport.service import match_status
    from tests._bots import Client

    seen: dict[str, Any] = {}

    async def main() -> None:
        async with referee.open_referee(replay_dir=tmp_path) as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops: Any = referee_pb2_grpc.RefereeServiceStub(ch)
            md = referee.lowlevel.operator_metadata(ref.operator_token)
            gc.collect()
            gc.disable()
            try:
                table = ref.create_match(MatchSpec(players=("north", "south"), match_id="m-1"))
                refs: dict[str, weakref.ref[Any]] = {"table": weakref.ref(table), "flow": weakref.ref(table.flow)}
                clients = [Client(ref.address, link.token) for link in table.links]
                async with trio.open_nursery() as nursery:
                    for client in clients:
                        nursery.start_soon(referee.aio, client.play())
                    await table.finished.wait()
                    match_type = type(table.match)  # (a slotted class: no weak references to it)
                    held = ref.tables["m-1"]
                    assert isinstance(held, referee.lowlevel.FinishedMatch)  # (not the table)
                # What the whole table answers (its seats are gone: none connected).
                expected = match_status(table)
                del expected.connected[:]
                expected.connected.extend([False, False])
                events = table.spectator_log.events()
                page = {**data._table(table), "over": True, "header": data.spectator_header(table),
                        "view": data.spectator_view(table)}
                assert page["view"] is not None and page["header"] is not None
                del table, held
                await trio.sleep(0.05)
                seen["alive"] = sorted(name for name, r in refs.items() if r() is not None)
                seen["matches"] = sum(type(o) is match_type for o in gc.get_objects())
                got = await referee.aio(_await(ops.GetMatch(referee_pb2.GetMatchRequest(match_id="m-1"), metadata=md)))
                seen["status"] = (got.match, expected)
                watch = ops.WatchMatch(referee_pb2.WatchMatchRequest(match_id="m-1", from_start=True), metadata=md)
                watched = await referee.aio(_collect(watch))
                seen["events"] = ([e.SerializeToString() for e in watched],
                                  [referee_pb2.SpectatorEvent.FromString(e).SerializeToString() for e in events])
                seen["page"] = (data.live_match(ref, "m-1"), page)
            finally:
                gc.enable()

    referee.run(main)
    assert seen["alive"] == [] and seen["matches"] == 0, (seen["alive"], seen["matches"])
    got_status, expected_status = seen["status"]
    assert got_status.state == 3 and got_status.result.termination, got_status  # MATCH_STATE_FINISHED
    assert got_status == expected_status
    watched, logged = seen["events"]
    assert len(watched) > 3 and watched == logged
    live, page = seen["page"]
    assert live == page


async def _await(call: Any) -> Any:
    return await call


async def _collect(call: Any) -> list[Any]:
    return [event async for event in call]


def test_a_final_view_that_cannot_be_drawn_keeps_the_record_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record draws the match's final spectator view once, at its end: a game's presentation
    that fails then is logged and the record kept without a view (``GetMatch`` and the report
    are whole), never an error that would end the referee."""
    from referee import games
    from tests._bots import Client

    presentation = games.get(referee.DEFAULT_GAME).presentation
    assert presentation is not None

    def broken(view: Any) -> dict[str, Any]:
        raise RuntimeError("the presentation broke")

    monkeypatch.setattr(type(presentation), "present", lambda self, view: broken(view))
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with referee.open_referee() as ref:
            table = ref.create_match(MatchSpec(players=("a", "b"), match_id="m-1"))
            tokens = [link.token for link in table.links]
            async with trio.open_nursery() as nursery:
                for token in tokens:
                    nursery.start_soon(referee.aio, Client(ref.address, token).play())
            await table.finished.wait()
            held = ref.tables["m-1"]
            seen.update(kind=type(held).__name__, view=held.spectator_presentation(), report=held.report,
                        position=held.match)

    referee.run(main)
    assert seen["kind"] == "FinishedMatch" and seen["view"] is None, seen
    assert seen["report"] is not None and seen["report"].termination == "normal", seen
    assert seen["position"] is not None and seen["position"].game_number >= 1, seen
