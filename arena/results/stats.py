"""The SPRT of two bots (pentanomial counts of duplicate pairs, trinomial of single games), and
how ratings are written. The ratings themselves are the raters' (:mod:`arena.competition.ratings`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.competition.ratings.score import expected_score
from arena.competition.result import Result


# ----- SPRT -----
@dataclass(frozen=True, slots=True)
class SprtSpec:
    """An SPRT's hypotheses and error rates."""

    elo0: float = 0.0
    """H0: the first bot is at most this much stronger (logistic Elo of one game)."""
    elo1: float = 10.0
    """H1: the first bot is at least this much stronger."""
    alpha: float = 0.05
    """The chance of accepting H1 when H0 is true."""
    beta: float = 0.05
    """The chance of accepting H0 when H1 is true."""

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"SPRT needs elo1 > elo0; got elo0={self.elo0:g}, elo1={self.elo1:g}")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("SPRT alpha and beta must be between 0 and 0.5")

    @classmethod
    def parse(cls, text: str) -> SprtSpec:
        """``"elo0=0,elo1=10,alpha=0.05,beta=0.05"`` (any subset, commas or spaces)."""
        values: dict[str, float] = {}
        for word in text.replace(",", " ").split():
            key, sep, value = word.partition("=")
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise ValueError(f"{word!r}: expected elo0=, elo1=, alpha= or beta=")
            try:
                values[key] = float(value)
            except ValueError:
                raise ValueError(f"{word!r}: {value!r} is not a number") from None
        return cls(**values)

    @property
    def lower(self) -> float:
        """Accept H0 when the LLR falls to this: ``ln(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 when the LLR rises to this: ``ln((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def __str__(self) -> str:
        return f"elo0={self.elo0:g},elo1={self.elo1:g},alpha={self.alpha:g},beta={self.beta:g}"


SPRT_PRIOR_UNITS = 1.0
"""The SPRT's regularising prior: this many virtual scoring units, spread evenly over the
possible outcomes (⅕ of a pair on each pair score, ⅓ of a game on each game score), mixed into
the observed counts before their mean and variance are taken. It keeps the variance of a
one-sided record (every pair won) away from 0 — fishtest mixes in 0.001 of a unit for each empty
outcome, which lets a single won pair "prove" anything — and it weighs nothing once there are a
few dozen units."""
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's score for the first bot (its two games' scores, 1 / ½ / 0 each, averaged): the
pentanomial's outcomes, in the order of :attr:`SprtCounts.pairs`."""
GAME_SCORES = (0.0, 0.5, 1.0)
"""A game's score for the first bot: the trinomial's outcomes (loss, draw, win)."""


@dataclass(frozen=True, slots=True)
class SprtCounts:
    """What the SPRT counts of the games between its two bots, for the first of them."""

    pairs: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    """Complete duplicate pairs by their score (:data:`PAIR_SCORES`: 0, ¼, ½, ¾, 1): LL, LD, LW or
    DD, DW, WW."""
    games: tuple[int, int, int] = (0, 0, 0)
    """Rated games outside a complete pair (no duplicate deals, or a pair's other game aborted
    or not yet played) by their score (:data:`GAME_SCORES`): losses, draws, wins (a game of Gin
    always has a winner; a game without one is not rated, so draws stay 0)."""

    @property
    def units(self) -> int:
        """Pairs and single games counted."""
        return sum(self.pairs) + sum(self.games)


def _game_score(g: Result, a: str, b: str) -> float:
    """``a``'s score against ``b`` in a game of them both: 1 / ½ / 0 (several seats of one bot:
    its mean score over them, to the nearest half)."""
    return round(2 * (g.score_of(a, b) or 0.0)) / 2


def sprt_counts(games: Iterable[Result], a: str, b: str) -> SprtCounts:
    """The pentanomial (complete duplicate pairs) and trinomial (every other rated game) counts
    of ``a``'s results against ``b``, over the rated games in which both sat (whatever the number
    of seats: ``a``'s place against ``b``'s). A game without a result is left out; two rated games
    of one duplicate group (one ``group`` key) make one pair, a group of any other size counts
    its games alone."""
    pairs = [0] * 5
    single = [0] * 3
    grouped: dict[str, list[Result]] = defaultdict(list)
    for g in games:
        if not {a, b} <= set(g.bots) or not g.rated:
            continue
        if g.group:
            grouped[g.group].append(g)
        else:
            single[round(2 * _game_score(g, a, b))] += 1
    for members in grouped.values():
        if len(members) == 2:
            pairs[round(2 * (_game_score(members[0], a, b) + _game_score(members[1], a, b)))] += 1
        else:
            for g in members:
                single[round(2 * _game_score(g, a, b))] += 1
    return SprtCounts((pairs[0], pairs[1], pairs[2], pairs[3], pairs[4]), (single[0], single[1], single[2]))


def outcome_llr(counts: Sequence[int], outcomes: Sequence[float], s0: float, s1: float,
                prior: float = SPRT_PRIOR_UNITS) -> float:
    """The generalised SPRT log-likelihood ratio of ``s = s1`` against ``s = s0`` (``s``: the
    expected score of a unit) for units counted by outcome, in fishtest's normal approximation
    ``N (s1 - s0) (2 m - s0 - s1) / (2 v)``: ``N`` the units observed, ``m`` and ``v`` the mean
    and variance of their scores with ``prior`` virtual units spread evenly over the outcomes
    (:data:`SPRT_PRIOR_UNITS`). 0 without units."""
    n = sum(counts)
    if n == 0:
        return 0.0
    weights = [c + prior / len(outcomes) for c in counts]
    total = sum(weights)
    mean = sum(w * x for w, x in zip(weights, outcomes, strict=True)) / total
    var = sum(w * (x - mean) ** 2 for w, x in zip(weights, outcomes, strict=True)) / total
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


def sprt_llr(counts: SprtCounts, elo0: float, elo1: float) -> float:
    """The LLR of ``elo1`` against ``elo0`` (logistic Elo of one game: ``s_i`` the expected score
    at ``elo_i``; a pair's expected score is a game's): the pentanomial LLR of the pairs plus the
    trinomial LLR of the single games — independent samples, each with its own variance."""
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return (outcome_llr(counts.pairs, PAIR_SCORES, s0, s1)
            + outcome_llr(counts.games, GAME_SCORES, s0, s1))


@dataclass(frozen=True, slots=True)
class SprtState:
    """Where an SPRT stands."""

    llr: float
    """The log-likelihood ratio so far (:func:`sprt_llr`)."""
    lower: float
    """Accept H0 at or below this."""
    upper: float
    """Accept H1 at or above this."""
    decision: str
    """``"H1"`` (elo ≥ elo1 accepted), ``"H0"`` (elo ≤ elo0 accepted) or ``""`` (go on)."""


def sprt_state(counts: SprtCounts, spec: SprtSpec) -> SprtState:
    """The LLR and the decision so far."""
    llr = sprt_llr(counts, spec.elo0, spec.elo1)
    decision = "H1" if llr >= spec.upper else "H0" if llr <= spec.lower else ""
    return SprtState(llr, spec.lower, spec.upper, decision)


def format_elo(value: float) -> str:
    """``+123``, ``-45``, ``+inf``."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return "0" if round(value) == 0 else f"{value:+.0f}"


def finite_or_none(value: float) -> float | None:
    """For JSON: a finite float rounded to 0.1, or ``None``."""
    return None if math.isinf(value) or math.isnan(value) else round(value, 1)
