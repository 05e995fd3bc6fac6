"""A Gin replay read as a match to look at: every position, deal by deal and move by move, rebuilt
by playing the recorded actions through the rules engine (``Deal.from_deck`` + ``parse_action``).

This is what ``arena replay`` (terminal) and ``arena replay --html`` show of a Gin match (the
registry in :mod:`arena.replays.model` picks it by the header's game). It trusts the replay only
as far as the engine accepts it: an action the engine refuses raises :class:`ReplayModelError`
(``arena audit`` explains such replays in detail).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.replays.base import MatchRecords, ReplayModelError
from referee.gin import Arrangement, Card, Deal, IllegalActionError, Meld, RuleSet, arrange, parse_action, parse_card
from referee.gin.records import GinGameEnd
from referee.replays import (
    ActionRecord,
    DealEndRecord,
    DealRecord,
    FaultRecord,
    GameEndRecord,
    HeaderRecord,
    Record,
    Replay,
    ReplayVisitor,
    ResultRecord,
)


@dataclass(frozen=True, slots=True)
class Step:
    """The move that led to a position."""

    seq: int
    """The action record's ``seq``."""
    seat: int
    action: str
    """The action's text (``discard Ts``)."""
    kind: str
    card: str | None
    """The card drawn, taken, discarded or knocked (complete information)."""
    think_us: int
    substitute: bool
    clocks: tuple[int, ...]
    reshuffled: bool
    """The discard pile was shuffled into a new stock right after this move."""


@dataclass(frozen=True, slots=True)
class SeatShowdown:
    """One seat's hand at the end of a deal, arranged."""

    cards: tuple[Card, ...]
    melds: tuple[Meld, ...]
    deadwood_cards: tuple[Card, ...]
    deadwood: int
    laid_off: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class DealEnd:
    """How a deal ended (engine outcome, scores from the ``deal_end`` record)."""

    seq: int
    kind: str
    """``knock``, ``undercut``, ``gin``, ``big_gin`` or ``dead``."""
    knocker: int | None
    winner: int | None
    points: int
    doubled: bool
    knock_discard: Card | None
    seats: tuple[SeatShowdown, ...]
    scores: tuple[int, ...]
    """Game scores (deal points) after the deal, by seat."""


@dataclass(frozen=True, slots=True)
class Position:
    """The table at one moment: both hands (complete information), the piles, whose turn."""

    index: int
    """Position in the whole match, from 0."""
    deal_index: int
    """Index into :attr:`MatchView.deals`."""
    step: int
    """Moves played in this deal so far (0: just dealt)."""
    hands: tuple[tuple[Card, ...], ...]
    discard_pile: tuple[Card, ...]
    """Face-up discard pile, bottom first."""
    stock_size: int
    to_move: int | None
    phase: str
    last: Step | None
    forbidden: Card | None
    """The card just taken from the discard pile (it may not be discarded this turn)."""

    def arranged(self, seat: int) -> Arrangement:
        """A seat's hand, melds grouped (minimum deadwood)."""
        return arrange(self.hands[seat])


@dataclass(slots=True)
class DealView:
    """One deal of the match."""

    index: int
    seq: int
    game: int
    number: int
    """The deal's number within its game (dead hands count)."""
    dealer: int
    deck: tuple[Card, ...]
    first_upcard: Card
    knock_limit: int | None
    doubled: bool
    scores_before: tuple[int, ...]
    games_won_before: tuple[int, ...]
    positions: list[Position] = field(default_factory=list)
    end: DealEnd | None = None
    faults: list[FaultRecord] = field(default_factory=list)
    game_end: GameEndRecord | None = None
    """The ``game_end`` record if the game ended with (or right after) this deal."""


