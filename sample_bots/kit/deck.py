"""The 52 cards as texts, shared by every card game of the kit: rank
``A23456789TJQK`` then suit ``shdc`` (``"As"``, ``"Td"``, ``"Kc"``), as on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
"""Ranks from low to high; ``RANKS[r - 1]`` is the letter of rank ``r`` (1 = ace … 13 = king)."""
SUITS = "shdc"
"""Suits: spades, hearts, diamonds, clubs."""
DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
"""The 52 cards, suit by suit, each suit from ace to king."""

def parse_card(text: str) -> str:
    """Check a card text and return it in canonical form (``"ts"`` → ``"Ts"``, ``"10s"`` → ``"Ts"``).

    Raises ``ValueError`` for anything that is not a card."""
    t = text.strip()
    if len(t) == 3 and t.startswith("10"):
        t = "T" + t[2]
    if len(t) != 2 or t[0].upper() not in RANKS or t[1].lower() not in SUITS:
        raise ValueError(f"not a card: {text!r} (expected a rank {RANKS} then a suit {SUITS}, e.g. 'Ts')")
    return t[0].upper() + t[1].lower()


def rank(card: str) -> int:
    """The rank as a number: ace 1, 2..10, jack 11, queen 12, king 13."""
    return RANKS.index(card[0]) + 1


def suit(card: str) -> str:
    """The suit letter (``s``, ``h``, ``d`` or ``c``)."""
    return card[1]


def make_card(card_rank: int, card_suit: str) -> str:
    """The card of a rank (1..13) and a suit letter."""
    return RANKS[card_rank - 1] + card_suit


def sort_cards(cards: Iterable[str]) -> list[str]:
    """Cards sorted by suit (s h d c), then rank."""
    return sorted(cards, key=lambda c: (SUITS.index(suit(c)), rank(c)))
