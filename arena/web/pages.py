"""The live web's pages, rendered on the server: plain HTML with one style sheet and one script
served by the server itself (``/static/``; no inline script or style, so the strict
Content-Security-Policy holds), every text a bot chose escaped, every address built with its
parts quoted. The script fills in what changes (standings, matches, the spectator's view) with
``textContent`` only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from arena.replays.page_parts import SEAT_COLORS, escape
from arena.results.stats import Z95

STYLE = "/static/web.css"
"""The pages' style sheet."""
SCRIPT = "/static/web.js"
"""The pages' script."""
PLOT_SIZE = (640, 220)
"""The rating-over-time plot's width and height (SVG units)."""


def bot_href(name: str) -> str:
    """A bot's page."""
    return "/bots/" + quote(name, safe="")


def match_href(match_id: str) -> str:
    """A match's page (live while it runs, its replay once it is over)."""
    return "/matches/" + quote(match_id, safe="")


def person_href(name: str) -> str:
    """A person's page (their people's games)."""
    return "/people/" + quote(name, safe="")


def layout(title: str, body: str, *, page: str, operator: bool, source: str, data: Mapping[str, str] | None = None,
           person: str | None = None) -> str:
    """A whole page: the header with the navigation (who is signed in: ``person``, the
    operator), ``body``, the script."""
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
    out = '<form method="post" action="/signout" class="door"><button>sign out</button></form>'
    if person is not None:
        door = (f'<span class="door" id="who">signed in as <a href="{escape(person_href(person))}">'
                f"{escape(person)}</a>{' (operator)' if operator else ''}</span>{out}")
    elif operator:
        door = out
    else:
        door = ('<a href="/signin" class="door" id="signin-link">sign in</a>'
                '<a href="/signup" class="door">sign up</a>')
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f'<title>{escape(title)} — Gin Arena</title><link rel="stylesheet" href="{STYLE}"></head>\n'
        f'<body data-page="{escape(page)}"{attrs}>\n'
        f'<header><nav><a href="/">standings</a> · <a href="/matches">matches</a> · <a href="/people">people</a> · '
        f'<a href="/api/openapi.json">API</a>{door}</nav><div class="source">{escape(source)}</div></header>\n'
        f"<main>\n<h1>{escape(title)}</h1>\n{body}\n</main>\n"
        f'<script src="{SCRIPT}" defer></script>\n</body></html>\n'
    )


def standings_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The standings (the script redraws the body on each update)."""
    head = ("<tr><th>#</th><th>bot</th><th>games</th><th>rating</th><th>±</th><th>95% interval</th>"
            "<th>state</th></tr>")
    return f'<table id="standings"><thead>{head}</thead><tbody>{"".join(_standing(r) for r in rows)}</tbody></table>'


def _standing(r: Mapping[str, Any]) -> str:
    provisional = ' <span class="tag">provisional</span>' if r["provisional"] else ""
    return (f'<tr data-bot="{escape(r["bot"])}" data-games="{r["games"]}"><td>{r["rank"]}</td>'
            f'<td><a href="{escape(bot_href(r["bot"]))}">{escape(r["bot"])}</a>{provisional}</td>'
            f'<td>{r["games"]}</td><td>{r["rating"]:.2f}</td><td>{r["uncertainty"]:.2f}</td>'
            f'<td>{r["low"]:.1f} … {r["high"]:.1f}</td><td>{escape(_state(r))}</td></tr>')


def _state(r: Mapping[str, Any]) -> str:
    return f'{r["state"]} ({r["reason"]})' if r["reason"] else str(r["state"])


def matches_list(element_id: str, matches: Sequence[Mapping[str, Any]]) -> str:
    """A list of matches (running or finished), each linked to its page."""
    items = []
    for m in matches:
        who = " vs ".join(escape(p) for p in m["players"])
        end = f' · {escape(m["termination"])}' if m.get("termination") else ""
        winner = f' · winner <b>{escape(m["winner"])}</b>' if m.get("winner") else ""
        items.append(f'<li data-match="{escape(m["match_id"])}"><a href="{escape(match_href(m["match_id"]))}">'
                     f'{escape(m["match_id"])}</a> · {escape(m["game"])} · {who} · {escape(m["state"])}'
                     f"{winner}{end}</li>")
    return f'<ul id="{element_id}" class="matches">{"".join(items) or "<li class=none>none</li>"}</ul>'


def front_page(rows: Sequence[Mapping[str, Any]], running: Sequence[Mapping[str, Any]],
               recent: Sequence[Mapping[str, Any]]) -> str:
    """The standings, the running matches and the recent ones (kept up to date by the script)."""
    return (f"<section><h2>Standings</h2>{standings_table(rows)}</section>\n"
            f'<section><h2>Running</h2>{matches_list("running", running)}</section>\n'
            f'<section><h2>Recent</h2>{matches_list("recent", recent)}</section>')


def matches_page(running: Sequence[Mapping[str, Any]], recent: Sequence[Mapping[str, Any]], next_before: int | None
                 ) -> str:
    """Every running match and a page of finished ones."""
    more = f'<p><a id="older" href="/matches?before={next_before}">older matches</a></p>' if next_before else ""
    return (f'<section><h2>Running</h2>{matches_list("running", running)}</section>\n'
            f'<section><h2>Finished</h2>{matches_list("recent", recent)}{more}</section>')


def live_page(match: Mapping[str, Any]) -> str:
    """A running match's spectator view: the script draws each view the stream sends."""
    who = " vs ".join(escape(p) for p in match["players"])
    return (f'<p class="meta">{escape(match["game"])} · {who} · <span id="live-state">{escape(match["state"])}'
            f'</span> · <span id="live-position"></span></p>\n'
            '<div id="live" class="felt"><div id="live-scores"></div><div id="live-seats"></div>'
            '<div id="live-table"></div><div id="live-piles"></div><div id="live-last"></div>'
            '<div id="live-end"></div></div>\n'
            f'<p id="live-replay" class="hidden"><a href="{escape(match_href(match["match_id"]))}">the replay</a></p>')


