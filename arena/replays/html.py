"""``arena replay REPLAY --html OUT``: one self-contained HTML page to step through a match of
any game, drawn from its presentation's descriptions (:mod:`arena.replays.steps`): this renderer
names no game.

No network: the CSS, the script and the score chart (SVG) are inline, the positions are embedded
as JSON. The page shows every seat (its hand grouped as the game groups it, or its count of
hidden cards, and the game's notes), the table's melds with who laid each card, the piles, the
last move; step controls (buttons; ← → moves, ↑ ↓ deals, Home/End; a deal selector); at a deal's
end what the game describes of it; a chart of every seat's game score through the match and the
score sheet for n seats. ``OUT#step=K`` opens at position K of the match, ``OUT#deal=D`` (from 1)
at the start of deal D, ``OUT#deal=D&move=M`` at move M of deal D; the address follows the
position shown, so it can be shared. ``&keys=ArrowRight,End,@btn-prev`` presses keys and clicks
buttons after loading (for automated checks of the controls).

For tests and tools the DOM carries the state: ``body[data-position]``, ``#hand-N[data-cards]``
(the seat's card texts, groups first; empty when hidden), ``#pile-NAME[data-cards]`` (bottom
first; NAME the pile's name, spaces as ``-``: ``#pile-discard-pile``) and ``#pile-NAME[data-count]``,
``#score-N``, ``#table-melds .tmeld[data-owner][data-cards]``, ``#deal-end[data-points]`` (deal
points by seat, comma-separated) and ``#end-seat-N[data-cards]`` (what the deal's end shows of
seat N's hand).

The page's own words (not what the game describes) come from a :class:`Words`: English in the
files ``arena`` writes; the live web passes its reader's language (``arena.web.i18n.Lang``), and
the script's words (:data:`SCRIPT_TEXTS`, its ``t('…')`` calls) travel translated in the page's
data. This module imports nothing of the web.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from arena.replays.model import ReplayModelError, load
from arena.replays.page_parts import CHART_JS, CSS, JS_PLURAL, NAV_JS, escape, json_for_script, score_chart
from arena.replays.steps import DealView, MatchView, Position
from referee import games
from referee.lowlevel import write_atomic

_CSS = CSS + """
#table-melds{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0;min-height:30px}
.tmeld{display:flex;flex-direction:column;gap:2px;padding:3px 5px;border-radius:6px;background:rgba(255,255,255,.18)}
.tmeld .owner{font-size:11px;opacity:.9}
.tmeld .cards{display:flex;gap:2px}
.card.off{outline:2px dashed #ffd54a}
.pile{display:flex;flex-direction:column;gap:2px;font-size:12px}
.pile .cards{display:flex;flex-wrap:wrap;row-gap:4px;align-items:center}
#score-sheet th.num{text-align:right}
#score-sheet td.num{white-space:nowrap}
.notes{font-size:12px;opacity:.9;margin-left:6px}
"""


class Words(Protocol):
    """The page's own words in its reader's language (``arena.web.i18n.Lang`` is one)."""

    @property
    def code(self) -> str:
        """The language's code (the page's ``<html lang>``)."""
        ...

    def _(self, msgid: str, **values: Any) -> str:
        """``msgid`` (English) in the language, its ``{fields}`` filled from ``values``."""
        ...

    def ngettext(self, singular: str, plural: str, n: int, **values: Any) -> str:
        """The form for ``n``, ``{n}`` and the other fields filled."""
        ...


@dataclass(frozen=True, slots=True)
class English:
    """The page's words as they are written (the pages ``arena`` writes)."""

    code: str = "en"
    """English."""

    def _(self, msgid: str, **values: Any) -> str:
        return msgid.format(**values) if values else msgid

    def ngettext(self, singular: str, plural: str, n: int, **values: Any) -> str:
        return (singular if n == 1 else plural).format(n=n, **values)


ENGLISH = English()
"""The words of a page written by ``arena``."""


