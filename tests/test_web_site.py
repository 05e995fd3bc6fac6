"""The live web as one site (docs/web.md#one-site): every page has the one menu (standings ·
matches · play · tables · lobby · rules · sign in), one ``<h1>`` and no heading twice; the home
page offers "Play the computer" first and links the lobby; the icon answers. The rules and help
pages (docs/web.md#rules-and-help): each installed game's own text, in every language the web
speaks, every preset named, the questions answered; a game's text is shown as text (raw HTML
off), and a file that cannot be read leaves the page out, not broken."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import trio

import referee
from arena.web import i18n, pages
from arena.web.pages import rules
from referee import games
from tests._web import fetch, play, served, until
from tests.test_web_tables_people import sign_up

MENU = [href for href, _ in pages.MENU]
"""The site's one menu, in order."""
HEADING = re.compile(r"<h([12])[^>]*>(.*?)</h\1>", re.S)
"""A first- or second-level heading and its text."""
QUESTIONS = {
    "gin": ("How many cards do I get?", "What is an undercut?", "What is big gin?", "Can I knock on my first turn?",
            "What happens when the stock runs out?", "Why is there no undo?"),
    "rummy": ("How many cards do I get?", "Is there an undercut, or big gin?", "Can I go out on my first turn?",
              "What happens when the stock runs out?", "Why is there no undo?"),
}
"""The questions each first-party game's English page answers (the issue's list)."""


def menu_of(page: str) -> list[str]:
    """The addresses of a page's menu (``<ul class="menu">``: its links, the door's too)."""
    found = re.search(r'<ul class="menu">(.*?)</ul>', page, re.S)
    assert found is not None, "no site menu"
    return re.findall(r'<a href="([^"]+)"', found.group(1))


def headings(page: str) -> list[tuple[str, str]]:
    return [(level, re.sub(r"<[^>]+>", "", text).strip()) for level, text in HEADING.findall(page)]


