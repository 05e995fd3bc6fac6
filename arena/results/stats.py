"""Ratings from game results: Elo with a 95% interval and LOS, Bradley–Terry maximum likelihood
ratings, and the SPRT. Pure functions on plain numbers, standard library only.

The scoring *unit* is what the statistics count: a single game, or — with duplicate deals — a
pair of games played on the same cards with the seats swapped, scored 1 / ½ / 0 for the bot by
the pair's combined result (2 wins, 1 win each, 0 wins). Counting pairs as units removes most of
the luck of the deal from the variance; the Elo numbers are then on the scale of "pair results".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""
ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of strength."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One scoring unit between bots ``a`` and ``b``: ``score`` is ``a``'s (1, 0.5 or 0)."""

    a: str
    b: str
    score: float


@dataclass(frozen=True, slots=True)
class GameFacts:
    """What the statistics need of one finished game."""

    players: tuple[str, ...]
    """The bots by seat."""
    winner: int | None
    """The winning seat; ``None``: no result (aborted) — the game is not rated."""
    pair_key: str
    """Games with the same key form a duplicate pair (``""``: not paired)."""
    places: tuple[int, ...] = ()
    """The places by seat (games of more than two seats are scored by them; empty: by ``winner``)."""


def _game_units(g: GameFacts) -> list[Unit]:
    """One game alone: a unit for each two seats of different bots — of more than two seats with
    places, the better place wins (equal places draw); otherwise the winner beats each other seat
    and two seats that both lost draw."""
    n = len(g.players)

    def score(i: int, j: int) -> float:
        if n > 2 and g.places:
            return 1.0 if g.places[i] < g.places[j] else 0.0 if g.places[i] > g.places[j] else 0.5
        return 1.0 if g.winner == i else 0.0 if g.winner == j else 0.5

    return [
        Unit(g.players[i], g.players[j], score(i, j))
        for i in range(n)
        for j in range(i + 1, n)
        if g.players[i] != g.players[j]
    ]


def _rotation_units(members: Sequence[GameFacts]) -> list[Unit]:
    """A complete rotation of a table of more than two seats on one deck (as many rated games as
    seats, the same bots): one unit for each two bots, scored 1 / ½ / 0 by whether the first
    finished ahead of the second more often than behind over the rotation (every seat of the one
    against every seat of the other). An incomplete rotation counts its games alone."""
    first = sorted(members[0].players)
    if len(members) != len(first) or any(sorted(g.players) != first for g in members):
        return [u for g in members for u in _game_units(g)]
    bots = sorted(set(first))
    units = []
    for x, a in enumerate(bots):
        for b in bots[x + 1:]:
            net = 0
            for g in members:
                for i, p in enumerate(g.players):
                    for j, q in enumerate(g.players):
                        if p == a and q == b:
                            net += (g.places[i] < g.places[j]) - (g.places[i] > g.places[j])
            units.append(Unit(a, b, 1.0 if net > 0 else 0.0 if net < 0 else 0.5))
    return units


def scoring_units(games: Iterable[GameFacts], duplicate: bool) -> list[Unit]:
    """The scoring units of some games. With ``duplicate``, the two games of a complete pair
    make one unit scored by their combined result; a pair with only one rated game (an
    interrupted or aborted half) counts that game alone. Tables of more than two seats: a
    complete rotation makes a unit for each two bots (:func:`_rotation_units`)."""
    units: list[Unit] = []
    pairs: dict[str, list[GameFacts]] = defaultdict(list)
    for g in games:
        if g.winner is None and (len(g.players) <= 2 or len(set(g.places)) <= 1):
            continue
        if duplicate and g.pair_key:
            pairs[g.pair_key].append(g)
        else:
            units.extend(_game_units(g))
    for key in sorted(pairs):
        members = pairs[key]
        if len(members[0].players) > 2:
            units.extend(_rotation_units(members))
            continue
        if len(members) == 1 or set(members[1].players) != set(members[0].players):
            for g in members:
                units.extend(_game_units(g))
            continue
        a, b = members[0].players
        wins_a = sum(1 for g in members if g.winner is not None and g.players[g.winner] == a)
        units.append(
            Unit(a, b, 1.0 if 2 * wins_a > len(members) else 0.5 if 2 * wins_a == len(members) else 0.0)
        )
    return units


# ----- Elo from a score -----
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
    draws: int
    losses: int
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
    se = math.sqrt(var / n)
    low = elo_from_score(score - Z95 * se)
    high = elo_from_score(score + Z95 * se)
    return EloEstimate(wins, draws, losses, score, elo_from_score(score), low, high, los(wins, losses))


def wdl(units: Iterable[Unit], bot: str, opponent: str | None = None) -> tuple[int, int, int]:
    """Wins, draws and losses of ``bot`` (against ``opponent``, or everyone)."""
    w = d = lo = 0
    for u in units:
        if u.a == bot and (opponent is None or u.b == opponent):
            s = u.score
        elif u.b == bot and (opponent is None or u.a == opponent):
            s = 1.0 - u.score
        else:
            continue
        if s == 1.0:
            w += 1
        elif s == 0.0:
            lo += 1
        else:
            d += 1
    return w, d, lo


# ----- Bradley–Terry maximum likelihood -----
@dataclass(frozen=True, slots=True)
class Rating:
    """A maximum-likelihood rating."""

    bot: str
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


def _score_of(g: GameFacts, bot: str) -> float:
    """``bot``'s score in a rated game of two seats: 1 or 0."""
    return 1.0 if g.winner is not None and g.players[g.winner] == bot else 0.0


def sprt_counts(games: Iterable[GameFacts], a: str, b: str, duplicate: bool) -> SprtCounts:
    """The pentanomial (complete duplicate pairs) and trinomial (every other rated game) counts
    of ``a``'s results against ``b``, over the games of two seats between them. A game is rated
    as in :func:`scoring_units` (no result: left out); with ``duplicate``, the two rated games of a
    pair make one pair."""
    pairs = [0] * 5
    single = [0] * 3
    grouped: dict[str, list[GameFacts]] = defaultdict(list)
    for g in games:
        if len(g.players) != 2 or set(g.players) != {a, b}:
            continue
        if g.winner is None:  # no result: not rated
            continue
        if duplicate and g.pair_key:
            grouped[g.pair_key].append(g)
        else:
            single[round(2 * _score_of(g, a))] += 1
    for members in grouped.values():
        if len(members) == 2:
            pairs[round(2 * (_score_of(members[0], a) + _score_of(members[1], a)))] += 1
        else:
            for g in members:
                single[round(2 * _score_of(g, a))] += 1
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
