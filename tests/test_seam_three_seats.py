"""A match of a toy three-seat game (``toy3``, the plugin game of tests/plugin_game) through the
referee's real plumbing: the Table, its seats, clocks, fault policy, recorder and digests, with fake sessions."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import trio
import trio.testing
from toy3_game import engine as toy
from toy3_game.wire import ToyWire

import referee
import referee.lowlevel
from gin_arena.v2 import bot_pb2, common_pb2
from referee import MatchReport, MatchSpec, TimeControl, read_replay, resimulate
from referee.lowlevel import Table
from tests._bots import Client
from tests._tables import FakeSession, Policy, seat_sessions
from tests._wait import HANG_S


def _first(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    return request.legal_actions[0]


def _faulty(after: int) -> Policy:
    """Plays its first legal card until its ``after``-th request, then a card it does not hold."""
    asked = [0]

    def policy(request: bot_pb2.ActionRequest) -> common_pb2.Action:
        asked[0] += 1
        if asked[0] == after:
            return ToyWire().action_from_text("99")  # a toy play (packed in action.other) of a card not held
        return request.legal_actions[0]

    return policy


def _play(policy: str, policies: list[Policy]) -> tuple[Table, list[FakeSession], MatchReport]:
    spec = MatchSpec(players=("a", "b", "c"), game=toy.NAME, fault_policy=policy,  # type: ignore[arg-type]
                     rules=toy.ToyRules(games=2), seed=b"toy seed", match_id="toy",
                     seat_time_controls=(TimeControl(per_move_ms=1000), TimeControl(per_move_ms=2000),
                                         TimeControl(per_move_ms=3000)))

    async def main() -> tuple[Table, list[FakeSession], MatchReport]:
        table = Table(spec, None, lambda t: None, quiet=True)
        sessions = seat_sessions(table, policies)
        return table, sessions, await table.run()

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def _kinds(session: FakeSession) -> list[str]:
    return [str(m.WhichOneof("kind")) for m in session.messages]


def _records(table: Table) -> list[dict[str, object]]:
    return [json.loads(line) for line in table._replay.lines]


def _replays_byte_for_byte(table: Table) -> None:
    again = resimulate(read_replay(table._replay.lines))
    assert again.lines == table._replay.lines


def test_three_seats_play_to_the_end() -> None:
    table, sessions, report = _play("forfeit", [_first, _first, _first])
    assert report.termination == "normal"
    assert len(report.places) == len(report.points) == 3
    records = _records(table)
    played = [0, 0, 0]
    for rec in records:
        if rec["type"] == "action":
            played[rec["seat"]] += int(rec["action"])  # type: ignore[call-overload]
    assert list(report.points) == played
    assert sorted(report.places)[0] == 1
    assert report.winner == (report.places.index(1) if report.places.count(1) == 1 else None)
    for s in sessions:  # every seat is told both games and asked twice a game
        assert _kinds(s).count("game_finished") == 2
        assert _kinds(s).count("action_request") == 4
        assert _kinds(s)[-1] == "match_finished"
    header = records[0]
    assert header["game"] == toy.NAME and header["seat_time_controls"] == ["st=1", "st=2", "st=3"]
    _replays_byte_for_byte(table)


def test_forfeit_plays_the_faulting_seat_by_the_bot_to_the_end_of_the_game_then_ranks_it_last() -> None:
    table, sessions, report = _play("forfeit", [_first, _faulty(1), _first])
    assert report.termination == "illegal_action" and report.faulting_seat == 1
    assert report.places[1] == 3 and sorted(report.places[0::2]) in ([1, 2], [1, 1])
    records = _records(table)
    faults = [r for r in records if r["type"] == "fault"]
    assert [(f["seat"], f["policy"]) for f in faults] == [(1, "forfeit")]
    bot_moves = [r for r in records if r["type"] == "action" and r["seat"] == 1 and r["substitute"]]
    assert len(bot_moves) == 2  # the built-in bot played both of seat 1's cards in game 1
    games_ended = [r for r in records if r["type"] == "game_end"]
    assert len(games_ended) == 1  # the match ended after that game
    for s in (sessions[0], sessions[2]):  # the others' game was played out
        assert _kinds(s).count("game_finished") == 1 and _kinds(s).count("action_request") == 2
    _replays_byte_for_byte(table)


def test_several_faulting_seats_share_the_last_places_latest_first() -> None:
    table, _sessions, report = _play("forfeit", [_faulty(1), _first, _faulty(1)])
    # seat 1 moves first; seat 2 faults (the bot takes it), then seat 0: one seat is left that has
    # not faulted, and the match ends now; the first to fault is last, the latest just above it
    assert report.faulting_seat == 2 and report.termination == "illegal_action"
    assert report.places == (2, 1, 3) and report.winner == 1
    faults = [(r["seat"], r["policy"]) for r in _records(table) if r["type"] == "fault"]
    assert faults == [(2, "forfeit"), (0, "forfeit")]
    _replays_byte_for_byte(table)


def test_substitute_counts_the_seats_results_as_they_fall_and_plays_on() -> None:
    table, sessions, report = _play("substitute", [_first, _faulty(1), _first])
    assert report.termination == "normal" and report.substituted_seats == (1,)
    assert report.faulting_seat is None
    records = _records(table)
    assert [r["game"] for r in records if r["type"] == "game_end"] == [1, 2]
    # the bot played seat 1 in game 1 only: its own bot is asked again in game 2
    game2 = [r for r in records if r["type"] == "action" and r["seat"] == 1][2:]
    assert game2 and not any(r["substitute"] for r in game2)
    assert _kinds(sessions[1]).count("action_request") == 3
    _replays_byte_for_byte(table)


@pytest.mark.parametrize("players", [("a",), tuple("abcdefg")])
def test_the_game_says_how_many_seats_it_allows(players: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="played by 2 to 6 seats"):
        MatchSpec(players=players, game=toy.NAME)


def test_gin_still_refuses_three_seats() -> None:
    with pytest.raises(ValueError, match="gin is played by 2 seats"):
        MatchSpec(players=("a", "b", "c"))


def _served(policy: str, quitting_seat: int) -> tuple[MatchReport, list[Client]]:
    """The toy match on a real referee: three gRPC bot sessions, one quits at its first request
    (a disconnect fault once the reconnect grace runs out)."""
    spec = MatchSpec(players=("a", "b", "c"), game=toy.NAME, fault_policy=policy,  # type: ignore[arg-type]
                     rules=toy.ToyRules(games=2), reconnect_grace_ms=100,
                     time_control=TimeControl(per_move_ms=5000))
    replay_dir = Path(tempfile.mkdtemp(prefix="toy-replays-"))

    async def first_legal(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action:
        return msg.action_request.legal_actions[0]

    async def main() -> tuple[MatchReport, list[Client]]:
        async with referee.open_referee(replay_dir=replay_dir) as ref:
            table = ref.create_match(spec)
            clients = [Client(ref.address, link.token, name=link.name, games=(toy.NAME,))
                       for link in table.links]
            async with trio.open_nursery() as nursery:
                for seat, client in enumerate(clients):
                    if seat == quitting_seat:
                        nursery.start_soon(referee.aio, client.play(
                            first_legal, stop=lambda m: m.WhichOneof("kind") == "action_request"))
                    else:
                        nursery.start_soon(referee.aio, client.play(first_legal))
                await table.finished.wait()
                nursery.cancel_scope.deadline = trio.current_time() + HANG_S  # the clients end with their streams
            assert table.report is not None
            return table.report, clients

    report, clients = referee.run(main)
    replay = Path(report.replay_path)
    assert resimulate(read_replay(replay)).lines == replay.read_bytes().splitlines()
    return report, clients


def test_a_served_three_seat_match_under_forfeit() -> None:
    report, clients = _served("forfeit", quitting_seat=2)
    assert report.termination == "disconnected" and report.faulting_seat == 2
    assert report.places[2] == 3 and report.substituted_seats == (2,)
    for c in clients[:2]:  # the others played game 1 out; then the match ended
        assert c.kinds().count("game_finished") == 1 and c.kinds()[-1] == "match_finished"
        assert c.received[-1].match_finished.result.places == list(report.places)


def test_a_served_three_seat_match_under_substitute() -> None:
    report, clients = _served("substitute", quitting_seat=0)
    assert report.termination == "normal" and report.substituted_seats == (0,)
    for c in clients[1:]:
        assert c.kinds().count("game_finished") == 2


def test_a_spec_crosses_create_match_with_its_game_and_its_clocks_per_seat() -> None:
    from referee.transport.service import spec_from_request

    tcs = (TimeControl.parse("st=1"), TimeControl.parse("tc=60+1"), TimeControl.parse("st=3"))
    spec = MatchSpec(players=("a", "b", "c"), game=toy.NAME, seat_time_controls=tcs, seed=b"s")
    again = spec_from_request(referee.lowlevel.create_match_request(spec))
    assert again.game == toy.NAME and again.seat_time_controls == tcs
    assert again.rules == toy.ToyRules()
    gin_spec = MatchSpec(players=("a", "b"))
    request = referee.lowlevel.create_match_request(gin_spec)
    assert not request.game_name and not request.seat_time_controls  # the default game: no name sent
    assert spec_from_request(request) == gin_spec


def test_each_seat_runs_on_its_own_clock() -> None:
    from referee.table.clocks import Clocks

    clocks = Clocks([TimeControl(per_move_ms=500), TimeControl(base_ms=2000, increment_ms=100)])
    assert clocks.allowance(0) == 500 and clocks.allowance(1) == 2000
    assert clocks.charge(1, 1_500_000) and clocks.shown() == [500, 600]
    assert not clocks.charge(0, 900_000)  # over its 500 ms (+ the default margin)
    assert not clocks.charge(1, 700_000 + TimeControl(base_ms=1).margin_ms * 1000)
    clocks.reset()
    assert clocks.shown() == [500, 2000]


def test_the_registry_names_its_games_and_refuses_unknown_ones() -> None:
    from referee import games

    assert {"gin", toy.NAME} <= set(games.names())
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        MatchSpec(players=("a", "b"), game="chess")
    with pytest.raises(ValueError, match="registered already"):
        games.register(toy.NAME, lambda: games.get(toy.NAME))


def test_places_put_the_forfeiting_seats_last_latest_first() -> None:
    from referee.games import Ranking, places_with_forfeits

    assert Ranking.by_points([5, 9, 5, 1]).places == (2, 1, 2, 4)
    assert places_with_forfeits((2, 1, 2, 4), [1]) == (1, 4, 1, 3)
    assert places_with_forfeits((1, 2, 3, 4), [0, 3]) == (4, 1, 2, 3)
    assert Ranking((1, 1, 3), (0, 0, 0)).winner is None and Ranking((2, 1), (0, 1)).winner == 1
