"""People's accounts on the live web, over real HTTP against ``arena serve`` in this process (the
real referee, store, Hypercorn and Starlette): sign-up (names unique whatever their case and
Unicode form), sign-in, a wrong password and an unknown name answered alike, the sign-in limit
(429 with ``Retry-After``, per address: a stranger's tries never lock a person out), the session
cookie's flags, a sign-out that ends the session in the store, a cross-site form refused, no
password nor session token in the store's bytes, people's games rated apart from the bots'
ladder, and a schema 2 store opened by this arena (upgraded, its games kept)."""

from __future__ import annotations

import html
import http.client
import sqlite3
import subprocess
import sys
import urllib.parse
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import trio
from selenium.webdriver.common.by import By
from starlette.requests import Request

import referee
from arena.model.records import from_report
from arena.store import SCHEMA_VERSION, StoreError, open_db, play_columns, record_game
from arena.web.accounts import SESSION_COOKIE, WRONG, AccountError, Accounts, Person
from arena.web.data import StoreSource
from arena.web.hashing import Hashers
from arena.web.limits import WebLimits
from arena.web.server import serve_web
from tests._web import SHORT, fetch, play, served, until
from tests.test_web import _web_address
from tests.test_web_browser import _driver, _js

PASSWORD = "correct horse battery"
"""A password that is allowed."""


@dataclass(frozen=True)
class Answer:
    """An HTTP response, its redirect not followed."""

    status: int
    headers: list[tuple[str, str]]
    text: str

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name), None)

    @property
    def said(self) -> str:
        """The text, its HTML escapes undone."""
        return html.unescape(self.text)

    def cookies(self) -> list[str]:
        return [v for k, v in self.headers if k.lower() == "set-cookie"]

    def session(self) -> str:
        """The session cookie set (``NAME=VALUE``)."""
        (found,) = [c.split(";")[0] for c in self.cookies() if c.startswith(SESSION_COOKIE + "=")]
        return found


def _post(url: str, path: str, form: dict[str, str], headers: dict[str, str], source: str) -> Answer:
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60, source_address=(source, 0))
    try:
        conn.request("POST", path, body=urllib.parse.urlencode(form),
                     headers={"Content-Type": "application/x-www-form-urlencoded", **headers})
        r = conn.getresponse()
        return Answer(r.status, r.getheaders(), r.read().decode())
    finally:
        conn.close()


async def post(url: str, path: str, form: dict[str, str], cookie: str = "", *, source: str = "127.0.0.1",
               headers: dict[str, str] | None = None) -> Answer:
    """POST a form from the address ``source`` (another loopback address: another client)."""
    extra = {**({"Cookie": cookie} if cookie else {}), **(headers or {})}
    return await trio.to_thread.run_sync(_post, url, path, form, extra, source)


async def who(url: str, cookie: str) -> str | None:
    """Who the front page says is signed in with ``cookie`` (``None``: nobody)."""
    page = (await fetch(url + "/", headers={"Cookie": cookie})).text
    start = page.find('id="who"')
    if start < 0:
        return None
    return page[page.index('">', page.index("<a ", start)) + 2:page.index("</a>", start)]


