"""One deal of rummy for 2–6 seats (R3–R6, R8, R9): the state machine."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

from referee._cardcore import State, Value

from ._actions import (
    Action,
    CallStop,
    DeclineStop,
    Discard,
    DrawStock,
    IllegalActionError,
    LayMeld,
    LayOff,
    TakeDiscard,
)
from ._cards import DECK, Card, card_value
from ._melds import TableMeld, fits, lay_off, new_meld, run_cards, table_value
from ._outcome import Phase, RummyOutcome
from ._rules import RummyRules, hand_size
from ._shuffle import deck_key, reshuffle_key, shuffle

MAX_RESHUFFLES = 3
"""At most this many reshuffles of the discard pile a deal (R6)."""


@dataclass(frozen=True, slots=True)
class Move(Value):
    """One action in a deal's history."""

    seat: int
    """Who acted."""
    action: Action
    """What they did."""


@dataclass(frozen=True, slots=True)
class Reshuffle(Value):
    """A chance step (R6): the discard pile became a new stock and a new upcard."""

    number: int
    """The reshuffle's number in this deal (from 1)."""
    upcard: Card
    """The new pile's face-up card."""
    stock_size: int
    """Cards in the new stock."""


Step = Move | Reshuffle

_BY_INDEX = attrgetter("index")
"""The sort key of cards in index order (the order ``Card`` compares in, without its ``__lt__``)."""
_DISCARDS = tuple(Discard(c) for c in DECK)
"""The discard of each card, by card index (frozen values: built once, not at every state)."""
_DRAW = DrawStock()
"""The stock draw (one value for every state)."""


def melds_from(cards: Iterable[Card], ace_high: bool) -> list[tuple[Card, ...]]:
    """Every set and run that can be formed from ``cards`` (R2), each in its table order."""
    by_rank: dict[int, list[Card]] = {}
    by_suit: dict[int, set[int]] = {}
    for c in sorted(cards, key=_BY_INDEX):
        by_rank.setdefault(c.rank, []).append(c)
        by_suit.setdefault(c.suit, set()).add(c.rank)
    out: list[tuple[Card, ...]] = []
    for rank in sorted(by_rank):
        group = by_rank[rank]
        if len(group) >= 3:
            out.extend(itertools.combinations(group, 3))
            out.extend(itertools.combinations(group, 4))
    for suit in sorted(by_suit):
        present = set(by_suit[suit])
        if ace_high and 1 in present:
            present.add(14)
        for low in sorted(present):
            high = low
            while high + 1 in present and high + 1 - low < 13:
                high += 1
                if high - low >= 2 and not (low == 2 and high == 14):
                    out.append(tuple(run_cards(suit, low, high)))
    return out


def _can_meld_with(card: Card, cards: set[Card], ace_high: bool) -> bool:
    if sum(1 for c in cards if c.rank == card.rank) >= 3:
        return True
    present = {c.rank for c in cards if c.suit == card.suit}
    if ace_high and 1 in present:
        present.add(14)
    for p in (card.rank, 14) if card.rank == 1 and ace_high else (card.rank,):
        lo, hi = p, p
        while lo - 1 in present:
            lo -= 1
        while hi + 1 in present:
            hi += 1
        if hi - lo >= 2:
            return True
    return False


