"""A rummy replay (2–6 seats) read as a match to look at: every position rebuilt by playing the
recorded actions through the rummy engine (``Deal.from_deck`` + ``parse_action``; the engine
redoes a reshuffle from the deal's key). It trusts the replay only as far as the engine accepts
it: an action the engine refuses raises :class:`ReplayModelError`."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.replays.base import MatchRecords, ReplayModelError
from referee import rummy
from referee.games import places_with_forfeits
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
from referee.rummy import Card, TableMeld
from referee.rummy.records import RummyDealEnd, RummyGameEnd


@dataclass(frozen=True, slots=True)
class RummyStep:
    """The move that led to a position."""

    seq: int
    """The action record's ``seq``."""
    seat: int
    """Who decided."""
    action: str
    """The action's text (``meld 3s 4s 5s``)."""
    kind: str
    """The action's kind (``draw_stock``, ``take_discard``, ``meld``, …)."""
    cards: tuple[Card, ...]
    """The cards it moved: the card drawn, the cards taken, melded, laid off or discarded."""
    think_us: int
    """Microseconds the answer took."""
    substitute: bool
    """The built-in substitute played it."""
    clocks: tuple[int, ...]
    """Each seat's clock after it (ms)."""
    reshuffled: bool
    """The discard pile was shuffled into a new stock right after this move."""


@dataclass(frozen=True, slots=True)
class RummyPosition:
    """The table at one moment, with complete information."""

    index: int
    """Position in the whole match, from 0."""
    deal_index: int
    """Index into :attr:`RummyMatchView.deals`."""
    step: int
    """Moves played in this deal so far (0: just dealt)."""
    hands: tuple[tuple[Card, ...], ...]
    """Every hand in index order, by seat."""
    discard_pile: tuple[Card, ...]
    """Face-up discard pile, bottom first."""
    stock_size: int
    """Cards in the stock."""
    table: tuple[TableMeld, ...]
    """The melds on the table in the order laid, with owners and layoffs."""
    to_move: int | None
    """The seat to decide (``None`` once over)."""
    phase: str
    """The engine's phase (``draw``, ``play``, ``stop``, ``lay_back``, ``over``)."""
    last: RummyStep | None
    """The move that led here (``None``: just dealt)."""
    must_use: Card | None
    """A taken discard that the next play must use."""
    stopped: Card | None
    """The discard a stop question is about, or the stopped card to lay back."""


@dataclass(frozen=True, slots=True)
class RummyEnd:
    """How a deal ended (the ``deal_end`` record's content) and the game totals after it."""

    seq: int
    """The record's ``seq``."""
    content: RummyDealEnd
    """Reason, winner, points, hands left, their values, table points."""
    scores: tuple[int, ...]
    """Game totals after the deal, by seat."""


@dataclass(slots=True)
class RummyDealView:
    """One deal of the match."""

    index: int
    """Its index in the match, from 0."""
    seq: int
    """The deal record's ``seq``."""
    game: int
    """The game's number, from 1."""
    number: int
    """The deal's number within its game (void deals count)."""
    dealer: int
    """The dealer's seat."""
    deck: tuple[Card, ...]
    """The deck order (R3)."""
    scores_before: tuple[int, ...]
    """Game totals before the deal."""
    positions: list[RummyPosition] = field(default_factory=list)
    """Every position of the deal."""
    end: RummyEnd | None = None
    """How it ended (``None``: not finished)."""
    faults: list[FaultRecord] = field(default_factory=list)
    """Faults during the deal."""
    game_end: GameEndRecord | None = None
    """The ``game_end`` record if the game ended with (or right after) this deal."""


