"""An independent move generator and scorer for rummy (RULES-RUMMY.md), written apart from the
engine: a plain brute force over every meld the deck holds and every layoff a table meld could
take. It reads a deal's raw state (hands, pile, table cards and who laid them) and uses none of
the engine's rule functions, so the property tests can compare the two."""

from __future__ import annotations

from collections.abc import Sequence

from referee.rummy import (
    DECK,
    Action,
    CallStop,
    Card,
    DeclineStop,
    Discard,
    DrawStock,
    LayMeld,
    LayOff,
    TakeDiscard,
)
from referee.rummy import Deal as EngineDeal


def _card(rank: int, suit: int) -> Card:
    return DECK[suit * 13 + rank - 1]


def all_melds(ace_high: bool) -> list[frozenset[Card]]:
    """Every set and run the 52-card deck holds (R2)."""
    out: list[frozenset[Card]] = []
    for rank in range(1, 14):
        suits = [0, 1, 2, 3]
        out.append(frozenset(_card(rank, s) for s in suits))
        for skip in suits:
            out.append(frozenset(_card(rank, s) for s in suits if s != skip))
    top = 14 if ace_high else 13
    for suit in range(4):
        for low in range(1, top + 1):
            for high in range(low + 2, top + 1):
                ranks = [1 if p == 14 else p for p in range(low, high + 1)]
                if len(ranks) == len(set(ranks)):
                    meld = frozenset(_card(r, suit) for r in ranks)
                    if meld not in out:
                        out.append(meld)
    return out


_MELDS = {flag: all_melds(flag) for flag in (False, True)}


def layoff_fits(meld_cards: Sequence[Card], card: Card, end: str, ace_high: bool) -> bool:
    """Whether ``card`` may be laid off at ``end`` of a table meld holding ``meld_cards`` (R2)."""
    if card in meld_cards:
        return False
    if len({c.rank for c in meld_cards}) == 1:
        return end == "set" and card.rank == meld_cards[0].rank and len(meld_cards) < 4
    if end == "set" or card.suit != meld_cards[0].suit or len(meld_cards) >= 13:
        return False
    ranks = {c.rank for c in meld_cards}
    ace_is_high = 1 in ranks and 13 in ranks
    positions = sorted(14 if (r == 1 and ace_is_high) else r for r in ranks)
    if end == "low":
        return positions[0] > 1 and card.rank == positions[0] - 1
    want = positions[-1] + 1
    return (want <= 13 and card.rank == want) or (want == 14 and ace_high and card.rank == 1)


def _can_use(card: Card, cards: set[Card], deal: EngineDeal, keep: int) -> bool:
    ace_high = deal.rules.ace == "low_or_high"
    for meld in _MELDS[ace_high]:
        if card in meld and meld <= cards and len(cards) - len(meld) >= keep:
            return True
    if len(cards) - 1 < keep:
        return False
    return any(
        layoff_fits([p.card for p in m.placed], card, end, ace_high)
        for m in deal.table for end in ("set", "low", "high")
    )


def legal_keys(deal: EngineDeal) -> set[object]:
    """The legal actions of ``deal`` by brute force, as comparable keys (see :func:`key`)."""
    if deal.phase == "over":
        return set()
    if deal.phase == "stop":
        return {("call_stop",), ("decline_stop",)}
    ace_high = deal.rules.ace == "low_or_high"
    keep = 1 if deal.rules.out_needs_discard else 0
    hand = set(deal.hands[deal.turn])
    out: set[object] = set()
    if deal.phase == "draw":
        out.add(("draw_stock",))
        rows = range(len(deal.pile)) if deal.rules.discard_draw == "row" else [len(deal.pile) - 1]
        for i in rows:
            if _can_use(deal.pile[i], hand | set(deal.pile[i:]), deal, keep):
                out.add(("take_discard", deal.pile[i]))
        return out
    must = deal.stopped if deal.phase == "lay_back" else deal.pending
    if deal.phase == "play":
        for meld in _MELDS[ace_high]:
            if meld <= hand and len(hand) - len(meld) >= keep and (must is None or must in meld):
                out.add(("meld", meld))
    if len(hand) - 1 >= keep:
        for m in deal.table:
            for card in hand:
                for end in ("set", "low", "high"):
                    if (must is None or card == must) and layoff_fits([p.card for p in m.placed], card, end, ace_high):
                        out.add(("lay_off", card, m.number, end))
    if must is None:
        out |= {("discard", c) for c in hand}
    return out


def key(action: Action) -> object:
    """A comparable key of an engine action (a meld by its card set)."""
    if isinstance(action, LayMeld):
        return ("meld", frozenset(action.cards))
    if isinstance(action, LayOff):
        return ("lay_off", action.card, action.meld, action.end)
    if isinstance(action, (TakeDiscard, Discard)):
        return (action.kind, action.card)
    return (action.kind,)


def universe(deal: EngineDeal) -> list[Action]:
    """A finite universe of actions to try: each stock draw, each take of each pile position,
    each set and run the deck holds that touches the hand, each card × meld × end layoff, each
    discard of a hand card, stop and decline."""
    ace_high = deal.rules.ace == "low_or_high"
    hand = deal.hands[deal.turn] | ({deal.stopped} if deal.stopped else set())
    out: list[Action] = [DrawStock(), CallStop(), DeclineStop()]
    out += [TakeDiscard(c) for c in deal.pile]
    out += [LayMeld(tuple(sorted(m))) for m in _MELDS[ace_high] if m & hand]
    out += [LayOff(c, m.number, end) for c in hand for m in deal.table for end in ("set", "low", "high")]
    out += [Discard(c) for c in sorted(hand)]
    return out


def _table_value(meld_cards: Sequence[Card], card: Card, end: str, face_values: str) -> int:
    """R8.1 from the cards alone: an ace in a run with a king sits above it — unless the run holds
    all 13 ranks, where the way the ace came decides (laid off at the high end: above the king)."""
    ranks = {c.rank for c in meld_cards}
    if card.rank == 1 and len(ranks) > 1 and 13 in ranks and (len(meld_cards) < 13 or end == "high"):
        return 15
    return card.rank if card.rank < 10 or face_values == "rank" else 10


def expected_points(deal: EngineDeal, rummy: bool) -> tuple[str, int | None, tuple[int, ...]]:
    """``(reason, winner, points)`` of a finished deal from its final state (R5, R6, R9.4);
    ``rummy`` says whether the winner went out having laid nothing before their last turn."""
    rules = deal.rules
    n = deal.seats

    def value(c: Card) -> int:
        return c.rank if c.rank < 10 or rules.face_values == "rank" else 10

    hands = [sum(value(c) for c in h) for h in deal.hands]
    table = [0] * n
    for m in deal.table:
        cards = [p.card for p in m.placed]
        for p in m.placed:
            table[p.seat] += _table_value(cards, p.card, p.end, rules.face_values)
    base = table if rules.scoring == "table" else [0] * n
    empty = [s for s in range(n) if not deal.hands[s]]
    if empty:
        (w,) = empty
        pay = sum(hands) * (2 if rummy and rules.rummy_doubles else 1)
        return "out", w, tuple(b + (pay if s == w else 0) for s, b in enumerate(base))
    low = min(hands)
    if hands.count(low) > 1:
        return "void", None, (0,) * n
    w = hands.index(low)
    pay = sum(h for s, h in enumerate(hands) if s != w)
    if rules.scoring != "table":
        pay -= low * (n - 1)
    return "lowest", w, tuple(b + (pay if s == w else 0) for s, b in enumerate(base))