class Deal(State):
    """One deal of rummy. Seats are ``0..n-1`` clockwise; the seat left of ``dealer`` plays
    first. Build it with :meth:`from_deck`; ``apply`` an action of ``to_move``."""

    def __init__(self, deck: Sequence[Card], dealer: int, rules: RummyRules, seats: int, key: bytes = b"") -> None:
        deck = tuple(deck)
        if len(deck) != 52 or len(set(deck)) != 52:
            raise ValueError("a deck must hold each of the 52 cards exactly once")
        h = hand_size(seats)
        if not 0 <= dealer < seats:
            raise ValueError(f"dealer must be a seat 0..{seats - 1}; got {dealer!r}")
        self.rules = rules
        self.deck = deck
        self.dealer = dealer
        self.seats = seats
        self.key = key or deck_key(deck)
        self.hands: list[set[Card]] = [set() for _ in range(seats)]
        for i in range(seats * h):
            self.hands[(dealer + 1 + i) % seats].add(deck[i])
        self.pile: list[Card] = [deck[seats * h]]
        self.stock: list[Card] = list(reversed(deck[seats * h + 1:]))
        self.table: list[TableMeld] = []
        self.phase: Phase = "draw"
        self.turn = (dealer + 1) % seats
        self.to_move: int | None = self.turn
        self.pending: Card | None = None
        self.stopped: Card | None = None
        self.asked: int | None = None
        self.has_laid = [False] * seats
        self.began_clean = True
        self.reshuffles = 0
        self.steps: list[Step] = []
        self.step_cards: list[tuple[Card, ...]] = []
        """Parallel to ``steps``: a stock draw's card, the cards a take moved; else empty."""
        self.outcome: RummyOutcome | None = None
        self._ace_high = rules.ace == "low_or_high"
        self._legal: list[Action] | None = None
        """``legal_actions()`` of the current state; only ``apply`` changes the state and clears it."""

    @classmethod
    def from_deck(
        cls, deck: Sequence[Card], dealer: int, rules: RummyRules | None = None, seats: int = 2, *, key: bytes = b""
    ) -> Deal:
        """A new deal from a deck order by R3's convention: ``deck[i]`` for ``i < n·h`` goes to
        seat ``(dealer + 1 + i) mod n``, ``deck[n·h]`` is the upcard, ``deck[n·h+1]`` the top of
        the stock. ``key`` seeds reshuffles (R6); without one, the deck's 52 index bytes."""
        return cls(deck, dealer, rules if rules is not None else RummyRules.preset("rummy"), seats, key)

    @classmethod
    def replay(
        cls, deck: Sequence[Card], dealer: int, rules: RummyRules, seats: int, actions: Iterable[Action],
        *, key: bytes = b"",
    ) -> Deal:
        """Rebuild a deal from its deck order, dealer, seats and the actions played."""
        deal = cls(deck, dealer, rules, seats, key)
        for action in actions:
            deal.apply(action)
        return deal

    # ----- read-only state -----
    @property
    def is_over(self) -> bool:
        """Whether the deal has ended."""
        return self.outcome is not None

    @property
    def history(self) -> tuple[Move, ...]:
        """The actions played so far, in order."""
        return tuple(s for s in self.steps if isinstance(s, Move))

    def hand(self, seat: int) -> tuple[Card, ...]:
        """A seat's hand in index order."""
        return tuple(sorted(self.hands[seat], key=_BY_INDEX))

    # ----- legal actions -----
    def legal_actions(self) -> list[Action]:
        """Every action ``to_move`` may take now, in a fixed order (empty when over)."""
        if self._legal is None:
            self._legal = self._generate()
        return list(self._legal)

    def _generate(self) -> list[Action]:
        if self.phase == "draw":
            return [_DRAW, *(TakeDiscard(c) for c in self._offered_discards())]
        if self.phase == "stop":
            return [CallStop(), DeclineStop()]
        if self.phase == "play" or self.phase == "lay_back":
            return self._plays()
        return []

    def _offered_discards(self) -> list[Card]:
        top = [len(self.pile) - 1] if self.pile else []
        positions = range(len(self.pile) - 1, -1, -1) if self.rules.discard_draw == "row" else top
        hand = self.hands[self.turn]
        out = []
        for i in positions:
            card = self.pile[i]
            cards = hand | set(self.pile[i:])
            if self._usable(card, cards):
                out.append(card)
        return out

    def _usable(self, card: Card, cards: set[Card]) -> bool:
        keep = 1 if self.rules.out_needs_discard else 0
        if len(cards) - 3 >= keep and _can_meld_with(card, cards, self._ace_high):
            return True
        return len(cards) - 1 >= keep and any(c == card for m in self.table for c, _ in fits(m, self._ace_high))

    def _plays(self) -> list[Action]:
        hand = self.hands[self.turn]
        keep = 1 if self.rules.out_needs_discard else 0
        must = self.stopped if self.phase == "lay_back" else self.pending
        out: list[Action] = []
        if self.phase == "play":
            out += [
                LayMeld(m) for m in melds_from(hand, self._ace_high)
                if len(hand) - len(m) >= keep and (must is None or must in m)
            ]
        if len(hand) - 1 >= keep:
            for meld in self.table:
                out += [
                    LayOff(c, meld.number, end) for c, end in fits(meld, self._ace_high)
                    if c in hand and (must is None or c == must)
                ]
        if must is None:
            out += [_DISCARDS[i] for i in sorted(c.index for c in hand)]
        return out

    # ----- applying -----
    def apply(self, action: Action, seat: int | None = None) -> None:
        """Play ``action`` for ``to_move`` (``seat``, if given, must be ``to_move``). Raises
        :class:`IllegalActionError` naming the reason, leaving the deal unchanged."""
        if self.outcome is not None:
            raise IllegalActionError("the deal is over")
        if seat is not None and seat != self.to_move:
            raise IllegalActionError(f"it is seat {self.to_move}'s move, not seat {seat}'s")
        if isinstance(action, LayMeld):
            meld = new_meld(0, 0, action.cards, self._ace_high)
            action = LayMeld(meld.cards) if meld is not None else action
        if self._legal is None:
            self._legal = self._generate()
        if action not in self._legal:
            raise IllegalActionError(self._refusal(action))
        self._legal = None
        mover = self.to_move
        assert mover is not None
        self.steps.append(Move(mover, action))
        self.step_cards.append(())
        if isinstance(action, DrawStock):
            self.step_cards[-1] = (self.stock[-1],)
            self.hands[mover].add(self.stock.pop())
            self.phase = "play"
        elif isinstance(action, TakeDiscard):
            i = self.pile.index(action.card)
            self.step_cards[-1] = tuple(self.pile[i:])
            self.hands[mover].update(self.pile[i:])
            del self.pile[i:]
            self.pending = action.card
            self.phase = "play"
        elif isinstance(action, LayMeld):
            self._lay_meld(mover, action.cards)
        elif isinstance(action, LayOff):
            self._lay_off(mover, action)
        elif isinstance(action, Discard):
            self._discard(mover, action.card)
        elif isinstance(action, CallStop):
            self._call_stop()
        else:
            self._decline_stop()

    def _refusal(self, action: Action) -> str:
        if self.phase == "draw":
            if isinstance(action, TakeDiscard) and action.card in self.pile:
                return f"{action.card} cannot be taken: it could not be used at once (R4.1, R8.2)"
            return "the turn begins with a draw: draw_stock or take_discard (R4.1)"
        if self.phase == "stop":
            return f"seat {self.to_move} is asked whether to call stop: call_stop or decline_stop (R8.3)"
        if self.phase == "lay_back":
            return f"the stopped card {self.stopped} must be laid off first (R8.3)"
        if self.pending is not None:
            return f"the first play after taking {self.pending} must use it (R4.1)"
        if isinstance(action, (DrawStock, TakeDiscard, CallStop, DeclineStop)):
            return f"{action.kind} is not a play: meld, lay off or discard (R4)"
        if self.rules.out_needs_discard and isinstance(action, (LayMeld, LayOff)):
            return f"{action} is refused: it is not a legal play here, or it would empty the hand (R2, R8.4)"
        return f"{action} is not legal: the cards must be in the hand and fit (R2)"

    def _laid(self, mover: int, card_used: Iterable[Card]) -> None:
        self.has_laid[mover] = True
        if self.pending is not None and self.pending in card_used:
            self.pending = None
        if not self.hands[mover]:
            self._finish_out(mover)

    def _lay_meld(self, mover: int, cards: tuple[Card, ...]) -> None:
        meld = new_meld(len(self.table), mover, cards, self._ace_high)
        assert meld is not None
        self.table.append(meld)
        self.hands[mover].difference_update(cards)
        self._laid(mover, cards)

    def _lay_off(self, mover: int, action: LayOff) -> None:
        self.table[action.meld] = lay_off(self.table[action.meld], action.card, mover, action.end)
        self.hands[mover].discard(action.card)
        if self.phase == "lay_back":
            self.phase = "play"
            self.stopped = None
        self._laid(mover, (action.card,))

    def _discard(self, mover: int, card: Card) -> None:
        self.hands[mover].discard(card)
        self.pile.append(card)
        if not self.hands[mover]:
            self._finish_out(mover)
        elif self.rules.stop and any(c == card for m in self.table for c, _ in fits(m, self._ace_high)):
            self.phase = "stop"
            self.stopped = card
            self.asked = (mover + 1) % self.seats
            self.to_move = self.asked
        else:
            self._begin_turn((mover + 1) % self.seats)

    def _call_stop(self) -> None:
        card = self.pile.pop()
        self.hands[self.turn].add(card)
        self.phase = "lay_back"
        self.asked = None
        self.to_move = self.turn

    def _decline_stop(self) -> None:
        assert self.asked is not None
        nxt = (self.asked + 1) % self.seats
        if nxt == self.turn:
            self.asked = None
            self.stopped = None
            self._begin_turn((self.turn + 1) % self.seats)
        else:
            self.asked = nxt
            self.to_move = nxt

    def _begin_turn(self, seat: int) -> None:
        self.turn = seat
        self.to_move = seat
        self.phase = "draw"
        self.began_clean = not self.has_laid[seat]
        if self.stock:
            return
        if self.rules.stock_exhausted == "reshuffle" and self.reshuffles < MAX_RESHUFFLES and len(self.pile) >= 2:
            self.reshuffles += 1
            cards = shuffle(self.pile, reshuffle_key(self.key, self.reshuffles))
            upcard = cards.pop()
            self.pile = [upcard]
            self.stock = cards
            self.steps.append(Reshuffle(self.reshuffles, upcard, len(cards)))
            self.step_cards.append(())
        else:
            self._finish_lowest()

    # ----- scoring -----
    def _values(self) -> tuple[int, ...]:
        return tuple(sum(card_value(c, self.rules.face_values) for c in hand) for hand in self.hands)

    def _table_points(self) -> tuple[int, ...]:
        pts = [0] * self.seats
        for meld in self.table:
            for p in meld.placed:
                pts[p.seat] += table_value(meld, p, self.rules.face_values)
        return tuple(pts)

    def _finish(self, reason: str, winner: int | None, pay: int, rummy: bool) -> None:
        values, table = self._values(), self._table_points()
        points = [0] * self.seats
        if winner is not None:
            if self.rules.scoring == "table":
                points = list(table)
            points[winner] += pay
        self.outcome = RummyOutcome(
            "out" if reason == "out" else "lowest" if reason == "lowest" else "void",
            winner, tuple(points), values, table, tuple(self.hand(s) for s in range(self.seats)), rummy,
        )
        self.phase = "over"
        self.to_move = None
        self.pending = self.stopped = self.asked = None

    def _finish_out(self, winner: int) -> None:
        rummy = self.rules.rummy_doubles and self.began_clean
        pay = sum(v for s, v in enumerate(self._values()) if s != winner)
        self._finish("out", winner, pay * (2 if rummy else 1), rummy)

    def _finish_lowest(self) -> None:
        values = self._values()
        low = min(values)
        if values.count(low) > 1:
            self._finish("void", None, 0, False)
            return
        winner = values.index(low)
        others = [v for s, v in enumerate(values) if s != winner]
        pay = sum(others) if self.rules.scoring == "table" else sum(v - low for v in others)
        self._finish("lowest", winner, pay, False)