def test_sign_up_sign_in_sign_out_and_what_the_store_keeps(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            made = await post(u, "/signup", {"name": "Amélie", "password": PASSWORD})
            assert made.status == 303 and made.header("location") == "/"
            first = made.session()
            assert await who(u, first) == "Amélie"
            (flags,) = [c for c in made.cookies() if c.startswith(SESSION_COOKIE)]
            parts = {p.strip().split("=")[0].lower() for p in flags.split(";")}
            assert {"httponly", "path", "samesite", "max-age"} <= parts
            assert "samesite=lax" in flags.lower() and "secure" not in parts  # plain http, no TLS setting
            assert f"Max-Age={30 * 86400}" in flags

            # The same name whatever its case or Unicode form (a decomposed é) is taken.
            for same in ("amélie", "AME\u0301LIE", "  amélie "):
                again = await post(u, "/signup", {"name": same, "password": PASSWORD})
                assert again.status == 409 and "is taken" in again.text, same
            for bad, why in (("ab", "3 to 32 characters"), ("x" * 33, "3 to 32 characters"),
                             ("a<b>c", "not '<' '>'"), ("-abc", "starts and ends")):
                refused = await post(u, "/signup", {"name": bad, "password": PASSWORD})
                assert refused.status == 400 and why in refused.said and not refused.cookies(), bad
            for short in ("1234567", "x" * 257):
                refused = await post(u, "/signup", {"name": "bob", "password": short})
                assert refused.status == 400 and "8 to 256 characters" in refused.said
            big = await post(u, "/signup", {"name": "bob", "password": "x" * 5000})
            assert big.status == 413

            # Sign in (any case); a wrong password and an unknown name get the same answer.
            signed = await post(u, "/signin", {"name": "AMÉLIE", "password": PASSWORD})
            assert signed.status == 303
            second = signed.session()
            assert second != first and await who(u, second) == "Amélie"
            wrong = await post(u, "/signin", {"name": "amélie", "password": PASSWORD + "!"})
            unknown = await post(u, "/signin", {"name": "nobody-here", "password": PASSWORD})
            assert wrong.status == unknown.status == 403 and not wrong.cookies() and not unknown.cookies()
            assert WRONG in wrong.text and WRONG in unknown.text
            assert wrong.text.replace("amélie", "") == unknown.text.replace("nobody-here", "")

            # A form from another site is refused (the CSRF defence), whatever it carries.
            for cross in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                          {"Origin": "null", "Sec-Fetch-Site": "same-site"}, {"Origin": "null"}):
                forged = await post(u, "/signin", {"name": "amélie", "password": PASSWORD}, headers=cross)
                assert forged.status == 403 and "another site" in forged.text and not forged.cookies()
            same_site = await post(u, "/signin", {"name": "amélie", "password": PASSWORD},
                                   headers={"Origin": u, "Sec-Fetch-Site": "same-origin"})
            assert same_site.status == 303
            await post(u, "/signout", {}, same_site.session())

            # Sign-out ends the session in the store: the old cookie no longer signs in.
            out = await post(u, "/signout", {}, second)
            assert out.status == 303 and any(c.startswith(SESSION_COOKIE + '=""') for c in out.cookies())
            assert await who(u, second) is None
            assert await who(u, first) == "Amélie"  # another session of the same person goes on

            stored = b"".join(p.read_bytes() for p in s.folder.iterdir() if p.name.startswith("serve.sqlite"))
            assert "Amélie".encode() in stored  # the file is readable as it is: the checks below could fail
            assert PASSWORD.encode() not in stored
            for cookie in (first, second, same_site.session()):
                token = cookie.split("=", 1)[1]
                assert token.encode() not in stored
            with sqlite3.connect(s.folder / "serve.sqlite") as db:
                (hashed,) = db.execute("SELECT password_hash FROM people").fetchone()
                sessions = db.execute("SELECT COUNT(*) FROM person_sessions").fetchone()[0]
            assert hashed.startswith("$argon2id$") and sessions == 1  # first's (second's and same_site's: ended)

    referee.run(main)


