"""Gin's actions and requests: the text form of actions and small questions about a request.

The text form of a Gin action is one of ``pass``, ``take_upcard``, ``draw_stock``,
``draw_discard``, ``discard <card>``, ``knock <card>``, ``big_gin``.
"""

from __future__ import annotations

from gin_arena.v1 import bot_pb2, game_pb2

from ..deck import DECK, parse_card

KINDS: dict[str, game_pb2.ActionKind.ValueType] = {
    "pass": game_pb2.ACTION_KIND_PASS,
    "take_upcard": game_pb2.ACTION_KIND_TAKE_UPCARD,
    "draw_stock": game_pb2.ACTION_KIND_DRAW_STOCK,
    "draw_discard": game_pb2.ACTION_KIND_DRAW_DISCARD,
    "discard": game_pb2.ACTION_KIND_DISCARD,
    "knock": game_pb2.ACTION_KIND_KNOCK,
    "big_gin": game_pb2.ACTION_KIND_BIG_GIN,
}
"""Name → ActionKind value."""
KIND_NAMES: dict[int, str] = {kind: name for name, kind in KINDS.items()}
"""ActionKind value → its name in the text form."""
CARD_KINDS = ("discard", "knock")
"""The kinds that name a card."""

PASS = game_pb2.ACTION_KIND_PASS
TAKE_UPCARD = game_pb2.ACTION_KIND_TAKE_UPCARD
DRAW_STOCK = game_pb2.ACTION_KIND_DRAW_STOCK
DRAW_DISCARD = game_pb2.ACTION_KIND_DRAW_DISCARD
DISCARD = game_pb2.ACTION_KIND_DISCARD
KNOCK = game_pb2.ACTION_KIND_KNOCK
BIG_GIN = game_pb2.ACTION_KIND_BIG_GIN

def action_text(action: game_pb2.Action) -> str:
    """The text form of a Gin action: ``"draw_stock"``, ``"discard Ts"``, …"""
    name = KIND_NAMES.get(action.kind, f"kind{int(action.kind)}")
    return f"{name} {action.card}" if action.card else name


def parse_action(text: str) -> game_pb2.Action:
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
        return game_pb2.Action(kind=KINDS[name], card=parse_card(parts[1]))
    if len(parts) != 1:
        raise ValueError(f"{name!r} takes no card; got {text!r}")
    return game_pb2.Action(kind=KINDS[name])


def legal_of_kind(
    request: bot_pb2.ActionRequest, kind: game_pb2.ActionKind.ValueType
) -> list[game_pb2.Action]:
    """The legal actions of one kind (e.g. every legal ``KNOCK``)."""
    return [a for a in request.legal_actions if a.kind == kind]


def can(request: bot_pb2.ActionRequest, kind: game_pb2.ActionKind.ValueType) -> bool:
    """Whether some legal action has this kind."""
    return any(a.kind == kind for a in request.legal_actions)


def action(kind: game_pb2.ActionKind.ValueType, card: str = "") -> game_pb2.Action:
    """Build an Action message."""
    return game_pb2.Action(kind=kind, card=card)


def opponent(state: game_pb2.InformationState) -> int:
    """The other seat (two-player Gin)."""
    return 1 - state.seat if state.num_seats <= 2 else (state.seat + 1) % state.num_seats


def known_cards_of(state: game_pb2.InformationState, seat: int) -> list[str]:
    """The cards ``seat`` took from the discard pile and still holds (public knowledge)."""
    for entry in state.known_cards:
        if entry.seat == seat:
            return list(entry.cards)
    return []


def unseen_cards(state: game_pb2.InformationState) -> set[str]:
    """Cards this seat cannot see: not in its hand, not in the discard pile, not known to be
    in another hand. They are in the stock or hidden in the opponent's hand."""
    seen = set(state.hand) | set(state.discard_pile)
    for entry in state.known_cards:
        seen.update(entry.cards)
    return set(DECK) - seen