def rating_plot(prior: Mapping[str, Any], rated: Sequence[Mapping[str, Any]]) -> str:
    """An SVG of a bot's rating from the ``prior`` through each of its ``rated`` games, with its
    95% band."""
    width, height = PLOT_SIZE
    left, right, top, bottom = 44, 10, 10, 24
    if not rated:
        return '<p id="rating-plot" class="none">no rated game yet</p>'
    history = [prior, *rated]
    lows = [float(h["rating"]) - Z95 * float(h["uncertainty"]) for h in history]
    highs = [float(h["rating"]) + Z95 * float(h["uncertainty"]) for h in history]
    lo, hi = min(lows), max(highs)
    span = (hi - lo) or 1.0
    n = len(history)

    def x(i: int) -> float:
        return left + (width - left - right) * (i / max(1, n - 1))

    def y(v: float) -> float:
        return top + (height - top - bottom) * (hi - v) / span

    band = [f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(highs)]
    band += [f"{x(i):.1f},{y(v):.1f}" for i, v in reversed(list(enumerate(lows)))]
    line = " ".join(f"{x(i):.1f},{y(float(h['rating'])):.1f}" for i, h in enumerate(history))
    dots = "".join(f'<circle cx="{x(i):.1f}" cy="{y(float(h["rating"])):.1f}" r="2.5" fill="{SEAT_COLORS[0]}"/>'
                   for i, h in enumerate(history))
    ticks = "".join(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{v:.0f}</text>'
                    for v in (lo, (lo + hi) / 2, hi))
    return (f'<svg id="rating-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="rating after each rated game" '
            f'data-points="{n - 1}"><rect x="{left}" y="{top}" width="{width - left - right}" '
            f'height="{height - top - bottom}" fill="#fbfbf8" stroke="#ccc"/>'
            f'<polygon points="{" ".join(band)}" fill="{SEAT_COLORS[0]}" fill-opacity="0.15"/>'
            f'<polyline points="{line}" fill="none" stroke="{SEAT_COLORS[0]}" stroke-width="2"/>{dots}{ticks}'
            f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle" font-size="10">'
            f"rated games (0 … {n - 1}; 0: the prior)</text></svg>")


def bot_body(info: Mapping[str, Any], operator: bool) -> str:
    """A bot's page: its rating, the plot, its recent games, its faults."""
    rating = "unrated" if info["rating"] is None else f'{info["rating"]:.2f} ± {info["uncertainty"]:.2f}'
    provisional = " (provisional)" if info["provisional"] else ""
    rows = []
    for f in info["faults"]:
        extra = ""
        if operator:
            extra = f'<td>{escape(f.get("detail", ""))}</td><td><code>{escape(f.get("log_line", ""))}</code></td>'
        rows.append(f'<tr><td><a href="{escape(match_href(f["match_id"]))}">{escape(f["match_id"])}</a></td>'
                    f'<td>{f["seat"]}</td><td>{escape(f["termination"])}</td>{extra}</tr>')
    head = "<th>match</th><th>seat</th><th>fault</th>" + ("<th>reason</th><th>log line</th>" if operator else "")
    note = "" if operator else '<p class="meta">The reasons and log lines are shown to the operator.</p>'
    faults = (f'<table id="faults"><tr>{head}</tr>{"".join(rows)}</table>{note}' if rows
              else '<p id="faults" class="none">no faults</p>')
    return (f'<p class="meta">{info["games"]} games · rating <b id="bot-rating">{escape(rating)}</b>{provisional}</p>'
            f"<section><h2>Rating over time</h2>{rating_plot(info['prior'], info['history'])}</section>"
            f'<section><h2>Recent games</h2>{matches_list("recent", info["recent"])}</section>'
            f"<section><h2>Faults</h2>{faults}</section>")


