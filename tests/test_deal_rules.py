"""Hand-written cases for RULES §3–§9, one test per rule, named after it."""

from __future__ import annotations

import pytest

from referee.gin import (
    Action,
    BigGin,
    Deal,
    Discard,
    DrawDiscard,
    DrawStock,
    IllegalActionError,
    Knock,
    Pass,
    RuleSet,
    TakeUpcard,
    parse_card,
    parse_cards,
)
from tests._decks import make_deck

C = parse_card

# Non-dealer (seat 1, dealer 0) can knock with Kc after taking the 2c upcard: deadwood 2.
KNOCK_ND = "As 2s 3s 4h 5h 6h 7d 8d 9d Kc"
KNOCK_DL = "Ts Th Td 9c 8c 7c Qh Qd 5c 4c"


def knock_deal(rules: RuleSet | None = None, upcard: str = "2c") -> Deal:
    return Deal.from_deck(make_deck(KNOCK_ND, KNOCK_DL, upcard), dealer=0, rules=rules)


def snapshot(deal: Deal) -> tuple[object, ...]:
    return (deal.phase, deal.to_move, tuple(deal.hands), deal.discard_pile, deal.stock_size,
            deal.history, deal.outcome, deal.forbidden_discard)


def test_rule_3_deck_order_convention() -> None:
    deck = make_deck(KNOCK_ND, KNOCK_DL, "2c", "Jh Jd")
    deal = Deal.from_deck(deck, dealer=0)
    assert set(deal.hand(1)) == set(parse_cards(KNOCK_ND))
    assert set(deal.hand(0)) == set(parse_cards(KNOCK_DL))
    assert deal.discard_pile == (C("2c"),)
    assert deal.stock_size == 31
    deal.apply(Pass())
    deal.apply(Pass())
    deal.apply(DrawStock())
    assert C("Jh") in deal.hand(1), "deck[21] is the top of the stock"


def test_rule_3_dealer_one_mirrors_seats() -> None:
    deal = Deal.from_deck(make_deck(KNOCK_ND, KNOCK_DL, "2c"), dealer=1)
    assert set(deal.hand(0)) == set(parse_cards(KNOCK_ND))
    assert deal.to_move == 0


def test_rule_4_upcard_offered_to_non_dealer_then_dealer_then_stock_only() -> None:
    deal = knock_deal()
    assert (deal.phase, deal.to_move) == ("upcard", 1)
    assert set(deal.legal_actions()) == {TakeUpcard(), Pass()}
    deal.apply(Pass())
    assert (deal.phase, deal.to_move) == ("upcard", 0)
    deal.apply(Pass())
    assert (deal.phase, deal.to_move) == ("draw", 1)
    assert deal.legal_actions() == [DrawStock()]
    before = snapshot(deal)
    with pytest.raises(IllegalActionError, match="must be from the stock"):
        deal.apply(DrawDiscard())
    assert snapshot(deal) == before
    deal.apply(DrawStock())
    deal.apply(Discard(deal.hand(1)[0]))
    assert set(deal.legal_actions()) == {DrawStock(), DrawDiscard()}, "later draws may take the discard"


def test_rule_4_dealer_may_take_the_upcard_after_a_pass() -> None:
    deal = knock_deal()
    deal.apply(Pass())
    deal.apply(TakeUpcard())
    assert (deal.to_move, deal.phase) == (0, "discard") and C("2c") in deal.hand(0)
    deal.apply(Discard(C("Qh")))
    assert (deal.to_move, deal.phase) == (1, "draw")


def test_rule_5_card_taken_from_discard_pile_cannot_be_discarded_that_turn() -> None:
    deal = knock_deal()
    deal.apply(TakeUpcard())
    assert Discard(C("2c")) not in deal.legal_actions()
    assert Knock(C("2c")) not in deal.legal_actions()
    before = snapshot(deal)
    with pytest.raises(IllegalActionError, match="taken from the discard pile"):
        deal.apply(Discard(C("2c")))
    assert snapshot(deal) == before


