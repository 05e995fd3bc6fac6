#!/usr/bin/env node
// A stdio bot for the Gin Arena stdio bridge, in plain Node.js (no packages needed).
//
//   python -m sample_bots.stdio_bridge --referee HOST:PORT --token T -- node sample_bots/stdio/bot.js
//
// Every line on stdin is a RefereeMessage of protocol v2 in the proto3 JSON mapping (camelCase
// names, enums by name, fields at their default left out). It answers each {"actionRequest": ...}
// line with one line {"action": {"action": <one of its legalActions>}}; other lines need no answer.
// Strategy (simple but always legal): big gin if allowed; knock as soon as allowed; pass the
// upcard; draw from the stock; discard the highest card outside the referee's melds.
// Rummy (the request's state is `rummy`; start the bridge with --games gin,rummy): lay down any
// meld or layoff offered, draw from the stock, discard the highest card, never call "stop".
'use strict';

const readline = require('readline');

const VALUES = { A: 1, T: 10, J: 10, Q: 10, K: 10 };
const value = (card) => VALUES[card[0]] || Number(card[0]);
const highestFirst = (cards) => [...cards].sort((a, b) => value(b) - value(a));

function decideGin(request) {
  const legal = request.legalActions;
  const state = request.gin || {};
  const find = (kind, card) => legal.find((a) => a.gin.kind === `ACTION_KIND_${kind}` && (!card || a.gin.card === card));
  if (find('BIG_GIN')) return find('BIG_GIN');
  // Cards outside the melds (the referee arranges the hand), highest first.
  const cards = [...highestFirst(state.myDeadwoodCards || []), ...highestFirst(state.hand || [])];
  for (const kind of ['KNOCK', 'DISCARD']) {
    for (const card of cards) if (find(kind, card)) return find(kind, card);
  }
  return find('DRAW_STOCK') || find('PASS') || legal[0];
}

function decideRummy(request) {
  const legal = request.legalActions;
  const play = legal.find((a) => a.rummy.layMeld || a.rummy.layOff);
  if (play) return play;
  const simple = legal.find((a) => a.rummy.declineStop) || legal.find((a) => a.rummy.drawStock);
  if (simple) return simple;
  const discards = legal.filter((a) => a.rummy.discard);
  discards.sort((a, b) => value(b.rummy.discard.card) - value(a.rummy.discard.card));
  return discards[0] || legal[0];
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.actionRequest) {
    const request = message.actionRequest;
    const action = request.rummy ? decideRummy(request) : decideGin(request);
    process.stdout.write(JSON.stringify({ action: { action } }) + '\n');
  } else if (message.matchFinished) {
    const result = message.matchFinished.result || {};
    process.stderr.write(`stdio bot: match ${message.matchId} over, winner seat ${result.winner || 0}\n`);
  }
});
