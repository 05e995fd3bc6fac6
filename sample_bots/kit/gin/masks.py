"""Fast deadwood for bots that search: hands as 52-bit integers.

The functions of :mod:`sample_bots.kit.gin.cards` are written to be read; a bot that looks
ahead (what if I drew this card, then threw that one?) calls deadwood thousands of times
per decision and wants these instead. Same rules, same results, on bit masks:

- card ``i`` (``0..51``) is ``DECK[i]`` (suit by suit, ace to king), bit ``1 << i``;
- a hand is the OR of its cards' bits (:func:`to_mask`, :func:`from_mask`).

The search: take the hand's lowest card; either it is deadwood, or it belongs to a meld
whose lowest card it is. Try each, recursively, and remember the answer for every hand
(sub-hands repeat a lot).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from ..deck import DECK, RANKS, SUITS

INDEX: dict[str, int] = {c: i for i, c in enumerate(DECK)}
"""Card text → card index."""
VALUES: tuple[int, ...] = tuple(min(i % 13 + 1, 10) for i in range(52))
"""Deadwood value by card index."""


def to_mask(cards: Iterable[str]) -> int:
    """The mask of some cards."""
    m = 0
    for c in cards:
        m |= 1 << INDEX[c]
    return m


def from_mask(mask: int) -> list[str]:
    """The cards of a mask, in deck order."""
    return [DECK[i] for i in indices(mask)]


def indices(mask: int) -> list[int]:
    """The card indices of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_value(mask: int) -> int:
    """The sum of the deadwood values of the cards in a mask."""
    return sum(VALUES[i] for i in indices(mask))


def _melds_led_by(i: int) -> tuple[int, ...]:
    """Every meld (as a mask) whose lowest-index card is card ``i``."""
    r, s = i % 13, i // 13
    melds = []
    # Runs from this card upwards in its suit.
    run = 1 << i
    for nxt in range(r + 1, 13):
        run |= 1 << (s * 13 + nxt)
        if nxt - r >= 2:
            melds.append(run)
    # Sets of this rank in which this card has the lowest suit.
    others = [1 << (t * 13 + r) for t in range(s + 1, 4)]
    for a in range(len(others)):
        for b in range(a + 1, len(others)):
            melds.append((1 << i) | others[a] | others[b])
    if len(others) == 3:
        melds.append((1 << i) | others[0] | others[1] | others[2])
    return tuple(melds)


LED_BY: tuple[tuple[int, ...], ...] = tuple(_melds_led_by(i) for i in range(52))
"""``LED_BY[i]``: the melds whose lowest-index card is ``i``."""


@lru_cache(maxsize=1 << 18)
def deadwood_mask(mask: int) -> int:
    """The least deadwood of a hand (every arrangement considered)."""
    if not mask:
        return 0
    low = mask & -mask
    i = low.bit_length() - 1
    rest = mask ^ low
    best = VALUES[i] + deadwood_mask(rest)
    for meld in LED_BY[i]:
        if meld & mask == meld and best:
            best = min(best, deadwood_mask(mask ^ meld))
    return best


@lru_cache(maxsize=1 << 18)
def deadwood_after_best_discard_mask(mask: int) -> int:
    """The least deadwood left after throwing away one card of the hand (any card)."""
    low = mask & -mask
    i = low.bit_length() - 1
    rest = mask ^ low
    if not rest:
        return 0
    # The lowest card is thrown, or kept as deadwood, or kept in a meld.
    best = min(deadwood_mask(rest), VALUES[i] + deadwood_after_best_discard_mask(rest))
    for meld in LED_BY[i]:
        left = mask ^ meld
        # A meld that is the whole hand leaves nothing to throw; throwing one of its cards
        # is covered by the smaller melds and by the first option.
        if meld & mask == meld and left and best:
            best = min(best, deadwood_after_best_discard_mask(left))
    return best


def _melds_with(i: int) -> tuple[int, ...]:
    """Every meld (as a mask) that contains card ``i``."""
    return tuple(m for j in range(52) for m in LED_BY[j] if m >> i & 1)


WITH: tuple[tuple[int, ...], ...] = tuple(_melds_with(i) for i in range(52))
"""``WITH[i]``: every meld that contains card ``i``."""


def deadwood_after_draw_mask(hand: int, i: int) -> int:
    """The least deadwood after adding card ``i`` to the hand and throwing one card away
    (the same as ``deadwood_after_best_discard_mask(hand | 1 << i)``, faster when called for
    many cards ``i`` with the same hand).

    Either card ``i`` is thrown again, or it stays as deadwood (then the best card of the
    hand goes), or it ends up in a meld ``M``: then the rest of the hand, without ``M``,
    loses its best card."""
    best = min(deadwood_mask(hand), VALUES[i] + deadwood_after_best_discard_mask(hand))
    bit = 1 << i
    for meld in WITH[i]:
        partners = meld ^ bit
        if partners & hand == partners:
            rest = hand ^ partners
            if rest and best:
                best = min(best, deadwood_after_best_discard_mask(rest))
    return best


def deadwood_after_each_discard_mask(mask: int) -> dict[int, int]:
    """Card index → deadwood of the hand without that card."""
    return {i: deadwood_mask(mask & ~(1 << i)) for i in indices(mask)}


def card_index(card: str) -> int:
    """The index of a card text (accepts any case)."""
    return SUITS.index(card[1].lower()) * 13 + RANKS.index(card[0].upper())
