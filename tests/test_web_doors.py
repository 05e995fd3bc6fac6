"""The live web's request-level doors (issue 34), over real HTTP against ``arena serve`` in this
process with its web in a process of its own: a request from another site (another port, a
sibling subdomain) changes nothing on any route that takes one — proved by enumerating the app's
routes — and seats nobody at a table, also in Chromium; the operator's web session ends at
sign-out, after its hours, and past its count; the operator's form is rate-limited by address;
names drawn alike are one name; an account without games does not answer for its name; a
trailing-slash redirect stays on the site whatever ``Host`` says."""

from __future__ import annotations

import http.client
import http.server
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from selenium.webdriver.common.by import By
from starlette.requests import Request
from starlette.routing import Route

import referee
from arena.model.lookalike import skeleton
from arena.store import open_db
from arena.web.accounts import AccountError, Accounts
from arena.web.data import StoreSource
from arena.web.limits import WebLimits
from arena.web.server import COOKIE, READ_METHODS, Hub, Slots, Web, make_app
from tests._web import fetch, served, until
from tests.test_web_accounts import PASSWORD, Answer
from tests.test_web_browser import _driver, _js

UNSAFE = ("POST", "PUT", "PATCH", "DELETE")
"""Methods that may change something (every route is tried with each)."""


def _send(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> Answer:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/x-www-form-urlencoded",
                                                        **headers})
        r = conn.getresponse()
        return Answer(r.status, r.getheaders(), r.read().decode("utf-8", "replace"))
    finally:
        conn.close()


async def send(url: str, method: str, path: str, headers: dict[str, str] | None = None,
               form: dict[str, str] | None = None) -> Answer:
    """One request, its redirect not followed."""
    body = urllib.parse.urlencode(form or {}).encode()
    return await trio.to_thread.run_sync(_send, url, method, path, headers or {}, body)


async def sign_up(url: str, name: str) -> str:
    """A new account, signed in: its session cookie (``NAME=VALUE``)."""
    made = await send(url, "POST", "/signup", form={"name": name, "password": PASSWORD})
    assert made.status == 303, made.said
    return made.session()