def _shown(view: MatchView, shown: Mapping[str, Any], words: Words) -> dict[str, Any]:
    """A position's description with the game's words in ``words``' language, where ``words``
    can say them (the web's ``Lang.game_view``: the game's catalogs); as it is otherwise. Without
    its ``texts``: the page shows the texts as they are then (they made a Rummy replay's page a
    third larger)."""
    game_view = getattr(words, "game_view", None)
    out = dict(shown) if game_view is None else dict(game_view(view.game, shown, view.players))
    out.pop("texts", None)
    return out
SCRIPT_TEXTS = ("▶ to move ({phase})", "the table is empty", "{card} laid off by {name}", "laid off", "left",
                "Game {game}, deal {deal}", "dealer {name}",
                "position {position} / {positions} · deal {deal} / {deals} · move {move} / {moves}", "dealt",
                "Scores after the deal: {list}")
"""The msgids of the script's ``t('…')`` calls (its data carries them in the page's language)."""


def _position(view: MatchView, pos: Position, words: Words) -> dict[str, Any]:
    out: dict[str, Any] = {"d": pos.deal_index, "s": pos.step, "v": _shown(view, pos.shown, words)}
    m = pos.move
    if m is not None:
        extra = words._("{think} ms · clocks {clocks} ms", think=f"{m.think_us / 1000:.1f}",
                        clocks="/".join(map(str, m.clocks)))
        if pos.reshuffled:
            extra += " · " + words._("the discard pile is shuffled into a new stock")
        who = view.seat_name(m.seat)
        out["l"] = {"who": words._("{name} (substitute)", name=who) if m.substitute else who, "extra": extra}
    faults = view.faults_at.get(pos.index)
    if faults:
        out["f"] = [f"Fault — {view.seat_name(f.seat)}: {f.termination}: {f.detail} (policy {f.applied})"
                    for f in faults]
    return out


def _deal_text(view: MatchView, deal: DealView, words: Words) -> str:
    shown = deal.end_shown
    if deal.end is None:
        return words._("unfinished")
    if shown is None:
        return words._("over")
    return str(_shown(view, deal.positions[-1].shown, words)["end"]["text"])  # (with its texts: the whole view)


def _deal(view: MatchView, deal: DealView, words: Words) -> dict[str, Any]:
    shown = deal.end_shown
    end = None
    if deal.end is not None:
        end = {"text": _deal_text(view, deal, words), "scores": list(deal.end.scores),
               "points": list(shown["points"]) if shown is not None else []}
    return {
        "game": deal.game, "deal": deal.number, "dealer": deal.dealer, "first": deal.positions[0].index,
        "last": deal.positions[-1].index, "before": list(deal.scores_before), "end": end,
        "game_end": view.game_end_text(deal.game_end) if deal.game_end is not None else None,
    }


def page_data(view: MatchView, words: Words = ENGLISH) -> dict[str, Any]:
    """Everything the page shows, as JSON-able data (the script's words in ``words``' language:
    ``texts``, and ``cards``: each hidden hand's count of cards as the language says it)."""
    h = view.header
    counts = {int(x["count"]) for p in view.positions for x in p.shown.get("seats", ()) if x}
    positions = [_position(view, p, words) for p in view.positions]
    faces: dict[str, Any] = {}  # every card's face, once for the page (each position has those it shows)
    for p in positions:
        faces.update(p["v"].pop("faces", None) or {})
    return {
        "game": view.game, "match_id": view.match_id, "players": list(view.players), "bots": list(h.bots),
        "time_control": h.time_control, "fault_policy": h.fault_policy, "result": view.outcome_text(),
        "detail": view.detail, "final_hash": view.final_hash, "commitment": h.seed_commitment, "seed": view.seed,
        "deals": [_deal(view, d, words) for d in view.deals],
        "positions": positions, "faces": faces,
        "texts": {msgid: words._(msgid) for msgid in SCRIPT_TEXTS},
        "cards": {str(n): words.ngettext("{n} card", "{n} cards", n) for n in sorted(counts)},
    }


