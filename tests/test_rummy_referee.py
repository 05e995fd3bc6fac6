"""Rummy through the referee (referee/wire/rummy.py): matches of 2 to 6 seats over real gRPC
with bots that declare rummy in Hello; the referee refuses a seat whose bot did not declare the
match's game; the fault policies for more than two seats and for two; malformed and illegal
rummy answers; the rule set through CreateMatch; and the hand-made encoding of the state is
protobuf's own."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import grpc
import pytest
import trio
import trio.testing

import referee
import referee.lowlevel
from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from gin_arena.v2.games import gin_pb2, rummy_pb2
from referee import MatchReport, MatchSpec, TimeControl, games, read_replay, resimulate, rummy
from referee.lowlevel import Table
from referee.rummy import wire as rw
from tests._bots import Client
from tests._tables import FakeSession, Policy, seat_sessions
from tests._wait import HANG_S


def _random(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    """A legal action chosen by the request id (a different one on every request)."""
    return random.Random(request.request_id).choice(list(request.legal_actions))


def _rules(preset: str = "rummy", **overrides: object) -> rummy.RummyRules:
    return rummy.RummyRules.preset(preset, **{"target": 60, **overrides})


def _play(n: int, policies: list[Policy], *, policy: str = "forfeit", preset: str = "rummy",
          seed: bytes = b"rummy referee") -> tuple[Table, list[FakeSession], MatchReport]:
    spec = MatchSpec(players=tuple(f"p{s}" for s in range(n)), game="rummy", rules=_rules(preset),
                     fault_policy=policy, seed=seed, match_id="r")  # type: ignore[arg-type]

    async def main() -> tuple[Table, list[FakeSession], MatchReport]:
        table = Table(spec, None, lambda t: None, quiet=True)
        sessions = seat_sessions(table, policies)
        return table, sessions, await table.run()

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def _kinds(session: FakeSession) -> list[str]:
    return [str(m.WhichOneof("kind")) for m in session.messages]


def _replays_byte_for_byte(table: Table) -> None:
    assert resimulate(read_replay(table._replay.lines)).lines == table._replay.lines


# ----- over gRPC -----
def _served(n: int, games_declared: tuple[str, ...] = ("rummy",), preset: str = "rummy") -> tuple[
        MatchReport, list[Client]]:
    spec = MatchSpec(players=tuple(f"bot{s}" for s in range(n)), game="rummy", rules=_rules(preset),
                     time_control=TimeControl(per_move_ms=5000), connect_timeout_ms=3000)
    replay_dir = Path(tempfile.mkdtemp(prefix="rummy-replays-"))

    async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action:
        return _random(msg.action_request)

    async def main() -> tuple[MatchReport, list[Client]]:
        async with referee.open_referee(replay_dir=replay_dir) as ref:
            table = ref.create_match(spec)
            clients = [Client(ref.address, link.token, name=link.name, games=games_declared) for link in table.links]
            async with trio.open_nursery() as nursery:
                for client in clients:
                    nursery.start_soon(referee.aio, client.play(decide))
                await table.finished.wait()
                nursery.cancel_scope.deadline = trio.current_time() + HANG_S  # the clients end with their streams
            assert table.report is not None
            return table.report, clients

    return referee.run(main)


@pytest.mark.parametrize(("n", "preset"), [(2, "open"), (4, "michigan"), (6, "bozenkill")])
def test_a_rummy_match_plays_over_grpc(n: int, preset: str) -> None:
    report, clients = _served(n, ("gin", "rummy"), preset)
    assert report.termination == "normal", report.detail
    assert len(report.places) == len(report.points) == n and min(report.places) == 1
    replay = Path(report.replay_path)
    assert resimulate(read_replay(replay)).lines == replay.read_bytes().splitlines()
    for seat, c in enumerate(clients):
        started = c.received[1].match_started
        assert started.game_name == "rummy" and started.WhichOneof("game") == "rummy" and started.rummy.name == preset
        requests = [m.action_request for m in c.received if m.WhichOneof("kind") == "action_request"]
        assert requests and all(r.WhichOneof("game") == "rummy" for r in requests)
        assert all(r.rummy.seat == seat and len(r.rummy.hand_sizes) == n for r in requests)
        assert all(a.rummy.WhichOneof("kind") for r in requests for a in r.legal_actions)
        finished = c.received[-1].match_finished.result
        assert list(finished.places) == list(report.places) and list(finished.points) == list(report.points)
        assert all(g.rummy.deals >= 1 and len(g.places) == n for g in finished.games)


def test_a_bot_that_declared_only_gin_is_never_sent_a_rummy_match() -> None:
    spec = MatchSpec(players=("a", "b", "c"), game="rummy", rules=_rules(), connect_timeout_ms=300)

    async def main() -> tuple[MatchReport, Client, Client]:
        async with referee.open_referee() as ref:
            table = ref.create_match(spec)
            gin_only = Client(ref.address, table.links[0].token)  # today's Gin bot: no Hello.games
            other_game = Client(ref.address, table.links[1].token, games=("gin", "chess"))
            await referee.aio(gin_only.play())
            await referee.aio(other_game.play())
            await table.finished.wait()
            assert table.report is not None
            return table.report, gin_only, other_game

    report, gin_only, other_game = referee.run(main)
    for client, said in ((gin_only, "declared no games (gin only)"), (other_game, "declared 'gin', 'chess'")):
        assert client.status == grpc.StatusCode.FAILED_PRECONDITION
        assert client.kinds() == ["error"]  # never a MatchStarted, a state or a request
        error = client.errors()[0]
        assert error.code == bot_pb2.ERROR_CODE_UNSUPPORTED_GAME and error.fatal
        assert "plays 'rummy', which this bot did not declare in Hello.games" in error.message
        assert said in error.message and error.message in client.details
    assert report.termination == "failed_to_connect"


def test_a_rummy_only_bot_is_refused_a_gin_match_and_gin_bots_play_unchanged() -> None:
    spec = MatchSpec(players=("a", "b"), connect_timeout_ms=3000)

    async def main() -> tuple[MatchReport, Client, list[Client]]:
        async with referee.open_referee() as ref:
            table = ref.create_match(spec)
            rummy_only = Client(ref.address, table.links[0].token, games=("rummy",))
            await referee.aio(rummy_only.play())
            gin_bots = [Client(ref.address, link.token) for link in table.links]
            async with trio.open_nursery() as nursery:
                for c in gin_bots:
                    nursery.start_soon(referee.aio, c.play())
            assert table.report is not None
            return table.report, rummy_only, gin_bots

    report, rummy_only, gin_bots = referee.run(main)
    assert rummy_only.errors()[0].code == bot_pb2.ERROR_CODE_UNSUPPORTED_GAME
    assert "plays 'gin'" in rummy_only.errors()[0].message
    assert report.termination == "normal"
    assert all(c.kinds()[-1] == "match_finished" for c in gin_bots)


# ----- fault policies -----
def _illegal_at(after: int) -> Policy:
    """Plays at random until its ``after``-th request, then discards a card no one holds twice."""
    asked = [0]

    def policy(request: bot_pb2.ActionRequest) -> common_pb2.Action:
        asked[0] += 1
        if asked[0] == after:
            hand = set(request.rummy.hand)
            card = next(t for t in rw._TEXT if t not in hand)
            return common_pb2.Action(rummy=rummy_pb2.Action(discard=rummy_pb2.Discard(card=card)))
        return _random(request)

    return policy


def test_four_seats_forfeit_the_bot_plays_the_faulting_seat_to_the_end_of_the_game_and_it_ranks_last() -> None:
    table, sessions, report = _play(4, [_random, _illegal_at(3), _random, _random])
    assert report.termination == "illegal_action" and report.faulting_seat == 1
    assert report.places[1] == 4 and report.substituted_seats == (1,)
    assert "discard" in report.detail and "seat 1" in report.detail
    for s in (0, 2, 3):  # the others' game was played out to its end
        assert _kinds(sessions[s]).count("game_finished") == 1 and _kinds(sessions[s])[-1] == "match_finished"
    finished = sessions[0].messages[-1].match_finished.result
    assert list(finished.places) == list(report.places) and len(finished.games) == 1  # the match ended with it
    _replays_byte_for_byte(table)


def test_four_seats_substitute_plays_on_with_the_bot() -> None:
    table, _sessions, report = _play(4, [_random, _random, _illegal_at(2), _random], policy="substitute")
    assert report.termination == "normal" and report.substituted_seats == (2,) and report.faulting_seat is None
    _replays_byte_for_byte(table)


def test_two_seat_rummy_forfeits_like_gin() -> None:
    table, sessions, report = _play(2, [_illegal_at(2), _random])
    assert report.termination == "illegal_action" and report.faulting_seat == 0
    assert report.places == (2, 1) and report.winner == 1
    assert _kinds(sessions[1]).count("deal_finished") == 0  # the match ended at the fault
    _replays_byte_for_byte(table)


@pytest.mark.parametrize(("action", "says"), [
    (common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DRAW_STOCK)), "goes in action.rummy; got gin"),
    (common_pb2.Action(), "goes in action.rummy; got no game"),
    (common_pb2.Action(rummy=rummy_pb2.Action()), "action.rummy: no kind set"),
    (common_pb2.Action(rummy=rummy_pb2.Action(discard=rummy_pb2.Discard(card="1x"))),
     "action.rummy.discard.card: not a card"),
    (common_pb2.Action(rummy=rummy_pb2.Action(lay_off=rummy_pb2.LayOff(card="As"))),
     "action.rummy.lay_off.end: 0 is not SET, LOW or HIGH"),
])
def test_a_malformed_rummy_action_forfeits_with_a_precise_reason(action: common_pb2.Action, says: str) -> None:
    def bad(request: bot_pb2.ActionRequest) -> common_pb2.Action:
        return action

    table, _sessions, report = _play(3, [bad, _random, _random])
    assert report.termination == "malformed_message" and report.faulting_seat in (0, 1, 2)
    assert says in report.detail
    _replays_byte_for_byte(table)  # the raw answer is in the fault record and sent again


# ----- the rule set and the seam -----
@pytest.mark.parametrize("preset", rummy.PRESETS)
def test_every_preset_crosses_create_match(preset: str) -> None:
    from referee.transport.service import spec_from_request

    rules = rummy.RummyRules.preset(preset, face_values="rank", next_dealer="left", stock_exhausted="reshuffle",
                                    rummy_doubles=not rummy.RummyRules.preset(preset).rummy_doubles)
    spec = MatchSpec(players=("a", "b", "c", "d"), game="rummy", rules=rules, seed=b"x")
    request = referee.lowlevel.create_match_request(spec)
    assert request.game_name == "rummy" and request.WhichOneof("game") == "rummy"
    again = spec_from_request(request)
    assert again == spec
    assert rw.rules_from_proto(rw.rules_to_proto(rules)) == rules


def test_a_rummy_request_names_what_is_wrong_with_its_rules() -> None:
    wire = games.get("rummy").wire
    with pytest.raises(games.WireError, match="rummy match takes its rules in rummy; got gin"):
        wire.rules_from_request(referee_pb2.CreateMatchRequest(game_name="rummy", gin=gin_pb2.RuleSet(name="classic")))
    with pytest.raises(games.WireError, match="unknown preset 'classic'"):
        wire.rules_from_request(referee_pb2.CreateMatchRequest(rummy=rummy_pb2.RuleSet(name="classic")))
    with pytest.raises(games.WireError, match="target must be at least 1"):
        wire.rules_from_request(referee_pb2.CreateMatchRequest(rummy=rummy_pb2.RuleSet(target=0)))
    unset = wire.rules_from_request(referee_pb2.CreateMatchRequest(game_name="rummy"))
    assert unset is None and games.get("rummy").game.default_rules() == rummy.RummyRules.preset("rummy")


def test_the_encoded_states_and_requests_are_protobufs_deterministic_serialisation() -> None:
    """Every request of random 2-6 seat matches, decoded and encoded again by protobuf, gives the
    same bytes; its legal actions read back as the engine's."""
    wire = games.get("rummy").wire
    for n in range(2, 7):
        match = games.get("rummy").game.new_match(_rules("michigan", stock_exhausted="reshuffle"), b"enc%d" % n, n)
        caches = [wire.new_seat_cache() for _ in range(n)]
        rng = random.Random(n)
        for rid in range(1, 400):
            if match.is_over:
                break
            seat = match.decider
            assert seat is not None
            data, legal = wire.request(match, seat, "m", rid, [1000] * n, 10, 900, caches[seat])
            msg = bot_pb2.RefereeMessage.FromString(data)
            assert msg.SerializeToString(deterministic=True) == data
            offered = [wire.action_from_proto(a) for a in msg.action_request.legal_actions]
            assert isinstance(legal, frozenset) and set(offered) == legal and len(offered) == len(legal)
            assert msg.action_request.rummy.reshuffles == sum(
                1 for e in msg.action_request.events if e.rummy.WhichOneof("kind") == "reshuffle")
            match.apply(seat, rng.choice(offered))


