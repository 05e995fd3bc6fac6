"""Cards (R1): the 52-card deck, text forms, values.

A card's *index* is ``suit * 13 + (rank - 1)`` with suits in the order ``s h d c`` (the deck
order the shuffle starts from: ``As..Ks Ah..Kh Ad..Kd Ac..Kc``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from referee.cardcore import Value

RANKS = "A23456789TJQK"
"""Rank characters in order, ace (rank 1) low."""
SUITS = "shdc"
"""Suit characters in index order."""


@dataclass(frozen=True, slots=True, eq=False)
class Card(Value):
    """One playing card; cards order by index (suit first, then rank). Equality, the hash and
    the order are written out (compiled by mypyc, the dataclass's generated ones are lost)."""

    index: int = field(init=False, repr=False)
    """Position 0..51 in the card index (suit-major), derived from rank and suit."""
    rank: int
    """1 (ace) to 13 (king)."""
    suit: int
    """0 spades, 1 hearts, 2 diamonds, 3 clubs."""

    def __post_init__(self) -> None:
        if not (1 <= self.rank <= 13) or not (0 <= self.suit <= 3):
            raise ValueError(f"no such card: rank={self.rank!r} suit={self.suit!r}")
        object.__setattr__(self, "index", self.suit * 13 + self.rank - 1)

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card with this index (0..51)."""
        if not 0 <= index < 52:
            raise ValueError(f"card index out of range: {index!r}")
        return DECK[index]

    def __str__(self) -> str:
        return RANKS[self.rank - 1] + SUITS[self.suit]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index == other.index

    def __hash__(self) -> int:
        return hash((self.index, self.rank, self.suit))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index < other.index

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index <= other.index

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index > other.index

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index >= other.index


DECK: tuple[Card, ...] = tuple(Card(i % 13 + 1, i // 13) for i in range(52))
"""The 52 cards in index order."""


def parse_card(text: str) -> Card:
    """Parse ``"As"``, ``"Td"``, ``"Kc"`` (rank then suit; ``10`` accepted for ``T``)."""
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    rank = RANKS.find(t[0].upper()) if len(t) == 2 else -1
    suit = SUITS.find(t[1].lower()) if len(t) == 2 else -1
    if rank < 0 or suit < 0:
        raise ValueError(f"not a card: {text!r} (expected rank {RANKS} then suit {SUITS}, e.g. 'Ts')")
    return DECK[suit * 13 + rank]


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse space- or comma-separated cards (or an iterable of card texts) into a list."""
    items = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(s) for s in items]


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as text separated by spaces, in the order given."""
    return " ".join(str(c) for c in cards)


def card_value(card: Card, face_values: str) -> int:
    """A card's value when counted in a hand (R1): ace 1, pips, faces 10 (``ten``) or
    J 11, Q 12, K 13 (``rank``)."""
    if card.rank < 10 or face_values == "rank":
        return card.rank
    return 10
