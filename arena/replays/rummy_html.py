"""The HTML replay of a rummy match (2–6 seats): one self-contained page, like Gin's.

The page shows every hand (complete information), the table's melds by owner with who laid off
which card, the discard row and the stock; step controls (buttons; ← → moves, ↑ ↓ deals,
Home/End; a deal selector); at a deal's end every hand left with its value and the deal points;
a chart of every seat's game total through the match (SVG drawn here, shared with Gin's page)
and the score sheet for n players (deal points and game totals by seat). ``OUT#step=K`` opens at
position K, ``OUT#deal=D`` at the start of deal D; ``&keys=ArrowRight,@btn-next`` as for Gin.

For tests and tools the DOM carries the state: ``body[data-position]``, ``#hand-N[data-cards]``
(card texts in index order), ``#discard[data-cards]`` (bottom first), ``#stock-count``,
``#score-N``, ``#table-melds .tmeld[data-owner][data-cards]``, ``#deal-end[data-points]``
(deal points by seat, comma-separated) and ``#end-hand-N[data-cards]``.
"""

from __future__ import annotations

from typing import Any

from arena.replays.page_parts import CHART_JS, CSS, JS_PLURAL, NAV_JS, escape, json_for_script, plural, score_chart
from arena.replays.rummy_model import RummyDealView, RummyMatchView, RummyPosition, end_text, game_end_text
from referee.rummy import TableMeld

_VERBS = {
    "draw_stock": "draws from the stock", "take_discard": "takes from the discards", "meld": "lays the meld",
    "lay_off": "lays off", "discard": "discards", "call_stop": "calls stop", "decline_stop": "declines to call stop",
}

_CSS = CSS + """
#table-melds{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0;min-height:30px}
.tmeld{display:flex;flex-direction:column;gap:2px;padding:3px 5px;border-radius:6px;background:rgba(255,255,255,.18)}
.tmeld .owner{font-size:11px;opacity:.9}
.tmeld .cards{display:flex;gap:2px}
.card.off{outline:2px dashed #ffd54a}
#score-sheet th.num{text-align:right}
#score-sheet td.num{white-space:nowrap}
"""


def _cards(cards: Any) -> list[str]:
    return [str(c) for c in cards]


def _meld(view: RummyMatchView, meld: TableMeld) -> dict[str, Any]:
    return {"n": meld.number, "o": meld.owner, "who": view.seat_name(meld.owner), "c": _cards(meld.cards),
            "x": {str(p.card): view.seat_name(p.seat) for p in meld.placed if p.layoff}}


def _position(view: RummyMatchView, pos: RummyPosition) -> dict[str, Any]:
    out: dict[str, Any] = {"d": pos.deal_index, "s": pos.step, "h": [_cards(h) for h in pos.hands],
                           "p": _cards(pos.discard_pile), "k": pos.stock_size, "t": pos.to_move, "ph": pos.phase,
                           "m": [_meld(view, m) for m in pos.table]}
    if pos.last is not None:
        last = pos.last
        extra = f"{last.think_us / 1000:.1f} ms · clocks {'/'.join(map(str, last.clocks))} ms"
        if last.kind == "lay_off":
            extra = f"on meld #{last.action.split()[2]} · " + extra
        if last.reshuffled:
            extra += " · the discard pile is shuffled into a new stock"
        out["l"] = {"who": view.seat_name(last.seat) + (" (substitute)" if last.substitute else ""),
                    "verb": _VERBS.get(last.kind, last.action), "cards": _cards(last.cards), "extra": extra}
    faults = view.faults_at.get(pos.index)
    if faults:
        out["f"] = [f"Fault — {view.seat_name(f.seat)}: {f.termination}: {f.detail} (policy {f.policy})"
                    for f in faults]
    return out


def _deal(view: RummyMatchView, deal: RummyDealView) -> dict[str, Any]:
    end = None
    if deal.end is not None:
        c = deal.end.content
        end = {"text": end_text(view, deal.end), "points": list(c.points), "scores": list(deal.end.scores),
               "hands": [list(h) for h in c.hands], "values": list(c.hand_values), "table": list(c.table_points)}
    return {
        "game": deal.game, "deal": deal.number, "dealer": deal.dealer, "first": deal.positions[0].index,
        "last": deal.positions[-1].index, "before": list(deal.scores_before), "end": end,
        "game_end": game_end_text(view, deal.game_end) if deal.game_end is not None else None,
    }


def page_data(view: RummyMatchView) -> dict[str, Any]:
    """Everything the page shows, as JSON-able data."""
    return {"players": list(view.players), "deals": [_deal(view, d) for d in view.deals],
            "positions": [_position(view, p) for p in view.positions]}


