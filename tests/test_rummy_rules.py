"""Rule-named cases for RULES-RUMMY.md (R1–R11) and every option of the rule set."""

from __future__ import annotations

import pytest

from referee.rummy import (
    DECK,
    CallStop,
    Card,
    Deal,
    DeclineStop,
    Discard,
    DrawStock,
    Game,
    IllegalActionError,
    LayMeld,
    LayOff,
    RuleSetError,
    RummyRules,
    TakeDiscard,
    card_value,
    deal_state,
    deck_for_deal,
    first_dealer,
    hand_size,
    meld_shape,
    parse_action,
    parse_card,
    parse_cards,
    places,
    reshuffle_key,
    shuffle,
    table_value,
)


def _deck(hands: list[str], upcard: str, stock: str = "", dealer: int = 0) -> list[Card]:
    """A deck order that deals ``hands`` (by seat) by R3's convention, then the upcard, then
    ``stock`` from its top; the remaining cards follow in index order."""
    n = len(hands)
    h = hand_size(n)
    deck: list[Card | None] = [None] * 52
    for seat, text in enumerate(hands):
        cards = parse_cards(text)
        assert len(cards) == h
        for j, c in enumerate(cards):
            deck[j * n + (seat - dealer - 1) % n] = c
    deck[n * h] = parse_card(upcard)
    for k, c in enumerate(parse_cards(stock)):
        deck[n * h + 1 + k] = c
    rest = iter(c for c in DECK if c not in deck)
    return [c if c is not None else next(rest) for c in deck]


C = parse_card
TWO = ["7h 8h 2s 4s 6c Tc Qd 3d 5d Kd", "As 2c 3c 9s Js Qs 7c 8c 9d Jh"]
"""Two hands: seat 0 holds 7h 8h (a run waits for 9h), seat 1 nothing to meld at once."""


def test_r1_values_ten_or_rank() -> None:
    assert [card_value(C(t), "ten") for t in ("As", "9h", "Jd", "Qc", "Ks")] == [1, 9, 10, 10, 10]
    assert [card_value(C(t), "rank") for t in ("As", "Jd", "Qc", "Ks")] == [1, 11, 12, 13]


def test_r2_melds_ace_low_only_unless_low_or_high_and_never_wrapping() -> None:
    assert meld_shape(parse_cards("As 2s 3s"), False) == ("run", 1, 3)
    assert meld_shape(parse_cards("Qs Ks As"), False) is None
    assert meld_shape(parse_cards("Qs Ks As"), True) == ("run", 12, 14)
    assert meld_shape(parse_cards("Ks As 2s"), True) is None
    assert meld_shape(parse_cards("7s 7h 7d 7c"), False) == ("set", 7, 7)
    assert meld_shape(parse_cards("7s 7h"), False) is None
    assert meld_shape(parse_cards("7s 8h 9s"), False) is None


def test_r3_hand_sizes_and_the_deck_order_convention() -> None:
    assert [hand_size(n) for n in range(2, 7)] == [10, 7, 7, 6, 6]
    with pytest.raises(ValueError, match="2 to 6"):
        hand_size(7)
    deck = deck_for_deal(b"s", 1, 1)
    deal = Deal.from_deck(deck, 2, RummyRules.preset("rummy"), 4)
    assert deal.hand(3) == tuple(sorted(deck[0:28:4])) and deal.hand(2) == tuple(sorted(deck[3:28:4]))
    assert deal.pile == [deck[28]] and deal.stock[-1] == deck[29] and deal.to_move == 3
    assert all(0 <= first_dealer(bytes([i]), 1, 5) < 5 for i in range(20))
    assert len({first_dealer(bytes([i]), 1, 6) for i in range(60)}) == 6


def test_r4_a_discard_is_offered_only_when_it_can_be_used_at_once_and_must_be_used() -> None:
    rules = RummyRules.preset("rummy")
    deal = Deal.from_deck(_deck(TWO, "9h", dealer=1), 1, rules, 2)
    assert TakeDiscard(C("9h")) in deal.legal_actions()
    deal.apply(TakeDiscard(C("9h")))
    assert deal.legal_actions() == [LayMeld(tuple(parse_cards("7h 8h 9h")))]
    with pytest.raises(IllegalActionError, match="must use it"):
        deal.apply(Discard(C("2s")))
    deal.apply(LayMeld(tuple(parse_cards("9h 7h 8h"))))  # any order of the cards
    assert Discard(C("9h")) not in deal.legal_actions() and Discard(C("2s")) in deal.legal_actions()
    other = Deal.from_deck(_deck(TWO, "Kh", dealer=1), 1, rules, 2)
    assert other.legal_actions() == [DrawStock()]
    with pytest.raises(IllegalActionError, match="could not be used"):
        other.apply(TakeDiscard(C("Kh")))


