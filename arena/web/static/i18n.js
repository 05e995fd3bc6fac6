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
  t.lang = lang;
  t.number = number;
  // A state word (a match's or a bot's: data, not code), as the catalog's "state" context has it.
  t.state = (word) => {
    const found = data.messages['state\u0004' + word];
    return typeof found === 'string' ? found : word;
  };
  window.t = t;
})();