def test_actions_round_trip_through_text_and_messages() -> None:
    wire = games.get("rummy").wire
    for text in ("draw_stock", "take_discard 7h", "meld Qs Ks As", "lay_off 4c 2 low", "lay_off Kd 0 set",
                 "discard Td", "call_stop", "decline_stop"):
        action = rummy.parse_action(text)
        msg = wire.action_from_text(text)
        assert wire.action_from_proto(msg) == action
        assert wire.raw_action_from_record(wire.raw_action(msg)) == msg


def test_spectators_see_the_table_but_never_a_hidden_card() -> None:
    table, _sessions, report = _play(4, [_random] * 4, preset="michigan")
    assert report.termination == "normal"
    events = [referee_pb2.SpectatorEvent.FromString(b) for b in table.spectator_log.events()]
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds[0] == "header" and events[0].header.rummy.name == "michigan"
    assert {"deal_started", "event", "deal_finished", "game_finished", "match_finished"} <= set(kinds)
    for e in events:
        if e.WhichOneof("kind") == "deal_started":
            st = e.deal_started.rummy
            assert st.seat == -1 and not st.hand and len(st.hand_sizes) == 4 and st.discard_pile
        elif e.WhichOneof("kind") == "event":
            assert not e.event.rummy.drawn_card  # a stock draw's card: never to spectators
            assert e.event.rummy.WhichOneof("kind") in ("action", "reshuffle")
        elif e.WhichOneof("kind") == "deal_finished":
            assert len(e.deal_finished.rummy.hands) == 4 and len(e.deal_finished.rummy.points) == 4
    draws = [e for e in events if e.WhichOneof("kind") == "event"
             and e.event.rummy.action.WhichOneof("kind") == "draw_stock"]
    assert draws
