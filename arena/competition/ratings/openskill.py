"""Plackett–Luce ratings for any number of seats (the ``openskill`` library).

The games are rated one after the other, in the order played, by openskill's Plackett–Luce model
(Weng & Lin 2011: a Bayesian approximation that keeps a normal belief ``mu ± sigma`` per bot,
starting at 25 ± 25/3), each seat a team of one ranked by its place (tied places tie). A bot
holding several seats of a game (instances: ``greedy#2``) enters it once per seat with its current
belief, and takes the mean of its seats' updated beliefs. A game whose seats all share one place
(an aborted match) says nothing about the order and is not rated. The interval is
``mu ± 1.96 sigma``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from openskill.models import PlackettLuce

from arena.competition.ratings.base import Z95, RatingRow
from arena.competition.result import Result
from arena.competition.seating import base_name


class Ranked(Protocol):
    """A finished game as the board reads it: a :class:`~arena.competition.result.Result`, or any
    record with its players and places by seat."""

    @property
    def players(self) -> tuple[str, ...]: ...

    @property
    def places(self) -> tuple[int, ...]: ...


@dataclass(frozen=True, slots=True)
class SkillRating:
    """A bot's Plackett–Luce rating after every rated game."""

    bot: str
    """The bot."""
    mu: float
    """The mean of the belief about its skill."""
    sigma: float
    """The belief's standard deviation."""
    games: int
    """Rated games it played."""

    @property
    def low(self) -> float:
        """The lower end of the 95% interval."""
        return self.mu - Z95 * self.sigma

    @property
    def high(self) -> float:
        """The upper end of the 95% interval."""
        return self.mu + Z95 * self.sigma


class SkillBoard:
    """Plackett–Luce beliefs kept up to date one game at a time (what :func:`openskill_ratings`
    computes at once; a long-running server adds each game as it finishes)."""

    def __init__(self, bots: Sequence[str] = ()) -> None:
        self._model = PlackettLuce()
        self._belief: dict[str, tuple[float, float]] = {b: (self._model.mu, self._model.sigma) for b in bots}
        self._played: dict[str, int] = dict.fromkeys(bots, 0)

    def add(self, o: Ranked) -> None:
        """Rate one more game (one whose seats all share a place says nothing and is passed over)."""
        if len(set(o.places)) <= 1:
            return
        model = self._model
        seats = [base_name(p) for p in o.players]
        teams = [[model.rating(*self._belief.setdefault(b, (model.mu, model.sigma)))] for b in seats]
        after = model.rate(teams, ranks=[float(p) for p in o.places])
        new: dict[str, list[tuple[float, float]]] = {}
        for b, team in zip(seats, after, strict=True):
            new.setdefault(b, []).append((team[0].mu, team[0].sigma))
        for b, values in new.items():
            self._belief[b] = (sum(v[0] for v in values) / len(values), sum(v[1] for v in values) / len(values))
            self._played[b] = self._played.get(b, 0) + 1

    def rating(self, bot: str) -> SkillRating:
        """The bot's rating now (the prior if it played no rated game)."""
        mu, sigma = self._belief.get(bot, (self._model.mu, self._model.sigma))
        return SkillRating(bot, mu, sigma, self._played.get(bot, 0))

    def ratings(self) -> list[SkillRating]:
        """Every bot's rating, best first (by ``mu``, then name)."""
        out = [self.rating(b) for b in self._belief]
        out.sort(key=lambda r: (-r.mu, r.bot))
        return out

    def rows(self, bots: Sequence[str] = ()) -> list[RatingRow]:
        """Every bot's rating as the raters give them (:class:`OpenSkillRater`'s rows), ``bots``
        without a rated game at the prior, best first (by ``mu``, then name)."""
        out = [self.rating(b) for b in {*self._belief, *bots}]
        out.sort(key=lambda r: (-r.mu, r.bot))
        return [RatingRow(r.bot, r.mu, r.low, r.high, r.games, (("sigma", r.sigma),)) for r in out]


def openskill_ratings(games: Iterable[Ranked], bots: Sequence[str] = ()) -> list[SkillRating]:
    """Plackett–Luce ratings of ``games`` (in the order given), best first (by ``mu``, then name);
    ``bots`` without a rated game keep the prior."""
    board = SkillBoard(bots)
    for o in games:
        board.add(o)
    return board.ratings()


@dataclass(frozen=True, slots=True)
class OpenSkillRater:
    """Plackett–Luce beliefs over every game in order (no scoring units: any number of seats)."""

    name: str = "openskill"
    """Its name on the command line."""
    title: str = "Plackett–Luce"
    """What a page calls it."""

    def rate(self, results: Sequence[Result], bots: Sequence[str] = ()) -> list[RatingRow]:
        board = SkillBoard(bots)
        for r in results:
            board.add(r)
        return board.rows()
