"""One deal of rummy for 2–6 seats (R3–R6, R8, R9): the state machine."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from referee.cardcore import State, Value

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
from ._melds import (
    ACES,
    AROUND,
    NEAR3,
    RUN_STARTS,
    SUIT_BITS,
    FitEntry,
    TableMeld,
    cards_mask,
    fit_entries,
    lay_off,
    meld_entries,
    new_meld,
    offered_meld,
    table_value,
)
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

_DISCARDS = tuple(Discard(c) for c in DECK)
"""The discard of each card, by card index (frozen values: built once, not at every state)."""
_TAKES = tuple(TakeDiscard(c) for c in DECK)
"""The take of each card of the discard pile, by card index."""
_DRAW = DrawStock()
"""The stock draw (one value for every state)."""


def _suit_values(face_values: str) -> list[int]:
    """At each 13-bit mask of one suit's ranks: the value of those cards in a hand (R1)."""
    value = [card_value(DECK[r], face_values) for r in range(13)]
    out = [0] * (1 << 13)
    for bits in range(1, 1 << 13):
        low = bits & -bits
        out[bits] = out[bits ^ low] + value[low.bit_length() - 1]
    return out


_SUIT_VALUES = (_suit_values("ten"), _suit_values("rank"))
"""By ``face_values == "rank"``: ``_suit_values``."""
_SEAT_MOVES = 6
"""Seats for which the common moves are built once (rummy is for at most six, ``hand_size``)."""
_DRAW_MOVES = tuple(Move(s, _DRAW) for s in range(_SEAT_MOVES))
"""A stock draw by each seat."""
_DISCARD_MOVES = tuple(tuple(Move(s, a) for a in _DISCARDS) for s in range(_SEAT_MOVES))
"""By seat, then card index: the discard of that card by that seat."""
_TAKE_MOVES = tuple(tuple(Move(s, a) for a in _TAKES) for s in range(_SEAT_MOVES))
"""By seat, then card index: the take of that discard by that seat."""
_SUIT_CARDS: list[tuple[Card, ...] | None] = [None] * (4 << 13)
"""At ``suit << 13 | the suit's 13 bits``: those cards in index order (filled when met)."""
_SUIT_DISCARDS: list[tuple[Discard, ...] | None] = [None] * (4 << 13)
"""At the same place as ``_SUIT_CARDS``: the discards of those cards (filled when met)."""


def _suit_cards(key: int) -> tuple[Card, ...]:
    cards = _SUIT_CARDS[key]
    if cards is None:
        base = (key >> 13) * 13
        cards = _SUIT_CARDS[key] = tuple(DECK[base + r] for r in range(13) if key >> r & 1)
    return cards


