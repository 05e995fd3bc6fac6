"""The live web's pages, rendered on the server: plain HTML with one style sheet and one script
served by the server itself (``/static/``; no inline script or style, so the strict
Content-Security-Policy holds), every text a bot chose escaped, every address built with its
parts quoted. The script fills in what changes (standings, matches, the spectator's view) with
``textContent`` only."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from arena.competition.ratings import Z95
from arena.replays.page_parts import SEAT_COLORS, escape
from arena.web.i18n import Lang, script_block, switch

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


def layout(tr: Lang, title: str, body: str, *, page: str, operator: bool, source: str,
           data: Mapping[str, str] | None = None, person: str | None = None,
           query: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page in ``tr``'s language: the header with the navigation (who is signed in:
    ``person``, the operator) and the language switch (to this page with its ``query``), ``body``,
    the scripts with their strings."""
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
    out = f'<form method="post" action="/signout" class="door"><button>{escape(tr._("sign out"))}</button></form>'
    if person is not None:
        link = f'<a href="{escape(person_href(person))}">{escape(person)}</a>'
        who = tr._("signed in as {person} (operator)") if operator else tr._("signed in as {person}")
        door = f'<span class="door" id="who">{escape(who).replace("{person}", link)}</span>{out}'
    elif operator:
        door = out
    else:
        door = (f'<a href="/signin" class="door" id="signin-link">{escape(tr._("sign in"))}</a>'
                f'<a href="/signup" class="door">{escape(tr._("sign up"))}</a>')
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{tr.code}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f'<title>{escape(title)} — Gin Arena</title><link rel="stylesheet" href="{STYLE}"></head>\n'
        f'<body data-page="{escape(page)}"{attrs}>\n'
        f'<header><nav><a href="/">{escape(tr._("standings"))}</a> · <a href="/matches">{escape(tr._("matches"))}</a>'
        f' · <a href="/people">{escape(tr._("people"))}</a> · '
        f'<a href="/api/openapi.json">API</a>{door}{language_switch(tr, query)}</nav>'
        f'<div class="source">{escape(source)}</div></header>\n'
        f"<main>\n<h1>{escape(title)}</h1>\n{body}\n</main>\n"
        f'{script_block(tr)}<script src="{SCRIPT}" defer></script>\n</body></html>\n'
    )


def language_switch(tr: Lang, query: Sequence[tuple[str, str]] = ()) -> str:
    """The header's links to this page (its ``query`` kept) in each language (``?lang=``: kept in
    a cookie)."""
    kept = [(k, v) for k, v in query if k != "lang"]
    links = [f'<b lang="{code}">{escape(name)}</b>' if current
             else f'<a href="?{escape(urlencode([*kept, ("lang", code)]))}" lang="{code}" hreflang="{code}">'
                  f"{escape(name)}</a>"
             for code, name, current in switch(tr.code)]
    return f'<span class="door" id="languages">{" · ".join(links)}</span>'


def _cells(*names: str) -> str:
    return "".join(f"<th>{escape(n)}</th>" for n in names)


def standings_table(tr: Lang, rows: Sequence[Mapping[str, Any]]) -> str:
    """The standings (the script redraws the body on each update)."""
    cells = _cells("#", tr._("bot"), tr._("games"), tr._("rating"), "±", tr._("95% interval"), tr._("state"))
    head = f"<tr>{cells}</tr>"
    return (f'<table id="standings"><thead>{head}</thead>'
            f'<tbody>{"".join(_standing(tr, r) for r in rows)}</tbody></table>')


def _tag(tr: Lang) -> str:
    return f' <span class="tag">{escape(tr._("provisional"))}</span>'


def _rating_cells(tr: Lang, r: Mapping[str, Any]) -> str:
    return (f'<td>{tr.number(r["games"])}</td><td>{tr.decimal(r["rating"], 2)}</td>'
            f'<td>{tr.decimal(r["uncertainty"], 2)}</td>'
            f'<td>{tr.decimal(r["low"], 1)} … {tr.decimal(r["high"], 1)}</td>')


