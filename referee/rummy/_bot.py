"""The built-in substitute player: a deterministic, simple choice among the legal actions."""

from __future__ import annotations

from ._actions import Action, Discard, DrawStock, LayMeld, LayOff
from ._cards import card_value
from ._deal import Deal


def substitute_action(deal: Deal) -> Action:
    """A legal action for ``deal.to_move``: decline stops, draw from the stock, lay every meld
    and layoff it can, discard its highest card (a taken discard is always used first)."""
    legal = deal.legal_actions()
    if not legal:
        raise ValueError("the deal is over: no action to choose")
    for action in legal:
        if isinstance(action, (LayMeld, LayOff, DrawStock)):
            return action
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        return max(discards, key=lambda a: (card_value(a.card, deal.rules.face_values), a.card))
    return legal[-1]