@dataclass(slots=True)
class RummyMatchView(MatchRecords):
    """A whole rummy replay, ready to show."""

    header: HeaderRecord
    """The first record."""
    result: ResultRecord | None
    """The result record (``None`` for a replay without one)."""
    rules: rummy.RummyRules
    """The match's rules."""
    deals: list[RummyDealView]
    """Every deal."""
    positions: list[RummyPosition]
    """Every position of the match."""
    games: list[GameEndRecord]
    """Every game's end."""
    faults: list[FaultRecord]
    """Every fault."""
    final_hash: str
    """SHA-256 of the last line."""
    records: int
    """Records in the replay."""
    faults_at: dict[int, list[FaultRecord]] = field(default_factory=dict)
    """Fault records by the index of the position they came after."""

    def seat_name(self, seat: int | None) -> str:
        """A seat's player name (``?`` for none, ``seat N`` for a seat the header does not name)."""
        if seat is None:
            return "?"
        return self.players[seat] if 0 <= seat < len(self.players) else f"seat {seat}"

    def deal_of(self, position: RummyPosition) -> RummyDealView:
        """The deal a position belongs to."""
        return self.deals[position.deal_index]

    def places(self) -> tuple[int, ...]:
        """Each seat's place by the match's points (the result's totals)."""
        totals = self.result.totals if self.result is not None else ()
        return rummy.places(tuple(totals)) if totals else ()

    def outcome_text(self) -> str:
        """The match result in words: the winner, the termination, every seat's points and place."""
        r = self.result
        if r is None:
            return "no result"
        who = f"{self.seat_name(r.winner)} wins" if r.winner is not None else "no winner"
        ranks = " · ".join(f"{self.seat_name(s)} {t} (place {p})"
                           for s, (t, p) in enumerate(zip(r.totals, self.places(), strict=False)))
        return f"{who} ({r.termination})" + (f" · {ranks}" if ranks else "")


def _cards(texts: Sequence[str], what: str) -> tuple[Card, ...]:
    try:
        return tuple(rummy.parse_card(t) for t in texts)
    except ValueError as e:
        raise ReplayModelError(f"{what}: {e}") from None


def _snapshot(deal: rummy.Deal, index: int, deal_index: int, last: RummyStep | None) -> RummyPosition:
    return RummyPosition(
        index=index, deal_index=deal_index, step=len(deal.history),
        hands=tuple(deal.hand(s) for s in range(deal.seats)), discard_pile=tuple(deal.pile),
        stock_size=len(deal.stock), table=tuple(deal.table), to_move=deal.to_move, phase=deal.phase, last=last,
        must_use=deal.pending, stopped=deal.stopped,
    )


def _moved(action: rummy.Action, taken: tuple[Card, ...]) -> tuple[Card, ...]:
    if isinstance(action, (rummy.DrawStock, rummy.TakeDiscard)):
        return taken
    if isinstance(action, rummy.LayMeld):
        return action.cards
    if isinstance(action, (rummy.LayOff, rummy.Discard)):
        return (action.card,)
    return ()