def score_sheet(view: MatchView, words: Words = ENGLISH) -> str:
    """A row per deal: its result, each seat's deal points and game score after it; a row per game's end."""
    head = "".join(f'<th class="num">{escape(n)}</th>' for n in view.players)
    rows = [f"<tr><th>{escape(words._('deal'))}</th><th>{escape(words._('result'))}</th>{head}</tr>"]
    for deal in view.deals:
        shown = deal.end_shown
        if deal.end is None:
            cells = "".join('<td class="num"></td>' for _ in view.players)
        else:
            pts = list(shown["points"]) if shown is not None and shown["points"] else [None] * len(deal.end.scores)
            cells = "".join(f'<td class="num">{"" if p is None else ("+" if p > 0 else "") + str(p)} '
                            f"<small>({t})</small></td>" for p, t in zip(pts, deal.end.scores, strict=False))
        rows.append(f'<tr data-deal="{deal.index}" id="sheet-row-{deal.index}"><td>{deal.game}.{deal.number}</td>'
                    f"<td>{escape(_deal_text(view, deal, words))}</td>{cells}</tr>")
        g = deal.game_end
        if g is not None:
            totals = "".join(f'<td class="num">{t}</td>' for t in g.totals)
            rows.append(f'<tr class="game-total"><td>{escape(words._("game {n}", n=g.game))}</td>'
                        f'<td>{escape(view.game_end_text(g))}</td>'
                        f"{totals}</tr>")
    return '<table id="score-sheet">' + "".join(rows) + "</table>"