@dataclass(slots=True)
class MatchView(MatchRecords):
    """A whole replay, ready to show."""

    header: HeaderRecord
    result: ResultRecord | None
    """The result record (``None`` for a replay without one)."""
    rules: RuleSet
    deals: list[DealView]
    positions: list[Position]
    games: list[GameEndRecord]
    faults: list[FaultRecord]
    final_hash: str
    records: int
    faults_at: dict[int, list[FaultRecord]] = field(default_factory=dict)
    """Fault records by the index of the position they came after."""

    @property
    def seed(self) -> str:
        """The revealed seed (hex; empty without a result record)."""
        return self.result.seed if self.result is not None else ""

    def seat_name(self, seat: int | None) -> str:
        """A seat's player name (``?`` for none, ``seat N`` for a seat the header does not name)."""
        if seat is None:
            return "?"
        return self.players[seat] if 0 <= seat < len(self.players) else f"seat {seat}"

    def deal_of(self, position: Position) -> DealView:
        return self.deals[position.deal_index]

    def outcome_text(self) -> str:
        """The match result in words."""
        r = self.result
        names = self.players
        winner = r.winner if r is not None else None
        term = r.termination if r is not None else "?"
        who = f"{names[winner]} wins" if winner is not None and 0 <= winner < len(names) else "no winner"
        games = r.games_won if r is not None else ()
        totals = r.totals if r is not None else ()
        extra = ""
        if len(games) == 2 and len(totals) == 2:
            extra = f" · games {games[0]}–{games[1]} · points {totals[0]}–{totals[1]}"
        return f"{who} ({term}){extra}"


def _cards(texts: Sequence[str], what: str) -> tuple[Card, ...]:
    try:
        return tuple(parse_card(t) for t in texts)
    except ValueError as e:
        raise ReplayModelError(f"{what}: {e}") from None


def _seat_showdowns(deal: Deal) -> tuple[SeatShowdown, ...]:
    out = deal.outcome
    assert out is not None
    sd = out.showdown
    if sd is None or out.knocker is None:
        seats = []
        for hand in out.hands:
            a = arrange(hand)
            seats.append(SeatShowdown(tuple(hand), a.melds, a.deadwood_cards, a.deadwood))
        return tuple(seats)
    knocker = out.knocker
    result: list[SeatShowdown] = []
    for seat in range(len(out.hands)):
        if seat == knocker:
            result.append(SeatShowdown(sd.knocker_cards, sd.knocker_melds, sd.knocker_deadwood_cards,
                                       sd.knocker_deadwood))
        else:
            result.append(SeatShowdown(sd.defender_cards, sd.defender_melds, sd.defender_deadwood_cards,
                                       sd.defender_deadwood, sd.layoffs))
    return tuple(result)


def _snapshot(deal: Deal, index: int, deal_index: int, last: Step | None) -> Position:
    return Position(
        index=index, deal_index=deal_index, step=len(deal.actions), hands=(deal.hand(0), deal.hand(1)),
        discard_pile=deal.discard_pile, stock_size=deal.stock_size,
        to_move=None if deal.is_over else deal.to_move, phase=deal.phase, last=last,
        forbidden=deal.forbidden_discard,
    )


