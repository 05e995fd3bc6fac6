"""Build deck orders that deal chosen hands (RULES §3 convention), for hand-written rule tests."""

from __future__ import annotations

from referee.gin import DECK, Card, Deal, parse_cards


def make_deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[Card]:
    """A deck whose deal gives these hands, this upcard, and this stock from the top; the
    remaining cards follow in index order."""
    nd, dl = parse_cards(non_dealer), parse_cards(dealer)
    assert len(nd) == 10 and len(dl) == 10, "hands of ten"
    up = parse_cards(upcard)
    top = parse_cards(stock)
    used = nd + dl + up + top
    assert len(set(used)) == len(used), "a card used twice"
    rest = [c for c in DECK if c not in set(used)]
    deck: list[Card] = []
    for a, b in zip(nd, dl, strict=True):
        deck += [a, b]
    return deck + up + top + rest


def seen_by(deal: Deal, seat: int) -> set[Card]:
    """Every card ``seat`` saw face up or held during the deal."""
    seen = set(deal.deck[0:20:2]) if seat != deal.dealer else set(deal.deck[1:20:2])
    seen.add(deal.first_upcard)
    for m in deal.history:
        if m.card is None or m.action is None:
            continue
        if m.action.kind in ("discard", "take_upcard", "draw_discard") or m.seat == seat:
            seen.add(m.card)
    return seen
