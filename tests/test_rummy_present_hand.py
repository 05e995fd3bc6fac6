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
