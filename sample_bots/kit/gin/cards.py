"""Card helpers for bot authors: card text, values, melds and deadwood (RULES.md §1–§2).

Cards are plain strings as on the wire: rank ``A23456789TJQK`` then suit ``shdc``
(``"As"``, ``"Td"``, ``"Kc"``). The ace is low (A-2-3 is a run, Q-K-A is not).

The deadwood functions are exact: they try every way of splitting the hand into melds
(there are only a handful of melds in a 10- or 11-card hand) and keep the best one.
Results are cached, so calling them again on the same cards is cheap.

    >>> deadwood(["As", "2s", "3s", "Kh", "Kd"])
    20
    >>> best_discard(["As", "2s", "3s", "7h", "Qh", "Kd"])
    'Kd'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..deck import DECK as DECK
from ..deck import RANKS as RANKS
from ..deck import SUITS as SUITS
from ..deck import make_card as make_card
from ..deck import parse_card as parse_card
from ..deck import rank as rank
from ..deck import sort_cards as sort_cards
from ..deck import suit as suit

Meld = frozenset[str]
"""A meld: a set (3–4 cards of one rank) or a run (3+ consecutive cards of one suit)."""


def value(card: str) -> int:
    """Deadwood value: ace 1, 2..10 their pips, jack/queen/king 10."""
    return min(rank(card), 10)


def total_value(cards: Iterable[str]) -> int:
    """The sum of the cards' deadwood values."""
    return sum(value(c) for c in cards)


def is_meld(cards: Iterable[str]) -> bool:
    """Whether the cards form one set or one run."""
    cs = list(cards)
    if len(cs) < 3 or len(set(cs)) != len(cs):
        return False
    if len({rank(c) for c in cs}) == 1:
        return len(cs) <= 4
    if len({suit(c) for c in cs}) != 1:
        return False
    ranks = sorted(rank(c) for c in cs)
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def find_melds(cards: Iterable[str]) -> list[Meld]:
    """Every meld that can be made from the cards (they may overlap).

    Sets: every group of 3 or 4 cards of one rank. Runs: every stretch of 3 or more
    consecutive ranks in one suit."""
    by_rank: dict[int, list[str]] = {}
    by_suit: dict[str, set[int]] = {}
    for c in sort_cards(set(cards)):  # sorted: the same melds in the same order every run
        by_rank.setdefault(rank(c), []).append(c)
        by_suit.setdefault(suit(c), set()).add(rank(c))
    melds: list[Meld] = []
    # Sets: all cards of a rank if there are 3 or 4, and each 3 of 4.
    for same in by_rank.values():
        if len(same) >= 3:
            melds.append(frozenset(same))
        if len(same) == 4:
            melds.extend(frozenset(same) - {left_out} for left_out in same)
    # Runs: from each rank held, go up while the next rank is held too.
    for s, ranks in by_suit.items():
        for start in ranks:
            run = []
            r = start
            while r in ranks:
                run.append(make_card(r, s))
                if len(run) >= 3:
                    melds.append(frozenset(run))
                r += 1
    return melds


@dataclass(frozen=True)
class Arrangement:
    """A way of playing a hand: its melds and the cards left over."""

    melds: list[list[str]]
    """The melds, each sorted."""
    deadwood_cards: list[str]
    """The cards in no meld, sorted."""
    deadwood: int
    """The sum of the deadwood cards' values."""


def _best_melds(melds: list[Meld], start: int, used: frozenset[str]) -> tuple[int, list[Meld]]:
    """The most card value that disjoint melds among ``melds[start:]`` can cover (avoiding
    the cards in ``used``), and those melds."""
    best_value, best_choice = 0, []
    for i in range(start, len(melds)):
        meld = melds[i]
        if meld.isdisjoint(used):
            covered, rest = _best_melds(melds, i + 1, used | meld)
            covered += total_value(meld)
            if covered > best_value:
                best_value, best_choice = covered, [meld, *rest]
    return best_value, best_choice


@lru_cache(maxsize=1 << 16)
def _arrange(hand: frozenset[str]) -> tuple[tuple[Meld, ...], int]:
    covered, melds = _best_melds(find_melds(hand), 0, frozenset())
    return tuple(melds), total_value(hand) - covered


def arrange(cards: Iterable[str]) -> Arrangement:
    """An arrangement of the cards with the least deadwood (RULES §2)."""
    hand = frozenset(cards)
    melds, dw = _arrange(hand)
    in_melds = set().union(*melds) if melds else set()
    return Arrangement(
        melds=[sort_cards(m) for m in melds],
        deadwood_cards=sort_cards(hand - in_melds),
        deadwood=dw,
    )


def deadwood(cards: Iterable[str]) -> int:
    """The least deadwood count of the cards over every arrangement (RULES §2)."""
    return _arrange(frozenset(cards))[1]


def deadwood_after_discard(cards: Iterable[str]) -> dict[str, int]:
    """For each card of the hand: the deadwood of the hand without it."""
    hand = frozenset(cards)
    return {c: deadwood(hand - {c}) for c in hand}


def best_discard(cards: Iterable[str], forbidden: str | None = None) -> str:
    """The discard that leaves the least deadwood; on a tie, the highest card (value, then
    rank) goes. ``forbidden`` (a card just taken from the discard pile) is never chosen."""
    after = deadwood_after_discard(cards)
    choices = [c for c in after if c != forbidden]
    if not choices:
        raise ValueError("no card may be discarded")
    return min(choices, key=lambda c: (after[c], -value(c), -rank(c), c))


def min_deadwood_after_discard(cards: Iterable[str], forbidden: str | None = None) -> int:
    """The least deadwood left after discarding one card (never ``forbidden``)."""
    after = deadwood_after_discard(cards)
    return min(dw for c, dw in after.items() if c != forbidden)


def layoff_targets(meld: Iterable[str]) -> list[str]:
    """The cards that could be laid off on a meld: the 4th card of a set of three, or the
    next card at either end of a run."""
    m = list(meld)
    ranks = sorted(rank(c) for c in m)
    if ranks[0] == ranks[-1]:
        return [make_card(ranks[0], s) for s in SUITS if make_card(ranks[0], s) not in m]
    s = suit(m[0])
    return [make_card(r, s) for r in (ranks[0] - 1, ranks[-1] + 1) if 1 <= r <= 13]
