"""``arena replay REPLAY --html OUT``: one self-contained HTML page to step through a match.

No network: the CSS, the script and the score chart (SVG) are inline, the positions are embedded
as JSON. The page shows the table (both hands with melds grouped, the discard pile, the stock),
step controls (buttons; ← → moves, ↑ ↓ deals, Home/End; a deal selector), the score sheet and a
chart of the scores through the match. ``OUT#step=K`` opens at position K of the match,
``OUT#deal=D`` (from 1) at the start of deal D, ``OUT#deal=D&move=M`` at move M of deal D; the
address follows the position shown, so it can be shared. ``&keys=ArrowRight,End,@btn-prev`` presses
keys and clicks buttons after loading (for automated checks of the controls).

For tests and tools the DOM carries the state: ``body[data-position]``, ``#hand-0[data-cards]``
(sorted card texts), ``#discard[data-cards]`` (bottom first), ``#stock-count``, ``#score-0``,
``#deal-end[data-points]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from arena.replays import page_parts, rummy_html, shown_html, steps
from arena.replays.gin_model import DealEnd, DealView, MatchView, Position, end_text, shutout
from arena.replays.model import AnyView, ReplayModelError, load
from arena.replays.page_parts import CHART_JS, CSS, JS_PLURAL, NAV_JS, plural
from arena.replays.page_parts import escape as _e
from arena.replays.page_parts import json_for_script as _json_for_script
from arena.replays.rummy_model import RummyMatchView
from referee import write_atomic
from referee.gin import Card, Meld
from referee.replays import FaultRecord

_VERBS = {
    "pass": "passes the upcard", "take_upcard": "takes the upcard", "draw_stock": "draws from the stock",
    "draw_discard": "takes from the discard pile", "discard": "discards", "knock": "knocks, face down:",
    "big_gin": "declares big gin",
}


def _cards(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [str(c) for c in cards]


def _melds(melds: tuple[Meld, ...]) -> list[list[str]]:
    return [_cards(list(m.cards)) for m in melds]


def _position(view: MatchView, pos: Position) -> dict[str, Any]:
    hands = []
    for seat in range(len(pos.hands)):
        a = pos.arranged(seat)
        hands.append({"m": _melds(a.melds), "x": _cards(list(a.deadwood_cards)), "v": a.deadwood})
    out: dict[str, Any] = {"d": pos.deal_index, "s": pos.step, "h": hands, "p": _cards(list(pos.discard_pile)),
                           "k": pos.stock_size, "t": pos.to_move, "ph": pos.phase}
    if pos.last is not None:
        last = pos.last
        extra = f"{last.think_us / 1000:.1f} ms · clocks {'/'.join(map(str, last.clocks))} ms"
        if last.reshuffled:
            extra += " · the discard pile is shuffled into a new stock"
        out["l"] = {"seat": last.seat, "who": view.players[last.seat] + (" (substitute)" if last.substitute else ""),
                    "verb": _VERBS.get(last.kind, last.action), "card": last.card, "extra": extra}
    faults = view.faults_at.get(pos.index)
    if faults:
        out["f"] = [_fault_text(view, f) for f in faults]
    return out


def _fault_text(view: MatchView, rec: FaultRecord) -> str:
    return f"Fault — {view.seat_name(rec.seat)}: {rec.termination}: {rec.detail} (policy {rec.policy})"


def _end(view: MatchView, end: DealEnd) -> dict[str, Any]:
    return {
        "kind": end.kind, "text": end_text(view, end), "knocker": end.knocker, "winner": end.winner,
        "points": end.points, "scores": list(end.scores),
        "knock_discard": str(end.knock_discard) if end.knock_discard is not None else None,
        "seats": [{"melds": _melds(s.melds), "laid_off": _cards(list(s.laid_off)),
                   "deadwood_cards": _cards(list(s.deadwood_cards)), "deadwood": s.deadwood} for s in end.seats],
    }


def _deal(view: MatchView, deal: DealView) -> dict[str, Any]:
    g = deal.game_end
    game_end = None
    if g is not None:
        t = list(g.totals)
        text = f"Game {g.game} over: {view.seat_name(g.winner)} wins · totals {t[0]}–{t[1]}"
        if shutout(g):
            text += " · shutout"
        if g.forfeit is not None:
            text += f" · forfeit by {view.seat_name(g.forfeit)}"
        game_end = {"text": text, "totals": t}
    return {
        "game": deal.game, "deal": deal.number, "dealer": deal.dealer, "upcard": str(deal.first_upcard),
        "knock_limit": deal.knock_limit, "doubled": deal.doubled, "first": deal.positions[0].index,
        "last": deal.positions[-1].index, "before": list(deal.scores_before),
        "end": _end(view, deal.end) if deal.end is not None else None, "game_end": game_end,
    }


def page_data(view: MatchView) -> dict[str, Any]:
    """Everything the page shows, as JSON-able data."""
    h = view.header
    return {
        "match_id": view.match_id, "players": list(view.players), "bots": list(h.bots),
        "time_control": h.time_control, "fault_policy": h.fault_policy,
        "result": view.outcome_text(), "detail": view.detail, "final_hash": view.final_hash,
        "commitment": h.seed_commitment, "seed": view.seed,
        "deals": [_deal(view, d) for d in view.deals],
        "positions": [_position(view, p) for p in view.positions],
    }


# ----------------------------------------------------------------------------------------------
# static parts: score sheet and chart
# ----------------------------------------------------------------------------------------------
def score_sheet(view: MatchView) -> str:
    names = view.players
    rows = []
    for deal in view.deals:
        end = deal.end
        if end is None:
            result, pts, sc = "unfinished", "", ("", "")
        elif end.kind == "dead":
            result, pts, sc = "dead hand", "0", (str(end.scores[0]), str(end.scores[1]))
        else:
            who = names[end.winner] if end.winner is not None else "?"
            result = {"knock": "knock", "undercut": "undercut", "gin": "gin", "big_gin": "big gin"}[end.kind]
            result += f" — {who}"
            pts, sc = str(end.points), (str(end.scores[0]), str(end.scores[1]))
        rows.append(
            f'<tr id="sheet-row-{deal.index}" data-deal="{deal.index}"><td>{deal.index + 1}</td>'
            f"<td>{deal.game}.{deal.number}</td><td>{_e(names[deal.dealer])}</td><td>{_e(result)}</td>"
            f'<td class="num">{pts}</td><td class="num">{sc[0]}</td><td class="num">{sc[1]}</td></tr>'
        )
        if deal.game_end is not None:
            g = deal.game_end
            t = g.totals
            who = view.seat_name(g.winner)
            note = " (shutout)" if shutout(g) else ""
            note += " (forfeit)" if g.forfeit is not None else ""
            rows.append(f'<tr class="game-total"><td></td><td colspan="4">game {g.game}: {_e(who)} wins{note}'
                        f' — totals with bonuses</td><td class="num">{t[0]}</td><td class="num">{t[1]}</td></tr>')
    head = (f"<tr><th>#</th><th>game.deal</th><th>dealer</th><th>result</th><th>points</th>"
            f"<th>{_e(names[0])}</th><th>{_e(names[1])}</th></tr>")
    return f'<table id="score-sheet"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def score_chart(view: MatchView) -> str:
    """The chart of the scores through the match (:func:`page_parts.score_chart`)."""
    return page_parts.score_chart(view.players, view.deals, view.rules.target)


# ----------------------------------------------------------------------------------------------
# the page
# ----------------------------------------------------------------------------------------------
JS = r"""
(function(){
const D = JSON.parse(document.getElementById('replay-data').textContent);
const P = D.positions, N = P.length;
const SUITS = {s:'\u2660',h:'\u2665',d:'\u2666',c:'\u2663'};
const ORDER = c => 'shdc'.indexOf(c[1]) * 13 + 'A23456789TJQK'.indexOf(c[0]);
const $ = id => document.getElementById(id);
let cur = 0;
""" + JS_PLURAL + CHART_JS + r"""function card(t, extra){
  const e = document.createElement('span');
  e.className = 'card ' + ('hd'.includes(t[1]) ? 'red' : 'black') + (extra ? ' ' + extra : '');
  e.dataset.card = t; e.title = t;
  const r = document.createElement('span'); r.className = 'rank'; r.textContent = t[0] === 'T' ? '10' : t[0];
  const s = document.createElement('span'); s.className = 'suit'; s.textContent = SUITS[t[1]];
  e.append(r, s); return e;
}
function group(cls, cards, extra, fresh){
  const g = document.createElement('span'); g.className = cls;
  for (const c of cards) g.append(card(c, (extra || '') + (c === fresh ? ' new' : '')));
  return g;
}
function hand(seat, p, fresh){
  const h = p.h[seat], el = $('hand-' + seat);
  el.replaceChildren();
  for (const m of h.m) el.append(group('meld', m, '', fresh));
  if (h.x.length) el.append(group('loose', h.x, '', fresh));
  const all = [].concat(...h.m, h.x).sort((a, b) => ORDER(a) - ORDER(b));
  el.dataset.cards = all.join(' ');
  $('deadwood-' + seat).textContent = 'deadwood ' + h.v + ' · ' + plural(all.length, 'card');
  $('seat-' + seat).classList.toggle('to-move', p.t === seat);
  $('tomove-' + seat).textContent = p.t === seat ? '▶ to move (' + p.ph + ')' : '';
}
function show(i){
  cur = Math.max(0, Math.min(N - 1, i));
  const p = P[cur], d = D.deals[p.d], atEnd = cur === d.last;
  const drew = p.l && (p.l.verb.startsWith('draws') || p.l.verb.startsWith('takes'));
  const fresh = drew ? p.l.card : null;
  document.body.dataset.position = cur; document.body.dataset.deal = p.d + 1; document.body.dataset.move = p.s;
  hand(0, p, fresh); hand(1, p, fresh);
  const pile = $('discard'); pile.replaceChildren(...p.p.map(c => card(c, 'small')));
  pile.dataset.cards = p.p.join(' ');
  $('stock-count').textContent = p.k;
  const sc = atEnd && d.end ? d.end.scores : d.before;
  $('score-0').textContent = sc[0]; $('score-1').textContent = sc[1];
  $('deal-title').textContent = 'Game ' + d.game + ', deal ' + d.deal + ' · dealer ' + D.players[d.dealer] +
    ' · knock limit ' + (d.knock_limit === null ? 'gin only' : d.knock_limit) +
    (d.doubled ? ' · doubled (spade upcard)' : '');
  $('step-label').textContent = 'position ' + cur + ' / ' + (N - 1) + ' · deal ' + (p.d + 1) + ' / ' + D.deals.length +
    ' · move ' + p.s + ' / ' + (d.last - d.first);
  const lm = $('last-move'); lm.replaceChildren();
  if (p.l) {
    lm.append(p.l.who + ' ' + p.l.verb + ' ');
    if (p.l.card) lm.append(card(p.l.card, 'small'));
    const x = document.createElement('span'); x.className = 'deadwood'; x.textContent = p.l.extra; lm.append(x);
  } else {
    lm.append('dealt · upcard '); lm.append(card(d.upcard, 'small'));
  }
  $('faults').textContent = (p.f || []).join(' · ');
  const de = $('deal-end');
  if (atEnd && d.end) {
    de.classList.remove('hidden'); de.dataset.points = d.end.points; de.dataset.kind = d.end.kind;
    $('deal-end-text').textContent = d.end.text;
    const rows = $('deal-end-rows'); rows.replaceChildren();
    if (d.end.kind !== 'dead') d.end.seats.forEach((s, seat) => {
      const r = document.createElement('div'); r.className = 'row';
      const w = document.createElement('span'); w.className = 'who'; w.textContent = D.players[seat]; r.append(w);
      for (const m of s.melds) r.append(group('meld', m, 'small'));
      if (s.laid_off.length) { r.append('laid off'); r.append(group('meld', s.laid_off, 'small')); }
      r.append('deadwood'); r.append(group('loose', s.deadwood_cards, 'small'));
      const v = document.createElement('b'); v.textContent = s.deadwood; r.append(v);
      if (d.end.knocker === seat && d.end.knock_discard) {
        r.append('· knock discard'); r.append(card(d.end.knock_discard, 'small'));
      }
      rows.append(r);
    });
    $('deal-end-scores').textContent = 'Scores after the deal: ' + D.players[0] + ' ' + d.end.scores[0] + ', ' +
      D.players[1] + ' ' + d.end.scores[1] + (d.game_end ? ' — ' + d.game_end.text : '');
  } else {
    de.classList.add('hidden'); delete de.dataset.points; delete de.dataset.kind;
  }
  $('match-over').classList.toggle('hidden', cur !== N - 1);
  $('deal-select').value = String(p.d);
  document.querySelectorAll('#score-sheet tr.current').forEach(r => r.classList.remove('current'));
  const row = $('sheet-row-' + p.d); if (row) row.classList.add('current');
  chartMarker(p.d, p.s, d.last - d.first);
  const want = '#step=' + cur;
  if (location.hash !== want) { try { history.replaceState(null, '', want); } catch (e) {} }
}
""" + NAV_JS


def replay_page(view: MatchView, *, back_link: str | None = None, back_text: str = "results") -> str:
    """The HTML page of one replay."""
    names = view.players
    h = view.header
    bots = list(h.bots)
    who = " vs ".join(f"{_e(n)}" + (f' <span class="bot">({_e(b)})</span>' if b and b != n else "")
                      for n, b in zip(names, [*bots, "", ""], strict=False))
    back = f'<a href="{_e(back_link)}">← {_e(back_text)}</a> · ' if back_link else ""
    chart = score_chart(view)
    seats = []
    for seat in (1, 0):
        seats.append(
            f'<div class="seat" id="seat-{seat}"><div class="name">{_e(names[seat])}'
            f'<span class="tag">seat {seat}</span>'
            f'<span class="tag" id="tomove-{seat}"></span><span class="deadwood" id="deadwood-{seat}"></span></div>'
            f'<div class="hand" id="hand-{seat}" data-cards=""></div></div>'
        )
    body = f"""<header>
<h1>{who}</h1>
<div class="meta">{back}Match <code>{_e(view.match_id)}</code> · {_e(view.rules.name)}, target {view.rules.target} ·
{_e(h.time_control)} · faults: {_e(h.fault_policy)} ·
result: <b>{_e(view.outcome_text())}</b></div>
<div class="meta">final hash <code>{_e(view.final_hash)}</code> ·
seed commitment <code>{_e(h.seed_commitment)}</code> ·
revealed seed <code>{_e(view.seed)}</code> — check with <code>arena audit</code></div>
</header>
<main>
<section id="table-col">
<div id="controls">
<button id="btn-first" title="first position (Home)">|◀</button>
<button id="btn-prev-deal" title="previous deal (↑)">◀◀ deal</button>
<button id="btn-prev" title="previous move (←)">◀ prev</button>
<button id="btn-next" title="next move (→)">next ▶</button>
<button id="btn-next-deal" title="next deal (↓)">deal ▶▶</button>
<button id="btn-last" title="last position (End)">▶|</button>
<select id="deal-select" aria-label="deal"></select>
<span id="step-label"></span>
</div>
<div class="felt">
<div id="deal-title"></div>
<div class="scorebar">{_e(names[0])} <b id="score-0">0</b> {_e(names[1])} <b id="score-1">0</b></div>
{seats[0]}
<div class="middle"><div id="stock"><span class="card back">&nbsp;</span><span>stock <b id="stock-count"></b>
</span></div><div id="discard" data-cards=""></div></div>
{seats[1]}
<div id="last-move"></div>
<div id="faults"></div>
</div>
<div id="deal-end" class="hidden"><h3 id="deal-end-text"></h3><div id="deal-end-rows"></div>
<div id="deal-end-scores"></div></div>
<div id="match-over" class="hidden">Match over: {_e(view.outcome_text())} — {_e(view.detail)}</div>
<div class="help">Keys: ← → move · ↑ ↓ deal · Home / End. Address: <code>#step=K</code>, <code>#deal=D</code>,
<code>#deal=D&amp;move=M</code>.</div>
</section>
<section id="side-col">
<h2>Scores through the match</h2>
{chart}
<h2>Score sheet</h2>
{score_sheet(view)}
</section>
</main>
<footer>Gin Arena replay · {plural(len(view.deals), "deal")} · {plural(len(view.positions), "position")} ·
{plural(view.records, "record")}</footer>"""
    title = f"{' vs '.join(names)} — {view.match_id}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>\n"
        f"<body>{body}\n"
        f'<script type="application/json" id="replay-data">{_json_for_script(page_data(view))}</script>\n'
        f"<script>{JS}</script>\n</body></html>\n"
    )


def write_replay_html(view: AnyView, out: Path, *, back_link: str | None = None) -> Path:
    """Write the page of one replay (of its game) to ``out`` (atomically)."""
    if isinstance(view, steps.MatchView):
        page = shown_html.replay_page(view, back_link=back_link)
    elif isinstance(view, RummyMatchView):
        page = rummy_html.replay_page(view, back_link=back_link)
    else:
        page = replay_page(view, back_link=back_link)
    write_atomic(out, page.encode())
    return out


# ----------------------------------------------------------------------------------------------
# the command (the same as ``arena replay REPLAY --html OUT``, for several replays at once)
# ----------------------------------------------------------------------------------------------
def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``replay-html`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "replay-html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write self-contained HTML replay pages (like arena replay REPLAY --html OUT)",
        description=(
            "Write one self-contained HTML page per replay (no network: inline CSS, script and SVG, the\n"
            "positions embedded as JSON): the table with cards drawn as cards, step controls (buttons,\n"
            "arrow keys, a deal selector), the score sheet and a chart of the scores through the match.\n"
            "Open OUT#step=K to jump to position K, OUT#deal=D to the start of deal D."
        ),
        epilog="Examples:\n  arena replay-html m1.jsonl -o m1.html\n"
        "  arena replay-html runs/x/replays/*.jsonl --out-dir html/",
    )
    p.add_argument("replays", nargs="+", type=Path, metavar="REPLAY", help="replay files (.jsonl)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-o", "--out", type=Path, default=None, metavar="FILE", help="the page (one replay only)")
    where.add_argument("--out-dir", type=Path, default=None, metavar="DIR",
                       help="a folder for the pages, named <match_id>.html (default: next to each replay)")
    p.set_defaults(handler=run)
    return p


def run(args: argparse.Namespace) -> int:
    """``arena replay-html``."""
    if args.out is not None and len(args.replays) != 1:
        print("arena replay-html: --out takes one replay; use --out-dir for several", file=sys.stderr)
        return EXIT_USAGE
    status = EXIT_OK
    for path in args.replays:
        try:
            view = load(path)
        except ReplayModelError as e:
            print(f"arena replay-html: {e}", file=sys.stderr)
            status = EXIT_FAILED
            continue
        if args.out is not None:
            out = args.out
        elif args.out_dir is not None:
            out = args.out_dir / f"{view.match_id or path.stem}.html"
        else:
            out = path.with_suffix(".html")
        write_replay_html(view, out)
        print(f"wrote {out}")
    return status