@pytest.mark.parametrize(("preset", "factor"), [("rummy", 1), ("open", 2)])
def test_r4_r5_going_out_by_melding_every_card_and_rummy_doubles_in_open(preset: str, factor: int) -> None:
    hands = ["As 2s 3s 4h 4d 4c 8c", "Kh Qd 9s 5c 7h 6d 2h", "Th Jd 9c 3c 5h 6s 8d"]
    deal = Deal.from_deck(_deck(hands, "Ks", "4s", dealer=2), 2, RummyRules.preset(preset), 3)
    deal.apply(DrawStock())
    deal.apply(LayMeld(tuple(parse_cards("As 2s 3s 4s"))))
    deal.apply(LayMeld(tuple(parse_cards("4h 4d 4c"))))
    assert deal.outcome is None
    deal.apply(Discard(C("8c")))
    o = deal.outcome
    assert o is not None and o.winner == 0 and o.reason == "out" and o.rummy == (factor == 2)
    assert o.points == (factor * sum(o.hand_values), 0, 0) and o.hand_values[0] == 0


def test_r4_a_meld_of_the_whole_hand_goes_out_without_a_discard() -> None:
    hands = ["As 2s 3s 4h 4d 4c 8c", "Kh Qd 9s 5c 7h 6d 2h", "Th Jd 9c 3c 5h 6s 8d"]
    deal = Deal.from_deck(_deck(hands, "Ks", "8h", dealer=2), 2, RummyRules.preset("rummy"), 3)
    deal.apply(DrawStock())
    deal.apply(LayMeld(tuple(parse_cards("As 2s 3s"))))
    deal.apply(LayMeld(tuple(parse_cards("4h 4d 4c"))))
    assert LayMeld(tuple(parse_cards("8c 8h"))) not in deal.legal_actions()
    michigan = Deal.from_deck(_deck(hands, "Ks", "4s", dealer=2), 2, RummyRules.preset("michigan"), 3)
    michigan.apply(DrawStock())
    michigan.apply(LayMeld(tuple(parse_cards("As 2s 3s 4s"))))
    michigan.apply(LayMeld(tuple(parse_cards("4h 4d 4c"))))
    assert michigan.outcome is None and michigan.legal_actions() == [Discard(C("8c"))]


def _draw_and_discard(deal: Deal) -> None:
    legal = deal.legal_actions()
    deal.apply(DrawStock() if DrawStock() in legal else next(a for a in legal if isinstance(a, Discard)))


def test_r6_lowest_wins_pays_the_differences_and_a_shared_lowest_is_void() -> None:
    seen = set()
    for seed in range(12):
        deal = Deal.from_deck(deck_for_deal(bytes([seed]), 1, 1), 0, RummyRules.preset("rummy"), 3)
        while not deal.is_over:
            _draw_and_discard(deal)
        o = deal.outcome
        assert o is not None and o.reason in ("lowest", "void") and deal.stock == []
        seen.add(o.reason)
        if o.winner is None:
            assert o.points == (0, 0, 0) and o.hand_values.count(min(o.hand_values)) > 1
        else:
            low = o.hand_values[o.winner]
            assert o.points[o.winner] == sum(v - low for v in o.hand_values) and sum(o.points) == o.points[o.winner]
    assert "lowest" in seen


def test_r6_reshuffle_turns_the_pile_into_a_stock_with_its_key() -> None:
    rules = RummyRules.preset("rummy", stock_exhausted="reshuffle")
    deal = Deal.from_deck(deck_for_deal(b"x", 1, 1), 0, rules, 2, key=b"key")
    piles = []
    while not deal.reshuffles:
        legal = deal.legal_actions()
        if DrawStock() in legal:
            deal.apply(DrawStock())
            continue
        discard = next(a for a in legal if isinstance(a, Discard))
        piles = [*deal.pile, discard.card]
        deal.apply(discard)
    expect = shuffle(piles, reshuffle_key(b"key", 1))
    assert deal.pile == [expect[-1]] and deal.stock == expect[:-1] and deal.phase == "draw"


