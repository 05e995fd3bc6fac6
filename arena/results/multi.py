"""Results of games of any number of seats: a ranking with points per bot, Plackett–Luce ratings
(the ``openskill`` library) with 95% intervals, and a head-to-head table (how often each bot
finished ahead of each other).

A seat's player may be an instance of a bot (``greedy#2``): everything here counts it as that bot
(:func:`arena.model.schedule.base_name`). Two seats of one bot in one game are never compared with
each other.

Ratings: the games are rated one after the other, in schedule order, by openskill's
Plackett–Luce model (Weng & Lin 2011: a Bayesian approximation that keeps a normal belief
``mu ± sigma`` per bot, starting at 25 ± 25/3), each seat a team of one ranked by its place (tied
places tie). A bot holding several seats of a game enters it once per seat with its current
belief, and takes the mean of its seats' updated beliefs. A game whose seats all share one place
(an aborted match) says nothing about the order and is not rated. The interval is
``mu ± 1.96 sigma``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from arena.model.records import Outcome
from arena.model.schedule import base_name
from arena.results.stats import Z95


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


def _rated(o: Outcome) -> bool:
    return len(set(o.places)) > 1


class SkillBoard:
    """Plackett–Luce beliefs kept up to date one game at a time (what :func:`openskill_ratings`
    computes at once; a long-running server adds each game as it finishes)."""

    def __init__(self, bots: Sequence[str] = ()) -> None:
        self._model = PlackettLuce()
        self._belief: dict[str, tuple[float, float]] = {b: (self._model.mu, self._model.sigma) for b in bots}
        self._played: dict[str, int] = dict.fromkeys(bots, 0)

    def add(self, o: Outcome) -> None:
        """Rate one more game (one whose seats all share a place says nothing and is passed over)."""
        if not _rated(o):
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


def openskill_ratings(games: Iterable[Outcome], bots: Sequence[str] = ()) -> list[SkillRating]:
    """Plackett–Luce ratings of ``games`` (in the order given), best first (by ``mu``, then name);
    ``bots`` without a rated game keep the prior."""
    board = SkillBoard(bots)
    for o in games:
        board.add(o)
    return board.ratings()


def head_to_head(bots: Sequence[str], games: Iterable[Outcome]) -> dict[str, dict[str, dict[str, int]]]:
    """For each two bots that met: how often the row bot finished ahead of, behind, or level with
    the column bot — one meeting per seat of the one and seat of the other in a game."""
    table: dict[str, dict[str, dict[str, int]]] = {a: {} for a in bots}
    for o in games:
        seats = [base_name(p) for p in o.players]
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if a == b:
                    continue
                cell = table.setdefault(a, {}).setdefault(b, {"meetings": 0, "ahead": 0, "behind": 0, "level": 0})
                cell["meetings"] += 1
                key = "ahead" if o.places[i] < o.places[j] else "behind" if o.places[i] > o.places[j] else "level"
                cell[key] += 1
    return table


def ranking(bots: Sequence[str], games: Sequence[Outcome]) -> list[dict[str, object]]:
    """Per bot: its games and seats, first places, mean place and points (over its seats), and
    its Plackett–Luce rating with the 95% interval; best rating first."""
    ratings = {r.bot: r for r in openskill_ratings(games, bots)}
    rows: list[dict[str, object]] = []
    for bot in bots:
        seats = [(o, s) for o in games for s, p in enumerate(o.players) if base_name(p) == bot]
        r = ratings[bot]
        rows.append({
            "bot": bot,
            "games": len({id(o) for o, _ in seats}),
            "seats": len(seats),
            "firsts": sum(1 for o, s in seats if o.places[s] == 1),
            "mean_place": round(sum(o.places[s] for o, s in seats) / len(seats), 3) if seats else None,
            "points": sum(o.points[s] for o, s in seats),
            "mean_points": round(sum(o.points[s] for o, s in seats) / len(seats), 2) if seats else None,
            "mu": round(r.mu, 3),
            "sigma": round(r.sigma, 3),
            "low": round(r.low, 3),
            "high": round(r.high, 3),
            "rated_games": r.games,
        })
    rows.sort(key=lambda row: (-float(str(row["mu"])), str(row["bot"])))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows
