"""Melds on the table (R2): sets and runs, who laid which card, and what fits where.

A run's cards have *positions*: the rank, except an ace laid above a king, at 14 (R8.1, only
with ``ace = low_or_high``). A run never wraps and holds at most 13 cards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from referee._cardcore import Value

from ._actions import End
from ._cards import DECK, Card, card_value

MeldKind = Literal["set", "run"]


@dataclass(frozen=True, slots=True)
class Placed(Value):
    """One card on the table and who put it there."""

    card: Card
    """The card."""
    seat: int
    """The seat that laid it (in a meld or as a layoff)."""
    end: End
    """How it came: ``set`` (in a set or onto one), ``low``/``high`` (a layoff at that end of a
    run; the cards of the first meld of a run say ``low``)."""
    layoff: bool
    """Whether it was laid off onto the meld (not part of the meld as first laid)."""


@dataclass(frozen=True, slots=True)
class TableMeld(Value):
    """A meld on the table, with the cards laid off onto it."""

    number: int
    """Its position on the table, in the order melds were laid (from 0)."""
    owner: int
    """The seat that laid the meld."""
    kind: MeldKind
    """``set`` or ``run``."""
    low: int
    """A run's lowest position (1..12); a set's rank."""
    high: int
    """A run's highest position (3..14); a set's rank."""
    placed: tuple[Placed, ...]
    """Every card of the meld in the order it came to the table (first meld, then layoffs)."""

    @property
    def cards(self) -> tuple[Card, ...]:
        """The meld's cards: a set by suit, a run from its low end to its high end."""
        cs = [p.card for p in self.placed]
        if self.kind == "set":
            return tuple(sorted(cs))
        return tuple(run_cards(cs[0].suit, self.low, self.high))


def _card_at(suit: int, position: int) -> Card:
    return DECK[suit * 13 + (0 if position == 14 else position - 1)]


def run_cards(suit: int, low: int, high: int) -> list[Card]:
    """The cards of a run of one suit between two positions."""
    return [_card_at(suit, p) for p in range(low, high + 1)]


def meld_shape(cards: Sequence[Card], ace_high: bool) -> tuple[MeldKind, int, int] | None:
    """``(kind, low, high)`` if the cards are a set or a run (R2), else ``None``."""
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return None
    if len({c.rank for c in cards}) == 1:
        return ("set", cards[0].rank, cards[0].rank) if len(cards) <= 4 else None
    if len({c.suit for c in cards}) != 1 or len(cards) > 13:
        return None
    ranks = sorted(c.rank for c in cards)
    if ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return "run", ranks[0], ranks[-1]
    if ace_high and ranks[0] == 1:
        high = [*ranks[1:], 14]
        if high == list(range(high[0], 15)):
            return "run", high[0], 14
    return None


def new_meld(number: int, owner: int, cards: Sequence[Card], ace_high: bool) -> TableMeld | None:
    """The table meld that ``cards`` lay, or ``None`` if they are not a meld."""
    shape = meld_shape(cards, ace_high)
    if shape is None:
        return None
    kind, low, high = shape
    ordered = sorted(cards) if kind == "set" else run_cards(cards[0].suit, low, high)
    end: End = "set" if kind == "set" else "low"
    return TableMeld(number, owner, kind, low, high, tuple(Placed(c, owner, end, False) for c in ordered))


def fits(meld: TableMeld, ace_high: bool) -> list[tuple[Card, End]]:
    """The cards that could be laid off onto ``meld`` as it stands, and where (R2)."""
    if meld.kind == "set":
        present = {p.card.suit for p in meld.placed}
        return [(DECK[s * 13 + meld.low - 1], "set") for s in range(4) if s not in present]
    if meld.high - meld.low + 1 >= 13:
        return []
    suit = meld.placed[0].card.suit
    out: list[tuple[Card, End]] = []
    if meld.low > 1:
        out.append((_card_at(suit, meld.low - 1), "low"))
    if meld.high < 13 or (meld.high == 13 and ace_high):
        out.append((_card_at(suit, meld.high + 1), "high"))
    return out


def lay_off(meld: TableMeld, card: Card, seat: int, end: End) -> TableMeld:
    """``meld`` with ``card`` laid off at ``end`` by ``seat`` (the caller checked it fits)."""
    placed = (*meld.placed, Placed(card, seat, end, True))
    if end == "low":
        return dataclasses.replace(meld, low=meld.low - 1, placed=placed)
    if end == "high":
        return dataclasses.replace(meld, high=meld.high + 1, placed=placed)
    return dataclasses.replace(meld, placed=placed)


def table_value(meld: TableMeld, placed: Placed, face_values: str) -> int:
    """A table card's value (R8.1, R9.4): an ace laid high in a run of fewer than 13 cards
    counts 15, any other ace 1, other cards as in a hand."""
    if placed.card.rank == 1 and meld.kind == "run" and meld.high == 14 and meld.high - meld.low < 12:
        return 15
    return card_value(placed.card, face_values)
