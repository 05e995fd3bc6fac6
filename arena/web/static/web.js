// The live web's script (served by the server; no inline script anywhere). It draws what the
// server streams with textContent and DOM calls only: nothing a bot says is ever parsed as HTML.
// Its texts go through i18n.js's t (the page's language).
(function () {
  'use strict';
  const t = window.t;
  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  // A card as the game draws it (the view's faces: rank as printed, suit symbol, ink, name: the
  // one card look of the table, the live view and the replay); without a face, its text.
  let faces = {};
  function card(c) {
    const f = faces[c];
    const e = el('span', 'card' + (f ? ' ink-' + f.ink : ''));
    e.dataset.card = c;
    if (!f) { e.textContent = c; return e; }
    e.append(el('span', 'rank', f.rank), el('span', 'suit', f.suit));
    e.setAttribute('role', 'img');
    e.setAttribute('aria-label', say(f.name));
    e.title = say(f.name);
    return e;
  }
  function cards(list, cls) {
    const g = el('span', cls || 'cards');
    for (const c of list || []) g.append(card(c));
    return g;
  }
  function link(href, text) {
    const a = el('a', '', text);
    a.href = href;
    return a;
  }
  const enc = encodeURIComponent;

  // ----- the front page: standings and matches, live -----
  function rated(v, d) { return v === null || v === undefined ? '\u221e' : t.number(v, d); }
  function standingRow(r) {
    const tr = el('tr');
    tr.dataset.bot = r.bot; tr.dataset.games = r.games;
    const name = el('td');
    name.append(link('/bots/' + enc(r.bot), r.bot));
    if (r.provisional) name.append(' ', el('span', 'tag', t('provisional')));
    const state = t.state(r.state);
    const others = (r.ratings || []).slice(1).map((o) => {
      const td = el('td', '', rated(o.rating, 1) + ' ');
      td.dataset.rater = o.rater;
      td.append(el('small', '', '[' + rated(o.low, 1) + ' \u2026 ' + rated(o.high, 1) + ']'));
      return td;
    });
    tr.append(el('td', '', t.number(r.rank)), name, el('td', '', t.number(r.games)), el('td', '', rated(r.rating, 2)),
      el('td', '', rated(r.uncertainty, 2)), el('td', '', rated(r.low, 1) + ' \u2026 ' + rated(r.high, 1)), ...others,
      el('td', '', r.reason ? state + ' (' + r.reason + ')' : state));
    return tr;
  }
  function drawRaters(rows) {
    // One column per rater after the first, named by it: the header follows the rows it is sent.
    const head = document.querySelector('#standings thead tr');
    if (!head || !rows.length) return;
    const first = head.querySelector('th[data-rater]:not(.rater)');
    if (first && first.dataset.rater !== rows[0].rater) {
      first.dataset.rater = rows[0].rater;
      first.replaceChildren(t('rating') + ' ', el('small', '', rows[0].rater_title));
    }
    const want = (rows[0].ratings || []).slice(1);
    const have = [...head.querySelectorAll('th.rater')];
    if (have.map((th) => th.dataset.rater).join() === want.map((o) => o.rater).join()) return;
    have.forEach((th) => th.remove());
    const state = head.lastElementChild;
    for (const o of want) {
      const th = el('th', 'rater', o.title);
      th.scope = 'col'; th.dataset.rater = o.rater;
      head.insertBefore(th, state);
    }
  }
  function drawStandings(rows) {
    const body = document.querySelector('#standings tbody');
    if (body) { drawRaters(rows); body.replaceChildren(...rows.map(standingRow)); }
  }
  function matchItem(m) {
    const li = el('li');
    li.dataset.match = m.match_id;
    li.append(link('/matches/' + enc(m.match_id), m.match_id),
      ' \u00b7 ' + t.gameName(m.game) + ' \u00b7 ' + m.players.join(t(' vs ')) + ' \u00b7 ' + t.state(m.state));
    if (m.winner) li.append(' \u00b7 ' + t('winner') + ' ', el('b', '', m.winner));
    if (m.termination) li.append(' \u00b7 ' + m.termination);
    return li;
  }
  function drawList(id, list) {
    const ul = $(id);
    if (!ul) return;
    ul.replaceChildren(...(list.length ? list.map(matchItem) : [el('li', 'none', t('none'))]));
  }
  // One fetch at a time; an event during a fetch asks for one more after it, because the
  // answer in flight may have been read before what that event announces.
  let fetching = false;
  let again = false;
  async function refreshMatches() {
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      do {
        again = false;
        const r = await fetch('/api/matches', { headers: { Accept: 'application/json' } });
        if (r.ok) {
          const d = await r.json();
          drawList('running', d.running);
          drawList('recent', d.recent);
        }
      } while (again);
    } finally { fetching = false; }
  }
  function front() {
    const es = new EventSource('/api/events');
    es.onopen = () => { document.body.dataset.live = 'on'; };
    es.addEventListener('standings', (e) => { drawStandings(JSON.parse(e.data).standings); refreshMatches(); });
    es.addEventListener('match', () => refreshMatches());
  }

  // ----- a running match: the spectator's view -----
  function seatBox(s, players) {
    const box = el('div', 'seat');
    box.id = 'live-seat-' + s.seat;
    const head = el('div', 'name', seatName(players, s.seat));
    head.append(el('span', 'tag', t('seat {seat}', { seat: s.seat })));
    if (s.dealer) head.append(el('span', 'tag', t('dealer')));
    if (s.to_move) head.append(el('span', 'tag tomove', t('to move')));
    for (const n of s.notes || []) head.append(el('span', 'notes', say(n)));
    const hand = el('div', 'hand');
    hand.id = 'live-hand-' + s.seat;
    if (s.hand) {
      const all = [];
      for (const g of s.hand.groups) { hand.append(cards(g, 'meld')); all.push(...g); }
      if (s.hand.loose.length) {
        const loose = cards(s.hand.loose, 'loose');
        if (looseName) loose.title = say(looseName);  // what the game calls the cards outside its groups
        hand.append(loose); all.push(...s.hand.loose);
      }
      hand.dataset.cards = all.join(' ');
    } else {
      hand.dataset.cards = '';
      hand.append(el('span', 'hidden-hand', t(['{n} card, face down', '{n} cards, face down'], { n: s.count })));
    }
    box.append(head, hand);
    return box;
  }
  function seatName(players, seat) {
    return players[seat] || t('seat {seat}', { seat: seat });
  }
  let say = (text) => text;  // the game's words in the page's language (t.game), for the view drawn
  let looseName = '';
  function drawView(d) {
    const v = d.view, players = d.players;
    say = (text) => t.game(text, v && v.texts, d.game, players);
    faces = (v && v.faces) || {};
    looseName = (v && v.loose_name) || '';
    $('live-state').textContent = t.state(d.state);
    $('live-position').textContent = d.position
      ? t('game {game}, deal {deal}', { game: d.position.game, deal: d.position.deal }) : '';
    if (!v) return;
    const scores = $('live-scores');
    scores.replaceChildren(...v.scores.map((p, s) => {
      const b = el('span', 'score', seatName(players, s) + ' ');
      const n = el('b', '', p); n.id = 'live-score-' + s; b.append(n);
      return b;
    }));
    $('live-seats').replaceChildren(...v.seats.map((s) => seatBox(s, players)));
    $('live-table').replaceChildren(...(v.table || []).map((m) => {
      const t = el('div', 'tmeld');
      t.append(el('span', 'owner', m.label), cards(m.cards));
      t.dataset.cards = m.cards.join(' ');
      return t;
    }));
    $('live-piles').replaceChildren(...v.piles.map((p) => {
      const box = el('div', 'pile');
      box.id = 'live-pile-' + p.name.replace(/ /g, '-');
      box.dataset.count = p.count;
      box.dataset.cards = p.cards ? p.cards.join(' ') : '';
      box.append(el('span', 'label', say(p.name) + ' (' + t.number(p.count) + ')'));
      box.append(p.cards ? cards(p.cards) : el('span', 'facedown', t('face down')));
      return box;
    }));
    $('live-notes').textContent = (v.notes || []).map(say).join(' · ');  // the deal's facts, as the game says them
    const last = $('live-last');
    last.replaceChildren();
    if (v.last) {
      last.append(el('span', 'who', seatName(players, v.last.seat) + ' '), el('span', 'what', say(v.last.text)));
      last.dataset.text = v.last.text;
    }
    const end = $('live-end');
    end.replaceChildren();
    if (v.end) {
      end.append(el('h3', '', say(v.end.text)));
      for (const s of v.end.seats) {
        const row = el('div', 'end-seat', seatName(players, s.seat) + ': ' + (s.notes || []).map(say).join(' · ') + ' ');
        for (const g of s.groups) row.append(cards(g, 'meld'));
        row.append(cards(s.loose, 'loose'));
        if (s.laid_off.length) row.append(' ' + t('laid off') + ' ', cards(s.laid_off));
        end.append(row);
      }
    }
  }
  function live() {
    const id = document.body.dataset.match;
    const es = new EventSource('/api/matches/' + enc(id) + '/events');
    es.onopen = () => { document.body.dataset.live = 'on'; };
    es.addEventListener('view', (e) => drawView(JSON.parse(e.data)));
    es.addEventListener('end', (e) => {
      es.close();
      $('live-state').textContent = t.state(JSON.parse(e.data).state);
      $('live-replay').classList.remove('hidden');
    });
  }

  // body[data-live="on"]: the live-update stream is open (for tests and tools).
  const page = document.body.dataset.page;
  if (page === 'front') front();
  else if (page === 'live') live();
})();