def test_rule_5_card_drawn_from_stock_may_be_discarded_at_once() -> None:
    deal = Deal.from_deck(make_deck(KNOCK_ND, KNOCK_DL, "2c", "Jh"), dealer=0)
    deal.apply(Pass())
    deal.apply(Pass())
    deal.apply(DrawStock())
    assert Discard(C("Jh")) in deal.legal_actions()
    deal.apply(Discard(C("Jh")))
    assert deal.discard_pile[-1] == C("Jh")


def test_rule_5_discarding_a_card_not_held_is_refused() -> None:
    deal = knock_deal()
    deal.apply(TakeUpcard())
    with pytest.raises(IllegalActionError, match="not in seat 1's hand"):
        deal.apply(Discard(C("Ts")))


def test_rule_5_out_of_turn_and_wrong_phase_are_refused() -> None:
    deal = knock_deal()
    with pytest.raises(IllegalActionError, match="seat 1's turn"):
        deal.apply(Pass(), seat=0)
    with pytest.raises(IllegalActionError, match="cannot draw now"):
        deal.apply(DrawStock())
    with pytest.raises(IllegalActionError, match="cannot discard now"):
        deal.apply(Discard(C("As")))


def test_rule_6_knock_within_limit_on_first_turn_after_taking_upcard() -> None:
    deal = knock_deal()
    deal.apply(TakeUpcard())
    legal = deal.legal_actions()
    assert Knock(C("Kc")) in legal
    assert Knock(C("As")) not in legal
    with pytest.raises(IllegalActionError, match="above the knock limit 10"):
        deal.apply(Knock(C("As")))
    deal.apply(Knock(C("Kc")))
    out = deal.outcome
    assert deal.is_over and out is not None
    assert out.kind == "knock" and out.knocker == 1 and out.winner == 1
    assert out.showdown is not None and out.showdown.knocker_deadwood == 2
    assert out.showdown.defender_deadwood == 29
    assert out.points == 27
    assert out.knock_discard == C("Kc")
    assert C("Kc") not in deal.discard_pile, "the knock discard is face down, not on the pile"


def test_rule_6_gin_is_a_knock_with_no_deadwood() -> None:
    nd = "As 2s 3s 4h 5h 6h 7d 8d 9d Tc"
    dl = "Ts Th Kd 9c 8c 7c Qh Qd 5c 4c"
    deal = Deal.from_deck(make_deck(nd, dl, "Td"), dealer=0)
    deal.apply(TakeUpcard())
    deal.apply(Knock(C("Tc")))
    out = deal.outcome
    assert out is not None and out.kind == "gin" and out.winner == 1
    assert out.points == 25 + 59


def test_rule_6_big_gin_with_eleven_melded_cards() -> None:
    nd = "As 2s 3s 4s 5h 6h 7h 8d 9d Td"
    dl = "Ts Th Kd 9c 8c 7c Qh Qd 5c 4c"
    deal = Deal.from_deck(make_deck(nd, dl, "Jd"), dealer=0)
    deal.apply(TakeUpcard())
    assert BigGin() in deal.legal_actions()
    deal.apply(BigGin())
    out = deal.outcome
    assert out is not None and out.kind == "big_gin" and out.winner == 1
    assert out.points == 31 + 59
    assert len(out.hands[1]) == 11


def test_rule_6_big_gin_needs_all_eleven_melded() -> None:
    deal = knock_deal()
    deal.apply(TakeUpcard())
    assert BigGin() not in deal.legal_actions()
    with pytest.raises(IllegalActionError, match="deadwood is"):
        deal.apply(BigGin())


def test_rule_6_big_gin_option_off() -> None:
    nd = "As 2s 3s 4s 5h 6h 7h 8d 9d Td"
    deal = Deal.from_deck(
        make_deck(nd, "Ts Th Kd 9c 8c 7c Qh Qd 5c 4c", "Jd"), dealer=0, rules=RuleSet.classic(big_gin=False)
    )
    deal.apply(TakeUpcard())
    assert BigGin() not in deal.legal_actions()
    with pytest.raises(IllegalActionError, match="off"):
        deal.apply(BigGin())


