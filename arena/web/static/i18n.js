// The live web's translations for its scripts (docs/web.md#languages): the page carries its
// language's strings in <script type="application/json" id="i18n"> (the server writes it from the
// gettext catalog: only the msgids the scripts use). t('msgid', {field: value}) gives the text in
// the page's language with its {field}s filled; t(['singular', 'plural'], {n: count}) picks the
// catalog's plural form for n through Intl.PluralRules (the server maps each of its categories to
// the catalog's form). Numbers: t.number(value, decimals) in the page's locale. A msgid missing
// from the block shows as English.
(function () {
  'use strict';
  const block = document.getElementById('i18n');
  const data = block ? JSON.parse(block.textContent) : { lang: 'en', plurals: { one: 0, other: 1 }, messages: {} };
  const lang = data.lang || document.documentElement.lang || 'en';
  const rules = new Intl.PluralRules(lang);
  const fill = (text, vars) => text.replace(/\{(\w+)\}/g, (all, k) => (vars && k in vars ? String(vars[k]) : all));
  function number(value, decimals) {
    const d = decimals || 0;
    return new Intl.NumberFormat(lang, { minimumFractionDigits: d, maximumFractionDigits: d }).format(value);
  }
  function t(msgid, vars) {
    const values = Object.assign({}, vars);
    if (Array.isArray(msgid)) {
      const n = Number(values.n);
      const found = data.messages[msgid[0]];
      values.n = number(n);
      if (Array.isArray(found)) {
        const form = data.plurals[rules.select(n)];
        return fill(found[form === undefined ? found.length - 1 : form], values);
      }
      return fill(n === 1 ? msgid[0] : msgid[1], values);
    }
    const found = data.messages[msgid];
    return fill(typeof found === 'string' ? found : msgid, values);
  }
  // A game's text (its presentation's English: a move's label, a pile's name, a note, a deal's
  // end) in the page's language, from the game's catalog in the block (data.games[game]) and the
  // description's texts ({text: [template, {field: value}]}): a text made from a template is the
  // template translated with its fields filled, each field translated the same way unless it is
  // one of `names` (a player's name is never a word of the game); any other text is its own msgid.
  // A text the catalog lacks stays as it is. `me`: the reader's seat as the description writes it
  // ('{0}'): a template whose subject ({who}) is the reader takes its "you" form (msgctxt "you":
  // "you draw", "вы берёте") where the catalog has one; `subject`: the reader made this move.
  // (arena/replays/game_words.py's game_text does the same on the server.)
  const games = data.games || {};
  const own = (o, k) => o !== null && o !== undefined && Object.prototype.hasOwnProperty.call(o, k);
  const YOU = 'you\u0004';
  t.game = function (text, texts, game, names, me, subject) {
    const words = games[game] || {};
    const say = (s, depth, mine) => {
      if (typeof s !== 'string' || depth > 8 || (depth && names && names.indexOf(s) >= 0)) return s;
      if (own(texts, s) && Array.isArray(texts[s])) {
        const fields = texts[s][1] || {};
        const yours = mine || (me !== undefined && me !== null && fields.who === me);
        const template = yours && own(words, YOU + texts[s][0]) ? words[YOU + texts[s][0]]
          : own(words, texts[s][0]) ? words[texts[s][0]] : texts[s][0];
        const values = {};
        for (const [k, v] of Object.entries(fields)) values[k] = say(v, depth + 1, false);
        return fill(template, values);
      }
      if (mine && own(words, YOU + s)) return words[YOU + s];
      return own(words, s) ? words[s] : s;
    };
    return say(text, 0, !!subject);
  };
  // A game's display name in the page's language (its registration's, through its catalogs; the
  // registry's name for a game the server does not know: Lang.game_name).
  const gameNames = data.game_names || {};
  t.gameName = (game) => (own(gameNames, game) ? gameNames[game] : game);
  t.lang = lang;
  t.number = number;
  // A state word (a match's or a bot's: data, not code), as the catalog's "state" context has it.
  t.state = (word) => {
    const found = data.messages['state\u0004' + word];
    return typeof found === 'string' ? found : word;
  };
  window.t = t;
})();
