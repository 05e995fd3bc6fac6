"""A run's results as one HTML page: ``RUN_DIR/index.html`` with the standings (Elo with 95%
intervals), a rating chart, the crosstable and every game linked to its HTML replay
(``RUN_DIR/html/<match_id>.html``, written next to it).

The results come from the run's ``results.json`` (what ``arena tournament`` / ``arena demo``
write). A simpler file is accepted too — a JSON list of games (or ``{"games": [...]}``), each with
``players``, ``winner`` (a name, or ``winner_seat``), ``points`` and ``replay`` (or
``replay_path``) — and the standings and crosstable are then computed here. Pages are
self-contained (no network).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from arena.exit_codes import EXIT_OK, EXIT_USAGE
from arena.model.paths import find_replay
from arena.model.records import Outcome
from arena.replays.html import write_replay_html
from arena.replays.model import ReplayModelError, load
from arena.results.report import PlayedGame, build_report
from arena.results.stats import format_elo
from arena.store import outcome_from_plain
from referee import games as referee_games
from referee.lowlevel import write_atomic


class ResultsError(ValueError):
    """No usable results in a run folder."""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else None


# ----------------------------------------------------------------------------------------------
# reading the results
# ----------------------------------------------------------------------------------------------
def compute_report(games: list[dict[str, Any]]) -> dict[str, Any]:
    """Standings and crosstable from a plain list of games (each game is one scoring unit), by
    the arena's one standings engine."""
    bots: list[str] = []
    for g in games:
        for p in g.get("players") or []:
            if str(p) not in bots:
                bots.append(str(p))
    played = [PlayedGame(i, "", outcome_from_plain(g, i)) for i, g in enumerate(games) if g.get("players")]
    report = build_report(bots, played, duplicate=False)
    return {**report, "games": games}


def load_results(run_dir: Path) -> dict[str, Any]:
    """The run's report: ``results.json`` as the arena writes it, or computed from a list of games."""
    path = run_dir / "results.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(f"{path}: no results file (run `arena report {run_dir}` to write it)") from None
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: {e}") from None
    if isinstance(data, list):
        data = {"games": data}
    if not isinstance(data, dict) or not isinstance(data.get("games"), list):
        raise ResultsError(f"{path}: expected the arena's results (with a list of games) or a list of games")
    games = [g for g in data["games"] if isinstance(g, dict)]
    if not isinstance(data.get("standings"), list) or not isinstance(data.get("crosstable"), dict):
        computed = compute_report(games)
        computed.update({k: v for k, v in data.items() if k not in computed or k == "games"})
        return computed
    return data


def _replay_file(g: dict[str, Any], run_dir: Path) -> Path | None:
    return find_replay(str(g.get("replay") or g.get("replay_path") or ""), run_dir, str(g.get("match_id") or ""))


def _last_line_hash(path: Path) -> str:
    data = path.read_bytes().rstrip(b"\n")
    return hashlib.sha256(data.rsplit(b"\n", 1)[-1]).hexdigest()


