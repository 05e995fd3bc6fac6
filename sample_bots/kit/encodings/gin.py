"""Gin's observation encodings (docs/training.md#gin-encodings): each a function of the seat's
``ActionRequest`` alone — its ``State`` (hand, discard pile, known cards, scores, ...) and the
deal's events as the seat saw them.

Actions of ``default`` and ``openspiel`` (``Discrete(109)``): 0 pass the upcard, 1 take the upcard,
2 draw from the stock, 3 draw from the discard pile, 4 + card discard, 56 + card knock (its
face-down discard), 108 big gin; a card is its index in the kit's deck (s h d c, ace to king).
``pettingzoo``'s (``Discrete(110)``, the old ``gin_rummy_v4``'s numbering): 2 draw from the stock
or pass the upcard, 3 draw from the discard pile or take the upcard, 5 big gin, 6 + card discard,
58 + card knock (a gin is a knock: 58 + card); 0, 1 (its scoring steps) and 4 (declaring a dead
hand: the engine voids a deal itself) are never legal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2

from .base import CARD_INDEX, Encoding, EncodingError, Floats, card_plane

K = gin_pb2.ActionKind
# The kinds as plain ints (protobuf's enum wrapper looks each name up on every use).
_NONE, _PASS, _TAKE, _STOCK, _DRAW_DISCARD, _DISCARD, _KNOCK, _BIG_GIN = (int(K.Value(n)) for n in (
    "ACTION_KIND_UNSPECIFIED", "ACTION_KIND_PASS", "ACTION_KIND_TAKE_UPCARD", "ACTION_KIND_DRAW_STOCK",
    "ACTION_KIND_DRAW_DISCARD", "ACTION_KIND_DISCARD", "ACTION_KIND_KNOCK", "ACTION_KIND_BIG_GIN"))
_SIMPLE = {_PASS: 0, _TAKE: 1, _STOCK: 2, _DRAW_DISCARD: 3, _BIG_GIN: 108}
_PZ_SIMPLE = {_PASS: 2, _STOCK: 2, _TAKE: 3, _DRAW_DISCARD: 3, _BIG_GIN: 5}
PLANES = (
    "hand", "discard_pile", "discard_order", "discard_top", "forbidden_discard", "first_upcard",
    "opponent_known", "opponent_refused", "opponent_discarded", "unseen",
)
"""The default encoding's 52-card planes, in order (docs/training.md#gin-encodings)."""
SCALARS = (
    "phase_upcard", "phase_draw", "phase_discard", "phase_over", "stock_size", "opponent_hand_size",
    "my_score", "opponent_score", "my_deals_won", "opponent_deals_won", "my_games_won", "opponent_games_won",
    "knock_limit", "gin_only", "spade_double", "reshuffled", "upcard_passes", "i_deal", "my_deadwood",
    "deal_number",
)
"""The default encoding's numbers after the planes, in order (each scaled to about 0-1)."""
SCORE_SCALE = 100.0
"""Scores are divided by this (a classic game's target) in the default encoding."""
STOCK_MAX = 31
"""OpenSpiel's ``kMaxStockSize``: the stock's thermometer length in the ``openspiel`` encoding."""
OPENSPIEL_MELDS = 185
"""OpenSpiel's ``kNumMeldActions``: the opponent's laid melds in the ``openspiel`` encoding (always 0
here: a knock ends the deal at once, the engine lays off, no seat decides after it)."""
OPENSPIEL_SUITS = "scdh"
"""OpenSpiel's suit order: its card index is ``suit * 13 + rank``."""
_OS_INDEX = np.array([OPENSPIEL_SUITS.index(c[1]) * 13 + (i % 13) for c, i in CARD_INDEX.items()], dtype=np.int64)


def _state(request: bot_pb2.ActionRequest) -> gin_pb2.State:
    if request.WhichOneof("game") != "gin":
        raise EncodingError(f"a gin encoding reads gin requests, not {request.WhichOneof('game')!r}")
    return request.gin


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the deal's events tell of the opponent."""

    refused: list[str]
    """Cards the opponent passed as the upcard or left on the discard pile when drawing from the stock."""
    discarded: list[str]
    """Cards the opponent discarded this deal."""


def _seen(state: gin_pb2.State, events: Sequence[common_pb2.Event]) -> _Seen:
    pile = [state.first_upcard] if state.first_upcard else []
    refused: list[str] = []
    discarded: list[str] = []
    me = state.seat
    for ev in events:
        g = ev.gin
        kind, mine = g.kind, ev.seat == me
        if kind == _NONE:
            if g.reshuffled:
                pile = pile[-1:]
            continue
        if kind == _PASS and not mine and g.card:
            refused.append(g.card)
        elif kind == _STOCK and not mine and pile:
            refused.append(pile[-1])
        elif kind in (_TAKE, _DRAW_DISCARD) and pile:
            pile.pop()
        elif kind == _DISCARD:
            pile.append(g.card)
            if not mine:
                discarded.append(g.card)
        if g.reshuffled:
            pile = pile[-1:]
    return _Seen(refused, discarded)


def _default_index(action: common_pb2.Action) -> int:
    a = action.gin
    kind = a.kind
    if kind == _DISCARD:
        return 4 + CARD_INDEX[a.card]
    if kind == _KNOCK:
        return 56 + CARD_INDEX[a.card]
    if kind not in _SIMPLE:
        raise EncodingError(f"not a gin action: {action}")
    return _SIMPLE[kind]


