"""A replay read as a match to look at, whatever its game: one small interface, a registry keyed
by the replay header's ``game``. Each game's model (``gin_model``, ``rummy_model``) rebuilds every
position by playing the recorded actions through that game's engine; the viewers (``view``,
``html``) pick their rendering by the view's type.

An unknown game, an unreadable file or an action the engine refuses raises
:class:`ReplayModelError` (``arena audit`` explains such replays in detail).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from arena.replays import gin_model, rummy_model, steps
from arena.replays.base import SUIT_SYMBOLS as SUIT_SYMBOLS
from arena.replays.base import ReplayModelError as ReplayModelError
from arena.replays.gin_model import MatchView as MatchView
from arena.replays.gin_model import Position as Position
from arena.replays.rummy_model import RummyMatchView
from referee.replays import Replay, ReplayFormatError, read_replay

AnyView = MatchView | RummyMatchView | steps.MatchView
"""What a model builds: a game's own view (Gin's, rummy's) or any game's through its presentation."""

MODELS: dict[str, Callable[[Replay], AnyView]] = {"gin": gin_model.build, "rummy": rummy_model.build}
"""The model of each game, by the name a replay's header gives."""


def build(replay: Replay) -> AnyView:
    """Rebuild every position of a replay with its game's model."""
    model = MODELS.get(replay.header.game)
    if model is None:
        return steps.build(replay)
    return model(replay)


def load(path: Path) -> AnyView:
    """Read and rebuild a replay file."""
    try:
        replay = read_replay(path)
    except OSError as e:
        raise ReplayModelError(f"{path}: {e.strerror or e}") from None
    except ReplayFormatError as e:
        raise ReplayModelError(f"{path}: {e}") from None
    return build(replay)