JS = r"""
(function(){
const D = JSON.parse(document.getElementById('replay-data').textContent);
const P = D.positions, N = P.length, S = D.players.length;
const $ = id => document.getElementById(id);
let cur = 0;
// The page's own words in its language (D.texts: SCRIPT_TEXTS), {fields} filled; a hand's count.
function t(msgid, vars){
  const text = (D.texts || {})[msgid] || msgid;
  return text.replace(/\{(\w+)\}/g, (all, k) => (vars && k in vars ? String(vars[k]) : all));
}
function cardCount(n){ return (D.cards || {})[n] || plural(n, 'card'); }
""" + JS_PLURAL + CHART_JS + r"""function card(t, extra){
  // the game's face of the card (D.faces: rank as printed, suit symbol, ink, name), as the live
  // web's table draws it; a card without one shows its text
  const e = document.createElement('span'), f = (D.faces || {})[t];
  e.className = 'card' + (f ? ' ink-' + f.ink : '') + (extra ? ' ' + extra : '');
  e.dataset.card = t; e.title = f ? f.name : t;
  const r = document.createElement('span'); r.className = 'rank';
  r.textContent = f ? f.rank : t;
  e.append(r);
  if (f) {
    const s = document.createElement('span'); s.className = 'suit'; s.textContent = f.suit; e.append(s);
    e.setAttribute('role', 'img'); e.setAttribute('aria-label', f.name);
  }
  return e;
}
function cards(cls, list, extra, fresh){
  const g = document.createElement('span'); g.className = cls;
  for (const c of list) g.append(card(c, (extra || '') + (fresh.includes(c) ? ' new' : '')));
  return g;
}
function seat(s, v, fresh){
  const x = v.seats[s], el = $('hand-' + s);
  el.replaceChildren();
  if (x && x.hand) {
    for (const g of x.hand.groups) el.append(cards('meld', g, '', fresh));
    if (x.hand.loose.length) el.append(cards('loose', x.hand.loose, '', fresh));
    el.dataset.cards = [].concat(...x.hand.groups, x.hand.loose).join(' ');
  } else {
    el.dataset.cards = '';
    if (x) for (let i = 0; i < x.count; i++) { const b = card('', 'back'); b.textContent = '\u00a0'; el.append(b); }
  }
  $('count-' + s).textContent = x ? [cardCount(x.count)].concat(x.notes).join(' · ') : '';
  $('seat-' + s).classList.toggle('to-move', !!(x && x.to_move));
  $('tomove-' + s).textContent = x && x.to_move ? t('▶ to move ({phase})', {phase: v.phase}) : '';
}
function table(v){
  const el = $('table-melds'); el.replaceChildren();
  for (const m of v.table || []) {
    const g = document.createElement('span'); g.className = 'tmeld';
    g.dataset.owner = m.owner === null ? '' : m.owner; g.dataset.cards = m.cards.join(' ');
    const o = document.createElement('span'); o.className = 'owner';
    o.textContent = m.label + (m.owner === null ? '' : ' ' + D.players[m.owner]);
    const cs = document.createElement('span'); cs.className = 'cards';
    m.cards.forEach((c, i) => {
      const by = m.placed_by[i], off = m.owner !== null && by !== undefined && by !== m.owner;
      const e = card(c, 'small' + (off ? ' off' : ''));
      if (off) e.title = t('{card} laid off by {name}', {card: c, name: D.players[by]});
      cs.append(e);
    });
    g.append(o, cs); el.append(g);
  }
  if (v.table !== null && !v.table.length) el.textContent = t('the table is empty');
  el.classList.toggle('hidden', v.table === null);
}
function piles(v){
  v.piles.forEach(p => {
    const el = $('pile-' + p.name.replace(/ /g, '-')); if (!el) return;
    const cs = el.querySelector('.cards'); cs.replaceChildren();
    if (p.cards === null) { const b = card('', 'back'); b.textContent = '\u00a0'; cs.append(b); }
    else for (const c of p.cards) cs.append(card(c, 'small'));
    el.dataset.cards = p.cards === null ? '' : p.cards.join(' '); el.dataset.count = p.count;
    el.querySelector('.label').textContent = p.name + ' ' + p.count;
  });
}
function endRows(v){
  const rows = $('deal-end-rows'); rows.replaceChildren();
  for (const x of v.end.seats) {
    const r = document.createElement('div'); r.className = 'row'; r.id = 'end-seat-' + x.seat;
    r.dataset.cards = [].concat(...x.groups, x.loose).join(' ');
    const w = document.createElement('span'); w.className = 'who'; w.textContent = D.players[x.seat]; r.append(w);
    for (const g of x.groups) r.append(cards('meld', g, 'small', []));
    if (x.laid_off.length) { r.append(t('laid off')); r.append(cards('meld', x.laid_off, 'small', [])); }
    if (x.loose.length) { r.append(t('left')); r.append(cards('loose', x.loose, 'small', [])); }
    r.append(x.notes.join(' · '));
    rows.append(r);
  }
}
function show(i){
  cur = Math.max(0, Math.min(N - 1, i));
  const p = P[cur], v = p.v, d = D.deals[p.d], atEnd = cur === d.last;
  const fresh = v.last ? v.last.cards : [];
  document.body.dataset.position = cur; document.body.dataset.deal = p.d + 1; document.body.dataset.move = p.s;
  for (let s = 0; s < S; s++) {
    seat(s, v, fresh);
    $('score-' + s).textContent = (atEnd && d.end ? d.end.scores : d.before)[s];
  }
  table(v); piles(v);
  $('deal-title').textContent = [t('Game {game}, deal {deal}', {game: d.game, deal: d.deal}),
    t('dealer {name}', {name: D.players[d.dealer]})].concat(v.notes).join(' · ');
  $('step-label').textContent = t('position {position} / {positions} · deal {deal} / {deals} · move {move} / {moves}',
    {position: cur, positions: N - 1, deal: p.d + 1, deals: D.deals.length, move: p.s, moves: d.last - d.first});
  const lm = $('last-move'); lm.replaceChildren();
  if (p.l && v.last) {
    lm.append(p.l.who + ' ' + v.last.text + ' ');
    for (const c of v.last.cards) lm.append(card(c, 'small'));
    const x = document.createElement('span'); x.className = 'seat-notes'; x.textContent = p.l.extra; lm.append(x);
  } else { lm.append(t('dealt')); }
  $('faults').textContent = (p.f || []).join(' · ');
  const de = $('deal-end');
  if (atEnd && d.end) {
    de.classList.remove('hidden'); de.dataset.points = d.end.points.join(',');
    $('deal-end-text').textContent = d.end.text;
    if (v.end) endRows(v); else $('deal-end-rows').replaceChildren();
    $('deal-end-scores').textContent = t('Scores after the deal: {list}',
      {list: D.players.map((n, s) => n + ' ' + d.end.scores[s]).join(', ')}) + (d.game_end ? ' — ' + d.game_end : '');
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
"""The page's script: it draws each position from the embedded descriptions."""


