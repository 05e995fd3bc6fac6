"""What a seat (or a spectator) may know (R11). Everything handed to the outside about a deal is
built here."""

from __future__ import annotations

from dataclasses import dataclass

from referee.cardcore import Value

from ._actions import Action, Discard, DrawStock, LayMeld, LayOff, TakeDiscard
from ._cards import Card
from ._deal import Deal, Move, Step
from ._melds import TableMeld
from ._outcome import Phase, RummyOutcome
from ._rules import RummyRules


@dataclass(frozen=True, slots=True)
class PublicEvent(Value):
    """One step of a deal as a given seat (or a spectator) saw it."""

    seat: int
    """Who acted; -1 for a reshuffle of the discard pile (R6)."""
    kind: str
    """The action kind (``draw_stock``, ``take_discard``, ``meld``, ``lay_off``, ``discard``,
    ``call_stop``, ``decline_stop``) or ``reshuffle``."""
    card: Card | None
    """The card involved: the taken, laid-off or discarded card, a reshuffle's new upcard; a
    stock draw's card only for the seat that drew it (``None`` for everyone else)."""
    cards: tuple[Card, ...]
    """A meld's cards, or every card a ``take_discard`` moved into the hand (the taken card and
    those above it); empty otherwise."""
    meld: int
    """The meld a layoff went onto (-1 for other kinds)."""
    end: str
    """Where a layoff went (``set``, ``low``, ``high``; empty for other kinds)."""


@dataclass(frozen=True, slots=True)
class InformationState(Value):
    """Everything one seat (or a spectator) may know at one moment (R11), enough to play
    without memory."""

    rules: RummyRules
    """The rule set."""
    seat: int | None
    """The seat this state belongs to; ``None`` for a spectator."""
    num_seats: int
    """Seats at the table."""
    dealer: int
    """The seat that dealt this deal."""
    turn: int
    """Whose turn it is (the stopped discarder while stop is asked)."""
    to_move: int | None
    """Who must decide now (an asked seat during a stop question); ``None`` when over."""
    phase: Phase
    """``draw``, ``play``, ``stop``, ``lay_back`` or ``over``."""
    hand: tuple[Card, ...]
    """This seat's hand in index order (a spectator: empty)."""
    hand_sizes: tuple[int, ...]
    """Cards in every hand, by seat."""
    stock_size: int
    """Cards in the stock."""
    discard_pile: tuple[Card, ...]
    """The discard pile (row), bottom first."""
    table: tuple[TableMeld, ...]
    """The melds on the table with their owners and layoffs, in the order laid."""
    must_use: Card | None
    """The discard the player to move took and has still to use (R4.1)."""
    stopped: Card | None
    """The discard under a stop question, or to be laid off after a stop (R8.3)."""
    events: tuple[PublicEvent, ...]
    """The deal so far, as this seat saw it."""
    legal_actions: tuple[Action, ...]
    """What this seat may do now (empty unless it is to move)."""
    scores: tuple[int, ...]
    """The game's totals by seat so far: before the deal in play; once the game is over (its
    last deal scored), after that deal."""
    game_number: int
    """Game in the match, from 1."""
    deal_number: int
    """Deal in the game, from 1 (void deals count)."""
    outcome: RummyOutcome | None
    """The deal's end (every remaining hand revealed), once it is over."""


def seat_event(step: Step, cards: tuple[Card, ...], seat: int | None) -> PublicEvent:
    """A step as ``seat`` saw it (``None``: a spectator); ``cards`` is the deal's
    ``step_cards`` entry for it (a stock draw's card is shown only to the seat that drew it)."""
    if not isinstance(step, Move):
        return PublicEvent(-1, "reshuffle", step.upcard, (), -1, "")
    a = step.action
    if isinstance(a, DrawStock):
        return PublicEvent(step.seat, a.kind, cards[0] if seat == step.seat else None, (), -1, "")
    if isinstance(a, TakeDiscard):
        return PublicEvent(step.seat, a.kind, a.card, cards, -1, "")
    if isinstance(a, LayMeld):
        return PublicEvent(step.seat, a.kind, None, a.cards, -1, "")
    if isinstance(a, LayOff):
        return PublicEvent(step.seat, a.kind, a.card, (), a.meld, a.end)
    return PublicEvent(step.seat, a.kind, a.card if isinstance(a, Discard) else None, (), -1, "")


def deal_state(
    deal: Deal, seat: int | None, *, scores: tuple[int, ...] = (), game_number: int = 1, deal_number: int = 1,
) -> InformationState:
    """The information state of ``seat`` (``None``: a spectator) in ``deal`` (R11)."""
    if seat is not None and not 0 <= seat < deal.seats:
        raise ValueError(f"no seat {seat} at a table of {deal.seats}")
    return InformationState(
        rules=deal.rules, seat=seat, num_seats=deal.seats, dealer=deal.dealer, turn=deal.turn,
        to_move=deal.to_move, phase=deal.phase, hand=deal.hand(seat) if seat is not None else (),
        hand_sizes=deal.hand_sizes(), stock_size=len(deal.stock),
        discard_pile=tuple(deal.pile), table=tuple(deal.table),
        must_use=deal.pending if deal.phase != "over" else None, stopped=deal.stopped,
        events=tuple(seat_event(s, c, seat) for s, c in zip(deal.steps, deal.step_cards, strict=True)),
        legal_actions=tuple(deal.legal_actions()) if seat is not None and seat == deal.to_move else (),
        scores=scores or (0,) * deal.seats, game_number=game_number, deal_number=deal_number,
        outcome=deal.outcome,
    )
