"""``WatchMatches`` over gRPC, against a real referee server and a real grpc.aio client: the
stream begins with ``watching``, then each match's ``started`` and ``finished`` in order, numbered
within the referee's instance; a finished match's summary is what ``GetMatch`` says; a client
resumes after the last event it got while the backlog (``match_events_backlog``) holds it and
gets ``lost`` first otherwise; operators only; a watcher that does not read is dropped with
RESOURCE_EXHAUSTED naming ``match_events_queue`` and holds no match up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
import trio

import referee
import referee.lowlevel
from gin_arena.v2 import referee_pb2, referee_pb2_grpc
from referee import games
from referee.gin import RuleSet
from tests._bots import Client
from tests.test_certs_and_operator import ARENA, ENV, _arena, _wait_listening

T = TypeVar("T")
SHORT = RuleSet.preset("short", target=25)
Stream = Any  # a grpc.aio unary-stream call of WatchMatches


def spec(match_id: str) -> referee.MatchSpec:
    return referee.MatchSpec(players=("north", "south"), rules=SHORT, match_id=match_id,
                             time_control=referee.TimeControl(per_move_ms=2000))


async def _await(call: Awaitable[T]) -> T:
    return await call


async def read(stream: Stream, n: int) -> list[referee_pb2.MatchEvent]:
    """The stream's next ``n`` messages (within 60 s)."""
    with trio.fail_after(60):
        return [await referee.aio(_await(stream.read())) for _ in range(n)]


async def play(ref: referee.Referee, match_id: str) -> None:
    table = ref.create_match(spec(match_id))
    async with trio.open_nursery() as n:
        for link in table.links:
            n.start_soon(referee.aio, Client(ref.address, link.token).play())
        await table.finished.wait()


async def abort(ref: referee.Referee, match_id: str) -> None:
    """A match that is cancelled while it waits for its seats: one ``finished`` event (aborted)."""
    table = ref.create_match(spec(match_id))
    table.cancel("test")
    await table.finished.wait()


def kinds(events: list[referee_pb2.MatchEvent]) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    for e in events:
        kind = e.WhichOneof("kind")
        assert kind is not None
        match_id = getattr(e, kind).match_id if kind in ("started", "finished") else ""
        out.append((kind, match_id, e.sequence))
    return out


def watch(ops: referee_pb2_grpc.RefereeServiceStub, token: str, **request: Any) -> Stream:
    return ops.WatchMatches(referee_pb2.WatchMatchesRequest(**request),
                            metadata=referee.lowlevel.operator_metadata(token))


def test_events_come_in_order_and_a_finished_summary_is_what_get_match_says(tmp_path: Path) -> None:
    async def main() -> None:
        async with referee.open_referee(replay_dir=tmp_path) as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            stream = watch(ops, ref.operator_token)
            (first,) = await read(stream, 1)
            assert first.WhichOneof("kind") == "watching" and not first.watching.resumed
            assert first.sequence == 0 and first.referee_instance == ref.events.instance
            await play(ref, "m-1")
            await abort(ref, "m-2")
            got = await read(stream, 3)
            assert kinds(got) == [("started", "m-1", 1), ("finished", "m-1", 2), ("finished", "m-2", 3)]
            assert {e.referee_instance for e in got} == {ref.events.instance}
            assert all(e.time_ms >= first.time_ms > 0 for e in got)
            started, finished, aborted = got
            assert started.started.state == referee_pb2.MATCH_STATE_RUNNING
            assert list(started.started.player_names) == ["north", "south"]
            assert started.started.game_name == referee.DEFAULT_GAME and not started.started.HasField("result")
            md = referee.lowlevel.operator_metadata(ref.operator_token)
            for event, match_id in ((finished, "m-1"), (aborted, "m-2")):
                status = (await referee.aio(_await(ops.GetMatch(
                    referee_pb2.GetMatchRequest(match_id=match_id), metadata=md)))).match
                assert event.finished.result == status.result and event.finished.result.seed
                assert event.finished.replay_path == status.replay_path != ""
                assert event.finished.state == status.state
            assert aborted.finished.state == referee_pb2.MATCH_STATE_ABORTED
            stream.cancel()

            # Filtered by game: a game the referee does not have is refused; another game's
            # matches are passed over (their numbers are simply not seen).
            bad = watch(ops, ref.operator_token, game_names=["no-such-game"])
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await read(bad, 1)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "no-such-game" in str(refused.value.details())
            only_rummy = watch(ops, ref.operator_token, game_names=["rummy"])
            gin_only = watch(ops, ref.operator_token, game_names=[referee.DEFAULT_GAME])
            await read(only_rummy, 1)
            await read(gin_only, 1)
            await abort(ref, "m-3")
            rummy = ref.create_match(referee.MatchSpec(players=("a", "b"), game="rummy",
                                                       rules=games.get("rummy").game.default_rules(),
                                                       match_id="r-1"))
            rummy.cancel("test")
            await rummy.finished.wait()
            assert kinds(await read(only_rummy, 1)) == [("finished", "r-1", 5)]
            assert kinds(await read(gin_only, 1)) == [("finished", "m-3", 4)]
            only_rummy.cancel()
            gin_only.cancel()

    referee.run(main)