def _standing(tr: Lang, r: Mapping[str, Any]) -> str:
    provisional = _tag(tr) if r["provisional"] else ""
    return (f'<tr data-bot="{escape(r["bot"])}" data-games="{r["games"]}"><td>{tr.number(r["rank"])}</td>'
            f'<td><a href="{escape(bot_href(r["bot"]))}">{escape(r["bot"])}</a>{provisional}</td>'
            f'{_rating_cells(tr, r)}<td>{escape(_state(tr, r))}</td></tr>')


def _state(tr: Lang, r: Mapping[str, Any]) -> str:
    state = tr.state(str(r["state"]))
    return f'{state} ({r["reason"]})' if r["reason"] else state


def matches_list(tr: Lang, element_id: str, matches: Sequence[Mapping[str, Any]]) -> str:
    """A list of matches (running or finished), each linked to its page."""
    items = []
    vs = escape(tr._(" vs "))
    for m in matches:
        who = vs.join(escape(p) for p in m["players"])
        end = f' · {escape(m["termination"])}' if m.get("termination") else ""
        winner = f' · {escape(tr._("winner"))} <b>{escape(m["winner"])}</b>' if m.get("winner") else ""
        items.append(f'<li data-match="{escape(m["match_id"])}"><a href="{escape(match_href(m["match_id"]))}">'
                     f'{escape(m["match_id"])}</a> · {escape(m["game"])} · {who} · {escape(tr.state(m["state"]))}'
                     f"{winner}{end}</li>")
    none = f'<li class="none">{escape(tr._("none"))}</li>'
    return f'<ul id="{element_id}" class="matches">{"".join(items) or none}</ul>'


def front_page(tr: Lang, rows: Sequence[Mapping[str, Any]], running: Sequence[Mapping[str, Any]],
               recent: Sequence[Mapping[str, Any]]) -> str:
    """The standings, the running matches and the recent ones (kept up to date by the script)."""
    return (f"<section><h2>{escape(tr._('Standings'))}</h2>{standings_table(tr, rows)}</section>\n"
            f'<section><h2>{escape(tr._("Running"))}</h2>{matches_list(tr, "running", running)}</section>\n'
            f'<section><h2>{escape(tr._("Recent"))}</h2>{matches_list(tr, "recent", recent)}</section>')


def matches_page(tr: Lang, running: Sequence[Mapping[str, Any]], recent: Sequence[Mapping[str, Any]],
                 next_before: int | None) -> str:
    """Every running match and a page of finished ones."""
    more = (f'<p><a id="older" href="/matches?before={next_before}">{escape(tr._("older matches"))}</a></p>'
            if next_before else "")
    return (f'<section><h2>{escape(tr._("Running"))}</h2>{matches_list(tr, "running", running)}</section>\n'
            f'<section><h2>{escape(tr._("Finished"))}</h2>{matches_list(tr, "recent", recent)}{more}</section>')


def live_page(tr: Lang, match: Mapping[str, Any]) -> str:
    """A running match's spectator view: the script draws each view the stream sends."""
    who = escape(tr._(" vs ")).join(escape(p) for p in match["players"])
    return (f'<p class="meta">{escape(match["game"])} · {who} · <span id="live-state">'
            f'{escape(tr.state(match["state"]))}</span> · <span id="live-position"></span></p>\n'
            '<div id="live" class="felt"><div id="live-scores"></div><div id="live-seats"></div>'
            '<div id="live-table"></div><div id="live-piles"></div><div id="live-last"></div>'
            '<div id="live-end"></div></div>\n'
            f'<p id="live-replay" class="hidden"><a href="{escape(match_href(match["match_id"]))}">'
            f'{escape(tr._("the replay"))}</a></p>')