def test_sign_in_attempts_are_limited_per_address_not_per_name(tmp_path: Path) -> None:
    limits = WebLimits(signin_tries_per_minute=3, signups_per_hour=2)

    async def main() -> None:
        async with served(tmp_path, limits) as s:
            u = s.url
            for name in ("carol", "dave"):
                assert (await post(u, "/signup", {"name": name, "password": PASSWORD})).status == 303
            third = await post(u, "/signup", {"name": "eve", "password": PASSWORD})
            assert third.status == 429 and "signups_per_hour" in third.text and int(third.header("retry-after") or 0)
            for _ in range(3):
                assert (await post(u, "/signin", {"name": "carol", "password": "wrong password"})).status == 403
            over = await post(u, "/signin", {"name": "carol", "password": PASSWORD})  # even the right one
            assert over.status == 429 and not over.cookies()
            assert 1 <= int(over.header("retry-after") or "0") <= 60
            assert "signin_tries_per_minute" in over.text
            # This address is over its limit for any name …
            assert (await post(u, "/signin", {"name": "dave", "password": PASSWORD})).status == 429
            # … but not carol's name: the tries lock their address out, never the person whose
            # name they tried (carol signs in from her own address), nor anyone else.
            other = await post(u, "/signin", {"name": "Carol", "password": PASSWORD}, source="127.0.0.2")
            assert other.status == 303 and other.session()
            assert (await post(u, "/signin", {"name": "dave", "password": PASSWORD}, source="127.0.0.2")).status == 303

    referee.run(main)


def test_behind_proxies_the_limits_count_the_address_the_proxy_was_given(tmp_path: Path) -> None:
    """``--web-proxy-hops 1``: every request comes from the proxy's address, so the sign-in limit
    counts the address it puts last in ``X-Forwarded-For``; what a client wrote before it counts
    for nothing, and without the setting the header is ignored altogether."""
    limits = WebLimits(signin_tries_per_minute=2)

    def via(client: str, forged: str = "") -> dict[str, str]:
        return {"X-Forwarded-For": f"{forged}, {client}" if forged else client, "X-Forwarded-Proto": "https"}

    async def main() -> None:
        async with served(tmp_path / "proxied", limits, proxy_hops=1) as s:
            u = s.url
            assert (await post(u, "/signup", {"name": "carol", "password": PASSWORD})).status == 303
            assert (await post(u, "/signup", {"name": "dave", "password": PASSWORD})).status == 303
            for forged in ("10.0.0.1", "10.0.0.2"):  # a new forged address each time changes nothing
                wrong = await post(u, "/signin", {"name": "dave", "password": "wrong password"},
                                   headers=via("203.0.113.5", forged))
                assert wrong.status == 403
            over = await post(u, "/signin", {"name": "carol", "password": PASSWORD}, headers=via("203.0.113.5"))
            assert over.status == 429 and "signin_tries_per_minute" in over.text
            # Another person behind the same proxy is not held back by that one …
            ok = await post(u, "/signin", {"name": "carol", "password": PASSWORD}, headers=via("203.0.113.6"))
            assert ok.status == 303
            # … and the proxy's https makes the session cookie Secure.
            (cookie,) = [c for c in ok.cookies() if c.startswith(SESSION_COOKIE + "=")]
            assert "secure" in cookie.lower() and "httponly" in cookie.lower()
        async with served(tmp_path / "direct", limits) as s:
            u = s.url
            assert (await post(u, "/signup", {"name": "carol", "password": PASSWORD})).status == 303
            for client in ("203.0.113.7", "203.0.113.8"):
                assert (await post(u, "/signin", {"name": "dave", "password": "wrong password"},
                                   headers=via(client))).status == 403
            # Without --web-proxy-hops a client's X-Forwarded-For does not escape the limit.
            over = await post(u, "/signin", {"name": "carol", "password": PASSWORD}, headers=via("203.0.113.9"))
            assert over.status == 429

    referee.run(main)


def test_session_cookies_are_secure_over_https_or_behind_tls(tmp_path: Path) -> None:
    def request(scheme: str) -> Request:
        return Request({"type": "http", "scheme": scheme, "method": "GET", "path": "/", "headers": [],
                        "server": ("arena.example", 443)})

    plain = Accounts.open(tmp_path / "a.sqlite", WebLimits())
    behind = Accounts.open(tmp_path / "b.sqlite", WebLimits(), behind_tls=True)
    try:
        assert plain.secure(request("https")) and not plain.secure(request("http"))
        assert behind.secure(request("http"))
    finally:
        plain.close()
        behind.close()


