"""The referee's limits (``referee.model.limits.Limits``) over real gRPC: requests beyond a bound are
refused naming the field, clients that take more than their share are cut off with a status
that says which limit, and the matches beside them play on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
import pytest
import trio

import referee
import referee.lowlevel
from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from referee import Limits, MatchSpec
from referee.gin import RuleSet
from referee.transport.server import ANNOUNCED_STREAMS_FACTOR
from tests._bots import Client
from tests._h2 import RawConnection

T = TypeVar("T")
PLAY = "/gin_arena.v2.BotService/Play"


async def _reply(call: Awaitable[T]) -> T:
    return await call


def _request(**fields: Any) -> referee_pb2.CreateMatchRequest:
    base: dict[str, Any] = {"seats": [referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")]}
    return referee_pb2.CreateMatchRequest(**{**base, **fields})


def _ops(ref: referee.Referee) -> tuple[tuple[str, str], ...]:
    return referee.lowlevel.operator_metadata(ref.operator_token)


def with_referee(body: Callable[[referee.Referee, grpc.aio.Channel], Awaitable[None]],
                 limits: Limits | None = None, public_watch: bool = False) -> None:
    async def main() -> None:
        async with referee.open_referee(limits=limits, public_watch=public_watch) as ref, \
                grpc.aio.insecure_channel(ref.address) as ch:
            await body(ref, ch)

    referee.run(main)


def test_limits_parse_validate_and_name_the_bad_key() -> None:
    assert Limits.parse(["waiting_matches=5", "outbound-bytes=4_096"]) == Limits(waiting_matches=5,
                                                                               outbound_bytes=4096)
    with pytest.raises(ValueError, match="no_such_limit"):
        Limits.parse(["no_such_limit=1"])
    with pytest.raises(ValueError, match="not an integer"):
        Limits.parse(["games=many"])
    with pytest.raises(ValueError, match="positive"):
        Limits(games=0)
    with pytest.raises(ValueError, match="wire"):
        Limits(time_control_ms=2**32)


REFUSED = [
    ("connect_timeout_ms", {"connect_timeout_ms": 4_000_000_000}),
    ("reconnect_grace_ms", {"reconnect_grace_ms": 4_000_000_000}),
    ("rules.games", {"gin": gin_pb2.RuleSet(games=10**9)}),
    ("rules.target", {"gin": gin_pb2.RuleSet(target=10**9)}),
    ("time_control.per_move_ms", {"time_control": common_pb2.TimeControl(
        per_move=common_pb2.FixedPerMove(move_ms=4_000_000_000))}),
    ("time_control.margin_ms", {"time_control": common_pb2.TimeControl(text="st=1 timemargin=4000000000")}),
    ("time_control.per_move_ms", {"time_control": common_pb2.TimeControl(text="st=9000000")}),
    ("max_actions_per_deal", {"max_actions_per_deal": 10**9}),
    ("seats[1].name", {"seats": [referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b" * 65)]}),
    ("match_id", {"match_id": "m" * 65}),
]


@pytest.mark.parametrize(("field", "fields"), REFUSED, ids=[f"{f}-{i}" for i, (f, _) in enumerate(REFUSED)])
def test_create_match_beyond_a_bound_is_refused_naming_the_field(field: str, fields: dict[str, Any]) -> None:
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        ops = referee_pb2_grpc.RefereeServiceStub(ch)
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await referee.aio(_reply(ops.CreateMatch(_request(**fields), metadata=_ops(ref))))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (e.value.details() or "").startswith(field + ":"), e.value.details()
        assert not ref.tables  # nothing was created
        # the referee still takes a sound request
        await referee.aio(_reply(ops.CreateMatch(_request(), metadata=_ops(ref))))

    with_referee(body)


def test_waiting_matches_are_bounded_per_server() -> None:
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        ops = referee_pb2_grpc.RefereeServiceStub(ch)
        for _ in range(3):
            await referee.aio(_reply(ops.CreateMatch(_request(), metadata=_ops(ref))))
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await referee.aio(_reply(ops.CreateMatch(_request(), metadata=_ops(ref))))
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "waiting_matches" in (e.value.details() or "")
        assert len(ref.tables) == 3

    with_referee(body, Limits(waiting_matches=3))


async def _status(call: Any) -> tuple[grpc.StatusCode, str]:
    """Read a stream to its end; its status and text."""
    try:
        async for _ in call:
            pass
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details() or ""
    return await call.code(), await call.details() or ""


def test_streams_are_bounded_per_server() -> None:
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        play = ch.stream_stream(PLAY, request_serializer=None, response_deserializer=bot_pb2.RefereeMessage.FromString)
        held = [play(None) for _ in range(2)]
        for call in held:  # the server has opened them (each waits for its hello)
            await referee.aio(call.wait_for_connection())
        while ref.open_streams < 2:
            await trio.sleep(0.01)
        code, detail = await referee.aio(_status(play(None)))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "streams_per_server" in detail
        for call in held:
            call.cancel()

    with_referee(body, Limits(streams_per_server=2))


def _raw_play(ch: grpc.aio.Channel) -> Any:
    play = ch.stream_stream(PLAY, request_serializer=None, response_deserializer=bot_pb2.RefereeMessage.FromString)
    return play(None)


def _spec(**kw: Any) -> MatchSpec:
    return MatchSpec(players=("a", "b"), rules=RuleSet.classic(target=60), **kw)


@pytest.mark.parametrize("kind", ["ping", "empty", "unknown_match"])
def test_every_inbound_message_counts_against_the_stream_budget(kind: str) -> None:
    """Pings, empty messages and actions for a match the stream does not play each count."""
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        table = ref.create_match(_spec(connect_timeout_ms=60_000))
        call = _raw_play(ch)
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token=table.links[0].token, protocol_version=2))
        msg = {"ping": bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=1)), "empty": bot_pb2.BotMessage(),
               "unknown_match": bot_pb2.BotMessage(action=bot_pb2.ActionResponse(match_id="elsewhere"))}[kind]

        async def flood() -> tuple[grpc.StatusCode, str]:
            await call.write(hello.SerializeToString())
            data = msg.SerializeToString()
            try:
                for _ in range(2_000):
                    await call.write(data)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass
            return await _status(call)

        code, detail = await referee.aio(flood())
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "inbound_burst" in detail, detail

    with_referee(body, Limits(inbound_burst=50, inbound_per_second=1))


def test_a_client_that_never_reads_is_cut_off_and_never_slows_a_match() -> None:
    """A raw HTTP/2 client floods pings and never reads a byte: flow control stops the server's
    writes, the pongs queue up to the limit and the stream is ended; a match beside plays on."""
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        idle = ref.create_match(_spec(connect_timeout_ms=60_000))
        match = ref.create_match(_spec())
        host, _, port = ref.address.rpartition(":")
        conn = await trio.to_thread.run_sync(RawConnection, host, int(port))
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token=idle.links[0].token, protocol_version=2))
        ping = bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=2**62)).SerializeToString()
        stream = await trio.to_thread.run_sync(conn.open_stream, [hello.SerializeToString()])
        async with trio.open_nursery() as n:
            for link in match.links:
                n.start_soon(referee.aio, Client(ref.address, link.token).play())
            while idle.links[0].session is None:
                await trio.sleep(0.01)
            session = idle.links[0].session
            await trio.to_thread.run_sync(conn.write, stream, [ping] * 6_000)  # 6,000 pongs: > 64 KiB unread
            while idle.links[0].session is not None:  # the stream was ended
                await trio.sleep(0.01)
            await match.finished.wait()
        code, detail = await referee.aio(session.closed)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "outbound_bytes" in detail, detail
        assert match.report is not None and match.report.termination == "normal"
        conn.close()

    with_referee(body, Limits(outbound_bytes=16_384, inbound_burst=1_000_000, inbound_per_second=1_000_000))


def test_a_spectator_that_never_reads_is_dropped_and_the_match_plays_on() -> None:
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        table = ref.create_match(MatchSpec(players=("a", "b"), rules=RuleSet.classic(games=1)))
        host, _, port = ref.address.rpartition(":")
        # A stream window of 0: the server cannot send this spectator a byte, so its queue fills
        # from the first events on (not after the connection's 64 KiB of them: ten games).
        conn = await trio.to_thread.run_sync(RawConnection, host, int(port), 0)
        request = referee_pb2.WatchMatchRequest(match_id=table.match_id).SerializeToString()
        await trio.to_thread.run_sync(conn.open_stream, [request], "/gin_arena.v2.RefereeService/WatchMatch")
        while not table.spectators:
            await trio.sleep(0.01)
        (sink,) = table.spectators
        async with trio.open_nursery() as n:
            for link in table.links:
                n.start_soon(referee.aio, Client(ref.address, link.token).play())
            await table.finished.wait()
        assert table.report is not None and table.report.termination == "normal"
        # The spectator's queue overflowed and it was dropped: nothing more is queued for it.
        dropped: str = sink.__self__.dropped  # type: ignore[attr-defined]
        assert dropped.startswith("the spectator did not read: more than 4096 bytes queued"), dropped
        # Its stream is let go though its status cannot reach it (the window is shut): the
        # connection is still open.
        while ref.open_streams:
            await trio.sleep(0.01)
        conn.close()

    with_referee(body, Limits(spectator_queue_bytes=4_096), public_watch=True)  # a raw client, no token


@pytest.mark.parametrize("limits", [Limits(finished_matches=3), Limits(finished_bytes=1_000)])
def test_finished_matches_kept_are_bounded_by_count_and_bytes(limits: Limits) -> None:
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        for i in range(8):  # one after the other: they finish in this order
            await ref.create_match(_spec(connect_timeout_ms=1, match_id=f"m{i}")).finished.wait()
        kept = sorted(ref.tables)
        sizes = sum(ref.tables[m].spectator_log.size for m in kept)
        assert kept and len(kept) <= limits.finished_matches and sizes <= limits.finished_bytes
        assert kept == [f"m{i}" for i in range(8 - len(kept), 8)]  # the newest are kept

    with_referee(body, limits)


def test_the_server_announces_its_streams_per_connection() -> None:
    """HTTP/2 SETTINGS from the server carry MAX_CONCURRENT_STREAMS = twice the limit (the
    service refuses the streams past the limit itself, with a status that names it)."""
    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        host, _, port = ref.address.rpartition(":")
        settings = await trio.to_thread.run_sync(_server_settings, host, int(port))
        assert settings.get(0x3) == ANNOUNCED_STREAMS_FACTOR * 7

    with_referee(body, Limits(streams_per_connection=7))


def _server_settings(host: str, port: int) -> dict[int, int]:
    import socket
    import struct
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        buf = b""
        while True:
            while len(buf) < 9:
                chunk = s.recv(65536)
                assert chunk, "the server closed the connection"
                buf += chunk
            length = int.from_bytes(buf[:3], "big")
            kind, flags = buf[3], buf[4]
            while len(buf) < 9 + length:
                buf += s.recv(65536)
            payload, buf = buf[9:9 + length], buf[9 + length:]
            if kind == 0x4 and not flags & 1:
                return {k: v for k, v in (struct.unpack_from(">HI", payload, i) for i in range(0, length, 6))}


@pytest.mark.parametrize("page", ["docs/protocol.md", "docs/security.md", "README.md"])
def test_docs_list_every_limit_with_its_default(page: str) -> None:
    import dataclasses
    from pathlib import Path
    doc = (Path(__file__).parent.parent / page).read_text()
    for f in dataclasses.fields(Limits):
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{f.name}` |")), None)
        assert row is not None, f"{page} has no row for the limit {f.name}"
        assert str(f.default) in row, f"{f.name}'s row in {page} does not give its default {f.default}"


@pytest.mark.timeout(2700)  # (342 s at load ~7; over pytest's usual 900 s at load ~14: slower, never red)
def test_a_rapid_reset_burst_refuses_no_other_connections_new_streams() -> None:
    """One connection sends HEADERS+RST_STREAM as fast as it can; 1,000 new ``Play`` streams on
    other connections each get their own answer (UNAUTHENTICATED: an unknown token), none is
    CANCELLED (on 8413415, before ``streams_per_connection``, 404 of 1,000 were)."""
    import threading

    async def body(ref: referee.Referee, ch: grpc.aio.Channel) -> None:
        host, _, port = ref.address.rpartition(":")
        stop = threading.Event()

        def attack() -> None:
            while not stop.is_set():
                try:
                    conn = RawConnection(host, int(port))
                    while not stop.is_set():
                        conn.rapid_reset(200)
                except OSError:  # the server closed it (or stopped reading): again
                    continue

        def probe() -> dict[str, int]:
            hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token="x" * 32, protocol_version=2)).SerializeToString()
            chans = [grpc.insecure_channel(ref.address, options=[("grpc.use_local_subchannel_pool", 1)])
                     for _ in range(10)]
            codes: dict[str, int] = {}
            for i in range(1_000):
                play = chans[i % 10].stream_stream(PLAY, request_serializer=None, response_deserializer=None)
                try:
                    for _ in play(iter([hello])):
                        pass
                    code = "OK"
                except grpc.RpcError as e:
                    code = e.code().name
                codes[code] = codes.get(code, 0) + 1
            for c in chans:
                c.close()
            return codes

        attacker = threading.Thread(target=attack, daemon=True)
        attacker.start()
        try:
            codes = await trio.to_thread.run_sync(probe)
        finally:
            stop.set()
        assert codes == {"UNAUTHENTICATED": 1_000}, codes

    with_referee(body)
