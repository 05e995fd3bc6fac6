"""The showdown after a knock, gin or big gin: arrangements, layoffs and the deal's score
(RULES §6, §7, §9).

The knocker's arrangement has minimum deadwood; among ties, the one that leaves the defender the
most deadwood after the defender's best play is used. After a knock that is not gin, the
defender's melds and layoffs are chosen together: every arrangement of the defender's hand
(non-maximal ones included) is tried, and the defender's deadwood cards that can be laid off
onto the knocker's melds are removed (a fourth card onto a set of three; the next card at either
end of a run, one after another). The least result is the defender's deadwood.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from referee.cardcore import Value
from referee.gin._cards import Card, from_mask
from referee.gin._melds import (
    Meld,
    arrange_mask,
    arrangements_within,
    cards_mask,
    deadwood_mask,
    meld_candidates_mask,
    value_mask,
)
from referee.gin._rules import RuleSet

__all__ = ["Showdown", "ShowdownKind", "Winner", "layoff_mask", "score_showdown"]

ShowdownKind = Literal["knock", "undercut", "gin", "big_gin"]
Winner = Literal["knocker", "defender"]

_SUIT: Final = 0x1FFF
_SPREAD: Final = 1 | 1 << 13 | 1 << 26 | 1 << 39
_CLASSIC: Final = RuleSet.classic()


@dataclass(frozen=True, slots=True)
class Showdown(Value):
    """The outcome of a deal ended by a knock, gin or big gin."""

    kind: ShowdownKind
    """``knock`` (the knocker wins), ``undercut`` (the defender wins), ``gin`` or ``big_gin``."""
    knocker_deadwood: int
    """The knocker's deadwood (minimum over arrangements)."""
    defender_deadwood: int
    """The defender's deadwood after layoffs (no layoffs after gin or big gin)."""
    layoffs: tuple[Card, ...]
    """The defender's cards laid off onto the knocker's melds, sorted (one optimal choice)."""
    winner: Winner
    """Who scores the deal."""
    points: int
    """Points to the winner (doubled if ``doubled``)."""
    knocker_melds: tuple[Meld, ...]
    """The knocker's melds as used for the showdown."""
    knocker_deadwood_cards: tuple[Card, ...]
    """The knocker's cards in no meld, sorted."""
    defender_melds: tuple[Meld, ...]
    """The defender's own melds (laid-off cards are not in them)."""
    defender_deadwood_cards: tuple[Card, ...]
    """The defender's cards neither in a meld nor laid off, sorted."""
    knocker_cards: tuple[Card, ...]
    """The knocker's cards, sorted (11 for big gin, else 10)."""
    defender_cards: tuple[Card, ...]
    """The defender's 10 cards, sorted."""
    doubled: bool
    """Whether the points were doubled (Oklahoma spade upcard)."""


