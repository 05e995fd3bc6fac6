"""Melds and deadwood (RULES §1, §2, §6): the shared vectors, a brute force and hand-written cases."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.gin._cards import DECK, FULL_MASK, Card, from_mask, parse_cards, to_mask
from referee.gin._melds import (
    RUN_DW,
    RUN_DW_DROP1,
    Arrangement,
    Meld,
    _deadwood_dp,
    all_arrangements,
    arrange,
    arrange_mask,
    deadwood,
    deadwood_after_each_discard,
    deadwood_after_each_discard_mask,
    deadwood_mask,
    min_arrangements,
    min_deadwood_after_discard,
    min_deadwood_after_discard_mask,
)
from tests._vectors import load

# ----------------------------------------------------------------------------------------------
# An independent brute force, on Card objects
# ----------------------------------------------------------------------------------------------


def brute_melds(cards: frozenset[Card]) -> list[frozenset[Card]]:
    """Every set and run that can be made from ``cards``."""
    out: list[frozenset[Card]] = []
    for rank in range(1, 14):
        same = [c for c in cards if c.rank == rank]
        for n in (3, 4):
            out.extend(frozenset(combo) for combo in itertools.combinations(same, n))
    for suit in range(4):
        ranks = {c.rank for c in cards if c.suit == suit}
        for lo in range(1, 12):
            for hi in range(lo + 2, 14):
                if all(r in ranks for r in range(lo, hi + 1)):
                    out.append(frozenset(Card(r, suit) for r in range(lo, hi + 1)))
    return out


@cache
def brute_deadwood(cards: frozenset[Card]) -> int:
    """Least deadwood: the lowest card is deadwood or in some meld of the remaining cards."""
    if not cards:
        return 0
    low = min(cards)
    best = low.value + brute_deadwood(cards - {low})
    for meld in brute_melds(cards):
        if low in meld:
            best = min(best, brute_deadwood(cards - meld))
    return best


def brute_arrangements(cards: frozenset[Card]) -> set[frozenset[frozenset[Card]]]:
    """Every choice of pairwise disjoint melds (as a set of melds)."""
    melds = brute_melds(cards)
    out: set[frozenset[frozenset[Card]]] = set()

    def rec(i: int, used: frozenset[Card], chosen: list[frozenset[Card]]) -> None:
        if i == len(melds):
            out.add(frozenset(chosen))
            return
        rec(i + 1, used, chosen)
        if not melds[i] & used:
            chosen.append(melds[i])
            rec(i + 1, used | melds[i], chosen)
            chosen.pop()

    rec(0, frozenset(), [])
    return out


def is_meld(cards: tuple[Card, ...]) -> bool:
    if len(cards) < 3:
        return False
    if len({c.rank for c in cards}) == 1:
        return len(cards) <= 4
    if len({c.suit for c in cards}) != 1:
        return False
    ranks = sorted(c.rank for c in cards)
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def check_arrangement(arr: Arrangement, hand: list[Card]) -> None:
    """Melds valid and disjoint, deadwood cards the rest, deadwood their value."""
    seen: set[Card] = set()
    for meld in arr.melds:
        assert is_meld(meld.cards), str(meld)
        assert list(meld.cards) == sorted(meld.cards)
        assert meld.kind == ("set" if len({c.rank for c in meld.cards}) == 1 else "run")
        assert not seen & set(meld.cards), f"meld {meld} overlaps another"
        seen |= set(meld.cards)
    assert list(arr.deadwood_cards) == sorted(arr.deadwood_cards)
    assert seen | set(arr.deadwood_cards) == set(hand)
    assert not seen & set(arr.deadwood_cards)
    assert arr.deadwood == sum(c.value for c in arr.deadwood_cards)


# ----------------------------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------------------------

random_hands = st.lists(st.sampled_from(DECK), min_size=0, max_size=11, unique=True)


@st.composite
def dense_hands(draw: Any, min_size: int = 0, max_size: int = 11) -> list[Card]:
    """Cards packed into a window of 2–5 ranks, so sets and runs overlap."""
    lo = draw(st.integers(1, 12))
    width = draw(st.integers(2, 5))
    pool = [Card(r, s) for r in range(lo, min(lo + width, 14)) for s in range(4)]
    size = draw(st.integers(min(min_size, len(pool)), min(max_size, len(pool))))
    return list(draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size, unique=True)))


any_hands = st.one_of(random_hands, dense_hands())

# ----------------------------------------------------------------------------------------------
# The rule test vectors
# ----------------------------------------------------------------------------------------------

DEADWOOD_VECTORS = load("deadwood.jsonl")


def test_vectors_cover_both_hand_sizes() -> None:
    sizes = {len(v["hand"]) for v in DEADWOOD_VECTORS}
    assert sizes == {10, 11}
    assert len(DEADWOOD_VECTORS) > 1000


@pytest.mark.parametrize(
    "vec", DEADWOOD_VECTORS, ids=[f"line{i + 1}-{v.get('kind', '')}" for i, v in enumerate(DEADWOOD_VECTORS)]
)
def test_deadwood_vector(vec: dict[str, Any]) -> None:
    hand = parse_cards(vec["hand"])
    mask = to_mask(hand)
    if len(hand) == 10:
        assert deadwood(hand) == vec["deadwood"]
        assert deadwood_mask(mask) == vec["deadwood"]
        assert arrange(hand).deadwood == vec["deadwood"]
        return
    assert len(hand) == 11
    after = vec["deadwood_after_best_discard"]
    assert min_deadwood_after_discard(hand) == after
    assert min_deadwood_after_discard_mask(mask) == after
    each = deadwood_after_each_discard(hand)
    assert set(each) == set(hand)
    assert min(each.values()) == after
    assert {str(c) for c, v in each.items() if v == after} == set(vec["best_discards"])
    assert {str(c) for c, v in each.items() if v <= 10} == set(vec["knock_discards"])
    assert deadwood(hand) == vec["deadwood_all"]
    assert arrange(hand).deadwood == vec["deadwood_all"]


# ----------------------------------------------------------------------------------------------
# Properties
# ----------------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(any_hands)
def test_deadwood_mask_equals_brute_force(hand: list[Card]) -> None:
    assert deadwood_mask(to_mask(hand)) == brute_deadwood(frozenset(hand))
    assert deadwood(hand) == brute_deadwood(frozenset(hand))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        dense_hands(min_size=1, max_size=12),
        st.lists(st.sampled_from(DECK), min_size=1, max_size=12, unique=True),
    )
)
def test_min_deadwood_after_discard_is_the_min_over_discards(hand: list[Card]) -> None:
    mask = to_mask(hand)
    expected = min(brute_deadwood(frozenset(hand) - {c}) for c in hand)
    assert min_deadwood_after_discard_mask(mask) == expected
    assert min_deadwood_after_discard(hand) == expected
    each = deadwood_after_each_discard(hand)
    assert each == {c: deadwood_mask(mask ^ c.mask) for c in hand}
    assert deadwood_after_each_discard_mask(mask) == {c.index: v for c, v in each.items()}


@settings(max_examples=300, deadline=None)
@given(any_hands)
def test_arrange_is_a_valid_minimum_arrangement(hand: list[Card]) -> None:
    arr = arrange(hand)
    check_arrangement(arr, hand)
    assert arr.deadwood == deadwood(hand)
    assert arrange(list(reversed(hand))) == arr  # deterministic, order of input irrelevant


@settings(max_examples=150, deadline=None)
@given(st.one_of(dense_hands(max_size=9), st.lists(st.sampled_from(DECK), max_size=10, unique=True)))
def test_all_arrangements_lists_every_choice_of_disjoint_melds_once(hand: list[Card]) -> None:
    arrs = list(all_arrangements(hand))
    for arr in arrs:
        check_arrangement(arr, hand)
    as_sets = [frozenset(frozenset(m.cards) for m in arr.melds) for arr in arrs]
    assert len(as_sets) == len(set(as_sets)), "an arrangement is listed twice"
    assert set(as_sets) == brute_arrangements(frozenset(hand))
    best = min(a.deadwood for a in arrs)
    assert best == deadwood(hand)
    mins = min_arrangements(hand)
    assert mins == [a for a in arrs if a.deadwood == best]
    assert arrange(hand) in mins


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=12, max_size=52, unique=True))
def test_large_hands_enumeration_and_rank_programme_agree(hand: list[Card]) -> None:
    mask = to_mask(hand)
    dw = _deadwood_dp(mask)
    assert deadwood_mask(mask) == dw
    melds = arrange_mask(mask)
    arr = arrange(hand)
    check_arrangement(arr, hand)
    assert arr.deadwood == dw
    assert sum(m.bit_count() for m in melds) == sum(len(m.cards) for m in arr.melds)
    if len(hand) <= 16:
        assert dw == brute_deadwood(frozenset(hand))


def test_rank_programme_agrees_with_enumeration_on_random_hands() -> None:
    rng = random.Random(2024)
    for _ in range(300):
        n = rng.randint(0, 24)
        mask = sum(1 << i for i in rng.sample(range(52), n))
        assert _deadwood_dp(mask) == deadwood_mask(mask)


def test_run_tables() -> None:
    assert len(RUN_DW) == len(RUN_DW_DROP1) == 8192
    assert RUN_DW[0] == 0
    assert RUN_DW[0b111] == 0  # A-2-3
    assert RUN_DW[0b1011] == 1 + 2 + 4
    assert RUN_DW[0b1111] == 0
    assert RUN_DW_DROP1[0b1111] == 0  # drop the ace or the four
    assert RUN_DW_DROP1[0b111] == 2 + 1  # dropping the three leaves A, 2
    assert RUN_DW_DROP1[0] > 10**6
    for m in range(1, 8192):
        bits = [1 << i for i in range(13) if m >> i & 1]
        assert RUN_DW_DROP1[m] == min(RUN_DW[m ^ b] for b in bits)


# ----------------------------------------------------------------------------------------------
# Hand-written cases
# ----------------------------------------------------------------------------------------------


def test_rule_1_ace_is_low_only() -> None:
    assert deadwood(parse_cards("As 2s 3s")) == 0
    assert deadwood(parse_cards("Qs Ks As")) == 21  # Q-K-A is no run
    assert deadwood(parse_cards("Ks As 2s")) == 13  # K-A-2 is no run
    assert deadwood(parse_cards("Js Qs Ks")) == 0
    assert deadwood(parse_cards("Ts Js Qs Ks As 2s")) == 3


def test_rule_1_card_values() -> None:
    assert deadwood(parse_cards("As")) == 1
    assert deadwood(parse_cards("9h Th Jd Qc Ks")) == 9 + 40


def test_rule_2_example_run_or_set_of_fives() -> None:
    hand = parse_cards("4h 5h 6h 5s 5d")
    assert deadwood(hand) == 10  # the run leaves 5s 5d, the set leaves 4h 6h: both 10
    mins = {frozenset(str(m) for m in a.melds) for a in min_arrangements(hand)}
    assert mins == {frozenset({"4h5h6h"}), frozenset({"5s5h5d"})}
    hand2 = parse_cards("4h 5h 6h 5s 5d 5c")
    assert deadwood(hand2) == 0  # with the third five: the run and the other three fives
    assert sorted(str(m) for m in arrange(hand2).melds) == ["4h5h6h", "5s5d5c"]


def test_rule_2_sets_are_three_or_four() -> None:
    assert deadwood(parse_cards("7s 7h")) == 14
    assert deadwood(parse_cards("7s 7h 7d")) == 0
    assert deadwood(parse_cards("7s 7h 7d 7c")) == 0


def test_rule_2_runs_inside_longer_runs_are_melds() -> None:
    hand = parse_cards("3s 4s 5s 6s 7s")
    runs = {str(m) for a in all_arrangements(hand) for m in a.melds}
    assert runs == {"3s4s5s", "4s5s6s", "5s6s7s", "3s4s5s6s", "4s5s6s7s", "3s4s5s6s7s"}
    # a card can serve in a set while the rest of the run stays a run
    assert deadwood(parse_cards("3s 4s 5s 6s 7s 7h 7d")) == 0


def test_rule_2_overlapping_quad_and_runs() -> None:
    hand = parse_cards("5s 5h 5d 5c 4s 6s 4h 6h 3d 4d")
    # 4s5s6s + 4h5h6h + 3d4d5d + ... leaves 5c only
    assert deadwood(hand) == 5
    assert arrange(hand).deadwood == 5


def test_rule_6_best_discard_is_exact_not_the_drop_the_highest_deadwood_shortcut() -> None:
    # A vector of kind openspiel_11_mismatch: all 11 cards arrange to 12 at best, and dropping
    # the highest deadwood card of a best 11-card arrangement does not reach the true minimum;
    # discarding 7h (then 4h 4d 4c, 5s 6s 7s, 5d 6d 7d and 5h loose) leaves 5.
    hand = parse_cards("5s 6s 7s 4h 5h 7h 4d 5d 6d 7d 4c")
    assert deadwood(hand) == 12
    assert min_deadwood_after_discard(hand) == 5
    each = deadwood_after_each_discard(hand)
    assert [str(c) for c, v in each.items() if v == 5] == ["7h"]


def test_big_gin_eleven_cards_melded() -> None:
    hand = parse_cards("As 2s 3s 4s 7h 7d 7c Jd Qd Kd Td")
    assert deadwood(hand) == 0
    assert min_deadwood_after_discard(hand) == 0  # drop As or Td


def test_meld_values() -> None:
    m = Meld.from_mask(to_mask(parse_cards("6h 4h 5h")))
    assert m.kind == "run" and str(m) == "4h5h6h"
    assert m.mask == to_mask(parse_cards("4h 5h 6h"))
    s = Meld.from_mask(to_mask(parse_cards("5d 5s 5h")))
    assert s.kind == "set" and str(s) == "5s5h5d"
    with pytest.raises(ValueError, match="not a meld"):
        Meld.from_mask(to_mask(parse_cards("4h 5h 7h")))
    with pytest.raises(ValueError, match="not a run"):
        Meld("run", tuple(parse_cards("5s 5h 5d")))
    with pytest.raises(ValueError, match="sorted"):
        Meld("run", tuple(parse_cards("5h 4h 6h")))


def test_duplicate_card_is_an_error() -> None:
    hand = parse_cards("4h 5h 6h 4h")
    for fn in (deadwood, arrange, min_deadwood_after_discard, deadwood_after_each_discard, min_arrangements):
        with pytest.raises(ValueError, match="duplicate card: 4h"):
            fn(hand)
    with pytest.raises(ValueError, match="duplicate"):
        list(all_arrangements(hand))


def test_bad_masks_are_errors() -> None:
    with pytest.raises(ValueError):
        deadwood_mask(-1)
    with pytest.raises(ValueError):
        deadwood_mask(FULL_MASK + 1)
    with pytest.raises(ValueError):
        min_deadwood_after_discard_mask(0)


def test_full_deck_and_empty_hand() -> None:
    assert deadwood_mask(FULL_MASK) == 0
    assert deadwood_mask(0) == 0
    assert arrange([]) == Arrangement((), (), 0)
    assert list(all_arrangements([])) == [Arrangement((), (), 0)]
    assert arrange(DECK).deadwood == 0
    assert min_deadwood_after_discard_mask(FULL_MASK) == 0


def _iter_masks() -> Iterator[int]:
    rng = random.Random(5)
    for _ in range(2000):
        yield sum(1 << i for i in rng.sample(range(52), 11))


def test_min_after_discard_matches_each_discard_on_random_hands() -> None:
    for mask in _iter_masks():
        each = deadwood_after_each_discard_mask(mask)
        assert min(each.values()) == min_deadwood_after_discard_mask(mask), from_mask(mask)


def test_dense_eleven_card_hands_three_ways() -> None:
    """Quads and overlapping sets (where set choices are pruned) against two other methods:
    the deadwood of each discard, and the rank-by-rank programme."""
    rng = random.Random(11)
    for i in range(3000):
        lo = rng.randint(0, 9)
        pool = [s * 13 + r for r in range(lo, lo + rng.randint(3, 4)) for s in range(4)]
        mask = sum(1 << b for b in rng.sample(pool, min(11, len(pool))))
        while mask.bit_count() < 11:
            mask |= 1 << rng.randrange(52)
        each = deadwood_after_each_discard_mask(mask)
        assert min_deadwood_after_discard_mask(mask) == min(each.values()), from_mask(mask)
        if i % 10 == 0:
            bits = [1 << b for b in range(52) if mask >> b & 1]
            assert min(each.values()) == min(_deadwood_dp(mask ^ b) for b in bits)
            assert deadwood_mask(mask) == _deadwood_dp(mask)
