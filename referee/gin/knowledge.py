"""What each Gin seat may know, move by move (``referee.games.KnowsCards``, for ``arena audit``'s
information check), pure: its own hand and every card it drew, the upcard and every card that
was face up on the discard pile; after a showdown both hands and the layoffs (RULES §9 and §12).
The knocker's face-down discard stays the knocker's; a dead hand shows nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.cardcore import card_text as card_text

from ._actions import parse_action
from ._cards import parse_card
from ._deal import Deal
from ._rules import RuleSet

CARD_FIELDS = frozenset({
    "card", "cards", "hand", "my_deadwood_cards", "discard_pile", "first_upcard", "forbidden_discard",
    "laid_off", "deadwood_cards", "knock_discard", "upcard",
})
"""The fields of ``gin.proto``'s messages that hold cards (``KnowsCards.card_fields``)."""


def known_cards(rules: RuleSet, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                seats: int) -> list[list[set[str]]]:
    """For a ``deal`` record's fields and the deal's moves (``(-1, "")`` for a chance step): the
    cards each seat may know after each move, and last after the deal's end."""
    engine = Deal.from_deck(tuple(parse_card(c) for c in deal["deck"]), int(deal["dealer"]), rules,
                            key=bytes.fromhex(str(deal["key"])))
    seen = [{str(c) for c in engine.hand(s)} | {str(c) for c in engine.discard_pile} for s in range(2)]
    out = [[set(k) for k in seen]]
    for seat, text in moves:
        if text:
            action = parse_action(text)
            engine.apply(action, seat)
            seen[seat] |= {str(c) for c in engine.hand(seat)}
            public = {str(c) for c in engine.discard_pile}
            if action.kind == "discard":
                public.add(str(getattr(action, "card", "")))  # a discard that triggers a reshuffle
            for k in seen:
                k |= public
        out.append([set(k) for k in seen])
    end = [set(k) for k in seen]
    outcome = engine.outcome
    if outcome is not None and outcome.kind != "dead":
        shown = {str(c) for hand in outcome.hands for c in hand}
        if outcome.showdown is not None:
            shown |= {str(c) for c in outcome.showdown.layoffs}
        for k in end:
            k |= shown
    return [*out, end]
