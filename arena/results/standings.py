"""The one standings engine of a database of the arena's schema: the hosted server's
``serve.sqlite`` (``arena serve``'s continuous ladder, its live web) and the local ladder's
``ladder.sqlite`` (``arena ladder show``) both call :func:`standings`.

Every finished game is rated in the order it was stored by each chosen rater
(:data:`arena.competition.ratings.RATERS`; the first orders the standings). The default is the live
rater, openskill's Plackett–Luce model, kept up to date one game at a time
(:class:`arena.competition.ratings.SkillBoard`: ``mu ± sigma`` per bot, starting at 25 ± 25/3); any
other rater rates every game again whenever games were added (its cost grows with the games:
docs/hosted.md). A bot with fewer than :data:`PROVISIONAL_GAMES` rated games (by the first rater's
count) is *provisional*: its rating says little yet.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.competition.ratings import LIVE_RATER, Z95, Rater, RatingRow, SkillBoard
from arena.competition.result import Result
from arena.competition.seating import base_name
from arena.results.report import table
from arena.store import outcome_from_row, seats_by_game

PROVISIONAL_GAMES = 20
"""A bot with fewer rated games than this is marked provisional."""


@dataclass(frozen=True, slots=True)
class Standing:
    """One bot's line of the standings."""

    bot: str
    """The bot's name (registered on a server, or added to the ladder)."""
    games: int
    """Games it holds a seat in (rated or not: an aborted or interrupted one counts here)."""
    rating: float
    """Its rating by the first rater (Plackett–Luce: ``mu``; ±inf: a perfect or a nil score)."""
    uncertainty: float
    """The first rater's standard deviation of it (Plackett–Luce: ``sigma``; the 95% interval is
    ``rating ± 1.96 uncertainty``)."""
    rated_games: int
    """What the first rater counted for it (Plackett–Luce: games that moved its rating, not every
    seat tied)."""
    provisional: bool
    """Fewer than :data:`PROVISIONAL_GAMES` rated games."""
    state: str
    """``enabled``, ``disabled``, ``suspended`` (a server's registered bot), or ``removed`` (no
    longer registered or on the ladder; its games still count)."""
    reason: str
    """Why it is suspended ("" otherwise)."""
    ratings: tuple[tuple[Rater, RatingRow | None], ...] = ()
    """Each chosen rater with its row for the bot (``None``: the rater has none yet), the first
    the one the standings are ordered by."""


