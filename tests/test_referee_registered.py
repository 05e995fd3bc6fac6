"""Registered bots' sessions on the referee (issue 20): a token its bot directory identifies opens
a session with no match that stays open; ``MatchSpec.seat_bots`` seats the bot on it; the
referee says who is online and wakes its owner when that changes; a token the directory no longer
accepts is refused, and its live sessions are ended."""

from __future__ import annotations

import grpc
import pytest
import trio

import referee
import referee.lowlevel
from gin_arena.v2 import bot_pb2
from referee import games
from tests._bots import Client

TOKENS = {"tok-north-0123456789abcdef": "north", "tok-south-0123456789abcdef": "south"}


class Directory:
    """A bot directory held in memory: token -> name; ``disabled`` names are refused."""

    def __init__(self) -> None:
        self.disabled: set[str] = set()

    def identify(self, token: str) -> str | None:
        name = TOKENS.get(token)
        return None if name is None or name in self.disabled else name

    def refusal(self, token: str) -> str:
        name = TOKENS.get(token)
        return f"bot {name!r} is disabled" if name in self.disabled else ""


def _spec(match_id: str, bots: tuple[str, str] = ("north", "south")) -> referee.MatchSpec:
    return referee.MatchSpec(players=bots, rules=games.get("gin").game.rules_preset("short"), match_id=match_id,
                             time_control=referee.TimeControl.parse("st=2 timemargin=100"), seat_bots=bots,
                             connect_timeout_ms=60_000)


def _hello(token: str, concurrent: int = 1, presets: tuple[str, ...] = ()) -> bot_pb2.BotMessage:
    return bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="<b>" + TOKENS[token], token=token, protocol_version=2,
                                                  max_concurrent_matches=concurrent, presets=presets))


def _client(address: str, token: str) -> Client:
    return Client(address, token)


async def _online(ref: referee.Referee, want: set[str]) -> dict[str, referee.lowlevel.BotPresence]:
    seen = 0
    while set(ref.presence()) != want:
        seen = await ref.wait_presence(seen)
    return ref.presence()


def _finished(msg: bot_pb2.RefereeMessage) -> bool:
    return msg.WhichOneof("kind") == "match_finished"


def test_registered_bots_wait_without_a_match_and_are_seated_by_name() -> None:
    async def main() -> None:
        async with referee.open_referee(bot_directory=Directory()) as ref:
            north, south = (_client(ref.address, t) for t in TOKENS)
            async with trio.open_nursery() as n:
                n.start_soon(referee.aio, north.play(None, first=_hello(north.token, 2, ("gin/short",))))
                n.start_soon(referee.aio, south.play(None, first=_hello(south.token)))
                online = await _online(ref, {"north", "south"})
                assert online["north"] == referee.lowlevel.BotPresence(
                    bot="north", sessions=1, games=(), presets=("gin/short",), max_concurrent=2, playing=0,
                    hello_name="<b>north")
                assert online["south"].max_concurrent == 1 and online["south"].free == 1
                table = ref.create_match(_spec("r-1"))
                assert ref.presence()["north"].playing == 1 and ref.presence()["south"].free == 0
                await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal"
            assert north.received[0].WhichOneof("kind") == "welcome"
            assert list(north.received[0].welcome.match_ids) == []  # known as its bot, with no match yet
            assert [m.match_id for m in north.received if m.WhichOneof("kind") == "match_started"] == ["r-1"]
            await _online(ref, set())  # both sessions end

    referee.run(main)


def test_a_seat_waits_for_its_bot_and_a_bot_that_comes_back_takes_its_seat_again() -> None:
    async def main() -> None:
        async with referee.open_referee(bot_directory=Directory()) as ref:
            table = ref.create_match(_spec("r-2"))  # nobody online yet: the seats wait
            assert ref.presence() == {}
            north_token, south_token = TOKENS
            south = _client(ref.address, south_token)
            first, back = _client(ref.address, north_token), _client(ref.address, north_token)
            requests = 0

            def third_request(msg: bot_pb2.RefereeMessage) -> bool:  # then it leaves
                nonlocal requests
                requests += msg.WhichOneof("kind") == "action_request"
                return requests == 3

            async with trio.open_nursery() as n:
                n.start_soon(referee.aio, south.play(None, first=_hello(south_token), stop=_finished))
                await referee.aio(first.play(None, first=_hello(north_token), stop=third_request))
                assert first.received[0].welcome.match_ids == ["r-2"]  # its waiting seat, taken at hello
                assert not table.over
                await referee.aio(back.play(None, first=_hello(north_token), stop=_finished))
                await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal"
            # The seat it had left, within the grace: at its hello, or as soon as the referee saw
            # the first session end, if the new one came first.
            assert any(m.WhichOneof("kind") == "match_finished" and m.match_id == "r-2" for m in back.received)

    referee.run(main)


def test_unknown_and_disabled_tokens_are_refused_and_a_disabled_bot_is_disconnected() -> None:
    async def main() -> None:
        directory = Directory()
        async with referee.open_referee(bot_directory=directory) as ref:
            stranger = Client(ref.address, "tok-stranger-0123456789ab")
            await referee.aio(stranger.play())
            assert stranger.status == grpc.StatusCode.UNAUTHENTICATED
            assert "unknown token" in stranger.details and "rotate-token" in stranger.details
            north = _client(ref.address, "tok-north-0123456789abcdef")
            async with trio.open_nursery() as n:
                n.start_soon(referee.aio, north.play(None, first=_hello(north.token)))
                await _online(ref, {"north"})
                assert ref.recheck_bots() == []
                directory.disabled.add("north")
                assert ref.recheck_bots() == ["north"]
                await _online(ref, set())
            assert north.status == grpc.StatusCode.UNAUTHENTICATED
            assert north.details == "the token of registered bot 'north' is no longer accepted: bot 'north' is disabled"
            again = _client(ref.address, "tok-north-0123456789abcdef")
            await referee.aio(again.play(None, first=_hello(again.token)))
            assert again.status == grpc.StatusCode.UNAUTHENTICATED and again.details == "bot 'north' is disabled"

    referee.run(main)


def test_a_referee_without_a_directory_refuses_bot_tokens() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref:
            north = _client(ref.address, "tok-north-0123456789abcdef")
            await referee.aio(north.play(None, first=_hello(north.token)))
            assert north.status == grpc.StatusCode.UNAUTHENTICATED

    referee.run(main)


@pytest.mark.parametrize(("bots", "why"), [
    (("north",), "one registered bot"),
    (("north", "north"), "at most one seat"),
])
def test_seat_bots_are_checked(bots: tuple[str, ...], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        referee.MatchSpec(players=("a", "b"), seat_bots=bots)
