"""A replay of any game read as a match to look at, through its game's presentation
(``referee.games.GamePresentation``): each deal is rebuilt by the game's engine from its
``deal`` record and the recorded actions, and every position is the game's plain,
game-neutral description (``present(view)``) for an audience — by default the replay's viewer,
who sees every hand. The renderers (:mod:`arena.replays.view` on a terminal,
:mod:`arena.replays.html` as a page) draw those descriptions and name no game.

A game without a presentation is shown from its records alone (each move as its text). An
action the engine refuses raises :class:`ReplayModelError` (``arena audit`` explains it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.replays.base import MatchRecords, ReplayModelError
from referee import games
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
    ReshuffleRecord,
    ResultRecord,
)


@dataclass(frozen=True, slots=True)
class Position:
    """The table at one moment, as the game describes it."""

    index: int
    """Position in the whole match, from 0."""
    deal_index: int
    """Index into :attr:`MatchView.deals`."""
    step: int
    """Moves played in this deal so far (0: just dealt)."""
    shown: Mapping[str, Any]
    """The game's description of the position (the schema of ``GamePresentation``)."""
    move: ActionRecord | None
    """The action record that led here (``None``: just dealt)."""
    reshuffled: bool = False
    """A chance step (e.g. the discard pile shuffled into a new stock) followed that move."""


@dataclass(slots=True)
class DealView:
    """One deal of the match."""

    index: int
    """Its index in the match, from 0."""
    seq: int
    """The ``deal`` record's ``seq``."""
    game: int
    """The game's number, from 1."""
    number: int
    """The deal's number within its game."""
    dealer: int
    """The dealer's seat."""
    scores_before: tuple[int, ...]
    """The game's points by seat before the deal."""
    record: DealRecord
    """The ``deal`` record."""
    moves: list[ActionRecord] = field(default_factory=list)
    """Its action records, in order."""
    move_seqs: list[int] = field(default_factory=list)
    """The ``seq`` of each of its action records."""
    reshuffles: list[int] = field(default_factory=list)
    """After how many moves each chance step came."""
    positions: list[Position] = field(default_factory=list)
    """Every position of the deal."""
    end: DealEndRecord | None = None
    """Its ``deal_end`` record (``None``: not finished)."""
    faults: list[FaultRecord] = field(default_factory=list)
    """Faults during the deal."""
    game_end: GameEndRecord | None = None
    """The ``game_end`` record if the game ended with (or right after) this deal."""

    @property
    def end_shown(self) -> Mapping[str, Any] | None:
        """The game's description of the deal's end (``None``: not over, or no presentation)."""
        if self.end is None or not self.positions:
            return None
        end = self.positions[-1].shown.get("end")
        return end if isinstance(end, Mapping) else None


@dataclass(slots=True)
class MatchView(MatchRecords):
    """A whole replay, ready to show, of any game."""

    header: HeaderRecord
    """The first record."""
    result: ResultRecord | None
    """The result record (``None`` for a replay without one)."""
    rules_text: str
    """The rule set in words (the game's)."""
    deals: list[DealView]
    """Every deal."""
    positions: list[Position]
    """Every position of the match."""
    games: list[GameEndRecord]
    """Every game's end."""
    game_notes: dict[int, list[str]]
    """What each game's end adds in words (by the index in :attr:`games`)."""
    faults: list[FaultRecord]
    """Every fault."""
    final_hash: str
    """SHA-256 of the last line."""
    records: int
    """Records in the replay."""
    faults_at: dict[int, list[FaultRecord]] = field(default_factory=dict)
    """Fault records by the index of the position they came after."""
    target: int = 0
    """The points that end a game (the rule set's, for the score chart; 0: none)."""

    @property
    def game(self) -> str:
        """The game's registry name."""
        return self.header.game

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
        """The deal a position belongs to."""
        return self.deals[position.deal_index]

    def outcome_text(self) -> str:
        """The match result in words: the winner, the termination, games won and points by seat."""
        r = self.result
        if r is None:
            return "no result"
        who = f"{self.seat_name(r.winner)} wins" if r.winner is not None else "no winner"
        extra = ""
        if r.games_won and any(r.games_won):
            extra += " · games " + "–".join(map(str, r.games_won))
        if r.totals:
            extra += " · points " + "–".join(map(str, r.totals))
        return f"{who} ({r.termination}){extra}"

    def game_end_text(self, record: GameEndRecord) -> str:
        """A game's end in one line: its winner, totals and what its game adds."""
        who = f"{self.seat_name(record.winner)} wins" if record.winner is not None else "no single winner"
        notes = self.game_notes.get(self.games.index(record), []) if record in self.games else []
        forfeit = [f"forfeit by {self.seat_name(record.forfeit)}"] if record.forfeit is not None else []
        return " · ".join([who, "totals " + "–".join(map(str, record.totals)), *notes, *forfeit])


