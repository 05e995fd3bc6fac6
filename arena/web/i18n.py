"""The live web's languages (docs/web.md#languages): English, Bulgarian and Russian.

One source of truth per language: the gettext catalog ``locale/{code}/LC_MESSAGES/web.po``
(English is the msgids), read with Babel and compiled in memory at import (no build step),
plural forms from the catalog's ``Plural-Forms``. A request's language: a valid ``?lang=``
(which the answer keeps in the ``lang`` cookie), else that cookie, else ``Accept-Language``
negotiated by Babel, else English. The scripts get their language's strings (only the msgids the
scripts use, found in their sources, and the ``NS_`` texts the server sends them) in a JSON data
block, with the mapping from the browser's ``Intl.PluralRules`` categories to the catalog's plural
forms (``static/i18n.js``'s ``t``).

A game's own words (its presentation's texts: move buttons, piles, notes, a deal's end) come from
the game's catalogs (``referee.games.Registered.catalogs``: ``LANG/LC_MESSAGES/game.po``), which
the same block carries by game for ``t.game``; a game without them stays English.
"""

from __future__ import annotations

import ast
import datetime
import gettext
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import structlog
from babel.core import Locale, negotiate_locale
from babel.dates import format_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from starlette.requests import Request
from starlette.responses import Response

from arena.replays import game_words as game_words_
from referee import games

R = TypeVar("R", bound=Response)
log = structlog.get_logger("arena")

DEFAULT = "en"
"""The language of the msgids, and of a request that asks for none the web speaks."""
LANGUAGES = ("en", "bg", "ru")
"""The languages the web speaks (every one but English has a catalog)."""
NAMES = {"en": "English", "bg": "Български", "ru": "Русский"}
"""Each language's name in itself (the header's switch)."""
LOCALE_DIR = Path(__file__).parent / "locale"
"""Where the catalogs are."""
DOMAIN = "web"
"""The catalogs' gettext domain (``web.po``)."""
COOKIE = "lang"
"""The cookie that keeps a language chosen with ``?lang=``."""
COOKIE_DAYS = 365
"""How long that cookie lasts."""
ACCEPT_LANGUAGE_ITEMS = 32
"""The most ``Accept-Language`` entries read (the rest are ignored)."""
SCRIPT = "/static/i18n.js"
"""The scripts' translation helper (``t``), loaded before them."""
VARY = "Accept-Language, Cookie"
"""What a page's language depends on (its ``Vary``)."""
SCRIPTS = ("web.js", "people.js", "table.js")
"""The static scripts whose ``t(...)`` msgids go to the page's JSON block."""
SCRIPT_TEXTS_IN = ("table_model.py", "table_session.py", "tables.py", "table_views.py")
"""The modules (beside this one) whose ``NS_`` texts the scripts show: a table's notices, written
into a seat's stream as a msgid and its fields, translated by the page."""
GAME_DOMAIN = "game"
"""A game's catalogs' gettext domain (``game.po`` in ``Registered.catalogs``)."""
GAME_KEYWORDS = ("T", "say")
"""The calls of a game's presentation whose first argument is a msgid of its catalogs
(``referee.cardcore.present``)."""
STATIC = Path(__file__).parent / "static"
"""The scripts' folder."""
STATE_CONTEXT = "state"
"""The msgctxt of a match's or a bot's state word (data, not code: looked up, shown as is if unknown)."""
STATE_WORDS = ("waiting", "running", "finished", "aborted", "interrupted", "active", "removed", "enabled", "disabled",
               "suspended")
"""The states the web shows (a table's and a bot's: the hosted registry's ``BOT_STATES`` too), each in every
catalog under ``STATE_CONTEXT``."""
PLURAL_SAMPLES = range(0, 200)
"""The whole numbers that match each CLDR plural category to the catalog's plural form."""
JS_CALL = re.compile(r"""\bt\(\s*(\[\s*)?'((?:[^'\\]|\\.)*)'(?:\s*,\s*'((?:[^'\\]|\\.)*)'\s*\])?""")
"""A script's ``t('msgid'`` or ``t(['singular', 'plural']`` (single-quoted literals)."""


