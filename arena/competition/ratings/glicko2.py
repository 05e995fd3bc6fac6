"""Glicko-2 (Glickman, "Example of the Glicko-2 system", 2013; what lichess shows): a rating, its
deviation (RD) and a volatility per bot, updated rating period by rating period.

Here a rating period is one scoring unit (a duplicate group, or a game alone) for the two bots it
compares — lichess likewise updates after every game. A bot's deviation does not grow between its
units (the arena has no calendar). The interval is ``r ± 1.96 RD``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.ratings.base import Z95, RatingRow, best_first
from arena.competition.ratings.units import scoring_units
from arena.competition.result import Result

GLICKO2_SCALE = 173.7178
"""Glicko points per Glicko-2 unit (``400 / ln 10``)."""
GLICKO2_TAU = 0.5
"""The system constant τ: how much the volatility may change (Glickman suggests 0.3 to 1.2)."""
GLICKO2_EPSILON = 1e-6
"""The volatility iteration's convergence tolerance."""
GLICKO2_START = (1500.0, 350.0, 0.06)
"""A new bot's rating, deviation and volatility."""


@dataclass(frozen=True, slots=True)
class Glicko:
    """One bot's Glicko-2 state, on the Glicko scale."""

    rating: float
    """The rating ``r``."""
    rd: float
    """The rating deviation ``RD``."""
    volatility: float
    """The volatility ``σ``."""


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the new volatility by the Illinois algorithm."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    fa, fb = f(big_a), f(big_b)
    while abs(big_b - big_a) > GLICKO2_EPSILON:
        big_c = big_a + (big_a - big_b) * fa / (fb - fa)
        fc = f(big_c)
        if fc * fb <= 0:
            big_a, fa = big_b, fb
        else:
            fa /= 2.0
        big_b, fb = big_c, fc
    return math.exp(big_a / 2.0)


def update(player: Glicko, games: Sequence[tuple[Glicko, float]], tau: float = GLICKO2_TAU) -> Glicko:
    """A player's state after one rating period of ``games`` (each: the opponent's state before
    the period and the player's score, 1 / ½ / 0); no games: only the deviation grows."""
    mu = (player.rating - 1500.0) / GLICKO2_SCALE
    phi = player.rd / GLICKO2_SCALE
    if not games:
        return Glicko(player.rating, math.sqrt(phi * phi + player.volatility ** 2) * GLICKO2_SCALE, player.volatility)
    inv_v = 0.0
    total = 0.0
    for opp, score in games:
        mu_j, g_j = (opp.rating - 1500.0) / GLICKO2_SCALE, _g(opp.rd / GLICKO2_SCALE)
        e = 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))
        inv_v += g_j * g_j * e * (1.0 - e)
        total += g_j * (score - e)
    v = 1.0 / inv_v
    sigma = _volatility(player.volatility, phi, v, v * total, tau)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * total
    return Glicko(1500.0 + GLICKO2_SCALE * new_mu, GLICKO2_SCALE * new_phi, sigma)


@dataclass(frozen=True, slots=True)
class Glicko2Rater:
    """Glicko-2 over the scoring units in the order played, a unit a rating period."""

    name: str = "glicko2"
    """Its name on the command line."""
    title: str = "Glicko-2"
    """What a page calls it."""

    def rate(self, results: Sequence[Result], bots: Sequence[str] = ()) -> list[RatingRow]:
        start = Glicko(*GLICKO2_START)
        state = dict.fromkeys(bots, start)
        count = dict.fromkeys(bots, 0)
        for u in scoring_units(results):
            a, b = state.get(u.a, start), state.get(u.b, start)
            state[u.a], state[u.b] = update(a, [(b, u.score)]), update(b, [(a, 1.0 - u.score)])
            count[u.a], count[u.b] = count.get(u.a, 0) + 1, count.get(u.b, 0) + 1
        return best_first([RatingRow(bot, s.rating, s.rating - Z95 * s.rd, s.rating + Z95 * s.rd, count[bot],
                                     (("rd", s.rd), ("volatility", s.volatility))) for bot, s in state.items()])
