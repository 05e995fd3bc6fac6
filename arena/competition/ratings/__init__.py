"""The raters: what results mean. A new rater is one file (a class with a ``name``, ``title``
and ``rate``: :class:`~arena.competition.ratings.base.Rater`) and one line in
:data:`RATERS`."""

from __future__ import annotations

from collections.abc import Sequence

from arena.competition.ratings.base import Rater, RatingRow
from arena.competition.ratings.bradley_terry import BradleyTerryRater
from arena.competition.ratings.elo import EloRater
from arena.competition.ratings.glicko2 import Glicko2Rater
from arena.competition.ratings.openskill import OpenSkillRater

RATERS: dict[str, Rater] = {r.name: r for r in (EloRater(), BradleyTerryRater(), OpenSkillRater(), Glicko2Rater())}
"""Every rater by its name (``--rater``)."""


def get_raters(names: Sequence[str]) -> list[Rater]:
    """The raters called ``names``, in that order (``ValueError`` naming the known ones)."""
    unknown = [n for n in names if n not in RATERS]
    if unknown:
        raise ValueError(f"rater must be one of {', '.join(RATERS)}; got {', '.join(map(repr, unknown))}")
    return [RATERS[n] for n in names]


__all__ = ["RATERS", "Rater", "RatingRow", "get_raters"]
