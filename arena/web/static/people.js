// The people's parts of a table's page and the lobby: the waiting room (who sat down, the host's
// "fill with a sample bot" and Start), the table's notices (the computer took a seat), the
// rematch, and the lobby's lists. table.js hands it the payloads it does not draw itself.
// Nothing anyone typed reaches innerHTML: text goes in with textContent and DOM calls only. Its
// words go through t() (static/i18n.js); a notice comes as its msgid and fields (tables.py's NS_
// texts, in the page's block) and is shown in the page's language.
'use strict';
(function () {
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  async function post(url, data) {
    try {
      const r = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify(data || {}), credentials: 'same-origin'});
      const answer = await r.json().catch(() => ({error: r.statusText}));
      if (!r.ok) $('problem').textContent = answer.say || answer.error || t('refused: {status}', {status: r.status});
      return r.ok ? answer : null;
    } catch (e) {
      $('problem').textContent = t('could not reach the server: {why}', {why: String(e)});
      return null;
    }
  }
  function seats(m) {
    const title = document.querySelector('h1');
    const names = m.seats.map((s) => s.name || '…').join(t(' vs '));
    title.textContent = title.textContent.replace(/:.*$/, ': ' + names);
    body.dataset.others = m.seats.filter((s) => s.kind !== 'bot').length > 1 ? 'yes' : '';
    const box = $('waiting');
    box.hidden = m.started;
    body.dataset.started = m.started ? 'yes' : '';
    const invite = $('invite');
    invite.textContent = '';
    if (m.open) {
      invite.appendChild(el('span', '', t('Table code: ')));
      invite.appendChild(el('strong', 'code', m.code));
      invite.appendChild(el('span', '', t(' · join link: ')));
      const a = el('a', 'join', location.origin + body.dataset.join);
      a.href = body.dataset.join;
      invite.appendChild(a);
    }
    const list = $('seat-list');
    list.textContent = '';
    const bots = JSON.parse(body.dataset.bots || '[]');
    const levels = JSON.parse(body.dataset.levels || '{}');  // (a bot's difficulty, in the page's language)
    for (const s of m.seats) {
      const li = el('li', 'seat-row ' + s.kind, s.kind === 'empty' ? t('empty seat') : (s.kind === 'bot' ? t('{name} (computer)', {name: s.name}) : s.name));
      li.dataset.seat = s.seat;
      li.dataset.kind = s.kind;
      if (s.kind === 'empty' && m.host && m.open) {
        const pick = el('select', 'bot');
        pick.setAttribute('aria-label', t('which sample bot'));
        for (const b of bots) { const o = el('option', '', levels[b] ? b + ' · ' + levels[b] : b); o.value = b; pick.appendChild(o); }
        const fill = el('button', 'fill', t('fill with a sample bot'));
        fill.type = 'button';
        fill.dataset.seat = s.seat;
        fill.addEventListener('click', () => post(body.dataset.fill, {seat: String(s.seat), bot: pick.value}));
        li.appendChild(pick);
        li.appendChild(fill);
      }
      list.appendChild(li);
    }
    const tools = $('host-tools');
    tools.textContent = '';
    if (m.host && m.open) {
      const start = el('button', '', t('Start'));
      start.type = 'button';
      start.id = 'start';
      start.disabled = m.seats.some((s) => s.kind === 'empty');
      start.addEventListener('click', () => post(body.dataset.start, {}));
      tools.appendChild(start);
    } else if (m.open) {
      tools.appendChild(el('span', '', t('Waiting for the host to start…')));
    }
    if (m.open) $('status').textContent = t('Waiting for everyone to sit down');
    leaveButton(tools, m);
  }
  // Before the start: a person leaves the table (their seat is free again); the host closes it.
  function leaveButton(tools, m) {
    if (!m.open || !body.dataset.leave) return;
    const b = el('button', 'leave', m.host ? t('Close the table') : t('Leave the table'));
    b.type = 'button';
    b.id = 'leave';
    b.addEventListener('click', async () => {
      if (m.host && !window.confirm(t('Close the table for everyone?'))) return;
      const answer = await post(body.dataset.leave, {});
      if (answer && answer.href) location.href = answer.href;
    });
    tools.appendChild(b);
  }
  // The table closed before it started: this seat's person left, or the host closed it.
  function closed(m) {
    $('waiting').hidden = true;
    const text = m.how === 'host' ? t('The host closed this table before it started.')
      : t('You left this table before it started; your seat is free again.');
    $('status').textContent = text;
    $('notice').textContent = text;
    body.dataset.tableClosed = m.how;
  }
  function offerRematch(by) {
    const box = $('rematch');
    box.hidden = false;
    box.textContent = '';
    const b = el('button', '', by ? t('rematch ({name} asks)', {name: by}) : t('rematch'));
    b.type = 'button';
    b.id = 'rematch-button';
    b.addEventListener('click', async () => {
      const answer = await post(body.dataset.rematch, {});
      if (answer && answer.href) location.href = answer.href;
    });
    box.appendChild(b);
  }
  // A payload table.js does not draw: true when it was one of ours.
  function handle(p) {
    const m = p.message;
    if (p.kind === 'seats') { seats(m); return true; }
    if (p.kind === 'notice') {
      const said = m.msgid ? t(m.msgid, m.values) : m.message;
      $('notice').textContent = said;
      body.dataset.notice = said;
      return true;
    }
    if (p.kind === 'rematch') { offerRematch(m.by); return true; }
    if (p.kind === 'closed') { closed(m); return true; }
    if (p.kind === 'replay') offerRematch('');
    return false;
  }
  window.tablePeople = {handle};

  function drawLobby(data) {
    for (const [id, rows, link, text] of [['lobby-open', data.open, 'join', t('join')],
                                          ['lobby-running', data.running, 'watch', t('watch')]]) {
      const list = $(id);
      list.textContent = '';
      if (!rows.length) list.appendChild(el('li', 'none', t('none now')));
      for (const row of rows) {
        const li = el('li', 'table-row', t.gameName(row.game) + ' (' + row.preset + '): ' +
          row.seats.map((s) => (s.kind === 'empty' ? t('empty seat') : s.name)).join(', ') + ' ');
        const a = el('a', link, text);
        a.href = row[link];
        li.appendChild(a);
        list.appendChild(li);
      }
    }
  }
  if (body.dataset.page === 'lobby') {
    drawLobby(JSON.parse(body.dataset.initial));
    setInterval(async () => {
      try {
        const r = await fetch(body.dataset.lobby, {credentials: 'same-origin'});
        if (r.ok) drawLobby(await r.json());
      } catch (e) { /* the next look tries again */ }
    }, 1000 * Number(body.dataset.refresh || 3));
  }
})();
