"""Elo against the field: each bot's W/D/L over its scoring units, turned into an Elo difference
with a 95% interval and its likelihood of superiority (:mod:`arena.competition.ratings.score`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.ratings.base import RatingRow, best_first
from arena.competition.ratings.score import elo_estimate
from arena.competition.ratings.units import scoring_units, wdl
from arena.competition.result import Result


@dataclass(frozen=True, slots=True)
class EloRater:
    """Each bot's Elo against the field it met, with its interval and LOS."""

    name: str = "elo"
    """Its name on the command line."""
    title: str = "Elo"
    """What a page calls it."""

    def rate(self, results: Sequence[Result], bots: Sequence[str] = ()) -> list[RatingRow]:
        units = scoring_units(results)
        names = sorted({*bots, *(u.a for u in units), *(u.b for u in units)})
        rows = []
        for bot in names:
            w, d, lo = wdl(units, bot)
            est = elo_estimate(w, d, lo)
            rows.append(RatingRow(bot, est.elo, est.low, est.high, est.n, (("los", est.los),)))
        return best_first(rows)
