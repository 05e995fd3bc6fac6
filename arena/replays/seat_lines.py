"""``arena replay REPLAY --seat N``: one line per message a seat was sent, for any game.

In protocol v2 a message's envelope is game-neutral and its game's content sits in one
``oneof game`` member: the line gives the envelope's key fields in words and the game's member
in the game's words (its wire's optional ``describe``) or else in protobuf's one-line text format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.protobuf import text_format
from google.protobuf.message import Message

from arena.replays.base import Style
from gin_arena.v2 import bot_pb2, common_pb2
from referee import games

Describe = Callable[[Message], str]
"""A message's game content in words."""


def _pair(values: Sequence[int]) -> str:
    return "–".join(str(v) for v in values)


def _plain(content: Message) -> str:
    return text_format.MessageToString(content, as_one_line=True).strip()


def describer(game: str, style: Style) -> Describe:
    """How a game's content is written: its declared ``describe`` (``referee.games.Capabilities``;
    cards in ``style``), or protobuf's text format for a game without one (or one not installed)."""
    try:
        describe = games.get(game).capabilities.describe
    except ValueError:
        return _plain
    if describe is None:
        return _plain
    return lambda content: str(describe(content, style.card))


def game_text(msg: Message, describe: Describe) -> str:
    """The message's game content (its ``oneof game`` member) in one line, or ``""``."""
    member = msg.WhichOneof("game")
    if member is None:
        return ""
    return describe(getattr(msg, member))  # a plugin's content too: its packed ``other``


def message_line(i: int, msg: bot_pb2.RefereeMessage, style: Style | None = None, game: str = "") -> str:
    """One message to a seat of a match of ``game``, in one line: the envelope's key fields and
    the game's content in its words."""
    describe = describer(game, style or Style()) if game else _plain

    def _with_game(text: str, part: Message) -> str:
        words = game_text(part, describe)
        return f"{text} · {words}" if words else text

    def _action(action: common_pb2.Action) -> str:
        return game_text(action, describe) or "(empty)"

    kind = msg.WhichOneof("kind")
    head = f"#{i:<4} {kind}"
    if kind == "match_started":
        m = msg.match_started
        return _with_game(f"{head}: match {m.match_id} · game {m.game_name} · you are seat {m.seat} · players "
                          f"{', '.join(m.player_names)} · {m.time_control.text} · commitment "
                          f"{m.seed_commitment.hex()}", m)
    if kind == "deal_started":
        d = msg.deal_started
        return _with_game(f"{head}: game {d.game_number} deal {d.deal_number} · dealer {d.dealer}", d)
    if kind == "action_request":
        r = msg.action_request
        legal = ", ".join(_action(a) for a in r.legal_actions)
        return _with_game(f"{head}: id {r.request_id} · {len(r.events)} events this deal · "
                          f"{r.time_for_move_ms} ms · legal: {legal}", r)
    if kind == "event":
        e = msg.event
        words = game_text(e, describe)
        return f"{head}: seat {e.seat} " + (f"{words} · " if words else "· ") + f"{e.think_ms} ms"
    if kind == "action_rejected":
        rj = msg.action_rejected
        return f"{head}: id {rj.request_id} · {_action(rj.action)} · {rj.reason}"
    if kind == "deal_finished":
        res = msg.deal_finished.result
        return _with_game(f"{head}: game {res.game_number} deal {res.deal_number} · winner {res.winner} · scores "
                          f"{_pair(res.scores_after)}" + (" · game over" if res.game_over else ""), res)
    if kind == "game_finished":
        g = msg.game_finished.result
        return _with_game(f"{head}: game {g.game_number} · winner {g.winner} · totals {_pair(g.final_totals)}", g)
    return f"{head}: {text_format.MessageToString(msg, as_one_line=True)}"
