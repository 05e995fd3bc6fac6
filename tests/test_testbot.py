"""``arena._testbot``'s greedy mode names no game: it plays the game wire's optional ``hasty``
choice (Gin's in ``referee.gin.wire``), else the first legal action."""

from __future__ import annotations

from collections.abc import Sequence

from arena._testbot import greedy
from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2 as G


def _request(actions: Sequence[tuple[G.ActionKind.ValueType, str]], deadwood: list[str]) -> bot_pb2.ActionRequest:
    req = bot_pb2.ActionRequest(legal_actions=[common_pb2.Action(gin=G.Action(kind=k, card=c)) for k, c in actions])
    req.gin.my_deadwood_cards.extend(deadwood)
    return req


def test_gin_greedy_knocks_then_sheds_the_highest_deadwood() -> None:
    choose = greedy("gin")
    discards = [(G.ACTION_KIND_DISCARD, c) for c in ("Kh", "9c", "Qs", "2d")]
    assert choose(_request(discards, ["9c", "2d"])).gin.card == "9c"  # deadwood first, then value
    knocks = [*discards, (G.ACTION_KIND_KNOCK, "2d"), (G.ACTION_KIND_KNOCK, "9c")]
    assert choose(_request(knocks, ["9c", "2d"])).gin == G.Action(kind=G.ACTION_KIND_KNOCK, card="9c")
    draws = [(G.ACTION_KIND_DRAW_DISCARD, ""), (G.ACTION_KIND_DRAW_STOCK, "")]
    assert choose(_request(draws, [])).gin.kind == G.ACTION_KIND_DRAW_STOCK
    assert choose(_request([*knocks, (G.ACTION_KIND_BIG_GIN, "")], [])).gin.kind == G.ACTION_KIND_BIG_GIN


def test_a_game_without_a_hasty_choice_gets_its_first_legal_action() -> None:
    req = _request([(G.ACTION_KIND_DRAW_DISCARD, ""), (G.ACTION_KIND_DRAW_STOCK, "")], [])
    for game in ("rummy", "no-such-game"):
        assert greedy(game)(req) == req.legal_actions[0]