def test_a_client_resumes_after_its_last_event_or_is_told_it_lost_some() -> None:
    async def main() -> None:
        limits = referee.Limits(match_events_backlog=3)
        async with referee.open_referee(limits=limits) as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            token, instance = ref.operator_token, ref.events.instance
            stream = watch(ops, token)
            await read(stream, 1)
            await abort(ref, "m-1")
            (one,) = await read(stream, 1)
            stream.cancel()  # the client loses its stream; two matches end meanwhile
            await abort(ref, "m-2")
            await abort(ref, "m-3")

            again = watch(ops, token, after_sequence=one.sequence, referee_instance=one.referee_instance)
            got = await read(again, 3)
            assert got[0].WhichOneof("kind") == "watching" and got[0].watching.resumed and got[0].sequence == 1
            assert kinds(got[1:]) == [("finished", "m-2", 2), ("finished", "m-3", 3)]
            await abort(ref, "m-4")  # and then it follows live
            assert kinds(await read(again, 1)) == [("finished", "m-4", 4)]
            again.cancel()

            up_to_date = watch(ops, token, after_sequence=4, referee_instance=instance)
            (live,) = await read(up_to_date, 1)
            assert live.watching.resumed and live.sequence == 4
            up_to_date.cancel()

            # The backlog keeps the latest 3 events: once 5 is published it holds 3, 4 and 5, so
            # the events after 1 are no longer all there.
            await abort(ref, "m-5")
            late = watch(ops, token, after_sequence=1, referee_instance=instance)
            lost, watching = await read(late, 2)
            assert lost.WhichOneof("kind") == "lost" and "match_events_backlog" in lost.lost.reason
            assert lost.sequence == 5 and watching.sequence == 5 and not watching.watching.resumed
            await abort(ref, "m-6")
            assert kinds(await read(late, 1)) == [("finished", "m-6", 6)]
            late.cancel()

            other = watch(ops, token, after_sequence=3, referee_instance="another-instance")
            lost, watching = await read(other, 2)
            assert lost.WhichOneof("kind") == "lost" and "another-instance" in lost.lost.reason
            assert instance in lost.lost.reason and not watching.watching.resumed
            other.cancel()

            for request, word in (({"after_sequence": 99, "referee_instance": instance}, "past"),
                                  ({"after_sequence": 2}, "referee_instance")):
                bad = watch(ops, token, **request)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await read(bad, 1)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert word in str(refused.value.details())

    referee.run(main)


def test_only_operators_may_watch_matches_even_with_public_watch() -> None:
    async def main() -> None:
        async with referee.open_referee(public_watch=True) as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            table = ref.create_match(spec("m-1"))
            cases: list[tuple[tuple[tuple[str, str], ...], grpc.StatusCode]] = [
                ((), grpc.StatusCode.UNAUTHENTICATED),
                ((("authorization", "Basic x"),), grpc.StatusCode.UNAUTHENTICATED),
                # a seat's token: not an operator
                (referee.lowlevel.operator_metadata(table.links[0].token), grpc.StatusCode.PERMISSION_DENIED),
            ]
            for metadata, code in cases:
                stream = ops.WatchMatches(referee_pb2.WatchMatchesRequest(), metadata=metadata)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await read(stream, 1)
                assert refused.value.code() == code
            assert ref.events.subscribers == 0
            table.cancel("test")
            await table.finished.wait()

    referee.run(main)


def test_a_watcher_that_does_not_read_is_dropped_and_holds_no_match_up() -> None:
    async def main() -> None:
        limits = referee.Limits(match_events_queue=2, waiting_matches=4)
        # A small HTTP/2 window on the client, so that what gRPC buffers fills soon.
        options = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]
        async with referee.open_referee(limits=limits) as ref, \
                grpc.aio.insecure_channel(ref.address, options=options) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            idle = watch(ops, ref.operator_token)
            reader = watch(ops, ref.operator_token)
            await read(idle, 1)
            await read(reader, 1)
            assert ref.events.subscribers == 2
            published = 0
            with trio.fail_after(120):
                while ref.events.subscribers == 2:  # each a finished match, at full speed
                    published += 1
                    await abort(ref, f"m-{published}")
                    assert kinds(await read(reader, 1)) == [("finished", f"m-{published}", published)]
            assert ref.events.subscribers == 1  # the idle one went, the reader stays
            seen = 0
            with pytest.raises(grpc.aio.AioRpcError) as dropped:
                while True:
                    (event,) = await read(idle, 1)
                    seen += 1
                    assert event.sequence == seen  # what was queued, in order, then the status
            assert dropped.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "match_events_queue" in str(dropped.value.details())
            assert "2 match events were not read" in str(dropped.value.details())
            assert seen < published
            await abort(ref, "after")  # the referee goes on; the reader still follows
            assert kinds(await read(reader, 1)) == [("finished", "after", published + 1)]
            reader.cancel()

    referee.run(main)


