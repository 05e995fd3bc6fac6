"""The ladder's pages: home (play first, then the standings and the matches, live), the
standings, the matches, a running match's spectator view, a bot's page with its rating plot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from arena.competition.ratings import Z95
from arena.replays.page_parts import SEAT_COLORS
from arena.web.i18n import Lang
from arena.web.pages import Page

PLOT_SIZE = (640, 220)
"""The rating-over-time plot's width and height (SVG units)."""
PLOT_MARGINS = (44, 10, 10, 24)
"""The plot's margins: left, right, top, bottom (room for the ticks and the caption)."""

Rows = Sequence[Mapping[str, Any]]


def home(tr: Lang, rows: Rows, running: Rows, recent: Rows) -> Page:
    """The front page: play the computer first, the tables and the rules, then the standings, the
    running matches and the recent ones (kept up to date by the script)."""
    return Page("home.html", "", "front", {"rows": rows, "running": running, "recent": recent})


def standings(tr: Lang, rows: Rows) -> Page:
    """The bots' standings (kept up to date by the script)."""
    people = Markup('<a href="/people">{}</a>').format(escape(tr._("the people's standings")))
    return Page("standings.html", tr._("Standings"), "front", {"rows": rows, "people_link": people})


def matches(tr: Lang, running: Rows, recent: Rows, next_before: int | None) -> Page:
    """Every running match and a page of finished ones."""
    return Page("matches.html", tr._("Matches"), "matches",
                {"running": running, "recent": recent, "next_before": next_before})


def live(tr: Lang, match: Mapping[str, Any]) -> Page:
    """A running match's spectator view: the script draws each view the stream sends."""
    return Page("live.html", tr._("Match {id}", id=match["match_id"]), "live", {"match": match},
                {"match": match["match_id"]})


def bot(tr: Lang, name: str, info: Mapping[str, Any], operator: bool) -> Page:
    """A bot's page: its rating, the plot, its recent games, its faults."""
    return Page("bot.html", name, "bot", {"info": info, "operator": operator,
                                          "plot": plot(tr, info["prior"], info["history"])})


def plot(tr: Lang, prior: Mapping[str, Any], rated: Rows) -> dict[str, Any] | None:
    """The coordinates of a bot's rating plot from the ``prior`` through each of its ``rated``
    games, with its 95% band (``None``: no rated game yet)."""
    if not rated:
        return None
    width, height = PLOT_SIZE
    left, right, top, bottom = PLOT_MARGINS
    history = [prior, *rated]
    lows = [float(h["rating"]) - Z95 * float(h["uncertainty"]) for h in history]
    highs = [float(h["rating"]) + Z95 * float(h["uncertainty"]) for h in history]
    lo, hi = min(lows), max(highs)
    span = (hi - lo) or 1.0
    n = len(history)

    def x(i: int) -> str:
        return f"{left + (width - left - right) * (i / max(1, n - 1)):.1f}"

    def y(v: float) -> str:
        return f"{top + (height - top - bottom) * (hi - v) / span:.1f}"

    band = [f"{x(i)},{y(v)}" for i, v in enumerate(highs)]
    band += [f"{x(i)},{y(v)}" for i, v in reversed(list(enumerate(lows)))]
    ratings = [float(h["rating"]) for h in history]
    return {"width": width, "height": height, "left": left, "top": top, "inner_width": width - left - right,
            "inner_height": height - top - bottom, "color": SEAT_COLORS[0], "points": n - 1,
            "band": " ".join(band), "line": " ".join(f"{x(i)},{y(v)}" for i, v in enumerate(ratings)),
            "dots": [(x(i), y(v)) for i, v in enumerate(ratings)],
            "ticks": [(f"{float(y(v)) + 4:.1f}", tr.number(v)) for v in (lo, (lo + hi) / 2, hi)],
            "caption_x": f"{(left + width - right) / 2:.0f}"}
