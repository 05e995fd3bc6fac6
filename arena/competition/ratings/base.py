"""What a rater is: results in, one row per bot out, every row the same shape whichever rater
made it (pages, reports, the API and the web draw them without knowing the rater)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.competition.result import Result

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""


@dataclass(frozen=True, slots=True)
class RatingRow:
    """One bot's rating by one rater."""

    bot: str
    """The bot."""
    rating: float
    """Its rating on the rater's scale (±inf: a perfect or a nil score)."""
    low: float
    """The lower end of its 95% interval."""
    high: float
    """The upper end of its 95% interval."""
    count: int
    """What the rater counted for it: scoring units (Elo, Bradley–Terry, Glicko-2) or games."""
    extra: tuple[tuple[str, float], ...] = ()
    """What only this rater tells, by name (Elo: ``los``; Glicko-2: ``rd``, ``volatility``)."""

    @property
    def margin(self) -> float:
        """Half the width of the 95% interval (the ``±``)."""
        if math.isinf(self.low) or math.isinf(self.high):
            return math.inf
        return (self.high - self.low) / 2.0


class Rater(Protocol):
    """A rating method: a new one is one file with a class like this and one line in
    :data:`arena.competition.ratings.RATERS`."""

    @property
    def name(self) -> str:
        """Its name on the command line (``--rater``)."""

    @property
    def title(self) -> str:
        """What a page calls it (``Elo``, ``Glicko-2``)."""

    def rate(self, results: Sequence[Result], bots: Sequence[str] = ()) -> list[RatingRow]:
        """Every bot's row, best first (``bots`` without a rated game included, at the rater's
        prior or not at all, as the rater says); the results in the order they were played."""


def best_first(rows: list[RatingRow]) -> list[RatingRow]:
    """Rows sorted by rating (best first), then name."""
    rows.sort(key=lambda r: (-r.rating, r.bot))
    return rows
