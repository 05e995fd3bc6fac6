"""The live web in English, Bulgarian and Russian (docs/web.md#languages): every msgid the code
uses (Python's ``_``/``ngettext``/``N_``/``NP_``, the scripts' ``t``) is in every catalog with its
fields and plural forms; the language is negotiated from ``Accept-Language``, chosen by ``?lang=``
(kept in a cookie) and said in ``<html lang>``, ``Content-Language`` and ``Vary``; refusals and
numbers come in the page's language; and in real Chromium set to Bulgarian the standings page is
in Bulgarian while its live updates still come. The tables' pages (play the computer, open, join,
the lobby, a seat's table) and their refusals come in the person's language too (a seat's JSON
refusal: English ``error``, translated ``say``), and a person in a Russian Chromium plays the
computer to the end with the table's own words, and then its replay page, in Russian."""

from __future__ import annotations

import html
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
import trio
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

import referee
from arena.replays import game_words
from arena.replays import html as replay_html
from arena.web import i18n, pages
from tests._web import fetch, play, served, until
from tests.test_web_accounts import post
from tests.test_web_browser import _driver, _js, _live
from tests.test_web_tables import ARTIFACTS, STATE, _click, _open_table, _pick, seat_page
from tests.test_web_tables_people import FORM, JSON, seat_of, sign_up
from tests.test_web_tables_people import post as form_post

WEB = Path(i18n.__file__).parent
FIELD = re.compile(r"\{(\w+)\}")
"""A ``{field}`` of a message."""


def code_msgids() -> dict[str, str | None]:
    """Every msgid the live web's Python and scripts use (a plural's: its English plural), the
    replay page's too (its frame's ``_``/``ngettext``, its script's ``t``: the web serves it in
    the reader's language)."""
    found: dict[str, str | None] = {}
    for source in [*sorted(WEB.rglob("*.py")), Path(replay_html.__file__)]:
        for msgid, plural in i18n.python_msgids(source.read_text(encoding="utf-8")):
            found.setdefault(msgid, plural)
    for template in sorted(pages.TEMPLATES.glob("*.html")):  # (the pages' templates: their _ and ngettext)
        for msgid, plural in pages.template_msgids(template.read_text(encoding="utf-8")):
            found.setdefault(msgid, plural)
    scripts = [(i18n.STATIC / name).read_text(encoding="utf-8") for name in i18n.SCRIPTS] + [replay_html.JS]
    for script in scripts:
        for msgid, plural in i18n.script_msgids(script):
            found.setdefault(msgid, plural)
    return found


def catalog(code: str) -> Catalog:
    with i18n.catalog_path(code).open("rb") as f:
        return read_po(f, locale=code, domain=i18n.DOMAIN)


def problems(cat: Catalog, msgids: dict[str, str | None]) -> list[str]:
    """What ``cat`` lacks of ``msgids`` and of the state words: a missing or empty or fuzzy
    translation, a plural without the catalog's forms, a ``{field}`` not kept."""
    out = []
    wanted = [(m, p, None) for m, p in msgids.items()] + [(w, None, i18n.STATE_CONTEXT) for w in i18n.STATE_WORDS]
    for msgid, plural, context in wanted:
        message = cat.get(msgid, context=context)
        if message is None or message.fuzzy:
            out.append(f"missing: {msgid!r}")
            continue
        forms = [str(f) for f in message.string] if isinstance(message.string, (tuple, list)) else [str(message.string)]
        if plural is not None and (not message.pluralizable or len(forms) != cat.num_plurals
                                   or message.id[1] != plural):
            out.append(f"not the catalog's {cat.num_plurals} plural forms of {msgid!r}/{plural!r}")
        fields = set(FIELD.findall(msgid)) | set(FIELD.findall(plural or ""))
        for form in forms:
            if not form or set(FIELD.findall(form)) != fields:
                out.append(f"{msgid!r}: translation {form!r} must keep the fields {sorted(fields)}")
                continue
            try:  # what Lang._ and ngettext do with it (a stray brace would fail there, on a page)
                form.format(**dict.fromkeys(fields, "x"))
            except (KeyError, ValueError, IndexError) as e:
                out.append(f"{msgid!r}: translation {form!r} does not format: {e}")
    return out