class _Builder(ReplayVisitor):
    """Plays a replay's records through the rummy engine, position by position."""

    def __init__(self, rules: rummy.RummyRules, seats: int) -> None:
        self.rules = rules
        self.seats = seats
        self.deals: list[RummyDealView] = []
        self.positions: list[RummyPosition] = []
        self.games: list[GameEndRecord] = []
        self.faults: list[FaultRecord] = []
        self.faults_at: dict[int, list[FaultRecord]] = {}
        self.engine: rummy.Deal | None = None
        self.scores: tuple[int, ...] = (0,) * seats
        self.seq = -1

    def visit_record(self, record: Record) -> None:
        self.seq += 1

    def _add(self, deal: RummyDealView, engine: rummy.Deal, step: RummyStep | None) -> None:
        pos = _snapshot(engine, len(self.positions), deal.index, step)
        deal.positions.append(pos)
        self.positions.append(pos)

    def visit_deal(self, record: DealRecord) -> None:
        deck = _cards(record.deck, f"record {self.seq}: deck")
        engine = self.engine = rummy.Deal.from_deck(deck, record.dealer, self.rules, self.seats,
                                                    key=bytes.fromhex(record.key))
        if record.deal == 1:
            self.scores = (0,) * self.seats
        dv = RummyDealView(index=len(self.deals), seq=self.seq, game=record.game, number=record.deal,
                           dealer=record.dealer, deck=deck, scores_before=self.scores)
        self.deals.append(dv)
        self._add(dv, engine, None)

    def visit_action(self, record: ActionRecord) -> None:
        engine = self.engine
        if engine is None or not self.deals:
            raise ReplayModelError(f"record {self.seq}: an action before any deal")
        before = len(engine.steps)
        try:
            action = rummy.parse_action(record.action)
            engine.apply(action, record.seat)
        except ValueError as e:  # IllegalActionError is a ValueError
            raise ReplayModelError(f"record {self.seq}: the engine refuses {record.action!r}: {e}") from None
        step = RummyStep(
            seq=self.seq, seat=record.seat, action=str(action), kind=action.kind,
            cards=_moved(action, engine.step_cards[before]), think_us=record.think_us,
            substitute=record.substitute, clocks=record.clocks,
            reshuffled=any(isinstance(s, rummy.Reshuffle) for s in engine.steps[before + 1:]),
        )
        self._add(self.deals[-1], engine, step)

    def visit_deal_end(self, record: DealEndRecord) -> None:
        engine = self.engine
        if engine is None or not self.deals or engine.outcome is None:
            raise ReplayModelError(f"record {self.seq}: a deal_end record for a deal that is not over")
        if not isinstance(record.content, RummyDealEnd):
            raise ReplayModelError(f"record {self.seq}: a deal_end record without rummy's content")
        self.scores = record.scores
        self.deals[-1].end = RummyEnd(self.seq, record.content, record.scores)

    def visit_game_end(self, record: GameEndRecord) -> None:
        self.games.append(record)
        if self.deals:
            self.deals[-1].game_end = record

    def visit_fault(self, record: FaultRecord) -> None:
        self.faults.append(record)
        if self.deals:
            self.deals[-1].faults.append(record)
        self.faults_at.setdefault(max(0, len(self.positions) - 1), []).append(record)


def build(replay: Replay) -> RummyMatchView:
    """Rebuild every position of a rummy replay with the engine."""
    header = replay.header
    try:
        rules = rummy.RummyRules.from_dict(dict(header.rules))
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayModelError(f"the header's rules: {e}") from None
    builder = _Builder(rules, len(header.players))
    try:
        replay.accept(builder)
    except (ValueError, IndexError) as e:
        if isinstance(e, ReplayModelError):
            raise
        raise ReplayModelError(f"record {builder.seq} ({replay.records[builder.seq].KIND}): malformed: {e!r}") \
            from None
    final = hashlib.sha256(replay.lines[-1]).hexdigest() if replay.lines else ""
    return RummyMatchView(header=header, result=replay.result, rules=rules, deals=builder.deals,
                          positions=builder.positions, games=builder.games, faults=builder.faults,
                          final_hash=final, records=len(replay.records), faults_at=builder.faults_at)


def end_text(view: RummyMatchView, end: RummyEnd) -> str:
    """A deal's result in one line."""
    c = end.content
    if c.reason == "void":
        return "void: the stock ran out and the lowest hand was shared; nobody scores"
    who = view.seat_name(c.winner)
    how = "goes out" if c.reason == "out" else "has the lowest hand when the stock runs out"
    rummy_text = " rummy (paid double)" if c.rummy else ""
    won = c.points[c.winner] if c.winner is not None and c.winner < len(c.points) else 0
    return f"{who} {how}{rummy_text} · scores {won}"


def game_end_text(view: RummyMatchView, game: GameEndRecord) -> str:
    """A game's result in one line: totals and places by seat."""
    totals = game.totals
    content = game.content
    forfeited_seats = content.forfeited if isinstance(content, RummyGameEnd) else ()
    ranks = places_with_forfeits(rummy.places(tuple(totals)), forfeited_seats)
    if forfeited_seats:
        forfeited = ", ".join(view.seat_name(s) for s in content.forfeited)
        note = f" · forfeited by {forfeited}"
    else:
        note = "" if not isinstance(content, RummyGameEnd) or content.finished else " · deal limit reached"
    seats = ", ".join(f"{view.seat_name(s)} {t} (place {p})" for s, (t, p) in enumerate(zip(totals, ranks,
                                                                                           strict=False)))
    who = f"{view.seat_name(game.winner)} wins" if game.winner is not None else "no single winner"
    return f"{who} · {seats}{note}"