def fields(record: Any) -> dict[str, Any]:
    """A record's fields as plain values, its game content's fields beside them (as its JSON
    object has them)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.name == "content" and dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update(dataclasses.asdict(value))
        else:
            out[f.name] = value
    return out


def _plain(record: ActionRecord | None) -> dict[str, Any]:
    """A game without a presentation: a position from the records alone."""
    last = None if record is None else {"seat": record.seat, "text": record.action,
                                        "cards": [record.card] if record.card else []}
    return {"seats": [], "piles": [], "table": [], "scores": [], "to_move": None, "phase": "", "notes": [],
            "last": last, "legal": [], "end": None}


class _Builder(ReplayVisitor):
    """Collects a replay's deals, moves and ends, record by record."""

    def __init__(self, seats: int) -> None:
        self.deals: list[DealView] = []
        self.games: list[GameEndRecord] = []
        self.faults: list[FaultRecord] = []
        self.fault_after: list[tuple[int, int, FaultRecord]] = []
        self.scores: tuple[int, ...] = (0,) * seats
        self.seq = -1

    def visit_record(self, record: Record) -> None:
        self.seq += 1

    def visit_deal(self, record: DealRecord) -> None:
        if record.deal == 1:
            self.scores = (0,) * len(self.scores)
        self.deals.append(DealView(index=len(self.deals), seq=self.seq, game=record.game, number=record.deal,
                                   dealer=record.dealer, scores_before=self.scores, record=record))

    def visit_action(self, record: ActionRecord) -> None:
        if not self.deals:
            raise ReplayModelError(f"record {self.seq}: an action before any deal")
        self.deals[-1].moves.append(record)
        self.deals[-1].move_seqs.append(self.seq)

    def visit_reshuffle(self, record: ReshuffleRecord) -> None:
        if self.deals:
            self.deals[-1].reshuffles.append(len(self.deals[-1].moves))

    def visit_deal_end(self, record: DealEndRecord) -> None:
        if not self.deals:
            raise ReplayModelError(f"record {self.seq}: a deal_end record before any deal")
        self.scores = record.scores
        self.deals[-1].end = record

    def visit_game_end(self, record: GameEndRecord) -> None:
        self.games.append(record)
        if self.deals:
            self.deals[-1].game_end = record

    def visit_fault(self, record: FaultRecord) -> None:
        self.faults.append(record)
        if self.deals:
            self.deals[-1].faults.append(record)
        self.fault_after.append((len(self.deals) - 1, len(self.deals[-1].moves) if self.deals else 0, record))


_SEAT = re.compile(r"\{(\d+)\}")
_WORDS = frozenset({"text", "notes", "label"})
"""The description's keys whose texts may name a seat as ``{N}``."""


def named(value: Any, players: Sequence[str], key: str = "") -> Any:
    """A description with every ``{N}`` in its texts replaced by seat N's player name (in its
    ``texts`` too: each text and its fields, the templates as they are)."""
    if isinstance(value, str):
        if key not in _WORDS:
            return value
        return _SEAT.sub(lambda m: players[int(m[1])] if int(m[1]) < len(players) else f"seat {m[1]}", value)
    if key == "texts" and isinstance(value, Mapping):
        return {named(text, players, "text"): [made[0], {f: named(v, players, "text") for f, v in made[1].items()}]
                for text, made in value.items()}
    if isinstance(value, Mapping):
        return {k: named(v, players, k) for k, v in value.items()}
    if isinstance(value, list):
        return [named(v, players, key) for v in value]
    return value