def _first_line(fd: int) -> str:
    """A process's first line of output, read from its pipe a byte at a time: ``readline()``
    on the pipe's buffered reader may take the following lines into its buffer too, where
    ``communicate()`` (which reads the pipe itself) never sees them — a resume's ``watching``
    line and the held event after it often arrive together."""
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
    return line.decode()


def test_arena_operator_events_follows_a_referee_process_and_resumes(tmp_path: Path) -> None:
    """``arena operator events`` against a ``referee serve`` process: a line per event, and a
    resume after the last one it printed (or ``lost`` for another instance)."""
    serve = subprocess.Popen([*ARENA[:-1], "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays", "r"],
                             cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = _wait_listening(serve).split()[3]
        conn = ["operator", "--referee", address, "--operator-token-file", "operator-token"]

        def follow(*args: str) -> tuple[subprocess.Popen[str], str]:
            proc = subprocess.Popen([*ARENA, *conn, "events", *args], cwd=tmp_path, env=ENV, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert proc.stdout is not None
            return proc, _first_line(proc.stdout.fileno())  # the first line: the subscription is live

        def end_a_match(match_id: str) -> None:
            for action in (["create", "--player", "a", "--player", "b", "--match-id", match_id],
                           ["cancel", match_id, "--reason", "not needed"]):
                done = _arena(tmp_path, *conn, *action)
                assert done.returncode == 0, done.stderr

        events, first = follow("--count", "1")
        assert first.startswith("watching: referee instance ") and first.rstrip().endswith("live after event 0")
        instance = first.split()[3].rstrip(",")
        end_a_match("one")
        out, err = events.communicate(timeout=60)
        assert events.returncode == 0, err
        assert out.splitlines() == [f"#1 finished one ({referee.DEFAULT_GAME}; a b): aborted, no winner (aborted): "
                                    "not needed"]

        end_a_match("two")  # while nobody follows
        resumed, first = follow("--after", "1", "--instance", instance, "--count", "1", "--json")
        out, err = resumed.communicate(timeout=60)
        assert resumed.returncode == 0, err
        watching, two = json.loads(first), json.loads(out)
        assert watching["watching"] == {"resumed": True} and watching["sequence"] == "1"
        assert two["sequence"] == "2" and two["finished"]["matchId"] == "two"
        assert two["finished"]["state"] == "MATCH_STATE_ABORTED" and two["refereeInstance"] == instance

        other, first = follow("--after", "1", "--instance", "gone", "--count", "1")
        assert first.startswith("lost: the events are of referee instance 'gone'")
        end_a_match("three")
        out, err = other.communicate(timeout=60)
        assert other.returncode == 0, err
        lines = out.splitlines()
        assert lines[0].endswith("live after event 2") and lines[1].startswith("#3 finished three")

        refused = _arena(tmp_path, "operator", "--referee", address, "events", "--count", "1")  # no token
        assert refused.returncode == 1 and "operator token" in refused.stderr
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)


def test_a_stream_ends_ok_when_the_referee_stops() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref:
            ch = grpc.aio.insecure_channel(ref.address)
            stream = watch(referee_pb2_grpc.RefereeServiceStub(ch), ref.operator_token)
            await read(stream, 1)
            assert ref.open_streams == 1  # it holds a stream slot
        try:
            with trio.fail_after(30):
                assert await referee.aio(_await(stream.read())) is grpc.aio.EOF  # type: ignore[attr-defined]
                assert await referee.aio(_await(stream.code())) == grpc.StatusCode.OK
        finally:
            await referee.aio(ch.close(None))

    referee.run(main)


def test_the_spectator_log_gives_its_first_event_without_splitting_the_rest_live_and_packed() -> None:
    from referee.table.spectators import SpectatorLog

    log = SpectatorLog()
    assert log.first() is None
    events = [b"header-bytes", b"", b"x" * 300, b"last"]
    for data in events:
        log.add(data)
        assert log.first() == events[0]
    assert log.events() == events
    log.pack()
    assert log.first() == events[0] and log.events() == events
