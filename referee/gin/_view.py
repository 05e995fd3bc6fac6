"""What a seat may know (RULES §12). This module is the only place that hands game state to
the outside: everything sent to a seat is built from :func:`information_state`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from referee.cardcore import Value

from ._actions import Action
from ._cards import Card
from ._outcome import DealOutcome, Phase
from ._rules import RuleSet


@dataclass(frozen=True, slots=True)
class PublicEvent(Value):
    """One step of the deal as a given seat saw it."""

    seat: int
    """Who acted; -1 for the reshuffle of the discard pile into a new stock."""
    kind: str
    """The action kind (``pass``, ``take_upcard``, ``draw_stock``, ``draw_discard``,
    ``discard``, ``knock``, ``big_gin``) or ``reshuffle``."""
    card: Card | None
    """The face-up card involved; the card of a stock draw or of a knock only for the seat
    that made it (``None`` for the others)."""
    stock_size: int
    """Cards left in the stock after the step."""


@dataclass(frozen=True, slots=True)
class InformationState(Value):
    """Everything one seat may know at one moment (RULES §12), enough to play without memory."""

    rules: RuleSet
    """The rule set."""
    seat: int
    """The seat this state belongs to."""
    num_seats: int
    """Seats at the table."""
    game_number: int
    """Game in the match, from 1."""
    deal_number: int
    """Deal in the game, from 1."""
    scores: tuple[int, ...]
    """Deal points in the current game, by seat."""
    deals_won: tuple[int, ...]
    """Deals won in the current game, by seat."""
    games_won: tuple[int, ...]
    """Games won in the match, by seat."""
    match_totals: tuple[int, ...]
    """Cumulative totals of the finished games, by seat."""
    dealer: int
    """The seat that dealt this deal."""
    phase: Phase
    """``upcard``, ``draw``, ``discard`` or ``over``."""
    to_move: int | None
    """The seat to act; ``None`` when the deal is over."""
    hand: tuple[Card, ...]
    """This seat's cards, sorted."""
    discard_pile: tuple[Card, ...]
    """The face-up discard pile, bottom first."""
    stock_size: int
    """Cards in the stock."""
    hand_sizes: tuple[int, ...]
    """Cards held, by seat."""
    known_cards: tuple[tuple[Card, ...], ...]
    """By seat: cards taken from the discard pile and not discarded since (public)."""
    first_upcard: Card
    """The deal's first upcard."""
    knock_limit: int | None
    """The deal's knock limit; ``None`` means gin only."""
    doubled: bool
    """Whether this deal's score will be doubled (Oklahoma spade upcard)."""
    forbidden_discard: Card | None
    """The card taken from the discard pile this turn (it may not be discarded)."""
    upcard_passes: int
    """Players who passed the upcard so far."""
    stock_draw_only: bool
    """The next draw must come from the stock (both passed the upcard)."""
    events: tuple[PublicEvent, ...]
    """The deal so far, as this seat saw it."""
    legal_actions: tuple[Action, ...]
    """This seat's legal actions if it is to move, else empty."""
    outcome: DealOutcome | None
    """The deal's result once over, as this seat may see it: no knock discard unless this
    seat knocked; no hands after a dead hand (there is no showdown)."""


class DealLike(Protocol):
    """What a view reads of a deal (``_deal.Deal``, which imports this module)."""

    rules: RuleSet
    dealer: int
    _seat_events: dict[int, list[PublicEvent]]
    _history: list[Any]

    @property
    def is_over(self) -> bool: ...
    @property
    def to_move(self) -> int: ...
    @property
    def phase(self) -> Phase: ...
    @property
    def discard_pile(self) -> tuple[Card, ...]: ...
    @property
    def stock_size(self) -> int: ...
    @property
    def hands(self) -> Sequence[int]: ...
    @property
    def first_upcard(self) -> Card: ...
    @property
    def knock_limit(self) -> int | None: ...
    @property
    def doubled(self) -> bool: ...
    @property
    def forbidden_discard(self) -> Card | None: ...
    @property
    def upcard_passes(self) -> int: ...
    @property
    def stock_draw_only(self) -> bool: ...
    @property
    def outcome(self) -> DealOutcome | None: ...
    def hand(self, seat: int) -> tuple[Card, ...]: ...
    def known_cards(self, seat: int) -> tuple[Card, ...]: ...
    def legal_actions(self) -> Sequence[Action]: ...


