"""One deal (RULES §3–§9) as a state machine: ``legal_actions()`` and ``apply()``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from referee.cardcore import State

from ._actions import (
    BIG_GIN,
    DISCARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCKS,
    PASS,
    TAKE_UPCARD,
    Action,
    BigGin,
    Discard,
    DrawDiscard,
    DrawStock,
    IllegalActionError,
    Knock,
    Pass,
    TakeUpcard,
)
from ._cards import DECK, Card, from_mask
from ._cards import mask_indices as _bits
from ._melds import deadwood_mask, min_deadwood_after_discard_mask
from ._outcome import DealOutcome, Phase
from ._rules import RuleSet
from ._showdown import score_showdown
from ._shuffle import reshuffle_key, shuffle
from ._view import InformationState, deal_state

NUM_SEATS: Final = 2
HAND_SIZE: Final = 10


class Move(NamedTuple):
    """One step of a deal's complete record (the referee's truth, not a seat's view)."""

    seat: int
    """Who acted; -1 for a chance step (the reshuffle of the discard pile)."""
    action: Action | None
    """The action; ``None`` for a chance step."""
    card: Card | None
    """The card involved: the card drawn or taken, discarded, or knocked face down."""
    stock_size: int
    """Cards left in the stock after this step."""


# Module constants are ``Final``: compiled by mypyc, a ``Final`` name is a C static, any other
# module global a dictionary lookup at every use.
_move: Final = tuple.__new__  # builds a Move without the Python-level __new__ of NamedTuple

# The steps of draws, takes and discards are shared Move values, one per (kind, seat, card, stock
# size), made the first time they are needed: a step then allocates nothing (and frees nothing
# when the deal goes). A Move's key is ``kind << 13 | seat << 12 | card index << 6 | stock size``.
_DRAW_STOCK_KEY: Final = 0
_DRAW_DISCARD_KEY: Final = 1 << 13
_TAKE_UPCARD_KEY: Final = 2 << 13
_DISCARD_KEY: Final = 3 << 13
_MOVES: Final[list[Move | None]] = [None] * (4 << 13)


def _new_move(key: int) -> Move:
    """The shared Move of ``key``, made and kept (the first time it is needed)."""
    index = key >> 6 & 63
    action = DISCARDS[index] if key >= _DISCARD_KEY else (DRAW_STOCK, DRAW_DISCARD, TAKE_UPCARD)[key >> 13]
    move: Move = _move(Move, (key >> 12 & 1, action, DECK[index], key & 63))
    _MOVES[key] = move
    return move


def _suit_discards(suit: int) -> tuple[tuple[Action, ...], ...]:
    """``[m]``: the Discard actions for the cards of 13-bit mask ``m`` of that suit."""
    return tuple(tuple(DISCARDS[suit * 13 + i] for i in _bits(m)) for m in range(1 << 13))


_S0: Final = _suit_discards(0)
_S1: Final = _suit_discards(1)
_S2: Final = _suit_discards(2)
_S3: Final = _suit_discards(3)
_M13: Final = (1 << 13) - 1


# A fast lower bound on the deadwood that a discard can leave (in legal_actions), used to skip
# the exact computation when no knock can be possible: a card that fits in no set (fewer than
# three of its rank held) and no run (no three consecutive held cards of its suit through it) is
# deadwood in every arrangement; one discard removes at most 10 of it.
_VALUE_SUM: Final[tuple[int, ...]] = tuple(sum(min(i + 1, 10) for i in _bits(m)) for m in range(1 << 13))


def _outside_runs(m: int) -> int:
    starts = m & (m >> 1) & (m >> 2)
    return m & ~(starts | (starts << 1) | (starts << 2))


# _OUTSIDE_RUNS[m]: the cards of one suit's 13-bit mask that lie in no run of three or more.
_OUTSIDE_RUNS: Final[tuple[int, ...]] = tuple(_outside_runs(m) for m in range(1 << 13))


# Deal's attributes, named once: its __slots__, and what copy() carries over (a compiled class
# has no __slots__ to read at run time).
_SLOTS: Final = (
    "_discards", "_forbidden", "_history", "_known", "_no_discard_draw", "_outcome", "_passes",
    "_reshuffled", "_seat_events", "_stock", "_void_at_two", "dealer", "deck", "doubled", "first_upcard",
    "hands", "key", "knock_limit", "phase", "rules", "to_move",
)


