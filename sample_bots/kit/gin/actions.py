"""Gin's actions and requests: the text form of actions and small questions about a request.

A Gin action is the envelope's ``Action`` with its ``gin`` member set (``kind``, ``card``);
a Gin request's state is ``request.gin`` (a ``gin_arena.v2.games.gin.State``). The text form
of a Gin action is one of ``pass``, ``take_upcard``, ``draw_stock``, ``draw_discard``,
``discard <card>``, ``knock <card>``, ``big_gin``.
"""

from __future__ import annotations

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2

from ..deck import DECK, parse_card

KINDS: dict[str, gin_pb2.ActionKind.ValueType] = {
    "pass": gin_pb2.ACTION_KIND_PASS,
    "take_upcard": gin_pb2.ACTION_KIND_TAKE_UPCARD,
    "draw_stock": gin_pb2.ACTION_KIND_DRAW_STOCK,
    "draw_discard": gin_pb2.ACTION_KIND_DRAW_DISCARD,
    "discard": gin_pb2.ACTION_KIND_DISCARD,
    "knock": gin_pb2.ACTION_KIND_KNOCK,
    "big_gin": gin_pb2.ACTION_KIND_BIG_GIN,
}
"""Name → ActionKind value."""
KIND_NAMES: dict[int, str] = {kind: name for name, kind in KINDS.items()}
"""ActionKind value → its name in the text form."""
CARD_KINDS = ("discard", "knock")
"""The kinds that name a card."""

PASS = gin_pb2.ACTION_KIND_PASS
TAKE_UPCARD = gin_pb2.ACTION_KIND_TAKE_UPCARD
DRAW_STOCK = gin_pb2.ACTION_KIND_DRAW_STOCK
DRAW_DISCARD = gin_pb2.ACTION_KIND_DRAW_DISCARD
DISCARD = gin_pb2.ACTION_KIND_DISCARD
KNOCK = gin_pb2.ACTION_KIND_KNOCK
BIG_GIN = gin_pb2.ACTION_KIND_BIG_GIN

def action_text(action: common_pb2.Action) -> str:
    """The text form of a Gin action: ``"draw_stock"``, ``"discard Ts"``, …"""
    gin = action.gin
    name = KIND_NAMES.get(gin.kind, f"kind{int(gin.kind)}")
    return f"{name} {gin.card}" if gin.card else name


def parse_action(text: str) -> common_pb2.Action:
    """Parse the text form of an action. Raises ``ValueError`` naming what is wrong."""
    parts = text.split()
    if not parts:
        raise ValueError("empty action")
    name = parts[0].lower()
    if name not in KINDS:
        raise ValueError(f"unknown action {parts[0]!r}; expected one of {', '.join(KINDS)}")
    if name in CARD_KINDS:
        if len(parts) != 2:
            raise ValueError(f"{name!r} needs exactly one card, e.g. '{name} Ts'; got {text!r}")
        return action(KINDS[name], parse_card(parts[1]))
    if len(parts) != 1:
        raise ValueError(f"{name!r} takes no card; got {text!r}")
    return action(KINDS[name])


def legal_of_kind(
    request: bot_pb2.ActionRequest, kind: gin_pb2.ActionKind.ValueType
) -> list[common_pb2.Action]:
    """The legal actions of one kind (e.g. every legal ``KNOCK``; its card: ``a.gin.card``)."""
    return [a for a in request.legal_actions if a.gin.kind == kind]


def can(request: bot_pb2.ActionRequest, kind: gin_pb2.ActionKind.ValueType) -> bool:
    """Whether some legal action has this kind."""
    return any(a.gin.kind == kind for a in request.legal_actions)


def action(kind: gin_pb2.ActionKind.ValueType, card: str = "") -> common_pb2.Action:
    """Build a Gin Action message."""
    return common_pb2.Action(gin=gin_pb2.Action(kind=kind, card=card))


def opponent(state: gin_pb2.State) -> int:
    """The other seat (two-player Gin)."""
    return 1 - state.seat if state.num_seats <= 2 else (state.seat + 1) % state.num_seats


def known_cards_of(state: gin_pb2.State, seat: int) -> list[str]:
    """The cards ``seat`` took from the discard pile and still holds (public knowledge)."""
    for entry in state.known_cards:
        if entry.seat == seat:
            return list(entry.cards)
    return []


def unseen_cards(state: gin_pb2.State) -> set[str]:
    """Cards this seat cannot see: not in its hand, not in the discard pile, not known to be
    in another hand. They are in the stock or hidden in the opponent's hand."""
    seen = set(state.hand) | set(state.discard_pile)
    for entry in state.known_cards:
        seen.update(entry.cards)
    return set(DECK) - seen


def discards_of(request: bot_pb2.ActionRequest, seat: int) -> list[str]:
    """The cards ``seat`` discarded face up in this deal so far, oldest first (from the
    request's ``events``)."""
    return [e.gin.card for e in request.events
            if e.seat == seat and e.gin.kind == DISCARD and e.gin.card]