HIDDEN_KINDS: Final = frozenset({"draw_stock", "knock"})
"""The steps whose card only the seat that made them sees (a stock draw, a knock's face-down
card)."""


def seat_event(seat: int, actor: int, kind: str, card: Card | None, stock_size: int) -> PublicEvent:
    """A step as ``seat`` sees it: a stock draw's card and a knock's face-down card only for
    the seat that made them."""
    if actor != seat and kind in HIDDEN_KINDS:
        card = None
    return PublicEvent(actor, kind, card, stock_size)


def _deal_events(deal: DealLike, seat: int) -> tuple[PublicEvent, ...]:
    # A deal's history only grows: each seat's events are converted once and kept on the deal.
    # A step every seat sees alike is one shared object (fewer objects for the collector).
    cache = deal._seat_events
    seen = cache.get(seat)
    if seen is None:
        seen = cache[seat] = []
    history = deal._history
    if len(seen) < len(history):
        full = cache.get(_FULL)
        if full is None:
            full = cache[_FULL] = []
            cache[_HIDDEN] = []
        hidden = cache[_HIDDEN]
        for m in history[len(full):]:  # each step as its maker sees it, and as the others do
            kind = m.action.kind if m.action is not None else "reshuffle"
            ev = PublicEvent(m.seat, kind, m.card, m.stock_size)
            full.append(ev)  # as the other seats see it: the same value unless its card is hidden
            hidden.append(PublicEvent(m.seat, kind, None, m.stock_size)
                          if m.card is not None and kind in HIDDEN_KINDS else ev)
        for i in range(len(seen), len(history)):
            ev = full[i]
            seen.append(ev if ev.seat == seat else hidden[i])
    return tuple(seen)


_FULL, _HIDDEN = -1000, -1001
"""Keys of a deal's event cache that no seat has: every step as its maker sees it, and as the
other seats see it (the same object when nothing is hidden)."""


def visible_outcome(outcome: DealOutcome | None, seat: int) -> DealOutcome | None:
    """A deal's outcome as ``seat`` may see it."""
    if outcome is None:
        return None
    if outcome.kind == "dead":
        return DealOutcome("dead", None, None, 0, False, None, None, ())
    if outcome.knocker != seat and outcome.knock_discard is not None:
        return DealOutcome(
            outcome.kind, outcome.knocker, outcome.winner, outcome.points, outcome.doubled,
            outcome.showdown, None, outcome.hands,
        )
    return outcome


def deal_state(
    deal: DealLike,
    seat: int,
    *,
    game_number: int = 1,
    deal_number: int = 1,
    scores: tuple[int, ...] = (0, 0),
    deals_won: tuple[int, ...] = (0, 0),
    games_won: tuple[int, ...] = (0, 0),
    match_totals: tuple[int, ...] = (0, 0),
) -> InformationState:
    """The information state of ``seat`` in ``deal`` (with the score context given). A
    negative ``seat`` is a spectator: public information only, no hand."""
    over = deal.is_over
    to_move = None if over else deal.to_move
    return InformationState(
        rules=deal.rules,
        seat=seat,
        num_seats=2,
        game_number=game_number,
        deal_number=deal_number,
        scores=scores,
        deals_won=deals_won,
        games_won=games_won,
        match_totals=match_totals,
        dealer=deal.dealer,
        phase=deal.phase,
        to_move=to_move,
        hand=deal.hand(seat) if seat >= 0 else (),
        discard_pile=deal.discard_pile,
        stock_size=deal.stock_size,
        hand_sizes=tuple(h.bit_count() for h in deal.hands),
        known_cards=(deal.known_cards(0), deal.known_cards(1)),
        first_upcard=deal.first_upcard,
        knock_limit=deal.knock_limit,
        doubled=deal.doubled,
        forbidden_discard=deal.forbidden_discard,
        upcard_passes=deal.upcard_passes,
        stock_draw_only=deal.stock_draw_only,
        events=_deal_events(deal, seat),
        legal_actions=tuple(deal.legal_actions()) if to_move == seat else (),
        outcome=visible_outcome(deal.outcome, seat),
    )
