#!/usr/bin/env node
// A stdio bot for the Gin Arena stdio bridge, in plain Node.js (no packages needed).
//
//   python -m sample_bots.stdio_bridge --referee HOST:PORT --token T -- node sample_bots/stdio/bot.js
//
// It reads one JSON object per line on stdin and answers each {"type": "request"} line with
// one line {"action": "..."}; other lines are notifications and get no answer.
// Strategy (simple but always legal): big gin if allowed; knock as soon as allowed; pass the
// upcard; draw from the stock; discard the highest card outside the referee's melds.
// Rummy ("game": "rummy"; start the bridge with --games gin,rummy): lay down any meld or layoff
// offered, draw from the stock, discard the highest card, never call "stop".
'use strict';

const readline = require('readline');

const VALUES = { A: 1, T: 10, J: 10, Q: 10, K: 10 };
const value = (card) => VALUES[card[0]] || Number(card[0]);

function decide(request) {
  const legal = request.legal;
  const state = request.state;
  if (legal.includes('big_gin')) return 'big_gin';
  // Cards outside the melds (the referee arranges the hand), highest first.
  const loose = [...state.my_deadwood_cards].sort((a, b) => value(b) - value(a));
  const byValue = [...state.hand].sort((a, b) => value(b) - value(a));
  for (const kind of ['knock', 'discard']) {
    for (const card of [...loose, ...byValue]) {
      if (legal.includes(`${kind} ${card}`)) return `${kind} ${card}`;
    }
  }
  for (const action of ['draw_stock', 'pass']) if (legal.includes(action)) return action;
  return legal[0];
}

function decideRummy(request) {
  const legal = request.legal;
  const play = legal.find((a) => a.startsWith('meld ') || a.startsWith('lay_off '));
  if (play) return play;
  for (const action of ['decline_stop', 'draw_stock']) if (legal.includes(action)) return action;
  const discards = legal.filter((a) => a.startsWith('discard '));
  discards.sort((a, b) => value(b.split(' ')[1]) - value(a.split(' ')[1]));
  return discards[0] || legal[0];
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.type === 'request') {
    const action = message.game === 'rummy' ? decideRummy(message) : decide(message);
    process.stdout.write(JSON.stringify({ action }) + '\n');
  } else if (message.type === 'match_finished') {
    process.stderr.write(`stdio bot: match ${message.match_id} over, winner seat ${message.result.winner}\n`);
  }
});
