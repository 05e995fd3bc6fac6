"""The one standings engine read incrementally (``arena.results.standings.RatedGames``): kept
between calls, it reads only the games stored since, and gives exactly what rating every game
afresh gives — also after games are deleted or finish out of ``idx`` order."""

from __future__ import annotations

import math
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


def _json(value: float) -> float | None:
    """A rating as the API gives it: rounded, ``None`` where unbounded."""
    return round(value, 3) if math.isfinite(value) else None


def test_the_standings_show_every_chosen_rater_the_first_ordering(tmp_path: Path) -> None:
    """The live standings (``/api/standings``, the pages) rate by every rater the store names
    (``arena serve``'s ladder file ``raters``), each named; the first orders them and gives the
    top-level rating; kept ratings equal fresh ones as games are added (issue 29: before, only
    openskill was shown, whatever was chosen)."""
    from arena.competition.ratings import RATERS, get_raters
    from arena.store import live_raters, outcome_from_row, seats_by_game, set_live_raters
    from arena.web.data import standings as api_standings

    db = open_db(tmp_path / "serve.sqlite", "serve")
    rng = random.Random(11)
    try:
        assert live_raters(db) == ()
        default = api_standings(db)
        assert default == [] and standings(db) == []
        chosen = ["elo", "openskill", "glicko2"]
        assert set(chosen) <= set(RATERS)
        set_live_raters(db, chosen)
        assert live_raters(db) == tuple(chosen)
        rated = RatedGames()
        for i in range(30):
            _game(db, rng, i)
            assert standings(db, rated, get_raters(chosen)) == standings(db, None, get_raters(chosen))
        rows = api_standings(db, rated)
        seats = seats_by_game(db)
        results = [outcome_from_row(r, seats[int(r["idx"])]).result() for r in db.execute(
            "SELECT * FROM games WHERE status = 'done' ORDER BY idx")]
        expected = {r.name: {row.bot: row for row in r.rate(results)} for r in get_raters(chosen)}
        assert [row["bot"] for row in rows] == sorted(expected["elo"], key=lambda b: (-expected["elo"][b].rating, b))
        for row in rows:
            assert [(x["rater"], x["title"]) for x in row["ratings"]] == [(r.name, r.title) for r in get_raters(chosen)]
            assert (row["rater"], row["rater_title"]) == (RATERS["elo"].name, RATERS["elo"].title)
            for x in row["ratings"]:
                want = expected[x["rater"]][row["bot"]]
                assert (x["rating"], x["low"], x["high"], x["count"]) == (
                    _json(want.rating), _json(want.low), _json(want.high), want.count)
            assert row["rating"] == row["ratings"][0]["rating"] and row["rated_games"] == row["ratings"][0]["count"]
            assert "sigma" in row["ratings"][1] and "rd" in row["ratings"][2]  # each rater's own extras
        set_live_raters(db, [])  # back to the default: the live rater alone
        assert [x["rater"] for x in api_standings(db)[0]["ratings"]] == ["openskill"]
    finally:
        db.close()


def test_the_standings_table_has_a_column_per_rater(tmp_path: Path) -> None:
    """The standings table of the pages (drawn on the server) names the first rater in its
    rating column's heading and gives every other rater a column of its own, named by it."""
    from arena.competition.ratings import get_raters
    from arena.store import set_live_raters
    from arena.web.data import standings as api_standings
    from arena.web.i18n import lang
    from arena.web.pages import TEMPLATING, Frame, context

    raters = get_raters(["bt", "openskill"])
    db = open_db(tmp_path / "serve.sqlite", "serve")
    try:
        set_live_raters(db, [r.name for r in raters])
        rng = random.Random(3)
        for i in range(12):
            _game(db, rng, i)
        rows = api_standings(db)
    finally:
        db.close()
    macro = TEMPLATING.env.from_string('{% from "parts.html" import standings_table with context %}'
                                       '{{ standings_table(rows, "standings") }}')
    html = macro.render(**context(Frame(lang("en"), "/standings"), "Standings", "front"), rows=rows)
    head = html[html.index('<table id="standings">'):html.index("</thead>")]
    assert f'data-rater="{raters[0].name}">rating <small>{raters[0].title}</small>' in head
    assert f'class="rater" data-rater="{raters[1].name}">{raters[1].title}</th>' in head
    assert html.count(f'<td data-rater="{raters[1].name}">') == len(rows) == len(BOTS)
    unbounded = [r for r in rows if r["rating"] is None or r["low"] is None or r["high"] is None]
    assert html.count("∞") >= len(unbounded)  # an unbounded rating is drawn, not an error
