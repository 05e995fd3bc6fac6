"""The one standings engine read incrementally (``arena.results.standings.RatedGames``): kept
between calls, it reads only the games stored since, and gives exactly what rating every game
afresh gives — also after games are deleted or finish out of ``idx`` order."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from arena.model.records import Outcome
from arena.results.standings import RatedGames, standings
from arena.store import open_db, record_game
from arena.web.data import bot_page

BOTS = ("ann", "bob", "cy", "dee")


def _game(db: sqlite3.Connection, rng: random.Random, i: int, idx: int | None = None) -> None:
    players = tuple(rng.sample(BOTS, 2))
    winner = rng.choice((0, 1, None))
    places = (1, 1) if winner is None else (1 + (winner == 1), 1 + (winner == 0))
    values = {"idx": idx} if idx is not None else {}
    record_game(db, values, Outcome(f"m{i}", (players[0], players[1] + ("#2" if players[1] == "cy" else "")),
                                    winner, "normal", None, "", (0, 0), (0, 0), None, 1, (0, 0), (), "", "", "",
                                    places=places))


def test_kept_ratings_equal_fresh_ones_through_appends_deletes_and_gaps(tmp_path: Path) -> None:
    db = open_db(tmp_path / "serve.sqlite", "serve")
    rng = random.Random(7)
    rated = RatedGames()
    try:
        for i in range(40):
            _game(db, rng, i, idx=100 + 2 * i)  # gaps: a planned game may finish later, below the last
            assert standings(db, rated) == standings(db)
        _game(db, rng, 99, idx=101)  # out of idx order: the kept ratings must start again
        assert standings(db, rated) == standings(db)
        db.execute("DELETE FROM games WHERE idx = 110")  # deleted (arena ladder drop): the same
        db.commit()
        assert standings(db, rated) == standings(db)
        history = rated.rating_history(db, "cy")  # "cy#2" is an instance of cy
        fresh = RatedGames().rating_history(db, "cy")
        assert history == fresh and len(history) > 3
        assert [p.game for p in history] == list(range(1, len(history) + 1))
        page = bot_page(db, "cy", tmp_path, 5, False, rated)
        assert page is not None and page["history"][-1]["rating"] == round(history[-1].rating, 3)
        mine = db.execute("SELECT COUNT(DISTINCT game) FROM game_seats WHERE bot IN ('cy', 'cy#2')").fetchone()[0]
        assert page["games"] == mine and len(page["recent"]) == 5
        assert bot_page(db, "c%", tmp_path, 5, False, rated) is None  # a LIKE wildcard matches nobody
    finally:
        db.close()