def _shown(presentation: games.GamePresentation | None, rules: Any, deal: DealView, players: Sequence[str],
           audience: games.Audience) -> Sequence[Mapping[str, Any]]:
    moves = [(m.seat, m.action) for m in deal.moves]
    if presentation is None:
        return [_plain(None), *(_plain(m) for m in deal.moves)]
    r = deal.record
    record = {"game": r.game, "deal": r.deal, "dealer": r.dealer, "deck": list(r.deck), "key": r.key}
    end = fields(deal.end) if deal.end is not None else None
    try:
        views = presentation.deal_views(rules, record, moves, end, len(players), audience)
        shown = [named(presentation.present(v), players) for v in views]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        for k in range(len(moves)):  # the first move the engine refuses (only when one is refused)
            try:
                presentation.deal_views(rules, record, moves[:k + 1], None, len(players), audience)
            except (ValueError, KeyError, IndexError, TypeError) as refused:
                raise ReplayModelError(f"record {deal.move_seqs[k]}: the engine refuses {moves[k][1]!r}: "
                                       f"{refused}") from None
        raise ReplayModelError(f"record {deal.seq} (deal {r.game}.{r.deal}): the game cannot show it: {e}") from None
    if len(shown) != len(moves) + 1:
        raise ReplayModelError(f"the game's presentation gave {len(shown)} views for {len(moves)} moves")
    return shown


def build(replay: Replay, audience: games.Audience = games.EVERYONE) -> MatchView:
    """Rebuild every position of a replay with its game's engine and presentation."""
    header = replay.header
    try:
        found = games.get(header.game)
    except ValueError as e:
        raise ReplayModelError(str(e)) from None
    try:
        rules = found.game.rules_from_dict(dict(header.rules))
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayModelError(f"the header's rules: {e}") from None
    presentation = found.presentation
    seats = len(header.players)
    builder = _Builder(seats)
    try:
        replay.accept(builder)
    except (ValueError, IndexError) as e:
        if isinstance(e, ReplayModelError):
            raise
        raise ReplayModelError(f"record {builder.seq} ({replay.records[builder.seq].KIND}): malformed: {e!r}") \
            from None
    positions: list[Position] = []
    starts: list[int] = []
    for deal in builder.deals:
        starts.append(len(positions))
        for step, shown in enumerate(_shown(presentation, rules, deal, header.players, audience)):
            pos = Position(index=len(positions), deal_index=deal.index, step=step, shown=shown,
                           move=deal.moves[step - 1] if step else None, reshuffled=step in deal.reshuffles)
            deal.positions.append(pos)
            positions.append(pos)
    faults_at: dict[int, list[FaultRecord]] = {}
    for deal_index, after, record in builder.fault_after:
        at = starts[deal_index] + after if deal_index >= 0 else 0
        faults_at.setdefault(min(at, max(0, len(positions) - 1)), []).append(record)
    notes: dict[int, list[str]] = {}
    if presentation is not None:
        notes = {i: named(presentation.game_end_notes(fields(g)), header.players, "notes")
                 for i, g in enumerate(builder.games)}
    final = hashlib.sha256(replay.lines[-1]).hexdigest() if replay.lines else ""
    return MatchView(
        header=header, result=replay.result,
        rules_text=presentation.rules_text(rules) if presentation is not None else str(dict(header.rules)),
        deals=builder.deals, positions=positions, games=builder.games, game_notes=notes, faults=builder.faults,
        final_hash=final, records=len(replay.records), faults_at=faults_at,
        target=next((v for _f, kind, v in found.game.match_size(rules) if kind == "target"), 0),
    )


def card_texts(shown: Mapping[str, Any], seat: int) -> list[str]:
    """Every card of ``seat``'s hand in a description (empty if not shown)."""
    hand = shown["seats"][seat]["hand"] if seat < len(shown["seats"]) else None
    if not hand:
        return []
    return [c for g in hand["groups"] for c in g] + list(hand["loose"])
