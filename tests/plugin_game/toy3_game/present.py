"""High cards' presentation, pure: a seat's, a spectator's or the replay viewer's view of a
game, and that view as the arena's game-neutral description (``referee.games.GamePresentation``).

A seat sees its own hand and the cards played; a spectator only the cards played; the replay's
viewer (``EVERYONE``) every hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee import games
from toy3_game.engine import IllegalMoveError, ToyMatch, ToyRules


@dataclass(frozen=True, slots=True)
class ToyView:
    """One audience's view of a toy game at one moment."""

    hands: tuple[tuple[int, ...] | None, ...]
    """Each seat's unplayed cards, or ``None`` where the audience may not see them."""
    counts: tuple[int, ...]
    """Each seat's number of unplayed cards."""
    played: tuple[tuple[int, int], ...]
    """The cards played so far, as (seat, card), in order."""
    scores: tuple[int, ...]
    """The game's points by seat."""
    dealer: int
    """The dealer's seat."""
    to_move: int | None
    """The seat to play (``None`` once the game is over)."""
    legal: tuple[int, ...]
    """The cards the audience may play now (its own, on its turn; every one for ``EVERYONE``)."""
    over: bool
    """Whether every card has been played."""


def _seen(audience: games.Audience, seat: int) -> bool:
    return audience == games.EVERYONE or audience == seat


def _view(hands: Sequence[Sequence[int]], played: Sequence[tuple[int, int]], dealer: int, to_move: int | None,
          audience: games.Audience) -> ToyView:
    seats = len(hands)
    scores = [0] * seats
    for who, card in played:
        scores[who] += card
    over = not any(hands)
    decider = None if over else to_move
    legal = tuple(hands[decider]) if decider is not None and _seen(audience, decider) else ()
    return ToyView(
        hands=tuple(tuple(h) if _seen(audience, s) else None for s, h in enumerate(hands)),
        counts=tuple(len(h) for h in hands), played=tuple(played), scores=tuple(scores), dealer=dealer,
        to_move=decider, legal=legal, over=over,
    )


class ToyPresentation:
    """High cards, described for people."""

    def deal_views(self, rules: Any, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                   end: Mapping[str, Any] | None, seats: int, audience: games.Audience) -> list[ToyView]:
        deck = [int(c) for c in deal["deck"]]
        dealer = int(deal["dealer"])
        hands = [sorted(deck[2 * s:2 * s + 2]) for s in range(seats)]
        turn = (dealer + 1) % seats
        played: list[tuple[int, int]] = []
        out = [_view(hands, played, dealer, turn, audience)]
        for k, (seat, text) in enumerate(moves):
            card = int(text) if text.isdigit() else -1
            if seat != turn or card not in hands[seat]:
                raise ValueError(f"move {k + 1}: seat {seat} cannot play {text!r}")
            hands[seat].remove(card)
            played.append((seat, card))
            turn = (seat + 1) % seats
            out.append(_view(hands, played, dealer, turn, audience))
        return out

    def match_view(self, match: games.GameMatch, audience: games.Audience) -> ToyView:
        if not isinstance(match, ToyMatch):
            raise TypeError("not a toy match")
        return _view(match.hands, match.played, (match.game - 1) % match.seats, match.decider, audience)

    def present(self, view: ToyView) -> dict[str, Any]:
        seats = [{
            "seat": s, "dealer": s == view.dealer, "to_move": s == view.to_move, "count": view.counts[s],
            "hand": None if hand is None else {"groups": [], "loose": [str(c) for c in hand]},
            "notes": [f"{view.scores[s]} points"],
        } for s, hand in enumerate(view.hands)]
        last = None
        if view.played:
            who, card = view.played[-1]
            last = {"seat": who, "text": f"plays {card}", "cards": [str(card)]}
        return {
            "seats": seats,
            "piles": [{"name": "played", "count": len(view.played), "cards": [str(c) for _, c in view.played]}],
            "table": None, "scores": list(view.scores), "to_move": view.to_move,
            "phase": "over" if view.over else "play", "notes": [], "last": last,
            "legal": [{"id": str(c), "label": f"play {c}", "kind": "play", "cards": [str(c)]} for c in view.legal],
            "end": {"text": "every card is played", "points": list(view.scores), "seats": [
                {"seat": s, "groups": [], "loose": [], "laid_off": [],
                 "notes": [f"played {' '.join(str(c) for w, c in view.played if w == s)}"]}
                for s in range(len(view.hands))]} if view.over else None,
        }

    def action_from_text(self, text: str) -> int:
        if not text.isdigit():
            raise IllegalMoveError(f"not a card: {text!r}")
        return int(text)

    def rules_text(self, rules: Any) -> str:
        games_ = rules.games if isinstance(rules, ToyRules) else "?"
        return f"high cards, {games_} game{'s' if games_ != 1 else ''}"

    def game_end_notes(self, record: Mapping[str, Any]) -> list[str]:
        places = record.get("places")
        return [f"places {'–'.join(str(p) for p in places)}"] if places else []
