"""Observations as NumPy arrays, built from what a seat is told: the training environment's encoders
(``train_env``, docs/training.md) and a bot's, the same code on both sides.

An :class:`Encoding` reads one ``ActionRequest`` — the message the referee sends a seat when it must
decide, with the seat's whole information state and the deal's events as that seat saw them — and
nothing else. The training environment builds that very message with the game's wire from its
engine; a bot built by :func:`sample_bots.kit.policy.policy_bot` gets it over gRPC; the same
encoder turns either into the same arrays, so a policy trained in process plays unchanged.

Each game's encodings are found by name (:func:`encoding`, :func:`names`): Gin's ``default``,
``pettingzoo`` (the old ``gin_rummy_v4``'s (5, 52) planes and ``Discrete(110)`` actions) and
``openspiel`` (OpenSpiel ``gin_rummy``'s observation tensor); rummy's ``default``. A plugin game
adds its own with :func:`register`. This package needs NumPy (``pip install -e '.[train]'``); the
rest of the kit does not import it.
"""

from __future__ import annotations

from collections.abc import Callable

from . import gin, rummy
from .base import CARD_INDEX as CARD_INDEX
from .base import Encoded as Encoded
from .base import Encoding as Encoding
from .base import EncodingError as EncodingError
from .base import Floats as Floats
from .base import Mask as Mask
from .base import card_plane as card_plane
from .base import encode as encode
from .base import mask as mask
from .base import relative as relative

_ENCODINGS: dict[str, dict[str, Callable[[], Encoding]]] = {}


def register(game: str, name: str, make: Callable[[], Encoding]) -> None:
    """Make ``make()`` the encoding ``name`` of ``game`` (a plugin game's; the first registered for
    a game is its default). A second registration of the same name replaces the first."""
    _ENCODINGS.setdefault(game, {})[name] = make


def names(game: str) -> list[str]:
    """The encodings of a game, its default first (empty: none)."""
    return list(_ENCODINGS.get(game, {}))


def encoding(game: str, name: str = "") -> Encoding:
    """The encoding ``name`` of ``game`` (``""``: its default); ``ValueError`` naming the known ones."""
    known = _ENCODINGS.get(game)
    if not known:
        raise EncodingError(f"the game {game!r} has no observation encoding (known games: "
                            f"{', '.join(sorted(_ENCODINGS)) or 'none'})")
    chosen = name or next(iter(known))
    if chosen not in known:
        raise EncodingError(f"the game {game!r} has no encoding {chosen!r}; known: {', '.join(known)}")
    return known[chosen]()


gin.register_all(register)
rummy.register_all(register)
