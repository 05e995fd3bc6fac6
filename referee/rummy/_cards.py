"""Cards (R1): the 52-card deck and its text forms — the card games' shared cards
(``referee.cardcore``) — and a card's value in a hand under the rule set's face values."""

from __future__ import annotations

from referee.cardcore import DECK as DECK
from referee.cardcore import RANKS as RANKS
from referee.cardcore import SUITS as SUITS
from referee.cardcore import Card as Card
from referee.cardcore import format_cards as format_cards
from referee.cardcore import parse_card as parse_card
from referee.cardcore import parse_cards as parse_cards


def card_value(card: Card, face_values: str) -> int:
    """A card's value when counted in a hand (R1): ace 1, pips, faces 10 (``ten``) or
    J 11, Q 12, K 13 (``rank``)."""
    if card.rank < 10 or face_values == "rank":
        return card.rank
    return 10
