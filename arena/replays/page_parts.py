"""What the HTML replay pages of every game share: the style sheet, escaping, data for a script."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any, Protocol


def escape(text: Any) -> str:
    """``text`` for HTML (attributes included)."""
    return html.escape(str(text), quote=True)


def json_for_script(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


CSS = """
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f3f1ea;color:#1d1d1d}
.match-head{padding:10px 18px;background:#22362b;color:#f3f1ea}
.match-head h1{font-size:18px;margin:0 0 4px}
.match-head .meta{font-size:12px;opacity:.85;word-break:break-all}
.match-head a{color:#cfe8d6}
main{display:flex;flex-wrap:wrap;gap:16px;padding:14px 18px}
#table-col{flex:1 1 620px;min-width:min(560px,100%)}
#side-col{flex:1 1 420px;min-width:min(380px,100%)}
#score-chart{width:100%;height:auto;max-width:640px;display:block}
#controls{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin-bottom:10px}
#controls button{font-size:15px;padding:4px 10px;border:1px solid #888;border-radius:4px;background:#fff;cursor:pointer}
#controls button:hover{background:#eef}
#controls select{font-size:13px;padding:3px;max-width:330px}
#step-label{font-size:13px;margin-left:6px}
.felt{background:radial-gradient(ellipse at center,#2f7d4f 0%,#1d5a37 100%);border-radius:14px;padding:14px;color:#fff;
box-shadow:inset 0 0 18px rgba(0,0,0,.45)}
.seat{padding:8px 10px;border-radius:10px;margin:6px 0;background:rgba(0,0,0,.12)}
.seat.to-move{outline:2px solid #ffd54a;background:rgba(255,213,74,.12)}
.seat .name{font-weight:600;margin-bottom:4px}
.seat .name .tag{font-weight:400;font-size:12px;opacity:.85;margin-left:6px}
.hand{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;min-height:64px}
.meld{display:flex;gap:2px;padding:3px;border-radius:6px;background:rgba(255,255,255,.18)}
.loose{display:flex;flex-wrap:wrap;gap:2px;padding:3px}
.card{display:inline-flex;flex-direction:column;align-items:center;justify-content:center;width:38px;height:54px;
border-radius:5px;background:#fff;border:1px solid #999;box-shadow:1px 1px 2px rgba(0,0,0,.35);font-weight:700;
line-height:1.05;user-select:none}
.card .rank{font-size:17px}.card .suit{font-size:19px}
.card{color:#1a202c}.card.ink-1,.card.ink-2{color:#c53030}
.card.new{outline:3px solid #ffd54a}
.card.small{width:30px;height:42px;justify-content:flex-start;align-items:flex-start;padding:2px 0 0 3px}
.card.small .rank{font-size:13px;letter-spacing:-1px}.card.small .suit{font-size:13px}
.card.back{background:repeating-linear-gradient(45deg,#7b2d26,#7b2d26 4px,#9c3b33 4px,#9c3b33 8px);color:#fff}
.middle{display:flex;gap:18px;align-items:center;margin:8px 0;padding:8px 10px}
#stock{display:flex;flex-direction:column;align-items:center;font-size:12px}
#discard{display:flex;flex-wrap:wrap;row-gap:4px;align-items:center;flex:1}
#discard .card{margin-right:-12px}#discard .card:last-child{margin-right:0;outline:2px solid #fff}
#last-move{min-height:22px;margin:6px 2px;font-size:13px;display:flex;align-items:center;gap:6px;flex-wrap:wrap}
#faults{color:#ffb4a8;font-size:13px}
.seat-notes{font-size:12px;opacity:.9;margin-left:4px}
#deal-end{margin-top:10px;padding:10px;border-radius:10px;background:#fff8dc;color:#222;border:1px solid #d8c98e}
#deal-end h3{margin:0 0 6px;font-size:15px}
#deal-end .row{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin:4px 0}
#deal-end .who{min-width:90px;font-weight:600}
#deal-end .meld{background:#e8e2c8}
#match-over{margin-top:8px;font-weight:700}
.hidden{display:none!important}
#score-sheet{border-collapse:collapse;width:100%;font-size:13px;background:#fff}
#score-sheet th,#score-sheet td{border-bottom:1px solid #ddd;padding:3px 6px;text-align:left}
#score-sheet td.num{text-align:right;font-variant-numeric:tabular-nums}
#score-sheet tr.current{background:#fff3b0}
#score-sheet tr[data-deal]{cursor:pointer}
#score-sheet tr.game-total td{font-weight:600;background:#f0ede2}
h2{font-size:15px;margin:14px 0 6px}
.scorebar{display:flex;gap:18px;font-size:14px;margin:4px 2px}
.scorebar b{font-size:18px}
.help{font-size:12px;color:#555;margin-top:6px}
footer{padding:6px 18px 16px;font-size:12px;color:#555}
code{font-size:11px}
"""

"""The pages' style sheet (the felt table, cards, controls, the score sheet)."""


NAV_JS = r"""function address(){
  return new URLSearchParams((location.hash || '').replace(/^#/, '') || location.search.replace(/^\?/, ''));
}
function fromAddress(){
  const q = address();
  if (q.has('step')) return +q.get('step') || 0;
  if (q.has('deal')) {
    const d = D.deals[Math.max(0, Math.min(D.deals.length - 1, (+q.get('deal') || 1) - 1))];
    if (!d) return 0;
    return Math.min(d.last, d.first + (+q.get('move') || 0));
  }
  return 0;
}
function dealStep(delta){
  const p = P[cur], d = D.deals[p.d];
  if (delta < 0 && cur > d.first) return show(d.first);
  const t = D.deals[p.d + delta];
  show(t ? t.first : (delta > 0 ? N - 1 : 0));
}
const sel = $('deal-select');
D.deals.forEach((d, i) => {
  const o = document.createElement('option'); o.value = String(i);
  o.textContent = 'Deal ' + (i + 1) + ' — game ' + d.game + '.' + d.deal + ': ' + (d.end ? d.end.text : 'unfinished');
  sel.append(o);
});
sel.addEventListener('change', () => show(D.deals[+sel.value].first));
$('btn-first').onclick = () => show(0);
$('btn-prev').onclick = () => show(cur - 1);
$('btn-next').onclick = () => show(cur + 1);
$('btn-last').onclick = () => show(N - 1);
$('btn-prev-deal').onclick = () => dealStep(-1);
$('btn-next-deal').onclick = () => dealStep(1);
document.querySelectorAll('#score-sheet tr[data-deal]').forEach(r =>
  r.addEventListener('click', () => show(D.deals[+r.dataset.deal].first)));
document.addEventListener('keydown', e => {
  if (e.target && e.target.tagName === 'SELECT') return;
  const k = e.key;
  if (k === 'ArrowRight' || k === 'n' || k === ' ') show(cur + 1);
  else if (k === 'ArrowLeft' || k === 'p') show(cur - 1);
  else if (k === 'ArrowDown' || k === 'PageDown' || k === 'd') dealStep(1);
  else if (k === 'ArrowUp' || k === 'PageUp' || k === 'u') dealStep(-1);
  else if (k === 'Home') show(0);
  else if (k === 'End') show(N - 1);
  else return;
  e.preventDefault();
});
window.addEventListener('hashchange', () => { const i = fromAddress(); if (i !== cur) show(i); });
const replayKeys = address().get('keys');
if (N) show(fromAddress());
// keys=ArrowRight,End,@btn-prev: press keys / click buttons after loading (for automated checks)
if (replayKeys) for (const k of replayKeys.split(',')) {
  if (k.startsWith('@')) { const b = $(k.slice(1)); if (b) b.click(); }
  else document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
}
document.body.classList.add('ready');
})();
"""
"""The end of both games' page scripts (inside their ``(function(){``): reading and writing the
position in the address (``#step=N``, ``?deal=D&move=M``), the deal menu, the buttons, the score
sheet's rows and the keys; ``keys=ArrowRight,End,@btn-prev`` in the address presses keys and
clicks buttons after loading (for automated checks). Each page defines ``$``, ``D``, ``P``,
``N``, ``cur`` and ``show`` before it."""


JS_PLURAL = r"""function plural(n, one, many){ return n + ' ' + (n === 1 ? one : (many || one + 's')); }
"""
"""A page script's ``plural(n, 'card')``: "1 card", "2 cards" (inside its ``(function(){``)."""


def plural(n: int, one: str, many: str = "") -> str:
    """``n`` with the noun's singular or plural: "1 deal", "3 deals"."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


# ----------------------------------------------------------------------------------------------
# the score chart (SVG drawn here, for every game's page)
# ----------------------------------------------------------------------------------------------
SEAT_COLORS = ("#2b6cb0", "#c05621", "#2f855a", "#805ad5", "#b7791f", "#d53f8c")
"""One line colour per seat (six seats at most), in seat order."""
CHART_SIZE = (560, 220)
"""The chart's width and height (SVG units; the page scales it to its column)."""
LEGEND_NAME = 14
"""Characters of a player's name shown in the chart's legend (the rest is cut, with "…")."""


class _Ended(Protocol):
    @property
    def scores(self) -> tuple[int, ...]: ...


class ChartDeal(Protocol):
    """What the chart reads of a deal: any game's deal view has it."""

    @property
    def index(self) -> int:
        """The deal's index in the match, from 0."""

    @property
    def game(self) -> int:
        """Its game's number, from 1."""

    @property
    def scores_before(self) -> tuple[int, ...]:
        """The game's totals before the deal, by seat."""

    @property
    def end(self) -> _Ended | None:
        """How it ended (its ``scores``: the totals after it); ``None`` if unfinished."""


def score_chart(players: Sequence[str], deals: Sequence[ChartDeal], target: int) -> str:
    """An inline SVG: each seat's game score after every deal (a new line per game), the
    target dashed, and a marker (``#chart-marker``) that :data:`CHART_JS` moves to the position
    shown. Negative totals (rummy's penalties) extend the scale below 0."""
    width, height = CHART_SIZE
    n = len(deals)
    seats = len(players)
    left, right, top, bottom = 40, 12, 24 + 12 * ((seats - 1) // 3), 28
    values = [v for d in deals for v in (*d.scores_before, *(d.end.scores if d.end is not None else ()))]
    high = max([target, 1, *values])
    low = min([0, *values])

    def x(i: float) -> float:
        return left + (width - left - right) * (i / max(1, n))

    def y(v: float) -> float:
        return top + (height - top - bottom) * (high - v) / (high - low)

    parts = [f'<svg id="score-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" preserveAspectRatio="xMinYMin meet" role="img" '
             f'aria-label="scores through the match" data-seats="{seats}" data-deals="{n}">',
             f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
             'fill="#fbfbf8" stroke="#ccc"/>']
    for v in sorted({low, 0, target // 2, target}):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"'
                     + (' stroke-dasharray="4 3" stroke="#999"' if v == target else "") + "/>")
        parts.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{v}</text>')
    by_game: dict[int, list[ChartDeal]] = {}
    for d in deals:
        by_game.setdefault(d.game, []).append(d)
    for game, its in by_game.items():
        start = its[0].index
        if start:
            parts.append(f'<line x1="{x(start):.1f}" x2="{x(start):.1f}" y1="{top}" y2="{height - bottom}" '
                         'stroke="#aaa" stroke-dasharray="2 2"/>')
        parts.append(f'<text x="{x(start) + 3:.1f}" y="{top + 11}" font-size="10" fill="#666">game {game}</text>')
        for seat in range(seats):
            color = SEAT_COLORS[seat % len(SEAT_COLORS)]
            pts = [(x(start), y(its[0].scores_before[seat]))]
            pts += [(x(d.index + 1), y(d.end.scores[seat])) for d in its if d.end is not None]
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(f'<polyline class="seat-{seat}" data-seat="{seat}" points="{path}" fill="none" '
                         f'stroke="{color}" stroke-width="2"/>')
            parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{color}"/>' for px, py in pts[1:]]
    for i in range(0, n + 1, max(1, n // 10)):
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 14}" text-anchor="middle" font-size="10">{i}</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 3}" text-anchor="middle" font-size="10" '
                 'fill="#666">deals</text>')
    parts.append(f'<line id="chart-marker" data-x0="{left}" data-dx="{(width - left - right) / max(1, n):.4f}" '
                 f'x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top}" y2="{height - bottom}" stroke="#c53030" '
                 'stroke-width="1.5"/>')
    step = (width - left - right) // 3
    for seat, name in enumerate(players):
        lx, ly = left + step * (seat % 3), 8 + 12 * (seat // 3)
        shown = name if len(name) <= LEGEND_NAME else name[:LEGEND_NAME - 1] + "…"
        parts.append(f'<rect x="{lx}" y="{ly}" width="12" height="4" fill="{SEAT_COLORS[seat % len(SEAT_COLORS)]}"/>'
                     f'<text class="legend" x="{lx + 16}" y="{ly + 5}" font-size="11">{escape(shown)}</text>')
    parts.append("</svg>")
    return "".join(parts)


CHART_JS = r"""function chartMarker(deal, move, moves){
  const mk = $('chart-marker');
  if (!mk) return;
  const x = +mk.dataset.x0 + +mk.dataset.dx * (deal + move / Math.max(1, moves));
  mk.setAttribute('x1', x.toFixed(1)); mk.setAttribute('x2', x.toFixed(1));
}
"""
"""A page script's ``chartMarker(deal index, move, moves in the deal)``: the chart's marker at
the position shown (inside its ``(function(){``, after ``$``)."""
