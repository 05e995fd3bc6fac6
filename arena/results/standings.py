"""The one standings engine of a database of the arena's schema: the hosted server's
``serve.sqlite`` (``arena serve``'s continuous ladder, its live web) and the local ladder's
``ladder.sqlite`` (``arena ladder show``) both call :func:`standings`.

Every finished game is rated in the order it was stored, by openskill's Plackett–Luce model
(:class:`arena.competition.ratings.SkillBoard`: ``mu ± sigma`` per bot, starting at 25 ± 25/3). A bot
with fewer than :data:`PROVISIONAL_GAMES` rated games is *provisional*: its rating says little yet.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field

from arena.competition.ratings import SkillBoard
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
    """Its Plackett–Luce ``mu``."""
    uncertainty: float
    """The belief's standard deviation ``sigma`` (the 95% interval is ``rating ± 1.96 sigma``)."""
    rated_games: int
    """Games that moved its rating (not every seat tied)."""
    provisional: bool
    """Fewer than :data:`PROVISIONAL_GAMES` rated games."""
    state: str
    """``enabled``, ``disabled``, ``suspended`` (a server's registered bot), or ``removed`` (no
    longer registered or on the ladder; its games still count)."""
    reason: str
    """Why it is suspended ("" otherwise)."""


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
        rows = db.execute("SELECT * FROM games WHERE status = 'done' AND idx > ? ORDER BY idx",
                          (self._last,)).fetchall()
        if not rows:
            return
        seats = seats_by_game(db, "WHERE game > ?", (self._last,))
        for r in rows:
            outcome = outcome_from_row(r, seats.get(int(r["idx"]), []))
            self.board.add(outcome)
            for bot in {base_name(p) for p in outcome.players}:
                self.games[bot] = self.games.get(bot, 0) + 1
                rating = self.board.rating(bot)
                points = self.history.setdefault(bot, [])
                if rating.games > (points[-1].game if points else 0):  # a rated game: its rating moved
                    points.append(RatingPoint(rating.games, outcome.match_id, rating.mu, rating.sigma))
        self._last, self._count = int(rows[-1]["idx"]), self._count + len(rows)

    def standings(self, db: sqlite3.Connection) -> list[Standing]:
        """Brought up to date, every bot with a game or in the ``bots`` table, best rating first."""
        with self._lock:
            self._update(db)
            states = _states(db)
            out = []
            for bot in sorted(set(self.games) | set(states)):
                rating = self.board.rating(bot)
                state, reason = states.get(bot, ("removed", ""))
                out.append(Standing(bot, self.games.get(bot, 0), rating.mu, rating.sigma, rating.games,
                                    rating.games < PROVISIONAL_GAMES, state, reason))
        out.sort(key=lambda s: (-s.rating, s.bot))
        return out

    def rating_history(self, db: sqlite3.Connection, bot: str) -> list[RatingPoint]:
        """Brought up to date, ``bot``'s rating after each of its rated games."""
        with self._lock:
            self._update(db)
            return list(self.history.get(bot, ()))


def standings(db: sqlite3.Connection, rated: RatedGames | None = None) -> list[Standing]:
    """Every bot with a game or in the ``bots`` table, best rating first (then name); with
    ``rated``, only the games stored since its last call are read."""
    return (rated or RatedGames()).standings(db)


def render_standings(rows: list[Standing]) -> str:
    """The standings as a text table (``?`` marks a provisional rating)."""
    body = [[i + 1, s.bot, f"{s.rating:.2f}{'?' if s.provisional else ''}", f"{1.96 * s.uncertainty:.2f}", s.games,
             s.rated_games, s.state + (f" ({s.reason})" if s.reason else "")] for i, s in enumerate(rows)]
    text = table(["#", "bot", "rating", "±95%", "games", "rated", "state"], body, right=[0, 2, 3, 4, 5])
    if any(s.provisional for s in rows):
        text += f"\n? provisional: fewer than {PROVISIONAL_GAMES} rated games"
    return text