def N_(msgid: str) -> str:
    """Mark ``msgid`` for the catalogs (translated where it is shown, with ``Lang._``)."""
    return msgid


def NS_(msgid: str) -> str:
    """Mark ``msgid`` for the catalogs and for the scripts' block (``SCRIPT_TEXTS_IN``): a text the
    server sends as data (its msgid and fields) and the page shows in its language."""
    return msgid


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a singular and plural for the catalogs (shown with ``Lang.ngettext``)."""
    return singular, plural


KEYWORDS = {"_": None, "N_": None, "NS_": None, "ngettext": (1, 2), "NP_": (1, 2)}
"""The Python calls whose string literals are msgids (Babel's extraction keywords)."""


def python_msgids(source: str, keywords: Iterable[str] = KEYWORDS) -> list[tuple[str, str | None]]:
    """The msgids of a Python source's ``keywords`` calls (``KEYWORDS``: ``_``, ``N_``, ``NS_``,
    ``ngettext``, ``NP_``, plain or as a method, inside f-strings too) whose arguments are string
    literals."""
    out: list[tuple[str, str | None]] = []
    wanted = set(keywords)
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name not in wanted:
            continue
        texts = [a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if KEYWORDS.get(name) is None and texts:
            out.append((texts[0], None))
        elif KEYWORDS.get(name) is not None and len(texts) == 2:
            out.append((texts[0], texts[1]))
    return out


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def script_msgids(source: str) -> list[tuple[str, str | None]]:
    """The msgids a script's ``t(...)`` calls use: ``(msgid, None)`` or ``(singular, plural)``."""
    out: list[tuple[str, str | None]] = []
    for m in JS_CALL.finditer(source):
        plural = _unquote(m.group(3)) if m.group(1) and m.group(3) is not None else None
        out.append((_unquote(m.group(2)), plural))
    return out


@cache
def _script_msgids() -> tuple[tuple[str, str | None], ...]:
    seen: dict[str, str | None] = {}
    for name in SCRIPTS:
        for msgid, plural in script_msgids((STATIC / name).read_text(encoding="utf-8")):
            seen[msgid] = plural
    for name in SCRIPT_TEXTS_IN:
        for msgid, plural in python_msgids((Path(__file__).parent / name).read_text(encoding="utf-8"), ("NS_",)):
            seen[msgid] = plural
    return tuple(seen.items())


def catalog_path(code: str) -> Path:
    """A language's catalog."""
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"


@dataclass(frozen=True, slots=True)
class Lang:
    """One language: its translations and its locale's formats."""

    code: str
    """Its code (``LANGUAGES``)."""
    translations: gettext.NullTranslations
    """Its catalog compiled (English: none, the msgids as they are)."""
    locale: Locale
    """Babel's locale (numbers, dates, plural categories)."""

    def _(self, msgid: str, **values: Any) -> str:
        """``msgid`` in this language, its ``{name}`` fields filled from ``values``."""
        text = self.translations.gettext(msgid)
        return text.format(**values) if values else text

    def ngettext(self, singular: str, plural: str, n: int, **values: Any) -> str:
        """The form of ``singular``/``plural`` for ``n`` (the catalog's plural rule), ``{n}`` and
        the other fields filled."""
        return self.translations.ngettext(singular, plural, n).format(n=self.number(n), **values)

    def game_view(self, game: str, view: Mapping[str, Any], names: Sequence[str] = ()) -> dict[str, Any]:
        """A description of ``game`` (its presentation's ``present()``, seats named or not) with
        its texts in this language: on the server, what ``static/i18n.js``'s ``t.game`` does in a
        page (the replay page the web serves); ``names``: the players' names, never translated."""
        words = _game_words(self.code).get(game)
        if not words:
            return dict(view)
        return dict(translated_view(view, words, names))

    def game_name(self, game: str) -> str:
        """The display name of the game registered as ``game`` (``games.display_name``) in
        this language, through the game's own catalogs; the registry's name for a game that
        declares none or is not installed."""
        shown = games.display_name(game)
        return _game_words(self.code).get(game, {}).get(shown, shown)

    def state(self, word: str) -> str:
        """A state word (``STATE_WORDS``) in this language; any other as it is."""
        return self.translations.pgettext(STATE_CONTEXT, word)

    def number(self, value: float, pattern: str = "#,##0") -> str:
        """A number in this locale's digits and separators (Babel's pattern syntax)."""
        return format_decimal(value, pattern, locale=self.locale)

    def decimal(self, value: float, places: int) -> str:
        """A number with exactly ``places`` decimals."""
        return self.number(value, "#,##0." + "0" * places if places else "#,##0")

    def when(self, epoch: float) -> str:
        """A moment (epoch seconds) as this locale writes a date and time (UTC)."""
        moment = datetime.datetime.fromtimestamp(epoch, datetime.UTC)
        return format_datetime(moment, "medium", tzinfo=datetime.UTC, locale=self.locale) + " UTC"

    def plural_categories(self) -> dict[str, int]:
        """Each CLDR plural category of whole numbers (``Intl.PluralRules``' answer) mapped to the
        catalog's plural form that the same numbers take."""
        out: dict[str, int] = {}
        for n in PLURAL_SAMPLES:
            out.setdefault(self.locale.plural_form(n), _form_index(self.translations, n))
        return out

    def script_data(self) -> str:
        """The JSON block the page's scripts translate with: the language, the plural categories'
        forms, and each script msgid's translation (a plural's: its list of forms). Safe inside
        ``<script type="application/json">`` (no ``<`` left raw). Made once per language."""
        return _script_data(self.code)

    def _script_data(self) -> str:
        messages: dict[str, str | list[str]] = {}
        nplurals = _nplurals(self.translations)
        for msgid, plural in _script_msgids():
            if plural is None:
                messages[msgid] = self.translations.gettext(msgid)
            else:
                messages[msgid] = [self.translations.ngettext(msgid, plural, _sample(self.translations, i))
                                   for i in range(nplurals)]
        for word in STATE_WORDS:
            messages[f"{STATE_CONTEXT}\x04{word}"] = self.state(word)
        data = {"lang": self.code, "plurals": self.plural_categories(), "messages": messages,
                "games": _game_words(self.code), "game_names": {g: self.game_name(g) for g in games.names()}}
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


@cache
def _script_data(code: str) -> str:
    return lang(code)._script_data()


def _nplurals(t: gettext.NullTranslations) -> int:
    return len({_form_index(t, n) for n in PLURAL_SAMPLES})


def _form_index(t: gettext.NullTranslations, n: int) -> int:
    plural = getattr(t, "plural", None)
    return int(plural(n)) if plural is not None else (0 if n == 1 else 1)


def _sample(t: gettext.NullTranslations, index: int) -> int:
    """A whole number that takes the catalog's plural form ``index``."""
    return next(n for n in PLURAL_SAMPLES if _form_index(t, n) == index)


def game_words(code: str) -> dict[str, dict[str, str]]:
    """Each installed game's words in language ``code`` (``arena.replays.game_words``): its
    translations, and its "you" forms (English has only those)."""
    return game_words_.game_words(code)


@cache
def _game_words(code: str) -> dict[str, dict[str, str]]:
    return game_words(code)


GAME_TEXT_KEYS = frozenset({"text", "notes", "label", "name", "loose_name"})
"""The keys of a description whose strings are the game's words (a pile's ``name`` among them)."""


def game_text(text: str, texts: Mapping[str, Any], words: Mapping[str, str], names: Sequence[str] = (),
              depth: int = 0) -> str:
    """One text of a description in the language of ``words`` (a game's catalog): a text of
    ``texts`` is its template translated with its fields filled, each translated the same way
    unless it is one of ``names``; any other text is its own msgid (``t.game`` in the scripts)."""
    return game_words_.game_text(text, texts, words, names, depth=depth)


def translated_view(view: Mapping[str, Any], words: Mapping[str, str], names: Sequence[str] = ()) -> Any:
    """A description with every text of ``GAME_TEXT_KEYS`` through :func:`game_text` (its
    ``texts`` kept as they are)."""
    texts: Mapping[str, Any] = view.get("texts") or {}

    def walk(value: Any, key: str) -> Any:
        if isinstance(value, str):
            return game_text(value, texts, words, names) if key in GAME_TEXT_KEYS else value
        if isinstance(value, Mapping):
            return {k: v if k == "texts" else walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        return value
    return walk(view, "")


def compile_catalog(code: str) -> gettext.GNUTranslations:
    """A language's ``.po`` read with Babel and compiled in memory (``ValueError`` if it does not
    parse: a broken catalog fails at import, not on a page)."""
    with catalog_path(code).open("rb") as f:
        catalog = read_po(f, locale=code, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


@cache
def lang(code: str) -> Lang:
    """The language ``code`` (one of ``LANGUAGES``), its catalog compiled once."""
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}: the web speaks {', '.join(LANGUAGES)}")
    translations = gettext.NullTranslations() if code == DEFAULT else compile_catalog(code)
    return Lang(code, translations, Locale.parse(code))


def accepted(header: str) -> list[str]:
    """An ``Accept-Language`` header's languages, most wanted first (``q=0`` dropped)."""
    ranked: list[tuple[float, int, str]] = []
    for i, item in enumerate(header.split(",")[:ACCEPT_LANGUAGE_ITEMS]):
        tag, _, params = item.strip().partition(";")
        q = 1.0
        for p in params.split(";"):
            key, _, value = p.strip().partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if tag and tag != "*" and q > 0:
            ranked.append((-q, i, tag.strip()))
    return [tag for _, _, tag in sorted(ranked)]


def negotiate(accept_language: str) -> str:
    """The language the web speaks that the header wants most (Babel's negotiation), or English."""
    return negotiate_locale(accepted(accept_language), LANGUAGES, sep="-") or DEFAULT


@dataclass(frozen=True, slots=True)
class Choice:
    """A request's language and what its answer says of it."""

    lang: Lang
    """The language the page is in."""
    set_cookie: str | None
    """A language chosen by ``?lang=`` to keep in the cookie (``None``: nothing to set)."""
    unknown: str | None
    """A ``?lang=`` the web does not speak (the page says so, in ``lang``)."""


def choose(query: Mapping[str, str], cookies: Mapping[str, str], accept_language: str) -> Choice:
    """A request's language: ``?lang=``, else the ``lang`` cookie, else ``Accept-Language``."""
    asked = query.get("lang")
    kept = cookies.get(COOKIE)
    fallback = kept if kept in LANGUAGES else negotiate(accept_language)
    if asked is None:
        return Choice(lang(fallback), None, None)
    if asked in LANGUAGES:
        return Choice(lang(asked), asked, None)
    return Choice(lang(fallback), None, asked)


def of_request(request: Request) -> Choice:
    """A request's language (:func:`choose` of its query, cookies and ``Accept-Language``)."""
    return choose(request.query_params, request.cookies, request.headers.get("accept-language", ""))


def answer(response: R, choice: Choice, *, secure: bool) -> R:
    """``response`` saying its language (``Content-Language``, ``Vary``) and keeping a language
    chosen by ``?lang=`` in the cookie (``secure``: over https)."""
    response.headers["Content-Language"] = choice.lang.code
    response.headers["Vary"] = VARY
    if choice.set_cookie is not None:
        response.set_cookie(COOKIE, choice.set_cookie, max_age=COOKIE_DAYS * 86400, samesite="lax", path="/",
                            secure=secure)
    return response


def script_block(tr: Lang) -> str:
    """The scripts' strings (a JSON data block: the CSP's ``script-src 'self'`` holds) and the
    ``t`` helper, to put before a page's own script."""
    return (f'<script type="application/json" id="i18n">{tr.script_data()}</script>\n'
            f'<script src="{SCRIPT}" defer></script>')


def switch(current: str) -> Iterable[tuple[str, str, bool]]:
    """The header's language switch: each language's code, name and whether it is ``current``."""
    return ((code, NAMES[code], code == current) for code in LANGUAGES)
