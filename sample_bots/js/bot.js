#!/usr/bin/env node
// Gin Arena sample bot in JavaScript over gRPC: the greedy strategy in gin rummy, the eager one
// (lay down whatever it may, discard the highest card) in rummy for 2 to 6 players. It declares
// both games in Hello.
//
//   npm ci                                   (once, in sample_bots/js/)
//   node sample_bots/js/bot.js --referee HOST:PORT --token T [--name N] [--matches N] [--concurrent K]
//                              [--games gin,rummy] [--presets gin/classic,...]
//
// Options may also come from the environment: GIN_REFEREE, GIN_TOKEN, GIN_BOT_NAME, GIN_MATCHES,
// GIN_TLS=1 (--tls: connect with TLS), GIN_CA (--ca FILE: the CA certificates to trust) and, for
// mutual TLS, GIN_TLS_CERT / GIN_TLS_KEY (--tls-cert FILE --tls-key FILE: the bot's certificate).
// --matches N: exit after N matches have finished (default 1; 0 = until stopped: the session waits for
//             matches, and a lost connection is retried until stopped, the wait doubling up to 2 s while a
//             match is in progress, 30 s otherwise, jittered; a refused token ends it at once, exit 1).
// --concurrent K (env GIN_CONCURRENT): matches to play at once on the session (Hello.max_concurrent_matches).
// --games LIST, --presets LIST (env GIN_GAMES, GIN_PRESETS): what the hello declares, comma-separated
//             (default: gin,rummy, and every preset of them).
// --on-error fault|fallback (env GIN_ON_ERROR): what an exception in the strategy does. fault (the
//             default): resign the match (a Resign message whose reason is the exception's first
//             line, "Error: bad card"), which the referee records as the seat's bot_error fault,
//             and exit 1. fallback: answer the first legal action instead, marked `fallback` so that
//             the referee counts it.
// As a module: require('.../sample_bots/js/bot.js').main({ name, decide, decideRummy }) runs the
// same command line with your own strategy (decide(view) -> action text; see strategy.js).
// --selftest: no network; read stdio-protocol lines on stdin (RefereeMessages in the proto3 JSON
//             mapping) and answer each actionRequest with {"action": {"action": ...}} (see the stdio
//             protocol in sample_bots/stdio_bridge.py).
//
// The .proto files are loaded straight from proto/gin_arena/v2/ (relative to this script), with the
// options that give messages the proto3 JSON mapping's shape (JSON_SHAPE below).
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');
const crypto = require('crypto');
const { decide, decideRummy } = require('./strategy');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const RETRYABLE = new Set(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'UNKNOWN', 'INTERNAL', 'ABORTED',
  'CANCELLED', 'RESOURCE_EXHAUSTED']);

function log(...args) {
  process.stderr.write(`${new Date().toISOString()} js-bot: ${args.join(' ')}\n`);
}

