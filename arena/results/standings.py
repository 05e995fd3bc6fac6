"""The one standings engine of a database of the arena's schema: the hosted server's
``serve.sqlite`` (``arena serve``'s continuous ladder, its live web) and the local ladder's
``ladder.sqlite`` (``arena ladder show``) both call :func:`standings`.

Every finished game is rated in the order it was stored, by openskill's Plackett–Luce model
(:class:`arena.results.multi.SkillBoard`: ``mu ± sigma`` per bot, starting at 25 ± 25/3). A bot
with fewer than :data:`PROVISIONAL_GAMES` rated games is *provisional*: its rating says little yet.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from arena.model.schedule import base_name
from arena.results.multi import SkillBoard
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


def standings(db: sqlite3.Connection) -> list[Standing]:
    """Every bot with a game or in the ``bots`` table, best rating first (then name)."""
    seats = seats_by_game(db)
    board = SkillBoard()
    games: dict[str, int] = {}
    for r in db.execute("SELECT * FROM games WHERE status = 'done' ORDER BY idx"):
        outcome = outcome_from_row(r, seats.get(int(r["idx"]), []))
        board.add(outcome)
        for bot in {base_name(p) for p in outcome.players}:
            games[bot] = games.get(bot, 0) + 1
    states = _states(db)
    out = []
    for bot in sorted(set(games) | set(states)):
        rating = board.rating(bot)
        state, reason = states.get(bot, ("removed", ""))
        out.append(Standing(bot, games.get(bot, 0), rating.mu, rating.sigma, rating.games,
                            rating.games < PROVISIONAL_GAMES, state, reason))
    out.sort(key=lambda s: (-s.rating, s.bot))
    return out


def render_standings(rows: list[Standing]) -> str:
    """The standings as a text table (``?`` marks a provisional rating)."""
    body = [[i + 1, s.bot, f"{s.rating:.2f}{'?' if s.provisional else ''}", f"{1.96 * s.uncertainty:.2f}", s.games,
             s.rated_games, s.state + (f" ({s.reason})" if s.reason else "")] for i, s in enumerate(rows)]
    text = table(["#", "bot", "rating", "±95%", "games", "rated", "state"], body, right=[0, 2, 3, 4, 5])
    if any(s.provisional for s in rows):
        text += f"\n? provisional: fewer than {PROVISIONAL_GAMES} rated games"
    return text