def test_rule_7_layoffs_reduce_defender_deadwood_through_the_deal() -> None:
    # Knocker (non-dealer) 3h4h5h 8s8d8c 9s9d9c + Kd; defender holds 6h 7h (chain) and 8h.
    nd = "3h 4h 5h 8s 8d 8c 9s 9d 9c Kd"
    dl = "6h 7h Qs Qd Jc Js 2c 2d Ac Ks"
    deal = Deal.from_deck(make_deck(nd, dl, "Ah"), dealer=0)
    deal.apply(TakeUpcard())
    deal.apply(Knock(C("Kd")))
    out = deal.outcome
    assert out is not None and out.showdown is not None
    assert set(out.showdown.layoffs) == {C("6h"), C("7h")}
    assert out.showdown.knocker_deadwood == 1
    assert out.showdown.defender_deadwood == 10 + 10 + 2 + 2 + 1  # Js-Qs-Ks is a run


def test_rule_8_dead_hand_when_two_stock_cards_remain() -> None:
    deal = knock_deal()
    deal.apply(Pass())
    deal.apply(Pass())
    while not deal.is_over:
        deal.apply(DrawStock())
        drawn = deal.history[-1].card
        assert drawn is not None
        deal.apply(Discard(drawn))
    out = deal.outcome
    assert out is not None and out.kind == "dead" and out.winner is None and out.points == 0
    assert deal.stock_size == 2


def test_rule_8_knock_still_allowed_with_two_stock_cards() -> None:
    deal = knock_deal()
    deal.apply(Pass())
    deal.apply(Pass())
    while deal.stock_size > 3:
        deal.apply(DrawStock())
        drawn = deal.history[-1].card
        assert drawn is not None
        deal.apply(Discard(drawn))
    # The next draw leaves two in the stock: a plain discard would void the deal, a knock ends it normally.
    while deal.to_move != 1:
        deal.apply(DrawStock())
        drawn = deal.history[-1].card
        assert drawn is not None
        deal.apply(Discard(drawn))
    if deal.is_over:
        pytest.fail("deal ended before seat 1 could knock")
    deal.apply(DrawStock())
    assert deal.stock_size <= 2
    deal.apply(Knock(C("Kc")))
    assert deal.outcome is not None and deal.outcome.kind in ("knock", "undercut")


def test_rule_8_reshuffle_option_turns_the_pile_into_a_new_stock_once() -> None:
    rules = RuleSet.classic(stock_exhausted="reshuffle")
    deal = Deal.from_deck(make_deck(KNOCK_ND, KNOCK_DL, "2c"), dealer=0, rules=rules, key=b"k")
    deal.apply(Pass())
    deal.apply(Pass())
    reshuffles = 0
    steps = 0
    while not deal.is_over:
        deal.apply(DrawStock())
        drawn = deal.history[-1].card
        assert drawn is not None
        deal.apply(Discard(drawn))
        if deal.history[-1].seat == -1:
            reshuffles += 1
            assert len(deal.discard_pile) == 1
            assert deal.stock_size == 31, "the whole pile but its top card"
        steps += 1
        total = sum(h.bit_count() for h in deal.hands) + deal.stock_size + len(deal.discard_pile)
        assert total == 52
    assert reshuffles == 1
    assert deal.outcome is not None and deal.outcome.kind == "dead"
    assert steps == 31 + 31, "both stocks drawn to the last card"


def test_rule_8_reshuffle_is_deterministic_from_the_deal_key() -> None:
    rules = RuleSet.classic(stock_exhausted="reshuffle")

    def run(key: bytes) -> tuple[object, ...]:
        deal = Deal.from_deck(make_deck(KNOCK_ND, KNOCK_DL, "2c"), dealer=0, rules=rules, key=key)
        deal.apply(Pass())
        deal.apply(Pass())
        for _ in range(31):
            deal.apply(DrawStock())
            drawn = deal.history[-1].card
            assert drawn is not None
            deal.apply(Discard(drawn))
        deal.apply(DrawStock())
        return deal.history[-1].card, deal.stock_size

    assert run(b"a") == run(b"a")
    assert {run(b"a")[0], run(b"b")[0], run(b"c")[0]} != {run(b"a")[0]}