def forgeries(url: str) -> list[dict[str, str]]:
    """What a browser sends with a form or a fetch from a page of another site: another port of the
    same host (same-site for SameSite cookies), a sibling subdomain, a sandboxed page (``null``)."""
    port = urllib.parse.urlsplit(url).port
    return [{"Origin": f"http://127.0.0.1:{(port or 0) + 1}", "Sec-Fetch-Site": "same-site"},
            {"Origin": "http://evil.localhost", "Sec-Fetch-Site": "same-site"},
            {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"}, {"Origin": "http://127.0.0.2:80"}]


def same_origin(url: str) -> dict[str, str]:
    """What the site's own page sends (Chromium under ``Referrer-Policy: no-referrer``)."""
    return {"Origin": "null", "Sec-Fetch-Site": "same-origin"}


def filled(path: str) -> str:
    """A route's address with each parameter given a value."""
    return re.sub(r"\{[^}]+\}", "x", path)


def test_every_route_refuses_a_request_from_another_site_for_every_unsafe_method(tmp_path: Path) -> None:
    """The structure of the doors: every route of the app, every method but a read, from another
    site, with a signed-in person's and the operator's cookies — 403 (or 405 where the route takes
    no such method), never served; the same requests from the site itself are not refused so."""
    db = tmp_path / "made.sqlite"
    open_db(db, "serve").close()
    limits = WebLimits()
    app = make_app(Web(StoreSource(db, tmp_path, "t", None), limits, "token", Hub(limits), Slots(limits)))
    routes = [r for r in app.routes if isinstance(r, Route)]
    assert len(routes) == len(app.routes) > 20
    unsafe = {(r.path, m) for r in routes for m in r.methods or () if m not in READ_METHODS}
    # (the doors and the tables: the routes a forged form would aim at are among them)
    assert {("/tables/new", "POST"), ("/tables/join", "POST"), ("/tables/j/{code}", "POST"), ("/signin", "POST"),
            ("/signout", "POST"), ("/play", "POST"), ("/play/t/{secret}/move", "POST")} <= unsafe

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            person = await sign_up(u, "victim")
            token = (s.folder / "operator-token").read_text().strip()
            signed = await send(u, "POST", "/signin", form={"token": token})
            operator = next(c.split(";")[0] for c in signed.cookies() if c.startswith(COOKIE + "="))
            cookies = {"Cookie": f"{person}; {operator}"}
            tried = 0
            for route in routes:
                for method in UNSAFE:
                    for forged in forgeries(u):
                        got = await send(u, method, filled(route.path), {**cookies, **forged},
                                         {"game": "gin", "preset": "short", "code": "x"})
                        tried += 1
                        if (route.path, method) in unsafe:
                            assert got.status == 403 and "another site" in got.text, (route.path, method, forged, got)
                        else:
                            assert got.status in (403, 405), (route.path, method, forged, got)
                        assert not got.cookies() and got.header("location") is None, (route.path, method)
            assert tried == len(routes) * len(UNSAFE) * len(forgeries(u))
            # The site's own forms pass the check (so the refusals above are the check's).
            mine = await send(u, "POST", "/tables/new", {**cookies, **same_origin(u)}, {"game": "gin",
                                                                                        "preset": "short"})
            assert mine.status == 303 and (mine.header("location") or "").startswith("/play/t/")
            for path, method in sorted(unsafe):  # (the sign-out last: it ends the sessions)
                got = await send(u, method, filled(path), {**cookies, **same_origin(u)})
                assert "another site" not in got.text, (path, method, got)

    referee.run(main)


async def _open_table(url: str, host: str) -> str:
    """A table opened by ``host`` (its own form): its code."""
    made = await send(url, "POST", "/tables/new", {"Cookie": host, **same_origin(url)},
                      {"game": "gin", "preset": "short"})
    assert made.status == 303, made.said
    page = await fetch(url + (made.header("location") or ""))
    found = re.search(r'data-join="/tables/j/([A-Z2-7]{13})"', page.text)
    assert found is not None
    return found.group(1)


async def _sitting(url: str, code: str, viewer: str) -> str:
    """Who the table's invitation says is sitting."""
    page = await fetch(url + f"/tables/j/{code}", headers={"Cookie": viewer})
    assert page.status == 200, page.text
    found = re.search(r"sitting: ([^.<]*)", page.text)
    assert found is not None, page.text
    return found.group(1)


def test_another_sites_form_neither_seats_a_signed_in_person_nor_opens_a_table_in_their_name(tmp_path: Path
                                                                                              ) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            host, guest = await sign_up(u, "host"), await sign_up(u, "guest")
            code = await _open_table(u, host)
            for forged in forgeries(u):
                for path, form in ((f"/tables/j/{code}", {}), ("/tables/join", {"code": code}),
                                   ("/tables/new", {"game": "gin", "preset": "short"})):
                    got = await send(u, "POST", path, {"Cookie": guest, **forged}, form)
                    assert got.status == 403 and "another site" in got.text, (path, forged, got)
                    assert got.header("location") is None
            assert await _sitting(u, code, guest) == "host"
            lobby = (await fetch(u + "/lobby.json")).json()
            assert not [t for t in lobby["open"] if "guest" in str(t)]
            # The guest's own click seats them.
            sat = await send(u, "POST", f"/tables/j/{code}", {"Cookie": guest, **same_origin(u)})
            assert sat.status == 303 and await _sitting(u, code, guest) == "host, guest"

    referee.run(main)


class _Attacker(http.server.BaseHTTPRequestHandler):
    """Another site's page: a form that posts to the web's join link (``page``)."""

    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def attacker_site(page: str) -> Iterator[str]:
    """A page served on another port of 127.0.0.1 (same-site, another origin): its address."""
    handler = type("Page", (_Attacker,), {"page": page.encode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_in_chromium_a_page_on_another_port_does_not_seat_a_signed_in_person(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile")

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            host = await sign_up(u, "host")
            code = await _open_table(u, host)
            # The guest signs in in Chromium, through the site's own form.
            await trio.to_thread.run_sync(driver.get, u + "/signup")
            for field, text in (("name", "guest"), ("password", PASSWORD)):
                box = await trio.to_thread.run_sync(driver.find_element, By.CSS_SELECTOR,
                                                    f"#signup input[name={field}]")
                await trio.to_thread.run_sync(box.send_keys, text)
            await trio.to_thread.run_sync(lambda: driver.find_element(By.CSS_SELECTOR, "#signup button").click())

            async def signed_in() -> bool:
                return "signed in as guest" in str(await _js(driver, "return document.body.textContent"))
            await until(signed_in, "the guest signed in")
            guest = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
            form = (f'<form method="post" action="{u}/tables/j/{code}" id="forged">'
                    '<input type="hidden" name="x" value="1"><button>win a prize</button></form>')
            with attacker_site(f"<!DOCTYPE html><html><body>{form}</body></html>") as evil:
                await trio.to_thread.run_sync(driver.get, evil)
                await trio.to_thread.run_sync(lambda: driver.find_element(By.CSS_SELECTOR, "#forged button").click())

                async def answered() -> bool:
                    return bool(await _js(driver, f"return location.href.startsWith({u!r})"))
                await until(answered, "the forged form's answer")
                text = str(await _js(driver, "return document.body.textContent"))
                assert "another site" in text and "/play/t/" not in str(await _js(driver, "return location.href"))
            assert await _sitting(u, code, guest) == "host"

    try:
        referee.run(main)
    finally:
        driver.quit()


def _operator(page: str) -> bool:
    """Whether a page was drawn for the operator (a sign-out door and no sign-in link, nobody else signed in)."""
    return 'id="signin-link"' not in page and 'action="/signout"' in page


async def operator_sign_in(url: str, token: str) -> str:
    """The operator's form: the cookie it sets (``NAME=VALUE``)."""
    signed = await send(url, "POST", "/signin", form={"token": token})
    assert signed.status == 303
    (cookie,) = [c for c in signed.cookies() if c.startswith(COOKIE + "=")]
    assert token not in cookie
    return cookie.split(";")[0]


async def is_operator(url: str, cookie: str) -> bool:
    """Whether the front page is drawn for the operator with ``cookie``."""
    return _operator((await fetch(url + "/", headers={"Cookie": cookie})).text)


def test_sign_out_ends_the_operators_web_session(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            token = (s.folder / "operator-token").read_text().strip()
            first = await operator_sign_in(u, token)
            assert await is_operator(u, first)
            copied = first  # (a copy of the cookie, taken before sign-out: say, from a shared machine)
            out = await send(u, "POST", "/signout", {"Cookie": first})
            assert out.status == 303 and any(c.startswith(COOKIE + '=""') for c in out.cookies())
            assert not await is_operator(u, copied)
            again = await operator_sign_in(u, token)
            assert again != first and await is_operator(u, again) and not await is_operator(u, copied)

    referee.run(main)


def test_the_operators_web_sessions_are_bounded_the_oldest_ending_first(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv", WebLimits(operator_sessions=2)) as s:
            u = s.url
            token = (s.folder / "operator-token").read_text().strip()
            a, b = await operator_sign_in(u, token), await operator_sign_in(u, token)
            assert await is_operator(u, a) and await is_operator(u, b)
            c = await operator_sign_in(u, token)
            assert not await is_operator(u, a) and await is_operator(u, b) and await is_operator(u, c)

    referee.run(main)


def test_an_operators_web_session_ends_after_its_hours(tmp_path: Path) -> None:
    db = tmp_path / "made.sqlite"
    open_db(db, "serve").close()
    limits = WebLimits(operator_session_hours=2.0)
    now = [1000.0]
    web = Web(StoreSource(db, tmp_path, "t", None), limits, "token", Hub(limits), Slots(limits), clock=lambda: now[0])

    def asking(cookie: str) -> Request:
        return Request({"type": "http", "method": "GET", "path": "/", "headers": [(b"cookie", cookie.encode())]})

    cookie = f"{COOKIE}={web.operator_session()}"
    assert web.operator(asking(cookie)) and not web.operator(asking(f"{COOKIE}=made-up"))
    now[0] += 2 * 3600 - 1
    assert web.operator(asking(cookie))
    now[0] += 1
    assert not web.operator(asking(cookie))
    web.operator_session()  # (a new sign-in forgets the sessions that ended)
    assert len(web.operator_sessions) == 1


def test_the_operators_form_is_limited_per_address(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:  # (operator_tries_per_minute: 10)
            u = s.url
            token = (s.folder / "operator-token").read_text().strip()
            for _ in range(10):
                assert (await send(u, "POST", "/signin", form={"token": "a guess"})).status == 403
            over = await send(u, "POST", "/signin", form={"token": token})  # even the right one
            assert over.status == 429 and "operator_tries_per_minute" in over.said and not over.cookies()
            assert 1 <= int(over.header("retry-after") or "0") <= 60
            other = await trio.to_thread.run_sync(_from, u, "127.0.0.2", token)
            assert other.status == 303

    referee.run(main)


def _from(url: str, source: str, token: str) -> Answer:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60, source_address=(source, 0))
    try:
        conn.request("POST", "/signin", body=urllib.parse.urlencode({"token": token}),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        r = conn.getresponse()
        return Answer(r.status, r.getheaders(), r.read().decode())
    finally:
        conn.close()


LOOKALIKES = ("\u0410lice Martin", "\u0391lice Martin", "\uff21\uff4c\uff49\uff43\uff45 Martin",
              "\U0001d400lice Martin", "Alice  Martin", "Alic\u0435 Martin", "ALICE MARTIN", "Ali\u0441e M\u0430rtin")
"""Names drawn like ``Alice Martin``: a Cyrillic А, a Greek Α, fullwidth, mathematical bold, two
spaces, a Cyrillic е, capitals, Cyrillic с and а."""


def test_a_name_drawn_like_one_that_is_taken_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            await sign_up(u, "Alice Martin")
            for name in LOOKALIKES:
                again = await send(u, "POST", "/signup", form={"name": name, "password": PASSWORD})
                assert again.status == 409 and not again.cookies(), (name, again.status)
                assert "is taken" in again.said or "looks like 'Alice Martin'" in again.said, again.said
            assert (await send(u, "POST", "/signup", form={"name": "Alice Marten", "password": PASSWORD})
                    ).status == 303
            with sqlite3.connect(s.folder / "serve.sqlite") as db:
                assert db.execute("SELECT COUNT(*) FROM people").fetchone()[0] == 2

    referee.run(main)


def test_names_stored_before_the_skeleton_keep_working(tmp_path: Path) -> None:
    """An older store may hold two names drawn alike: both still sign in (the skeletons are
    filled when the accounts open), and a third like them is refused."""
    db = tmp_path / "serve.sqlite"
    conn = open_db(db, "serve", any_thread=True)
    accounts = Accounts(conn, WebLimits())

    async def main() -> None:
        for name in ("Bob", "B\u043eb"):  # (the second with a Cyrillic о: made as an older arena would)
            conn.execute("INSERT INTO people (name, name_key, password_hash, created_at) VALUES (?, ?, ?, 0)",
                         (name, name.casefold(), accounts._hasher.hash(PASSWORD)))
        conn.commit()
        again = Accounts(conn, WebLimits())
        skeletons = {r[0] for r in conn.execute("SELECT name_skeleton FROM people")}
        assert skeletons == {"bob"}
        for name in ("Bob", "B\u043eb"):
            person, _ = await again.sign_in(name, PASSWORD, "127.0.0.1")
            assert person.name == name
        for name in ("BOB", "\u0412ob"):
            with pytest.raises(AccountError) as refused:
                await again.sign_up(name, PASSWORD, "127.0.0.1")
            assert refused.value.status == 409, name
        again.close()

    try:
        trio.run(main)
    finally:
        accounts.close()


def test_an_account_without_games_does_not_answer_for_its_name(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            zed = await sign_up(u, "zed")
            nobody = await fetch(u + "/api/people/yan")
            quiet = await fetch(u + "/api/people/zed")
            assert nobody.status == quiet.status == 404
            assert quiet.text.replace("zed", "yan") == nobody.text
            assert (await fetch(u + "/people/zed")).status == (await fetch(u + "/people/yan")).status == 404
            assert "zed" not in (await fetch(u + "/api/people")).text and "zed" not in (await fetch(u + "/people")).text
            own = await fetch(u + "/api/people/zed", headers={"Cookie": zed})  # their own page, signed in
            assert own.status == 200 and own.json()["games"] == []

    referee.run(main)


def test_a_trailing_slash_redirect_stays_on_the_site_whatever_host_says(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            for path, to in (("/matches/", "/matches"), ("/signin/?lang=ru", "/signin?lang=ru"),
                             ("//evil.example/", None), ("//bots/x/", "/bots/x"),
                             ("/api/standings//", "/api/standings")):
                got = await send(u, "GET", path, {"Host": "evil.example"})
                if to is None:
                    assert got.status == 404 and got.header("location") is None, (path, got)
                    continue
                assert got.status == 307 and got.header("location") == to, (path, got.headers)
            followed = await fetch(u + "/matches/")
            assert followed.status == 200 and "Matches" in followed.text

    referee.run(main)


def test_the_skeleton_merges_what_is_drawn_alike_and_keeps_the_rest_apart() -> None:
    base = skeleton("Alice Martin")
    assert all(skeleton(name) == base for name in LOOKALIKES)
    # Case is kept through the table: a Greek capital Eta is an H, its small letter an n.
    assert skeleton("\u0397ELLO") == skeleton("hello") and skeleton("\u03b7ello") == skeleton("nello")
    # Accents, other letters and Latin look-alikes the table leaves out stay apart.
    for other in ("Alice Marten", "Àlice Martin", "AliceMartin", "AIice Martin", "A1ice Martin"):
        assert skeleton(other) != base, other
    assert skeleton("Ame\u0301lie") == skeleton("AMÉLIE") != skeleton("Amelie")