def rating_plot(tr: Lang, prior: Mapping[str, Any], rated: Sequence[Mapping[str, Any]]) -> str:
    """An SVG of a bot's rating from the ``prior`` through each of its ``rated`` games, with its
    95% band."""
    width, height = PLOT_SIZE
    left, right, top, bottom = 44, 10, 10, 24
    if not rated:
        return f'<p id="rating-plot" class="none">{escape(tr._("no rated game yet"))}</p>'
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
    ticks = "".join(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{tr.number(v)}</text>'
                    for v in (lo, (lo + hi) / 2, hi))
    caption = tr._("rated games (0 … {last}; 0: the prior)", last=tr.number(n - 1))
    return (f'<svg id="rating-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(tr._("rating after each rated game"))}" '
            f'data-points="{n - 1}"><rect x="{left}" y="{top}" width="{width - left - right}" '
            f'height="{height - top - bottom}" fill="#fbfbf8" stroke="#ccc"/>'
            f'<polygon points="{" ".join(band)}" fill="{SEAT_COLORS[0]}" fill-opacity="0.15"/>'
            f'<polyline points="{line}" fill="none" stroke="{SEAT_COLORS[0]}" stroke-width="2"/>{dots}{ticks}'
            f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle" font-size="10">'
            f"{escape(caption)}</text></svg>")


def bot_body(tr: Lang, info: Mapping[str, Any], operator: bool) -> str:
    """A bot's page: its rating, the plot, its recent games, its faults."""
    rating = (tr._("unrated") if info["rating"] is None
              else f'{tr.decimal(info["rating"], 2)} ± {tr.decimal(info["uncertainty"], 2)}')
    provisional = f' ({tr._("provisional")})' if info["provisional"] else ""
    rows = []
    for f in info["faults"]:
        extra = ""
        if operator:
            extra = f'<td>{escape(f.get("detail", ""))}</td><td><code>{escape(f.get("log_line", ""))}</code></td>'
        rows.append(f'<tr><td><a href="{escape(match_href(f["match_id"]))}">{escape(f["match_id"])}</a></td>'
                    f'<td>{f["seat"]}</td><td>{escape(f["termination"])}</td>{extra}</tr>')
    head = _cells(tr._("match"), tr._("seat"), tr._("fault")) + (_cells(tr._("reason"), tr._("log line"))
                                                                    if operator else "")
    note = ("" if operator else
            f'<p class="meta">{escape(tr._("The reasons and log lines are shown to the operator."))}</p>')
    faults = (f'<table id="faults"><tr>{head}</tr>{"".join(rows)}</table>{note}' if rows
              else f'<p id="faults" class="none">{escape(tr._("no faults"))}</p>')
    games = escape(tr.ngettext("{n} game", "{n} games", info["games"]))
    return (f'<p class="meta">{games} · {escape(tr._("rating"))} <b id="bot-rating">{escape(rating)}</b>'
            f'{escape(provisional)}</p>'
            f"<section><h2>{escape(tr._('Rating over time'))}</h2>"
            f"{rating_plot(tr, info['prior'], info['history'])}</section>"
            f'<section><h2>{escape(tr._("Recent games"))}</h2>{matches_list(tr, "recent", info["recent"])}</section>'
            f"<section><h2>{escape(tr._('Faults'))}</h2>{faults}</section>")


def _label(text: str, field: str) -> str:
    return f"<label>{escape(text)} {field}</label>"


def signin_body(tr: Lang, failed: bool, problem: str = "", name: str = "") -> str:
    """The sign-in forms: a person's (name and password) and the operator's (its token sets a
    cookie; ``Authorization: Bearer`` works too). ``failed``: the operator's token was refused;
    ``problem``: why a person's sign-in was (already in ``tr``'s language)."""
    why = (f'<p class="error" id="operator-problem">{escape(tr._("That token carries no operator rights."))}</p>'
           if failed else "")
    sign_in = escape(tr._("sign in"))
    account = (escape(tr._("No account? {signup}. Playing the computer needs none: {play}."))
               .replace("{signup}", f'<a href="/signup">{escape(tr._("Sign up"))}</a>')
               .replace("{play}", f'<a href="/play">{escape(tr._("play"))}</a>'))
    return (_problem(problem) + '<form method="post" action="/signin" id="person-signin">'
            + _label(tr._("name"), f'<input name="name" autocomplete="username" required value="{escape(name)}">')
            + " " + _label(tr._("password"), '<input type="password" name="password" '
                                           'autocomplete="current-password" required>')
            + f" <button>{sign_in}</button></form><p>{account}</p>"
            f'<h2>{escape(tr._("Operator"))}</h2>{why}<form method="post" action="/signin" id="operator-signin">'
            + _label(tr._("operator token"), '<input type="password" name="token" autocomplete="off" required>')
            + f" <button>{escape(tr._('sign in as operator'))}</button></form>")