function parseArgs(argv) {
  const env = process.env;
  const opts = {
    referee: env.GIN_REFEREE || 'localhost:50051',
    token: env.GIN_TOKEN || '',
    name: env.GIN_BOT_NAME || 'greedy-js',
    matches: Number(env.GIN_MATCHES || 1),
    concurrent: Number(env.GIN_CONCURRENT || 1),
    games: listOption(env.GIN_GAMES) || ['gin', 'rummy'],
    presets: listOption(env.GIN_PRESETS) || [],
    retries: 10,
    tls: ['1', 'true', 'yes'].includes(env.GIN_TLS || ''),
    ca: env.GIN_CA || '',
    cert: env.GIN_TLS_CERT || '',
    key: env.GIN_TLS_KEY || '',
    onError: env.GIN_ON_ERROR || 'fault',
    selftest: false,
    checkProto: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--referee') opts.referee = next();
    else if (arg === '--token') opts.token = next();
    else if (arg === '--name') opts.name = next();
    else if (arg === '--matches') opts.matches = Number(next());
    else if (arg === '--retries') opts.retries = Number(next());
    else if (arg === '--concurrent') opts.concurrent = Number(next());
    else if (arg === '--games') opts.games = listOption(next());
    else if (arg === '--presets') opts.presets = listOption(next());
    else if (arg === '--tls') opts.tls = true;
    else if (arg === '--ca') opts.ca = next();
    else if (arg === '--tls-cert') opts.cert = next();
    else if (arg === '--tls-key') opts.key = next();
    else if (arg === '--on-error') opts.onError = next();
    else if (arg === '--selftest') opts.selftest = true;
    else if (arg === '--check-proto') opts.checkProto = true;
    else if (arg === '-h' || arg === '--help') usage(null);
    else usage(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(opts.matches) || opts.matches < 0) usage('--matches must be an integer >= 0');
  if (!Number.isInteger(opts.concurrent) || opts.concurrent < 1) usage('--concurrent must be an integer >= 1');
  for (const preset of opts.presets) {
    if (!/^[^/]+\/[^/]+$/.test(preset)) usage(`--presets: ${JSON.stringify(preset)} is not GAME/PRESET (e.g. gin/classic)`);
  }
  if (!opts.cert !== !opts.key) usage('give both --tls-cert and --tls-key (mutual TLS)');
  if (!['fault', 'fallback'].includes(opts.onError)) {
    usage(`--on-error must be one of fault, fallback; got ${JSON.stringify(opts.onError)}`);
  }
  return opts;
}

/** A comma-separated option's words (undefined: not given). */
function listOption(text) {
  if (text == null) return undefined;
  return String(text).split(',').map((w) => w.trim()).filter((w) => w);
}

function usage(error) {
  const text = 'usage: node bot.js --referee HOST:PORT --token T [--name N] [--matches N] [--retries N]\n' +
    '                  [--concurrent K] [--games LIST] [--presets LIST]   (matches at once; what the hello declares)\n' +
    '                  [--tls] [--ca FILE]   (TLS; --ca: trust these CA certificates, implies --tls)\n' +
    '                  [--tls-cert FILE --tls-key FILE]   (mutual TLS: the bot\'s certificate)\n' +
    '                  [--on-error fault|fallback]   (an exception in the strategy; default fault)\n' +
    '       node bot.js --selftest      (stdio JSON lines, no network)\n';
  if (error) {
    process.stderr.write(`bot.js: error: ${error}\n${text}`);
    process.exit(2);
  }
  process.stdout.write(text);
  process.exit(0);
}

// ----- actions: messages <-> texts -----
// Messages have the shape of the proto3 JSON mapping, over gRPC (proto-loader with camelCase names,
// enums by name, 64-bit integers as strings, unset fields absent) as over stdio: the game's content
// is the member of its `oneof game` that is present (`action.gin`, `action.rummy`, `request.gin`, …).
const GIN_KINDS = {
  ACTION_KIND_PASS: 'pass', ACTION_KIND_TAKE_UPCARD: 'take_upcard', ACTION_KIND_DRAW_STOCK: 'draw_stock',
  ACTION_KIND_DRAW_DISCARD: 'draw_discard', ACTION_KIND_DISCARD: 'discard', ACTION_KIND_KNOCK: 'knock',
  ACTION_KIND_BIG_GIN: 'big_gin',
};
const GIN_KIND_OF = Object.fromEntries(Object.entries(GIN_KINDS).map(([k, v]) => [v, k]));
const ENDS = { LAYOFF_END_SET: 'set', LAYOFF_END_LOW: 'low', LAYOFF_END_HIGH: 'high' };

/** A rummy action's text: "draw_stock", "take_discard 7h", "meld 5s 6s 7s", "lay_off 8s 0 high", … */
function rummyText(r) {
  if (r.takeDiscard) return `take_discard ${r.takeDiscard.card}`;
  if (r.layMeld) return `meld ${(r.layMeld.cards || []).join(' ')}`;
  if (r.layOff) return `lay_off ${r.layOff.card} ${r.layOff.meld || 0} ${ENDS[r.layOff.end]}`;
  if (r.discard) return `discard ${r.discard.card}`;
  for (const [field, text] of [['drawStock', 'draw_stock'], ['callStop', 'call_stop'], ['declineStop', 'decline_stop']]) {
    if (r[field]) return text;
  }
  return '?';
}

/** An action's text: a gin one ("discard Ts") or a rummy one. */
function actionText(action) {
  if (action.gin) {
    const name = GIN_KINDS[action.gin.kind] || String(action.gin.kind);
    return action.gin.card ? `${name} ${action.gin.card}` : name;
  }
  if (action.rummy) return rummyText(action.rummy);
  return JSON.stringify(action);
}

/** The action to answer a request with: the legal action (as received) whose text the strategy
 * chose; a gin text that is not legal is sent as it is (the referee judges it). */
function choose(request, strategy) {
  const legal = request.legalActions || [];
  const texts = legal.map(actionText);
  let chosen;
  if (request.rummy) {
    chosen = strategy.decideRummy({ legal: texts, hand: request.rummy.hand || [] });
  } else {
    const state = request.gin || {};
    chosen = strategy.decide({ legal: texts, hand: state.hand || [], discard_pile: state.discardPile || [] });
  }
  const i = texts.indexOf(chosen);
  if (i >= 0) return legal[i];
  const [name, card] = String(chosen).split(' ');
  if (!request.rummy && GIN_KIND_OF[name]) return { gin: { kind: GIN_KIND_OF[name], card: card || '' } };
  throw new Error(`the strategy chose ${JSON.stringify(chosen)}, which is none of ${JSON.stringify(texts)}`);
}

const MESSAGE_KINDS = ['welcome', 'matchStarted', 'dealStarted', 'event', 'actionRequest', 'actionRejected',
  'dealFinished', 'gameFinished', 'matchFinished', 'error', 'pong'];

/** Which kind a RefereeMessage is (the member of its `oneof kind` that is present). */
function kindOf(msg) {
  return MESSAGE_KINDS.find((k) => msg[k] != null) || 'unknown';
}

// ----- --selftest: the stdio protocol (sample_bots/stdio_bridge.py), no network -----
function selftest(strategy) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (!msg.actionRequest) return; // the other messages need no answer
    const request = msg.actionRequest;
    const action = choose(request, strategy);
    process.stdout.write(JSON.stringify({ action: { matchId: msg.matchId, requestId: request.requestId, action } }) + '\n');
  });
}