def test_rule_9_undercut_when_defender_deadwood_is_not_higher() -> None:
    # Knocker keeps 10 deadwood; defender has 10 too (a tie is an undercut).
    nd = "As 2s 3s 4h 5h 6h 7d 8d 9d Tc"
    dl = "Jh Jd Jc Qs Qh Qc Ks Kh Kc Th"
    deal = Deal.from_deck(make_deck(nd, dl, "Kd"), dealer=0)
    deal.apply(TakeUpcard())
    deal.apply(Knock(C("Tc")))  # keeps the Kd just taken: deadwood 10
    out = deal.outcome
    assert out is not None and out.showdown is not None
    assert out.showdown.knocker_deadwood == 10 and out.showdown.defender_deadwood == 10
    assert out.kind == "undercut" and out.winner == 0
    assert out.points == 25


def test_rule_11_straight_gin_allows_no_knock_but_gin() -> None:
    deal = knock_deal(RuleSet.straight())
    deal.apply(TakeUpcard())
    assert not any(isinstance(a, Knock) for a in deal.legal_actions())
    with pytest.raises(IllegalActionError, match="only gin"):
        deal.apply(Knock(C("Kc")))
    nd = "As 2s 3s 4h 5h 6h 7d 8d 9d Tc"
    dl = "Ts Th Kd 9c 8c 7c Qh Qd 5c 4c"
    gin = Deal.from_deck(make_deck(nd, dl, "Td"), dealer=0, rules=RuleSet.straight())
    gin.apply(TakeUpcard())
    assert Knock(C("Tc")) in gin.legal_actions()


def test_rule_11_oklahoma_knock_limit_is_the_first_upcard_value() -> None:
    deal = knock_deal(RuleSet.oklahoma(), upcard="2c")
    assert deal.knock_limit == 2 and not deal.doubled
    deal.apply(TakeUpcard())
    assert Knock(C("Kc")) in deal.legal_actions()  # leaves 2c: deadwood 2
    face = knock_deal(RuleSet.oklahoma(), upcard="Qc")
    assert face.knock_limit == 10


def test_rule_11_oklahoma_ace_upcard_allows_gin_only() -> None:
    deal = knock_deal(RuleSet.oklahoma(), upcard="Ac")
    assert deal.knock_limit is None
    deal.apply(TakeUpcard())
    assert not any(isinstance(a, Knock) for a in deal.legal_actions())
    off = knock_deal(RuleSet.oklahoma(oklahoma_ace_gin_only=False), upcard="Ac")
    assert off.knock_limit == 1


def test_rule_11_oklahoma_spade_upcard_doubles_the_deal() -> None:
    nd = "As 2s 3s 4h 5h 6h 7d 8d 9d Kc"
    dl = "Ts Th Td 9c 8c 7c Qh Qd 5c 4c"
    deal = Deal.from_deck(make_deck(nd, dl, "4s"), dealer=0, rules=RuleSet.oklahoma())
    assert deal.doubled and deal.knock_limit == 4
    deal.apply(TakeUpcard())
    deal.apply(Knock(C("Kc")))  # keeps As-4s run: gin
    out = deal.outcome
    assert out is not None and out.doubled and out.kind == "gin"
    assert out.points == 2 * (25 + 29)
    plain = Deal.from_deck(make_deck(nd, dl, "4s"), dealer=0, rules=RuleSet.oklahoma(oklahoma_spades_double=False))
    assert not plain.doubled


def test_rule_12_illegal_action_changes_nothing_in_any_phase() -> None:
    deal = knock_deal()
    bad: Action
    for bad in (DrawStock(), Discard(C("As")), Knock(C("As")), BigGin(), DrawDiscard()):
        before = snapshot(deal)
        with pytest.raises(IllegalActionError):
            deal.apply(bad)
        assert snapshot(deal) == before
    deal.apply(TakeUpcard())
    for bad in (Pass(), TakeUpcard(), DrawStock(), Discard(C("Ts")), Knock(C("As"))):
        before = snapshot(deal)
        with pytest.raises(IllegalActionError):
            deal.apply(bad)
        assert snapshot(deal) == before
    deal.apply(Knock(C("Kc")))
    with pytest.raises(IllegalActionError, match="over"):
        deal.apply(Pass())