def test_every_msgid_of_the_code_is_translated_in_every_catalog() -> None:
    msgids = code_msgids()
    # The extraction sees what the code uses, inside f-strings, constants and the scripts too.
    assert {"sign out", "wrong name or password", "to move"} <= msgids.keys()
    assert msgids["{n} game"] == "{n} games" and msgids["{n} card, face down"] == "{n} cards, face down"
    # ... the tables' scripts and notices, and the replay page's frame and script.
    assert {"your turn", "Start", "the computer plays for {name} to the end of the game", "Score sheet",
            "the table is empty", "Scores through the match"} <= msgids.keys()
    assert msgids["{kind} ({n} way) — select its cards"] == "{kind} ({n} ways) — select its cards"
    assert msgids["{n} position"] == "{n} positions"
    # ... the templates' (a plural with its fields, the menu's words in the Python).
    assert msgids["rating {rating} ± {uncertainty} over {n} people's game"] == (
        "rating {rating} ± {uncertainty} over {n} people's games")
    assert {"skip to the page", "Play the computer", "lobby", "rules"} <= msgids.keys()
    # The replay's script gets exactly the msgids its t() calls use.
    assert set(replay_html.SCRIPT_TEXTS) == {m for m, _p in i18n.script_msgids(replay_html.JS)}
    for code in i18n.LANGUAGES[1:]:
        cat = catalog(code)
        assert problems(cat, msgids) == [], code
        # ... and would tell: a msgid the catalog lacks, a field dropped.
        assert problems(cat, {"a text nobody translated": None}) == ["missing: 'a text nobody translated'"]
        broken = catalog(code)
        broken["no bot {name} here"].string = "broken"
        assert problems(broken, msgids) == ["'no bot {name} here': translation 'broken' must keep the fields "
                                            "['name']"]
        broken["no bot {name} here"].string = "{name} {"
        assert problems(broken, msgids) == ["'no bot {name} here': translation '{name} {' does not format: "
                                            "Single '{' encountered in format string"]


def game_msgids(name: str) -> dict[str, str | None]:
    """Every msgid a game's presentation and its wire's ``event_words`` mark (``T`` and ``say``:
    referee.cardcore.present)."""
    found = referee.games.get(name)
    out: dict[str, str | None] = {}
    for part in (found.presentation, found.wire, referee.cardcore.present.Words):  # the cards' faces' words
        source = Path(inspect.getsourcefile(part if isinstance(part, type) else type(part)) or "")
        out |= dict.fromkeys(m for m, _ in i18n.python_msgids(source.read_text(encoding="utf-8"), i18n.GAME_KEYWORDS))
    return out


@pytest.mark.parametrize("name", ["gin", "rummy"])
def test_every_word_of_a_games_presentation_is_translated_in_its_catalogs(name: str) -> None:
    """A game's words (its presentation's texts and templates) are in its own catalogs, in
    every language the web speaks, with their fields; the catalogs hold nothing else (a text
    the presentation no longer makes is not kept); and the scripts' block carries them by game."""
    folder = referee.games.get(name).catalogs
    assert folder is not None
    msgids = game_msgids(name)
    assert {"stock", "discard pile", "draw from the stock", "deadwood {n}", "{action} {card}"} & msgids.keys()
    assert len(msgids) > 30, msgids
    yours: dict[str, set[str]] = {}
    for code in i18n.LANGUAGES[1:]:
        with game_words.catalog_path(folder, code).open("rb") as f:
            cat = read_po(f, locale=code, domain=i18n.GAME_DOMAIN)
        assert [p for p in problems(cat, msgids) if "state" not in p and not any(
            p == f"missing: {w!r}" for w in i18n.STATE_WORDS)] == [], (name, code)
        assert {str(m.id) for m in cat if m.id and not m.context} == set(msgids), (name, code)
        yours[code] = you_forms(cat, msgids)
        words = json.loads(i18n.lang(code).script_data())["games"][name]
        assert words == {(f"you\x04{m.id}" if m.context else str(m.id)): str(m.string) for m in cat if m.id}
    # English's catalog holds the "you" forms only (its texts are the msgids), the same ones.
    with game_words.catalog_path(folder, "en").open("rb") as f:
        en = read_po(f, locale="en", domain=i18n.GAME_DOMAIN)
    assert all(m.context == "you" for m in en if m.id)
    yours["en"] = you_forms(en, msgids)
    assert yours["en"] == yours["bg"] == yours["ru"] and len(yours["en"]) > 10, yours
    assert json.loads(i18n.lang("en").script_data())["games"][name] == {f"you\x04{m.id}": m.string for m in en if m.id}


