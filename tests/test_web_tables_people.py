"""Tables with friends (issue 21): people signed in through the accounts' pages open a table, get
its code and link, sit down by code or link, the host fills seats with sample bots and starts; a
person whose page is gone past ``person_grace_s`` is played for by the computer to the end of the
game. Over HTTP: wrong codes are bounded (429), a seat's link is that seat's only, the host's
doors are the host's, ``computer_players`` answers 503. In real Chromium: two people play a whole
Gin game through a table's code, every page's payloads checked against the replay; one person's
page closes and the computer finishes the game, the other's page says so."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
import trio
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

import referee
import referee.lowlevel
from arena.web.limits import WebLimits
from arena.web.tables import TIME_RAN_OUT, Room, Seat, TableError
from tests._wait import HANG_S
from tests._web import Reply, fetch, served, until
from tests.test_web_browser import _driver, _js
from tests.test_web_rummy_table import END as RUMMY_END
from tests.test_web_rummy_table import STATE as RUMMY_STATE
from tests.test_web_rummy_table import play_turn as rummy_turn
from tests.test_web_tables import ARTIFACTS, STATE, _click, _pick, _Reader, _true, check_payloads

T = TypeVar("T")
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}
PASSWORD = "correct horse battery"
BOT_IN_SEAT_1 = json.dumps({"seat": "1", "bot": "random"}).encode()
"""The host's fill: the random sample bot in seat 1."""
RUMMY_SEATS = 4
"""The Rummy table's seats: two people and two sample bots."""


