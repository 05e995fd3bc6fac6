// A person's table: draws the seat's stream (each message in proto3 JSON, with the game's
// description of this seat's view beside it) and posts the person's moves. Nothing a bot says
// reaches innerHTML: text goes in with textContent and DOM calls only. Its own words go through
// t() (static/i18n.js: the page's language); what the game describes (a move's text, a pile's
// name, the notes, a deal's end, the log of the others' moves) through t.game(), with the game's
// own catalog and the texts that came with them (English where the game has no catalog for the
// language), in the second person where the reader is the subject (t.game's "you" forms).
// A card table, not a form (docs/web.md#play-the-computer-tables): every card is drawn from the
// game's faces; the person plays by touching cards, the piles and the table's melds (direct
// play: the description says which pile or meld each legal move uses), with named moves for the
// rest and the numbered list of every legal move as the fallback.
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
  let order = [];                 // the person's own order of their hand ([]: as the game groups it)
  let selected = [];              // the hand's cards the person selected, in the order chosen
  let opened = '';                // the kind of move whose every way is listed ('' : none)
  const MANY = 12;                // more moves of one kind than this: grouped under the kind
  const TURN = t('● Your turn — ');  // the title's prefix while it is the person's turn
  // The game's result fields it has words for (its registration's result_words, translated by its
  // catalog through t.game); any other field shows its key.
  const FIELDS = JSON.parse(body.dataset.fields || '[]');

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // A text of the game's description in the page's language, each seat's {N} its player's name.
  function named(text, texts, subject) {
    return faced(String(t.game(text, texts || (view && view.texts), game, players, '{' + me + '}', subject))).replace(/\{(\d+)\}/g, (_m, n) => (Number(n) === me ? t('you') : (players[Number(n)] || t('seat {seat}', {seat: n}))));
  }
  // A card as the game draws it (the description's faces: rank as printed, suit symbol, ink,
  // name); a card without a face shows its text. `e` is the element to dress.
  function dress(e, c) {
    const f = view && view.faces && view.faces[c];
    e.dataset.card = c;
    if (!f) { e.textContent = c; return e; }
    e.classList.add('ink-' + f.ink);
    e.appendChild(el('span', 'rank', f.rank));
    e.appendChild(el('span', 'suit', f.suit));
    const name = named(f.name);
    e.setAttribute('aria-label', name);
    e.title = name;
    if (view.last && view.last.cards && view.last.cards.includes(c) && view.last.seat !== me) e.classList.add('fresh');
    return e;
  }
  // A text's cards as their faces print them ("discard 10♣", not "discard Tc"): each whole word
  // that is a card of the view's faces.
  function faced(text) {
    const faces = (view && view.faces) || {};
    return text.replace(/\S+/g, (w) => (Object.prototype.hasOwnProperty.call(faces, w) ? faces[w].rank + faces[w].suit : w));
  }
  // A seat's move as a sentence: "you draw 4s from the stock", "greedy draws from the stock".
  function moveLine(seat, text, texts) {
    return seat === me ? sentence(named(text, texts, true)) : who(seat) + ' ' + named(text, texts);
  }
  function sentence(text) { return text.charAt(0).toUpperCase() + text.slice(1); }
  function card(c) {
    const e = dress(el('span', 'card'), c);
    if (e.getAttribute('aria-label')) e.setAttribute('role', 'img');
    return e;
  }
  function cards(list, cls) {
    const box = el('span', cls || 'cards');
    for (const c of list || []) box.appendChild(card(c));
    return box;
  }
  function backs(n) {
    const box = el('span', 'cards backs');
    const b = el('span', 'card back');
    b.setAttribute('aria-hidden', 'true');
    box.appendChild(b);
    box.appendChild(el('span', 'count', '× ' + t.number(n)));
    return box;
  }
  // A card of the person's hand: a toggle (click, tap, or arrow keys to move and space to press),
  // and, when a move puts it on a pile or a meld of the table, a card to drag there.
  function pick(c) {
    const b = dress(el('button', 'card pick'), c);
    b.type = 'button';
    b.setAttribute('aria-pressed', selected.includes(c) ? 'true' : 'false');
    b.addEventListener('click', () => toggle(c));
    b.addEventListener('pointerdown', (e) => grab(e, b, c));
    b.addEventListener('touchmove', (e) => { if (dragging && dragging.moved) e.preventDefault(); }, {passive: false});
    // (its CSS keeps a finger's drag from scrolling the page; a move on its way ends soon)
    if (drops(carried(c), true).length) b.classList.add('drag');
    return b;
  }
  // Drag to discard (or to lay off): a card of the hand dragged by the mouse, a pen or a finger
  // (pointer events) and let go on a pile or a meld of the table makes the legal move that puts it
  // there — a card of several selected carries them all; let go anywhere else, nothing is played.
  // A press that moves less than DRAG_PX is a tap (it selects the card). Tapping the card and then
  // the pile, the named moves and the list of moves stay for the keyboard and the rest.
  const DRAG_PX = 8;
  let dragging = null;            // the drag under way: {cards, x, y, ghost, moved, pointer}
  function carried(c) { return selected.length > 1 && selected.includes(c) ? selected : [c]; }
  function drops(list, evenSending) {
    const legal = evenSending && request && view && !over ? view.legal : legalNow();
    return legal.filter((m) => (m.to_pile !== undefined || m.to_meld !== undefined) && same(m.cards, list));
  }
  function spots() { return [...document.querySelectorAll('#piles [data-pile], #piles [data-meld]')]; }
  function dropAt(x, y) {
    const under = document.elementFromPoint(x, y);
    const spot = under && under.closest('#piles [data-pile], #piles [data-meld]');
    if (!spot || !dragging) return null;
    const [key, i] = spot.dataset.pile !== undefined ? ['to_pile', Number(spot.dataset.pile)] : ['to_meld', Number(spot.dataset.meld)];
    const move = drops(dragging.cards).find((m) => m[key] === i);
    return move ? {spot, move} : null;
  }
  function grab(e, b, c) {
    if (dragging || (e.pointerType === 'mouse' && e.button !== 0) || !drops(carried(c)).length) return;
    const r = b.getBoundingClientRect();
    dragging = {cards: carried(c), x: e.clientX, y: e.clientY, dx: e.clientX - r.left, dy: e.clientY - r.top,
                ghost: null, moved: false, pointer: e.pointerId, from: b};
    window.addEventListener('pointermove', drag, true);
    window.addEventListener('pointerup', drop, true);
    window.addEventListener('pointercancel', cancelDrag, true);
  }
  function drag(e) {
    if (!dragging || e.pointerId !== dragging.pointer) return;
    if (!dragging.moved) {
      if (Math.hypot(e.clientX - dragging.x, e.clientY - dragging.y) < DRAG_PX) return;
      dragging.moved = true;
      const g = dragging.from.cloneNode(true);  // what the finger carries (the card stays in the hand, dimmed)
      g.className = 'card pick ghost ' + [...dragging.from.classList].filter((k) => k.startsWith('ink-')).join(' ');
      g.removeAttribute('id');
      g.setAttribute('aria-hidden', 'true');
      g.tabIndex = -1;
      if (dragging.cards.length > 1) g.appendChild(el('span', 'badge', '×' + t.number(dragging.cards.length)));
      document.body.appendChild(g);
      dragging.ghost = g;
      dragging.from.classList.add('lifted');
      body.classList.add('dragging');
      for (const s of spots()) {
        const key = s.dataset.pile !== undefined ? 'to_pile' : 'to_meld';
        const i = Number(s.dataset.pile !== undefined ? s.dataset.pile : s.dataset.meld);
        if (drops(dragging.cards).some((m) => m[key] === i)) s.classList.add('drop');
      }
    }
    dragging.ghost.style.transform = 'translate(' + (e.clientX - dragging.dx) + 'px,' + (e.clientY - dragging.dy) + 'px)';
    const at = dropAt(e.clientX, e.clientY);
    for (const s of spots()) s.classList.toggle('over', !!at && at.spot === s);
  }
  function endDrag() {
    window.removeEventListener('pointermove', drag, true);
    window.removeEventListener('pointerup', drop, true);
    window.removeEventListener('pointercancel', cancelDrag, true);
    if (dragging && dragging.ghost) dragging.ghost.remove();
    if (dragging) dragging.from.classList.remove('lifted');
    body.classList.remove('dragging');
    for (const s of spots()) s.classList.remove('drop', 'over');
  }
  function drop(e) {
    if (!dragging || e.pointerId !== dragging.pointer) return;
    const moved = dragging.moved;
    const at = moved ? dropAt(e.clientX, e.clientY) : null;
    endDrag();
    dragging = null;
    if (!moved) return;  // a tap: the click selects the card
    // the mouse's click that follows the release (dispatched with it, before any timer) is no tap
    const swallow = (k) => { k.stopPropagation(); k.preventDefault(); };
    window.addEventListener('click', swallow, true);
    setTimeout(() => window.removeEventListener('click', swallow, true), 0);
    if (at) send(at.move.id);
  }
  function cancelDrag() { endDrag(); dragging = null; }
  function picks(list, cls) {
    const box = el('span', cls);
    for (const c of list || []) box.appendChild(pick(c));
    return box;
  }
  // Moves a card of the hand one place left or right in the person's own order.
  function shift(c, dir) {
    if (!order.length) order = [...document.querySelectorAll('#me [data-card]')].map((e) => e.dataset.card);
    const i = order.indexOf(c);
    const j = i + dir;
    if (i < 0 || j < 0 || j >= order.length) return;
    order[i] = order[j];
    order[j] = c;
    drawnMoves = '';
    drawView();
    const again = document.querySelector('#me [data-card="' + c + '"]');
    if (again) again.focus();
  }
  function toggle(c) {
    selected = selected.includes(c) ? selected.filter((x) => x !== c) : selected.concat([c]);
    drawView();
    const again = document.querySelector('#me [data-card="' + c + '"]');
    if (again) again.focus();
  }
  // A labelled group of cards: its label above it, the two kept together when the row wraps.
  function part(label, box) {
    const p = el('span', 'part');
    p.appendChild(el('span', 'label', label));
    p.appendChild(box);
    return p;
  }
  function badge(seat) {
    const b = el('span', 'badge', who(seat));  // who laid it, by name
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
    if (s.seat === me && order.length) {  // the person's own order (kept in this page only)
      const held = [].concat(...s.hand.groups, s.hand.loose);
      order = order.filter((c) => held.includes(c)).concat(held.filter((c) => !order.includes(c)));
      hand.appendChild(show(order, 'loose own'));
      target.appendChild(hand);
      return;
    }
    for (const g of s.hand.groups) { const m = show(g, 'meld'); m.title = t('meld'); hand.appendChild(m); }
    if (s.hand.loose.length) {  // what the game calls the cards outside its groups, where it names them
      const d = show(s.hand.loose, 'loose');
      hand.appendChild(view.loose_name ? part(named(view.loose_name), d) : d);
    }
    target.appendChild(hand);
  }
  // Direct play: the move a touch on a pile or a meld of the table makes. The game says which
  // pile or meld each legal move takes from or lays on (from_pile, to_pile, to_meld): with cards
  // selected, the move that puts exactly those there; else the move that takes from the pile (the
  // touched card's, where the pile offers several). Only legal moves are ever offered.
  function legalNow() { return request && view && !sending && !over ? view.legal : []; }
  function same(a, b) { return a.length === b.length && a.every((c) => b.includes(c)); }
  function puts(key, i) { return selected.length ? legalNow().filter((m) => m[key] === i && same(m.cards, selected)) : []; }
  function takes(i) { return legalNow().filter((m) => m.from_pile === i); }
  function touchable(box, move, name) {
    box.classList.add('touch');
    box.tabIndex = 0;
    box.setAttribute('role', 'button');
    box.setAttribute('aria-label', name);
    box.dataset.action = move.id;
    const go = (e) => { e.preventDefault(); send(move.id); };
    box.addEventListener('click', go);
    box.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') go(e); });
  }
  function pileRow(p, i) {
    const row = el('div', 'pile');
    row.dataset.pile = String(i);
    const label = named(p.name) + ' (' + t.number(p.count) + ')';
    row.appendChild(el('span', 'label', label));
    const put = puts('to_pile', i);
    const take = takes(i);
    let box;
    if (p.cards === null) box = backs(p.count);
    else box = cards(p.cards, 'cards row');
    if (p.cards && !p.cards.length) {  // an empty pile keeps a card's room: somewhere to tap, or to drop a card on
      const slot = el('span', 'card slot');
      slot.setAttribute('aria-hidden', 'true');
      box.appendChild(slot);
    }
    row.appendChild(box);
    if (put.length) touchable(row, put[0], named(put[0].label));
    else if (take.length === 1) touchable(row, take[0], named(take[0].label));
    else if (take.length > 1 && p.cards) {  // the touched card says which way: each one a control of its own
      for (const e of box.querySelectorAll('[data-card]')) {
        const m = take.find((x) => x.cards.includes(e.dataset.card));
        if (m) touchable(e, m, named(m.label));
      }
    }
    return row;
  }
  // A meld on the table: its cards, each with a badge naming who laid it (a lay-off's target
  // when the selected card goes on it).
  function meldRow(m, i) {
    const row = el('div', 'pile tmeld');
    row.dataset.owner = m.owner === null ? '' : String(m.owner);
    if (i !== undefined) {
      row.dataset.meld = String(i);
      const on = puts('to_meld', i);
      if (on.length) touchable(row, on[0], named(on[0].label));
    }
    row.appendChild(el('span', 'label', m.owner === null ? t('meld {label}', {label: named(m.label)})
      : t('meld {label} of {name}', {label: named(m.label), name: who(m.owner)})));
    const box = el('span', 'cards');
    m.cards.forEach((c, i) => {
      const e = card(c);
      if (m.placed_by && m.placed_by[i] !== undefined) {  // a badge names who laid a card that is not the owner's
        e.dataset.by = String(m.placed_by[i]);
        if (m.placed_by[i] !== m.owner) e.appendChild(badge(m.placed_by[i]));
      }
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
    view.piles.forEach((p, i) => piles.appendChild(pileRow(p, i)));
    if (view.table) {
      if (view.table.length) piles.appendChild(el('div', 'label', t('on the table')));
      view.table.forEach((m, i) => piles.appendChild(meldRow(m, i)));
    }
    const last = $('last');
    last.textContent = '';
    if (view.last) last.appendChild(el('span', '', moveLine(view.last.seat, view.last.text, view.texts)));
    if (view.notes && view.notes.length) piles.appendChild(el('div', 'notes deal-notes', view.notes.map(named).join(' · ')));
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
      if (selected.length === 1) {
        for (const [dir, text] of [[-1, t('move left')], [1, t('move right')]]) {
          const b = el('button', 'clear shift', text);
          b.type = 'button';
          b.dataset.shift = String(dir);
          b.addEventListener('click', () => shift(selected[0], dir));
          sel.appendChild(b);
        }
      }
      if (order.length) {
        const b = el('button', 'clear', t('group by melds'));
        b.type = 'button';
        b.addEventListener('click', () => { order = []; drawnMoves = ''; drawView(); });
        sel.appendChild(b);
      }
      const clear = el('button', 'clear', t('clear'));
      clear.type = 'button';
      clear.addEventListener('click', () => { selected = []; drawView(); });
      sel.appendChild(clear);
    }
    drawActions(legal);
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
  // The named moves (direct play's buttons for what no pile or meld stands for): with cards
  // selected, the moves of exactly those cards (each labelled by the game); the moves of no card
  // always (a pass, and the like). A hint says what a touch does now.
  function drawActions(legal) {
    const box = $('actions');
    box.textContent = '';
    const free = legal.filter((m) => m.from_pile === undefined && m.to_pile === undefined && m.to_meld === undefined);
    const named_ = free.filter((m) => (m.cards.length === 0) || (selected.length && same(m.cards, selected)));
    for (const m of named_) {
      const b = el('button', 'act', named(m.label));
      b.type = 'button';
      b.dataset.action = m.id;
      b.disabled = sending;
      b.addEventListener('click', () => send(m.id));
      box.appendChild(b);
    }
    const hint = $('hint');
    if (!legal.length) { hint.textContent = ''; return; }
    const drawing = legal.some((m) => m.from_pile !== undefined);
    const placing = legal.some((m) => m.to_pile !== undefined || m.to_meld !== undefined || m.cards.length);
    hint.textContent = selected.length
      ? (named_.length || legal.some((m) => (m.to_pile !== undefined || m.to_meld !== undefined) && same(m.cards, selected))
        ? t('Tap where the selected cards go, or a named move.') : t('No move uses exactly the selected cards.'))
      : drawing ? t('Tap the stock or the discard pile to draw.')
        : placing ? (legal.some((m) => (m.to_pile !== undefined || m.to_meld !== undefined) && m.cards.length === 1)
          ? t('Tap a card of your hand to choose it, or drag it where it goes.') : t('Tap a card of your hand to choose it.')) : '';
  }
  function signal(yours) {
    body.classList.toggle('your-turn', yours);
    const title = document.title.startsWith(TURN) ? document.title.slice(TURN.length) : document.title;
    document.title = (yours ? TURN : '') + title;
    if (!over) $('status').textContent = yours ? t('Your turn: tap the cards and the piles (or choose from the list of moves)') : (body.dataset.others ? t('Waiting for the others…') : t('The computer is thinking…'));
  }
  async function send(id) {
    if (!request || sending) return;
    sending = true;
    selected = [];
    opened = '';
    $('problem').textContent = '';
    if (!(view && view.end)) $('end').hidden = true;  // the last deal's end stays until the next move
    const rid = request.requestId;
    drawView();
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
      drawView();  // the piles and the melds touchable again (drawn while the move was on its way)
    }
  }
  function words(key) {
    const w = key.replace(/([A-Z])/g, ' $1').toLowerCase();
    return FIELDS.includes(w) ? t.game(w, null, game) : w;
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
      box.appendChild(el('p', 'end-text', sentence(named(end.text))));
      for (const s of end.seats) {
        const row = el('div', 'seat');
        row.dataset.seat = String(s.seat);
        row.appendChild(el('div', 'name', (s.seat === me ? t('You') : players[s.seat]) + ' · ' + s.notes.map(named).join(' · ')));
        if (s.counted === 'all') { endHand(row, s); box.appendChild(row); continue; }
        const hand = el('div', 'hand');
        for (const g of s.groups) hand.appendChild(cards(g, 'meld'));
        if (s.loose.length) {
          const d = cards(s.loose, 'loose');
          hand.appendChild(view && view.loose_name ? part(named(view.loose_name), d) : d);
        }
        if (s.laid_off.length) hand.appendChild(part(t('laid off'), cards(s.laid_off, 'meld')));
        row.appendChild(hand);
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
  // result's fields, e.g. the deal points and deals won of a game with them), its flags the game
  // has words for (result_words), and the bonuses: the final totals less the deal points, where the game has them.
  function gameRows(r) {
    const totals = (r.finalTotals || []).map(Number);
    const common = ['gameNumber', 'winner', 'finalTotals', 'places'];
    const own = Object.entries(r).find(([k, v]) => !common.includes(k) && v && typeof v === 'object' && !Array.isArray(v));
    const detail = own ? own[1] : {};
    const perSeat = (v) => Array.isArray(v) && v.length === totals.length && v.length > 0 && v.every((x) => /^-?\d+$/.test(String(x)));
    const blank = totals.map(() => '');
    for (const [k, v] of Object.entries(detail)) {
      if (perSeat(v)) sheetRow([words(k), '', '', ...v.map(Number)], 'detail');
      else if (v === true && FIELDS.includes(k.replace(/([A-Z])/g, ' $1').toLowerCase())) sheetRow([words(k), '', who(r.winner === undefined ? 0 : r.winner), ...blank], 'detail');
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
      if (!request) beep();
      request = m.actionRequest;
      requestAt = Date.now();
    } else if (p.kind === 'action_rejected') {
      $('problem').textContent = t('The referee refused that move: {reason}', {reason: m.actionRejected.reason || ''});
    } else if (p.kind === 'deal_finished' || p.kind === 'game_finished' || p.kind === 'match_finished') {
      request = null;
    }
    if (p.kind === 'deal_started') theirSince = Date.now();
    if (p.kind === 'event' && Number(m.event.seat) !== me) {  // the move in the game's words
      const seat = Number(m.event.seat);
      $('log').appendChild(el('li', '', p.text ? moveLine(seat, p.text, p.texts) : who(seat) + ': ' + t('moved')));
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
      $('status').textContent = ending(r);
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
  // The match's end in plain words: "You won the game 134–57", "greedy won the game 134–57"
  // (the winner's points first, then the reader's, or the best of the others' when the reader
  // won); a match that did not end by play says why.
  function ending(r) {
    const w = r.winner === undefined ? 0 : r.winner;
    const pts = (r.totalPoints || []).map(Number);
    const other = (seat) => Math.max(...pts.filter((_p, i) => i !== seat));
    const score = pts.length > 1 && w >= 0 ? t.number(pts[w]) + '–' + t.number(w === me ? other(me) : pts[me]) : '';
    const said = w < 0 ? t('The game ended without a winner')
      : (w === me ? t('You won the game {score}', {score: score}) : t('{name} won the game {score}', {name: players[w], score: score}));
    const normal = !r.termination || r.termination === 'TERMINATION_NORMAL';
    return normal || !r.detail ? said.trim() : t('{result} ({detail})', {result: said.trim(), detail: r.detail});
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
  // The person's choices, kept in this browser: a four-colour deck (colour-blind safe: spades
  // black, hearts red, diamonds blue, clubs green) and a sound on their turn (off by default).
  function pref(key, label, apply) {
    const b = el('button', 'pref', label);
    b.type = 'button';
    b.dataset.pref = key;
    const on = () => localStorage.getItem('table.' + key) === 'on';
    const show = () => { b.setAttribute('aria-pressed', on() ? 'true' : 'false'); apply(on()); };
    b.addEventListener('click', () => { localStorage.setItem('table.' + key, on() ? 'off' : 'on'); show(); });
    show();
    $('prefs').appendChild(b);
  }
  let sound = false;
  pref('four-colour', t('four-colour cards'), (on) => body.classList.toggle('four-colour', on));
  pref('sound', t('sound on my turn'), (on) => { sound = on; });
  function beep() {
    if (!sound || !window.AudioContext) return;
    const ctx = new AudioContext();
    const o = ctx.createOscillator();
    const g = ctx.createGain();
    g.gain.value = 0.05;
    o.frequency.value = 660;
    o.connect(g).connect(ctx.destination);
    o.start();
    o.stop(ctx.currentTime + 0.15);
    o.onended = () => ctx.close();
  }
  const source = new EventSource(body.dataset.events);
  source.addEventListener('table', (e) => handle(JSON.parse(e.data)));
  source.addEventListener('over', () => { source.close(); body.dataset.closed = 'yes'; });
  source.onopen = () => { body.dataset.live = 'on'; };
})();
