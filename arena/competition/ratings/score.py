"""A bot's score over scoring units on the Elo scale: the Elo difference that makes it the expected
score, its 95% interval (the normal approximation of the mean score: cutechess-cli's and
bayeselo's "elo") and the likelihood of superiority (LOS). The standings' statistics, the SPRT's
expected scores and the Elo rater all read it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena.competition.ratings.base import Z95


def elo_from_score(score: float) -> float:
    """The Elo difference that makes ``score`` (0..1) the expected score: ``-400 log10(1/s - 1)``;
    ±inf at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def expected_score(elo_diff: float) -> float:
    """The expected score at an Elo difference: ``1 / (1 + 10^(-d/400))``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo_diff / 400.0))


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """An Elo difference estimated from W/D/L counts of scoring units."""

    wins: int
    """Units won."""
    draws: int
    """Units drawn."""
    losses: int
    """Units lost."""
    score: float
    """Mean score per unit (0.5 when there are none)."""
    elo: float
    """Elo difference (±inf for a perfect score)."""
    low: float
    """Lower end of the 95% interval."""
    high: float
    """Upper end of the 95% interval."""
    los: float
    """Likelihood of superiority: P(the true difference > 0), from wins and losses."""

    @property
    def n(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def margin(self) -> float:
        """Half the width of the 95% interval (the ``±``)."""
        if math.isinf(self.low) or math.isinf(self.high):
            return math.inf
        return (self.high - self.low) / 2.0


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority from wins and losses (draws carry no information):
    ``½ (1 + erf((W - L) / sqrt(2 (W + L))))``; 0.5 without decisive results."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def elo_estimate(wins: int, draws: int, losses: int) -> EloEstimate:
    """Elo difference with a 95% interval (normal approximation of the mean score, the method
    of cutechess-cli and bayeselo's "elo" command) and LOS."""
    n = wins + draws + losses
    if n == 0:
        return EloEstimate(0, 0, 0, 0.5, 0.0, -math.inf, math.inf, 0.5)
    score = (wins + 0.5 * draws) / n
    var = (wins * (1.0 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
    if var == 0.0:  # every unit the same outcome: the normal approximation has no width
        low, high = wilson(score, n)
    else:
        se = math.sqrt(var / n)
        low, high = score - Z95 * se, score + Z95 * se
    return EloEstimate(wins, draws, losses, score, elo_from_score(score), elo_from_score(low), elo_from_score(high),
                       los(wins, losses))


def wilson(score: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a mean score over ``n`` units: what the interval is when
    every unit had the same outcome (a perfect score over ``n`` units is at least
    ``n / (n + 1.96²)``: 40 of 40 is above +405 Elo, not a point at +inf)."""
    z2 = Z95 * Z95
    centre = (score + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(score * (1 - score) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # (an end the score is at stays exactly there: no rounding past it)
    return (0.0 if score <= 0.0 else centre - half), (1.0 if score >= 1.0 else centre + half)
