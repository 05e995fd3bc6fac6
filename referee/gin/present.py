"""Gin's presentation, pure: a seat's, a spectator's or the replay viewer's view of a deal, and
that view as the arena's game-neutral description (``referee.games.GamePresentation``; the
schema is documented there). Every renderer of the arena draws Gin from this alone.

A seat sees its own hand, the face-up discard pile, the cards taken from it, the sizes of the
stock and of the other hand; a spectator sees no hand; the replay's viewer (``EVERYONE``) sees
both. At a showdown both hands are laid down (RULES §9): every audience sees the melds, the
deadwood and the layoffs; the knocker's face-down discard only the knocker (and ``EVERYONE``);
a dead hand shows no hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.cardcore.present import T, Words, with_faces
from referee.cardcore.present import seat as _seat

from ._actions import Action, parse_action
from ._cards import Card, parse_card
from ._deal import Deal
from ._match import Match
from ._melds import arrange
from ._outcome import DealOutcome
from ._rules import RuleSet

EVERYONE = "everyone"
"""``referee.games.EVERYONE`` (a game imports nothing of the referee's plumbing)."""

_VERBS = {
    "pass": T("passes the upcard"), "take_upcard": T("takes the upcard"), "draw_stock": T("draws from the stock"),
    "draw_discard": T("takes from the discard pile"), "discard": T("discards"),
    "knock": T("knocks, discarding face down"), "big_gin": T("declares big gin"),
}
_CARD_VERBS = {
    "take_upcard": T("takes the upcard {card}"), "draw_stock": T("draws {card} from the stock"),
    "draw_discard": T("takes {card} from the discard pile"), "discard": T("discards {card}"),
    "knock": T("knocks, discarding {card} face down"),
}
"""A move's words when the audience sees its card (a template: ``{card}``)."""
_ENDS = {"knock": T("{who} knocks"), "undercut": T("{who} knocks and is undercut"), "gin": T("{who} goes gin"),
         "big_gin": T("{who} declares big gin")}
"""How a deal ended, in words (a template: ``{who}``, the knocker)."""
_LABELS = {
    "pass": T("pass the upcard"), "take_upcard": T("take the upcard"), "draw_stock": T("draw from the stock"),
    "draw_discard": T("take the discard"), "discard": T("discard"), "knock": T("knock, discarding face down"),
    "big_gin": T("declare big gin"),
}
_PILES = {"take_upcard": ("from_pile", 0), "draw_discard": ("from_pile", 0), "draw_stock": ("from_pile", 1),
          "discard": ("to_pile", 0)}
"""The pile (an index of the description's ``piles``) a kind of move takes from or puts on: a
person plays it by touching that pile."""


@dataclass(frozen=True, slots=True)
class GinView:
    """One audience's view of a Gin deal at one moment."""

    hands: tuple[tuple[Card, ...] | None, ...]
    """Each seat's hand, or ``None`` where the audience may not see it."""
    counts: tuple[int, ...]
    """Each seat's number of cards."""
    discard_pile: tuple[Card, ...]
    """The face-up discard pile, bottom first."""
    stock_size: int
    """Cards in the stock."""
    dealer: int
    """The dealer's seat."""
    to_move: int | None
    """The seat to act (``None`` once the deal is over)."""
    phase: str
    """``upcard``, ``draw``, ``discard`` or ``over``."""
    knock_limit: int | None
    """The deal's knock limit (``None``: gin only)."""
    doubled: bool
    """Oklahoma's spade upcard: the deal counts double."""
    scores: tuple[int, ...]
    """The game's points by seat before the deal (empty if the view does not know them)."""
    last: tuple[int, str, Card | None] | None
    """The move that led here: its seat, action kind and the card the audience may see."""
    legal: tuple[Action, ...]
    """The actions the audience may choose now (the decider's, if the audience sees its hand)."""
    outcome: DealOutcome | None
    """The deal's end as the audience may see it (``None``: not over)."""


def _sees(audience: int | str, seat: int) -> bool:
    return audience in (EVERYONE, seat)


def _outcome(outcome: DealOutcome | None, audience: int | str) -> DealOutcome | None:
    if outcome is None or audience == EVERYONE:
        return outcome
    if outcome.kind == "dead":
        return DealOutcome("dead", None, None, 0, False, None, None, ())
    if outcome.knocker != audience and outcome.knock_discard is not None:
        return DealOutcome(outcome.kind, outcome.knocker, outcome.winner, outcome.points, outcome.doubled,
                           outcome.showdown, None, outcome.hands)
    return outcome


def view_of(deal: Deal, audience: int | str, scores: tuple[int, ...] = ()) -> GinView:
    """``audience``'s view of a deal (a seat, ``"spectator"`` or ``EVERYONE``)."""
    last = None
    moves = [m for m in deal.history if m.action is not None]
    if moves:
        m = moves[-1]
        assert m.action is not None
        kind = m.action.kind
        public = kind in ("take_upcard", "draw_discard", "discard")
        last = (m.seat, kind, m.card if public or _sees(audience, m.seat) else None)
    decider = None if deal.is_over else deal.to_move
    legal = tuple(deal.legal_actions()) if decider is not None and _sees(audience, decider) else ()
    return GinView(
        hands=tuple(deal.hand(s) if _sees(audience, s) else None for s in range(2)),
        counts=tuple(len(deal.hand(s)) for s in range(2)), discard_pile=deal.discard_pile,
        stock_size=deal.stock_size, dealer=deal.dealer, to_move=decider, phase=deal.phase,
        knock_limit=deal.knock_limit, doubled=deal.doubled, scores=scores, last=last, legal=legal,
        outcome=_outcome(deal.outcome, audience),
    )


def move_words(kind: str, card: Card | None, say: Words) -> str:
    """A move in words (``kind``: the action's kind; ``card``: its card, where the audience sees
    it): the description's last move, and the table page's log of the others' moves."""
    if card is not None and kind in _CARD_VERBS:
        return say(_CARD_VERBS[kind], card=card)
    return _VERBS.get(kind, kind)


def _cards(cards: Sequence[Card]) -> list[str]:
    return [str(c) for c in cards]


def _hand(hand: Sequence[Card]) -> dict[str, Any]:
    a = arrange(hand)
    return {"groups": [_cards(m.cards) for m in a.melds], "loose": _cards(a.deadwood_cards)}


def _end(view: GinView, say: Words) -> dict[str, Any] | None:
    out = view.outcome
    if out is None:
        return None
    points = [0, 0]
    if out.winner is not None:
        points[out.winner] = out.points
    if out.kind == "dead":
        return {"text": T("dead hand: nobody scores, the same dealer deals again"), "points": points,
                "seats": [{"seat": s, "groups": [], "loose": _cards(h), "laid_off": [], "notes": []}
                          for s, h in enumerate(out.hands)]}
    seats: list[dict[str, Any]] = []
    deadwood: list[int] = []
    sd = out.showdown
    for seat, hand in enumerate(out.hands):
        laid: tuple[Card, ...]
        if sd is not None and seat == out.knocker:
            melds, dead, value, laid = sd.knocker_melds, sd.knocker_deadwood_cards, sd.knocker_deadwood, ()
        elif sd is not None:
            melds, dead, value, laid = sd.defender_melds, sd.defender_deadwood_cards, sd.defender_deadwood, sd.layoffs
        else:
            a = arrange(hand)
            melds, dead, value, laid = a.melds, a.deadwood_cards, a.deadwood, ()
        notes = [say("deadwood {n}", n=value)]
        deadwood.append(value)
        if seat == out.knocker and out.knock_discard is not None:
            notes.append(say("knock discard {card}", card=out.knock_discard))
        seats.append({"seat": seat, "groups": [_cards(m.cards) for m in melds], "loose": _cards(dead),
                      "laid_off": _cards(laid), "notes": notes})
    who = _seat(out.knocker)
    what = say(_ENDS[out.kind], who=who)
    score = (say("{who} scores {points} (doubled: spade upcard)", who=_seat(out.winner), points=out.points)
             if out.doubled else say("{who} scores {points}", who=_seat(out.winner), points=out.points))
    text = say("{what} · deadwood {a} {da}, {b} {db} · {score}", what=what, a=_seat(0), da=deadwood[0],
               b=_seat(1), db=deadwood[1], score=score)
    return {"text": text, "points": points, "seats": seats}


def _legal(a: Action, view: GinView, say: Words) -> dict[str, Any]:
    """One legal move as the description lists it; a knock that leaves no deadwood is named gin."""
    card = getattr(a, "card", None)
    label = _LABELS.get(a.kind, a.kind)
    hand = view.hands[view.to_move] if view.to_move is not None else None
    if a.kind == "knock" and card is not None and hand is not None \
            and arrange(tuple(c for c in hand if c != card)).deadwood == 0:
        label = T("go gin, discarding face down")
    out: dict[str, Any] = {"id": str(a), "label": say("{action} {card}", action=label, card=card) if card else label,
                           "kind": a.kind, "cards": [str(card)] if card else []}
    if a.kind in _PILES:
        key, pile = _PILES[a.kind]
        out[key] = pile
    return out


class GinPresentation:
    """Gin, described for people."""

    def deal_views(self, rules: RuleSet, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                   end: Mapping[str, Any] | None, seats: int, audience: int | str) -> list[GinView]:
        engine = Deal.from_deck(tuple(parse_card(c) for c in deal["deck"]), int(deal["dealer"]), rules,
                                key=bytes.fromhex(str(deal["key"])))
        out = [view_of(engine, audience)]
        for k, (seat, text) in enumerate(moves):
            try:
                engine.apply(parse_action(text), seat)
            except ValueError as e:  # IllegalActionError is one
                raise ValueError(f"move {k + 1} of the deal, by seat {seat}: {e}") from None
            out.append(view_of(engine, audience))
        return out

    def match_view(self, match: Any, audience: int | str) -> GinView:
        inner = getattr(match, "match", match)
        if not isinstance(inner, Match):
            raise TypeError(f"not a Gin match: {type(match).__name__}")
        return view_of(inner.deal, audience, tuple(inner.game.scores))

    def deal_end_view(self, match: Any, audience: int | str, game: int, deal: int) -> GinView | None:
        """``audience``'s view of the end of deal ``deal`` of game ``game`` while the match still
        holds that deal (the wire's ``GinMatch.ended``); ``None`` if it holds another."""
        ended = getattr(match, "ended", None)
        if ended is None or (ended[0], ended[1]) != (game, deal) or not isinstance(ended[2], Deal):
            return None
        return view_of(ended[2], audience)

    def present(self, view: GinView) -> dict[str, Any]:
        say = Words()
        seats = []
        for s, hand in enumerate(view.hands):
            seats.append({
                "seat": s, "dealer": s == view.dealer, "to_move": s == view.to_move, "count": view.counts[s],
                "hand": _hand(hand) if hand is not None else None,
                "notes": [say("deadwood {n}", n=arrange(hand).deadwood)] if hand is not None else [],
            })
        last = None
        if view.last is not None:
            who, kind, card = view.last
            last = {"seat": who, "text": move_words(kind, card, say), "cards": [str(card)] if card is not None else []}
        notes = [say("knock limit {limit}", limit=T("gin only") if view.knock_limit is None else view.knock_limit)]
        if view.doubled:
            notes.append(T("spade upcard: doubled"))
        legal = [_legal(a, view, say) for a in view.legal]
        end = _end(view, say)
        return with_faces({
            "seats": seats,
            "piles": [{"name": T("discard pile"), "count": len(view.discard_pile), "cards": _cards(view.discard_pile)},
                      {"name": T("stock"), "count": view.stock_size, "cards": None}],
            "table": None, "scores": list(view.scores), "to_move": view.to_move, "phase": view.phase,
            "notes": notes, "last": last, "legal": legal, "end": end, "texts": say.texts,
            "loose_name": T("deadwood"),
        }, say)

    def action_from_text(self, text: str) -> Action:
        return parse_action(text)

    def rules_text(self, rules: RuleSet) -> str:
        parts = [rules.name]
        if rules.knock == "limit" and rules.knock_limit != 10:
            parts.append(f"knock ≤ {rules.knock_limit}")
        parts.append(f"target {rules.target}")
        if rules.games > 1:
            parts.append(f"{rules.games} games")
        if rules.match_target:
            parts.append(f"match to {rules.match_target}")
        if rules.stock_exhausted != "void":
            parts.append(f"stock exhausted: {rules.stock_exhausted}")
        return ", ".join(parts)

    def game_end_notes(self, record: Mapping[str, Any]) -> list[str]:
        return ["shutout"] if record.get("shutout") else []


RESULT_WORDS = (
    T("cards"), T("melds"), T("laid off"), T("deadwood cards"), T("deadwood"), T("outcome"), T("knocker"),
    T("points"), T("doubled"), T("hands"), T("knock discard"), T("deal points"), T("deals won"), T("shutout"),
)
"""The fields of the game's result messages (``DealResult`` and ``GameResult``, in words: ``deadwoodCards`` is
``deadwood cards``) that a page labels in the game's words (``games.Capabilities.result_words``)."""

PRESENTATION = GinPresentation()
"""Gin's presentation, as its registration names it."""