def test_r7_places_share_and_skip_and_a_game_ends_at_the_target() -> None:
    assert places((30, 50, 50, 10)) == (3, 1, 1, 4)
    game = Game(RummyRules.preset("rummy", target=1), b"g", 1, 3)
    while game.result is None:
        deal = game.deal
        while not deal.is_over:
            legal = deal.legal_actions()
            deal.apply(next((a for a in legal if isinstance(a, (LayMeld, LayOff))), legal[-1]))
        game.finish_deal()
    assert max(game.result.totals) >= 1 and sorted(game.result.places)[0] == 1


def test_r7_next_dealer_winner_or_left() -> None:
    for option in ("winner", "left"):
        game = Game(RummyRules.preset("rummy", next_dealer=option, target=10_000), b"d", 1, 4, dealer=0)
        deal = game.deal
        while not deal.is_over:
            deal.apply(deal.legal_actions()[-1] if deal.phase != "draw" else DrawStock())
        outcome = game.finish_deal()
        if outcome.winner is not None:
            assert game.dealer == (outcome.winner if option == "winner" else 1)


def test_r8_michigan_row_draw_takes_every_card_above() -> None:
    hands = ["9h Th 2s 4s 6c Qs", "Jc Jd 2c 3c 9s Kc", "Kd Qd 7c 8c 9d Tc", "3h 5h Ah 2d 4c Ts", "6s 7s 8s 5d 6h 3s"]
    deal = Deal.from_deck(_deck(hands, "Jh", dealer=4), 4, RummyRules.preset("michigan"), 5)
    deal.apply(DrawStock())
    deal.apply(Discard(C("2s")))
    assert deal.pile == [C("Jh"), C("2s")] and deal.legal_actions() == [DrawStock(), TakeDiscard(C("Jh"))]
    deal.apply(TakeDiscard(C("Jh")))
    assert {C("2s"), C("Jh")} <= deal.hands[1] and deal.pile == [] and deal.pending == C("Jh")
    assert deal.legal_actions() == [LayMeld(tuple(parse_cards("Jh Jd Jc")))]
    deal.apply(deal.legal_actions()[0])
    assert Discard(C("2s")) in deal.legal_actions()


def test_r8_stop_forces_the_discarder_to_lay_the_card_off() -> None:
    hands = ["9h Th Jh 4s 6c Kd 5s", "As 2c 3c 9s Js Qc 7d", "Kc Qd 7c 8c 9d 3d 2h"]
    rules = RummyRules.preset("michigan")
    deal = Deal.from_deck(_deck(hands, "Ks", "Qh 8h", dealer=2), 2, rules, 3)
    deal.apply(DrawStock())
    deal.apply(LayMeld(tuple(parse_cards("9h Th Jh Qh"))))
    deal.apply(Discard(C("4s")))
    deal.apply(DrawStock())  # seat 1 draws 8h, which fits seat 0's run
    deal.apply(Discard(C("8h")))
    assert deal.phase == "stop" and deal.to_move == 2 and deal.legal_actions() == [CallStop(), DeclineStop()]
    deal.apply(DeclineStop())
    assert deal.to_move == 0
    deal.apply(CallStop())
    assert str(deal.phase) == "lay_back" and deal.to_move == 1 and deal.legal_actions() == [LayOff(C("8h"), 0, "low")]
    deal.apply(LayOff(C("8h"), 0, "low"))
    assert str(deal.phase) == "play" and DrawStock() not in deal.legal_actions()
    assert deal.table[0].placed[-1].seat == 1


def test_r9_bozenkill_table_cards_count_for_who_laid_them_and_a_high_ace_counts_15() -> None:
    hands = ["Qs Ks 2h 2d 2c 5d 7c", "Js 3c 4c 6h 9s Jd 7d", "Tc Qd 8c 9c 9d 3d 6s"]
    deal = Deal.from_deck(_deck(hands, "Kd", "As Th", dealer=2), 2, RummyRules.preset("bozenkill"), 3)
    deal.apply(DrawStock())
    deal.apply(LayMeld(tuple(parse_cards("Qs Ks As"))))
    deal.apply(LayMeld(tuple(parse_cards("2h 2d 2c"))))
    deal.apply(Discard(C("5d")))
    deal.apply(DrawStock())
    deal.apply(LayOff(C("Js"), 0, "low"))
    points = [0, 0, 0]
    for m in deal.table:
        for p in m.placed:
            points[p.seat] += table_value(m, p, "ten")
    assert points == [10 + 10 + 15 + 6, 10, 0]
    assert deal.table[0].owner == 0 and deal.table[0].cards == tuple(parse_cards("Js Qs Ks As"))


