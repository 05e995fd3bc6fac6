"""Rummy's presentation, pure: a seat's, a spectator's or the replay viewer's view of a deal
(2–6 seats), and that view as the arena's game-neutral description
(``referee.games.GamePresentation``; the schema is documented there).

A seat sees its own hand (arranged in its best melds and the deadwood left, for people: the
rules meld nothing by themselves), every hand's size, the discard row, the table's melds with who
laid each card, and the cards each seat took from the discards and still holds (a seat note:
everyone saw them taken, and a card leaves a hand only face up); a spectator sees no hand; the
replay's viewer (``EVERYONE``) every hand. At a deal's end the hands left are shown to everyone
(they are scored, R11) in the description's ``end``: each arranged in melds and the rest for
reading, marked ``"counted": "all"`` (every card left counts, R5), with what it pays the winner,
its layoffs, the table's melds with who laid each card and the game's totals after the deal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.cardcore import places_with_forfeits
from referee.cardcore.present import T, Words, with_faces
from referee.cardcore.present import seat as _seat

from ._actions import Action, DrawStock, LayMeld, LayOff, TakeDiscard, parse_action
from ._cards import Card, parse_card
from ._deal import Deal, Move, Reshuffle
from ._match import places
from ._melds import TableMeld, arrange
from ._outcome import RummyOutcome
from ._rules import RummyRules

EVERYONE = "everyone"
"""``referee.games.EVERYONE`` (a game imports nothing of the referee's plumbing)."""

_LABELS = {"draw_stock": T("draw from the stock"), "take_discard": T("take from the discards"),
           "meld": T("lay the meld"), "lay_off": T("lay off"), "discard": T("discard"), "call_stop": T("call stop"),
           "decline_stop": T("let it go")}
_ENDS = {"low": T("low"), "high": T("high"), "set": T("set")}
"""A lay-off's end of a run, in words (``LayOff.end``)."""


@dataclass(frozen=True, slots=True)
class RummyView:
    """One audience's view of a rummy deal at one moment."""

    hands: tuple[tuple[Card, ...] | None, ...]
    """Each seat's hand (index order), or ``None`` where the audience may not see it."""
    counts: tuple[int, ...]
    """Each seat's number of cards."""
    discard_pile: tuple[Card, ...]
    """The face-up discard row, bottom first."""
    stock_size: int
    """Cards in the stock."""
    table: tuple[TableMeld, ...]
    """The melds on the table in the order laid, with owners and layoffs."""
    dealer: int
    """The dealer's seat."""
    to_move: int | None
    """The seat to decide (``None`` once over)."""
    phase: str
    """``draw``, ``play``, ``stop``, ``lay_back`` or ``over``."""
    must_use: Card | None
    """A taken discard that the next play must use."""
    stopped: Card | None
    """The discard a stop question is about, or the stopped card to lay back."""
    last: tuple[int, Action, tuple[Card, ...]] | None
    """The move that led here: its seat, action and the cards it moved that the audience may see."""
    reshuffled: bool
    """The discard pile was shuffled into a new stock right after that move."""
    legal: tuple[Action, ...]
    """The actions the audience may choose now (the decider's, if the audience sees its hand)."""
    outcome: RummyOutcome | None
    """The deal's end (``None``: not over)."""
    taken: tuple[tuple[Card, ...], ...] = ()
    """By seat: the cards it took from the discards and still holds (public: seen taken)."""
    ace_high: bool = False
    """Whether a run may end with the ace above the king (how the hands are arranged)."""
    face_values: str = "ten"
    """The rule set's card values (``ten`` or ``rank``: how deadwood is counted)."""
    scores: tuple[int, ...] = ()
    """The game's totals by seat (after the deal, in a deal's end view; empty where unknown)."""
    table_scoring: bool = False
    """Whether the cards each seat put on the table score for it (R9's ``scoring = table``)."""


def _sees(audience: int | str, seat: int) -> bool:
    return audience in (EVERYONE, seat)


def moved_cards(action: Action, taken: tuple[Card, ...]) -> tuple[Card, ...]:
    """The cards a move moved (``taken``: what a draw or a take of the discards brought in)."""
    if isinstance(action, (DrawStock, TakeDiscard)):
        return taken
    if isinstance(action, LayMeld):
        return action.cards
    card = getattr(action, "card", None)
    return (card,) if isinstance(card, Card) else ()


def view_of(deal: Deal, audience: int | str, last: tuple[int, Action, tuple[Card, ...]] | None = None,
            reshuffled: bool = False, scores: tuple[int, ...] = ()) -> RummyView:
    """``audience``'s view of a deal (a seat, ``"spectator"`` or ``EVERYONE``); ``last`` is the
    move that led here with every card it moved (hidden here from who may not see it)."""
    if last is not None and isinstance(last[1], DrawStock) and not _sees(audience, last[0]):
        last = (last[0], last[1], ())
    decider = deal.to_move
    legal = tuple(deal.legal_actions()) if decider is not None and _sees(audience, decider) else ()
    took: list[set[Card]] = [set() for _ in range(deal.seats)]
    for step, moved in zip(deal.steps, deal.step_cards, strict=True):
        if isinstance(step, Move) and isinstance(step.action, TakeDiscard):
            took[step.seat] |= set(moved)
    return RummyView(
        hands=tuple(deal.hand(s) if _sees(audience, s) else None for s in range(deal.seats)),
        counts=deal.hand_sizes(), discard_pile=tuple(deal.pile), stock_size=len(deal.stock), table=tuple(deal.table),
        dealer=deal.dealer, to_move=decider, phase=deal.phase, must_use=deal.pending, stopped=deal.stopped,
        last=last, reshuffled=reshuffled, legal=legal, outcome=deal.outcome,
        taken=tuple(tuple(c for c in deal.hand(s) if c in took[s]) for s in range(deal.seats)),
        ace_high=deal.rules.ace == "low_or_high", face_values=deal.rules.face_values, scores=scores,
        table_scoring=deal.rules.scoring == "table",
    )


def _cards(cards: Sequence[Card]) -> list[str]:
    return [str(c) for c in cards]


def move_words(action: Action, cards: tuple[Card, ...], say: Words) -> str:
    """A move in words (``cards``: every card it moved that the audience sees): the description's
    last move, a winner's way out, and the table page's log of the others' moves."""
    shown = " ".join(str(c) for c in cards)
    if isinstance(action, DrawStock):
        return say("draws {cards} from the stock", cards=shown) if shown else T("draws from the stock")
    if isinstance(action, TakeDiscard):
        return say("takes {cards} from the discards", cards=shown)
    if isinstance(action, LayMeld):
        return say("lays the meld {cards}", cards=shown)
    if isinstance(action, LayOff):
        return say("lays off {cards} on meld #{meld} ({end})", cards=shown, meld=action.meld + 1,
                   end=_ENDS.get(action.end, action.end))
    if action.kind == "discard":
        return say("discards {cards}", cards=shown)
    return {"call_stop": T("calls stop"), "decline_stop": T("declines to call stop")}.get(action.kind, str(action))


def paid(out: RummyOutcome, table_scoring: bool) -> tuple[int, ...]:
    """What each seat's hand pays the deal's winner (R5, R6, R9.4): the value of its cards left
    (doubled when the winner went out rummy; under R6's lowest hand with hand scoring, the
    difference to the winner's); 0 for the winner and in a void deal. They sum to the winner's
    points less its own table cards."""
    if out.winner is None:
        return tuple(0 for _ in out.hands)
    low = out.hand_values[out.winner]
    return tuple(0 if s == out.winner else v * (2 if out.rummy else 1) if out.reason == "out"
                 else v if table_scoring else v - low for s, v in enumerate(out.hand_values))


def _end(view: RummyView, say: Words) -> dict[str, Any]:
    """The deal's end: every hand left (arranged; every card left counts), the table's melds with
    who laid each card, each seat's layoffs, what it pays or scores, and the game's totals."""
    out = view.outcome
    assert out is not None
    pays = paid(out, view.table_scoring)
    went_out = None
    if out.reason == "out" and view.last is not None and view.last[0] == out.winner:
        went_out = move_words(view.last[1], view.last[2], say)
    seats: list[dict[str, Any]] = []
    for s, hand in enumerate(out.hands):
        a = arrange(hand, view.ace_high, view.face_values)
        notes = [say("points in hand {n}", n=out.hand_values[s])]
        if s == out.winner:
            how = (T("goes out rummy (paid double)") if out.rummy else T("goes out")) if out.reason == "out" \
                else T("the lowest hand")
            notes.append(say("{how}: {move}", how=how, move=went_out) if went_out else how)
        elif pays[s]:
            notes.append(say("pays {who} {n}", who=_seat(out.winner), n=pays[s]))
        if view.table_scoring:
            notes.append(say("table cards {n}", n=out.table_points[s]))
        notes.append(say("deal points {n}", n=out.points[s]))
        laid = [p.card for m in view.table for p in m.placed if p.seat == s and p.layoff]
        seats.append({"seat": s, "groups": [_cards(m) for m in a.melds], "loose": _cards(a.deadwood),
                      "laid_off": _cards(laid), "notes": notes, "counted": "all", "pays": pays[s]})
    if out.reason == "void":
        text = T("void: the stock ran out and the lowest hand was shared; nobody scores")
    else:
        won = out.points[out.winner] if out.winner is not None else 0
        who = _seat(out.winner)
        if out.reason != "out":
            text = say("{who} has the lowest hand when the stock runs out · scores {n}", who=who, n=won)
        elif out.rummy:
            text = say("{who} goes out rummy (paid double) · scores {n}", who=who, n=won)
        else:
            text = say("{who} goes out · scores {n}", who=who, n=won)
    return {"text": text, "points": list(out.points), "seats": seats, "table": [_meld(m) for m in view.table],
            "totals": list(view.scores)}


_PILES = {"draw_stock": ("from_pile", 1), "take_discard": ("from_pile", 0), "discard": ("to_pile", 0)}
"""The pile (an index of the description's ``piles``) a kind of move takes from or puts on: a
person plays it by touching that pile (a ``take_discard``: the card it takes)."""


def _legal(a: Action, view: RummyView, say: Words) -> dict[str, Any]:
    """One legal move as the description lists it (melds numbered from 1, as people count); a
    lay-off names the meld it goes on (``to_meld``: its index in the description's ``table``)."""
    cards = moved_cards(a, ())
    named = " ".join(_cards(cards))
    label = _LABELS.get(a.kind, a.kind)
    out: dict[str, Any] = {"id": str(a), "label": label, "kind": a.kind, "cards": _cards(cards)}
    if isinstance(a, LayOff):
        at = next(i for i, m in enumerate(view.table) if m.number == a.meld)
        out["label"] = say("{action} {cards} on meld #{meld} of {who} ({end})", action=label, cards=named,
                           meld=a.meld + 1, who=_seat(view.table[at].owner), end=_ENDS.get(a.end, a.end))
        out["to_meld"] = at
    elif named:
        out["label"] = say("{action} {cards}", action=label, cards=named)
    if a.kind in _PILES:
        key, pile = _PILES[a.kind]
        out[key] = pile
    return out


def _meld(meld: TableMeld) -> dict[str, Any]:
    cards = meld.cards
    by = {p.card: p.seat for p in meld.placed}
    return {"label": f"#{meld.number + 1}", "owner": meld.owner, "cards": _cards(cards),
            "placed_by": [by.get(c, meld.owner) for c in cards]}


def _latest(deal: Deal, audience: int | str, scores: tuple[int, ...] = ()) -> RummyView:
    """The view of a deal now, with the move that led here as ``deal_views`` gives it."""
    moves = [i for i, step in enumerate(deal.steps) if isinstance(step, Move)]
    if not moves:
        return view_of(deal, audience, scores=scores)
    at = moves[-1]
    step = deal.steps[at]
    assert isinstance(step, Move)
    reshuffled = any(isinstance(s, Reshuffle) for s in deal.steps[at + 1:])
    last = (step.seat, step.action, moved_cards(step.action, deal.step_cards[at]))
    return view_of(deal, audience, last, reshuffled, scores)


class RummyPresentation:
    """Rummy, described for people."""

    def deal_views(self, rules: RummyRules, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                   end: Mapping[str, Any] | None, seats: int, audience: int | str) -> list[RummyView]:
        engine = Deal.from_deck(tuple(parse_card(c) for c in deal["deck"]), int(deal["dealer"]), rules, seats,
                                key=bytes.fromhex(str(deal["key"])))
        out = [view_of(engine, audience)]
        for k, (seat, text) in enumerate(moves):
            before = len(engine.steps)
            try:
                action = parse_action(text)
                engine.apply(action, seat)
            except ValueError as e:  # IllegalActionError is one
                raise ValueError(f"move {k + 1} of the deal, by seat {seat}: {e}") from None
            moved = moved_cards(action, engine.step_cards[before])
            reshuffled = any(isinstance(s, Reshuffle) for s in engine.steps[before + 1:])
            after = tuple(int(v) for v in end.get("scores", ())) if end is not None and engine.is_over else ()
            out.append(view_of(engine, audience, (seat, action, moved), reshuffled, after))
        return out

    def match_view(self, match: Any, audience: int | str) -> RummyView:
        inner = getattr(match, "match", match)
        deal = getattr(inner, "deal", None)
        if not isinstance(deal, Deal):
            raise TypeError(f"not a rummy match: {type(match).__name__}")
        ended = getattr(match, "ended", None)  # a finished match's last deal: with the totals after it
        return _latest(deal, audience, tuple(ended[3]) if ended is not None and ended[2] is deal else ())

    def deal_end_view(self, match: Any, audience: int | str, game: int, deal: int) -> RummyView | None:
        """``audience``'s view of the end of deal ``deal`` of game ``game``, with the game's totals
        after it, while the match still holds that deal (the wire's ``RummyMatch.ended``: the
        match has dealt the next one by then); ``None`` if it holds another."""
        ended = getattr(match, "ended", None)
        if ended is None or (ended[0], ended[1]) != (game, deal) or not isinstance(ended[2], Deal):
            return None
        return _latest(ended[2], audience, tuple(ended[3]))

    def present(self, view: RummyView) -> dict[str, Any]:
        say = Words()
        seats: list[dict[str, Any]] = []
        for s, hand in enumerate(view.hands):
            shown, notes = None, []
            if hand is not None and view.outcome is None:
                arranged = arrange(hand, view.ace_high, view.face_values)
                shown = {"groups": [_cards(m) for m in arranged.melds], "loose": _cards(arranged.deadwood)}
                notes.append(say("deadwood {n}", n=arranged.value))
            elif hand is not None:
                shown = {"groups": [], "loose": _cards(hand)}
            if s < len(view.taken) and view.taken[s]:
                notes.append(say("took {cards} from the discards", cards=" ".join(_cards(view.taken[s]))))
            seats.append({"seat": s, "dealer": s == view.dealer, "to_move": s == view.to_move,
                          "count": view.counts[s], "hand": shown, "notes": notes})
        notes = []
        if view.must_use is not None:
            notes.append(say("the taken {card} must be used first", card=view.must_use))
        if view.stopped is not None:
            notes.append(say("stop: {card}", card=view.stopped))
        last = None
        if view.last is not None:
            seat, action, cards = view.last
            last = {"seat": seat, "text": move_words(action, cards, say), "cards": _cards(cards)}
        legal = [_legal(a, view, say) for a in view.legal]
        end = _end(view, say) if view.outcome is not None else None
        return with_faces({
            "seats": seats,
            "piles": [{"name": T("discard pile"), "count": len(view.discard_pile), "cards": _cards(view.discard_pile)},
                      {"name": T("stock"), "count": view.stock_size, "cards": None}],
            "table": [_meld(m) for m in view.table], "scores": list(view.scores), "to_move": view.to_move,
            "phase": view.phase, "notes": notes, "last": last, "legal": legal, "end": end, "texts": say.texts,
            "loose_name": T("deadwood"),
        }, say)

    def action_from_text(self, text: str) -> Action:
        return parse_action(text)

    def rules_text(self, rules: RummyRules) -> str:
        return ", ".join([rules.name, f"target {rules.target}", *([f"{rules.games} games"] if rules.games > 1 else [])])

    def game_end_notes(self, record: Mapping[str, Any]) -> list[str]:
        totals = tuple(int(t) for t in record.get("totals", ()))
        forfeited = tuple(record.get("forfeited") or ())
        ranks = places_with_forfeits(places(totals), forfeited)
        notes = ["places " + ", ".join(f"{{{s}}} {p}" for s, p in enumerate(ranks))] if totals else []
        if forfeited:
            notes.append("forfeited by " + ", ".join(f"{{{s}}}" for s in forfeited))
        elif record.get("finished") is False:
            notes.append("deal limit reached")
        return notes


RESULT_WORDS = (
    T("cards"), T("points"), T("hands"), T("reason"), T("rummy doubled"), T("hand values"), T("table points"),
    T("table"), T("deals"),
)
"""The fields of the game's result messages (``DealResult`` and ``GameResult``, in words: ``deadwoodCards`` is
``deadwood cards``) that a page labels in the game's words (``games.Capabilities.result_words``)."""

PRESENTATION = RummyPresentation()
"""Rummy's presentation, as its registration names it."""