def score_sheet(view: RummyMatchView) -> str:
    """A row per deal: its result, each seat's deal points and game total after it; a row per game's end."""
    head = "".join(f'<th class="num">{escape(n)}</th>' for n in view.players)
    rows = [f"<tr><th>deal</th><th>result</th>{head}</tr>"]
    for deal in view.deals:
        if deal.end is None:
            cells = "".join('<td class="num"></td>' for _ in view.players)
            text = "unfinished"
        else:
            pts, tot = deal.end.content.points, deal.end.scores
            cells = "".join(f'<td class="num">{"+" if p > 0 else ""}{p} <small>({t})</small></td>'
                            for p, t in zip(pts, tot, strict=False))
            text = end_text(view, deal.end)
        rows.append(f'<tr data-deal="{deal.index}" id="sheet-row-{deal.index}"><td>{deal.game}.{deal.number}</td>'
                    f"<td>{escape(text)}</td>{cells}</tr>")
        g = deal.game_end
        if g is not None:
            totals = "".join(f'<td class="num">{t}</td>' for t in g.totals)
            rows.append(f'<tr class="game-total"><td>game {g.game}</td><td>{escape(game_end_text(view, g))}</td>'
                        f"{totals}</tr>")
    return '<table id="score-sheet">' + "".join(rows) + "</table>"


JS = r"""
(function(){
const D = JSON.parse(document.getElementById('replay-data').textContent);
const P = D.positions, N = P.length, S = D.players.length;
const SUITS = {s:'\u2660',h:'\u2665',d:'\u2666',c:'\u2663'};
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
function row(el, cards, extra, fresh){
  el.replaceChildren(...cards.map(c => card(c, (extra || '') + (fresh.includes(c) ? ' new' : ''))));
  el.dataset.cards = cards.join(' ');
}
function melds(p){
  const el = $('table-melds'); el.replaceChildren();
  for (const m of p.m) {
    const g = document.createElement('span'); g.className = 'tmeld'; g.dataset.owner = m.o;
    g.dataset.cards = m.c.join(' '); g.id = 'meld-' + m.n;
    const o = document.createElement('span'); o.className = 'owner'; o.textContent = '#' + m.n + ' ' + m.who;
    const cs = document.createElement('span'); cs.className = 'cards';
    for (const c of m.c) {
      const e = card(c, 'small' + (m.x[c] ? ' off' : ''));
      if (m.x[c]) e.title = c + ' laid off by ' + m.x[c];
      cs.append(e);
    }
    g.append(o, cs); el.append(g);
  }
  if (!p.m.length) el.textContent = 'no melds on the table';
}
function endRows(d){
  const rows = $('deal-end-rows'); rows.replaceChildren();
  d.end.hands.forEach((h, seat) => {
    const r = document.createElement('div'); r.className = 'row';
    const w = document.createElement('span'); w.className = 'who'; w.textContent = D.players[seat]; r.append(w);
    const g = document.createElement('span'); g.className = 'loose'; g.id = 'end-hand-' + seat; row(g, h, 'small', []);
    r.append(g, 'value ' + d.end.values[seat] + ' · table ' + d.end.table[seat] + ' · deal points ');
    const v = document.createElement('b'); v.textContent = d.end.points[seat]; r.append(v);
    rows.append(r);
  });
}
function show(i){
  cur = Math.max(0, Math.min(N - 1, i));
  const p = P[cur], d = D.deals[p.d], atEnd = cur === d.last;
  const fresh = p.l && p.l.verb.match(/^(draws|takes)/) ? p.l.cards : [];
  document.body.dataset.position = cur; document.body.dataset.deal = p.d + 1; document.body.dataset.move = p.s;
  for (let s = 0; s < S; s++) {
    row($('hand-' + s), p.h[s], '', fresh);
    $('count-' + s).textContent = plural(p.h[s].length, 'card');
    $('seat-' + s).classList.toggle('to-move', p.t === s);
    $('tomove-' + s).textContent = p.t === s ? '▶ to move (' + p.ph + ')' : '';
    $('score-' + s).textContent = (atEnd && d.end ? d.end.scores : d.before)[s];
  }
  melds(p);
  row($('discard'), p.p, 'small', []);
  $('stock-count').textContent = p.k;
  $('deal-title').textContent = 'Game ' + d.game + ', deal ' + d.deal + ' · dealer ' + D.players[d.dealer];
  $('step-label').textContent = 'position ' + cur + ' / ' + (N - 1) + ' · deal ' + (p.d + 1) + ' / ' + D.deals.length +
    ' · move ' + p.s + ' / ' + (d.last - d.first);
  const lm = $('last-move'); lm.replaceChildren();
  if (p.l) {
    lm.append(p.l.who + ' ' + p.l.verb + ' ');
    for (const c of p.l.cards) lm.append(card(c, 'small'));
    const x = document.createElement('span'); x.className = 'deadwood'; x.textContent = p.l.extra; lm.append(x);
  } else if (p.p.length) { lm.append('dealt · upcard '); lm.append(card(p.p[p.p.length - 1], 'small')); }
  $('faults').textContent = (p.f || []).join(' · ');
  const de = $('deal-end');
  if (atEnd && d.end) {
    de.classList.remove('hidden'); de.dataset.points = d.end.points.join(',');
    $('deal-end-text').textContent = d.end.text; endRows(d);
    $('deal-end-scores').textContent = 'Game totals after the deal: ' +
      D.players.map((n, s) => n + ' ' + d.end.scores[s]).join(', ') + (d.game_end ? ' — ' + d.game_end : '');
  } else { de.classList.add('hidden'); delete de.dataset.points; }
  $('match-over').classList.toggle('hidden', cur !== N - 1);
  $('deal-select').value = String(p.d);
  document.querySelectorAll('#score-sheet tr.current').forEach(r => r.classList.remove('current'));
  const sr = $('sheet-row-' + p.d); if (sr) sr.classList.add('current');
  chartMarker(p.d, p.s, d.last - d.first);
  const want = '#step=' + cur;
  if (location.hash !== want) { try { history.replaceState(null, '', want); } catch (e) {} }
}
""" + NAV_JS
"""The page's script: it draws each position from the embedded data."""