def _layoff_targets(melds: Iterable[int]) -> tuple[int, list[tuple[int, int, int]]]:
    """What the knocker's melds accept: the mask of fourth cards for sets of three, and for each
    run (suit shift, lowest bit, highest bit) within its suit."""
    set_cards = 0
    runs: list[tuple[int, int, int]] = []
    for m in melds:
        low = (m & -m).bit_length() - 1
        high = m.bit_length() - 1
        if high - low < 13 and m.bit_count() == high - low + 1 and low // 13 == high // 13:
            shift = 13 * (low // 13)
            runs.append((shift, low - shift, high - shift))
        elif m.bit_count() == 3:
            set_cards |= (_SPREAD << (low % 13)) ^ m
    return set_cards, runs


def _laid_off(dead: int, set_cards: int, runs: list[tuple[int, int, int]]) -> int:
    """The largest mask of cards of ``dead`` that can be laid off onto the knocker's melds.

    Any card reachable from a run's end through consecutive cards of ``dead`` can be laid off,
    and so can the fourth card of a set of three; these are all compatible (a card wanted by
    both a set and a run goes on the run), so the union is laid off at once."""
    out = dead & set_cards
    for shift, lo, hi in runs:
        d = (dead >> shift) & _SUIT
        # upwards from hi + 1: the block of consecutive cards of d starting there
        t = d >> (hi + 1)
        n = (~t & (t + 1)).bit_length() - 1
        if n:
            out |= ((1 << n) - 1) << (hi + 1 + shift)
        # downwards from lo - 1
        k = lo - 1
        while k >= 0 and d >> k & 1:
            out |= 1 << (k + shift)
            k -= 1
    return out


def layoff_mask(knocker_melds: Iterable[int], defender_deadwood: int) -> int:
    """The defender's deadwood cards (mask) that can be laid off onto these knocker melds (masks)."""
    set_cards, runs = _layoff_targets(knocker_melds)
    return _laid_off(defender_deadwood, set_cards, runs)


@dataclass(frozen=True, slots=True)
class _DefenderOption(Value):
    """One distinct deadwood mask of the defender and an arrangement reaching it."""

    dead: int
    """The deadwood mask (before layoffs)."""
    value: int
    """Its deadwood value."""
    melds: tuple[int, ...]
    """The defender's melds of that arrangement (first found)."""


def _defender_options(mask: int, reachable: int) -> list[_DefenderOption]:
    """The defender's arrangements worth trying, one per distinct deadwood mask, by increasing
    deadwood. Only cards of ``reachable`` can ever be laid off, so an arrangement whose other
    deadwood cards already exceed the least deadwood cannot do better than it: skipped."""
    seen: dict[int, _DefenderOption] = {}
    for melds, dead, value in arrangements_within(mask, deadwood_mask(mask), reachable):
        if dead not in seen:
            seen[dead] = _DefenderOption(dead, value, melds)
    opts = list(seen.values())
    opts.sort(key=lambda o: o.value)  # stable: ties keep enumeration order
    return opts


def _defender_best(
    options: list[_DefenderOption], knocker_melds: tuple[int, ...], all_cards: int
) -> tuple[int, _DefenderOption, int]:
    """The defender's least deadwood after layoffs, the arrangement used and the laid-off mask.
    Among ties the fewest laid-off cards (the defender keeps its own melds) wins."""
    set_cards, runs = _layoff_targets(knocker_melds)
    # no option lays off more than every card that can be laid off from the whole hand
    most = value_mask(_laid_off(all_cards, set_cards, runs))
    best: tuple[int, _DefenderOption, int] | None = None
    for opt in options:
        if best is not None and opt.value - most > best[0]:
            break  # options come by increasing deadwood: none further can do better
        off = _laid_off(opt.dead, set_cards, runs)
        v = opt.value - value_mask(off) if off else opt.value
        if best is None or v < best[0] or (v == best[0] and off.bit_count() < best[2].bit_count()):
            best = (v, opt, off)
    assert best is not None
    return best


def _sorted_melds(melds: Iterable[int]) -> tuple[Meld, ...]:
    return tuple(Meld.from_mask(m) for m in sorted(melds, key=lambda m: m & -m))


def _hand_mask(cards: Iterable[Card], who: str) -> int:
    try:
        return cards_mask(cards)
    except ValueError as e:
        raise ValueError(f"{who}'s hand: {e}") from None


def score_showdown(
    knocker_cards: Iterable[Card],
    defender_cards: Iterable[Card],
    rules: RuleSet = _CLASSIC,
    *,
    big_gin: bool = False,
    double: bool = False,
) -> Showdown:
    """Arrange both hands, lay off and score the deal (RULES §7, §9).

    ``knocker_cards``: the 10 cards the knocker keeps (11 for ``big_gin``); ``defender_cards``:
    the defender's 10 cards; ``rules`` (default ``RuleSet.classic()``) gives the bonuses;
    ``double`` doubles the points (Oklahoma spade upcard). The knock limit is not checked here.
    """
    kmask = _hand_mask(knocker_cards, "knocker")
    dmask = _hand_mask(defender_cards, "defender")
    nk = kmask.bit_count()
    nd = dmask.bit_count()
    if big_gin and nk != 11:
        raise ValueError(f"big gin needs the knocker's 11 cards; got {nk}")
    if not big_gin and nk != 10:
        raise ValueError(f"the knocker must show the 10 cards kept after the knock discard; got {nk}")
    if nd != 10:
        raise ValueError(f"the defender must hold 10 cards; got {nd}")
    both = kmask & dmask
    if both:
        shared = " ".join(str(c) for c in from_mask(both))
        raise ValueError(f"card(s) in both hands: {shared}")

    k_dw = deadwood_mask(kmask)
    if big_gin and k_dw:
        raise ValueError(f"big gin needs all 11 cards melded; the knocker's deadwood is {k_dw}")

    kind: ShowdownKind
    if k_dw == 0:
        # gin or big gin: no layoffs, the defender keeps its own best arrangement
        k_melds = tuple(arrange_mask(kmask))
        d_melds = tuple(arrange_mask(dmask))
        d_dw = deadwood_mask(dmask)
        off = 0
        d_dead = dmask
        for m in d_melds:
            d_dead ^= m
        kind = "big_gin" if big_gin else "gin"
        winner: Winner = "knocker"
        points = (rules.big_gin_bonus if big_gin else rules.gin_bonus) + d_dw
    else:
        # Every meld of any knocker arrangement is among the candidate melds, so no card
        # outside this mask can ever be laid off.
        reachable = layoff_mask(meld_candidates_mask(kmask), dmask)
        options = _defender_options(dmask, reachable)
        if not reachable:
            options = options[:1]  # the defender's least deadwood is all there is
        chosen: tuple[tuple[int, ...], int, _DefenderOption, int] | None = None
        for k_arr, _, _ in arrangements_within(kmask, k_dw):
            v, opt, laid = _defender_best(options, k_arr, dmask)
            if chosen is None or v > chosen[1]:
                chosen = (k_arr, v, opt, laid)
        assert chosen is not None
        k_melds, d_dw, opt, off = chosen
        d_melds = opt.melds
        d_dead = opt.dead ^ off
        if d_dw > k_dw:
            kind, winner, points = "knock", "knocker", d_dw - k_dw
        else:
            kind, winner, points = "undercut", "defender", k_dw - d_dw + rules.undercut_bonus

    k_dead_mask = kmask
    for m in k_melds:
        k_dead_mask ^= m
    return Showdown(
        kind=kind,
        knocker_deadwood=k_dw,
        defender_deadwood=d_dw,
        layoffs=tuple(from_mask(off)),
        winner=winner,
        points=points * 2 if double else points,
        knocker_melds=_sorted_melds(k_melds),
        knocker_deadwood_cards=tuple(from_mask(k_dead_mask)),
        defender_melds=_sorted_melds(d_melds),
        defender_deadwood_cards=tuple(from_mask(d_dead)),
        knocker_cards=tuple(from_mask(kmask)),
        defender_cards=tuple(from_mask(dmask)),
        doubled=double,
    )