class Deal(State):
    """One deal of Gin Rummy. Seats are 0 and 1; ``dealer`` deals, the other seat is offered
    the upcard first. Build it with :meth:`from_deck`; ``apply`` an action of ``to_move``."""

    __slots__ = _SLOTS

    rules: RuleSet
    deck: tuple[Card, ...]
    dealer: int
    key: bytes
    hands: list[int]
    first_upcard: Card
    knock_limit: int | None
    doubled: bool
    phase: Phase
    to_move: int

    def __init__(self, deck: Sequence[Card], dealer: int, rules: RuleSet, key: bytes = b"") -> None:
        deck = tuple(deck)
        if len(deck) != 52 or len({c.index for c in deck}) != 52:
            raise ValueError("a deck must hold each of the 52 cards exactly once")
        if dealer not in (0, 1):
            raise ValueError(f"dealer must be seat 0 or 1; got {dealer!r}")
        self.rules = rules
        self.deck = deck
        self.dealer = dealer
        self.key = key
        non_dealer = 1 - dealer
        hands = [0, 0]
        for i in range(HAND_SIZE):
            hands[non_dealer] |= deck[2 * i].mask
            hands[dealer] |= deck[2 * i + 1].mask
        self.hands = hands
        upcard = deck[2 * HAND_SIZE]
        self.first_upcard = upcard
        self._discards = [upcard.index]
        self._stock = [c.index for c in reversed(deck[2 * HAND_SIZE + 1:])]
        self.knock_limit = rules.knock_limit_for(upcard.value, upcard.rank == 1)
        self.doubled = rules.knock == "oklahoma" and rules.oklahoma_spades_double and upcard.suit == 0
        self.phase = "upcard"
        self.to_move = non_dealer
        self._passes = 0
        self._no_discard_draw = False
        self._forbidden = -1
        self._known = [0, 0]
        self._history: list[Move] = []
        self._seat_events: dict[int, list[Any]] = {}
        self._reshuffled = False
        self._void_at_two = rules.stock_exhausted == "void"
        self._outcome: DealOutcome | None = None

    @classmethod
    def from_deck(
        cls, deck: Sequence[Card], dealer: int, rules: RuleSet | None = None, *, key: bytes = b""
    ) -> Deal:
        """A new deal from a deck order (RULES §3: the non-dealer gets ``deck[0], deck[2], …``,
        the dealer ``deck[1], deck[3], …``, ``deck[20]`` is the upcard, ``deck[21]`` the top of the
        stock). ``key`` seeds the reshuffle of the discard pile (``stock_exhausted=reshuffle``)."""
        return cls(deck, dealer, rules if rules is not None else RuleSet.classic(), key)

    @classmethod
    def replay(
        cls, deck: Sequence[Card], dealer: int, rules: RuleSet, actions: Iterable[Action], *, key: bytes = b""
    ) -> Deal:
        """Rebuild a deal from its deck order, dealer and the list of actions played."""
        deal = cls(deck, dealer, rules, key)
        for action in actions:
            deal.apply(action)
        return deal

    # ----- read-only state -----
    @property
    def is_over(self) -> bool:
        """Whether the deal has ended."""
        return self.phase == "over"

    @property
    def outcome(self) -> DealOutcome | None:
        """The result once the deal is over."""
        return self._outcome

    @property
    def history(self) -> tuple[Move, ...]:
        """The complete record of the deal so far."""
        return tuple(self._history)

    @property
    def steps(self) -> int:
        """How many moves the deal has had (chance steps included): ``len(history)``, without the copy."""
        return len(self._history)

    def last_move(self, back: int = 1) -> Move:
        """The move ``back`` steps from the end of :attr:`history` (1: the latest), without the copy."""
        return self._history[-back]

    @property
    def actions(self) -> list[Action]:
        """The actions played so far (what :meth:`replay` needs besides the deck)."""
        return [m.action for m in self._history if m.action is not None]

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return len(self._stock)

    @property
    def discard_pile(self) -> tuple[Card, ...]:
        """The face-up discard pile, bottom first."""
        return tuple(DECK[i] for i in self._discards)

    def hand(self, seat: int) -> tuple[Card, ...]:
        """A seat's cards, sorted (complete information: the referee's, not a seat's view)."""
        return tuple(from_mask(self.hands[seat]))

    def known_cards(self, seat: int) -> tuple[Card, ...]:
        """Cards ``seat`` took from the discard pile and still holds (public knowledge)."""
        return tuple(from_mask(self._known[seat]))

    @property
    def forbidden_discard(self) -> Card | None:
        """The card taken from the discard pile this turn, which may not be discarded."""
        return DECK[self._forbidden] if self._forbidden >= 0 else None

    @property
    def upcard_passes(self) -> int:
        """How many players have passed the upcard."""
        return self._passes

    @property
    def stock_draw_only(self) -> bool:
        """True on the first draw after both players passed the upcard (stock only, RULES §4)."""
        return self._no_discard_draw

    @property
    def reshuffled(self) -> bool:
        """Whether the discard pile has been shuffled into a new stock."""
        return self._reshuffled

    def view(self, seat: int) -> InformationState:
        """What ``seat`` may know now (RULES §12); see :func:`referee.gin.information_state`."""
        return deal_state(self, seat)

    def copy(self) -> Deal:
        """An independent copy (for search: apply actions to it freely)."""
        other = Deal.__new__(Deal)
        for name in _SLOTS:
            setattr(other, name, getattr(self, name))
        other.hands = list(self.hands)
        other._discards = list(self._discards)
        other._stock = list(self._stock)
        other._known = list(self._known)
        other._history = list(self._history)
        other._seat_events = {}
        return other

    # ----- rules -----
    def legal_actions(self) -> list[Action]:
        """Exactly the actions that :meth:`apply` accepts now (empty once the deal is over)."""
        phase = self.phase
        if phase == "draw":
            if self._no_discard_draw or not self._discards:
                return [DRAW_STOCK]
            return [DRAW_STOCK, DRAW_DISCARD]
        if phase == "discard":
            hand = self.hands[self.to_move]
            forbidden = self._forbidden
            h = hand if forbidden < 0 else hand ^ (1 << forbidden)
            # written out here, not called: a call costs more than the lookups (pure Python)
            actions = [*_S0[h & _M13], *_S1[(h >> 13) & _M13], *_S2[(h >> 26) & _M13], *_S3[h >> 39]]
            limit = 0 if self.knock_limit is None else self.knock_limit
            a = hand & _M13
            b = (hand >> 13) & _M13
            c = (hand >> 26) & _M13
            d = hand >> 39
            no_set = ~((a & b & (c | d)) | (c & d & (a | b)))  # ranks held fewer than three times
            loose = _OUTSIDE_RUNS
            value = _VALUE_SUM
            floor = value[loose[a] & no_set] + value[loose[b] & no_set] + value[loose[c] & no_set]
            if floor + value[loose[d] & no_set] - 10 <= limit and min_deadwood_after_discard_mask(hand) <= limit:
                actions.extend(
                    KNOCKS[i] for i in _bits(hand) if i != forbidden and deadwood_mask(hand ^ (1 << i)) <= limit
                )
                if self.rules.big_gin and deadwood_mask(hand) == 0:
                    actions.append(BIG_GIN)
            return actions
        if phase == "upcard":
            return [TAKE_UPCARD, PASS]
        return []

    def apply(self, action: Action, seat: int | None = None) -> None:
        """Play ``action`` for the seat to move. If ``seat`` is given it must be that seat.
        Raises :class:`IllegalActionError` naming the reason, and then changes nothing."""
        phase = self.phase
        if phase == "over":
            raise IllegalActionError("the deal is over")
        mover = self.to_move
        if seat is not None and seat != mover:
            raise IllegalActionError(f"it is seat {mover}'s turn, not seat {seat}'s")
        # isinstance (not a type's identity) narrows the union: compiled, the branch then reads
        # the action's fields natively.
        if isinstance(action, Discard):
            card = action.card
            if phase != "discard" or not self.hands[mover] & card.mask or card.index == self._forbidden:
                self._check_discard(card, "discard")
            self._discard(mover, card)
        elif isinstance(action, DrawStock):
            if phase != "draw":
                raise IllegalActionError(f"cannot draw now: {self._phase_text()}")
            index = self._stock.pop()
            hands = self.hands
            hands[mover] = hands[mover] | 1 << index  # not |=: compiled, a list item's |= is generic
            self._no_discard_draw = False
            self.phase = "discard"
            key = _DRAW_STOCK_KEY | mover << 12 | index << 6 | len(self._stock)
            self._history.append(_MOVES[key] or _new_move(key))
        elif isinstance(action, DrawDiscard):
            if phase != "draw":
                raise IllegalActionError(f"cannot draw now: {self._phase_text()}")
            if self._no_discard_draw:
                raise IllegalActionError(
                    "both players passed the upcard: the non-dealer's first draw must be from the stock"
                )
            self._take_discard(mover, action)
        elif isinstance(action, Knock):
            self._check_discard(action.card, "knock with")
            kept = self.hands[mover] ^ action.card.mask
            limit = self.knock_limit
            dw = deadwood_mask(kept)
            if limit is None and dw > 0:
                raise IllegalActionError(
                    f"only gin may end this deal ({self._gin_only_reason()}); "
                    f"discarding {action.card} leaves deadwood {dw}"
                )
            if limit is not None and dw > limit:
                raise IllegalActionError(
                    f"discarding {action.card} leaves deadwood {dw}, above the knock limit {limit}"
                )
            self.hands[mover] = kept
            self._known[mover] &= ~action.card.mask
            self._history.append(Move(mover, action, action.card, len(self._stock)))
            self._finish_showdown(mover, kept, big_gin=False, knock_discard=action.card)
        elif isinstance(action, TakeUpcard):
            if phase != "upcard":
                raise IllegalActionError(f"no upcard is offered now: {self._phase_text()}")
            self._take_discard(mover, action)
        elif isinstance(action, Pass):
            if phase != "upcard":
                raise IllegalActionError(f"cannot pass now: {self._phase_text()}")
            self._passes += 1
            self._history.append(Move(mover, action, DECK[self._discards[-1]], len(self._stock)))
            if self._passes == 1:
                self.to_move = self.dealer
            else:
                self.to_move = 1 - self.dealer
                self.phase = "draw"
                self._no_discard_draw = True
        elif isinstance(action, BigGin):
            if phase != "discard":
                raise IllegalActionError(f"big gin is declared after drawing: {self._phase_text()}")
            if not self.rules.big_gin:
                raise IllegalActionError("big gin is off in these rules")
            dw = deadwood_mask(self.hands[mover])
            if dw:
                raise IllegalActionError(f"big gin needs all 11 cards in melds; deadwood is {dw}")
            self._history.append(Move(mover, action, None, len(self._stock)))
            self._finish_showdown(mover, self.hands[mover], big_gin=True, knock_discard=None)
        else:
            raise IllegalActionError(f"not an action: {action!r}")

    # ----- internals -----
    def _phase_text(self) -> str:
        what = {"upcard": "the upcard is being offered", "draw": "a card must be drawn",
                "discard": "a card must be discarded", "over": "the deal is over"}[self.phase]
        return f"seat {self.to_move} to move, {what}"

    def _gin_only_reason(self) -> str:
        if self.rules.knock == "gin_only":
            return "straight gin"
        return f"Oklahoma with an ace upcard ({self.first_upcard})"

    def _check_discard(self, card: Card, verb: str) -> None:
        if self.phase != "discard":
            raise IllegalActionError(f"cannot {verb.split()[0]} now: {self._phase_text()}")
        if not self.hands[self.to_move] & card.mask:
            raise IllegalActionError(f"cannot {verb} {card}: not in seat {self.to_move}'s hand")
        if card.index == self._forbidden:
            raise IllegalActionError(
                f"cannot {verb} {card}: it was taken from the discard pile this turn (RULES §5)"
            )

    def _take_discard(self, mover: int, action: Action) -> None:
        index = self._discards.pop()
        bit = 1 << index
        hands = self.hands
        known = self._known
        hands[mover] = hands[mover] | bit
        known[mover] = known[mover] | bit
        self._forbidden = index
        self.phase = "discard"
        key = (_DRAW_DISCARD_KEY if isinstance(action, DrawDiscard) else _TAKE_UPCARD_KEY) | mover << 12 | index << 6
        key |= len(self._stock)
        self._history.append(_MOVES[key] or _new_move(key))

    def _discard(self, mover: int, card: Card) -> None:
        bit = card.mask
        index = card.index
        hands = self.hands
        known = self._known
        hands[mover] = hands[mover] ^ bit
        known[mover] = known[mover] & ~bit
        self._discards.append(index)
        self._forbidden = -1
        stock = len(self._stock)
        key = _DISCARD_KEY | mover << 12 | index << 6 | stock
        self._history.append(_MOVES[key] or _new_move(key))
        if self._void_at_two:
            if stock <= 2:
                self._finish_dead()
                return
        elif stock == 0:
            if self._reshuffled or len(self._discards) < 2:
                self._finish_dead()
                return
            self._reshuffle()
        self.to_move = 1 - mover
        self.phase = "draw"

    def _reshuffle(self) -> None:
        top = self._discards[-1]
        pile = self._discards[:-1]
        new_stock = shuffle(pile, reshuffle_key(self.key or bytes(c.index for c in self.deck)))
        self._stock = new_stock
        self._discards = [top]
        self._reshuffled = True
        self._history.append(Move(-1, None, None, len(new_stock)))

    def _finish_dead(self) -> None:
        self.phase = "over"
        self._outcome = DealOutcome(
            kind="dead", knocker=None, winner=None, points=0, doubled=False, showdown=None,
            knock_discard=None, hands=(self.hand(0), self.hand(1)),
        )

    def _finish_showdown(self, knocker: int, kept: int, *, big_gin: bool, knock_discard: Card | None) -> None:
        defender = 1 - knocker
        sd = score_showdown(
            from_mask(kept), from_mask(self.hands[defender]), self.rules,
            big_gin=big_gin, double=self.doubled,
        )
        self.phase = "over"
        self._outcome = DealOutcome(
            kind=sd.kind,
            knocker=knocker,
            winner=knocker if sd.winner == "knocker" else defender,
            points=sd.points,
            doubled=sd.doubled,
            showdown=sd,
            knock_discard=knock_discard,
            hands=(self.hand(0), self.hand(1)),
        )