def _seat(view: RummyMatchView, seat: int) -> str:
    return (f'<div class="seat" id="seat-{seat}"><div class="name">{escape(view.seat_name(seat))}'
            f'<span class="tag">seat {seat}</span><span class="tag" id="tomove-{seat}"></span>'
            f'<span class="deadwood" id="count-{seat}"></span></div>'
            f'<div class="hand" id="hand-{seat}" data-cards=""></div></div>')


def replay_page(view: RummyMatchView, *, back_link: str | None = None, back_text: str = "results") -> str:
    """The HTML page of one rummy replay."""
    h = view.header
    who = " · ".join(escape(n) for n in view.players)
    back = f'<a href="{escape(back_link)}">← {escape(back_text)}</a> · ' if back_link else ""
    scores = " ".join(f'{escape(n)} <b id="score-{s}">0</b>' for s, n in enumerate(view.players))
    seed = view.result.seed if view.result is not None else ""
    body = f"""<header>
<h1>{who}</h1>
<div class="meta">{back}Match <code>{escape(view.match_id)}</code> · rummy ({len(view.players)} seats),
{escape(view.rules.name)}, target {view.rules.target} · {escape(h.time_control)} · faults: {escape(h.fault_policy)} ·
result: <b>{escape(view.outcome_text())}</b></div>
<div class="meta">final hash <code>{escape(view.final_hash)}</code> ·
seed commitment <code>{escape(h.seed_commitment)}</code> · revealed seed <code>{escape(seed)}</code>
— check with <code>arena audit</code></div>
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
<div class="scorebar">{scores}</div>
{"".join(_seat(view, s) for s in range(len(view.players)))}
<div id="table-melds"></div>
<div class="middle"><div id="stock"><span class="card back">&nbsp;</span><span>stock <b id="stock-count"></b>
</span></div><div id="discard" data-cards=""></div></div>
<div id="last-move"></div>
<div id="faults"></div>
</div>
<div id="deal-end" class="hidden"><h3 id="deal-end-text"></h3><div id="deal-end-rows"></div>
<div id="deal-end-scores"></div></div>
<div id="match-over" class="hidden">Match over: {escape(view.outcome_text())} — {escape(view.detail)}</div>
<div class="help">Keys: ← → move · ↑ ↓ deal · Home / End. Address: <code>#step=K</code>, <code>#deal=D</code>,
<code>#deal=D&amp;move=M</code>.</div>
</section>
<section id="side-col">
<h2>Scores through the match</h2>
{score_chart(view.players, view.deals, view.rules.target)}
<h2>Score sheet</h2>
{score_sheet(view)}
</section>
</main>
<footer>Gin Arena replay · rummy · {plural(len(view.deals), "deal")} · {plural(len(view.positions), "position")} ·
{plural(view.records, "record")}</footer>"""
    title = f"{' · '.join(view.players)} — {view.match_id}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head>\n"
        f"<body>{body}\n"
        f'<script type="application/json" id="replay-data">{json_for_script(page_data(view))}</script>\n'
        f"<script>{JS}</script>\n</body></html>\n"
    )