def _states(db: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """Each bot of the ``bots`` table: its state and reason (a ladder's removed bot: ``removed``)."""
    rows = db.execute("SELECT name, active, state, reason FROM bots")
    return {str(r["name"]): (str(r["state"]) if r["active"] else "removed", str(r["reason"])) for r in rows}


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot's rating just after one of its rated games."""

    game: int
    """How many rated games it had played then (1 for its first)."""
    match_id: str
    """The game's match."""
    rating: float
    """Its ``mu`` after the game."""
    uncertainty: float
    """Its ``sigma`` after the game."""


@dataclass(slots=True)
class RatedGames:
    """The finished games of a database rated in stored order, kept between calls and brought up
    to date by reading only the games stored since (:meth:`update`): a long-running server's
    standings and rating histories cost the new games, not all of them. If the games already
    read changed (deleted, as ``arena ladder drop`` does, or finished out of ``idx`` order, as a
    tournament's planned games do), everything is read again. Thread-safe: the web reads from
    worker threads."""

    board: SkillBoard = field(default_factory=SkillBoard)
    """The ratings after every game read."""
    games: dict[str, int] = field(default_factory=dict)
    """Games each bot holds a seat in (rated or not)."""
    history: dict[str, list[RatingPoint]] = field(default_factory=dict)
    """Each bot's rating after each of its rated games, oldest first."""
    results: list[Result] = field(default_factory=list)
    """Every game read, in stored order, for the raters that rate them all at once."""
    _rated: dict[str, tuple[int, list[RatingRow]]] = field(default_factory=dict)
    """Each such rater's rows, with the number of games they were made from."""
    _last: int = -1
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, db: sqlite3.Connection) -> None:
        """Read the games finished since the last call (all of them if those read changed)."""
        with self._lock:
            self._update(db)

    def _update(self, db: sqlite3.Connection) -> None:
        count, top = db.execute("SELECT COUNT(*), COALESCE(MAX(idx), -1) FROM games "
                                "WHERE status = 'done' AND idx <= ?", (self._last,)).fetchone()
        if (count, top) != (self._count, self._last):
            self.board, self.games, self.history, self._last, self._count = SkillBoard(), {}, {}, -1, 0
            self.results, self._rated = [], {}
        rows = db.execute("SELECT * FROM games WHERE status = 'done' AND idx > ? ORDER BY idx",
                          (self._last,)).fetchall()
        if not rows:
            return
        seats = seats_by_game(db, "WHERE game > ?", (self._last,))
        for r in rows:
            outcome = outcome_from_row(r, seats.get(int(r["idx"]), []))
            self.board.add(outcome)
            self.results.append(outcome.result(str(r["pair_key"] or "")))
            for bot in {base_name(p) for p in outcome.players}:
                self.games[bot] = self.games.get(bot, 0) + 1
                rating = self.board.rating(bot)
                points = self.history.setdefault(bot, [])
                if rating.games > (points[-1].game if points else 0):  # a rated game: its rating moved
                    points.append(RatingPoint(rating.games, outcome.match_id, rating.mu, rating.sigma))
        self._last, self._count = int(rows[-1]["idx"]), self._count + len(rows)

    def _rows(self, rater: Rater, bots: Sequence[str]) -> list[RatingRow]:
        """``rater``'s rows of every game read: the live rater's from the board (``bots`` without
        a rated game at its prior), any other's from rating the games again if games were added
        since it last did."""
        if rater is LIVE_RATER:
            return self.board.rows(bots)
        count, rows = self._rated.get(rater.name, (-1, []))
        if count != len(self.results):
            rows = rater.rate(self.results)
            self._rated[rater.name] = (len(self.results), rows)
        return rows

    def standings(self, db: sqlite3.Connection, raters: Sequence[Rater] = ()) -> list[Standing]:
        """Brought up to date, every bot with a game or in the ``bots`` table, rated by each of
        ``raters`` (none: the live rater), best rating of the first first (a bot it has no row for
        last), then name."""
        chosen = tuple(raters) or (LIVE_RATER,)
        with self._lock:
            self._update(db)
            states = _states(db)
            bots = sorted(set(self.games) | set(states))
            rows = [(r, {row.bot: row for row in self._rows(r, bots)}) for r in chosen]
            out = []
            for bot in bots:
                state, reason = states.get(bot, ("removed", ""))
                mine = tuple((r, by_bot.get(bot)) for r, by_bot in rows)
                first = mine[0][1]
                rating = first.rating if first is not None else -math.inf
                count = first.count if first is not None else 0
                out.append(Standing(bot, self.games.get(bot, 0), rating,
                                    first.margin / Z95 if first is not None else math.inf, count,
                                    count < PROVISIONAL_GAMES, state, reason, mine))
        out.sort(key=lambda s: (-s.rating, s.bot))
        return out

    def rating_history(self, db: sqlite3.Connection, bot: str) -> list[RatingPoint]:
        """Brought up to date, ``bot``'s rating after each of its rated games."""
        with self._lock:
            self._update(db)
            return list(self.history.get(bot, ()))


def standings(db: sqlite3.Connection, rated: RatedGames | None = None, raters: Sequence[Rater] = ()) -> list[Standing]:
    """Every bot with a game or in the ``bots`` table, rated by ``raters`` (none: the live rater),
    best rating of the first first (then name); with ``rated``, only the games stored since its
    last call are read."""
    return (rated or RatedGames()).standings(db, raters)


def render_standings(rows: list[Standing]) -> str:
    """The standings as a text table (``?`` marks a provisional rating)."""
    body = [[i + 1, s.bot, f"{s.rating:.2f}{'?' if s.provisional else ''}", f"{1.96 * s.uncertainty:.2f}", s.games,
             s.rated_games, s.state + (f" ({s.reason})" if s.reason else "")] for i, s in enumerate(rows)]
    text = table(["#", "bot", "rating", "±95%", "games", "rated", "state"], body, right=[0, 2, 3, 4, 5])
    if any(s.provisional for s in rows):
        text += f"\n? provisional: fewer than {PROVISIONAL_GAMES} rated games"
    return text