def _post_raw(url: str, body: bytes, headers: dict[str, str]) -> Reply:
    """A POST that does not follow its redirect (the answer's ``Location`` and cookies kept)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=HANG_S)
    try:
        conn.request("POST", parts.path, body=body, headers=headers)
        r = conn.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


async def post(url: str, fields: dict[str, str], cookie: str = "") -> Reply:
    headers = {**FORM, **({"Cookie": cookie} if cookie else {})}
    return await trio.to_thread.run_sync(_post_raw, url, urllib.parse.urlencode(fields).encode(), headers)


async def sign_up(url: str, name: str) -> str:
    """A new account signed in: its session cookie (``NAME=VALUE``)."""
    r = await post(url + "/signup", {"name": name, "password": PASSWORD})
    assert r.status == 303, r.text
    return r.headers["set-cookie"].split(";")[0]


async def seat_of(r: Reply) -> str:
    assert r.status == 303, (r.status, r.text)
    location = r.headers["location"]
    assert re.fullmatch(r"/play/t/[A-Za-z0-9_-]{32}", location), location
    return location


def test_codes_links_host_doors_and_the_computer_bound_over_http(tmp_path: Path) -> None:
    async def main() -> None:
        limits = WebLimits(computer_players=3, table_code_tries_per_minute=10)
        async with served(tmp_path / "srv", limits) as s:
            alice, bob, carol = [await sign_up(s.url, n) for n in ("alice", "bob", "carol")]
            nobody = await post(s.url + "/tables/new", {"game": "gin", "preset": "short"})
            assert nobody.status == 401 and "signed in" in nobody.text
            bad = await post(s.url + "/tables/new", {"game": "gin", "preset": "short", "seats": "3"}, alice)
            assert bad.status == 400 and "seats=3: gin is played by 2" in bad.text, bad.text
            slow = await post(s.url + "/tables/new", {"game": "gin", "preset": "short", "move_s": "9999"}, alice)
            assert slow.status == 400 and "limit table_move_s" in slow.text
            host = await seat_of(await post(s.url + "/tables/new", {"game": "gin", "preset": "short",
                                                                    "target": "30"}, alice))
            page = await fetch(s.url + host)
            assert page.headers["cache-control"] == "no-store" and page.headers["referrer-policy"] == "no-referrer"
            found = re.search(r'data-join="/tables/j/([A-Z2-7]{13})"', page.text)
            assert found is not None, page.text
            code = found.group(1)
            # Bob sits down through the link; his seat's link is his own and nobody else's.
            invite = await fetch(s.url + f"/tables/j/{code}", headers={"Cookie": bob})
            assert invite.status == 200 and "alice" in invite.text and host not in invite.text
            joined = await seat_of(await post(s.url + f"/tables/j/{code}", {}, bob))
            assert joined != host
            again = await seat_of(await post(s.url + f"/tables/j/{code}", {}, bob))
            assert again == joined  # sitting down twice: the same seat
            assert host not in (await fetch(s.url + joined)).text
            full = await post(s.url + "/tables/join", {"code": code.lower()}, carol)
            assert full.status == 409 and "full" in full.text
            # Only the host fills and starts; a made-up link is no seat.
            refused = await fetch(s.url + joined + "/start", "POST", JSON, b"{}")
            assert refused.status == 403 and refused.json()["error"] == "only the table's host may do that"
            forged = await fetch(s.url + "/play/t/" + "A" * 32 + "/start", "POST", JSON, b"{}")
            assert forged.status == 404 and "no seat has this link" in forged.json()["error"]
            # The computer players are bounded: /play (Rummy with 3 seats: 2 bots, Gin: 1) takes the three,
            # a table's bot then gets 503.
            rummy = await seat_of(await post(s.url + "/play", {"game": "rummy", "preset": "rummy", "bot": "random",
                                                               "seats": "3"}))
            assert "Rummy: you vs random vs random-2" in (await fetch(s.url + rummy)).text
            played = await post(s.url + "/play", {"game": "gin", "preset": "short", "bot": "random"})
            assert played.status == 303
            other = await seat_of(await post(s.url + "/tables/new", {"game": "gin", "preset": "short"}, carol))
            fill = await fetch(s.url + other + "/fill", "POST", JSON, BOT_IN_SEAT_1)
            assert fill.status == 200, fill.text
            busy = await fetch(s.url + other + "/start", "POST", JSON, b"{}")
            assert busy.status == 503 and "limit computer_players" in busy.json()["error"], busy.text
            # The host starts; each seat's stream is that seat's, and a move out of turn is refused.
            started = await fetch(s.url + host + "/start", "POST", JSON, b"{}")
            assert started.status == 200, started.text
            readers = [await trio.to_thread.run_sync(_Reader, s.url + link + "/events") for link in (host, joined)]
            async with trio.open_nursery() as nursery:
                for reader in readers:
                    nursery.start_soon(trio.to_thread.run_sync, reader.run)
                await until(lambda: _true(any(r.request() for r in readers)), "a request to a person")
                turn = 0 if readers[0].request() else 1
                links = (host, joined)
                waiting = await fetch(s.url + links[1 - turn] + "/move", "POST", JSON,
                                      json.dumps({"action": "draw_stock"}).encode())
                assert waiting.status == 409 and "not your turn" in waiting.json()["error"]
                legal = readers[turn].request() or []
                illegal = "draw_stock" if "draw_stock" not in legal else "discard 2c"
                wrong = await fetch(s.url + links[turn] + "/move", "POST", JSON,
                                    json.dumps({"action": illegal}).encode())
                assert wrong.status == 422 and wrong.json()["error"].startswith(f"the referee refused {illegal!r}")
                for reader in readers:
                    reader.close()
            for i, reader in enumerate(readers):
                text = json.dumps(reader.payloads)
                assert (host, joined)[1 - i].rsplit("/", 1)[1] not in text  # never the other seat's secret
                seats = [p for p in reader.payloads if p["kind"] == "seats"][-1]["message"]["seats"]
                assert [p["name"] for p in seats] == ["alice", "bob"]
            started_match = next(t for t in s.ref.tables.values()  # (running: a Table, not a finished record)
                                 if isinstance(t, referee.lowlevel.Table) and t.spec.players == ("alice", "bob"))
            # Bob's page is gone: after person_away_s the referee sees his seat disconnected; his link
            # brings him back within the grace, on a new session with the same token (the match resent).
            bob_seat = started_match.links[1]
            await until(lambda: _true(bob_seat.session is None), "the referee to see bob's page gone")
            back = await trio.to_thread.run_sync(_Reader, s.url + joined + "/events")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.to_thread.run_sync, back.run)
                await until(lambda: _true(bob_seat.session is not None), "bob's seat's session again")
                await until(lambda: _true(sum(p["kind"] == "match_started" for p in back.payloads) == 2),
                            "the match sent again to bob's seat")
                back.close()
            assert not bob_seat.state.substituted
            assert started_match.spec.fault_policy == "substitute" and started_match.spec.rules.target == 30
            assert started_match.spec.reconnect_grace_ms == int((limits.person_grace_s - limits.person_away_s) * 1000)
            # The lobby lists no private table; a public one appears with its join link (never a seat's).
            public = await seat_of(await post(s.url + "/tables/new", {"game": "gin", "preset": "short",
                                                                      "public": "yes"}, carol))
            lobby = (await fetch(s.url + "/lobby.json")).json()
            assert [t["seats"][0]["name"] for t in lobby["open"]] == ["carol"]
            assert all(t["join"].startswith("/tables/j/") for t in lobby["open"])
            assert lobby["running"] == []  # (alice and bob's table is private: not listed to watch)
            assert public not in json.dumps(lobby) and host not in json.dumps(lobby)
            # Wrong codes: ten are answered 404, the eleventh in the minute 429 (the right code too, now).
            for n in range(10):
                miss = await post(s.url + "/tables/join", {"code": f"WRONGCODE{n:04d}"}, carol)
                assert miss.status == 404, (n, miss.text)
            blocked = await post(s.url + "/tables/join", {"code": "WRONGCODE9999"}, carol)
            assert blocked.status == 429 and "limit table_code_tries_per_minute" in blocked.text
            assert (await fetch(s.url + f"/tables/j/{code}", headers={"Cookie": carol})).status == 429

    referee.run(main)


def _join(driver: Any, url: str, code: str) -> None:
    driver.get(url + "/tables/join")
    driver.find_element(By.NAME, "code").send_keys(code)
    driver.find_element(By.CSS_SELECTOR, 'form button[type="submit"]').click()


def _sign_up(driver: Any, url: str, name: str) -> None:
    driver.get(url + "/signup")
    form = driver.find_element(By.ID, "signup")
    form.find_element(By.NAME, "name").send_keys(name)
    form.find_element(By.NAME, "password").send_keys(PASSWORD)
    form.find_element(By.TAG_NAME, "button").click()
    WebDriverWait(driver, HANG_S).until(lambda d: "/signup" not in d.current_url)  # signed in: the front page


def _open(driver: Any, url: str) -> None:
    driver.get(url + "/tables/new")
    form = driver.find_element(By.CSS_SELECTOR, 'form[data-game="gin"]')
    Select(form.find_element(By.NAME, "preset")).select_by_value("short")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


async def _seated(driver: Any) -> str:
    async def there() -> bool:
        return "/play/t/" in str(await _js(driver, "return location.href"))
    await until(there, "the seat's page")
    return str(await _js(driver, "return location.href"))


async def _play_turn(driver: Any, state: dict[str, Any]) -> None:
    move = _pick(state["moves"], state["loose"])
    await trio.to_thread.run_sync(_click, driver, f'#moves button[data-action="{move}"]')

    async def answered() -> bool:
        now = await _js(driver, STATE)
        return bool(now["n"] > state["n"] or now["over"])
    await until(answered, f"the referee's answer to {move!r}")


def _open_rummy(driver: Any, url: str) -> None:
    """A four-seat Rummy table played to a game target of 1: the first deal scored ends it."""
    driver.get(url + "/tables/new")
    form = driver.find_element(By.CSS_SELECTOR, 'form[data-game="rummy"]')
    Select(form.find_element(By.NAME, "preset")).select_by_value("rummy")
    Select(form.find_element(By.NAME, "seats")).select_by_value(str(RUMMY_SEATS))
    form.find_element(By.NAME, "target").send_keys("1")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


async def _code_shown(driver: Any) -> str:
    """The table's code, once the host's page shows it."""
    async def shown() -> bool:
        return bool(await _js(driver, "const c = document.querySelector('#invite .code');"
                                      "return c && c.textContent.length === 13"))
    await until(shown, "the table's code on the host's page")
    # the waiting room shows no empty bars (the table's seats and middle, drawn once the game starts)
    empty = await _js(driver, "return [...document.querySelectorAll('main section, #middle')]"
                              ".filter(e => e.offsetHeight > 0 && !e.textContent.trim()).map(e => e.id)")
    assert empty == [], f"empty bars in the waiting room: {empty}"
    return str(await _js(driver, "return document.querySelector('#invite .code').textContent"))


async def _two_people(s: Any, drivers: list[Any], open_table: Callable[[Any, str], None] = _open,
                      bots: tuple[int, ...] = ()) -> tuple[list[str], str]:
    """Alice and Bob sign up, Alice opens a table, Bob joins by its code, Alice fills the seats
    ``bots`` with sample bots (her page's buttons) and starts it."""
    await trio.to_thread.run_sync(_sign_up, drivers[0], s.url, "alice")
    await trio.to_thread.run_sync(_sign_up, drivers[1], s.url, "bob")
    await trio.to_thread.run_sync(open_table, drivers[0], s.url)
    host = await _seated(drivers[0])
    code = await _code_shown(drivers[0])
    await trio.to_thread.run_sync(_join, drivers[1], s.url, code)
    joined = await _seated(drivers[1])

    async def bob_sat() -> bool:  # live on the host's page, no reload
        return bool(await _js(drivers[0], "const r = document.querySelector('#seat-list li[data-seat=\"1\"]');"
                                          "return r && r.textContent.includes('bob')"))
    await until(bob_sat, "bob in the host's seat list")
    assert not await _js(drivers[1], "return !!document.getElementById('start')")  # Start is the host's
    for seat in bots:
        await trio.to_thread.run_sync(_click, drivers[0], f'#seat-list li[data-seat="{seat}"] button.fill')
        async def filled(seat: int = seat) -> bool:  # live on the host's page
            return await _seat_row(drivers[0], seat, "(computer)")
        await until(filled, f"a sample bot in seat {seat}")

    async def ready() -> bool:  # every seat taken: the host's Start is enabled
        return bool(await _js(drivers[0], "const b = document.getElementById('start'); return !!b && !b.disabled"))
    await until(ready, "the host's Start enabled")
    await trio.to_thread.run_sync(_click, drivers[0], "#start")
    return [host, joined], code


def _run(main: Callable[[], Awaitable[T]], drivers: list[Any]) -> T:
    """Run the test's trio ``main``; the browsers are closed however it ends."""
    try:
        return referee.run(main)
    finally:
        for d in drivers:
            d.quit()


async def _new_seat(driver: Any, old: str) -> None:
    async def moved() -> bool:
        href = str(await _js(driver, "return location.href"))
        return "/play/t/" in href and href != old
    await until(moved, "the rematch's seat")


async def _seat_row(driver: Any, seat: int, text: str) -> bool:
    return bool(await _js(driver, f"const r = document.querySelector('#seat-list li[data-seat=\"{seat}\"]');"
                                  f"return !!r && r.textContent.includes({json.dumps(text)})"))


def _phones(tmp_path: Path) -> list[Any]:
    """Two people's phone-sized Chromium sessions (and the screenshots' folder)."""
    drivers = [_driver(tmp_path / f"profile{i}") for i in range(2)]
    for d in drivers:
        d.set_window_size(390, 844)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return drivers


def test_two_people_play_a_whole_gin_game_through_a_table_code(tmp_path: Path) -> None:
    drivers = _phones(tmp_path)
    shots: dict[str, Path] = {}

    async def main() -> tuple[str, list[list[dict[str, Any]]], list[str]]:
        async with served(tmp_path / "srv") as s:
            links, _code = await _two_people(s, drivers)
            while True:
                states = [await _js(d, STATE) for d in drivers]
                if all(st["over"] for st in states):
                    break
                moved = False
                for d, st in zip(drivers, states, strict=True):
                    if st["moves"] and not st["over"]:
                        if "start" not in shots:
                            shots["start"] = tmp_path / "people-start.png"
                            await trio.to_thread.run_sync(d.save_screenshot, str(shots["start"]))
                        await _play_turn(d, st)
                        moved = True
                    elif st["end"] and "showdown" not in shots:
                        await _js(d, "document.getElementById('end').scrollIntoView()")
                        shots["showdown"] = tmp_path / "people-showdown.png"
                        await trio.to_thread.run_sync(d.save_screenshot, str(shots["showdown"]))
                if not moved:
                    await trio.sleep(0.05)
            for d in drivers:
                async def closed(d: Any = d) -> bool:
                    return bool((await _js(d, STATE))["closed"])
                await until(closed, "the stream's end")
            if "showdown" not in shots:
                await _js(drivers[0], "document.getElementById('end').scrollIntoView()")
                shots["showdown"] = tmp_path / "people-showdown.png"
                await trio.to_thread.run_sync(drivers[0].save_screenshot, str(shots["showdown"]))
            payloads = [await _js(d, "return window.__tablePayloads") for d in drivers]
            table = next(t for t in s.ref.tables.values() if t.spec.players == ("alice", "bob"))
            await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal", table.report
            assert table.report.substituted_seats == ()

            async def recorded() -> bool:  # stored among the people's games (the accounts' writer thread)
                r = await fetch(s.url + "/api/people/alice")
                return r.status == 200 and table.match_id in r.text
            await until(recorded, "the table among alice's people's games")
            # A rematch: Alice asks (a new table, her the host); Bob's click sits him at that table.
            await trio.to_thread.run_sync(_click, drivers[0], "#rematch-button")
            await _new_seat(drivers[0], links[0])
            await until(lambda: _seat_row(drivers[0], 1, "empty seat"), "the rematch's empty seat")

            await trio.to_thread.run_sync(_click, drivers[1], "#rematch-button")
            await _new_seat(drivers[1], links[1])
            await until(lambda: _seat_row(drivers[0], 1, "bob"), "bob at the rematch's table")
            assert await _js(drivers[0], "return !document.getElementById('start').disabled")
            return table.report.replay_path, payloads, links

    replay_path, payloads, links = _run(main, drivers)
    for path in shots.values():
        shutil.copy(path, ARTIFACTS / path.name)
    assert set(shots) == {"start", "showdown"}
    for seat, seen in enumerate(payloads):
        assert sum(1 for p in seen if p["kind"] == "action_request") >= 3
        check_payloads(Path(replay_path), seen, seat)
        assert links[1 - seat].rsplit("/", 1)[1] not in json.dumps(seen)  # never the other's seat link


def test_a_person_leaves_and_the_computer_finishes_their_game(tmp_path: Path) -> None:
    drivers = [_driver(tmp_path / f"profile{i}") for i in range(2)]

    async def main() -> tuple[str, list[dict[str, Any]], str]:
        limits = WebLimits(person_grace_s=3.0, person_away_s=1.0)
        async with served(tmp_path / "srv", limits) as s:
            await _two_people(s, drivers)
            # Bob's page goes away at once; Alice plays on by clicking until the game ends.
            await trio.to_thread.run_sync(drivers[1].get, "about:blank")
            while True:
                st = await _js(drivers[0], STATE)
                if st["over"]:
                    break
                if st["moves"]:
                    await _play_turn(drivers[0], st)
                else:
                    await trio.sleep(0.05)

            async def told() -> bool:
                return bool(await _js(drivers[0], "return document.body.dataset.notice || ''"))
            await until(told, "the notice on alice's page")
            notice = str(await _js(drivers[0], "return document.body.dataset.notice"))
            table = next(t for t in s.ref.tables.values() if t.spec.players == ("alice", "bob"))
            await table.finished.wait()
            assert table.report is not None
            payloads = await _js(drivers[0], "return window.__tablePayloads")
            return table.report.replay_path, payloads, notice

    replay_path, payloads, _notice = _run(main, drivers)
    notices = [p["message"]["message"] for p in payloads if p["kind"] == "notice"]
    assert "the computer plays for bob to the end of the game" in notices, notices
    replay = referee.read_replay(Path(replay_path))
    assert replay.result is not None and list(replay.result.substituted_seats) == [1], replay.result
    check_payloads(Path(replay_path), payloads, 0)


def test_a_person_whose_time_runs_out_is_told_and_plays_on(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            alice = await sign_up(s.url, "alice")
            host = await seat_of(await post(s.url + "/tables/new", {"game": "gin", "preset": "short", "move_s": "1"},
                                            alice))
            fill = await fetch(s.url + host + "/fill", "POST", JSON, BOT_IN_SEAT_1)
            assert fill.status == 200, fill.text
            reader = await trio.to_thread.run_sync(_Reader, s.url + host + "/events")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.to_thread.run_sync, reader.run)
                assert (await fetch(s.url + host + "/start", "POST", JSON, b"{}")).status == 200

                def told() -> int:
                    return next((i for i, p in enumerate(reader.payloads)
                                 if p["kind"] == "notice" and p["message"]["message"] == TIME_RAN_OUT), -1)
                await until(lambda: _true(told() >= 0), "the page told that the time ran out")
                # The person plays on: a later request is theirs again, answered by them.
                await until(lambda: _true(any(p["kind"] == "action_request" for p in reader.payloads[told():])),
                            "the person's next request")
                errors = [p for p in reader.payloads if p["kind"] == "error"]
                assert errors and errors[0]["message"]["error"]["code"] == "ERROR_CODE_TOO_LATE", errors
                table = next(t for t in s.ref.tables.values()  # (running: a Table, not a finished record)
                             if isinstance(t, referee.lowlevel.Table) and t.spec.players == ("alice", "random"))
                assert table.spec.substitute_time_faults == "move" and not table.links[0].state.substituted
                reader.close()

    referee.run(main)


def test_the_lobby_shows_a_new_public_table_without_a_reload_and_open_tables_are_bounded(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile")

    async def main() -> None:
        limits = WebLimits(open_tables=1, lobby_refresh_s=0.2, table_target_max=200)
        async with served(tmp_path / "srv", limits) as s:
            carol = await sign_up(s.url, "carol")
            await trio.to_thread.run_sync(driver.get, s.url + "/lobby")

            async def rows(kind: str) -> list[str]:
                return list(await _js(driver, f"return [...document.querySelectorAll('#lobby-{kind} li')]"
                                              ".map(e => e.textContent)"))
            assert await rows("open") == ["none now"]
            far = await post(s.url + "/tables/new", {"game": "gin", "preset": "short", "target": "201"}, carol)
            assert far.status == 400 and "limit table_target_max" in far.text
            host = await seat_of(await post(s.url + "/tables/new", {"game": "gin", "preset": "short",
                                                                    "public": "yes"}, carol))

            async def listed() -> bool:
                return any("carol" in r for r in await rows("open"))
            await until(listed, "carol's table in the lobby, without a reload")
            href = str(await _js(driver, "return document.querySelector('#lobby-open a.join').getAttribute('href')"))
            assert re.fullmatch(r"/tables/j/[A-Z2-7]{13}", href) and host not in href
            more = await post(s.url + "/tables/new", {"game": "gin", "preset": "short"}, carol)
            assert more.status == 503 and "limit open_tables" in more.text
            # Carol fills the other seat and starts: the table moves to the tables being played, to watch.
            assert (await fetch(s.url + host + "/fill", "POST", JSON, BOT_IN_SEAT_1)).status == 200
            assert (await fetch(s.url + host + "/start", "POST", JSON, b"{}")).status == 200

            async def watched() -> bool:
                return bool(await _js(driver, "const a = document.querySelector('#lobby-running a.watch');"
                                              "return !!a && a.getAttribute('href').startsWith('/matches/table-')"))
            await until(watched, "the running table's watch link in the lobby")
            watch = str(await _js(driver, "return document.querySelector('#lobby-running a.watch').href"))
            spectator = await fetch(watch)
            assert spectator.status == 200 and host not in spectator.text

    _run(main, [driver])


def test_the_grace_must_outlast_the_pages_absence() -> None:
    assert WebLimits.parse(["person_grace_s=10", "person_away_s=2"]).person_grace_s == 10
    with pytest.raises(ValueError, match=r"person_away_s=3 must be below person_grace_s=2"):
        WebLimits.parse(["person_grace_s=2"])


def test_a_four_seat_rummy_table_with_two_people_and_two_bots_plays_a_deal_to_its_end(tmp_path: Path) -> None:
    drivers = _phones(tmp_path)
    shots: dict[str, Path] = {}
    moves = [0, 0]

    async def shot(name: str, d: Any) -> None:
        if name not in shots:
            shots[name] = tmp_path / f"rummy4-{name}.png"
            await trio.to_thread.run_sync(d.save_screenshot, str(shots[name]))

    async def main() -> tuple[str, list[list[dict[str, Any]]], list[dict[str, Any]], tuple[str, ...], list[str]]:
        async with served(tmp_path / "srv") as s:
            links, _code = await _two_people(s, drivers, _open_rummy, bots=(2, 3))
            while True:
                states = [await _js(d, RUMMY_STATE) for d in drivers]
                if all(st["over"] for st in states):
                    break
                moved = False
                for i, (d, st) in enumerate(zip(drivers, states, strict=True)):
                    if (st["moves"] or st["groups"]) and not st["over"]:
                        assert st["others"] == RUMMY_SEATS - 1 and st["width"] <= 390, st
                        await shot("start", d)
                        await rummy_turn(d, st)
                        moves[i] += 1
                        moved = True
                if not moved:
                    await trio.sleep(0.05)
            ends = []
            for i, d in enumerate(drivers):
                async def closed(d: Any = d) -> bool:
                    return bool((await _js(d, RUMMY_STATE))["closed"])
                await until(closed, "the stream's end")
                await _js(d, "document.getElementById('end').scrollIntoView()")
                await shot(f"deal-end-{('alice', 'bob')[i]}", d)
                ends.append(await _js(d, RUMMY_END))
            payloads = [await _js(d, "return window.__tablePayloads") for d in drivers]
            table = next(t for t in s.ref.tables.values() if t.spec.players[:2] == ("alice", "bob"))
            await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal", table.report
            assert table.report.substituted_seats == ()  # the people played their own seats throughout
            return table.report.replay_path, payloads, ends, table.spec.players, links

    replay_path, payloads, ends, players, links = _run(main, drivers)
    for path in shots.values():
        shutil.copy(path, ARTIFACTS / path.name)
    assert set(shots) == {"start", "deal-end-alice", "deal-end-bob"}
    assert players == ("alice", "bob", "random", "random-2")
    assert all(n >= 2 for n in moves), moves  # both people played by clicking (a draw and a discard at least)
    for seat, (seen, end) in enumerate(zip(payloads, ends, strict=True)):
        # The deal's end on each page: every seat's hand by name, and the points.
        assert end["seats"] == RUMMY_SEATS and "points:" in end["text"], end
        assert all(p in end["text"] for i, p in enumerate(players) if i != seat), end
        assert any(p["kind"] == "deal_finished" for p in seen) and seen[-1]["kind"] == "replay"
        check_payloads(Path(replay_path), seen, seat)
        assert links[1 - seat].rsplit("/", 1)[1] not in json.dumps(seen)  # never the other's seat link


def test_a_person_leaves_before_the_start_and_the_host_closes_the_table(tmp_path: Path) -> None:
    """Bob joins Alice's table and leaves before she starts: his seat is empty again on her page
    (live), his seat's link answers 410 saying he left, and Carol takes the seat by the same code.
    Alice then closes the table: Carol's page is told, the code and both links answer 410; a
    started table is not left (409: the computer plays a seat after the grace)."""
    drivers = _phones(tmp_path)

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            await trio.to_thread.run_sync(_sign_up, drivers[0], s.url, "alice")
            await trio.to_thread.run_sync(_sign_up, drivers[1], s.url, "bob")
            carol = await sign_up(s.url, "carol")
            await trio.to_thread.run_sync(_open, drivers[0], s.url)
            await _seated(drivers[0])
            code = await _code_shown(drivers[0])
            await trio.to_thread.run_sync(_join, drivers[1], s.url, code)
            bob = urllib.parse.urlsplit(await _seated(drivers[1])).path
            await until(lambda: _seat_row(drivers[0], 1, "bob"), "bob in the host's seat list")
            assert await _js(drivers[1], "return document.getElementById('leave').textContent") == "Leave the table"
            assert await _js(drivers[0], "return document.getElementById('leave').textContent") == "Close the table"
            # Bob leaves: his page goes to the lobby; Alice's shows the seat empty, without a reload.
            await trio.to_thread.run_sync(_click, drivers[1], "#leave")

            async def in_lobby() -> bool:
                return str(await _js(drivers[1], "return location.pathname")) == "/lobby"
            await until(in_lobby, "bob's page in the lobby")
            await until(lambda: _seat_row(drivers[0], 1, "empty seat"), "seat 1 empty on the host's page")
            assert await _js(drivers[0], "return document.getElementById('start').disabled")
            page = await fetch(s.url + bob)
            assert page.status == 410 and "You left this table before it started" in page.text, page.text
            for path in ("/events", "/move", "/leave"):
                gone = await fetch(s.url + bob + path, "POST" if path != "/events" else "GET", JSON, b"{}")
                assert gone.status == 410 and gone.json()["error"].startswith("You left this table"), gone.text
            in_bulgarian = await fetch(s.url + bob + "?lang=bg")
            assert in_bulgarian.status == 410 and "Напуснахте тази маса" in in_bulgarian.text, in_bulgarian.text
            # Carol takes the free seat by the same code.
            taken = await seat_of(await post(s.url + "/tables/join", {"code": code}, carol))
            await until(lambda: _seat_row(drivers[0], 1, "carol"), "carol in seat 1 on the host's page")
            seated = await fetch(s.url + taken)
            players = json.dumps(["alice", "carol"])  # her page's players (data-players, however escaped)
            assert f"data-players=\"{players}\"" in unescape(seated.text), seated.text
            # Alice closes the table: Carol's page is told; the code and the links stop working.
            reader = await trio.to_thread.run_sync(_Reader, s.url + taken + "/events")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.to_thread.run_sync, reader.run)
                await until(lambda: _true(any(p["kind"] == "seats" for p in reader.payloads)), "carol's seats")
                await trio.to_thread.run_sync(_click, drivers[0], "#leave")
                await trio.to_thread.run_sync(lambda: drivers[0].switch_to.alert.accept())  # "for everyone?"
                await until(lambda: _true(any(p["kind"] == "closed" for p in reader.payloads)), "carol told")
                reader.close()
            told = next(p for p in reader.payloads if p["kind"] == "closed")["message"]
            assert told == {"message": "The host closed this table before it started.", "how": "host"}
            for path in (taken, taken + "/events"):
                closed = await fetch(s.url + path)
                assert closed.status == 410 and "The host closed this table" in closed.text, closed.text
            by_code = await post(s.url + "/tables/join", {"code": code}, carol)
            assert by_code.status == 410 and "The host closed this table" in by_code.text, by_code.text
            # After the start, leaving is the grace's business: 409 says so, nothing changes.
            host = await seat_of(await post(s.url + "/tables/new", {"game": "gin", "preset": "short"}, carol))
            assert (await fetch(s.url + host + "/fill", "POST", JSON, BOT_IN_SEAT_1)).status == 200
            assert (await fetch(s.url + host + "/start", "POST", JSON, b"{}")).status == 200
            late = await fetch(s.url + host + "/leave", "POST", JSON, b"{}")
            assert late.status == 409 and "the computer plays your seat after the grace" in late.json()["error"]
            assert (await fetch(s.url + host)).status == 200

    _run(main, drivers)


@dataclass(frozen=True)
class _Someone:
    """A signed-in person, as the accounts give one."""

    id: int
    """Their account's id."""
    name: str
    """Their name."""


def test_the_rematchs_host_is_the_first_tables_host_once_they_ask_or_accept() -> None:
    """Bob asks for the rematch first and opens it; Alice, the finished table's host, accepts and
    is the rematch's host (her page gets the host's tools, Bob's loses them; only she fills and
    starts). When the first table's host never comes, the first to ask stays the host."""
    async def main() -> None:
        room = Room(cast(Any, object()), WebLimits(), cast(Any, None), cast(Any, None))
        alice, bob, carol = _Someone(1, "alice"), _Someone(2, "bob"), _Someone(3, "carol")
        async with trio.open_nursery() as nursery:
            room._nursery = nursery
            settings = room.settings("rummy", "rummy", "3")

            def finished() -> list[Seat]:
                host = room.open(settings, alice.name, alice)
                seats = [host, room.join(host.table, bob), room.join(host.table, carol)]
                host.table.over = True
                return seats

            def host_flags(seat: Seat) -> bool:
                told = [json.loads(p) for p in seat.payloads if json.loads(p)["kind"] == "seats"]
                return bool(told[-1]["message"]["host"])

            a, b, c = finished()
            by_bob = room.ask_rematch(b)
            new = by_bob.table
            assert new.host is by_bob and host_flags(by_bob)  # the first to ask, until alice comes
            by_alice = room.ask_rematch(a)
            assert by_alice.table is new and new.host is by_alice and new.host_seat == by_alice.index == 1
            assert host_flags(by_alice) and not host_flags(by_bob)
            with pytest.raises(TableError, match="only the table's host"):
                room.fill(by_bob, 2, "random")
            room.fill(by_alice, 2, "random")  # (carol did not come: a sample bot takes her seat)
            assert [p.kind for p in new.places] == ["person", "person", "bot"]
            # Carol accepting later changes nothing of the host.
            with pytest.raises(TableError, match="full"):
                room.ask_rematch(c)
            assert new.host_seat == 1
            # The first table's host never asks: the first who asked stays the host.
            _a, b2, c2 = finished()
            by_carol = room.ask_rematch(c2)
            by_bob2 = room.ask_rematch(b2)
            assert by_carol.table.host is by_carol and by_bob2.table is by_carol.table and not host_flags(by_bob2)
            nursery.cancel_scope.cancel()

    referee.run(main)
