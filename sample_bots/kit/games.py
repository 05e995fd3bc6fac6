"""The games whose actions the kit reads and writes as text, found by name.

The session, the stdio bridge and :mod:`.actions` go through this registry and name no game.
Each game's package registers a :class:`GameKit` when it is imported (:mod:`.gin`,
:mod:`.rummy`; the kit's ``__init__`` imports both); a third party's package may register its
own the same way. A game without a kit still plays: its bots return Action messages, and logs
show the messages' text format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import text_format

from gin_arena.v2 import bot_pb2, common_pb2

Action = common_pb2.Action
"""The envelope's action message: one game's action in its ``oneof game``."""
Decision = Action | str
"""What a bot's ``decide`` may return: an Action message or its text form."""


@dataclass(frozen=True)
class GameKit:
    """How one game's actions read as text."""

    name: str
    """The game's name, as in ``Hello.games`` and ``MatchStarted.game``."""
    action_text: Callable[[Action], str]
    """The text form of one of the game's actions (``"discard Ts"``)."""
    parse_action: Callable[[str], Action]
    """The action of a text; raises ``ValueError`` naming what is wrong."""
    any_type: str = ""
    """A plugin game, whose actions travel as ``google.protobuf.Any`` (``oneof game``'s
    ``other``): the full name of its action message; empty for a game with its own member of
    the ``oneof`` (named as the game)."""


_KITS: dict[str, GameKit] = {}


def register(kit: GameKit) -> GameKit:
    """Make ``kit`` the one for its game (a second registration of the same name replaces the
    first); returns it."""
    _KITS[kit.name] = kit
    if kit.any_type:
        _KITS[kit.any_type] = kit
    return kit


def kit_for(game: str) -> GameKit | None:
    """The registered kit of a game, if any."""
    return _KITS.get(game)


def _game_of(msg: Any) -> str:
    """Which game a message's ``oneof game`` holds: its member's name, or for a packed plugin
    message (``other``) the message's full name; ``""`` if unset."""
    member = msg.WhichOneof("game")
    if member == "other":
        return str(msg.other.TypeName())
    return member or ""


def game_of_action(action: Action) -> str:
    """The game an action message belongs to (see :class:`GameKit` for a plugin's)."""
    return _game_of(action)


def game_of_request(request: bot_pb2.ActionRequest) -> str:
    """The game a request belongs to: its state's, else its legal actions'."""
    game = _game_of(request)
    if not game and request.legal_actions:
        game = _game_of(request.legal_actions[0])
    return game


def action_text(action: Action) -> str:
    """The text form of an action of any game (its kit's; without one, the message's text
    format on one line)."""
    kit = kit_for(game_of_action(action))
    if kit is None:
        return text_format.MessageToString(action, as_one_line=True)
    return kit.action_text(action)


def legal_texts(request: bot_pb2.ActionRequest) -> list[str]:
    """The request's legal actions in text form."""
    return [action_text(a) for a in request.legal_actions]


def parse_action(text: str, game: str) -> Action:
    """The action of a text in a game's text form; ``ValueError`` naming what is wrong."""
    kit = kit_for(game)
    if kit is None:
        raise ValueError(f"the kit reads no action texts of the game {game!r}: return an Action message")
    return kit.parse_action(text)


def to_action(decision: Decision, request: bot_pb2.ActionRequest | None = None) -> Action:
    """The Action message to send for what ``decide`` returned: a message as it is; a text as
    the request's own legal action of that text when there is one (so that, e.g., a meld's
    cards may come in any order), else as parsed (``ValueError`` if it does not parse). A text
    needs the request: it says which game's text it is."""
    if not isinstance(decision, str):
        return decision
    if request is None:
        raise ValueError(f"the action text {decision!r} needs its request (which game's text is it?)")
    built = parse_action(decision, game_of_request(request))
    wanted = action_text(built)
    for legal in request.legal_actions:
        if action_text(legal) == wanted:
            return legal
    return built


def is_legal(request: bot_pb2.ActionRequest, action: Action) -> bool:
    """Whether the action is one of the request's legal actions (compared as texts: a meld's
    cards in any order are the same meld)."""
    if any(action == legal for legal in request.legal_actions):
        return True
    return action_text(action) in legal_texts(request)
