"""Cards of the 52-card deck, as the games share them: the card value, its text forms and the
bitmask representation.

A card's *index* is ``suit * 13 + (rank - 1)`` with suits in the order ``s h d c`` (the deck
order the shuffle starts from: ``As..Ks Ah..Kh Ad..Kd Ac..Kc``), so bit ``index`` of a 52-bit
integer stands for that card, and the 13 bits of one suit start at ``suit * 13``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from ._values import Value

RANKS: Final = "A23456789TJQK"
"""Rank characters in order, ace (rank 1) low."""
SUITS: Final = "shdc"
"""Suit characters in index order."""


@dataclass(frozen=True, slots=True, eq=False)
class Card(Value):
    """One playing card. Cards compare by index: suit first (s h d c), then rank. Equality and
    the hash are written out (compiled by mypyc, the dataclass's generated ones are lost)."""

    rank: int
    """1 (ace) to 13 (king)."""
    suit: int
    """0 spades, 1 hearts, 2 diamonds, 3 clubs."""
    index: int = field(init=False, repr=False, compare=False, hash=False)
    """Position 0..51 in the card index (suit-major), derived from rank and suit."""
    mask: int = field(init=False, repr=False, compare=False, hash=False)
    """This card's bit in a 52-bit card mask, derived from rank and suit."""

    def __post_init__(self) -> None:
        if not (1 <= self.rank <= 13) or not (0 <= self.suit <= 3):
            raise ValueError(f"no such card: rank={self.rank!r} suit={self.suit!r}")
        index = self.suit * 13 + self.rank - 1
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "mask", 1 << index)

    @property
    def value(self) -> int:
        """The card's count in a hand with faces at ten: ace 1, pips at face value, faces 10."""
        return self.rank if self.rank < 10 else 10

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
        return hash((self.rank, self.suit))

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


DECK: Final[tuple[Card, ...]] = tuple(Card(i % 13 + 1, i // 13) for i in range(52))
"""The 52 cards in index order."""
FULL_MASK: Final = (1 << 52) - 1
"""The mask holding every card."""


def parse_card(text: str) -> Card:
    """Parse ``"As"``, ``"Td"``, ``"Kc"`` (rank then suit; case of the rank ignored, ``10`` accepted)."""
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise ValueError(f"not a card: {text!r} (expected rank {RANKS} then suit {SUITS}, e.g. 'Ts')")
    rank = RANKS.find(t[0].upper())
    suit = SUITS.find(t[1].lower())
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


def to_mask(cards: Iterable[Card]) -> int:
    """The bitmask of a collection of cards (duplicates collapse)."""
    m = 0
    for c in cards:
        m |= 1 << c.index
    return m


def mask_indices(mask: int) -> list[int]:
    """The card indices set in ``mask``, lowest first."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def from_mask(mask: int) -> list[Card]:
    """The cards of a bitmask, in index order."""
    out: list[Card] = []
    while mask:
        low = mask & -mask
        out.append(DECK[low.bit_length() - 1])
        mask ^= low
    return out



_CANON: Final[dict[str, str]] = {str(c): str(c) for c in DECK}


def card_text(text: str) -> str | None:
    """The canonical text of one of the 52 cards (``"10h"`` → ``"Th"``), or ``None`` if ``text``
    is not a card: what a game's ``KnowsCards.card_text`` answers for these cards."""
    hit = _CANON.get(text)
    if hit is not None:
        return hit
    try:
        return str(parse_card(text))
    except ValueError:
        return None