# ----------------------------------------------------------------------------------------------
# the page
# ----------------------------------------------------------------------------------------------
def rating_chart(rows: list[dict[str, Any]], width: int = 640) -> str:
    """Inline SVG: each bot's Elo as a dot with its 95% interval (an arrow where it is unbounded)."""
    if not rows:
        return ""
    row_h, left, right, top = 26, 120, 20, 24
    height = top + row_h * len(rows) + 24
    vals = [v for r in rows for v in (r["elo"], r["low"], r["high"]) if v is not None]
    lo, hi = (min(vals), max(vals)) if vals else (-100.0, 100.0)
    lo, hi = min(lo, -50.0), max(hi, 50.0)
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return left + (width - left - right) * (v - lo) / (hi - lo)

    out = [f'<svg id="rating-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img" aria-label="ratings with 95% intervals">',
           f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top - 6}" y2="{height - 20}" stroke="#999" '
           'stroke-dasharray="3 3"/>']
    step = 10 ** max(1, int(math.log10(max(1.0, hi - lo))))
    if (hi - lo) / step < 3:
        step //= 2
    t = math.ceil(lo / step) * step
    while t <= hi:
        out.append(f'<text x="{x(t):.1f}" y="{height - 6}" text-anchor="middle" font-size="10">{format_elo(t)}</text>')
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{height - 22}" y2="{height - 18}" stroke="#666"/>')
        t += step
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="12">{_e(r["bot"])}</text>')
        a = x(r["low"]) if r["low"] is not None else x(lo)
        b = x(r["high"]) if r["high"] is not None else x(hi)
        out.append(f'<line x1="{a:.1f}" x2="{b:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#2b6cb0" stroke-width="3"/>')
        if r["low"] is None:
            out.append(f'<path d="M{a:.1f},{y:.1f} l8,-5 v10 z" fill="#2b6cb0"/>')
        if r["high"] is None:
            out.append(f'<path d="M{b:.1f},{y:.1f} l-8,-5 v10 z" fill="#2b6cb0"/>')
        if r["elo"] is not None:
            out.append(f'<circle cx="{x(r["elo"]):.1f}" cy="{y:.1f}" r="5" fill="#c05621"><title>{_e(r["bot"])}: '
                       f'{format_elo(r["elo"])}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def _chart_rows(report: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    mle = report.get("ratings_mle")
    if isinstance(mle, list) and mle:
        rows = []
        for r in mle:
            elo, margin = _num(r.get("elo")), _num(r.get("margin"))
            rows.append({"bot": r.get("bot"), "elo": elo,
                         "low": elo - margin if elo is not None and margin is not None else None,
                         "high": elo + margin if elo is not None and margin is not None else None})
        return rows, "Maximum-likelihood ratings (Bradley–Terry, mean 0) with 95% intervals"
    rows = [{"bot": s.get("bot"), "elo": _num(s.get("elo")), "low": _num(s.get("elo_low")),
             "high": _num(s.get("elo_high"))} for s in report.get("standings", [])]
    return rows, "Elo against the field with 95% intervals"


def _elo_cell(s: dict[str, Any]) -> str:
    elo, low, high = _num(s.get("elo")), _num(s.get("elo_low")), _num(s.get("elo_high"))
    if elo is None:
        text = "—" if not s.get("games") else "+∞" if float(s.get("score") or 0) >= 0.5 else "−∞"
    else:
        text = format_elo(elo)  # (never "-0": an Elo that rounds to 0 is "0")
    lo_t = format_elo(low) if low is not None else "−∞"
    hi_t = format_elo(high) if high is not None else "+∞"
    return f"{_e(text)} <small>[{lo_t}, {hi_t}]</small>"


PAGE_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f5f0;color:#1d1d1d}
header{padding:12px 20px;background:#22362b;color:#f3f1ea}header h1{margin:0;font-size:20px}
header .meta{font-size:12px;opacity:.85}
section{padding:4px 20px 10px}h2{font-size:16px;margin:16px 0 6px}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
#crosstable td.self,#head-to-head td.self{background:#eee}
#crosstable td.win,#head-to-head td.win{background:#e6f4ea}#crosstable td.loss,#head-to-head td.loss{background:#fde8e8}
a{color:#1f5f99}code{font-size:11px}
.bad{color:#b00020;font-weight:600}.ok{color:#1b7f3b}
.note{font-size:12px;color:#555}
"""


def _standings_html(report: dict[str, Any]) -> str:
    srows = []
    for s in report.get("standings", []):
        srows.append(
            f"<tr><td class='num'>{_e(s.get('rank', ''))}</td><td>{_e(s.get('bot'))}</td>"
            f"<td class='num'>{_elo_cell(s)}</td><td class='num'>{_e(s.get('games', ''))}</td>"
            f"<td class='num'>{_e(s.get('wins', ''))}–{_e(s.get('losses', ''))}"
            + (f"–{_e(s['no_result'])}" if s.get("no_result") else "")
            + f"</td><td class='num'>{float(s.get('score', 0.5)) * 100:.1f}%</td>"
            f"<td class='num'>{_e(s.get('points_for', ''))}</td><td class='num'>{_e(s.get('points_against', ''))}</td>"
            f"<td class='num'>{_e(s.get('faults', ''))}</td></tr>"
        )
    standings = ("<table id='standings'><thead><tr><th class='num'>#</th><th>bot</th><th class='num'>Elo [95%]</th>"
                 "<th class='num'>games</th><th class='num'>won–lost</th><th class='num'>score</th>"
                 "<th class='num'>points for</th><th class='num'>against</th><th class='num'>faults</th></tr></thead>"
                 f"<tbody>{''.join(srows)}</tbody></table>")
    return standings


def _crosstable_html(report: dict[str, Any], bots: list[str]) -> str:
    cross = report.get("crosstable") or {}
    head = "".join(f"<th>{_e(b)}</th>" for b in bots)
    crows = []
    for a in bots:
        cells = []
        for b in bots:
            if a == b:
                cells.append("<td class='self'>—</td>")
                continue
            c = (cross.get(a) or {}).get(b)
            if not c:
                cells.append("<td></td>")
                continue
            w, lo = c.get("wins", 0), c.get("losses", 0)
            cls = "win" if w > lo else "loss" if lo > w else ""
            extra = f" <small>({c['unit_score']:g}/{c['units']})</small>" if "unit_score" in c and "units" in c else ""
            cells.append(f"<td class='num {cls}' title='{_e(a)} vs {_e(b)}: {c.get('games', 0)} games'>{w}–{lo}"
                         f"{extra}</td>")
        crows.append(f"<tr><th>{_e(a)}</th>{''.join(cells)}</tr>")
    crosstable = (f"<table id='crosstable'><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(crows)}</tbody>"
                  "</table><p class='note'>Row bot's game wins–losses against the column bot"
                  " (pair score over pairs in brackets when duplicate deals are used).</p>")
    return crosstable


def _seats_cell(o: Outcome) -> str:
    """A game's players by seat, each with its place."""
    return ", ".join(f"{_e(p)} <small>({_e(place)})</small>" for p, place in zip(o.players, o.places, strict=True))


def _games_html(games: list[dict[str, Any]], links: dict[int, str], hashes: dict[int, str]) -> str:
    grows = []
    for i, g in enumerate(games):
        o = outcome_from_plain(g, i)
        pts = g.get("points") or []
        mid = str(g.get("match_id") or f"game {i}")
        link = links.get(i)
        name = f"<a href='{_e(link)}'>{_e(mid)}</a>" if link else _e(mid)
        want = str(g.get("replay_hash") or "")
        have = hashes.get(i)
        if have is None:
            check = "<span class='note'>no replay</span>"
        elif want and have != want:
            check = f"<span class='bad' title='results: {_e(want)}; file: {_e(have)}'>hash differs</span>"
        else:
            check = f"<span class='ok' title='{_e(have)}'>✓ {_e(have[:12])}…</span>"
        grows.append(
            f"<tr><td class='num'>{_e(g.get('idx', i))}</td><td>{name}</td><td>{_seats_cell(o)}</td>"
            f"<td>{_e(o.winner_name or '—')}</td>"
            f"<td class='num'>{'–'.join(_e(p) for p in pts)}</td><td>{_end_cell(g)}</td>"
            f"<td class='num'>{_e(g.get('deals') if g.get('deals') is not None else '')}</td><td>{check}</td></tr>"
        )
    games_table = ("<table id='games'><thead><tr><th class='num'>#</th><th>match (replay)</th><th>seats (place)</th>"
                   "<th>winner</th><th class='num'>points</th><th>end</th><th class='num'>deals</th>"
                   f"<th>final hash</th></tr></thead><tbody>{''.join(grows)}</tbody></table>")
    return games_table


def _end_cell(g: dict[str, Any]) -> str:
    """How a game ended; a fault with its detail (which bot, how — a resource limit exceeded)."""
    end = _e(g.get("termination", ""))
    detail = str(g.get("detail") or "")
    return f"{end}<br><small class='note'>{_e(detail)}</small>" if detail and end != "normal" else end


def _ranking_html(report: dict[str, Any]) -> str:
    """The ranking: places and points per bot, and the Plackett–Luce ratings (a report written
    before every report had one: nothing)."""
    rows = report.get("ranking")
    if not isinstance(rows, list) or not rows:
        return ""
    body = "".join(
        f"<tr><td class='num'>{_e(r.get('rank'))}</td><td>{_e(r.get('bot'))}</td>"
        f"<td class='num'>{float(r.get('mu', 0)):.1f} <small>[{float(r.get('low', 0)):.1f}, "
        f"{float(r.get('high', 0)):.1f}]</small></td><td class='num'>{_e(r.get('games'))}</td>"
        f"<td class='num'>{_e(r.get('seats'))}</td><td class='num'>{_e(r.get('firsts'))}</td>"
        f"<td class='num'>{_e(r.get('mean_place'))}</td><td class='num'>{_e(r.get('points'))}</td></tr>"
        for r in rows if isinstance(r, dict))
    return ("<section><h2>Ranking</h2><table id='ranking'><thead><tr><th class='num'>#</th><th>bot</th>"
            "<th class='num'>rating [95%]</th><th class='num'>games</th><th class='num'>seats</th>"
            "<th class='num'>firsts</th><th class='num'>mean place</th><th class='num'>points</th></tr></thead>"
            f"<tbody>{body}</tbody></table><p class='note'>{_e(report.get('seats'))} seats a table; rating: "
            "openskill's Plackett–Luce mu with mu ± 1.96 sigma.</p></section>")


def _rating_text(value: object) -> str:
    """A rating cell's number (``∞`` where the interval is unbounded)."""
    v = _num(value)
    return "∞" if v is None else f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def _ratings_html(report: dict[str, Any]) -> str:
    """Every chosen rater's table (``results.json``'s ``ratings``), named by the rater, drawn the
    same way whichever rater it is."""
    out = []
    for block in report.get("ratings") or []:
        if not isinstance(block, dict):
            continue
        rows = [r for r in block.get("rows") or [] if isinstance(r, dict)]
        extras = sorted({k for r in rows for k in r} - {"rank", "bot", "rating", "low", "high", "margin", "count"})
        body = "".join(
            f"<tr><td class='num'>{_e(r.get('rank'))}</td><td>{_e(r.get('bot'))}</td>"
            f"<td class='num'>{_rating_text(r.get('rating'))} <small>[{_rating_text(r.get('low'))}, "
            f"{_rating_text(r.get('high'))}]</small></td><td class='num'>{_e(r.get('count'))}</td>"
            + "".join(f"<td class='num'>{_e(r.get(k, ''))}</td>" for k in extras) + "</tr>"
            for r in rows)
        heads = "".join(f"<th class='num'>{_e(k)}</th>" for k in extras)
        out.append(f"<section><h2>Ratings: {_e(block.get('title'))}</h2><table id='ratings-{_e(block.get('rater'))}'>"
                   "<thead><tr><th class='num'>#</th><th>bot</th><th class='num'>rating [95%]</th>"
                   f"<th class='num'>counted</th>{heads}</tr></thead><tbody>{body}</tbody></table></section>")
    return "".join(out)


def _head_to_head_html(report: dict[str, Any], bots: list[str]) -> str:
    """How often each bot finished ahead of each other (a report written before every report had
    one: nothing)."""
    h2h = report.get("head_to_head")
    if not isinstance(h2h, dict) or not h2h:
        return ""
    head = "".join(f"<th>{_e(b)}</th>" for b in bots)
    rows = []
    for a in bots:
        cells = []
        for b in bots:
            c = (h2h.get(a) or {}).get(b)
            if a == b:
                cells.append("<td class='self'>—</td>")
            elif not c:
                cells.append("<td></td>")
            else:
                cls = "win" if c["ahead"] > c["behind"] else "loss" if c["behind"] > c["ahead"] else ""
                cells.append(f"<td class='num {cls}' title='{c['meetings']} meetings, {c['level']} level'>"
                             f"{c['ahead']}–{c['behind']}</td>")
        rows.append(f"<tr><th>{_e(a)}</th>{''.join(cells)}</tr>")
    return (f"<section><h2>Head to head</h2><table id='head-to-head' class='crosstable'><thead><tr><th></th>{head}"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table><p class='note'>How often the row bot finished "
            "ahead–behind the column bot.</p></section>")


def results_page(run_dir: Path, report: dict[str, Any], links: dict[int, str], hashes: dict[int, str]) -> str:
    """The HTML of ``index.html``."""
    run = report.get("run") if isinstance(report.get("run"), dict) else {}
    assert isinstance(run, dict)
    title = str(run.get("run_id") or run_dir.name)
    rules = run.get("rules") if isinstance(run.get("rules"), dict) else {}
    meta_bits = []
    if run.get("game"):
        meta_bits.append(f"game {referee_games.display_name(str(run['game']))}, {run.get('seats', 2)} seats")
    if run.get("format"):
        meta_bits.append(f"{run['format']}, {run.get('games', '?')} games per table"
                         + (", duplicate deals" if run.get("duplicate") else ""))
    if rules:
        meta_bits.append(f"rules {rules.get('name', '?')} (target {rules.get('target', '?')})")
    if run.get("time_control"):
        meta_bits.append(f"time control {run['time_control']}")
    if run.get("fault_policy"):
        meta_bits.append(f"faults: {run['fault_policy']}")
    if run.get("status"):
        meta_bits.append(f"status {run['status']}")
    games = [g for g in report.get("games", []) if isinstance(g, dict)]
    meta_bits.append(f"{len(games)} games played")
    bots = [str(b) for b in report.get("bots") or []] or sorted({str(p) for g in games for p in g.get("players", [])})
    standings = _standings_html(report)
    chart_rows, chart_title = _chart_rows(report)
    crosstable = _crosstable_html(report, bots)
    games_table = _games_html(games, links, hashes)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width'>"
        f"<title>{_e(title)} — results</title><style>{PAGE_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><div class='meta'>{_e(' · '.join(meta_bits))}</div></header>"
        f"<section><h2>Standings</h2>{standings}</section>"
        f"{_ranking_html(report)}{_head_to_head_html(report, bots)}"
        f"<section><h2>{_e(chart_title)}</h2>{rating_chart(chart_rows)}</section>{_ratings_html(report)}"
        f"<section><h2>Crosstable</h2>{crosstable}</section>"
        f"<section><h2>Games</h2>{games_table}<p class='note'>Each match links to its replay page. The final hash "
        "is the SHA-256 of the replay's last line (checked against the results file here); verify everything "
        f"with <code>arena audit {_e(run_dir)}</code>.</p></section>"
        "</body></html>\n"
    )


def write_results_page(run_dir: Path, *, replays: bool = True) -> Path:
    """Write ``run_dir/index.html`` (and, with ``replays``, ``run_dir/html/<match_id>.html`` for each
    game whose replay is readable); returns the index's path."""
    report = load_results(run_dir)
    games = [g for g in report.get("games", []) if isinstance(g, dict)]
    links: dict[int, str] = {}
    hashes: dict[int, str] = {}
    for i, g in enumerate(games):
        path = _replay_file(g, run_dir)
        if path is None:
            continue
        try:
            hashes[i] = _last_line_hash(path)
        except OSError:
            continue
        if not replays:
            links[i] = os.path.relpath(path, run_dir)
            continue
        try:
            view = load(path)
        except ReplayModelError:
            links[i] = os.path.relpath(path, run_dir)  # at least the raw replay
            continue
        name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in (view.match_id or path.stem))
        out = run_dir / "html" / f"{name}.html"
        write_replay_html(view, out, back_link="../index.html")
        links[i] = f"html/{name}.html"
    index = run_dir / "index.html"
    write_atomic(index, results_page(run_dir, report, links, hashes).encode())
    return index


# ----------------------------------------------------------------------------------------------
# the command
# ----------------------------------------------------------------------------------------------
def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``html`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write a run's results page (index.html) with every game's HTML replay",
        description=(
            "Write RUN_DIR/index.html: the standings (Elo with 95% intervals), a rating chart, the\n"
            "crosstable and every game, each linked to its replay page RUN_DIR/html/<match_id>.html.\n"
            "Self-contained pages (no network). Reads RUN_DIR/results.json (or a plain list of games)."
        ),
        epilog="Example:\n  arena html runs/demo-20250101-120000 && xdg-open runs/demo-20250101-120000/index.html",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run folder")
    p.add_argument("--no-replays", action="store_true", help="link the raw replay files instead of writing pages")
    return p


def run(run_dir: Path, *, replays: bool = True) -> int:
    """``arena html RUN_DIR`` (``replays=False``: ``--no-replays``); the exit code."""
    if not run_dir.is_dir():
        print(f"arena html: {run_dir}: no such folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        index = write_results_page(run_dir, replays=replays)
    except ResultsError as e:
        print(f"arena html: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {index}")
    return EXIT_OK
