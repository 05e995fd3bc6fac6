// A person's table: draws the seat's stream (each message in proto3 JSON, with the game's
// description of this seat's view beside it) and posts the person's moves. Nothing a bot says
// reaches innerHTML: text goes in with textContent and DOM calls only. Its own words go through
// t() (static/i18n.js: the page's language); what the game describes (a move's text, a pile's
// name, the notes, a deal's end, the log of the others' moves) through t.game(), with the game's
// own catalog and the texts that came with them (English where the game has no catalog for the
// language).
'use strict';
(function () {
  const body = document.body;
  if (body.dataset.page !== 'table' || !body.dataset.events) return;
  const me = Number(body.dataset.seat);
  const game = body.dataset.game || '';
  let players = JSON.parse(body.dataset.players);
  const $ = (id) => document.getElementById(id);
  const received = [];            // every payload, in order (the tests read it)
  window.__tablePayloads = received;
  let view = null;                // the latest description of this seat's view
  let request = null;             // the open action request (null: not our turn)
  let requestAt = 0;
  let theirSince = Date.now();
  let over = false;
  let sending = false;
  let selected = [];              // the hand's cards the person selected, in the order chosen
  let opened = '';                // the kind of move whose every way is listed ('' : none)
  const MANY = 12;                // more moves of one kind than this: grouped under the kind
  const TURN = t('● Your turn — ');  // the title's prefix while it is the person's turn
  // The result fields the games' protos have, in the page's language (any other: its own words).
  const FIELDS = {cards: t('cards'), melds: t('melds'), 'laid off': t('laid off'), 'deadwood cards': t('deadwood cards'),
    deadwood: t('deadwood'), outcome: t('outcome'), knocker: t('knocker'), points: t('points'), doubled: t('doubled'),
    hands: t('hands'), 'knock discard': t('knock discard'), 'deal points': t('deal points'), 'deals won': t('deals won'),
    shutout: t('shutout'), reason: t('reason'), 'rummy doubled': t('rummy doubled'), 'hand values': t('hand values'),
    'table points': t('table points'), table: t('table'), deals: t('deals')};

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // A text of the game's description in the page's language, each seat's {N} its player's name.
  function named(text) {
    return String(t.game(text, view && view.texts, game, players)).replace(/\{(\d+)\}/g, (_m, n) => (Number(n) === me ? t('you') : (players[Number(n)] || t('seat {seat}', {seat: n}))));
  }
  function card(c) {
    const e = el('span', 'card ' + (/[hd]$/.test(c) ? 'red' : 'black'), c);
    e.dataset.card = c;
    return e;
  }
  function cards(list, cls) {
    const box = el('span', cls || 'cards');
    for (const c of list || []) box.appendChild(card(c));
    return box;
  }
  function backs(n) {
    const box = el('span', 'cards backs');
    box.appendChild(el('span', 'card back', '🂠'));
    box.appendChild(el('span', 'count', '× ' + t.number(n)));
    return box;
  }
  // A card of the person's hand: a toggle (click, tap, or arrow keys to move and space to press).
  function pick(c) {
    const b = el('button', 'card pick ' + (/[hd]$/.test(c) ? 'red' : 'black'), c);
    b.type = 'button';
    b.dataset.card = c;
    b.setAttribute('aria-pressed', selected.includes(c) ? 'true' : 'false');
    b.addEventListener('click', () => toggle(c));
    return b;
  }
  function picks(list, cls) {
    const box = el('span', cls);
    for (const c of list || []) box.appendChild(pick(c));
    return box;
  }
  function toggle(c) {
    selected = selected.includes(c) ? selected.filter((x) => x !== c) : selected.concat([c]);
    drawView();
    const again = document.querySelector('#me [data-card="' + c + '"]');
    if (again) again.focus();
  }
  function badge(seat) {
    const b = el('span', 'badge', seat === me ? t('you') : String(seat));
    b.title = t('laid by {name}', {name: who(seat)});
    return b;
  }
  function seatBox(target, s) {
    target.textContent = '';
    if (!s) return;
    target.classList.toggle('tomove', !!s.to_move);
    const head = el('div', 'name', s.seat === me ? t('You') : (players[s.seat] || t('seat {seat}', {seat: s.seat})));
    if (s.dealer) head.appendChild(el('span', 'tag', t('dealer')));
    if (s.to_move) head.appendChild(el('span', 'tag tomove', s.seat === me ? t('your turn') : t('to move')));
    head.appendChild(el('span', 'notes', t(['{n} card', '{n} cards'], {n: s.count}) + (s.notes.length ? ' · ' + s.notes.map(named).join(' · ') : '')));
    target.appendChild(head);
    if (!s.hand) { target.appendChild(backs(s.count)); return; }
    const hand = el('div', 'hand');
    const show = s.seat === me ? picks : cards;
    for (const g of s.hand.groups) { const m = show(g, 'meld'); m.title = t('meld'); hand.appendChild(m); }
    if (s.hand.loose.length) {
      const d = show(s.hand.loose, 'loose');
      d.title = t('deadwood');
      hand.appendChild(el('span', 'label', t('deadwood')));
      hand.appendChild(d);
    }
    target.appendChild(hand);
  }
  // A meld on the table: its cards, each with a badge naming who laid it.
  function meldRow(m) {
    const row = el('div', 'pile tmeld');
    row.dataset.owner = m.owner === null ? '' : String(m.owner);
    row.appendChild(el('span', 'label', m.owner === null ? t('meld {label}', {label: named(m.label)})
      : t('meld {label} of {name}', {label: named(m.label), name: who(m.owner)})));
    const box = el('span', 'cards');
    m.cards.forEach((c, i) => {
      const e = card(c);
      if (m.placed_by && m.placed_by[i] !== undefined) { e.dataset.by = String(m.placed_by[i]); e.appendChild(badge(m.placed_by[i])); }
      box.appendChild(e);
    });
    row.appendChild(box);
    return row;
  }
  function drawView() {
    if (!view) return;
    const mine = view.seats.find((s) => s.seat === me);
    const held = mine && mine.hand ? [].concat(...mine.hand.groups, mine.hand.loose) : [];
    selected = selected.filter((c) => held.includes(c));
    // the others clockwise from the person's left
    const theirs = view.seats.filter((s) => s.seat !== me)
      .sort((a, b) => ((a.seat - me + view.seats.length) % view.seats.length) - ((b.seat - me + view.seats.length) % view.seats.length));
    const opp = $('opponent');
    opp.textContent = '';
    for (const s of theirs) { const box = el('div', 'other'); seatBox(box, s); opp.appendChild(box); }
    seatBox($('me'), mine);
    const piles = $('piles');
    piles.textContent = '';
    for (const p of view.piles) {
      const row = el('div', 'pile');
      row.appendChild(el('span', 'label', named(p.name) + ' (' + t.number(p.count) + ')'));
      if (p.cards === null) row.appendChild(backs(p.count));
      else row.appendChild(cards(p.cards));
      piles.appendChild(row);
    }
    if (view.table) {
      if (view.table.length) piles.appendChild(el('div', 'label', t('on the table')));
      for (const m of view.table) piles.appendChild(meldRow(m));
    }
    const last = $('last');
    last.textContent = '';
    if (view.last) {
      last.appendChild(el('span', '', who(view.last.seat) + ': ' + named(view.last.text)));
    }
    if (view.end) drawEnd(view.end, null);
    drawMoves();
  }
  // The moves shown: with cards selected, the legal moves using them all (exactly those first);
  // with none, every move, except that a kind of move needing several cards (or offered in too
  // many ways) is one button naming how many ways it has, listing them when pressed.
  function shownMoves(legal) {
    const has = (m) => selected.every((c) => m.cards.includes(c));
    if (selected.length) {
      const fit = legal.filter(has);
      return {moves: fit.filter((m) => m.cards.length === selected.length).concat(fit.filter((m) => m.cards.length !== selected.length)), groups: []};
    }
    const kinds = {};
    for (const m of legal) (kinds[m.kind] = kinds[m.kind] || []).push(m);
    const grouped = (k) => k !== opened && (kinds[k].some((m) => m.cards.length > 1) || kinds[k].length > MANY);
    return {moves: legal.filter((m) => !grouped(m.kind)),
            groups: Object.keys(kinds).filter(grouped).map((k) => ({kind: k, ways: kinds[k]}))};
  }
  let drawnMoves = '';
  let shown = [];                 // the move buttons' moves, in order (the number keys press them)
  function drawMoves() {
    const box = $('moves');
    const legal = request && view ? view.legal : [];
    const key = JSON.stringify([legal, sending, selected, opened]);
    if (key === drawnMoves) return;  // unchanged: keep the buttons (and the focus) as they are
    drawnMoves = key;
    box.textContent = '';
    const sel = $('selection');
    sel.textContent = '';
    if (selected.length) {
      sel.appendChild(el('span', 'label', t('selected: ')));
      sel.appendChild(cards(selected));
      const clear = el('button', 'clear', t('clear'));
      clear.type = 'button';
      clear.addEventListener('click', () => { selected = []; drawView(); });
      sel.appendChild(clear);
    }
    const {moves, groups} = shownMoves(legal);
    shown = moves;
    moves.forEach((m, i) => {
      const b = el('button', 'move', (i < 9 ? (i + 1) + ' · ' : '') + named(m.label));
      b.type = 'button';
      b.dataset.action = m.id;
      b.disabled = sending;
      b.addEventListener('click', () => send(m.id));
      box.appendChild(b);
    });
    for (const g of groups) {
      const b = el('button', 'group', t(['{kind} ({n} way) — select its cards', '{kind} ({n} ways) — select its cards'],
        {kind: words(g.kind.replace(/_/g, ' ')), n: g.ways.length}));
      b.type = 'button';
      b.dataset.kind = g.kind;
      b.disabled = sending;
      b.addEventListener('click', () => { opened = g.kind; drawMoves(); });
      box.appendChild(b);
    }
    if (selected.length && legal.length && !moves.length) box.appendChild(el('p', 'none', t('no move uses all the selected cards')));
    signal(legal.length > 0);
  }
  function signal(yours) {
    body.classList.toggle('your-turn', yours);
    const title = document.title.startsWith(TURN) ? document.title.slice(TURN.length) : document.title;
    document.title = (yours ? TURN : '') + title;
    if (!over) $('status').textContent = yours ? t('Your turn: choose a move (click, or press its number; select cards to narrow the moves)') : (body.dataset.others ? t('Waiting for the others…') : t('The computer is thinking…'));
  }
  async function send(id) {
    if (!request || sending) return;
    sending = true;
    selected = [];
    opened = '';
    $('problem').textContent = '';
    if (!(view && view.end)) $('end').hidden = true;  // the last deal's end stays until the next move
    const rid = request.requestId;
    drawMoves();
    try {
      const r = await fetch(body.dataset.move, {
        method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({action: id, request_id: String(rid)}), credentials: 'same-origin'});
      if (!r.ok) {
        const e = await r.json().catch(() => ({error: r.statusText}));
        $('problem').textContent = e.say || e.error || t('refused: {status}', {status: r.status});
      } else if (request && request.requestId === rid) {
        request = null;  // answered: its moves are gone until the referee asks again (never offered twice)
      }
    } catch (e) {
      $('problem').textContent = t('the move could not be sent: {why}', {why: String(e)});
    } finally {
      sending = false;
      drawMoves();
    }
  }
  function words(key) {
    const w = key.replace(/([A-Z])/g, ' $1').toLowerCase();
    return Object.prototype.hasOwnProperty.call(FIELDS, w) ? FIELDS[w] : w;
  }
  // A game's own part of a result, drawn field by field (the page names no game).
  function fields(obj, into) {
    for (const [k, v] of Object.entries(obj || {})) {
      if (v === '' || (Array.isArray(v) && v.length === 0)) continue;
      if (Array.isArray(v) && v.every((x) => typeof x === 'string' && /^[2-9TJQKA][shdc]$/.test(x))) {
        const row = el('div', 'field');
        row.appendChild(el('span', 'label', words(k)));
        row.appendChild(cards(v));
        into.appendChild(row);
      } else if (Array.isArray(v) && v.length === players.length && v.every((x) => typeof x === 'number' || /^-?\d+$/.test(String(x)))) {
        into.appendChild(el('div', 'field', words(k) + ': ' + v.map((x, i) => who(i) + ' ' + t.number(Number(x))).join(', ')));
      } else if (Array.isArray(v)) {
        v.forEach((x, i) => {
          const sub = el('div', 'sub');
          const seatOf = x && typeof x === 'object' && 'seat' in x ? Number(x.seat) : (k === 'hands' ? i : -1);
          sub.appendChild(el('div', 'label', seatOf >= 0 ? who(seatOf) : words(k) + ' ' + (i + 1)));
          if (typeof x === 'object') fields(x, sub); else sub.appendChild(el('span', '', String(x)));
          into.appendChild(sub);
        });
      } else if (typeof v === 'object' && v !== null) {
        const sub = el('div', 'sub');
        sub.appendChild(el('div', 'label', words(k)));
        fields(v, sub);
        into.appendChild(sub);
      } else if (/^[2-9TJQKA][shdc]$/.test(String(v))) {
        const row = el('div', 'field');
        row.appendChild(el('span', 'label', words(k)));
        row.appendChild(card(String(v)));
        into.appendChild(row);
      } else {
        if (k === 'seat') continue;
        into.appendChild(el('div', 'field', words(k) + ': ' + String(v).replace(/^[A-Z]+(?:_[A-Z]+)*?_(?=[A-Z]+$)/, '').toLowerCase()));
      }
    }
  }
  function drawEnd(end, result, text) {
    const box = $('end');
    box.hidden = false;
    box.textContent = '';
    box.appendChild(el('h2', '', t('The deal’s end')));
    if (end) {
      box.appendChild(el('p', 'end-text', named(end.text)));
      for (const s of end.seats) {
        const row = el('div', 'seat');
        row.dataset.seat = String(s.seat);
        row.appendChild(el('div', 'name', (s.seat === me ? t('You') : players[s.seat]) + ' · ' + s.notes.map(named).join(' · ')));
        if (s.counted === 'all') { endHand(row, s); box.appendChild(row); continue; }
        for (const g of s.groups) row.appendChild(cards(g, 'meld'));
        if (s.loose.length) { row.appendChild(el('span', 'label', t('deadwood'))); row.appendChild(cards(s.loose, 'loose')); }
        if (s.laid_off.length) { row.appendChild(el('span', 'label', t('laid off'))); row.appendChild(cards(s.laid_off, 'meld')); }
        box.appendChild(row);
      }
      endTable(box, end);
      box.appendChild(el('p', 'points', t('points: {list}', {list: byWho(end.points)})));
      if (end.totals && end.totals.length) box.appendChild(el('p', 'totals', t('the game so far: {scores}', {scores: byWho(end.totals)})));
    } else if (result) {
      const w = result.winner === undefined ? 0 : result.winner;
      box.appendChild(el('p', 'end-text', w < 0 ? t('nobody scores') : (w === me ? t('You won the deal') : t('{name} won the deal', {name: players[w]}))));
      if (text) box.appendChild(el('p', 'end-words', text));
      for (const [k, v] of Object.entries(result)) {
        if (v && typeof v === 'object' && !Array.isArray(v)) fields(v, box);
        else if (k === 'scoresAfter') box.appendChild(el('p', 'points', t('scores: {list}', {list: byWho(v)})));
      }
    }
  }
  // A hand left at a deal's end whose every card counts (``counted: 'all'``): its melds and the
  // rest, all marked as paid for, and what the seat laid off this deal.
  function endHand(row, s) {
    const held = el('div', 'left');
    if (s.groups.length || s.loose.length) held.appendChild(el('span', 'label', t('cards left, every one counts:')));
    else held.appendChild(el('span', 'label', t('no cards left')));
    for (const g of s.groups) held.appendChild(cards(g, 'meld penalty'));
    if (s.loose.length) held.appendChild(cards(s.loose, 'loose penalty'));
    row.appendChild(held);
    if (s.laid_off.length) {
      const off = el('div', 'laid');
      off.appendChild(el('span', 'label', t('laid off this deal:')));
      off.appendChild(cards(s.laid_off, 'meld'));
      row.appendChild(off);
    }
  }
  // The melds on the table at a deal's end, with who laid each card.
  function endTable(box, end) {
    if (!end.table || !end.table.length) return;
    const table = el('div', 'end-table');
    table.appendChild(el('h3', '', t('On the table')));
    for (const m of end.table) table.appendChild(meldRow(m));
    box.appendChild(table);
  }
  // Each seat's number: "you 12, bob 30".
  function byWho(values) { return values.map((p, i) => (i === me ? t('you') : players[i]) + ' ' + t.number(Number(p))).join(', '); }
  function sheetRow(cells, cls) {
    const tr = el('tr', cls || '');
    for (const c of cells) tr.appendChild(el('td', '', typeof c === 'number' ? t.number(c) : String(c)));
    $('scores').tBodies[0].appendChild(tr);
  }
  function sheetHead() {
    const head = $('scores').tHead;
    if (head.rows.length) return;
    const tr = el('tr');
    for (const c of [t('game'), t('deal'), t('won by'), ...players.map((p, i) => (i === me ? t('you') : p))]) tr.appendChild(el('th', '', c));
    head.appendChild(tr);
  }
  // A game's end on the score sheet, before its totals: the game's own numbers by seat (its
  // result's fields, e.g. Gin's deal points and deals won), its flags the page has words for (a
  // shutout), and the bonuses: the final totals less the deal points, where the game has them.
  function gameRows(r) {
    const totals = (r.finalTotals || []).map(Number);
    const common = ['gameNumber', 'winner', 'finalTotals', 'places'];
    const own = Object.entries(r).find(([k, v]) => !common.includes(k) && v && typeof v === 'object' && !Array.isArray(v));
    const detail = own ? own[1] : {};
    const perSeat = (v) => Array.isArray(v) && v.length === totals.length && v.length > 0 && v.every((x) => /^-?\d+$/.test(String(x)));
    const blank = totals.map(() => '');
    for (const [k, v] of Object.entries(detail)) {
      if (perSeat(v)) sheetRow([words(k), '', '', ...v.map(Number)], 'detail');
      else if (v === true && Object.prototype.hasOwnProperty.call(FIELDS, k.replace(/([A-Z])/g, ' $1').toLowerCase())) sheetRow([words(k), '', who(r.winner === undefined ? 0 : r.winner), ...blank], 'detail');
    }
    if (perSeat(detail.dealPoints)) {
      const bonus = totals.map((x, i) => x - Number(detail.dealPoints[i]));
      if (bonus.some((b) => b !== 0)) sheetRow([t('bonuses'), '', '', ...bonus], 'detail');
    }
  }
  function who(seat) { return seat === undefined || seat < 0 ? '—' : (seat === me ? t('you') : players[seat]); }
  function handle(p) {
    received.push(p);
    const m = p.message;
    if (p.kind === 'seats') players = m.seats.map((s) => s.name);
    if (window.tablePeople && window.tablePeople.handle(p)) return;  // people.js: the waiting room, notices
    if (p.view) view = p.view;
    if (p.kind === 'action_request') {
      request = m.actionRequest;
      requestAt = Date.now();
    } else if (p.kind === 'action_rejected') {
      $('problem').textContent = t('The referee refused that move: {reason}', {reason: m.actionRejected.reason || ''});
    } else if (p.kind === 'deal_finished' || p.kind === 'game_finished' || p.kind === 'match_finished') {
      request = null;
    }
    if (p.kind === 'deal_started') theirSince = Date.now();
    if (p.kind === 'event' && Number(m.event.seat) !== me) {  // the move in the game's words
      const said = p.text ? t.game(p.text, p.texts, game, players) : t('moved');
      $('log').appendChild(el('li', '', who(Number(m.event.seat)) + ': ' + said));
      theirSince = Date.now();
    }
    if (p.kind === 'deal_finished') {
      const r = m.dealFinished.result;
      sheetHead();
      sheetRow([r.gameNumber || 1, r.dealNumber || 1, who(r.winner === undefined ? 0 : r.winner), ...(r.scoresAfter || [])]);
      drawEnd(null, r, p.text);
    } else if (p.kind === 'game_finished') {
      const r = m.gameFinished.result;
      sheetHead();
      gameRows(r);
      sheetRow([t('game {n} over', {n: t.number(r.gameNumber || 1)}), '', who(r.winner === undefined ? 0 : r.winner), ...(r.finalTotals || [])], 'total');
    } else if (p.kind === 'match_finished') {
      const r = m.matchFinished.result;
      over = true;
      const w = r.winner === undefined ? 0 : r.winner;
      const won = w < 0 ? t('no winner') : (w === me ? t('you won!') : t('{name} won', {name: players[w]}));
      $('status').textContent = (r.detail ? t('Game over: {result} ({detail})', {result: won, detail: r.detail})
        : t('Game over: {result}', {result: won}));
      body.dataset.over = 'yes';
    } else if (p.kind === 'replay') {
      const box = $('replay');
      box.hidden = false;
      box.textContent = '';
      const a = el('a', '', t('the replay of this game'));
      a.href = m.href;
      box.appendChild(a);
    } else if (p.kind === 'error') {
      if (m.error && m.error.code === 'ERROR_CODE_TOO_LATE') request = null;  // the computer played it
      $('problem').textContent = (m.error && m.error.message) || m.message || t('the referee sent an error');
    }
    drawView();
    tick();
  }
  function tick() {
    const mine = $('my-clock');
    const theirs = $('their-clock');
    if (request && !over) {
      const left = Math.max(0, Number(request.timeForMoveMs || 0) - (Date.now() - requestAt));
      mine.textContent = t('your time for this move: {s} s', {s: t.number(Math.ceil(left / 1000))});
      theirs.textContent = '';
    } else if (!over) {
      mine.textContent = '';
      const thinking = view && view.to_move !== null && view.to_move !== undefined && view.to_move !== me ? who(view.to_move) : (body.dataset.others ? t('the others') : t('the computer'));
      theirs.textContent = t('{who}: {s} s', {who: thinking, s: t.number(Math.floor((Date.now() - theirSince) / 1000))});
    } else { mine.textContent = ''; theirs.textContent = ''; }
  }
  setInterval(tick, 250);
  document.addEventListener('keydown', (e) => {
    if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT')) return;
    const n = Number(e.key);
    if (n >= 1 && n <= 9 && request && shown[n - 1]) { e.preventDefault(); send(shown[n - 1].id); return; }
    // the hand's cards: the arrow keys move between them (space or enter presses one)
    const hand = [...document.querySelectorAll('#me [data-card]')];
    const at = hand.indexOf(document.activeElement);
    if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && hand.length) {
      e.preventDefault();
      const next = at < 0 ? 0 : (at + (e.key === 'ArrowRight' ? 1 : hand.length - 1)) % hand.length;
      hand[next].focus();
    } else if (e.key === 'Escape' && selected.length) { selected = []; drawView(); }
  });
  const source = new EventSource(body.dataset.events);
  source.addEventListener('table', (e) => handle(JSON.parse(e.data)));
  source.addEventListener('over', () => { source.close(); body.dataset.closed = 'yes'; });
  source.onopen = () => { body.dataset.live = 'on'; };
})();
