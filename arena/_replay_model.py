"""A replay read as a match to look at: every position, deal by deal and move by move, rebuilt by
playing the recorded actions through the rules engine (``Deal.from_deck`` + ``parse_action``).

This is what ``arena replay`` (terminal) and ``arena replay --html`` show. It trusts the replay
only as far as the engine accepts it: an action the engine refuses raises
:class:`ReplayModelError` (``arena audit`` explains such replays in detail).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.gin import Arrangement, Card, Deal, IllegalActionError, Meld, RuleSet, arrange, parse_action, parse_card


class ReplayModelError(ValueError):
    """A replay that cannot be shown (unreadable, or an action the engine refuses)."""


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
    totals_before: tuple[int, ...]
    positions: list[Position] = field(default_factory=list)
    end: DealEnd | None = None
    faults: list[dict[str, Any]] = field(default_factory=list)
    game_end: dict[str, Any] | None = None
    """The ``game_end`` record if the game ended with (or right after) this deal."""


@dataclass(slots=True)
class MatchView:
    """A whole replay, ready to show."""

    header: dict[str, Any]
    result: dict[str, Any]
    rules: RuleSet
    deals: list[DealView]
    positions: list[Position]
    games: list[dict[str, Any]]
    faults: list[dict[str, Any]]
    final_hash: str
    records: int
    faults_at: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    """Fault records by the index of the position they came after."""

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(str(p) for p in self.header.get("players", ("seat 0", "seat 1")))

    @property
    def match_id(self) -> str:
        return str(self.header.get("match_id", ""))

    def deal_of(self, position: Position) -> DealView:
        return self.deals[position.deal_index]

    def outcome_text(self) -> str:
        """The match result in words."""
        r = self.result
        names = self.players
        winner = r.get("winner")
        term = r.get("termination", "?")
        who = f"{names[winner]} wins" if isinstance(winner, int) and 0 <= winner < len(names) else "no winner"
        games = r.get("games_won") or []
        totals = r.get("totals") or []
        extra = ""
        if len(games) == 2 and len(totals) == 2:
            extra = f" · games {games[0]}–{games[1]} · points {totals[0]}–{totals[1]}"
        return f"{who} ({term}){extra}"


def read_lines(path: Path) -> list[bytes]:
    """The lines of a replay file (without newlines; a final newline is optional)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def load(path: Path) -> MatchView:
    """Read and rebuild a replay file."""
    try:
        lines = read_lines(path)
    except OSError as e:
        raise ReplayModelError(f"{path}: {e.strerror or e}") from None
    try:
        records = [json.loads(line) for line in lines]
    except ValueError as e:
        raise ReplayModelError(f"{path}: not JSON Lines: {e}") from None
    final = hashlib.sha256(lines[-1]).hexdigest() if lines else ""
    return build(records, final_hash=final)


def _cards(texts: Sequence[Any], what: str) -> tuple[Card, ...]:
    try:
        return tuple(parse_card(str(t)) for t in texts)
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


def build(records: Sequence[dict[str, Any]], *, final_hash: str = "") -> MatchView:
    """Rebuild every position of a replay's records with the engine."""
    if not records or records[0].get("type") != "header":
        raise ReplayModelError("a replay starts with a header record")
    header = records[0]
    result = records[-1] if records[-1].get("type") == "result" else {}
    try:
        rules = RuleSet.from_dict(header["rules"])
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayModelError(f"the header's rules: {e}") from None
    deals: list[DealView] = []
    positions: list[Position] = []
    games: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    faults_at: dict[int, list[dict[str, Any]]] = {}
    engine: Deal | None = None
    scores: tuple[int, ...] = (0, 0)
    games_won = [0, 0]
    totals = [0, 0]
    for rec in records[1:]:
        kind = rec.get("type")
        seq = int(rec.get("seq", -1))
        try:
            if kind == "deal":
                deck = _cards(rec["deck"], f"record {seq}: deck")
                engine = Deal.from_deck(deck, int(rec["dealer"]), rules, key=bytes.fromhex(rec["key"]))
                if int(rec["deal"]) == 1:
                    scores = (0, 0)
                dv = DealView(
                    index=len(deals), seq=seq, game=int(rec["game"]), number=int(rec["deal"]),
                    dealer=engine.dealer, deck=deck, first_upcard=engine.first_upcard,
                    knock_limit=engine.knock_limit, doubled=engine.doubled, scores_before=scores,
                    games_won_before=tuple(games_won), totals_before=tuple(totals),
                )
                deals.append(dv)
                pos = _snapshot(engine, len(positions), dv.index, None)
                dv.positions.append(pos)
                positions.append(pos)
            elif kind == "action":
                if engine is None or not deals:
                    raise ReplayModelError(f"record {seq}: an action before any deal")
                action = parse_action(rec["action"])
                engine.apply(action, int(rec["seat"]))
                move = next(m for m in reversed(engine.history) if m.action is not None)
                step = Step(
                    seq=seq, seat=int(rec["seat"]), action=str(action), kind=action.kind,
                    card=str(move.card) if move.card is not None else None, think_us=int(rec.get("think_us", 0)),
                    substitute=bool(rec.get("substitute", False)),
                    clocks=tuple(int(c) for c in rec.get("clocks", ())),
                    reshuffled=engine.history[-1].seat == -1,
                )
                dv = deals[-1]
                pos = _snapshot(engine, len(positions), dv.index, step)
                dv.positions.append(pos)
                positions.append(pos)
            elif kind == "deal_end":
                if engine is None or not deals or engine.outcome is None:
                    raise ReplayModelError(f"record {seq}: a deal_end record for a deal that is not over")
                out = engine.outcome
                scores = tuple(int(s) for s in rec["scores"])
                deals[-1].end = DealEnd(
                    seq=seq, kind=out.kind, knocker=out.knocker, winner=out.winner, points=out.points,
                    doubled=out.doubled, knock_discard=out.knock_discard, seats=_seat_showdowns(engine),
                    scores=scores,
                )
            elif kind == "game_end":
                games.append(rec)
                winner = rec.get("winner")
                if isinstance(winner, int) and 0 <= winner < 2:
                    games_won[winner] += 1
                for s, t in enumerate(rec.get("totals", [])[:2]):
                    totals[s] += int(t)
                if deals:
                    deals[-1].game_end = rec
            elif kind == "fault":
                faults.append(rec)
                if deals:
                    deals[-1].faults.append(rec)
                faults_at.setdefault(max(0, len(positions) - 1), []).append(rec)
        except IllegalActionError as e:
            raise ReplayModelError(f"record {seq}: the engine refuses {rec.get('action')!r}: {e}") from None
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, ReplayModelError):
                raise
            raise ReplayModelError(f"record {seq} ({kind}): malformed: {e!r}") from None
    return MatchView(header=header, result=result, rules=rules, deals=deals, positions=positions, games=games,
                     faults=faults, final_hash=final_hash, records=len(records), faults_at=faults_at)


SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
"""Suit letter → symbol."""


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