def test_a_session_ends_after_person_session_days(tmp_path: Path) -> None:
    now = [1000.0]
    accounts = Accounts(open_db(tmp_path / "serve.sqlite", "serve", any_thread=True),
                        WebLimits(person_session_days=2), clock=lambda: now[0])

    def request(token: str) -> Request:
        return Request({"type": "http", "scheme": "http", "method": "GET", "path": "/",
                        "headers": [(b"cookie", f"{SESSION_COOKIE}={token}".encode())]})

    try:
        person, token = trio.run(accounts.sign_up, "ivan", PASSWORD, "a")
        assert accounts.signed_in(request(token)) == person
        assert accounts.signed_in(request(token + "x")) is None
        now[0] += 2 * 86400 - 1
        assert accounts.signed_in(request(token)) == person
        now[0] += 1
        assert accounts.signed_in(request(token)) is None
    finally:
        accounts.close()


def test_arena_serve_web_keeps_accounts_and_behind_tls_sets_secure_cookies(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(tmp_path), "--web",
         "127.0.0.1:0", "--web-behind-tls"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = _web_address(proc)

        async def main() -> None:
            made = await post(url, "/signup", {"name": "judy", "password": PASSWORD})
            assert made.status == 303
            (flags,) = [c for c in made.cookies() if c.startswith(SESSION_COOKIE)]
            assert "secure" in {p.strip().lower() for p in flags.split(";")}
            # The proxy serves the site over https: a browser's own form says so in its Origin
            # (the request reaches the web in clear); another site's still does not pass.
            here = "https://" + url.split("://", 1)[1]
            own = await post(url, "/signin", {"name": "judy", "password": PASSWORD},
                             headers={"Origin": here, "Sec-Fetch-Site": "same-origin"})
            assert own.status == 303, own.said
            other = await post(url, "/signin", {"name": "judy", "password": PASSWORD},
                               headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
            assert other.status == 403 and "another site" in other.text
        trio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with sqlite3.connect(tmp_path / "serve.sqlite") as db:
        assert [r[0] for r in db.execute("SELECT name FROM people")] == ["judy"]


def test_people_games_are_rated_apart_from_the_bots_ladder(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            await play(s, ("plain", "other"), "m-1")
            await until(lambda: _standings_count(u, 2), "the bots' match in the standings")
            bots_before = (await fetch(u + "/api/standings")).json()
            assert (await post(u, "/signup", {"name": "erin", "password": PASSWORD})).status == 303
            # The tables record through the web's accounts; a second Accounts on the same store
            # writes the same rows (the people's ratings follow the store).
            accounts = await trio.to_thread.run_sync(Accounts.open, s.folder / "serve.sqlite", WebLimits())
            erin = await trio.to_thread.run_sync(accounts.person, "Erin")
            assert erin == Person(1, "erin")

            # Two people's tables (played for real; the referee's reports): erin against a sample bot.
            for n in (1, 2):
                report = await play(s, ("plain", "other"), f"table-{n}")
                accounts.record_game(match_id=report.match_id, game="gin", preset="short",
                                     seats=[erin, "random"], report=report)
            await trio.to_thread.run_sync(accounts.flush)
            await trio.to_thread.run_sync(accounts.close)

            people = (await fetch(u + "/api/people")).json()["people"]
            assert [p["name"] for p in people] == ["erin"] and people[0]["games"] == 2
            person = (await fetch(u + "/api/people/ERIN")).json()
            assert [g["match_id"] for g in person["games"]] == ["table-2", "table-1"]
            assert person["games"][0]["seats"][1] == {"name": "random", "person": False,
                                                       "place": person["games"][0]["seats"][1]["place"],
                                                       "points": person["games"][0]["seats"][1]["points"]}
            assert person["games"][0]["replay"] == "/matches/table-2"
            replay = await fetch(u + "/matches/table-2")
            assert replay.status == 200 and "table-2" in replay.text
            page = (await fetch(u + "/people/erin")).text
            assert 'href="/matches/table-1"' in page and "people's games" in html.unescape(page)
            assert "erin" in (await fetch(u + "/people")).text

            # The bots' ladder did not move, and holds neither erin nor the tables.
            await trio.sleep(2 * WebLimits().store_check_s)
            assert (await fetch(u + "/api/standings")).json() == bots_before
            with sqlite3.connect(s.folder / "serve.sqlite") as db:
                assert db.execute("SELECT COUNT(*) FROM games WHERE match_id LIKE 'table-%'").fetchone()[0] == 0
                assert db.execute("SELECT COUNT(*) FROM people_games").fetchone()[0] == 2
            assert (await fetch(u + "/api/people/nobody")).status == 404

        # Opened again (a restart): the people's ratings are read back from the store.
        again = Accounts.open(tmp_path / "serve.sqlite", WebLimits())
        try:
            (row,) = again.standings()
            assert row.name == "erin" and row.games == 2 and row.rating == people[0]["rating"]
        finally:
            again.close()

    referee.run(main)


async def _standings_count(url: str, n: int) -> bool:
    return len((await fetch(url + "/api/standings")).json()["standings"]) == n


def test_a_web_without_a_writable_store_says_why_nobody_signs_up(tmp_path: Path) -> None:
    db = tmp_path / "run.sqlite"
    open_db(db, "run").close()

    async def main() -> None:
        source = StoreSource(db, tmp_path, "a tournament")
        async with trio.open_nursery() as nursery:
            u = await nursery.start(lambda task_status: serve_web("127.0.0.1:0", source, limits=WebLimits(),
                                                                  operator_token=None, task_status=task_status))
            for path in ("/signup", "/people", "/api/people"):
                got = await fetch(u + path)
                assert got.status == 503 and "no store it may write" in got.text, path
            refused = await post(u, "/signup", {"name": "frank", "password": PASSWORD})
            assert refused.status == 503 and "no store it may write" in refused.text and not refused.cookies()
            nursery.cancel_scope.cancel()

    referee.run(main)


def test_a_schema_2_store_is_upgraded_keeping_its_games(tmp_path: Path) -> None:
    path = tmp_path / "serve.sqlite"
    conn = open_db(path, "serve")
    report = referee.MatchReport(
        match_id="m-old", players=("a", "b"), winner=0, termination="normal", faulting_seat=None, detail="",
        outcome=None, substituted_seats=(), seed=b"\0" * 32, seed_commitment=b"\0" * 32, replay_path="",
        replay_hash="", decisions=10, think_ms=(1, 2), places=(1, 2), points=(30, 5))
    record_game(conn, {"finished_at": 1.0, **play_columns("gin", SHORT, referee.TimeControl(per_move_ms=1000))},
                from_report(report, 1.0))
    # What gin-arena's schema 2 held: no people's tables, version 2.
    conn.executescript("DROP TABLE people_seats; DROP TABLE people_games; DROP TABLE person_sessions; "
                       "DROP TABLE people; UPDATE meta SET value = '2' WHERE key = 'schema_version';")
    conn.close()

    accounts = Accounts.open(path, WebLimits())
    try:
        assert accounts.standings() == []
    finally:
        accounts.close()
    conn = open_db(path, "serve")
    try:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert version == str(SCHEMA_VERSION) == "3"
        assert [r[0] for r in conn.execute("SELECT match_id FROM games")] == ["m-old"]
        assert conn.execute("SELECT COUNT(*) FROM people").fetchone()[0] == 0
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    finally:
        conn.close()
    try:
        open_db(path, "serve").close()
    except StoreError as e:
        assert "schema version '4'" in str(e)
    else:
        raise AssertionError("a store of a newer schema was opened")


def test_person_is_a_frozen_value() -> None:
    alice = Person(1, "alice")
    assert alice == Person(1, "alice") and hash(alice) == hash(Person(1, "alice"))


def test_an_unknown_name_costs_an_argon2_verification_like_a_wrong_password(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    verified: list[str] = []
    real = Hashers.verify

    def counting(self: Hashers, hashed: str, password: str) -> Literal[True]:
        verified.append(hashed)
        return real(self, hashed, password)

    monkeypatch.setattr(Hashers, "verify", counting)  # (the accounts' hasher: argon2 in its worker processes)
    accounts = Accounts.open(tmp_path / "serve.sqlite", WebLimits())

    async def main() -> None:
        await accounts.sign_up("grace", PASSWORD, "a")
        for name in ("grace", "nobody"):
            try:
                await accounts.sign_in(name, "not the password", "a")
            except AccountError as e:
                assert (e.status, e.message) == (403, WRONG)
            else:
                raise AssertionError(f"{name} signed in with a wrong password")

    try:
        trio.run(main)
    finally:
        accounts.close()
    real_hash, dummy = verified
    assert real_hash.startswith("$argon2id$") and dummy.startswith("$argon2id$") and real_hash != dummy
    # The dummy hash costs what a person's does (the same parameters).
    assert real_hash.split("$")[3] == dummy.split("$")[3]


def test_in_a_browser_sign_up_sign_out_sign_in_and_a_wrong_password(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile")

    def fill(form: str, name: str, password: str) -> None:
        for field, text in (("name", name), ("password", password)):
            box = driver.find_element(By.CSS_SELECTOR, f"#{form} input[name={field}]")
            box.clear()
            box.send_keys(text)
        driver.find_element(By.CSS_SELECTOR, f"#{form} button").click()

    async def shown(css: str) -> str:
        return str(await _js(driver, f"const e = document.querySelector({css!r}); return e ? e.textContent : ''"))

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            await trio.to_thread.run_sync(driver.get, s.url + "/")  # (the menu's door, then the form's link)
            await trio.to_thread.run_sync(lambda: driver.find_element(By.ID, "signin-link").click())
            await until(lambda: _on(driver, "signin"), "the sign-in page")
            await trio.to_thread.run_sync(lambda: driver.find_element(By.LINK_TEXT, "Sign up").click())
            await until(lambda: _on(driver, "signup"), "the sign-up page")
            await trio.to_thread.run_sync(fill, "signup", "Heidi Ø", PASSWORD)
            await until(lambda: _has(shown("#who"), "signed in as Heidi Ø"), "Heidi signed in after signing up")
            assert await _js(driver, "return document.cookie") == ""  # HttpOnly: no script reads it

            await _js(driver, "document.querySelector('.door form button').click()")
            await until(lambda: _has(shown("#signin-link"), "sign in"), "the sign-in link after signing out")
            assert await shown("#who") == ""

            await trio.to_thread.run_sync(lambda: driver.find_element(By.ID, "signin-link").click())
            await until(lambda: _on(driver, "signin"), "the sign-in page")
            await trio.to_thread.run_sync(fill, "person-signin", "heidi ø", "not my password")
            await until(lambda: _has(shown("#problem"), WRONG), "the wrong password's message")
            assert await shown("#who") == ""
            await trio.to_thread.run_sync(fill, "person-signin", "HEIDI Ø", PASSWORD)
            await until(lambda: _has(shown("#who"), "signed in as Heidi Ø"), "Heidi signed in")
            assert await _js(driver, "return document.body.dataset.page") == "front"

    try:
        referee.run(main)
    finally:
        driver.quit()


async def _on(driver: object, page: str) -> bool:
    return bool(await _js(driver, f"return document.body && document.body.dataset.page === {page!r}"))


async def _has(text: Awaitable[str], wanted: str) -> bool:
    return wanted in await text
