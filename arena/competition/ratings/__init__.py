"""The raters: what results mean. A new rater is one file (a class with a ``name``, ``title``
and ``rate``: :class:`~arena.competition.ratings.base.Rater`) and one line in :data:`RATERS`.

Outside this package the arena reaches the raters only through this module: the registry, the
defaults, and the two tables that are not chosen per run (the local ladder's maximum-likelihood
table and the live standings' incremental Plackett–Luce board), re-exported here."""

from __future__ import annotations

from collections.abc import Sequence

from arena.competition.ratings.base import Z95, Rater, RatingRow
from arena.competition.ratings.bradley_terry import BradleyTerryRater, Rating, los_between, mle_ratings
from arena.competition.ratings.elo import EloRater
from arena.competition.ratings.glicko2 import Glicko2Rater
from arena.competition.ratings.openskill import OpenSkillRater, SkillBoard, SkillRating, openskill_ratings

RATERS: dict[str, Rater] = {r.name: r for r in (EloRater(), BradleyTerryRater(), OpenSkillRater(), Glicko2Rater())}
"""Every rater by its name (``--rater``)."""


LIVE_RATER: Rater = RATERS[OpenSkillRater().name]
"""The rater of the live standings (``arena serve``, the web, ``/api/standings``): Plackett–Luce, kept
up to date one game at a time by :class:`SkillBoard`."""


def default_raters(seats: int) -> tuple[str, ...]:
    """The raters of a run that chose none: Elo against the field (it orders the standings, by
    score) and Bradley–Terry for two seats; Elo and Plackett–Luce for more."""
    return (EloRater().name, BradleyTerryRater().name if seats <= 2 else OpenSkillRater().name)


def get_raters(names: Sequence[str]) -> list[Rater]:
    """The raters called ``names``, in that order (``ValueError`` naming the known ones)."""
    unknown = [n for n in names if n not in RATERS]
    if unknown:
        raise ValueError(f"rater must be one of {', '.join(RATERS)}; got {', '.join(map(repr, unknown))}")
    if len(set(names)) != len(names):
        raise ValueError(f"each rater once: got {', '.join(names)}")
    return [RATERS[n] for n in names]


__all__ = ["LIVE_RATER", "RATERS", "Z95", "Rater", "Rating", "RatingRow", "SkillBoard", "SkillRating", "default_raters",
           "get_raters", "los_between", "mle_ratings", "openskill_ratings"]
