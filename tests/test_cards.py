"""RULES §1: the 52 cards, their text (rank ``A23456789TJQK`` then suit ``shdc``), index and
bitmask, ordering, and the helpers that convert between lists, texts and masks."""

from __future__ import annotations

import pickle
import random

import pytest

from referee.gin import DECK, RANKS, SUITS, Card, format_cards, from_mask, parse_card, parse_cards, to_mask

ALL_TEXTS = [r + s for s in "shdc" for r in "A23456789TJQK"]


def test_rule_1_ranks_and_suits_text() -> None:
    assert RANKS == "A23456789TJQK"
    assert SUITS == "shdc"


def test_rule_1_deck_has_52_distinct_cards_in_index_order() -> None:
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert [c.index for c in DECK] == list(range(52))
    assert [str(c) for c in DECK] == ALL_TEXTS


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_rule_1_card_text_both_ways(text: str) -> None:
    card = parse_card(text)
    assert str(card) == text
    assert parse_card(str(card)) is card, "parsing returns the shared deck instance"
    assert card.rank == RANKS.index(text[0]) + 1
    assert card.suit == SUITS.index(text[1])
    assert repr(card) == f"Card({text!r})"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("as", "As"), ("tD", "Td"), ("10s", "Ts"), ("10h", "Th"), (" Kc ", "Kc"), ("qH", "Qh"), ("jC", "Jc")],
)
def test_rule_1_card_text_is_lenient_on_case_ten_and_spaces(text: str, expected: str) -> None:
    assert str(parse_card(text)) == expected


@pytest.mark.parametrize(
    "text", ["", " ", "A", "s", "Asd", "1s", "11s", "0s", "Ax", "Xs", "sA", "Tt", "AS s", "10", "100s", "🂡"]
)
def test_rule_1_bad_card_text_is_a_clear_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a card: .*expected rank A23456789TJQK then suit shdc"):
        parse_card(text)


@pytest.mark.parametrize(("rank", "suit"), [(0, 0), (14, 0), (1, -1), (1, 4), (-1, 2)])
def test_rule_1_card_constructor_refuses_impossible_cards(rank: int, suit: int) -> None:
    with pytest.raises(ValueError, match="no such card"):
        Card(rank, suit)


@pytest.mark.parametrize("index", [-1, 52, 100])
def test_rule_1_from_index_refuses_out_of_range(index: int) -> None:
    with pytest.raises(ValueError, match="card index out of range"):
        Card.from_index(index)


def test_rule_1_index_and_mask() -> None:
    for i, card in enumerate(DECK):
        assert card.index == card.suit * 13 + card.rank - 1 == i
        assert card.mask == 1 << i
        assert Card.from_index(i) is card
        assert Card(card.rank, card.suit).index == i
        assert Card(card.rank, card.suit).mask == 1 << i
    assert sum(c.mask for c in DECK) == (1 << 52) - 1


def test_rule_1_deadwood_values() -> None:
    values = {str(c): c.value for c in DECK}
    assert values["As"] == 1 and values["Ah"] == 1
    for r in range(2, 10):
        assert values[f"{r}d"] == r
    for face in "TJQK":
        assert values[face + "c"] == 10


def test_rule_1_ordering_is_by_index_suit_first() -> None:
    shuffled = list(DECK)
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled) == list(DECK)
    assert parse_card("Ks") < parse_card("Ah"), "spades before hearts"
    assert parse_card("2c") > parse_card("Kd")
    assert parse_card("As") <= parse_card("As") and parse_card("As") >= parse_card("As")
    assert not parse_card("As") < parse_card("As")
    assert min(DECK) == parse_card("As") and max(DECK) == parse_card("Kc")


def test_rule_1_comparing_a_card_with_a_non_card_is_a_type_error() -> None:
    # The Python protocol: ``__lt__`` returns NotImplemented for a foreign type, giving a TypeError.
    with pytest.raises(TypeError):
        _ = parse_card("As") < 3
    with pytest.raises(TypeError):
        sorted([parse_card("As"), "Ks"])  # type: ignore[type-var]


def test_rule_1_equality_and_hashing_by_value() -> None:
    a = Card(1, 0)
    assert a == parse_card("As") and hash(a) == hash(parse_card("As"))
    assert a != parse_card("Ah")
    text: object = "As"
    assert a != text
    assert len({Card(c.rank, c.suit) for c in DECK} | set(DECK)) == 52
    assert {parse_card("Td"): 1}[Card(10, 2)] == 1


def test_rule_1_card_is_frozen_and_picklable() -> None:
    card = parse_card("Qh")
    with pytest.raises(AttributeError):
        card.rank = 3  # type: ignore[misc]
    for c in DECK:
        back = pickle.loads(pickle.dumps(c))
        assert back == c and back.index == c.index and back.mask == c.mask


def test_parse_cards_on_strings() -> None:
    assert parse_cards("As 2s 3s") == [DECK[0], DECK[1], DECK[2]]
    assert parse_cards("As,2s, 3s") == [DECK[0], DECK[1], DECK[2]]
    assert parse_cards("  Kc\tTd\n") == [parse_card("Kc"), parse_card("Td")]
    assert parse_cards("") == []
    assert parse_cards("Ks As") == [parse_card("Ks"), parse_card("As")], "order kept, not sorted"
    assert parse_cards("As As") == [DECK[0], DECK[0]], "duplicates kept"


def test_parse_cards_on_iterables() -> None:
    assert parse_cards(["As", "10h"]) == [parse_card("As"), parse_card("Th")]
    assert parse_cards(iter(("Kd", "Qd"))) == [parse_card("Kd"), parse_card("Qd")]
    assert parse_cards(t for t in ALL_TEXTS) == list(DECK)
    assert parse_cards([]) == []


def test_parse_cards_reports_the_bad_item() -> None:
    with pytest.raises(ValueError, match="not a card: 'Zz'"):
        parse_cards("As Zz 3s")
    with pytest.raises(ValueError, match="not a card: 'As 2s'"):
        parse_cards(["As 2s"])


def test_format_cards_round_trip() -> None:
    assert format_cards(parse_cards("Td As Kc")) == "Td As Kc"
    assert format_cards([]) == ""
    assert parse_cards(format_cards(DECK)) == list(DECK)


def test_mask_round_trip() -> None:
    rng = random.Random(11)
    assert to_mask([]) == 0 and from_mask(0) == []
    assert to_mask(DECK) == (1 << 52) - 1
    assert from_mask((1 << 52) - 1) == list(DECK)
    for _ in range(500):
        cards = rng.sample(DECK, rng.randint(0, 52))
        mask = to_mask(cards)
        assert mask.bit_count() == len(cards)
        assert from_mask(mask) == sorted(cards), "from_mask gives index order"
        assert to_mask(from_mask(mask)) == mask
    assert to_mask(parse_cards("As As 2s")) == 0b11, "duplicates collapse"
    assert to_mask(c for c in parse_cards("Ah")) == 1 << 13
