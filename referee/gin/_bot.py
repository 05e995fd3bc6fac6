"""The built-in bot that takes a seat under the ``substitute`` fault policy (the seed documents:
if a player leaves, the computer plays for them to the end of the game). It sees only the
seat's information state, like any bot."""

from __future__ import annotations

from ._actions import Action, BigGin, Discard, DrawDiscard, DrawStock, Knock, Pass, TakeUpcard
from ._melds import deadwood, min_deadwood_after_discard
from ._view import InformationState


def substitute_action(state: InformationState) -> Action:
    """A sound, deterministic choice: knock or big gin as soon as allowed (least deadwood),
    take a face-up card only if it lowers the deadwood, discard the card whose loss leaves the
    least deadwood (highest card on ties)."""
    legal = state.legal_actions
    if not legal:
        raise ValueError("substitute_action() needs a state with legal actions")
    hand = list(state.hand)
    for a in legal:
        if isinstance(a, BigGin):
            return a
    knocks = [a for a in legal if isinstance(a, Knock)]
    if knocks:
        return min(knocks, key=lambda k: (deadwood([c for c in hand if c != k.card]), -k.card.value))
    if state.phase in ("upcard", "draw"):
        top = state.discard_pile[-1] if state.discard_pile else None
        takes = any(isinstance(a, (TakeUpcard, DrawDiscard)) for a in legal)
        if top is not None and takes and min_deadwood_after_discard([*hand, top]) < deadwood(hand):
            return next(a for a in legal if isinstance(a, (TakeUpcard, DrawDiscard)))
        for a in legal:
            if isinstance(a, (DrawStock, Pass)):
                return a
        return legal[0]
    discards = [a for a in legal if isinstance(a, Discard)]
    return min(discards, key=lambda d: (deadwood([c for c in hand if c != d.card]), -d.card.value, d.card))
