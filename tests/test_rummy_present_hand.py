"""Rummy's presentation of a hand for people (the browser table's and the replays'): a seat's hand
is arranged in disjoint melds that leave the least deadwood value (checked against every
combination of the hand's melds), and each seat's note names the discards it took and still
holds (checked against the deal's history, move by move, over played deals)."""

from __future__ import annotations

import itertools
import random

from referee.rummy import DECK, Card, Deal, Move, RummyRules, TakeDiscard, card_value, meld_shape
from referee.rummy._deal import melds_from
from referee.rummy._melds import arrange
from referee.rummy.present import PRESENTATION, view_of

HANDS = 300
"""Random hands checked against the exhaustive search."""
DEALS = 12
"""Deals played to check the taken-card notes."""


def _least(hand: list[Card], ace_high: bool, face_values: str) -> int:
    """The least deadwood value of any set of disjoint melds of the hand (every combination)."""
    melds = [set(m) for m in melds_from(hand, ace_high)]
    total = sum(card_value(c, face_values) for c in hand)
    best = total
    for n in range(1, len(hand) // 3 + 1):
        for combo in itertools.combinations(melds, n):
            used: set[Card] = set().union(*combo)
            if sum(map(len, combo)) == len(used):
                best = min(best, total - sum(card_value(c, face_values) for c in used))
    return best


def test_a_hand_is_arranged_in_the_melds_that_leave_the_least_deadwood() -> None:
    rng = random.Random(21)
    grouped = 0
    for k in range(HANDS):
        ace_high, face_values = k % 2 == 0, ("ten", "rank")[k % 3 == 0]
        hand = rng.sample(DECK, rng.choice((6, 7, 10, 12)))
        got = arrange(hand, ace_high, face_values)
        laid = [c for m in got.melds for c in m]
        assert sorted(laid + list(got.deadwood)) == sorted(hand) and len(set(laid)) == len(laid)
        assert all(meld_shape(m, ace_high) is not None for m in got.melds)
        assert got.value == sum(card_value(c, face_values) for c in got.deadwood)
        assert got.value == _least(list(hand), ace_high, face_values), (hand, got)
        grouped += bool(got.melds)
    assert grouped >= HANDS // 10, "few hands held a meld: the check proved little"


def test_each_seat_notes_the_discards_it_took_and_still_holds() -> None:
    rng = random.Random(7)
    noted = 0
    for d in range(DEALS):
        seats = 2 + d % 5
        rules = RummyRules.preset(("rummy", "michigan")[d % 2])
        deck = list(DECK)
        rng.shuffle(deck)
        deal = Deal.from_deck(deck, d % seats, rules, seats)
        while not deal.is_over:
            legal = deal.legal_actions()
            takes = [a for a in legal if isinstance(a, TakeDiscard)]
            deal.apply(takes[0] if takes and rng.random() < 0.7 else rng.choice(legal))
            took: list[set[str]] = [set() for _ in range(seats)]
            for step, cards in zip(deal.steps, deal.step_cards, strict=True):
                if isinstance(step, Move) and isinstance(step.action, TakeDiscard):
                    took[step.seat] |= {str(c) for c in cards}
            desc = PRESENTATION.present(view_of(deal, "spectator"))
            for s in desc["seats"]:
                held = took[s["seat"]] & {str(c) for c in deal.hand(s["seat"])}
                notes = [n for n in s["notes"] if n.startswith("took ")]
                if held:
                    order = [str(c) for c in deal.hand(s["seat"]) if str(c) in held]
                    assert notes == [f"took {' '.join(order)} from the discards"], (s, held)
                    noted += 1
                else:
                    assert not notes, s
    assert noted >= 20, "few takes were noted: the check proved little"


ENDS = 40
"""Deals played to the end (through the wire's match, as the referee plays them) to check the
description of each deal's end."""


def test_the_end_of_every_deal_shows_each_hand_the_table_and_points_summing_as_the_result_says() -> None:
    from referee.rummy import Match, parse_card
    from referee.rummy.wire import RummyMatch

    rng = random.Random(5)
    seen = {"out": 0, "lowest": 0, "rummy": 0, "table": 0, "layoffs": 0, "grouped": 0}
    for m in range(ENDS // 4):
        seats = 2 + m % 5
        preset = ("rummy", "open", "michigan", "bozenkill")[m % 4]
        wire = RummyMatch(Match(RummyRules.preset(preset), bytes([m]) * 32, seats))
        ends = 0
        while not wire.is_over and ends < 4:
            seat = wire.decider
            assert seat is not None
            legal = wire.match.legal_actions()
            melds = [a for a in legal if a.kind in ("meld", "lay_off")]
            deal, game = wire.match.deal, wire.match.game
            number, totals_before = (game.number, game.deal_number), tuple(game.totals)
            wire.apply(seat, melds[0] if melds and rng.random() < (0.9, 0.05)[m % 2] else rng.choice(legal))
            if not deal.is_over:
                assert wire.ended is None or wire.ended[2] is not deal
                continue
            ends += 1
            out = deal.outcome
            assert out is not None
            for audience in range(seats):
                view = PRESENTATION.deal_end_view(wire, audience, *number)
                assert view is not None, number
                assert PRESENTATION.deal_end_view(wire, audience, number[0], number[1] + 1) is None
                desc = PRESENTATION.present(view)
                end = desc["end"]
                assert end is not None and desc["phase"] == "over"
                # Only the seat's own hand on the board; every hand left in the end (R11: scored, shown).
                assert [s["hand"] is not None for s in desc["seats"]] == [s == audience for s in range(seats)]
                assert [s["seat"] for s in end["seats"]] == list(range(seats))
                for s, shown in enumerate(end["seats"]):
                    held = [c for g in shown["groups"] for c in g] + shown["loose"]
                    assert sorted(held) == sorted(str(c) for c in out.hands[s]) and shown["counted"] == "all"
                    high = deal.rules.ace == "low_or_high"
                    assert all(meld_shape([parse_card(c) for c in g], high) is not None for g in shown["groups"])
                    laid = [str(p.card) for t in deal.table for p in t.placed if p.seat == s and p.layoff]
                    assert shown["laid_off"] == laid
                    assert f"points in hand {out.hand_values[s]}" in shown["notes"]
                    seen["grouped"] += bool(shown["groups"])
                    seen["layoffs"] += bool(laid)
                # The table's melds, each card with the seat that laid it.
                assert [(t["owner"], t["placed_by"]) for t in end["table"]] == [
                    (t.owner, [{p.card: p.seat for p in t.placed}[c] for c in t.cards]) for t in deal.table]
                # The points: the result's; what the hands pay sums to the winner's take.
                assert end["points"] == list(out.points)
                pays = [s["pays"] for s in end["seats"]]
                if out.reason == "out":
                    double = 1 + out.rummy
                    assert pays == [0 if s == out.winner else v * double for s, v in enumerate(out.hand_values)]
                if out.winner is None:
                    assert out.reason == "void" and pays == [0] * seats and not any(out.points)
                else:
                    table = out.table_points[out.winner] if deal.rules.scoring == "table" else 0
                    assert sum(pays) == out.points[out.winner] - table and pays[out.winner] == 0
                    for s in range(seats):
                        if s != out.winner and pays[s]:
                            assert f"pays {{{out.winner}}} {pays[s]}" in end["seats"][s]["notes"]
                # The game's totals after the deal (as the score sheet has them).
                after = [b + p for b, p in zip(totals_before, out.points, strict=True)]
                assert end["totals"] == after
            seen[out.reason] = seen.get(out.reason, 0) + 1
            seen["rummy"] += out.rummy
            seen["table"] += deal.rules.scoring == "table"
    assert seen["out"] >= 5 and seen["grouped"] >= 5 and seen["layoffs"] >= 1 and seen["table"] >= 1, str(seen)
