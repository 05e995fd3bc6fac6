"""A replay read as a match to look at, whatever its game: the game's own engine rebuilds every
position and its presentation describes it (:mod:`arena.replays.steps`); the viewers (``view``,
``html``) draw those descriptions and name no game.

An unknown game, an unreadable file or an action the engine refuses raises
:class:`ReplayModelError` (``arena audit`` explains such replays in detail).
"""

from __future__ import annotations

from pathlib import Path

from arena.replays import steps
from arena.replays.base import SUIT_SYMBOLS as SUIT_SYMBOLS
from arena.replays.base import ReplayModelError as ReplayModelError
from arena.replays.steps import MatchView as MatchView
from arena.replays.steps import Position as Position
from referee.replays import Replay, ReplayFormatError, read_replay


def build(replay: Replay) -> MatchView:
    """Rebuild every position of a replay with its game's engine and presentation."""
    return steps.build(replay)


def load(path: Path) -> MatchView:
    """Read and rebuild a replay file."""
    try:
        replay = read_replay(path)
    except OSError as e:
        raise ReplayModelError(f"{path}: {e.strerror or e}") from None
    except ReplayFormatError as e:
        raise ReplayModelError(f"{path}: {e}") from None
    return build(replay)
