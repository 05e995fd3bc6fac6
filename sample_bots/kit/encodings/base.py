"""The encodings' common parts: the :class:`Encoding` protocol, the mask, card planes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from gin_arena.v2 import bot_pb2, common_pb2

from ..deck import DECK

CARD_INDEX: dict[str, int] = {c: i for i, c in enumerate(DECK)}
"""A card's index, 0-51, in the kit's deck order: suit by suit (s h d c), each from ace to king."""

Floats = npt.NDArray[np.float32]
"""An observation array."""
Mask = npt.NDArray[np.int8]
"""An action mask: 1 where the action index is legal."""


class Encoding(Protocol):
    """One way to turn a seat's ``ActionRequest`` into arrays, and its actions into indices."""

    @property
    def name(self) -> str:
        """Its name among its game's encodings (``default``, ...)."""

    @property
    def game(self) -> str:
        """The game it encodes (the registry's name)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The observation array's shape."""

    @property
    def actions(self) -> int:
        """The size of the action space (``Discrete(actions)``)."""

    @property
    def bounds(self) -> tuple[float, float]:
        """The lowest and highest value an observation array holds (``-inf``, ``inf``: unbounded)."""

    def observe(self, request: bot_pb2.ActionRequest) -> Floats:
        """The observation: a function of ``request`` alone (float32, :attr:`shape`)."""

    def index(self, action: common_pb2.Action, request: bot_pb2.ActionRequest) -> int:
        """The action index of one of ``request``'s legal actions."""

    def extras(self, request: bot_pb2.ActionRequest) -> dict[str, Floats]:
        """Further arrays of the observation dict beside ``observation`` and ``action_mask``
        (rummy's ``action_features``); empty for most encodings."""

    def extra_shapes(self) -> dict[str, tuple[int, ...]]:
        """The shapes of :meth:`extras`' arrays, by key."""


class EncodingError(ValueError):
    """A request an encoding cannot read (another game's, or beyond one of its bounds)."""


def mask(encoding: Encoding, request: bot_pb2.ActionRequest) -> tuple[Mask, list[int]]:
    """The request's action mask and the index of each of its legal actions, in the request's order
    (two legal actions with one index are an encoding's error: it could not tell them apart)."""
    out = np.zeros(encoding.actions, dtype=np.int8)
    indices = []
    for action in request.legal_actions:
        i = encoding.index(action, request)
        if out[i]:
            raise EncodingError(f"{encoding.game}/{encoding.name}: two legal actions share the index {i}")
        out[i] = 1
        indices.append(i)
    return out, indices


@dataclass(frozen=True)
class Encoded:
    """One decision as a policy sees it."""

    observation: dict[str, Any]
    """``observation`` (the encoding's array), ``action_mask`` and any :meth:`Encoding.extras`."""
    legal: list[int]
    """The action index of each of the request's legal actions, in the request's order."""


def encode(encoding: Encoding, request: bot_pb2.ActionRequest) -> Encoded:
    """The observation dict of a request and its legal actions' indices."""
    action_mask, legal = mask(encoding, request)
    obs: dict[str, Any] = {"observation": encoding.observe(request), "action_mask": action_mask}
    obs.update(encoding.extras(request))
    return Encoded(obs, legal)


def card_plane(cards: Any, out: Floats | None = None, value: float = 1.0) -> Floats:
    """A 52-vector with ``value`` at each card's index (cards as texts; ``""`` is skipped)."""
    plane = np.zeros(52, dtype=np.float32) if out is None else out
    for c in cards:
        if c:
            plane[CARD_INDEX[c]] = value
    return plane


def relative(values: Any, seat: int, seats: int) -> list[Any]:
    """Per-seat values from ``seat``'s point of view: its own first, then the next seats in order."""
    vals = list(values)
    if len(vals) < seats:
        vals += [0] * (seats - len(vals))
    return [vals[(seat + k) % seats] for k in range(seats)]
