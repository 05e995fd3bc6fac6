"""Rummy's observation encoding (2-6 seats, every variant; docs/training.md#rummy-encoding), a
function of the seat's ``ActionRequest`` alone.

Rummy's actions (melds of any cards, layoffs onto any meld) have no small fixed numbering: the
action index is the action's position in the request's legal actions (``Discrete(MAX_LEGAL)``), and
the observation dict carries ``action_features``, one row per legal action (its kind, its cards, the
meld it lays off onto), so that a policy scores actions by what they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import rummy_pb2

from .base import CARD_INDEX, Encoding, EncodingError, Floats, card_plane, relative

MAX_LEGAL = 512
"""Legal actions a request may have under this encoding (its action space's size); a request with
more is refused with :class:`EncodingError`."""
MAX_SEATS = 6
"""Seats the per-seat numbers leave room for (rummy's largest table)."""
KINDS = ("draw_stock", "take_discard", "lay_meld", "lay_off", "discard", "call_stop", "decline_stop")
"""The action kinds, in the order of ``action_features``' first columns."""
FEATURES = len(KINDS) + 52 + 1
"""An ``action_features`` row: the kind one-hot, the action's cards (52), the meld number laid off
onto (scaled: number / 20; 0 for other kinds)."""
PLANES = ("hand", "discard_pile", "discard_order", "discard_top", "table", "my_table", "must_use", "stopped")
"""The observation's 52-card planes, in order."""
PER_SEAT = ("present", "hand_size", "score", "match_points")
"""Numbers per seat, from the seat's own point of view (its own first, then the next seats; empty
places of a smaller table are 0)."""
SCALARS = ("phase_draw", "phase_play", "phase_stop", "phase_lay_back", "phase_over", "stock_size",
           "reshuffles", "i_deal", "my_turn", "deal_number", "num_seats")
"""The numbers after the per-seat ones."""


def _state(request: bot_pb2.ActionRequest) -> rummy_pb2.State:
    if request.WhichOneof("game") != "rummy":
        raise EncodingError(f"a rummy encoding reads rummy requests, not {request.WhichOneof('game')!r}")
    return request.rummy


class Default:
    """:data:`PLANES` (52 each), :data:`PER_SEAT` for :data:`MAX_SEATS` seats, :data:`SCALARS`."""

    game = "rummy"
    name = "default"
    shape = (len(PLANES) * 52 + len(PER_SEAT) * MAX_SEATS + len(SCALARS),)
    actions = MAX_LEGAL
    bounds = (-np.inf, np.inf)

    def observe(self, request: bot_pb2.ActionRequest) -> Floats:
        """The planes and numbers of the seat's state."""
        s = _state(request)
        out = np.zeros(self.shape, dtype=np.float32)
        planes = out[:len(PLANES) * 52].reshape(len(PLANES), 52)
        card_plane(s.hand, planes[0])
        pile = list(s.discard_pile)
        card_plane(pile, planes[1])
        for depth, c in enumerate(reversed(pile)):
            planes[2, CARD_INDEX[c]] = 1.0 / (1 + depth)
        card_plane(pile[-1:], planes[3])
        for meld in s.table:
            card_plane(meld.cards, planes[4])
            card_plane([p.card for p in meld.placed if p.seat == s.seat], planes[5])
        card_plane([s.must_use], planes[6])
        card_plane([s.stopped], planes[7])
        n, seat = s.num_seats, s.seat
        per = out[len(PLANES) * 52:len(PLANES) * 52 + len(PER_SEAT) * MAX_SEATS].reshape(MAX_SEATS, len(PER_SEAT))
        for k, (size, score, points) in enumerate(zip(relative(s.hand_sizes, seat, n), relative(s.scores, seat, n),
                                                      relative(s.match_points, seat, n), strict=True)):
            per[k] = (1.0, size / 20, score / 100, points / 500)
        nums = out[len(PLANES) * 52 + len(PER_SEAT) * MAX_SEATS:]
        if 1 <= s.phase <= 5:
            nums[s.phase - 1] = 1.0
        nums[5:] = (s.stock_size / 52, s.reshuffles / 5, float(s.dealer == seat), float(s.turn == seat),
                    s.deal_number / 20, n / MAX_SEATS)
        return out

    def index(self, action: common_pb2.Action, request: bot_pb2.ActionRequest) -> int:
        """The action's position among the request's legal actions."""
        if len(request.legal_actions) > MAX_LEGAL:
            raise EncodingError(f"the request has {len(request.legal_actions)} legal actions, more than "
                                f"MAX_LEGAL={MAX_LEGAL}")
        for i, legal in enumerate(request.legal_actions):
            if legal == action:
                return i
        raise EncodingError(f"not one of the request's legal actions: {action}")

    def extras(self, request: bot_pb2.ActionRequest) -> dict[str, Floats]:
        """``action_features``: one row per legal action (:data:`FEATURES`), zeros past the last."""
        rows = np.zeros((MAX_LEGAL, FEATURES), dtype=np.float32)
        for i, legal in enumerate(request.legal_actions[:MAX_LEGAL]):
            a = legal.rummy
            kind = a.WhichOneof("kind") or ""
            if kind in KINDS:
                rows[i, KINDS.index(kind)] = 1.0
            member = getattr(a, kind) if kind else None
            cards = [*getattr(member, "cards", []), getattr(member, "card", "")]
            card_plane(cards, rows[i, len(KINDS):len(KINDS) + 52])
            if kind == "lay_off":
                rows[i, -1] = (a.lay_off.meld + 1) / 20
        return {"action_features": rows}

    def extra_shapes(self) -> dict[str, tuple[int, ...]]:
        """``action_features``' shape."""
        return {"action_features": (MAX_LEGAL, FEATURES)}


def register_all(register: Callable[[str, str, Callable[[], Encoding]], Any]) -> None:
    """Register rummy's encoding."""
    register("rummy", "default", Default)
