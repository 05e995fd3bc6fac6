"""The showdown (RULES §6, §7, §9): the shared vectors, a brute force and cases named after rules."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.gin._cards import Card, parse_cards, to_mask
from referee.gin._melds import deadwood
from referee.gin._rules import RuleSet
from referee.gin._showdown import Showdown, layoff_mask, score_showdown
from tests._vectors import load

SHOWDOWN_VECTORS = load("showdown.jsonl")


def sd(knocker: str, defender: str, rules: RuleSet | None = None, **kw: Any) -> Showdown:
    return score_showdown(parse_cards(knocker), parse_cards(defender), rules or RuleSet.classic(), **kw)


def names(cards: tuple[Card, ...]) -> set[str]:
    return {str(c) for c in cards}


# ----------------------------------------------------------------------------------------------
# The shared vectors
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "vec", SHOWDOWN_VECTORS, ids=[f"line{i + 1}-{v['kind']}" for i, v in enumerate(SHOWDOWN_VECTORS)]
)
def test_showdown_vector(vec: dict[str, Any]) -> None:
    out = score_showdown(parse_cards(vec["knocker"]), parse_cards(vec["defender"]))
    got = (out.kind, out.knocker_deadwood, out.defender_deadwood, out.winner, out.points)
    want = (vec["kind"], vec["knocker_deadwood"], vec["defender_deadwood"], vec["winner"], vec["points"])
    assert got == want
    # the vector's layoffs are one optimal choice: ours must reach the same deadwood (checked
    # above) and be legal; here just check they are the defender's cards
    assert names(out.layoffs) <= set(vec["defender"])
    check_showdown(out)


def check_showdown(out: Showdown) -> None:
    """Internal consistency of a showdown."""
    k_melded = {c for m in out.knocker_melds for c in m.cards}
    assert k_melded | set(out.knocker_deadwood_cards) == set(out.knocker_cards)
    assert sum(c.value for c in out.knocker_deadwood_cards) == out.knocker_deadwood
    assert out.knocker_deadwood == deadwood(out.knocker_cards)
    d_melded = {c for m in out.defender_melds for c in m.cards}
    parts = [d_melded, set(out.layoffs), set(out.defender_deadwood_cards)]
    assert sum(len(p) for p in parts) == len(out.defender_cards)
    assert set().union(*parts) == set(out.defender_cards)
    assert sum(c.value for c in out.defender_deadwood_cards) == out.defender_deadwood
    assert out.defender_deadwood <= deadwood(out.defender_cards)
    if out.kind in ("gin", "big_gin"):
        assert out.layoffs == ()
        assert out.defender_deadwood == deadwood(out.defender_cards)
    # the layoffs can really be made one after another onto the knocker's melds
    melds = tuple(frozenset(m.cards) for m in out.knocker_melds)
    assert can_lay_off_all(melds, frozenset(out.layoffs)), f"cannot lay off {names(out.layoffs)}"


def can_lay_off_all(melds: tuple[frozenset[Card], ...], todo: frozenset[Card]) -> bool:
    """Whether every card of ``todo`` can be laid off, in some order, onto ``melds``."""
    if not todo:
        return True
    for c in todo:
        for i, m in enumerate(melds):
            if extends(set(m), c):
                grown = (*melds[:i], m | {c}, *melds[i + 1 :])
                if can_lay_off_all(grown, todo - {c}):
                    return True
    return False


def extends(meld: set[Card], card: Card) -> bool:
    """Whether ``card`` can be laid off onto ``meld`` (as it is now)."""
    ranks = {c.rank for c in meld}
    if len(ranks) == 1:
        return len(meld) == 3 and card.rank in ranks
    suit = next(iter(meld)).suit
    return card.suit == suit and (card.rank == min(ranks) - 1 or card.rank == max(ranks) + 1)


# ----------------------------------------------------------------------------------------------
# A brute force, independent of the implementation
# ----------------------------------------------------------------------------------------------


def melds_of(cards: frozenset[Card]) -> list[frozenset[Card]]:
    out: list[frozenset[Card]] = []
    for rank in range(1, 14):
        same = [c for c in cards if c.rank == rank]
        for n in (3, 4):
            out.extend(frozenset(x) for x in itertools.combinations(same, n))
    for suit in range(4):
        ranks = {c.rank for c in cards if c.suit == suit}
        for lo in range(1, 12):
            for hi in range(lo + 2, 14):
                if all(r in ranks for r in range(lo, hi + 1)):
                    out.append(frozenset(Card(r, suit) for r in range(lo, hi + 1)))
    return out


def arrangements_of(cards: frozenset[Card]) -> list[tuple[tuple[frozenset[Card], ...], frozenset[Card]]]:
    """Every (melds, deadwood cards) of a hand."""
    melds = melds_of(cards)
    out: list[tuple[tuple[frozenset[Card], ...], frozenset[Card]]] = []

    def rec(i: int, used: frozenset[Card], chosen: tuple[frozenset[Card], ...]) -> None:
        if i == len(melds):
            out.append((chosen, cards - used))
            return
        rec(i + 1, used, chosen)
        if not melds[i] & used:
            rec(i + 1, used | melds[i], (*chosen, melds[i]))

    rec(0, frozenset(), ())
    return out


@cache
def best_layoff(melds: tuple[frozenset[Card], ...], dead: frozenset[Card]) -> int:
    """Most deadwood value the defender can lay off, one card at a time, any order."""
    best = 0
    for c in dead:
        for i, m in enumerate(melds):
            if extends(set(m), c):
                grown = (*melds[:i], m | {c}, *melds[i + 1 :])
                best = max(best, c.value + best_layoff(grown, dead - {c}))
    return best


def brute_showdown(knocker: list[Card], defender: list[Card]) -> tuple[int, int]:
    """(knocker deadwood, defender deadwood after the best layoffs, knocker ties against)."""
    k_arrs = arrangements_of(frozenset(knocker))
    k_dw = min(sum(c.value for c in dead) for _, dead in k_arrs)
    d_arrs = arrangements_of(frozenset(defender))
    if k_dw == 0:
        return 0, min(sum(c.value for c in dead) for _, dead in d_arrs)
    worst_for_defender = -1
    for melds, dead in k_arrs:
        if sum(c.value for c in dead) != k_dw:
            continue
        d_best = min(sum(c.value for c in d) - best_layoff(melds, d) for _, d in d_arrs)
        worst_for_defender = max(worst_for_defender, d_best)
    return k_dw, worst_for_defender


@st.composite
def packed_deals(draw: Any) -> tuple[list[Card], list[Card]]:
    """Two 10-card hands out of a window of six to eight ranks: many melds, overlaps, layoffs."""
    width = draw(st.integers(6, 8))
    lo = draw(st.integers(1, 14 - width))
    pool = [Card(r, s) for r in range(lo, lo + width) for s in range(4)]
    cards = draw(st.permutations(pool))
    return cards[:10], cards[10:20]


@settings(max_examples=150, deadline=None)
@given(packed_deals())
def test_showdown_equals_brute_force(deal: tuple[list[Card], list[Card]]) -> None:
    knocker, defender = deal
    out = score_showdown(knocker, defender)
    check_showdown(out)
    k_dw, d_dw = brute_showdown(knocker, defender)
    assert (out.knocker_deadwood, out.defender_deadwood) == (k_dw, d_dw)
    if k_dw == 0:
        assert (out.kind, out.winner, out.points) == ("gin", "knocker", 25 + d_dw)
    elif d_dw > k_dw:
        assert (out.kind, out.winner, out.points) == ("knock", "knocker", d_dw - k_dw)
    else:
        assert (out.kind, out.winner, out.points) == ("undercut", "defender", k_dw - d_dw + 25)


# ----------------------------------------------------------------------------------------------
# Cases named after the rules
# ----------------------------------------------------------------------------------------------

OTHER_DEFENDER = "Js Jd Qd Qc 2d 4d 6d Tc"  # no melds, nothing to lay off on the knockers below


def test_rule_7_chained_layoff_5_6_7_takes_8_then_9() -> None:
    out = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "8h 9h " + OTHER_DEFENDER)
    assert names(out.layoffs) == {"8h", "9h"}
    assert out.knocker_deadwood == 1
    assert out.defender_deadwood == 10 + 10 + 10 + 10 + 2 + 4 + 6 + 10
    assert (out.kind, out.winner, out.points) == ("knock", "knocker", out.defender_deadwood - 1)


def test_rule_7_chain_stops_at_a_gap() -> None:
    out = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "9h Th " + OTHER_DEFENDER)
    assert out.layoffs == ()


def test_rule_7_layoff_at_both_ends_of_a_run() -> None:
    out = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "4h 8h " + OTHER_DEFENDER)
    assert names(out.layoffs) == {"4h", "8h"}


def test_rule_7_layoff_onto_a_set_of_three() -> None:
    out = sd("8s 8h 8d Ks Kd Kc 2c 3c 4c As", "8c 9h " + OTHER_DEFENDER)
    assert names(out.layoffs) == {"8c"}
    assert out.defender_deadwood == 9 + 62


def test_rule_7_a_card_wanted_by_a_set_and_a_run_goes_where_the_chain_continues() -> None:
    # Td could be the fourth ten or extend Jd-Qd-Kd downwards; on the run, 9d can follow it
    out = sd("Ts Th Tc Jd Qd Kd 2s 3h 4c As", "9d Td 8s 8h 5c 6h 7s Qs Qc Kh")
    assert names(out.layoffs) == {"9d", "Td"}
    assert out.defender_deadwood == 8 + 8 + 5 + 6 + 7 + 10 + 10 + 10
    assert out.points == out.defender_deadwood - 10


def test_rule_7_no_layoff_onto_a_set_of_four() -> None:
    quad = to_mask(parse_cards("7s 7h 7d 7c"))
    everything_else = ((1 << 52) - 1) ^ quad
    assert layoff_mask([quad], everything_else) == 0
    three = to_mask(parse_cards("7s 7h 7d"))
    assert layoff_mask([three], to_mask(parse_cards("7c 8s 6s"))) == to_mask(parse_cards("7c"))
    # in a showdown: the knocker melds all four sevens; the defender's 8h 9h go nowhere
    out = sd("7s 7h 7d 7c 9h Th Jh As 2s 4s", "8c 5c " + OTHER_DEFENDER)
    assert {str(m) for m in out.knocker_melds} == {"7s7h7d7c", "9hThJh"}
    assert out.layoffs == ()
    assert out.defender_deadwood == 8 + 5 + 62


def test_rule_7_no_layoffs_after_gin() -> None:
    out = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c 5c", "8h 9h " + OTHER_DEFENDER)
    assert out.kind == "gin"
    assert out.layoffs == ()
    assert out.defender_deadwood == 8 + 9 + 62
    assert (out.winner, out.points) == ("knocker", 25 + 79)


def test_rule_1_7_nothing_goes_below_an_ace_or_above_a_king() -> None:
    # Ah cannot go on As-2s-3s (different suit) nor below it; Ah goes nowhere; 8h then 9h go on 5h-7h
    out = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 2c", "Ah 8h 9h Js Jd Qd Qc 4d 6d Tc")
    assert names(out.layoffs) == {"8h", "9h"}
    assert out.knocker_deadwood == 2
    out2 = sd("Js Qs Ks 5h 6h 7h 9d 9c 9h 2c", "As Ah 4d 6d 8d Tc 2d Qd 3c 5c")
    assert out2.layoffs == ()  # no As above Ks


def test_rule_7_knocker_tie_break_uses_the_arrangement_worse_for_the_defender() -> None:
    # 4h5h6h + 5s5d: the run (5s 5d loose) or the set of fives (4h 6h loose), both 10. Under the
    # run the defender would lay off 7h then 8h; under the set it lays off nothing.
    knocker = "4h 5h 6h 5s 5d 9c Tc Jc Qc Kc"
    defender = "7h 8h Ks Kd 2s 4d 6s 8d Ts Qd"
    out = sd(knocker, defender)
    assert out.knocker_deadwood == 10
    assert {str(m) for m in out.knocker_melds} == {"5s5h5d", "9cTcJcQcKc"}
    assert out.layoffs == ()
    assert out.defender_deadwood == 75
    assert (out.kind, out.points) == ("knock", 65)
    # the other way round: the set would take 5c, the run takes nothing useful
    out2 = sd(knocker, "5c Ks Kd 2s 4d 6s 8d Ts Qd Js")
    assert {str(m) for m in out2.knocker_melds} == {"4h5h6h", "9cTcJcQcKc"}
    assert out2.layoffs == ()
    assert out2.defender_deadwood == 5 + 10 + 10 + 2 + 4 + 6 + 8 + 10 + 10 + 10  # every card loose


def test_rule_7_defender_breaks_its_own_set_to_lay_off_more() -> None:
    # knocker runs 5d-7d and 5h-7h; defender set 8s 8h 8d plus 9d 9h. Keeping the set leaves
    # 9d 9h (18); breaking it lays off 8d 9d and 8h 9h and leaves 8s (8).
    out = sd("5d 6d 7d 5h 6h 7h Ks Kd Kc As", "8s 8h 8d 9d 9h Js Qc 2c 4c 6c")
    assert names(out.layoffs) == {"8d", "9d", "8h", "9h"}
    assert out.defender_melds == ()
    assert names(out.defender_deadwood_cards) == {"8s", "Js", "Qc", "2c", "4c", "6c"}
    assert out.defender_deadwood == 8 + 10 + 10 + 2 + 4 + 6


def test_rule_7_defender_splits_a_set_of_four_to_lay_off() -> None:
    # defender 8s 8h 8d 8c + 9d, knocker run 5d-7d: keep 8s 8h 8c, lay off 8d then 9d
    out = sd("5d 6d 7d Ks Kh Kc 2c 3c 4c As", "8s 8h 8d 8c 9d Js Qh 2h 4h 6h")
    assert names(out.layoffs) == {"8d", "9d"}
    assert {str(m) for m in out.defender_melds} == {"8s8h8c"}
    assert out.defender_deadwood == 10 + 10 + 2 + 4 + 6


def test_rule_7_defender_keeps_its_own_meld_when_that_is_better() -> None:
    # defender 8s8h8d (set); knocker run 5d6d7d could take 8d, but then 8s 8h would be loose.
    out = sd("5d 6d 7d Ks Kh Kc 2c 3c 4c As", "8s 8h 8d Js Qh 2h 4h 6h Tc Qc")
    assert out.layoffs == ()
    assert {str(m) for m in out.defender_melds} == {"8s8h8d"}
    assert out.defender_deadwood == 10 + 10 + 2 + 4 + 6 + 10 + 10


def test_rule_7_defender_melds_and_layoffs_tie_either_is_right() -> None:
    # 8d 9d Td can be laid off or kept as a run: the same deadwood
    out = sd("5d 6d 7d Ks Kh Kc 2c 3c 4c As", "8d 9d Td Js Qh 2h 4h 6h Tc Qc")
    assert out.defender_deadwood == 10 + 10 + 2 + 4 + 6 + 10 + 10


def test_rule_9_knock_scores_the_difference() -> None:
    out = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 4c", "Js Jd Qd Qc 2d 4d 6d Tc 9h 8c")
    assert (out.kind, out.winner) == ("knock", "knocker")
    assert (out.knocker_deadwood, out.defender_deadwood) == (4, 79)
    assert out.points == 79 - 4


def test_rule_9_undercut_on_a_tie() -> None:
    # knocker 5 deadwood, defender 5 deadwood (no layoffs): a tie is an undercut
    out = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 5c", "Js Jd Jc Qd Qh Qc 8s 9s Ts 5d")
    assert (out.knocker_deadwood, out.defender_deadwood) == (5, 5)
    assert (out.kind, out.winner, out.points) == ("undercut", "defender", 25)


def test_rule_9_undercut_scores_difference_plus_bonus() -> None:
    out = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 9c", "Js Jd Jc Qd Qh Qc 8s 9s Ts 2d")
    assert (out.kind, out.winner, out.points) == ("undercut", "defender", 9 - 2 + 25)
    ten = RuleSet.classic(undercut_bonus=10)
    out2 = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 9c", "Js Jd Jc Qd Qh Qc 8s 9s Ts 2d", ten)
    assert out2.points == 9 - 2 + 10


def test_rule_9_gin_is_never_undercut() -> None:
    out = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 4s", "Js Jd Jc Qd Qh Qc 7s 8s 9s Ts")
    assert out.defender_deadwood == 0
    assert (out.kind, out.winner, out.points) == ("gin", "knocker", 25)


def test_rule_9_big_gin_scoring() -> None:
    knocker = "As 2s 3s 4s 5h 6h 7h Kd Kc Ks Kh"
    defender = "Js Jd Jc Qd Qh Qc 8s 9s Ts 8h"
    out = sd(knocker, defender, big_gin=True)
    assert (out.kind, out.winner, out.points) == ("big_gin", "knocker", 31 + 8)
    assert out.layoffs == ()  # 8h would go on 5h-7h after a knock, never after big gin
    assert len(out.knocker_cards) == 11
    out2 = sd(knocker, defender, RuleSet.classic(big_gin_bonus=50), big_gin=True)
    assert out2.points == 50 + 8


def test_rule_11_oklahoma_spade_upcard_doubles() -> None:
    ok = RuleSet.oklahoma()
    base = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "8h 9h " + OTHER_DEFENDER, ok)
    doubled = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "8h 9h " + OTHER_DEFENDER, ok, double=True)
    assert doubled.doubled and not base.doubled
    assert doubled.points == 2 * base.points
    assert doubled.defender_deadwood == base.defender_deadwood
    gin = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 4s", "Js Jd Jc Qd Qh Qc 8s 9s Ts Kh", ok, double=True)
    assert gin.points == 2 * (25 + 10)
    under = sd("As 2s 3s 5h 6h 7h Kd Kc Ks 5c", "Js Jd Jc Qd Qh Qc 8s 9s Ts 5d", ok, double=True)
    assert (under.winner, under.points) == ("defender", 50)


def test_showdown_lists_sorted_cards_and_melds() -> None:
    out = sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "8h 9h " + OTHER_DEFENDER)
    assert list(out.knocker_cards) == sorted(out.knocker_cards)
    assert list(out.defender_cards) == sorted(out.defender_cards)
    assert list(out.layoffs) == sorted(out.layoffs)
    assert [str(c) for c in out.knocker_deadwood_cards] == ["As"]
    check_showdown(out)


# ----------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------


def test_validation_card_counts() -> None:
    with pytest.raises(ValueError, match="10 cards kept"):
        sd("5h 6h 7h Ks Kd Kc 2c 3c 4c", "8h 9h " + OTHER_DEFENDER)
    with pytest.raises(ValueError, match="defender must hold 10"):
        sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "8h " + OTHER_DEFENDER)
    with pytest.raises(ValueError, match="big gin needs the knocker's 11"):
        sd("5h 6h 7h Ks Kd Kc 2c 3c 4c As", "8h 9h " + OTHER_DEFENDER, big_gin=True)
    with pytest.raises(ValueError, match="10 cards kept"):
        sd("As 2s 3s 4s 5h 6h 7h Kd Kc Ks Kh", "Js Jd Jc Qd Qh Qc 8s 9s Ts 8h")


def test_validation_big_gin_needs_all_melded() -> None:
    with pytest.raises(ValueError, match="all 11 cards melded"):
        sd("As 2s 3s 4s 5h 6h 7h Kd Kc Ks 9h", "Js Jd Jc Qd Qh Qc 8s 9s Ts 8h", big_gin=True)


def test_validation_shared_and_duplicate_cards() -> None:
    with pytest.raises(ValueError, match="in both hands: 8h"):
        sd("5h 6h 7h Ks Kd Kc 2c 3c 4c 8h", "8h 9h " + OTHER_DEFENDER)
    with pytest.raises(ValueError, match="knocker's hand: duplicate card: As"):
        sd("5h 6h 7h Ks Kd Kc 2c 3c As As", "8h 9h " + OTHER_DEFENDER)