// ----- gRPC session -----
/** The options that make proto-loader's messages the proto3 JSON mapping's shape. */
const JSON_SHAPE = { keepCase: false, longs: String, enums: String, bytes: String, defaults: false, oneofs: false };

function loadService() {
  const grpc = require('@grpc/grpc-js');
  const protoLoader = require('@grpc/proto-loader');
  const definition = protoLoader.loadSync('gin_arena/v2/bot.proto', { includeDirs: [PROTO_ROOT], ...JSON_SHAPE });
  const pkg = grpc.loadPackageDefinition(definition);
  return { grpc, BotService: pkg.gin_arena.v2.BotService };
}

/** The last line of an exception's report, as the referee records it: "TypeError: x is undefined". */
function errorLine(e) {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : `thrown: ${String(e)}`;
  return text.split('\n')[0].slice(0, 256);
}

function play(opts, strategy) {
  const { grpc, BotService } = loadService();
  const started = new Set();
  const finished = new Set();
  let failures = 0;
  let everWelcomed = false;
  let stopping = false;
  let current = null; // { client, call }

  function finish(code, reason) {
    if (stopping) return;
    stopping = true;
    log(`session over: ${reason}`);
    if (current) {
      const { client, call } = current;
      try { call.end(); } catch (e) { /* already closed */ }
      setTimeout(() => {
        call.cancel();
        client.close();
        process.exit(code);
      }, 200).unref();
    }
    process.exitCode = code;
  }

  // SIGTERM: say goodbye — resign every match in progress with a reason starting "goodbye" (the
  // referee records that the bot was stopped, not that it crashed), then close the stream cleanly.
  function goodbye(sig) {
    if (!stopping && current && sig === 'SIGTERM') {
      for (const mid of started) {
        if (finished.has(mid)) continue;
        try { current.call.write({ resign: { matchId: mid, reason: `goodbye: stopped by ${sig}` } }); } catch (e) { /* closed */ }
      }
    }
    finish(0, `stopped by ${sig}`);
  }

  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => goodbye(sig));

  function connect() {
    const read = (file) => (file ? fs.readFileSync(file) : null);
    const creds = opts.tls || opts.ca || opts.cert
      ? grpc.credentials.createSsl(read(opts.ca), read(opts.key), read(opts.cert))
      : grpc.credentials.createInsecure();
    // Keepalive pings: a session that waits for matches notices a referee that vanished.
    const client = new BotService(opts.referee, creds, {
      'grpc.keepalive_time_ms': 30000, 'grpc.keepalive_timeout_ms': 20000,
    });
    const call = client.Play();
    current = { client, call };
    let welcomed = false;
    let ended = false;

    call.on('data', (msg) => {
      const mid = msg.matchId || '';
      switch (kindOf(msg)) {
        case 'welcome':
          welcomed = everWelcomed = true;
          failures = 0;
          log(`welcome: session ${msg.welcome.sessionId}`);
          break;
        case 'matchStarted':
          if (!started.has(mid)) log(`match ${mid} started: ${msg.matchStarted.gameName}, seat ${msg.matchStarted.seat || 0}`);
          started.add(mid);
          break;
        case 'actionRequest': {
          const request = msg.actionRequest;
          let action;
          let fallback = false;
          try {
            action = choose(request, strategy);
          } catch (e) {
            if (opts.onError !== 'fallback') {
              const reason = errorLine(e);
              log(`decide failed (${e && e.stack ? e.stack : e}); resigning match ${mid}: ${reason}`);
              call.write({ resign: { matchId: mid, reason } });
              finish(1, `the strategy raised in match ${mid}: ${reason}`);
              break;
            }
            action = (request.legalActions || [])[0];
            fallback = true;
            log(`decide failed (${e && e.stack ? e.stack : e}); answering the first legal action (a fallback)`);
          }
          call.write({ action: { matchId: mid, requestId: request.requestId, action, fallback } });
          break;
        }
        case 'actionRejected':
          log(`match ${mid}: action refused: ${msg.actionRejected.reason}`);
          break;
        case 'dealFinished': {
          const r = msg.dealFinished.result || {};
          log(`match ${mid} deal ${r.gameNumber || 0}.${r.dealNumber || 0}: winner ${r.winner || 0}, ` +
            `scores ${JSON.stringify(r.scoresAfter || [])}`);
          break;
        }
        case 'matchFinished': {
          const r = msg.matchFinished.result || {};
          finished.add(mid);
          log(`match ${mid} finished: winner seat ${r.winner || 0} (${r.termination}) ${r.detail || ''}`);
          if (opts.matches && finished.size >= opts.matches) finish(0, `${finished.size} match(es) finished`);
          break;
        }
        case 'error':
          log(`referee error: ${msg.error.code} ${msg.error.message}${msg.error.fatal ? ' (fatal)' : ''}`);
          break;
        default:
          break; // dealStarted, event, gameFinished, pong: nothing to do for a stateless bot
      }
    });

    const onEnd = (code, details) => {
      if (ended || stopping) return;
      ended = true;
      client.close();
      const inProgress = [...started].some((m) => !finished.has(m));
      let retry;
      if (code === 'OK') retry = inProgress || opts.matches === 0;
      else retry = RETRYABLE.has(code) || ((code === 'UNAUTHENTICATED' || code === 'ALREADY_EXISTS') &&
        (welcomed || everWelcomed));
      if (!retry) {
        const why = code === 'UNAUTHENTICATED' ? `the referee at ${opts.referee} refused the token (${code}: ${details})`
          : `${code}: ${details}`;
        return finish(1, `${why} (after ${finished.size} matches)`);
      }
      failures += 1;
      // --matches 0: a lost connection is retried until stopped; a refused token (after a welcome: it may be
      // the previous connection not gone yet) only --retries times.
      const forever = opts.matches === 0 && code !== 'UNAUTHENTICATED' && code !== 'ALREADY_EXISTS';
      if (failures > opts.retries && !forever) return finish(1, `gave up after ${failures} failed connections: ${code}`);
      const cap = inProgress ? 2000 : 30000;
      const delay = Math.min(cap, 250 * 2 ** Math.min(failures - 1, 30)) * (0.8 + 0.4 * Math.random());
      log(`connection ended (${code}: ${details}); reconnecting in ${(delay / 1000).toFixed(1)} s ` +
        `(attempt ${failures}${forever ? ' until stopped' : ` of ${opts.retries}`})`);
      setTimeout(connect, delay);
    };
    const codeName = (n) => Object.keys(grpc.status).find((k) => grpc.status[k] === n) || String(n);
    call.on('error', (err) => onEnd(codeName(err.code), err.details || err.message));
    call.on('status', (st) => { if (st.code !== grpc.status.OK) onEnd(codeName(st.code), st.details); });
    call.on('end', () => setImmediate(() => onEnd('OK', 'the referee closed the session')));

    call.write({
      hello: {
        botName: opts.name, token: opts.token, protocolVersion: 2, nonce: crypto.randomBytes(16),
        maxConcurrentMatches: opts.concurrent, clientInfo: `gin-arena js sample; node ${process.version}`,
        games: opts.games, presets: opts.presets,
        // Stateless: every event is in each request's `events`, so no separate event messages.
        skipEventMessages: true,
      },
    });
  }

  log(`${opts.name} connecting to ${opts.referee}`);
  connect();
}

function main(strategy = {}) {
  const opts = parseArgs(process.argv.slice(2));
  if (strategy.name && !process.argv.includes('--name') && !process.env.GIN_BOT_NAME) opts.name = strategy.name;
  const chosen = { decide: strategy.decide || decide, decideRummy: strategy.decideRummy || decideRummy };
  if (opts.selftest) return selftest(chosen);
  if (opts.checkProto) {
    const { BotService } = loadService();
    process.stdout.write(Object.keys(BotService.service).join(',') + '\n');
    return undefined;
  }
  if (!opts.token) usage('a token is required: --token T or the environment variable GIN_TOKEN');
  return play(opts, chosen);
}

module.exports = { main, errorLine, actionText, choose, JSON_SHAPE };

if (require.main === module) main();
