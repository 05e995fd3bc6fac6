// Gin Rummy helpers and the greedy strategy, in plain JavaScript (no dependencies).
//
// Cards are strings as on the wire: rank "A23456789TJQK" then suit "shdc" ("As", "Td", "Kc").
// Actions are in the text form: "pass", "take_upcard", "draw_stock", "draw_discard",
// "discard Ts", "knock Ts", "big_gin".
'use strict';

const RANKS = 'A23456789TJQK';
const SUITS = 'shdc';

/** Rank as a number: ace 1 ... king 13. */
function rank(card) {
  return RANKS.indexOf(card[0]) + 1;
}

/** Deadwood value: ace 1, 2..10 their pips, J Q K 10. */
function value(card) {
  return Math.min(rank(card), 10);
}

function total(cards) {
  return cards.reduce((sum, c) => sum + value(c), 0);
}

/** Every meld the cards can make (as arrays of cards; melds may overlap). */
function findMelds(cards) {
  const held = new Set(cards);
  const melds = [];
  for (let r = 1; r <= 13; r++) {
    const same = [...SUITS].map((s) => RANKS[r - 1] + s).filter((c) => held.has(c));
    if (same.length >= 3) melds.push(same);
    if (same.length === 4) for (const out of same) melds.push(same.filter((c) => c !== out));
  }
  for (const s of SUITS) {
    for (let start = 1; start <= 11; start++) {
      const run = [];
      for (let r = start; r <= 13 && held.has(RANKS[r - 1] + s); r++) {
        run.push(RANKS[r - 1] + s);
        if (run.length >= 3) melds.push([...run]);
      }
    }
  }
  return melds;
}

/** The most card value that disjoint melds (from melds[start..]) can cover. */
function bestCovered(melds, start, used) {
  let best = 0;
  for (let i = start; i < melds.length; i++) {
    if (melds[i].some((c) => used.has(c))) continue;
    const next = new Set(used);
    for (const c of melds[i]) next.add(c);
    best = Math.max(best, total(melds[i]) + bestCovered(melds, i + 1, next));
  }
  return best;
}

/** The least deadwood of the cards over every arrangement into melds (exact). */
function deadwood(cards) {
  return total(cards) - bestCovered(findMelds(cards), 0, new Set());
}

function without(cards, card) {
  return cards.filter((c) => c !== card);
}

/** Of `choices` (cards of `hand`), the one whose removal leaves the least deadwood;
 * ties: the higher value, then the higher rank, then the first. */
function bestToRemove(hand, choices) {
  let best = null;
  let bestKey = null;
  for (const card of choices) {
    const key = [deadwood(without(hand, card)), -value(card), -rank(card)];
    if (best === null || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] ||
        (key[1] === bestKey[1] && key[2] < bestKey[2])))) {
      best = card;
      bestKey = key;
    }
  }
  return best;
}

/**
 * The greedy decision (the same as sample_bots/greedy_bot.py).
 * @param {{legal: string[], hand: string[], discard_pile: string[]}} req
 * @returns {string} one of req.legal
 */
function decide(req) {
  const legal = req.legal;
  const hand = req.hand;
  if (legal.includes('big_gin')) return 'big_gin';
  const cardsOf = (kind) => legal.filter((a) => a.startsWith(kind + ' ')).map((a) => a.split(' ')[1]);

  const knocks = cardsOf('knock');
  if (knocks.length) return 'knock ' + bestToRemove(hand, knocks);
  const discards = cardsOf('discard');
  if (discards.length) return 'discard ' + bestToRemove(hand, discards);

  const take = legal.includes('take_upcard') ? 'take_upcard' : 'draw_discard';
  const pile = req.discard_pile || [];
  if (legal.includes(take) && pile.length) {
    const top = pile[pile.length - 1];
    const withTop = [...hand, top];
    const after = Math.min(...hand.map((c) => deadwood(without(withTop, c))));
    if (after < deadwood(hand)) return take;
  }
  for (const a of ['draw_stock', 'pass']) if (legal.includes(a)) return a;
  return legal[0];
}

// ----- rummy (2 to 6 players, docs/rules-rummy.md) -----
// Action texts: "draw_stock", "take_discard 7h", "meld 5s 6s 7s", "lay_off 8s 0 high", "discard Kd",
// "call_stop", "decline_stop".

/**
 * The eager rummy decision: lay down the longest meld it may, else any layoff; draw from the
 * stock (a discard is taken only when the referee offers nothing else); discard its highest card
 * (J Q K count 10); never call "stop".
 * @param {{legal: string[], hand: string[]}} req
 * @returns {string} one of req.legal
 */
function decideRummy(req) {
  const legal = req.legal;
  const of = (kind) => legal.filter((a) => a.split(' ')[0] === kind);
  if (legal.includes('decline_stop')) return 'decline_stop';
  const melds = of('meld').sort((a, b) => b.split(' ').length - a.split(' ').length);
  if (melds.length) return melds[0];
  const layoffs = of('lay_off');
  if (layoffs.length) return layoffs[0];
  if (legal.includes('draw_stock')) return 'draw_stock';
  const discards = of('discard').sort((a, b) => value(b.split(' ')[1]) - value(a.split(' ')[1]));
  if (discards.length) return discards[0];
  return legal[0];
}

module.exports = { RANKS, SUITS, rank, value, findMelds, deadwood, decide, decideRummy };
