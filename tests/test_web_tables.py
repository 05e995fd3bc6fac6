"""A person plays the computer in real headless Chromium (Selenium, Debian's ``chromium`` and
``chromium-driver``): the page is a bot client of the referee through the web. A whole Gin game
(``short``) against the random sample bot, played by clicking, on a 390×844 screen; everything the
page received (each payload of its stream, as the page collected it) and everything it showed
(the DOM's cards after each move) is checked against the match's replay: each view is exactly a
position of seat 0's view of the replay, so it holds no card that seat could not see. A move
forged by hand (a POST with an illegal action) gets the referee's error, and the game goes on.
Screenshots of the table at the start and at a showdown are kept under ``test-artifacts/``."""

from __future__ import annotations

import html
import http.client
import json
import re
import shutil
import socket
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
from google.protobuf import json_format
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import referee
from arena.replays.audit import check_information
from arena.replays.steps import build, named
from arena.web.limits import WebLimits
from arena.web.tables import NOTICES, SEAT
from gin_arena.v2 import bot_pb2
from referee import games
from tests._wait import HANG_S, POLL_S
from tests._web import fetch, served, until
from tests.test_web_browser import _driver, _js

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "tables"
"""Where the screenshots are kept (listed in .gitignore)."""
CARD = re.compile(r"\b[2-9TJQKA][shdc]\b")
STATE = """
const b = document.body;
return {over: b.dataset.over === 'yes', closed: b.dataset.closed === 'yes',
        moves: [...document.querySelectorAll('#moves button:not([disabled])')].map(e => e.dataset.action),
        cards: [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card),
        loose: [...document.querySelectorAll('#me .loose [data-card]')].map(e => e.dataset.card),
        end: !document.getElementById('end').hidden,
        width: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
        small: [...document.querySelectorAll('#moves button, select, form button')]
               .filter(e => e.getBoundingClientRect().height < 44).length,
        turn: b.classList.contains('your-turn'), title: document.title,
        clock: document.getElementById('my-clock').textContent,
        n: (window.__tablePayloads || []).length};"""
FORGE = """
const r = window.__tablePayloads.filter(p => p.kind === 'action_request').pop().message.actionRequest;
fetch(document.body.dataset.move, {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({action: %s, request_id: String(r.requestId)})})
  .then(x => x.json()).then(e => { document.getElementById('problem').textContent = e.error; });"""
"""A move forged by hand from the page (as anyone could type in the browser's console)."""
END = """
const end = document.getElementById('end');
return {seats: end.querySelectorAll('.seat').length, text: end.textContent,
        sheet: [...document.querySelectorAll('#scores tbody tr')].map(r => r.textContent),
        cells: [...document.querySelectorAll('#scores tbody tr')].map(r => [...r.cells].map(c => c.textContent)),
        status: document.getElementById('status').textContent,
        log: [...document.querySelectorAll('#log li')].map(e => e.textContent),
        replay: (document.querySelector('#replay a') || {}).href || ''};"""
RANK = "23456789TJQKA"


def _pick(moves: list[str], loose: list[str]) -> str:
    """A person's simple play: gin or knock when offered, take the stock, shed the highest deadwood."""
    for kind in ("big_gin", "knock", "draw_stock", "pass"):
        found = [m for m in moves if m.split()[0] == kind]
        if found:
            return found[0]
    discards = [m for m in moves if m.startswith("discard ")]
    shed = [m for m in discards if m.split()[1] in loose] or discards
    return max(shed, key=lambda m: RANK.index(m.split()[1][0])) if shed else moves[0]


def _click(driver: Any, selector: str) -> None:
    """Click the element (found again if the page redrew it between finding and clicking, or
    was redrawing it when looked for: on a loaded machine a redraw takes long enough to be seen)."""
    deadline = time.monotonic() + HANG_S
    while True:
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
            return
        except (StaleElementReferenceException, NoSuchElementException) as e:
            if time.monotonic() > deadline:
                there = [b.get_attribute("data-action") for b in driver.find_elements(By.CSS_SELECTOR, "#moves button")]
                raise AssertionError(f"{selector} not on the page after {HANG_S:.0f} s; moves there: {there}") from e
            time.sleep(POLL_S)


def _open_table(driver: Any, url: str) -> None:
    driver.get(url + "/play")
    form = driver.find_element(By.CSS_SELECTOR, 'form[data-game="gin"]')
    Select(form.find_element(By.NAME, "bot")).select_by_value("random")
    Select(form.find_element(By.NAME, "preset")).select_by_value("short")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


async def seat_page(driver: Any, url: str, open_table: Callable[[Any, str], None]) -> str:
    """Open a table with ``open_table`` (the new-table form filled and sent) and wait for the
    seat's page; its address."""
    await trio.to_thread.run_sync(open_table, driver, url)

    async def seated() -> bool:
        return "/play/t/" in str(await _js(driver, "return location.href"))
    await until(seated, "the seat's page")
    return str(await _js(driver, "return location.href"))


