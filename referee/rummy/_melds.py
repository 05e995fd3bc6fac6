"""Melds on the table (R2): sets and runs, who laid which card, and what fits where.

A run's cards have *positions*: the rank, except an ace laid above a king, at 14 (R8.1, only
with ``ace = low_or_high``). A run never wraps and holds at most 13 cards.

The legal-move generator works on *masks*: an int with bit ``card.index`` set for each card it
holds. ``meld_entries`` finds every meld of a hand from small tables (the sets of each rank by
which suits are held, the runs of each suit by which ranks are held, the latter filled as
masks are met), ``NEAR3`` names the three-card melds through each card, ``fit_entries`` the
layoffs a table meld takes.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from referee.cardcore import Value

from ._actions import End, LayMeld, LayOff
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
    low = meld.low - 1 if end == "low" else meld.low
    high = meld.high + 1 if end == "high" else meld.high
    return TableMeld(meld.number, meld.owner, meld.kind, low, high, placed)


def table_value(meld: TableMeld, placed: Placed, face_values: str) -> int:
    """A table card's value (R8.1, R9.4): an ace above the king of a run counts 15 — also when it
    completes a 13-card run (2..K, the ace laid off at the high end) —, any other ace 1 (in a set,
    below the two: A..K or laid off below a 2..K run), other cards as in a hand. The run's
    positions say which end the ace sits at: position 14 is above the king."""
    if placed.card.rank == 1 and meld.kind == "run" and meld.high == 14:
        return 15
    return card_value(placed.card, face_values)


# ----- masks (the legal-move generator's hot path) -----
MeldEntry = tuple[int, int, LayMeld]
"""A meld the hand holds: its cards' mask, how many cards, the action that lays it."""
FitEntry = tuple[int, LayOff]
"""A layoff a table meld takes: the card's bit and the action that lays it off."""

SUIT_BITS: Final = 0x1FFF
"""The 13 bits of one suit (bit ``rank - 1``)."""
_SPREAD: Final = 1 | 1 << 13 | 1 << 26 | 1 << 39
"""One bit per suit at the ace: ``hand >> (rank - 1) & _SPREAD`` is which suits of a rank are held."""
_ACE_HIGH_RUN: Final = 1 << 12 | 1 << 11 | 1
"""Q, K and A of one suit."""
ACES: Final = _SPREAD
"""The four aces: ``hand & hand >> 11 & hand >> 12 & ACES`` has the ace of each suit whose
Q-K-A the hand holds."""
RUN_STARTS: Final = 0x7FF * _SPREAD
"""Ranks A..J of every suit: ``hand & hand >> 1 & hand >> 2 & RUN_STARTS`` has the lowest card
of every three-card run (ace low) the hand holds."""


def cards_mask(cards: Iterable[Card]) -> int:
    """The mask of some cards."""
    mask = 0
    for c in cards:
        mask |= 1 << c.index
    return mask


_SHAPES: Final[dict[int, tuple[MeldKind, int, int]]] = {}
"""Keyed by the mask of every meld ``meld_entries`` has offered: ``(kind, low, high)``."""


def _entry(cards: Sequence[Card], kind: MeldKind, low: int, high: int) -> MeldEntry:
    mask = cards_mask(cards)
    _SHAPES[mask] = kind, low, high
    return mask, len(cards), LayMeld(tuple(cards))


_LAID: Final[dict[tuple[int, int], tuple[Placed, ...]]] = {}
"""Keyed by an offered meld's mask and the seat laying it: its cards as placed (filled when met)."""


def offered_meld(number: int, owner: int, mask: int, cards: tuple[Card, ...]) -> TableMeld:
    """The table meld that laying ``cards`` (an offered meld, of mask ``mask``) makes."""
    kind, low, high = _SHAPES[mask]
    placed = _LAID.get((mask, owner))
    if placed is None:
        end: End = "set" if kind == "set" else "low"
        placed = _LAID[mask, owner] = tuple([Placed(c, owner, end, False) for c in cards])
    return TableMeld(number, owner, kind, low, high, placed)


def _build_sets() -> tuple[dict[int, tuple[MeldEntry, ...]], ...]:
    """By rank - 1, keyed by which suits of the rank are held (three or four): the sets, in
    the order of ``itertools.combinations`` over the suits (threes, then the four)."""
    out: list[dict[int, tuple[MeldEntry, ...]]] = []
    for r in range(13):
        by_held: dict[int, tuple[MeldEntry, ...]] = {}
        for pattern in range(16):
            group = [DECK[s * 13 + r] for s in range(4) if pattern >> s & 1]
            if len(group) >= 3:
                melds = [*itertools.combinations(group, 3), *itertools.combinations(group, 4)]
                by_held[cards_mask(group) >> r] = tuple(_entry(m, "set", r + 1, r + 1) for m in melds)
        out.append(by_held)
    return tuple(out)


_SETS: Final = _build_sets()
_RUNS: Final[tuple[dict[int, tuple[MeldEntry, ...]], dict[int, tuple[MeldEntry, ...]]]] = ({}, {})
"""By ``ace_high``, keyed by ``suit << 13 | the suit's 13 bits``: its runs (filled when met)."""