def signup_body(tr: Lang, problem: str = "", name: str = "", *, names: tuple[int, int],
                passwords: tuple[int, int]) -> str:
    """The sign-up form (``names``, ``passwords``: their shortest and longest lengths)."""
    have = (escape(tr._("Have an account? {signin}."))
            .replace("{signin}", f'<a href="/signin">{escape(tr._("Sign in"))}</a>'))
    return (_problem(problem) + '<form method="post" action="/signup" id="signup">'
            + _label(tr._("name"), f'<input name="name" autocomplete="username" required minlength="{names[0]}" '
                                 f'maxlength="{names[1]}" value="{escape(name)}">')
            + " " + _label(tr._("password"), '<input type="password" name="password" autocomplete="new-password" '
                                           f'required minlength="{passwords[0]}" maxlength="{passwords[1]}">')
            + f" <button>{escape(tr._('sign up'))}</button></form><p>{have}</p>")


def _text(text: str) -> str:
    """Text between tags (quotes need no escaping there)."""
    return html.escape(text, quote=False)


def _problem(text: str) -> str:
    return f'<p class="error" id="problem">{escape(text)}</p>' if text else ""


def people_body(tr: Lang, rows: Sequence[Mapping[str, Any]]) -> str:
    """The people's standings (people's games only; the bots' ladder is apart)."""
    head = f'<tr>{_cells("#", tr._("person"), tr._("games"), tr._("rating"), "±", tr._("95% interval"))}</tr>'
    body = "".join(
        f'<tr data-person="{escape(r["name"])}"><td>{tr.number(r["rank"])}</td>'
        f'<td><a href="{escape(person_href(r["name"]))}">{escape(r["name"])}</a>'
        f'{_tag(tr) if r["provisional"] else ""}</td>{_rating_cells(tr, r)}</tr>' for r in rows)
    nobody = f'<tr><td colspan="6">{escape(tr._("nobody yet"))}</td></tr>'
    apart = _text(tr._("People's games are rated apart from the bots' ladder."))
    return (f'<p>{apart}</p><table id="people">'
            f'<thead>{head}</thead><tbody>{body or nobody}</tbody></table>')


def person_body(tr: Lang, standing: Mapping[str, Any] | None, games: Sequence[Mapping[str, Any]]) -> str:
    """A person's people's rating and games, newest first, each linked to its replay."""
    rating = ""
    if standing is not None:
        text = tr.ngettext("rating {rating} ± {uncertainty} over {n} people's game",
                           "rating {rating} ± {uncertainty} over {n} people's games", standing["games"],
                           rating=tr.decimal(standing["rating"], 2),
                           uncertainty=tr.decimal(standing["uncertainty"], 2))
        provisional = f' ({tr._("provisional")})' if standing["provisional"] else ""
        rating = f'<p id="rating">{_text(text + provisional)}</p>'
    items = []
    vs = escape(tr._(" vs "))
    for g in games:
        who = vs.join(escape(s["name"]) + (f' ({s["place"]})' if s["place"] is not None else "")
                      for s in g["seats"])
        when = (f' · <time>{escape(tr.when(float(g["finished_at"])))}</time>'
                if g.get("finished_at") is not None else "")
        items.append(f'<li data-match="{escape(g["match_id"])}"><a href="{escape(match_href(g["match_id"]))}">'
                     f'{escape(g["match_id"])}</a> · {escape(g["game"])} {escape(g["preset"])} · {who} · '
                     f'{escape(g["termination"])}{when}</li>')
    none = f'<li class="none">{escape(tr._("no games yet"))}</li>'
    return rating + f'<ul id="games" class="matches">{"".join(items) or none}</ul>'


def message_body(text: str) -> str:
    """A page that only says something (not found, refused), ``text`` already translated."""
    return f'<p class="error">{escape(text)}</p>'