class _Builder(ReplayVisitor):
    """Plays a replay's records through the engine, position by position."""

    def __init__(self, rules: RuleSet, seats: int) -> None:
        self.rules = rules
        self.deals: list[DealView] = []
        self.positions: list[Position] = []
        self.games: list[GameEndRecord] = []
        self.faults: list[FaultRecord] = []
        self.faults_at: dict[int, list[FaultRecord]] = {}
        self.engine: Deal | None = None
        self.scores: tuple[int, ...] = (0,) * seats
        self.games_won = [0] * seats
        self.totals = [0] * seats
        self.seq = -1

    def visit_record(self, record: Record) -> None:
        self.seq += 1

    def _add(self, deal: DealView, engine: Deal, step: Step | None) -> None:
        pos = _snapshot(engine, len(self.positions), deal.index, step)
        deal.positions.append(pos)
        self.positions.append(pos)

    def visit_deal(self, record: DealRecord) -> None:
        deck = _cards(record.deck, f"record {self.seq}: deck")
        engine = self.engine = Deal.from_deck(deck, record.dealer, self.rules, key=bytes.fromhex(record.key))
        if record.deal == 1:
            self.scores = (0,) * len(self.scores)
        dv = DealView(
            index=len(self.deals), seq=self.seq, game=record.game, number=record.deal, dealer=engine.dealer,
            deck=deck, first_upcard=engine.first_upcard, knock_limit=engine.knock_limit, doubled=engine.doubled,
            scores_before=self.scores, games_won_before=tuple(self.games_won),
        )
        self.deals.append(dv)
        self._add(dv, engine, None)

    def visit_action(self, record: ActionRecord) -> None:
        engine = self.engine
        if engine is None or not self.deals:
            raise ReplayModelError(f"record {self.seq}: an action before any deal")
        try:
            action = parse_action(record.action)
            engine.apply(action, record.seat)
        except IllegalActionError as e:
            raise ReplayModelError(f"record {self.seq}: the engine refuses {record.action!r}: {e}") from None
        move = next(m for m in reversed(engine.history) if m.action is not None)
        step = Step(
            seq=self.seq, seat=record.seat, action=str(action), kind=action.kind,
            card=str(move.card) if move.card is not None else None, think_us=record.think_us,
            substitute=record.substitute, clocks=record.clocks, reshuffled=engine.history[-1].seat == -1,
        )
        self._add(self.deals[-1], engine, step)

    def visit_deal_end(self, record: DealEndRecord) -> None:
        engine = self.engine
        if engine is None or not self.deals or engine.outcome is None:
            raise ReplayModelError(f"record {self.seq}: a deal_end record for a deal that is not over")
        out = engine.outcome
        self.scores = record.scores
        self.deals[-1].end = DealEnd(
            seq=self.seq, kind=out.kind, knocker=out.knocker, winner=out.winner, points=out.points,
            doubled=out.doubled, knock_discard=out.knock_discard, seats=_seat_showdowns(engine), scores=record.scores,
        )

    def visit_game_end(self, record: GameEndRecord) -> None:
        self.games.append(record)
        if record.winner is not None and 0 <= record.winner < len(self.games_won):
            self.games_won[record.winner] += 1
        for s, t in enumerate(record.totals[:len(self.totals)]):
            self.totals[s] += t
        if self.deals:
            self.deals[-1].game_end = record

    def visit_fault(self, record: FaultRecord) -> None:
        self.faults.append(record)
        if self.deals:
            self.deals[-1].faults.append(record)
        self.faults_at.setdefault(max(0, len(self.positions) - 1), []).append(record)


def build(replay: Replay) -> MatchView:
    """Rebuild every position of a replay with the engine."""
    header = replay.header
    try:
        rules = RuleSet.from_dict(header.rules)
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayModelError(f"the header's rules: {e}") from None
    builder = _Builder(rules, header.seats)
    try:
        replay.accept(builder)
    except (ValueError, IndexError) as e:
        if isinstance(e, ReplayModelError):
            raise
        raise ReplayModelError(f"record {builder.seq} ({replay.records[builder.seq].KIND}): malformed: {e!r}") \
            from None
    final = hashlib.sha256(replay.lines[-1]).hexdigest()
    return MatchView(header=header, result=replay.result, rules=rules, deals=builder.deals,
                     positions=builder.positions, games=builder.games, faults=builder.faults, final_hash=final,
                     records=len(replay.records), faults_at=builder.faults_at)


def shutout(game: GameEndRecord) -> bool:
    """Whether a game ended in a shutout (Gin's content of the record)."""
    return isinstance(game.content, GinGameEnd) and game.content.shutout


def end_text(view: MatchView, end: DealEnd) -> str:
    """A deal's result in one line."""
    names = view.players
    if end.kind == "dead":
        return "dead hand: nobody scores, the same dealer deals again"
    knocker = names[end.knocker] if end.knocker is not None else "?"
    winner = names[end.winner] if end.winner is not None else "?"
    dw = [s.deadwood for s in end.seats]
    what = {"knock": f"{knocker} knocks", "undercut": f"{knocker} knocks and is undercut",
            "gin": f"{knocker} goes gin", "big_gin": f"{knocker} declares big gin"}[end.kind]
    doubled = " (doubled: spade upcard)" if end.doubled else ""
    return f"{what} · deadwood {names[0]} {dw[0]}, {names[1]} {dw[1]} · {winner} scores {end.points}{doubled}"