def you_forms(cat: Catalog, msgids: dict[str, str | None]) -> set[str]:
    """The msgids with a "you" form in ``cat`` (each a msgid of the game, its form keeping the
    template's fields but its subject ``{who}``, which the form says as "you")."""
    out = set()
    for m in cat:
        if m.context != "you":
            continue
        assert m.id in msgids and m.string and not m.fuzzy, m.id
        fields = set(FIELD.findall(str(m.id))) - {"who"}
        assert set(FIELD.findall(str(m.string))) == fields, (m.id, m.string)
        out.add(str(m.id))
    return out


def test_a_games_words_are_translated_from_the_descriptions_texts(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``t.game`` (static/i18n.js) does, in Python over a real description: every text of a
    Gin deal's end and its buttons has a translation made of the catalog's template and the
    fields, and a broken or missing catalog leaves the words English (logged, no page broken)."""
    gin = referee.games.get("gin")
    presentation = gin.presentation
    assert presentation is not None
    match = gin.game.new_match(gin.game.default_rules(), b"words", 2)
    desc: dict[str, Any] = {}
    while match.decider is not None and desc.get("end") is None:
        seat = match.decider
        desc = presentation.present(presentation.match_view(match, seat))
        match.apply(seat, match.substitute(seat))
    words = json.loads(i18n.lang("ru").script_data())["games"]["gin"]

    def say(text: str, depth: int = 0) -> str:  # static/i18n.js's t.game
        made = desc["texts"].get(text)
        if made is not None:
            return str(words.get(made[0], made[0])).format(**{k: say(v, depth + 1) for k, v in made[1].items()})
        return str(words.get(text, text))
    assert say("stock") == "колода" and say("discard pile") == "сброс"
    assert desc["loose_name"] == "deadwood" and say(desc["loose_name"]) == "несобранные"  # the game's word
    texts = [m["label"] for m in desc["legal"]] + desc["notes"] + [n for s in desc["seats"] for n in s["notes"]]
    assert texts and all(say(x) != x for x in texts), [(x, say(x)) for x in texts]
    broken = tmp_path / "broken"
    (broken / "ru" / "LC_MESSAGES").mkdir(parents=True)
    (broken / "ru" / "LC_MESSAGES" / "game.po").write_text('garbage, not a catalog\n', encoding="utf-8")
    found = {"gin": gin, "broken": referee.games.Registered(gin.game, gin.wire, presentation, broken),
             "bare": referee.games.Registered(gin.game, gin.wire, presentation)}
    monkeypatch.setattr(referee.games, "names", lambda: tuple(found))
    monkeypatch.setattr(referee.games, "get", found.__getitem__)
    assert set(i18n.game_words("ru")) == {"gin"} and i18n.game_words("bg")["gin"]["stock"] == "тесте"


def test_plural_forms_come_from_the_catalogs() -> None:
    assert catalog("bg").num_plurals == 2 and catalog("ru").num_plurals == 3
    ru, bg, en = i18n.lang("ru"), i18n.lang("bg"), i18n.lang("en")
    assert [ru.ngettext("{n} game", "{n} games", n) for n in (1, 3, 5, 11, 21, 22, 25)] == [
        "1 игра", "3 игры", "5 игр", "11 игр", "21 игра", "22 игры", "25 игр"]
    assert [bg.ngettext("{n} game", "{n} games", n) for n in (1, 2, 11)] == ["1 игра", "2 игри", "11 игри"]
    assert [en.ngettext("{n} game", "{n} games", n) for n in (1, 2)] == ["1 game", "2 games"]
    # What the scripts get: the browser's Intl.PluralRules categories matched to the catalog's forms.
    assert ru.plural_categories() == {"one": 0, "few": 1, "many": 2}
    assert bg.plural_categories() == {"one": 0, "other": 1} == en.plural_categories()
    data = json.loads(ru.script_data())
    assert data["messages"]["{n} card, face down"] == ["{n} карта рубашкой вверх", "{n} карты рубашкой вверх",
                                                       "{n} карт рубашкой вверх"]
    assert data["messages"]["state\x04finished"] == "завершён" and data["lang"] == "ru"


def test_the_language_is_negotiated_from_accept_language() -> None:
    assert i18n.accepted("de-DE, ru;q=0.5, bg;q=0.8, fr;q=0, *;q=0.1") == ["de-DE", "bg", "ru"]
    assert i18n.negotiate("de-DE, ru;q=0.5, bg;q=0.8") == "bg"
    assert i18n.negotiate("ru-RU,ru;q=0.9,en;q=0.8") == "ru"
    assert i18n.negotiate("de, fr") == "en" == i18n.negotiate("") == i18n.negotiate("bg;q=nonsense")
    assert i18n.choose({"lang": "ru"}, {"lang": "bg"}, "bg") == i18n.Choice(i18n.lang("ru"), "ru", None)
    assert i18n.choose({}, {"lang": "bg"}, "ru") == i18n.Choice(i18n.lang("bg"), None, None)
    assert i18n.choose({}, {"lang": "xx"}, "ru") == i18n.Choice(i18n.lang("ru"), None, None)
    assert i18n.choose({"lang": "xx"}, {}, "bg") == i18n.Choice(i18n.lang("bg"), None, "xx")
    with pytest.raises(ValueError, match="unknown language 'de': the web speaks en, bg, ru"):
        i18n.lang("de")


def test_pages_come_in_the_browsers_language_or_the_one_chosen(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            await play(s, ("alpha", "beta"), "m-1")

            async def rated() -> bool:
                return len((await fetch(u + "/api/standings")).json()["standings"]) == 2
            await until(rated, "the match in the standings")

            for header, code, title in (("bg-BG,bg;q=0.9", "bg", "Класиране"), ("ru", "ru", "Турнирная таблица"),
                                        ("de-DE,de;q=0.9", "en", "Standings"), ("", "en", "Standings")):
                page = await fetch(u + "/standings", headers={"Accept-Language": header} if header else {})
                assert page.status == 200 and f'<html lang="{code}">' in page.text, header
                assert f"<h1>{title}</h1>" in page.text and page.headers["content-language"] == code
                assert page.headers["vary"] == "Accept-Language, Cookie"
                block = re.search(r'<script type="application/json" id="i18n">(.*?)</script>', page.text)
                assert block is not None and json.loads(block.group(1))["lang"] == code
            bg = (await fetch(u + "/", headers={"Accept-Language": "bg"})).text
            row = re.search(r'<tr data-bot="alpha".*?</tr>', bg)
            assert row is not None and "предварителен" in row.group(0)
            assert re.search(r"<td>\d+,\d\d</td>", row.group(0)), row.group(0)  # the locale's decimal comma
            assert "завършен" in bg and '<th scope="col">бот</th>' in bg

            # ?lang= wins over the browser's language and is kept in a cookie.
            chosen = await fetch(u + "/matches?lang=ru", headers={"Accept-Language": "bg"})
            assert '<html lang="ru">' in chosen.text and "<h1>Матчи</h1>" in chosen.text
            assert chosen.headers["set-cookie"].startswith("lang=ru;")
            kept = await fetch(u + "/people", headers={"Accept-Language": "bg", "Cookie": "lang=ru"})
            assert '<html lang="ru">' in kept.text and "<h1>Люди</h1>" in kept.text
            assert "Игры людей оцениваются отдельно" in kept.text
            assert '<a href="?lang=bg" lang="bg" hreflang="bg">Български</a>' in kept.text
            older = await fetch(u + "/matches?before=7&lang=ru")  # the switch keeps the page's own query
            assert '<a href="?before=7&amp;lang=bg" lang="bg" hreflang="bg">' in older.text

            # A language the web does not speak: 400, said in the language negotiated.
            unknown = await fetch(u + "/?lang=xx", headers={"Accept-Language": "bg"})
            assert unknown.status == 400 and "set-cookie" not in unknown.headers
            assert "непознат език &#39;xx&#39;: сайтът е на en, bg, ru" in unknown.text

            # Refusals in the person's language; the API's JSON stays English.
            missing = await fetch(u + "/bots/nobody", headers={"Accept-Language": "ru"})
            assert missing.status == 404 and "здесь нет бота &#39;nobody&#39;" in missing.text
            assert (await fetch(u + "/api/bots/nobody", headers={"Accept-Language": "ru"})).json() == {
                "error": "no bot 'nobody' here"}
            refused = await post(u, "/signup", {"name": "ab", "password": "correct horse battery"},
                                 headers={"Accept-Language": "bg"})
            assert refused.status == 400 and "името има от 3 до 32 знака (това има 2)" in refused.said
            assert '<html lang="bg">' in refused.text
            wrong = await post(u, "/signin", {"name": "nobody", "password": "correct horse battery"},
                               headers={"Accept-Language": "ru"})
            assert wrong.status == 403 and "неверное имя или пароль" in wrong.said
            bot = (await fetch(u + "/bots/alpha", headers={"Accept-Language": "ru"})).text
            assert "1 игра · рейтинг" in html.unescape(bot) and "Рейтинг во времени" in bot

    referee.run(main)


def test_the_standings_page_in_a_bulgarian_browser_updates_live_in_bulgarian(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile", lang="bg")

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            await trio.to_thread.run_sync(driver.get, s.url + "/")
            await _live(driver)
            assert await _js(driver, "return document.documentElement.lang") == "bg"
            assert await _js(driver, "return document.querySelector('#standings-heading').textContent") == "Класиране"
            assert await _js(driver, "return document.querySelector('#running li.none').textContent") == "няма"
            await play(s, ("alpha", "beta"), "m-1")

            async def drawn() -> bool:
                rows = await _js(driver, "return [...document.querySelectorAll('#standings tbody tr')]"
                                         ".map(r => r.dataset.bot)")
                listed = await _js(driver, "return !!document.querySelector('#recent li[data-match=\"m-1\"]')")
                return sorted(rows) == ["alpha", "beta"] and bool(listed)
            await until(drawn, "the finished match drawn by the script")
            row = await _js(driver, "return [...document.querySelectorAll('#standings tbody tr')[0].cells]"
                                    ".map(c => c.textContent)")
            assert "предварителен" in row[1] and re.fullmatch(r"\d+,\d\d", row[3]), row
            assert re.fullmatch(r"-?\d+,\d … -?\d+,\d", row[5]) and row[6] == "отстранен", row  # (not a registered bot)
            recent = await _js(driver, "return document.querySelector('#recent li[data-match=\"m-1\"]').textContent")
            assert " срещу " in recent and "завършен" in recent and "победител" in recent, recent

    try:
        referee.run(main)
    finally:
        driver.quit()


def test_the_table_pages_and_their_refusals_come_in_the_persons_language(tmp_path: Path) -> None:
    bg, ru = {"Accept-Language": "bg-BG,bg;q=0.9"}, {"Accept-Language": "ru"}

    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            page = await fetch(u + "/play", headers=bg)
            assert page.status == 200 and '<html lang="bg">' in page.text and page.headers["content-language"] == "bg"
            assert "<h1>Игра срещу компютъра</h1>" in page.text and ">играйте Джин</button>" in page.text
            assert page.headers["vary"] == "Accept-Language, Cookie" and page.headers["cache-control"] == "no-store"
            # The site's one menu (the table pages' too), in the page's language, this page marked.
            assert '<a href="/play" aria-current="page">играйте</a>' in page.text
            assert '<a href="/rules">правила</a>' in page.text and '<a href="/lobby">фоайе</a>' in page.text
            block = re.search(r'<script type="application/json" id="i18n">(.*?)</script>', page.text)
            assert block is not None
            said = json.loads(block.group(1))["messages"]  # table.js's, people.js's and the notices' texts
            assert said["The deal’s end"] == "Краят на раздаването" and said["Start"] == "Начало"
            assert said["the computer plays for {name} to the end of the game"] == (
                "компютърът играе вместо {name} до края на играта")
            assert said["{n} card"] == ["{n} карта", "{n} карти"]
            refused = await fetch(u + "/play", "POST", {**ru, **FORM}, b"game=gin&preset=nope&bot=random")
            assert refused.status == 400 and '<html lang="ru">' in refused.text
            assert "правила 'nope': у gin есть " in html.unescape(refused.text), refused.text
            unknown = await fetch(u + "/play?lang=xx", headers=ru)
            assert unknown.status == 400 and "неизвестный язык" in unknown.text and "set-cookie" not in unknown.headers

            alice = await sign_up(u, "alice")
            made = await fetch(u + "/tables/new", headers={**ru, "Cookie": alice})
            assert "<h1>Открыть стол</h1>" in made.text and "секунд на ход" in made.text
            assert "друзья с кодом" in made.text
            slow = await form_post(u + "/tables/new", {"game": "gin", "preset": "short", "move_s": "9999"},
                              f"{alice}; lang=bg")  # the cookie's language
            assert slow.status == 400 and '<html lang="bg">' in slow.text
            assert "move_s=9999: секундите за ход са от 1 до " in slow.text and "(лимит table_move_s)" in slow.text
            joining = await fetch(u + "/tables/join", headers={**bg, "Cookie": alice})
            assert "<h1>Сядане на маса</h1>" in joining.text and "код на масата" in joining.text
            wrong = await form_post(u + "/tables/join", {"code": "AAAAAAAAAAAAA"}, f"{alice}; lang=ru")
            assert wrong.status == 404
            assert "нет стола с таким кодом (проверьте его или попросите ссылку у хозяина)" in wrong.text
            nobody = await fetch(u + "/tables/new", headers=bg)
            assert nobody.status == 401 and "Масите с приятели са за влезли хора" in nobody.text
            lobby = await fetch(u + "/lobby", headers=ru)
            assert "<h1>Столы</h1>" in lobby.text and "<h2>Открытые столы</h2>" in lobby.text

            # A table's page, and its script's refusals: English for programs, translated to show.
            host = await seat_of(await form_post(u + "/tables/new", {"game": "gin", "preset": "short"}, alice))
            table = await fetch(u + host, headers=ru)
            assert '<html lang="ru">' in table.text and "<h2>Таблица очков</h2>" in table.text
            assert "<h2>Ходы соперников</h2>" in table.text and "подключение…" in table.text
            start = await fetch(u + host + "/start", "POST", {**JSON, **ru}, b"{}")
            assert start.status == 409 and start.json() == {
                "error": "every seat needs a person or a sample bot first",
                "say": "сначала на каждое место нужен человек или примерный бот"}
            fill = await fetch(u + host + "/fill", "POST", {**JSON, **bg}, b'{"seat": "5", "bot": "random"}')
            assert fill.status == 400 and fill.json()["say"] == "място 5 не е свободно място на тази маса"
            gone = await fetch(u + "/play/t/nothing-here/move", "POST", {**JSON, **ru}, b"{}")
            assert gone.status == 404 and gone.json()["error"].startswith("no seat has this link")
            assert gone.json()["say"].startswith("ни у одного места нет такой ссылки")
            english = await fetch(u + host, headers={"Accept-Language": "de"})
            assert '<html lang="en">' in english.text and "<h2>Score sheet</h2>" in english.text

    referee.run(main)


RUSSIAN = """
const text = (q) => { const e = document.querySelector(q); return e ? e.textContent : null; };
return {status: text('#status'), tag: text('#me .tag.tomove'), deal: text('#end h2'),
        head: [...document.querySelectorAll('#scores thead th')].map(e => e.textContent),
        headings: [...document.querySelectorAll('main h2')].map(e => e.textContent),
        replay: text('#replay a'), count: text('#me .notes'),
        buttons: [...document.querySelectorAll('#moves button')].map(e => [e.dataset.action, e.textContent]),
        log: [...document.querySelectorAll('#log li')].map(e => e.textContent),
        piles: [...document.querySelectorAll('#piles .label')].map(e => e.textContent),
        rows: [...document.querySelectorAll('#scores tbody tr')].map(e => e.textContent),
        end_text: text('#end .end-text')};"""
"""What the Russian table shows in its own words."""


REPLAY = """
const text = (q) => { const e = document.querySelector(q); return e ? e.textContent : null; };
return {lang: document.documentElement.lang, back: text('.meta a'), step: text('#step-label'),
        title: text('#deal-title'), count: text('#count-1'), footer: text('footer'),
        last: text('#last-move'), piles: [...document.querySelectorAll('.pile .label')].map(e => e.textContent),
        sheet: [...document.querySelectorAll('#score-sheet tr[data-deal] td:nth-child(2)')].map(e => e.textContent),
        headings: [...document.querySelectorAll('h2')].map(e => e.textContent)};"""
"""What the replay page shows in its own words."""


async def _served(url: str) -> bool:
    return (await fetch(url, headers={"Accept-Language": "ru"})).status == 200


def test_a_person_in_a_russian_browser_plays_the_computer_in_russian(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile", lang="ru")
    shown: list[dict[str, Any]] = []
    replay: dict[str, Any] = {}

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            await seat_page(driver, s.url, _open_table)
            assert await _js(driver, "return document.documentElement.lang") == "ru"

            async def turn_or_end() -> bool:
                state = await _js(driver, STATE)
                return bool(state["moves"] or state["over"])
            while True:  # the person's turns, each checked in Russian, to the game's end
                await until(turn_or_end, "the person's turn or the game's end")
                state, words = await _js(driver, STATE), await _js(driver, RUSSIAN)
                shown.append(words)
                if state["over"]:
                    break
                assert state["title"].startswith("● Ваш ход — "), state["title"]
                assert re.fullmatch(r"ваше время на этот ход: \d+ с", state["clock"]), state["clock"]
                assert words["status"].startswith("Ваш ход: касайтесь карт и стопок"), words
                assert words["tag"] == "ваш ход" and re.match(r"\d+ карт", words["count"]), words
                move = _pick(state["moves"], state["loose"])
                await trio.to_thread.run_sync(_click, driver, f'#moves button[data-action="{move}"]')

                async def answered(n: int = state["n"]) -> bool:
                    now = await _js(driver, STATE)
                    return bool(now["n"] > n or now["over"])
                await until(answered, f"the referee's answer to {move!r}")

            async def linked() -> bool:
                return (await _js(driver, RUSSIAN))["replay"] is not None
            await until(linked, "the replay's link")
            shown.append(await _js(driver, RUSSIAN))
            ARTIFACTS.mkdir(parents=True, exist_ok=True)  # the match's end in Russian, for a person to look at
            await trio.to_thread.run_sync(driver.save_screenshot, str(ARTIFACTS / "ru-end.png"))
            # The game's replay page, in Russian too: its frame and its script's words.
            href = str(await _js(driver, "return document.querySelector('#replay a').href"))
            await until(lambda: _served(href), "the replay page")
            await trio.to_thread.run_sync(driver.get, href + "#deal=1&move=1")

            async def drawn() -> bool:  # (the page's script draws the position after the load event)
                return bool((await _js(driver, REPLAY))["step"])
            await until(drawn, "the replay page's position")
            replay.update(await _js(driver, REPLAY))

    try:
        referee.run(main)
    finally:
        driver.quit()
    assert replay["lang"] == "ru" and replay["back"] == "← сыграть ещё", replay
    assert replay["step"].startswith("позиция 1 / ") and " · сдача 1 / " in replay["step"], replay
    assert replay["title"].startswith("Игра 1, сдача 1 · сдаёт "), replay
    assert "Счёт по ходу матча" in replay["headings"] and "Таблица очков" in replay["headings"], replay
    # (the other seat's hand after the first move: 10 cards, or 11 if that move was its draw)
    assert re.match(r"1[01] карт\b", replay["count"]) and "Запись Gin Arena" in replay["footer"], replay
    # ... and the game's words in it (the web gives the page Gin's catalog: Lang.game_view).
    assert re.search(r"(открытую карту|из колоды|из сброса)", replay["last"] or ""), replay
    assert any(p.startswith("колода ") for p in replay["piles"]), replay
    english = re.compile(r"knocks|goes gin|scores|dead hand")
    assert replay["sheet"] and not any(english.search(x) for x in replay["sheet"]), replay
    assert len(shown) > 3, shown
    # The game's own words too (Gin's catalog): the buttons, the piles, the notes, the deal's end.
    labels = {action.split()[0]: text for w in shown for action, text in w["buttons"]}
    assert labels["draw_stock"].endswith("взять из колоды") and "сбросить " in labels["discard"], labels
    assert any(re.fullmatch(r"колода \(\d+\)", p) for w in shown for p in w["piles"]), shown
    assert any("несобранные" in (w["count"] or "") for w in shown), shown
    log = last_log = shown[-1]["log"]
    assert log and all(re.fullmatch(r"random [^a-z_]*[а-яё][^_]*", e) for e in log), last_log
    assert any("из колоды" in e for e in log) and any("сбрасывает " in e for e in log), log
    ends = [w["end_text"] for w in shown if w["end_text"]]
    assert ends and all(not re.search(r"knocks|goes gin|deadwood|scores|dead hand", e) for e in ends), ends
    last = shown[-1]
    assert {"Таблица очков", "Ходы соперников", "Конец сдачи"} <= set(last["headings"]), last
    assert last["head"] == ["игра", "сдача", "выиграл", "вы", "random"], last
    # the game's result fields in its own words (Gin's result_words, its catalog): the sheet's rows
    assert any(r.startswith("выигранные сдачи") for r in last["rows"]), last["rows"]
    assert last["deal"] == "Конец сдачи" and last["replay"] == "запись этой игры", last
    assert re.fullmatch(r"(Вы выиграли игру|random выигрывает игру) \d+–\d+", last["status"]), last


def test_every_state_word_the_web_shows_is_in_every_language() -> None:
    """A registered bot's state (the hosted registry's ``enabled``, ``disabled``, ``suspended``)
    is shown in the standings' state column: in Bulgarian and Russian too, not left in English."""
    from arena.hosted.registry import BOT_STATES
    assert set(BOT_STATES) <= set(i18n.STATE_WORDS)
    for code in i18n.LANGUAGES[1:]:
        for word in BOT_STATES:
            assert i18n.lang(code).state(word) != word, (code, word)
    assert i18n.lang("bg").state("suspended") == "спрян" and i18n.lang("ru").state("enabled") == "включён"