def test_r10_presets_fill_the_fields_and_bad_options_are_refused() -> None:
    m = RummyRules.preset("michigan")
    assert (m.ace, m.discard_draw, m.stop, m.out_needs_discard, m.scoring, m.target) == (
        "low_or_high", "row", True, True, "hands", 500)
    assert RummyRules.preset("open").rummy_doubles and RummyRules.preset("bozenkill").scoring == "table"
    assert RummyRules.preset("rummy", rummy_doubles=True, face_values="rank").face_values == "rank"
    with pytest.raises(RuleSetError, match="unknown preset"):
        RummyRules.preset("gin")
    with pytest.raises(RuleSetError, match="unknown rule option"):
        RummyRules.preset("rummy", jokers=True)
    for bad in ({"face_values": "eleven"}, {"next_dealer": "right"}, {"stock_exhausted": "void"},
                {"rummy_doubles": 1}, {"target": 0}):
        with pytest.raises(RuleSetError):
            RummyRules.preset("rummy", **bad)
    assert RummyRules.from_dict(m.to_dict()) == m


def test_r11_a_seat_sees_its_hand_not_the_others_nor_their_stock_draws() -> None:
    deal = Deal.from_deck(deck_for_deal(b"v", 1, 1), 0, RummyRules.preset("rummy"), 4)
    deal.apply(DrawStock())
    mine, other, spectator = deal_state(deal, 1), deal_state(deal, 2), deal_state(deal, None)
    assert mine.hand == deal.hand(1) and other.hand == deal.hand(2) and spectator.hand == ()
    assert mine.events[0].card == deal.step_cards[0][0] and other.events[0].card is None
    assert spectator.events[0].card is None and mine.hand_sizes == (7, 8, 7, 7)
    assert mine.legal_actions and not other.legal_actions and mine.stock_size == 52 - 28 - 2
    assert parse_action(str(LayOff(C("9h"), 2, "high"))) == LayOff(C("9h"), 2, "high")


def test_r7_max_deals_per_game_ends_a_game_and_ties_share_first_place() -> None:
    game = Game(RummyRules.preset("rummy", max_deals_per_game=2, target=10_000), b"m", 1, 3)
    while game.result is None:
        deal = game.deal
        while not deal.is_over:
            _draw_and_discard(deal)
        game.finish_deal()
    assert game.result.deals == 2 and not game.result.finished
    assert game.result.places == places(game.result.totals)


def test_the_states_scores_are_the_totals_before_the_deal_in_play_and_after_the_last_deal() -> None:
    """``InformationState.scores`` (``rummy.proto`` ``State.scores``) as their words say: before the
    deal in play; once the game is over, after its last deal."""
    game = Game(RummyRules.preset("rummy", max_deals_per_game=2, target=10_000), b"scores", 1, 3)
    before = [0, 0, 0]
    while game.result is None:
        deal = game.deal
        while not deal.is_over:
            assert list(game.view(0).scores) == before
            _draw_and_discard(deal)
        outcome = game.finish_deal()
        before = [b + p for b, p in zip(before, outcome.points, strict=True)]
    assert list(game.view(0).scores) == before == list(game.result.totals)


def test_r8_1_an_ace_counts_by_the_end_of_the_run_it_sits_at() -> None:
    """RULES-RUMMY R8.1: above the king 15 — also completing a 13-card run 2..K-A —, below the two
    (A..K, or A-2-3) 1."""
    from referee.rummy import Placed, TableMeld

    ace = Placed(C("Ah"), 0, "high", True)
    high = TableMeld(0, 0, "run", 11, 14, (Placed(C("Jh"), 0, "low", False), ace))
    full = TableMeld(0, 0, "run", 2, 14, (ace,))
    below = TableMeld(0, 0, "run", 1, 13, (Placed(C("Ah"), 0, "low", True),))
    low = TableMeld(0, 0, "run", 1, 3, (Placed(C("Ah"), 0, "low", False),))
    assert table_value(high, ace, "ten") == 15 and table_value(full, ace, "ten") == 15
    assert table_value(below, below.placed[0], "ten") == 1
    assert table_value(low, low.placed[0], "rank") == 1
