"""What each rummy seat may know, move by move (``referee.games.KnowsCards``, for ``arena
audit``'s information check), pure (R11): its hand and its own draws, the discard pile, every
card discarded or put on the table; once the deal is over every hand left (they are scored)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.cardcore import card_text as card_text

from ._actions import Discard, parse_action
from ._cards import parse_card
from ._deal import Deal
from ._rules import RummyRules

CARD_FIELDS = frozenset({
    "card", "cards", "hand", "discard_pile", "upcard", "must_use", "stopped", "drawn_card", "taken_cards",
})
"""The fields of ``rummy.proto``'s messages that hold cards (``KnowsCards.card_fields``)."""


def known_cards(rules: RummyRules, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                seats: int) -> list[list[set[str]]]:
    """For a ``deal`` record's fields and the deal's moves (``(-1, "")`` for a chance step): the
    cards each seat may know after each move, and last after the deal's end."""
    engine = Deal.from_deck([parse_card(c) for c in deal["deck"]], int(deal["dealer"]), rules, seats,
                            key=bytes.fromhex(str(deal["key"])))
    seen = [{str(c) for c in engine.hand(s)} | {str(c) for c in engine.pile} for s in range(seats)]
    out = [[set(k) for k in seen]]
    for seat, text in moves:
        if text:
            action = parse_action(text)
            engine.apply(action, seat)
            seen[seat] |= {str(c) for c in engine.hand(seat)}
            public = {str(c) for c in engine.pile} | {str(p.card) for m in engine.table for p in m.placed}
            if isinstance(action, Discard):
                public.add(str(action.card))  # a discard that triggers a reshuffle leaves the pile at once
            for k in seen:
                k |= public
        out.append([set(k) for k in seen])
    end = [set(k) for k in seen]
    if engine.outcome is not None:
        shown = {str(c) for hand in engine.outcome.hands for c in hand}
        for k in end:
            k |= shown
    return [*out, end]