class _GinBase:
    game = "gin"
    actions = 109
    bounds = (-np.inf, np.inf)

    def index(self, action: common_pb2.Action, request: bot_pb2.ActionRequest) -> int:
        """The action's index (module docstring)."""
        return _default_index(action)

    def extras(self, request: bot_pb2.ActionRequest) -> dict[str, Floats]:
        """None."""
        return {}

    def extra_shapes(self) -> dict[str, tuple[int, ...]]:
        """None."""
        return {}


class Default(_GinBase):
    """The documented default: :data:`PLANES` (52 each) then :data:`SCALARS`, one float32 vector."""

    name = "default"
    shape = (len(PLANES) * 52 + len(SCALARS),)

    def observe(self, request: bot_pb2.ActionRequest) -> Floats:
        """The planes and the numbers of the seat's state and events."""
        s = _state(request)
        out = np.zeros(self.shape, dtype=np.float32)
        planes = out[:len(PLANES) * 52].reshape(len(PLANES), 52)
        me, opp = s.seat, 1 - s.seat
        card_plane(s.hand, planes[0])
        pile = list(s.discard_pile)
        card_plane(pile, planes[1])
        for depth, c in enumerate(reversed(pile)):
            planes[2, CARD_INDEX[c]] = 1.0 / (1 + depth)
        if pile:
            planes[3, CARD_INDEX[pile[-1]]] = 1.0
        card_plane([s.forbidden_discard], planes[4])
        card_plane([s.first_upcard], planes[5])
        for known in s.known_cards:
            if known.seat == opp:
                card_plane(known.cards, planes[6])
        seen = _seen(s, request.events)
        card_plane(seen.refused, planes[7])
        card_plane(seen.discarded, planes[8])
        planes[9] = 1.0 - np.clip(planes[0] + planes[1] + planes[6], 0, 1)
        nums = out[len(PLANES) * 52:]
        if 1 <= s.phase <= 4:
            nums[s.phase - 1] = 1.0
        sizes, scores = [*s.hand_sizes, 0, 0], [*s.scores, 0, 0]
        won, games = [*s.deals_won, 0, 0], [*s.match_scores, 0, 0]
        nums[4:12] = (s.stock_size / 52, sizes[opp] / 11, scores[me] / SCORE_SCALE, scores[opp] / SCORE_SCALE,
                      won[me] / 10, won[opp] / 10, games[me] / 10, games[opp] / 10)
        nums[12:20] = (max(s.knock_limit, 0) / 10, float(s.knock_limit < 0), float(s.spade_double),
                       float(s.reshuffled), s.upcard_passes / 2, float(s.dealer == me), s.my_deadwood / 100,
                       s.deal_number / 20)
        return out


class PettingZoo(_GinBase):
    """The old PettingZoo ``gin_rummy_v4``'s (5, 52) planes: the hand, the discard pile's top card,
    the cards under it, the cards the opponent is known to hold, the cards not seen."""

    name = "pettingzoo"
    shape = (5, 52)
    actions = 110
    bounds = (0.0, 1.0)

    def observe(self, request: bot_pb2.ActionRequest) -> Floats:
        """The five planes."""
        s = _state(request)
        out = np.zeros(self.shape, dtype=np.float32)
        card_plane(s.hand, out[0])
        pile = list(s.discard_pile)
        card_plane(pile[-1:], out[1])
        card_plane(pile[:-1], out[2])
        for known in s.known_cards:
            if known.seat != s.seat:
                card_plane(known.cards, out[3])
        out[4] = 1.0 - np.clip(out[0] + out[1] + out[2] + out[3], 0, 1)
        return out

    def index(self, action: common_pb2.Action, request: bot_pb2.ActionRequest) -> int:
        """``gin_rummy_v4``'s numbering (module docstring)."""
        a = action.gin
        kind = a.kind
        if kind == _DISCARD:
            return 6 + CARD_INDEX[a.card]
        if kind == _KNOCK:
            return 58 + CARD_INDEX[a.card]
        if kind not in _PZ_SIMPLE:
            raise EncodingError(f"not a gin action: {action}")
        return _PZ_SIMPLE[kind]


class OpenSpiel(_GinBase):
    """OpenSpiel ``gin_rummy``'s observation tensor (384 floats, its card order ``scdh``): the seat
    one-hot (2), the knock limit as a thermometer (10), the hand (52), the discard pile's top card —
    OpenSpiel's upcard — (52), the cards under it (52), the stock size as a thermometer (31), the
    opponent's laid melds (185, always 0 here)."""

    name = "openspiel"
    bounds = (0.0, 1.0)
    shape = (2 + 10 + 52 * 3 + STOCK_MAX + OPENSPIEL_MELDS,)

    def observe(self, request: bot_pb2.ActionRequest) -> Floats:
        """The tensor."""
        s = _state(request)
        out = np.zeros(self.shape, dtype=np.float32)
        out[s.seat] = 1.0
        out[2:2 + min(max(s.knock_limit, 0), 10)] = 1.0
        base = 12
        pile = list(s.discard_pile)
        for cards in (list(s.hand), pile[-1:], pile[:-1]):
            for c in cards:
                out[base + _OS_INDEX[CARD_INDEX[c]]] = 1.0
            base += 52
        out[base:base + min(s.stock_size, STOCK_MAX)] = 1.0
        return out


def register_all(register: Callable[[str, str, Callable[[], Encoding]], Any]) -> None:
    """Register Gin's encodings, the default first."""
    register("gin", "default", Default)
    register("gin", "pettingzoo", PettingZoo)
    register("gin", "openspiel", OpenSpiel)