def test_every_page_has_the_one_menu_one_heading_and_the_icon(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            await play(s, ("alpha", "beta"), "m-1")

            async def rated() -> bool:
                return len((await fetch(u + "/api/standings")).json()["standings"]) == 2
            await until(rated, "the match in the standings")
            site = ("/", "/standings", "/matches", "/play", "/lobby", "/rules", "/rules/gin", "/rules/rummy",
                    "/signin", "/signup", "/people", "/bots/alpha", "/matches/nope",
                    "/matches/m-1")  # (the finished match's replay page: the menu on top of it too)
            for lang in i18n.LANGUAGES:
                for path in site:
                    got = await fetch(u + path + f"?lang={lang}")
                    assert got.status == (404 if path == "/matches/nope" else 200), path
                    assert menu_of(got.text) == [*MENU, "/signin"], (path, lang)
                    seen = headings(got.text)
                    assert [level for level, _ in seen].count("1") == 1, (path, seen)
                    assert len({text for _, text in seen}) == len(seen), (path, lang, seen)  # no heading twice
                    assert f'<link rel="icon" href="{pages.ICON}"' in got.text, path
                    assert "arena serve" not in got.text, path
            # The replay page: the skip link reaches its main part; its own heading is no second banner.
            replay = (await fetch(u + "/matches/m-1?lang=bg")).text
            assert '<a class="skip" href="#main">' in replay and '<main id="main">' in replay
            assert replay.count("<header") == 1 and '<a href="/matches" aria-current="page">мачове</a>' in replay
            # This page's entry is marked; the standings live on their own page, once.
            standings = (await fetch(u + "/standings")).text
            assert '<a href="/standings" aria-current="page">standings</a>' in standings
            assert [t for _, t in headings(standings)] == ["Standings"]

            # The home page: "Play the computer" first, then the tables and the lobby, the rules.
            home = (await fetch(u + "/?lang=ru")).text
            main_part = home[home.index('<main id="main">'):]
            links = re.findall(r'<a[^>]* href="([^"]+)"[^>]*>([^<]*)</a>', main_part)
            assert links[0] == ("/play", "Игра с компьютером"), links[:3]
            assert "/lobby" in [href for href, _ in links[:3]] and "/rules" in [href for href, _ in links[:3]]
            assert '<h2 id="standings-heading">Турнирная таблица</h2>' in home and 'data-bot="alpha"' in home

            # The icon: the pages name it, and /favicon.ico (which browsers ask for) answers it.
            for path in ("/favicon.ico", pages.ICON):
                icon = await fetch(u + path)
                assert icon.status == 200 and icon.headers["content-type"] == "image/svg+xml", path
                assert icon.text.startswith("<svg")

            # Signed in: the door is who and sign-out, on every page (the table pages' too).
            headers = {"Cookie": await sign_up(u, "carol")}
            for path in ("/", "/play", "/rules"):
                page = (await fetch(u + path, headers=headers)).text
                assert 'id="who"' in page and 'action="/signout"' in page and menu_of(page) == [*MENU, "/people/carol"]

    referee.run(main)


def test_the_rules_pages_show_each_games_own_text_in_every_language(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            with_help = [n for n in games.names() if games.get(n).help is not None]
            assert {"gin", "rummy"} <= set(with_help)
            for lang in i18n.LANGUAGES:
                index = await fetch(u + f"/rules?lang={lang}")
                assert index.status == 200 and f'<html lang="{lang}">' in index.text
                for name in with_help:
                    source = rules.help_file(name, lang)
                    assert source is not None and source.parent == games.get(name).help
                    assert source.name == f"{lang}.md", "every first-party game speaks the web's languages"
                    title = source.read_text(encoding="utf-8").partition("\n")[0].removeprefix("# ")
                    assert f'<a href="/rules/{name}">{title}</a>' in index.text
                    page = await fetch(u + f"/rules/{name}?lang={lang}")
                    assert page.status == 200 and f"<h1>{title}</h1>" in page.text, (name, lang)
                    english = (await fetch(u + f"/rules/{name}?lang=en")).text
                    # The same sections and questions as the English text, every preset named.
                    assert page.text.count("<h2") == english.count("<h2") > 8, (name, lang)
                    assert page.text.count("<h3") == english.count("<h3"), (name, lang)
                    for preset in games.get(name).game.preset_names():
                        assert f"<td>{preset}</td>" in page.text, (name, lang, preset)
                    assert "not written in your language" not in page.text
            for name, asked in QUESTIONS.items():
                english = (await fetch(u + f"/rules/{name}")).text
                qa = english[english.index('id="questions-and-answers"'):]
                for question in asked:
                    assert f">{question}</h3>" in qa, (name, question)
            missing = await fetch(u + "/rules/nope?lang=bg")
            assert missing.status == 404 and "тук няма страница с правила за &#39;nope&#39;" in missing.text
            assert (await fetch(u + "/rules/gin?lang=xx")).status == 400

    referee.run(main)


def test_a_games_rules_text_is_shown_as_text_and_a_bad_file_is_left_out(tmp_path: Path) -> None:
    page = tmp_path / "en.md"
    page.write_text("# Toy <b>3</b>\n\nIntro.\n\n## How to win\n\n<script>alert(1)</script>\n\n"
                    "<img src=x onerror=alert(2)>\n\n[a link](javascript:alert(3))\n\n## Questions\n\n### Why?\n",
                    encoding="utf-8")
    found = rules.read("toy", page)
    assert found is not None and found.title == "Toy <b>3</b>" and found.lang == "en"
    assert "<script>" not in found.html and "&lt;script&gt;alert(1)&lt;/script&gt;" in found.html
    assert "<img" not in found.html and "&lt;img src=x onerror=alert(2)&gt;" in found.html
    assert 'href="javascript:' not in found.html  # (a script link is left as text)
    assert found.sections == (("how-to-win", "How to win"), ("questions", "Questions"))
    assert '<h3 id="why">Why?</h3>' in found.html
    # The title is escaped where the templates show it (autoescaping).
    tr = i18n.lang("en")
    drawn = rules.page(tr, found)
    html = pages.TEMPLATING.get_template(drawn.template).render(
        **pages.context(pages.Frame(tr, "/rules/toy"), drawn.title, drawn.page, drawn.data), **drawn.values)
    assert "<h1>Toy &lt;b&gt;3&lt;/b&gt;</h1>" in html and "<title>Toy &lt;b&gt;3&lt;/b&gt; — Gin Arena</title>" in html
    # Without a "# title" first line, the game's name; too big, or not UTF-8: left out (logged).
    plain = tmp_path / "bg.md"
    plain.write_text("Just text.\n", encoding="utf-8")
    untitled = rules.read("toy", plain)
    assert untitled is not None and untitled.title == "toy"
    big = tmp_path / "ru.md"
    big.write_text("x" * (rules.HELP_BYTES + 1), encoding="utf-8")
    assert rules.read("toy", big) is None
    broken = tmp_path / "de.md"
    broken.write_bytes(b"# \xff\xfe\n")
    assert rules.read("toy", broken) is None
    assert rules.rules("no-such-game", "en") is None and rules.rules("gin", "xx") is None


def test_no_template_names_a_game() -> None:
    """The templates draw every game alike: a game's words come from the game (issue 30's rule,
    for the site's own templates)."""
    for template in sorted(pages.TEMPLATES.glob("*.html")):
        words = set(re.findall(r"[a-z]+", template.read_text(encoding="utf-8").lower().replace("gin arena", "")))
        assert not {"gin", "rummy"} & words, template.name


def test_a_games_rules_are_read_once_per_language() -> None:
    """A rules page is read and rendered once per game and language, not on every request (and
    only for the names of installed games: a made-up name in the address is not kept)."""
    rules.rules("gin", "bg")
    before = rules._rules.cache_info()
    for _ in range(3):
        assert rules.rules("gin", "bg") is not None
        assert rules.rules("made-up", "bg") is None
    after = rules._rules.cache_info()
    assert after.hits == before.hits + 3 and after.currsize == before.currsize


def test_the_keyboard_reaches_every_control_of_the_frame_and_focus_shows(tmp_path: Path) -> None:
    """In Chromium, from the top of the home page: Tab shows the skip link first, then goes
    through the menu, the door and the language switch to the page's "Play the computer"; each
    focused control draws its focus ring (an outline, not none)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    from tests.test_web_browser import _driver, _js
    driver = _driver(tmp_path / "profile")

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            await trio.to_thread.run_sync(driver.get, s.url + "/")
            stops: list[dict[str, Any]] = []
            for _ in range(len(MENU) + 8):
                await trio.to_thread.run_sync(lambda: ActionChains(driver).send_keys(Keys.TAB).perform())
                stops.append(await _js(driver, FOCUSED))
                if stops[-1]["id"] == "play-computer":
                    break
            hrefs = [str(stop["href"]) for stop in stops]
            assert stops[0]["class"] == "skip" and stops[0]["visible"], stops[0]
            assert hrefs == ["#main", "/", *MENU, "/signin", "?lang=bg", "?lang=ru", "/play"], hrefs
            assert stops[-1]["id"] == "play-computer"
            for stop in stops:
                assert stop["outline"] != "none" and stop["width"] >= 2, stop
            # The skip link takes the focus to the page itself.
            await trio.to_thread.run_sync(driver.get, s.url + "/rules")
            await trio.to_thread.run_sync(lambda: ActionChains(driver).send_keys(Keys.TAB).perform())
            await trio.to_thread.run_sync(lambda: ActionChains(driver).send_keys(Keys.ENTER).perform())
            assert (await _js(driver, "return location.hash")) == "#main"

    try:
        referee.run(main)
    finally:
        driver.quit()


FOCUSED = """const e = document.activeElement; const r = e.getBoundingClientRect(); const st = getComputedStyle(e);
return {id: e.id, class: e.className, href: e.getAttribute('href') || e.tagName, outline: st.outlineStyle,
        width: parseFloat(st.outlineWidth), visible: r.left >= 0 && r.top >= 0 && r.width > 0};"""
"""What the focused control is, where, and how its focus is drawn."""
