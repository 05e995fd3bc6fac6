"""The formats: who plays whom, a round at a time. A new format is one file (a class with a
``name``, ``check`` and ``plan``: :class:`~arena.competition.formats.base.Format`) and one line
in :data:`FORMATS`. A format that also pairs a wave at a time for a never-ending ladder
(:class:`~arena.competition.formats.base.Continuous`) is found by :func:`get_continuous`."""

from __future__ import annotations

from arena.competition.formats.base import Continuous, Field, Format, Group, PlayedRound, Round
from arena.competition.formats.gauntlet import Gauntlet
from arena.competition.formats.knockout import Knockout
from arena.competition.formats.ladder import Ladder
from arena.competition.formats.round_robin import RoundRobin
from arena.competition.formats.swiss import Swiss

FORMATS: dict[str, Format] = {f.name: f for f in (RoundRobin(), Gauntlet(), Swiss(), Knockout(), Ladder())}
"""Every format by its name (``--format``)."""
DEFAULT_FORMAT = RoundRobin().name
"""The format of a run that names none: everyone plays everyone."""
LADDER_FORMAT = Ladder().name
"""The format the continuous ladders pair with (the hosted ``arena serve`` and the local
``arena ladder``: the same ladder)."""


def get_format(name: str) -> Format:
    """The format called ``name`` (``ValueError`` naming the known ones)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {name!r}") from None


def get_continuous(name: str = LADDER_FORMAT) -> Continuous:
    """The format called ``name`` (by default the ladder's) as a continuous one: ``ValueError`` if
    it is unknown or plans whole rounds only."""
    fmt = get_format(name)
    if not isinstance(fmt, Continuous):
        known = ", ".join(n for n, f in FORMATS.items() if isinstance(f, Continuous))
        raise ValueError(f"format {name!r} plans whole rounds, not a continuous ladder (continuous: {known})")
    return fmt


__all__ = ["DEFAULT_FORMAT", "FORMATS", "LADDER_FORMAT", "Continuous", "Field", "Format", "Group", "PlayedRound",
           "Round", "get_continuous", "get_format"]