def _seat(view: MatchView, seat: int, words: Words) -> str:
    return (f'<div class="seat" id="seat-{seat}"><div class="name">{escape(view.seat_name(seat))}'
            f'<span class="tag">{escape(words._("seat {seat}", seat=seat))}</span>'
            f'<span class="tag" id="tomove-{seat}"></span>'
            f'<span class="seat-notes" id="count-{seat}"></span></div>'
            f'<div class="hand" id="hand-{seat}" data-cards=""></div></div>')


def _piles(view: MatchView, words: Words) -> str:
    first = _shown(view, view.positions[0].shown, words)["piles"] if view.positions else []
    return "".join(f'<div class="pile" id="pile-{escape(str(p["name"]).replace(" ", "-"))}" data-cards="" '
                   f'data-count="0"><span class="label">{escape(p["name"])}</span><span class="cards"></span></div>'
                   for p in first)


PAGE_CSS = _CSS
"""The page's style sheet (inline in a self-contained page; the live web serves it as a file)."""


def replay_page(view: MatchView, *, back_link: str | None = None, back_text: str = "results",
                assets: tuple[str, str] | None = None, words: Words = ENGLISH, frame: str = "",
                head: str = "") -> str:
    """The HTML page of one replay of any game: self-contained, or with ``assets`` (the style
    sheet's and the script's addresses: :data:`PAGE_CSS` and :data:`JS` served as files) a page
    that a strict Content-Security-Policy (no inline script or style) lets run; its own words in
    ``words``' language (``back_text`` given in it). A site that serves it puts its own frame
    around it: ``frame``, markup shown first (its menu: the page's banner, so the replay's own
    heading is then no second one), and ``head``, markup for ``<head>`` (its style sheet, its
    icon); both already escaped by that site."""
    h = view.header
    _ = words._  # (the name the catalogs' extraction looks for)
    who = " · ".join(escape(n) for n in view.players)
    back = f'<a href="{escape(back_link)}">← {escape(back_text)}</a> · ' if back_link else ""
    scores = " ".join(f'{escape(n)} <b id="score-{s}">0</b>' for s, n in enumerate(view.players))
    seats = words.ngettext("{n} seat", "{n} seats", len(view.players))
    counts = " ·\n".join(escape(c) for c in (words.ngettext("{n} deal", "{n} deals", len(view.deals)),
                                              words.ngettext("{n} position", "{n} positions", len(view.positions)),
                                              words.ngettext("{n} record", "{n} records", view.records)))
    audit = escape(_("— check with {command}")).replace("{command}", "<code>arena audit</code>")
    tag = "section" if frame else "header"  # (framed: a region named by its heading, not a second banner)
    body = f"""{frame}<{tag} class="match-head" aria-labelledby="match-title">
<h1 id="match-title">{who}</h1>
<div class="meta">{back}{escape(_("Match"))} <code>{escape(view.match_id)}</code> ·
{escape(games.display_name(view.game))} ({escape(seats)}), {escape(view.rules_text)} · {escape(h.time_control)} ·
{escape(_("faults"))}: {escape(h.fault_policy)} · {escape(_("result"))}: <b>{escape(view.outcome_text())}</b></div>
<div class="meta">{escape(_("final hash"))} <code>{escape(view.final_hash)}</code> ·
{escape(_("seed commitment"))} <code>{escape(h.seed_commitment)}</code> ·
{escape(_("revealed seed"))} <code>{escape(view.seed)}</code>
{audit}</div>
</{tag}>
<main id="main">
<section id="table-col">
<div id="controls">
<button id="btn-first" title="{escape(_("first position (Home)"))}">|◀</button>
<button id="btn-prev-deal" title="{escape(_("previous deal (↑)"))}">◀◀ {escape(_("deal"))}</button>
<button id="btn-prev" title="{escape(_("previous move (←)"))}">◀ {escape(_("prev"))}</button>
<button id="btn-next" title="{escape(_("next move (→)"))}">{escape(_("next"))} ▶</button>
<button id="btn-next-deal" title="{escape(_("next deal (↓)"))}">{escape(_("deal"))} ▶▶</button>
<button id="btn-last" title="{escape(_("last position (End)"))}">▶|</button>
<select id="deal-select" aria-label="{escape(_("deal"))}"></select>
<span id="step-label"></span>
</div>
<div class="felt">
<div id="deal-title"></div>
<div class="scorebar">{scores}</div>
{"".join(_seat(view, s, words) for s in range(len(view.players)))}
<div id="table-melds"></div>
<div class="middle">{_piles(view, words)}</div>
<div id="last-move"></div>
<div id="faults"></div>
</div>
<div id="deal-end" class="hidden"><h3 id="deal-end-text"></h3><div id="deal-end-rows"></div>
<div id="deal-end-scores"></div></div>
<div id="match-over" class="hidden">{escape(_("Match over: {result} — {detail}", result=view.outcome_text(),
                                                 detail=view.detail))}</div>
<div class="help">{escape(_("Keys: ← → move · ↑ ↓ deal · Home / End. Address:"))} <code>#step=K</code>,
<code>#deal=D</code>, <code>#deal=D&amp;move=M</code>.</div>
</section>
<section id="side-col">
<h2>{escape(_("Scores through the match"))}</h2>
{score_chart(view.players, view.deals, view.target)}
<h2>{escape(_("Score sheet"))}</h2>
{score_sheet(view, words)}
</section>
</main>
<footer>{escape(_("Gin Arena replay"))} · {escape(games.display_name(view.game))} · {counts}</footer>"""
    title = f"{' · '.join(view.players)} — {view.match_id}"
    style, script = (f"<style>{_CSS}</style>", f"<script>{JS}</script>") if assets is None else (
        f'<link rel="stylesheet" href="{escape(assets[0])}">', f'<script src="{escape(assets[1])}"></script>')
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{escape(words.code)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width">'
        f"<title>{escape(title)}</title>{style}{head}</head>\n"
        f"<body>{body}\n"
        f'<script type="application/json" id="replay-data">{json_for_script(page_data(view, words))}</script>\n'
        f"{script}\n</body></html>\n"
    )


def write_replay_html(view: MatchView, out: Path, *, back_link: str | None = None) -> Path:
    """Write the page of one replay to ``out`` (atomically)."""
    write_atomic(out, replay_page(view, back_link=back_link).encode())
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
    return p


def run(replays: Sequence[Path], *, out: Path | None = None, out_dir: Path | None = None) -> int:
    """``arena replay-html REPLAY… [--out FILE | --out-dir DIR]``; the exit code."""
    if out is not None and len(replays) != 1:
        print("arena replay-html: --out takes one replay; use --out-dir for several", file=sys.stderr)
        return EXIT_USAGE
    status = EXIT_OK
    for path in replays:
        try:
            view = load(path)
        except ReplayModelError as e:
            print(f"arena replay-html: {e}", file=sys.stderr)
            status = EXIT_FAILED
            continue
        if out is not None:
            page = out
        elif out_dir is not None:
            page = out_dir / f"{view.match_id or path.stem}.html"
        else:
            page = path.with_suffix(".html")
        write_replay_html(view, page)
        print(f"wrote {page}")
    return status
