"""The ``hand-reader`` sample bot (issue 33): it reads the opponent's discards, refusals and
pickups from the deal's events as they happened, its estimate moves the way each event says,
it never answers an illegal action over many seeded matches, and it plays a whole match as a
real bot process through the referee with an audited replay. Nothing here depends on speed."""

from __future__ import annotations

from pathlib import Path

import pytest

import referee
from gin_arena.v2 import bot_pb2
from referee import BotLaunch, MatchSpec, TimeControl, gin
from referee.gin import wire as gin_wire
from sample_bots import expert_bot, greedy_bot, hand_reader_bot
from sample_bots.kit.gin import actions as A
from sample_bots.kit.gin.masks import INDEX
from tests.test_sample_bots import play_match, requests_of
from tests.test_sample_bots_rummy import assert_no_fallback, audit

GENEROUS = TimeControl(per_move_ms=600_000)
"""Ten minutes a decision: the process test checks legality, never speed."""


def _events_by_hand(seed: bytes, moves: int) -> list[tuple[bot_pb2.ActionRequest, tuple[list[int], ...]]]:
    """Play a match of two greedy bots; before each request, what the opponent discarded,
    refused and took this deal, worked out from the engine's true sequence of moves (not from
    the events the bot reads)."""
    match = gin.Match(gin.RuleSet.classic(), seed)
    seen: list[tuple[bot_pb2.ActionRequest, tuple[list[int], ...]]] = []
    log: dict[int, tuple[list[int], list[int], list[int]]] = {0: ([], [], []), 1: ([], [], [])}
    deal = 0
    for rid in range(1, moves + 1):
        if match.is_over:
            break
        seat = match.to_move
        assert seat is not None
        request = requests_of(match, seat, rid)
        if not request.events:  # a new deal
            log = {0: ([], [], []), 1: ([], [], [])}
            deal += 1
        seen.append((request, log[1 - seat]))
        answer = greedy_bot.decide(request)
        kind = answer.gin.kind
        top = INDEX[request.gin.discard_pile[-1]] if request.gin.discard_pile else None
        discarded, refused, taken = (list(x) for x in log[seat])
        if kind == A.DISCARD:
            discarded.append(INDEX[answer.gin.card])
        elif kind in (A.PASS, A.DRAW_STOCK) and top is not None and refused[-1:] != [top]:
            refused.append(top)  # (the forced stock draw after both passed the upcard refuses nothing new)
        elif kind in (A.TAKE_UPCARD, A.DRAW_DISCARD) and top is not None:
            taken.append(top)
        log[seat] = (discarded, refused, taken)
        match.apply(gin_wire.action_from_proto(answer), seat)
    assert deal >= 2
    return seen


def test_the_opponents_discards_refusals_and_pickups_are_read_from_the_events() -> None:
    """Over the requests of real deals: the three lists read from the request's events are the
    ones the true sequence of moves gives (a stock draw refuses the pile's top card; a deal's
    first upcard passed is refused too)."""
    checked = {"discarded": 0, "refused": 0, "taken": 0}
    for seed in (b"hand-reader-events-1", b"hand-reader-events-2", b"hand-reader-events-3"):
        for request, truth in _events_by_hand(seed, 400):
            opp = A.opponent(request.gin)
            read = hand_reader_bot.opponent_events(request, opp)
            assert read == truth, (request.gin.hand, read, truth)
            for name, cards in zip(checked, read, strict=True):
                checked[name] += len(cards)
    assert min(checked.values()) > 0, checked


def _request(events: list[tuple[int, int, str]], hand: list[str], pile: list[str], upcard: str,
             stock: int, known: tuple[str, ...] = ()) -> bot_pb2.ActionRequest:
    """A discard-time request for seat 0 with the given events (seat, kind, card) and the
    cards the opponent is known to hold."""
    request = bot_pb2.ActionRequest(request_id=1)
    state = request.gin
    state.seat, state.num_seats = 0, 2
    state.hand.extend(hand)
    state.discard_pile.extend(pile)
    state.first_upcard = upcard
    state.stock_size = stock
    state.hand_sizes.extend([len(hand), 10])
    state.known_cards.add(seat=1, cards=known)
    for seat, kind, card in events:
        e = request.events.add()
        e.seat = seat
        e.gin.kind = kind  # type: ignore[assignment]
        e.gin.card = card
    return request


def test_each_kind_of_event_moves_the_estimate_its_way() -> None:
    """A card melding with one the opponent refused is less likely in its hand; with one it took,
    more likely; the rest keep the same weight; the weights of its hidden cards add up to its
    hidden cards."""
    hand = ["As", "2s", "3s", "Kh", "Qh", "9c", "5d", "6d", "Jc", "4h", "8c"]
    base = _request([], hand, ["7d"], "7d", 31)
    refused = _request([(1, A.PASS, "7d")], hand, ["7d"], "7d", 31)
    took = _request([(1, A.TAKE_UPCARD, "7d"), (1, A.DISCARD, "2c")], hand, ["2c"], "7d", 30,
                    known=("7d",))
    w0 = hand_reader_bot.read_opponent(base).weight
    w_ref = hand_reader_bot.read_opponent(refused).weight
    v_took = hand_reader_bot.read_opponent(took)
    for partner in ("7c", "7h", "8d"):
        i = INDEX[partner]
        assert w_ref[i] < w0[i] < v_took.weight[i], partner
    far = INDEX["Td"]
    assert w_ref[far] == w0[far] == 1.0
    assert v_took.opp_known >> INDEX["7d"] & 1  # the taken card is known, not estimated
    total = sum(v_took.weight.values()) * v_took.p_opp
    assert total == pytest.approx(9)


@pytest.mark.parametrize("opponent", ["expert", "greedy"])
def test_hand_reader_answers_only_legal_actions_over_many_deals(opponent: str) -> None:
    """In process, whole matches against the expert and the greedy bot, both seats, seeded deals:
    ``play_match`` checks every answer against the request's legal actions."""
    other = expert_bot.decide if opponent == "expert" else greedy_bot.decide
    requests = 0
    for i in range(6):
        policies = [hand_reader_bot.decide, other] if i % 2 else [other, hand_reader_bot.decide]
        outcome, answered = play_match(policies, f"hand-reader-legal-{opponent}-{i}".encode())
        assert outcome.winner in (0, 1)
        requests += answered
    assert requests > 300


def test_hand_reader_plays_a_match_as_a_process(tmp_path: Path) -> None:
    """A real bot process against the expert through the referee: the match ends normally, no
    answer was substituted, the bot's log has no fallback, and ``arena audit`` passes."""
    def launch(module: str, name: str) -> BotLaunch:
        return BotLaunch(command=("{python}", "-m", f"sample_bots.{module}"), log_path=str(tmp_path / f"{name}.log"))

    spec = MatchSpec(players=("hand-reader", "expert"), rules=gin.RuleSet.preset("classic", target=60),
                     seed=b"hand-reader-process", time_control=GENEROUS)
    played = referee.play_match(spec, [launch("hand_reader_bot", "hand-reader"), launch("expert_bot", "expert")])
    report = played.report
    assert report.termination == "normal", (report.termination, report.detail)
    assert report.decisions > 0 and not report.substituted_seats
    assert_no_fallback(tmp_path)
    audit(played, tmp_path)
