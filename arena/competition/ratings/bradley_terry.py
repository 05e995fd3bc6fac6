"""Bradley–Terry maximum-likelihood ratings of the scoring units (draws half a win each way),
centred on a mean of 0 Elo, with approximate 95% intervals from the Fisher information."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.competition.ratings.base import Z95, RatingRow
from arena.competition.ratings.units import Unit, scoring_units
from arena.competition.result import Result

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of strength."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A maximum-likelihood rating."""

    bot: str
    """The bot."""
    elo: float
    """Rating; the mean over the rated bots is 0."""
    margin: float
    """Half-width of an approximate 95% interval (from the Fisher information)."""
    units: int
    """Scoring units played."""


def mle_ratings(
    units: Sequence[Unit],
    bots: Iterable[str] = (),
    prior: float = 1.0,
    iterations: int = 10_000,
    tolerance: float = 1e-10,
) -> list[Rating]:
    """Bradley–Terry ratings (draws count as half a win each way) by the minorisation–
    maximisation iteration (Hunter 2004), centred on a mean of 0 Elo, best first.

    ``prior`` adds that many virtual draws of every bot against a virtual opponent of rating
    0, which keeps a bot that won or lost everything finite (use 0 for the pure MLE). Bots
    without any unit are left out unless ``prior`` is positive."""
    names = sorted({*bots, *(u.a for u in units), *(u.b for u in units)})
    index = {b: i for i, b in enumerate(names)}
    k = len(names)
    if k == 0:
        return []
    wins = [prior / 2.0] * k  # a virtual draw per prior unit = half a win
    games: dict[tuple[int, int], float] = defaultdict(float)
    played = [0] * k
    for u in units:
        i, j = index[u.a], index[u.b]
        wins[i] += u.score
        wins[j] += 1.0 - u.score
        games[(min(i, j), max(i, j))] += 1.0
        played[i] += 1
        played[j] += 1
    active = [i for i in range(k) if played[i] or prior > 0]
    gamma = [1.0] * k
    for _ in range(iterations):
        new = list(gamma)
        for i in active:
            denom = prior / (gamma[i] + 1.0) if prior else 0.0
            for (a, b), n in games.items():
                if a == i or b == i:
                    denom += n / (gamma[a] + gamma[b])
            if denom > 0 and wins[i] > 0:
                new[i] = wins[i] / denom
            else:
                new[i] = 1e-12
        if not prior:  # without the anchor the scale floats: normalise the geometric mean to 1
            mean = math.exp(sum(math.log(new[i]) for i in active) / len(active))
            new = [g / mean for g in new]
        change = max(abs(math.log(new[i]) - math.log(gamma[i])) for i in active)
        gamma = new
        if change < tolerance:
            break
    logs = {i: math.log(gamma[i]) for i in active}
    centre = sum(logs.values()) / len(logs)
    out = []
    for i in active:
        info = prior * gamma[i] / (gamma[i] + 1.0) ** 2
        for (a, b), n in games.items():
            if i in (a, b):
                p = gamma[a] / (gamma[a] + gamma[b])
                info += n * p * (1.0 - p)
        margin = Z95 * ELO_PER_NAT / math.sqrt(info) if info > 0 else math.inf
        out.append(Rating(names[i], (logs[i] - centre) * ELO_PER_NAT, margin, played[i]))
    out.sort(key=lambda r: (-r.elo, r.bot))
    return out


def los_between(a: Rating, b: Rating) -> float:
    """P(``a`` is stronger than ``b``) under the normal approximation of both ratings."""
    sa, sb = a.margin / Z95, b.margin / Z95
    sd = math.sqrt(sa * sa + sb * sb)
    if sd == 0 or math.isinf(sd):
        return 0.5
    return 0.5 * (1.0 + math.erf((a.elo - b.elo) / (sd * math.sqrt(2.0))))


@dataclass(frozen=True, slots=True)
class BradleyTerryRater:
    """Maximum-likelihood ratings of every bot at once (one virtual draw against 0 keeps a perfect
    score finite)."""

    name: str = "bt"
    """Its name on the command line."""
    title: str = "Bradley–Terry"
    """What a page calls it."""

    def rate(self, results: Sequence[Result], bots: Sequence[str] = ()) -> list[RatingRow]:
        return [RatingRow(r.bot, r.elo, r.elo - r.margin, r.elo + r.margin, r.units)
                for r in mle_ratings(scoring_units(results), bots)]