def _suit_discards(key: int) -> tuple[Discard, ...]:
    discards = _SUIT_DISCARDS[key] = tuple(_DISCARDS[c.index] for c in _suit_cards(key))
    return discards


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask in index order."""
    out: tuple[Card, ...] = ()
    for key in (mask & SUIT_BITS, 1 << 13 | mask >> 13 & SUIT_BITS,
                2 << 13 | mask >> 26 & SUIT_BITS, 3 << 13 | mask >> 39):
        cards = _SUIT_CARDS[key]
        out += cards if cards is not None else _suit_cards(key)
    return out


def melds_from(cards: Iterable[Card], ace_high: bool) -> list[tuple[Card, ...]]:
    """Every set and run that can be formed from ``cards`` (R2), each in its table order."""
    return [action.cards for _, _, action in meld_entries(cards_mask(cards), ace_high)]


class Deal(State):
    """One deal of rummy. Seats are ``0..n-1`` clockwise; the seat left of ``dealer`` plays
    first. Build it with :meth:`from_deck`; ``apply`` an action of ``to_move``."""

    def __init__(self, deck: Sequence[Card], dealer: int, rules: RummyRules, seats: int, key: bytes = b"") -> None:
        deck = tuple(deck)
        if len(deck) != 52 or len({c.index for c in deck}) != 52:
            raise ValueError("a deck must hold each of the 52 cards exactly once")
        h = hand_size(seats)
        if not 0 <= dealer < seats:
            raise ValueError(f"dealer must be a seat 0..{seats - 1}; got {dealer!r}")
        self.rules = rules
        self.deck = deck
        self.dealer = dealer
        self.seats = seats
        self.key = key or deck_key(deck)
        dealt = seats * h
        self._hands = [cards_mask(deck[(seat - dealer - 1) % seats:dealt:seats]) for seat in range(seats)]
        """Each seat's hand as a mask (bit ``card.index`` per card held): ``deck[i]`` for ``i <
        n·h`` went to seat ``(dealer + 1 + i) mod n``."""
        self.pile: list[Card] = [deck[seats * h]]
        self.stock: list[Card] = list(reversed(deck[seats * h + 1:]))
        self.table: list[TableMeld] = []
        self._fits: list[tuple[FitEntry, ...]] = []
        """Parallel to ``table``: the layoffs each meld takes as it stands."""
        self._fit_mask = 0
        """Every card some table meld takes."""
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
        self._keep = 1 if rules.out_needs_discard else 0
        """Cards a meld or layoff must leave in the hand (R8.4)."""
        self._row = rules.discard_draw == "row"
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

    @property
    def hands(self) -> list[set[Card]]:
        """Every seat's hand (new sets: changing them changes nothing)."""
        return [set(cards_of(m)) for m in self._hands]

    def hand(self, seat: int) -> tuple[Card, ...]:
        """A seat's hand in index order."""
        return cards_of(self._hands[seat])

    def hand_sizes(self) -> tuple[int, ...]:
        """Cards in every hand, by seat."""
        return tuple(m.bit_count() for m in self._hands)

    # ----- legal actions -----
    def legal_actions(self) -> list[Action]:
        """Every action ``to_move`` may take now, in a fixed order (empty when over)."""
        legal = self._legal
        if legal is None:
            phase = self.phase
            legal = self._legal = (
                self._draws() if phase == "draw" else self._plays() if phase == "play" else self._generate()
            )
        return list(legal)

    def _generate(self) -> list[Action]:
        phase = self.phase
        if phase == "draw":
            return self._draws()
        if phase == "play" or phase == "lay_back":
            return self._plays()
        if phase == "stop":
            return [CallStop(), DeclineStop()]
        return []

    def _draws(self) -> list[Action]:
        """The stock draw, then each discard that could be used at once (R4.1, R8.2), top first."""
        pile = self.pile
        if not pile:
            return [_DRAW]
        cards = self._hands[self.turn]
        held = cards.bit_count()
        if not self._row:
            index = pile[-1].index
            return [_DRAW, _TAKES[index]] if self._usable(index, cards | 1 << index, held + 1) else [_DRAW]
        out: list[Action] = [_DRAW]
        for i in range(len(pile) - 1, -1, -1):
            index = pile[i].index
            cards |= 1 << index
            held += 1
            if self._usable(index, cards, held):
                out.append(_TAKES[index])
        return out

    def _usable(self, index: int, cards: int, held: int) -> bool:
        """Whether the discard ``index`` could be used at once with the ``held`` cards of the
        mask ``cards`` (it among them): laid off, or in a meld of three."""
        if held - 1 >= self._keep and self._fit_mask >> index & 1:
            return True
        if held - 3 < self._keep or (cards & AROUND[index]).bit_count() < 2:
            return False
        for meld in NEAR3[self._ace_high][index]:  # noqa: SIM110 - a loop, not any(): the hot path
            if meld & cards == meld:
                return True
        return False

    def _plays(self) -> list[Action]:
        hand = self._hands[self.turn]
        held = hand.bit_count()
        keep = self._keep
        must = self.stopped if self.phase == "lay_back" else self.pending
        must_bit = 0 if must is None else 1 << must.index
        s0, s1, s2, s3 = hand & SUIT_BITS, hand >> 13 & SUIT_BITS, hand >> 26 & SUIT_BITS, hand >> 39
        out: list[Action] = []
        if self.phase == "play" and (
            s0 & s1 & (s2 | s3) | s2 & s3 & (s0 | s1)  # a rank held three or four times
            or hand & hand >> 1 & hand >> 2 & RUN_STARTS
            or (self._ace_high and hand & hand >> 11 & hand >> 12 & ACES)
        ):
            room = held - keep
            for mask, size, action in meld_entries(hand, self._ace_high):
                if size <= room and (not must_bit or mask & must_bit):
                    out.append(action)
        if held - 1 >= keep and hand & self._fit_mask:
            for fit in self._fits:
                for bit, layoff in fit:
                    if bit & hand and (not must_bit or bit == must_bit):
                        out.append(layoff)
        if not must_bit:  # every card of the hand, suit by suit (unrolled: the hot path)
            discards = _SUIT_DISCARDS
            known = discards[s0]
            out += known if known is not None else _suit_discards(s0)
            known = discards[s1 | 1 << 13]
            out += known if known is not None else _suit_discards(s1 | 1 << 13)
            known = discards[s2 | 2 << 13]
            out += known if known is not None else _suit_discards(s2 | 2 << 13)
            known = discards[s3 | 3 << 13]
            out += known if known is not None else _suit_discards(s3 | 3 << 13)
        return out

    # ----- applying -----
    def apply(self, action: Action, seat: int | None = None) -> None:
        """Play ``action`` for ``to_move`` (``seat``, if given, must be ``to_move``). Raises
        :class:`IllegalActionError` naming the reason, leaving the deal unchanged."""
        if self.outcome is not None:
            raise IllegalActionError("the deal is over")
        mover = self.to_move
        if seat is not None and seat != mover:
            raise IllegalActionError(f"it is seat {mover}'s move, not seat {seat}'s")
        assert mover is not None
        if not (
            (type(action) is Discard and self.phase == "play" and self.pending is None
            and self._hands[mover] >> action.card.index & 1)
            or (type(action) is DrawStock and self.phase == "draw")
        ):  # those two are offered exactly then (see _plays, _draws); anything else is looked up
            legal = self._legal
            if legal is None:
                legal = self._legal = self._generate()
            for offered in legal:
                if offered is action:
                    break
            else:
                action = self._accepted(action, legal)
        self._legal = None
        if isinstance(action, Discard):
            self._discard(mover, action.card.index)
        elif isinstance(action, DrawStock):
            card = self.stock.pop()
            self.steps.append(_DRAW_MOVES[mover])
            self.step_cards.append((card,))
            self._hands[mover] |= 1 << card.index
            self.phase = "play"
        elif isinstance(action, TakeDiscard):
            self._take(mover, action)
        else:
            self._record(Move(mover, action), ())
            if isinstance(action, LayMeld):
                self._lay_meld(mover, action.cards)
            elif isinstance(action, LayOff):
                self._lay_off(mover, action)
            elif isinstance(action, CallStop):
                self._call_stop()
            else:
                self._decline_stop()

    def _accepted(self, action: Action, legal: list[Action]) -> Action:
        """The legal action equal to ``action`` (a meld's cards in any order), or the refusal."""
        if isinstance(action, LayMeld):
            meld = new_meld(0, 0, action.cards, self._ace_high)
            action = LayMeld(meld.cards) if meld is not None else action
        if action not in legal:
            raise IllegalActionError(self._refusal(action))
        return legal[legal.index(action)]

    def _record(self, move: Move, cards: tuple[Card, ...]) -> None:
        self.steps.append(move)
        self.step_cards.append(cards)

    def _take(self, mover: int, action: TakeDiscard) -> None:
        pile = self.pile
        index = action.card.index
        i = len(pile) - 1
        while pile[i].index != index:
            i -= 1
        taken = tuple(pile[i:])
        self._record(_TAKE_MOVES[mover][index], taken)
        self._hands[mover] |= cards_mask(taken)
        del pile[i:]
        self.pending = taken[0]
        self.phase = "play"

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

    def _laid(self, mover: int, used: int) -> None:
        self.has_laid[mover] = True
        if self.pending is not None and used >> self.pending.index & 1:
            self.pending = None
        if not self._hands[mover]:
            self._finish_out(mover)

    def _refit(self, number: int) -> None:
        """Recompute what the table meld ``number`` takes, and what the table takes."""
        fit = fit_entries(self.table[number], self._ace_high)
        if number == len(self._fits):
            self._fits.append(fit)
        else:
            self._fits[number] = fit
        self._fit_mask = 0
        for entries in self._fits:
            for bit, _ in entries:
                self._fit_mask |= bit

    def _lay_meld(self, mover: int, cards: tuple[Card, ...]) -> None:
        used = cards_mask(cards)
        self.table.append(offered_meld(len(self.table), mover, used, cards))
        self._refit(len(self.table) - 1)
        self._hands[mover] &= ~used
        self._laid(mover, used)

    def _lay_off(self, mover: int, action: LayOff) -> None:
        self.table[action.meld] = lay_off(self.table[action.meld], action.card, mover, action.end)
        self._refit(action.meld)
        used = 1 << action.card.index
        self._hands[mover] &= ~used
        if self.phase == "lay_back":
            self.phase = "play"
            self.stopped = None
        self._laid(mover, used)

    def _discard(self, mover: int, index: int) -> None:
        self.steps.append(_DISCARD_MOVES[mover][index])
        self.step_cards.append(())
        bit = 1 << index
        self._hands[mover] ^= bit
        card = DECK[index]
        self.pile.append(card)
        if not self._hands[mover]:
            self._finish_out(mover)
        elif self.rules.stop and bit & self._fit_mask:
            self.phase = "stop"
            self.stopped = card
            self.asked = (mover + 1) % self.seats
            self.to_move = self.asked
        else:
            self._begin_turn((mover + 1) % self.seats)

    def _call_stop(self) -> None:
        card = self.pile.pop()
        self._hands[self.turn] |= 1 << card.index
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
        value = _SUIT_VALUES[self.rules.face_values == "rank"]
        return tuple(value[m & SUIT_BITS] + value[m >> 13 & SUIT_BITS] + value[m >> 26 & SUIT_BITS] + value[m >> 39]
                     for m in self._hands)

    def _table_points(self) -> tuple[int, ...]:
        pts = [0] * self.seats
        for meld in self.table:
            for p in meld.placed:
                pts[p.seat] += table_value(meld, p, self.rules.face_values)
        return tuple(pts)

    def _finish(self, reason: str, winner: int | None, pay: int, rummy: bool, values: tuple[int, ...]) -> None:
        table = self._table_points()
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
        values = self._values()
        pay = sum(v for s, v in enumerate(values) if s != winner)
        self._finish("out", winner, pay * (2 if rummy else 1), rummy, values)

    def _finish_lowest(self) -> None:
        values = self._values()
        low = min(values)
        if values.count(low) > 1:
            self._finish("void", None, 0, False, values)
            return
        winner = values.index(low)
        others = [v for s, v in enumerate(values) if s != winner]
        pay = sum(others) if self.rules.scoring == "table" else sum(v - low for v in others)
        self._finish("lowest", winner, pay, False, values)