def _runs_of(suit: int, bits: int, ace_high: bool) -> tuple[MeldEntry, ...]:
    """Every run of one suit's cards, by low end, then high end (a run never holds 14 cards;
    2..ace-high is the same cards as ace..K and is left out)."""
    present = {r + 1 for r in range(13) if bits >> r & 1}
    if ace_high and 1 in present:
        present.add(14)
    out: list[MeldEntry] = []
    for low in sorted(present):
        high = low
        while high + 1 in present and high + 1 - low < 13:
            high += 1
            if high - low >= 2 and not (low == 2 and high == 14):
                out.append(_entry(run_cards(suit, low, high), "run", low, high))
    return tuple(out)


def meld_entries(hand: int, ace_high: bool) -> list[MeldEntry]:
    """Every set and run (R2) within the mask ``hand``: the sets by rank, then the runs by suit."""
    s0, s1, s2, s3 = hand & SUIT_BITS, hand >> 13 & SUIT_BITS, hand >> 26 & SUIT_BITS, hand >> 39
    out: list[MeldEntry] = []
    three = s0 & s1 & (s2 | s3) | s2 & s3 & (s0 | s1)  # ranks held in three or four suits
    while three:
        low = three & -three
        three ^= low
        r = low.bit_length() - 1
        out += _SETS[r][hand >> r & _SPREAD]
    for suit, bits in enumerate((s0, s1, s2, s3)):
        if bits & bits >> 1 & bits >> 2 or (ace_high and bits & _ACE_HIGH_RUN == _ACE_HIGH_RUN):
            memo = _RUNS[ace_high]
            key = suit << 13 | bits
            runs = memo.get(key)
            if runs is None:
                runs = memo[key] = _runs_of(suit, bits, ace_high)
            out += runs
    return out


def _build_near3(ace_high: bool) -> tuple[tuple[int, ...], ...]:
    """By card index: the masks of the three-card sets and runs holding that card."""
    out: list[tuple[int, ...]] = []
    for card in DECK:
        same_rank = [1 << (s * 13 + card.rank - 1) for s in range(4) if s != card.suit]
        near = [(1 << card.index) | a | b for a, b in itertools.combinations(same_rank, 2)]
        top = 14 if ace_high else 13
        positions = (1, 14) if card.rank == 1 and ace_high else (card.rank,)
        for p in positions:
            near += [cards_mask(run_cards(card.suit, low, low + 2))
                     for low in range(p - 2, p + 1) if low >= 1 and low + 2 <= top]
        out.append(tuple(near))
    return tuple(out)


NEAR3: Final = (_build_near3(False), _build_near3(True))
"""By ``ace_high``, then card index: the masks of every three-card meld holding the card (a
card is in a meld of some cards exactly when one of these lies within them)."""
AROUND: Final = tuple((1 << 52) - 1 & ~(1 << i) & functools.reduce(operator.or_, NEAR3[True][i]) for i in range(52))
"""By card index: the other cards of its three-card melds (ace high or not); a card is in a
meld only with two of them."""


_LAYOFFS: Final[dict[tuple[int, int, End], FitEntry]] = {}
"""Keyed by card index, meld number and end: that layoff with its card's bit (filled when met)."""


def fit_entries(meld: TableMeld, ace_high: bool) -> tuple[FitEntry, ...]:
    """``fits(meld)`` as layoff actions onto it, each with its card's bit."""
    out: list[FitEntry] = []
    for card, end in fits(meld, ace_high):
        key = card.index, meld.number, end
        entry = _LAYOFFS.get(key)
        if entry is None:
            entry = _LAYOFFS[key] = 1 << card.index, LayOff(card, meld.number, end)
        out.append(entry)
    return tuple(out)


# ----- a hand arranged for people -----
@dataclass(frozen=True, slots=True)
class Arrangement(Value):
    """A hand split into disjoint melds and the cards left (for showing a hand, not a rule)."""

    melds: tuple[tuple[Card, ...], ...]
    """The melds, each in its table order, by their first card."""
    deadwood: tuple[Card, ...]
    """The cards in no meld, in index order."""
    value: int
    """The deadwood's value (R1's card values)."""


def arrange(hand: Sequence[Card], ace_high: bool, face_values: str) -> Arrangement:
    """The hand's disjoint melds that leave the least deadwood value (ties: the first found,
    trying each card as deadwood before the melds through it)."""
    entries = meld_entries(cards_mask(hand), ace_high)
    values = {c.index: card_value(c, face_values) for c in hand}
    memo: dict[int, tuple[int, tuple[int, ...]]] = {}

    def best(mask: int) -> tuple[int, tuple[int, ...]]:
        """The least deadwood value of the cards of ``mask`` and the entries that leave it."""
        if not mask:
            return 0, ()
        found = memo.get(mask)
        if found is not None:
            return found
        low = mask & -mask
        rest, chosen = best(mask ^ low)
        out = rest + values[low.bit_length() - 1], chosen
        for k, (meld, _, _) in enumerate(entries):
            if meld & low and meld & mask == meld:
                rest, chosen = best(mask & ~meld)
                if rest < out[0]:
                    out = rest, (k, *chosen)
        memo[mask] = out
        return out

    value, chosen = best(cards_mask(hand))
    melds = sorted((entries[k][2].cards for k in chosen), key=lambda cs: min(c.index for c in cs))
    used = 0
    for k in chosen:
        used |= entries[k][0]
    return Arrangement(tuple(melds), tuple(sorted((c for c in hand if not used >> c.index & 1),
                                                  key=lambda c: c.index)), value)