def signin_body(failed: bool, problem: str = "", name: str = "") -> str:
    """The sign-in forms: a person's (name and password) and the operator's (its token sets a
    cookie; ``Authorization: Bearer`` works too). ``failed``: the operator's token was refused;
    ``problem``: why a person's sign-in was."""
    why = '<p class="error" id="operator-problem">That token carries no operator rights.</p>' if failed else ""
    return (_problem(problem) + '<form method="post" action="/signin" id="person-signin">'
            f'<label>name <input name="name" autocomplete="username" required value="{escape(name)}"></label> '
            '<label>password <input type="password" name="password" autocomplete="current-password" required>'
            '</label> <button>sign in</button></form>'
            '<p>No account? <a href="/signup">Sign up</a>. Playing the computer needs none: '
            '<a href="/play">play</a>.</p>'
            f'<h2>Operator</h2>{why}<form method="post" action="/signin" id="operator-signin"><label>operator token '
            '<input type="password" name="token" autocomplete="off" required></label> '
            "<button>sign in as operator</button></form>")


def signup_body(problem: str = "", name: str = "", *, names: tuple[int, int], passwords: tuple[int, int]) -> str:
    """The sign-up form (``names``, ``passwords``: their shortest and longest lengths)."""
    return (_problem(problem) + '<form method="post" action="/signup" id="signup">'
            f'<label>name <input name="name" autocomplete="username" required minlength="{names[0]}" '
            f'maxlength="{names[1]}" value="{escape(name)}"></label> '
            '<label>password <input type="password" name="password" autocomplete="new-password" required '
            f'minlength="{passwords[0]}" maxlength="{passwords[1]}"></label> <button>sign up</button></form>'
            '<p>Have an account? <a href="/signin">Sign in</a>.</p>')


def _problem(text: str) -> str:
    return f'<p class="error" id="problem">{escape(text)}</p>' if text else ""


def people_body(rows: Sequence[Mapping[str, Any]]) -> str:
    """The people's standings (people's games only; the bots' ladder is apart)."""
    head = "<tr><th>#</th><th>person</th><th>games</th><th>rating</th><th>±</th><th>95% interval</th></tr>"
    body = "".join(
        f'<tr data-person="{escape(r["name"])}"><td>{r["rank"]}</td><td><a href="{escape(person_href(r["name"]))}">'
        f'{escape(r["name"])}</a>{" <span class=tag>provisional</span>" if r["provisional"] else ""}</td>'
        f'<td>{r["games"]}</td><td>{r["rating"]:.2f}</td><td>{r["uncertainty"]:.2f}</td>'
        f'<td>{r["low"]:.1f} … {r["high"]:.1f}</td></tr>' for r in rows)
    return (f'<p>People\'s games are rated apart from the bots\' ladder.</p><table id="people">'
            f'<thead>{head}</thead><tbody>{body or "<tr><td colspan=6>nobody yet</td></tr>"}</tbody></table>')


def person_body(standing: Mapping[str, Any] | None, games: Sequence[Mapping[str, Any]]) -> str:
    """A person's people's rating and games, newest first, each linked to its replay."""
    rating = (f'<p id="rating">rating {standing["rating"]:.2f} ± {standing["uncertainty"]:.2f} over '
              f'{standing["games"]} people\'s games{" (provisional)" if standing["provisional"] else ""}</p>'
              if standing is not None else "")
    items = []
    for g in games:
        who = " vs ".join(escape(s["name"]) + (f' ({s["place"]})' if s["place"] is not None else "")
                          for s in g["seats"])
        items.append(f'<li data-match="{escape(g["match_id"])}"><a href="{escape(match_href(g["match_id"]))}">'
                     f'{escape(g["match_id"])}</a> · {escape(g["game"])} {escape(g["preset"])} · {who} · '
                     f'{escape(g["termination"])}</li>')
    return rating + f'<ul id="games" class="matches">{"".join(items) or "<li class=none>no games yet</li>"}</ul>'



def message_body(text: str) -> str:
    """A page that only says something (not found, refused)."""
    return f'<p class="error">{escape(text)}</p>'
