"""R11 at the engine: what a seat is shown is unchanged when the cards it never saw (other
hands, the stock) are reshuffled consistently with what it knew. A deal is played at random;
then every card the seat never saw during it is moved to another unseen card's place in the
deck, the same actions are replayed, and the seat's information state must be equal at every
step before the deal's end (where hands are revealed)."""

from __future__ import annotations

import random

import pytest

from referee.rummy import PRESETS, Card, Deal, Discard, DrawStock, RummyRules, deal_state, deck_for_deal


def _seen(deal: Deal, seat: int) -> set[Card]:
    """Every card ``seat`` saw during the deal: its own hand, its own stock draws, the pile,
    every card on the table and every card taken from the pile."""
    probe = Deal(deal.deck, deal.dealer, deal.rules, deal.seats, deal.key)
    seen = set(probe.hands[seat]) | set(probe.pile)
    for move in deal.history:
        probe.apply(move.action)
        if isinstance(move.action, DrawStock) and move.seat == seat:
            seen |= set(probe.hands[seat])
        if isinstance(move.action, Discard):
            seen.add(move.action.card)  # a discard that triggers a reshuffle leaves the pile at once
        seen |= set(probe.pile) | {p.card for m in probe.table for p in m.placed}
    return seen


@pytest.mark.parametrize("seats", [2, 4, 6])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_seats_views_do_not_depend_on_the_cards_it_never_saw(preset: str, seats: int) -> None:
    rules = RummyRules.preset(preset, stock_exhausted="reshuffle")
    for i in range(2):
        rng = random.Random(f"{preset}/{seats}/{i}")
        deal = Deal.from_deck(deck_for_deal(bytes([seats, i]), 1, 1), i % seats, rules, seats, key=b"k")
        while not deal.is_over:
            deal.apply(rng.choice(deal.legal_actions()))
        actions = [m.action for m in deal.history]
        for seat in range(seats):
            seen = _seen(deal, seat)
            unseen = [k for k, c in enumerate(deal.deck) if c not in seen]
            moved = [deal.deck[k] for k in unseen]
            rng.shuffle(moved)
            deck = list(deal.deck)
            for k, c in zip(unseen, moved, strict=True):
                deck[k] = c
            a = Deal(deal.deck, deal.dealer, rules, seats, b"k")
            b = Deal(deck, deal.dealer, rules, seats, b"k")
            for action in actions[:-1]:
                assert deal_state(a, seat) == deal_state(b, seat)
                a.apply(action)
                b.apply(action)
            assert deal_state(a, seat) == deal_state(b, seat)
