"""The formats: who plays whom, a round at a time. A new format is one file (a class with a
``name``, ``check`` and ``plan``: :class:`~arena.competition.formats.base.Format`) and one line
in :data:`FORMATS`."""

from __future__ import annotations

from arena.competition.formats.base import Field, Format, Group, PlayedRound, Round
from arena.competition.formats.gauntlet import Gauntlet
from arena.competition.formats.knockout import Knockout
from arena.competition.formats.round_robin import RoundRobin
from arena.competition.formats.swiss import Swiss

FORMATS: dict[str, Format] = {f.name: f for f in (RoundRobin(), Gauntlet(), Swiss(), Knockout())}
"""Every format by its name (``--format``)."""
DEFAULT_FORMAT = RoundRobin().name
"""The format of a run that names none: everyone plays everyone."""


def get_format(name: str) -> Format:
    """The format called ``name`` (``ValueError`` naming the known ones)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {name!r}") from None


__all__ = ["DEFAULT_FORMAT", "FORMATS", "Field", "Format", "Group", "PlayedRound", "Round", "get_format"]