def test_a_person_plays_a_whole_gin_game_against_the_random_bot_by_clicking(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile")
    driver.set_window_size(390, 844)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots: dict[str, Path] = {}
    samples: list[dict[str, Any]] = []

    async def main() -> tuple[str, list[dict[str, Any]], str]:
        async with served(tmp_path / "srv") as s:
            table_url = await seat_page(driver, s.url, _open_table)
            while True:
                state = await _js(driver, STATE)
                if state["over"]:
                    samples.append(state)
                    break
                if state["moves"]:
                    samples.append(state)
                    assert state["width"] <= state["client"], "the table scrolls sideways at 390 px"
                    assert state["small"] == 0, "a touch target under 44 px"
                    if "start" not in shots:
                        shots["start"] = tmp_path / "start.png"
                        await trio.to_thread.run_sync(driver.save_screenshot, str(shots["start"]))
                    assert state["turn"] and state["title"].startswith("● Your turn")
                    assert re.fullmatch(r"your time for this move: \d+ s", state["clock"]), state["clock"]
                    if "start" not in shots:  # a move forged by hand in the page: the referee's error shown
                        forged = "draw_stock" if "draw_stock" not in state["moves"] else "discard 2c"
                        await _js(driver, FORGE % json.dumps(forged))

                        async def refused(forged: str = forged) -> bool:
                            text = await _js(driver, "return document.getElementById('problem').textContent")
                            return str(text).startswith(f"the referee refused {forged!r}: ")
                        await until(refused, "the referee's error on the page")

                        async def rejection_drawn() -> bool:
                            return bool(await _js(driver, "return window.__tablePayloads.some("
                                                          "p => p.kind === 'action_rejected')"))
                        await until(rejection_drawn, "the rejection in the page's stream")
                        state = await _js(driver, STATE)
                    move = _pick(state["moves"], state["loose"])
                    if len(samples) % 3 == 0:  # by keyboard: the move's number
                        key = str(state["moves"].index(move) + 1)
                        page = await trio.to_thread.run_sync(driver.find_element, By.TAG_NAME, "body")
                        await trio.to_thread.run_sync(page.send_keys, key)
                    else:
                        await trio.to_thread.run_sync(_click, driver, f'#moves button[data-action="{move}"]')

                    async def answered(n: int = state["n"]) -> bool:
                        now = await _js(driver, STATE)
                        return bool(now["n"] > n or now["over"])
                    await until(answered, f"the referee's answer to {move!r}")
                elif state["end"] and "showdown" not in shots:
                    await _js(driver, "document.getElementById('end').scrollIntoView()")
                    shots["showdown"] = tmp_path / "showdown.png"
                    await trio.to_thread.run_sync(driver.save_screenshot, str(shots["showdown"]))
                else:
                    await trio.sleep(0.05)

            async def closed() -> bool:
                return bool((await _js(driver, STATE))["closed"])
            await until(closed, "the stream's end")
            if "showdown" not in shots:
                await _js(driver, "document.getElementById('end').scrollIntoView()")
                shots["showdown"] = tmp_path / "showdown.png"
                await trio.to_thread.run_sync(driver.save_screenshot, str(shots["showdown"]))
            await _js(driver, "document.getElementById('scores').scrollIntoView()")
            shots["sheet"] = tmp_path / "sheet.png"  # the score sheet at the game's end, its bonuses
            await trio.to_thread.run_sync(driver.save_screenshot, str(shots["sheet"]))
            payloads = await _js(driver, "return window.__tablePayloads")
            end = await _js(driver, END)
            replay_link = end["replay"]
            room = s.ref.tables
            finished = [t for t in room.values() if t.match_id.startswith("table-")]
            assert len(finished) == 1
            table = finished[0]
            await table.finished.wait()
            assert table.report is not None and table.state == "finished", table.report
            assert table.report.termination == "normal", table.report
            # The end: every hand with its melds and deadwood, the points, the score sheet, the replay.
            assert end["seats"] == 2 and "deadwood" in end["text"] and "points:" in end["text"], end
            assert end["sheet"] and re.fullmatch(r"(You|random) won the game \d+–\d+", end["status"]), end
            # The score sheet's game end (Gin short: line bonus 25 a deal won, game bonus 100): the
            # deal points, the deals won and the bonuses, which with the deal points make the totals.
            rows = {row[0]: [int(c.replace(",", "")) for c in row[3:]] for row in end["cells"]
                    if not row[1] and all(row[3:])}
            points, won, bonus = rows["deal points"], rows["deals won"], rows["bonuses"]
            total = next(v for k, v in rows.items() if k.startswith("game 1 over"))
            assert [p + b for p, b in zip(points, bonus, strict=True)] == total, end["cells"]
            winner = max(range(2), key=total.__getitem__)
            assert bonus[winner] >= 100 + 25 * won[winner] and bonus[1 - winner] >= 25 * won[1 - winner], end["cells"]
            assert end["log"] and all(e.startswith("random ") and not e.startswith("random: ") for e in end["log"]), end
            # the computer's moves, by name, in the game's words
            assert replay_link == table_url + "/replay", replay_link

            async def replay_served() -> bool:
                return (await fetch(replay_link)).status == 200
            await until(replay_served, "the replay page")
            replay_page = await fetch(replay_link)
            assert table.match_id in replay_page.text and "content-security-policy" in replay_page.headers
            # A person's game is kept apart from the bots' ladder: not in the store, not in the standings.
            db = sqlite3.connect(s.folder / "serve.sqlite")
            try:
                assert db.execute("SELECT COUNT(*) FROM games WHERE match_id = ?", (table.match_id,)).fetchone()[0] == 0
            finally:
                db.close()
            assert (await fetch(s.url + "/api/standings")).json()["standings"] == []
            return table.report.replay_path, payloads, table_url

    try:
        replay_path, payloads, table_url = referee.run(main)
    finally:
        driver.quit()
    for name, path in shots.items():
        shutil.copy(path, ARTIFACTS / f"{name}.png")
    assert set(shots) == {"start", "showdown", "sheet"}
    assert sum(1 for p in payloads if p["kind"] == "action_request") >= 5
    assert payloads[-1]["kind"] == "replay"
    assert any(p["kind"] == "match_finished" for p in payloads)

    sent = check_payloads(Path(replay_path), payloads, SEAT)
    for sample in samples:
        assert set(sample["cards"]) <= sent
    assert table_url not in json.dumps(payloads)  # the seat's link is not echoed to the page


def check_payloads(replay_path: Path, payloads: list[dict[str, Any]], seat: int) -> set[str]:
    """Every view a seat's page was sent is exactly a position of that seat's view of the replay,
    in order; every card of every payload (the proto message too) is one the seat had seen by that
    position; the audit's information check passes on the messages. Answers every card sent."""
    # Every view the page was sent is exactly a position of the seat's view of the replay, in order;
    # every card of every payload (the proto message too) is one the seat had seen by that position.
    replay = referee.read_replay(Path(replay_path))
    players = list(replay.header.players)
    mine = build(replay, seat)
    everyone = build(replay, "everyone")
    index: dict[tuple[int, int], list[tuple[int, dict[str, Any]]]] = {}
    known: list[set[str]] = []  # the cards the seat had seen by each position of the match
    hidden: list[set[str]] = []  # the others' cards the seat had not seen, at each position
    reg = games.get(replay.header.game)
    rules = reg.game.rules_from_dict(dict(replay.header.rules))
    knows: Any = reg.game  # a referee.games.KnowsCards
    for pos in mine.positions:
        deal = mine.deals[pos.deal_index]
        index.setdefault((deal.game, deal.number), []).append((pos.index, _strip(dict(pos.shown))))
        known.append((known[-1] if known else set()) | set(CARD.findall(json.dumps(pos.shown))))
        if pos is deal.positions[-1]:  # the deal's end as the referee tells each seat (the audit's check)
            r = deal.record
            record = {"game": r.game, "deal": r.deal, "dealer": r.dealer, "deck": list(r.deck), "key": r.key}
            moves = [(m.seat, m.action) for m in deal.moves]
            known[-1] |= set(knows.known_cards(rules, record, moves, len(players))[-1][seat])
        theirs = [s["hand"] for s in everyone.positions[pos.index].shown["seats"] if s["seat"] != seat]
        hidden.append(set(CARD.findall(json.dumps(theirs))) - known[-1])
    at = 0
    sent: set[str] = set()
    for p in payloads:
        view = p["view"]
        if view is not None:
            key = (view["position"]["game"], view["position"]["deal"])
            shown = _strip(named({k: v for k, v in view.items() if k != "position"}, players))
            found = [i for i, v in index[key] if v == shown and i >= at]
            assert found, f"a {p['kind']} payload's view is no later position of the seat in deal {key}"
            at = found[0]
        cards = set(CARD.findall(json.dumps(_without_bytes(p))))
        assert cards <= known[at], f"a {p['kind']} payload holds {cards - known[at]}, unseen by the seat then"
        assert not cards & hidden[at]
        sent |= cards
    assert at == len(known) - 1  # the last view is the match's last position
    # And the audit's own information check (check 6) passes on the messages the page received.
    messages = [json_format.ParseDict(p["message"], bot_pb2.RefereeMessage()) for p in payloads
                if p["kind"] not in ("replay", "error", *NOTICES)]
    by_seat: list[list[bot_pb2.RefereeMessage]] = [[] for _ in players]
    by_seat[seat] = messages
    assert check_information(replay, by_seat) >= 20
    assert any(hidden), "the others held cards the seat had not seen (the check can fail)"
    return sent


BYTES_FIELDS = frozenset({"seedCommitment", "seed", "nonce", "nonces"})
"""The messages' ``bytes`` fields, in base64 in the payloads' JSON: "+7d/" in a random seed
commitment is no seven of diamonds (it once failed the check, by chance, 1 in a few hundred runs)."""


def _without_bytes(value: Any) -> Any:
    """``value`` (a payload's JSON) without its ``bytes`` fields (:data:`BYTES_FIELDS`)."""
    if isinstance(value, dict):
        return {k: _without_bytes(v) for k, v in value.items() if k not in BYTES_FIELDS}
    if isinstance(value, list):
        return [_without_bytes(v) for v in value]
    return value


def _strip(view: dict[str, Any]) -> dict[str, Any]:
    """A description without the game's scores (a view rebuilt from the replay does not know them)."""
    return {k: v for k, v in view.items() if k != "scores"}


class _Reader:
    """A seat's event stream read over HTTP on a worker thread: its payloads as they come."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        self.conn.request("GET", parts.path, headers={"Accept": "text/event-stream"})
        self.sock = self.conn.sock
        self.payloads: list[dict[str, Any]] = []

    def run(self) -> None:
        try:
            for raw in self.conn.getresponse():
                line = raw.decode()
                if line.startswith("data: ") and line != "data: {}\n":
                    self.payloads.append(json.loads(line[6:]))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # shut down by the test mid-read (http.client then reads an empty chunk size, or no file)

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()

    def request(self) -> list[str] | None:
        """The open request's legal moves, if the latest payload is a request."""
        if not self.payloads or self.payloads[-1]["kind"] != "action_request":
            return None
        return [m["id"] for m in self.payloads[-1]["view"]["legal"]]


def test_a_forged_move_gets_the_referees_error_and_the_computer_players_are_bounded(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path / "srv", WebLimits(computer_players=1)) as s:
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            opened = await fetch(s.url + "/play", "POST", form, b"game=gin&preset=short&bot=random")
            assert opened.status == 200, opened.text  # urllib follows the 303 to the seat's page
            assert opened.headers["cache-control"] == "no-store"
            found = re.search(r'data-move="/play/t/([^/"]+)/move"', opened.text)
            assert found is not None, opened.text
            base = f"{s.url}/play/t/{found.group(1)}"
            full = await fetch(s.url + "/play", "POST", form, b"game=gin&preset=short&bot=random")
            assert full.status == 503 and "limit computer_players" in full.text
            wrong = await fetch(s.url + "/play", "POST", form, b"game=gin&preset=nope&bot=random")
            assert wrong.status == 400 and "preset 'nope': gin has " in html.unescape(wrong.text)
            reader = await trio.to_thread.run_sync(_Reader, base + "/events")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.to_thread.run_sync, reader.run)
                await until(lambda: _true(reader.request() is not None), "the person's first request")
                legal = reader.request()
                assert legal
                before = len(reader.payloads)
                bad = await fetch(base + "/move", "POST", {"Content-Type": "application/json"},
                                  json.dumps({"action": "fly away"}).encode())
                assert bad.status == 400 and "no move of this game" in bad.json()["error"], bad.text
                illegal = "draw_stock" if not any(a == "draw_stock" for a in legal) else "discard 2c"
                forged = await fetch(base + "/move", "POST", {"Content-Type": "application/json"},
                                     json.dumps({"action": illegal}).encode())
                assert forged.status == 422, forged.text
                assert forged.json()["error"].startswith(f"the referee refused {illegal!r}: "), forged.text
                # The page's stream got the referee's rejection; the request stays open.
                await until(lambda: _true(len(reader.payloads) > before), "the rejection in the stream")
                rejected = reader.payloads[before]
                assert rejected["kind"] == "action_rejected", rejected
                assert forged.json()["error"].endswith(rejected["message"]["actionRejected"]["reason"])
                assert [m["id"] for m in rejected["view"]["legal"]] == legal
                good = await fetch(base + "/move", "POST", {"Content-Type": "application/json"},
                                   json.dumps({"action": legal[0]}).encode())
                assert good.status == 200, good.text
                reader.close()
            nobody = await fetch(s.url + "/play/t/not-a-seat/move", "POST", {"Content-Type": "application/json"},
                                 b"{}")
            assert nobody.status == 404
            assert (await fetch(s.url + "/api/standings", "POST")).status == 405  # the rest stays read-only

    referee.run(main)


async def _true(value: bool) -> bool:
    return value
