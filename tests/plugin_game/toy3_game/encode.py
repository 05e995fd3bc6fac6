"""High cards' observation encoding for the training environment (``train_env``), registered when
imported: the registration declares this module (``games.Capabilities(encodings=...)``). The
request holds the seat's legal plays, which are its hand: the observation is the hand as a
12-vector, an action's index its card."""

from __future__ import annotations

import numpy as np

from gin_arena.v2 import bot_pb2, common_pb2
from sample_bots.kit import encodings

from . import toy3_pb2

CARDS = 12
"""The deck: cards 1..12."""


def _card(action: common_pb2.Action) -> int:
    play = toy3_pb2.Play()
    action.other.Unpack(play)
    return int(play.card)


class Hand:
    """The hand (the legal plays) as 12 zeros and ones; action ``i`` plays card ``i``."""

    game = "toy3"
    name = "default"
    shape = (CARDS,)
    actions = CARDS + 1
    bounds = (0.0, 1.0)

    def observe(self, request: bot_pb2.ActionRequest) -> encodings.Floats:
        out = np.zeros(self.shape, dtype=np.float32)
        for action in request.legal_actions:
            out[_card(action) - 1] = 1.0
        return out

    def index(self, action: common_pb2.Action, request: bot_pb2.ActionRequest) -> int:
        return _card(action)

    def extras(self, request: bot_pb2.ActionRequest) -> dict[str, encodings.Floats]:
        return {}

    def extra_shapes(self) -> dict[str, tuple[int, ...]]:
        return {}


encodings.register("toy3", "default", Hand)
