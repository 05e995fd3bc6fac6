"""The results page never shows a negative zero (issue 22: the michigan page said ``-0`` Elo):
an Elo, an interval's end, a chart's label or tick that rounds to 0 is ``0``."""

from __future__ import annotations

import re
from pathlib import Path

from arena.results.page import compute_report, rating_chart, results_page
from arena.results.report import render_text

NEGATIVE_ZERO = re.compile(r"[-−]0(?![\w.])")
"""``-0`` or ``−0`` as a whole number (not the start of ``-0.5`` or ``-07``)."""


def test_no_negative_zero_on_the_page(tmp_path: Path) -> None:
    # Four bots, each game's winner in turn: equal records, ratings within a hair of 0 either way.
    bots = ["a", "b", "c", "d"]
    games = [{"players": [bots[i], bots[j]], "winner": bots[i] if (i + j + k) % 2 else bots[j], "points": [1, 0]}
             for k in range(2) for i in range(4) for j in range(4) if i != j]
    report = compute_report(games)
    report["standings"][0].update(elo=-0.4, elo_low=-0.3, elo_high=0.2)
    report["ratings_mle"][0].update(elo=-0.49, margin=0.1)
    page = results_page(tmp_path, report, {}, {})
    assert not NEGATIVE_ZERO.findall(page), NEGATIVE_ZERO.findall(page)
    assert "0 <small>[0, 0]</small>" in page  # the standings' cell of the bot at -0.4 [-0.3, +0.2]
    assert not NEGATIVE_ZERO.findall(render_text(report))
    chart = rating_chart([{"bot": "a", "elo": -0.2, "low": -0.4, "high": 0.3}])
    assert "a: 0</title>" in chart and not NEGATIVE_ZERO.findall(chart)
