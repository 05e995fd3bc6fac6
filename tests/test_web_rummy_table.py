"""A person plays Rummy at a four-seat table against three sample bots (each its own process) in
real headless Chromium, on a 390×844 screen, by tapping: melds and lay-offs are chosen by
selecting their cards in the hand (the move buttons narrow to the moves using them; with nothing
selected the melds are one button naming how many ways there are), discards by tapping a card and
then "discard" (or its number key). At every turn the page has no sideways scroll and every touch
target is at least 44 px; the table's melds show who laid each card; the match's end shows every
hand and the points, with a replay link and a rematch; everything the page received is checked
against the replay (``tests.test_web_tables.check_payloads``): no card seat 0 could not see.
Screenshots at the start and at the first deal's end are kept under ``test-artifacts/``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import trio
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import referee
from tests._web import fetch, served, until
from tests.test_web_browser import _driver, _js
from tests.test_web_tables import ARTIFACTS, _click, check_payloads, seat_page

SEATS = 4
"""The table's seats: the person and three computers."""
WIDTH, HEIGHT = 390, 844
"""The phone-sized window."""
TOUCH_PX = 44
"""The least width and height of a touch target."""
STATE = """
const b = document.body;
const ps = window.__tablePayloads || [];
let view = null;
for (const p of ps) if (p.view) view = p.view;
const rect = (e) => e.getBoundingClientRect();
return {over: b.dataset.over === 'yes', closed: b.dataset.closed === 'yes',
        moves: [...document.querySelectorAll('#moves button[data-action]')].map(e => e.dataset.action),
        groups: [...document.querySelectorAll('#moves button[data-kind]')].map(e => e.dataset.kind),
        legal: view ? view.legal : [],
        hand: [...document.querySelectorAll('#me [data-card]')].map(e => e.dataset.card),
        loose: [...document.querySelectorAll('#me .loose [data-card]')].map(e => e.dataset.card),
        selection: document.getElementById('selection').textContent,
        selected: [...document.querySelectorAll('#selection [data-card]')].map(e => e.dataset.card),
        cards: [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card),
        others: document.querySelectorAll('#opponent .other').length,
        mine: [...document.querySelectorAll('.tmeld[data-owner="0"] [data-by="0"]')].length,
        end: !document.getElementById('end').hidden,
        width: document.documentElement.scrollWidth,
        small: [...document.querySelectorAll('button, select, a, #me [data-card]')]
               .filter(e => rect(e).width > 0 && (rect(e).width < TOUCH || rect(e).height < TOUCH))
               .map(e => e.outerHTML.slice(0, 120)),
        turn: b.classList.contains('your-turn'), n: ps.length};""".replace("TOUCH", str(TOUCH_PX))
END = """
const end = document.getElementById('end');
return {seats: end.querySelectorAll('.seat').length, text: end.textContent,
        status: document.getElementById('status').textContent,
        log: [...document.querySelectorAll('#log li')].map(e => e.textContent),
        replay: (document.querySelector('#replay a') || {}).href || '',
        rematch: !!document.getElementById('rematch-button')};"""
RANK = "A23456789TJQK"
END_PANEL = """
const end = document.getElementById('end');
const ps = window.__tablePayloads || [];
const done = ps.filter(p => p.kind === 'deal_finished');
const last = done.length ? done[done.length - 1] : null;
return {rows: [...end.querySelectorAll('.seat')].map(r => ({seat: Number(r.dataset.seat), text: r.textContent,
                 cards: [...r.querySelectorAll('.penalty [data-card]')].map(e => e.dataset.card)})),
        melds: [...end.querySelectorAll('.end-table .tmeld')].map(r =>
                 [...r.querySelectorAll('[data-card]')].map(e => [e.dataset.card, Number(e.dataset.by)])),
        text: end.textContent, end: last && last.view ? last.view.end : null,
        result: last ? last.message.dealFinished.result : null};"""
"""The deal's end panel as drawn, and the end the page was sent with the last ``deal_finished``."""


def _open_table(driver: Any, url: str) -> None:
    driver.get(url + "/play")
    form = driver.find_element(By.CSS_SELECTOR, 'form[data-game="rummy"]')
    Select(form.find_element(By.NAME, "bot")).select_by_value("greedy")
    Select(form.find_element(By.NAME, "preset")).select_by_value("rummy")
    Select(form.find_element(By.NAME, "seats")).select_by_value(str(SEATS))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def _plan(state: dict[str, Any]) -> tuple[str, list[str]]:
    """A person's simple play: lay a meld, else lay off, else take a discard (offered only when
    it can be used at once: a meld or a lay-off follows), else draw, else shed the highest
    deadwood; the move and the hand's cards to select for it (none: press its button)."""
    legal = state["legal"]
    for kind in ("meld", "lay_off"):
        found = [m for m in legal if m["kind"] == kind]
        if found:
            return found[0]["id"], list(found[0]["cards"])
    ids = [m["id"] for m in legal]
    for kind in ("take_discard", "draw_stock"):
        found = [m for m in ids if m.split()[0] == kind]
        if found:
            return found[0], []
    discards = [m for m in legal if m["kind"] == "discard"]
    if discards:
        shed = [m for m in discards if m["cards"][0] in state["loose"]] or discards
        best = max(shed, key=lambda m: RANK.index(m["cards"][0][0]))
        return best["id"], list(best["cards"])
    return ids[0], []


async def play_turn(driver: Any, state: dict[str, Any]) -> str:
    """One turn's move of the person's simple play (``_plan``): tap its cards in the hand, then its
    button; wait for the referee's answer. Answers the move."""
    move, select = _plan(state)
    for c in select:
        await trio.to_thread.run_sync(_click, driver, f'#me [data-card="{c}"]')
    await trio.to_thread.run_sync(_click, driver, f'#moves button[data-action="{move}"]')

    async def answered() -> bool:
        now = await _js(driver, STATE)
        return bool(now["n"] > state["n"] or now["over"])
    await until(answered, f"the referee's answer to {move!r}")
    return move


def test_a_person_plays_rummy_at_four_seats_against_three_bots_by_selecting_cards(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile")
    driver.set_window_size(WIDTH, HEIGHT)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots: dict[str, Path] = {}
    samples: list[dict[str, Any]] = []
    did: dict[str, int] = {"meld": 0, "lay_off": 0, "discard": 0, "keyboard": 0, "grouped": 0, "offered": 0}
    panels: list[dict[str, Any]] = []  # the deal's end panel, at the first deal's end and the match's

    async def shot(name: str) -> None:
        if name not in shots:
            shots[name] = tmp_path / f"rummy-{name}.png"
            await trio.to_thread.run_sync(driver.save_screenshot, str(shots[name]))

    async def main() -> tuple[str, list[dict[str, Any]]]:
        async with served(tmp_path / "srv") as s:
            table_url = await seat_page(driver, s.url, _open_table)
            while not (state := await _js(driver, STATE))["over"]:
                if state["moves"] or state["groups"]:  # the person's turn: the page fits, then a move
                    assert state["width"] <= WIDTH, "the table scrolls sideways at 390 px"
                    assert not state["small"], f"touch targets under {TOUCH_PX} px: {state['small']}"
                    samples.append(state)
                    assert state["turn"] and state["others"] == SEATS - 1
                    await shot("start")
                    move, select = _plan(state)
                    kind = move.split()[0]
                    if any(m["kind"] == "meld" for m in state["legal"]):
                        did["offered"] += 1
                        # nothing selected: the melds are one button naming their number, no meld's own
                        assert "meld" in state["groups"] and not any(m.startswith("meld ") for m in state["moves"])
                        did["grouped"] += 1
                    for c in select:
                        await trio.to_thread.run_sync(_click, driver, f'#me [data-card="{c}"]')
                    if select:
                        now = await _js(driver, STATE)
                        shown = (now["selection"], now["selected"], select)
                        assert now["selection"].startswith("selected: "), shown
                        assert sorted(now["selected"]) == sorted(select), shown
                        legal = {m["id"]: m["cards"] for m in state["legal"]}
                        assert move in now["moves"] and all(set(select) <= set(legal[m]) for m in now["moves"])
                        assert now["moves"][0] == move or len(legal[now["moves"][0]]) == len(select), now["moves"]
                        assert not now["small"] and now["width"] <= WIDTH, now["small"]
                    if kind == "discard" and did["discard"] % 3 == 0:  # by keyboard: the narrowed list's number
                        now = await _js(driver, STATE)
                        page = await trio.to_thread.run_sync(driver.find_element, By.TAG_NAME, "body")
                        await trio.to_thread.run_sync(page.send_keys, str(now["moves"].index(move) + 1))
                        did["keyboard"] += 1
                    else:
                        await trio.to_thread.run_sync(_click, driver, f'#moves button[data-action="{move}"]')
                    did[kind] = did.get(kind, 0) + 1

                    async def answered(n: int = state["n"]) -> bool:
                        now = await _js(driver, STATE)
                        return bool(now["n"] > n or now["over"])
                    await until(answered, f"the referee's answer to {move!r}")
                    if kind == "meld":  # the table shows the meld as the person's, each card laid by seat 0
                        async def on_table(laid: int = len(select)) -> bool:
                            return int((await _js(driver, STATE))["mine"]) >= laid
                        await until(on_table, "the person's meld on the table")
                elif state["end"] and "showdown" not in shots:
                    panels.append(await _js(driver, END_PANEL))
                    await _js(driver, "document.getElementById('end').scrollIntoView()")
                    await shot("showdown")
                else:
                    await trio.sleep(0.05)
            samples.append(state)

            async def closed() -> bool:
                return bool((await _js(driver, STATE))["closed"])
            await until(closed, "the stream's end")
            end = await _js(driver, END)
            panels.append(await _js(driver, END_PANEL))
            final = await _js(driver, STATE)
            assert final["width"] <= WIDTH and not final["small"], final["small"]
            if "showdown" not in shots:
                await _js(driver, "document.getElementById('end').scrollIntoView()")
                await shot("showdown")
            payloads = await _js(driver, "return window.__tablePayloads")
            tables = [t for t in s.ref.tables.values() if t.match_id.startswith("table-")]
            assert len(tables) == 1
            table = tables[0]
            await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal", table.report
            # The match's end: every hand (each seat's row) and the points; the replay and a rematch.
            assert end["seats"] == SEATS and "points:" in end["text"], end
            players = list(table.spec.players)
            assert players == ["you", "greedy", "greedy-2", "greedy-3"]
            assert all(p in end["text"] for p in players[1:]), end
            assert re.fullmatch(r"(You|greedy(-\d)?) won the game \d+–\d+", end["status"]), end
            names = {e.split(" ")[0] for e in end["log"]}  # the others' moves by name (all moved, unless
            assert names <= set(players[1:]) and len(names) >= 2, end  # a deal ended before their turn)
            assert not any(e.endswith(": moved") for e in end["log"]), end  # in the game's words
            assert end["replay"] == table_url + "/replay", end
            assert end["rematch"], end
            assert (await fetch(end["replay"])).status == 200
            await trio.to_thread.run_sync(_click, driver, "#rematch-button")  # the rematch: a new table, started

            async def rematched() -> bool:
                here = str(await _js(driver, "return location.href"))
                return "/play/t/" in here and here != table_url
            await until(rematched, "the rematch's seat page")
            title = str(await _js(driver, "return document.title"))
            assert title.endswith("Rummy: you vs greedy vs greedy-2 vs greedy-3 — Gin Arena"), title
            again = [t for t in s.ref.tables.values()
                     if t.match_id.startswith("table-") and t.match_id != table.match_id]
            assert [t.spec.players for t in again] == [table.spec.players]  # started at once, the same seats
            return table.report.replay_path, payloads

    try:
        replay_path, payloads = referee.run(main)
    finally:
        driver.quit()
    for path in shots.values():
        shutil.copy(path, ARTIFACTS / path.name)
    assert set(shots) == {"start", "showdown"}
    print("the person's moves by kind:", did)
    assert did["discard"] >= 1 and did["keyboard"] >= 1, did
    assert did["offered"] == 0 or did["meld"] >= 1, did  # a meld offered was laid by selecting its cards
    assert did["meld"] >= 1, f"no meld was ever legal for the person ({did}): the test proved nothing of melds"
    assert any(p["kind"] == "deal_finished" for p in payloads) and payloads[-1]["kind"] == "replay"
    assert not any(json.dumps(p).count("/play/t/") for p in payloads if p["kind"] != "replay")
    check_end_panels(panels, ["you", "greedy", "greedy-2", "greedy-3"])
    sent = check_payloads(Path(replay_path), payloads, 0)
    for sample in samples:
        assert set(sample["cards"]) <= sent  # every card the page showed was sent


def check_end_panels(panels: list[dict[str, Any]], players: list[str]) -> None:
    """Each deal's end panel drawn from the game's end (not the raw result): a row per seat with its
    name and deal points, every card left in its hand marked as counted, the table's melds with
    who laid each card, and the points and the game's totals as the referee's result has them."""
    assert 1 <= len(panels) <= 2, panels
    for panel in panels:
        end, result = panel["end"], panel["result"]
        assert end is not None and result is not None, panel  # the deal's own end came with it
        assert [r["seat"] for r in panel["rows"]] == list(range(SEATS)), panel["rows"]
        for row, seat in zip(panel["rows"], end["seats"], strict=True):
            name = "You" if row["seat"] == 0 else players[row["seat"]]
            assert row["text"].startswith(name + " · ") and f"deal points {end['points'][row['seat']]}" in row["text"]
            assert sorted(row["cards"]) == sorted([c for g in seat["groups"] for c in g] + seat["loose"]), row
        assert [[by for _c, by in m] for m in panel["melds"]] == [t["placed_by"] for t in end["table"]]
        assert [[c for c, _by in m] for m in panel["melds"]] == [t["cards"] for t in end["table"]]
        assert end["points"] == [int(p) for p in result["rummy"]["points"]], (end, result)
        assert end["totals"] == [int(p) for p in result["scoresAfter"]], (end, result)
        shown = ", ".join(f"{'you' if i == 0 else p} {v}" for i, (p, v) in enumerate(zip(players, end["points"],
                                                                                           strict=True)))
        assert f"points: {shown}" in panel["text"] and "the game so far: " in panel["text"], panel["text"]


def test_the_new_table_form_offers_the_seat_counts_and_refuses_a_bad_one(tmp_path: Path) -> None:
    async def main() -> None:
        from arena.web.limits import WebLimits
        async with served(tmp_path / "srv", WebLimits(computer_players=2)) as s:
            page = await fetch(s.url + "/play")
            assert '<select name="seats">' in page.text and '<option value="6">6</option>' in page.text
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            seven = await fetch(s.url + "/play", "POST", form, b"game=rummy&preset=rummy&bot=greedy&seats=7")
            assert seven.status == 400 and "seats=7: rummy is played by 2, 3, 4, 5, 6 players" in seven.text
            word = await fetch(s.url + "/play", "POST", form, b"game=rummy&preset=rummy&bot=greedy&seats=four")
            assert word.status == 400 and "expected a whole number" in word.text
            gin3 = await fetch(s.url + "/play", "POST", form, b"game=gin&preset=short&bot=random&seats=3")
            assert gin3.status == 400 and "gin is played by 2 players" in gin3.text
            four = await fetch(s.url + "/play", "POST", form, b"game=rummy&preset=rummy&bot=greedy&seats=4")
            assert four.status == 503 and "limit computer_players; 0 running, this table needs 3" in four.text
            three = await fetch(s.url + "/play", "POST", form, b"game=rummy&preset=rummy&bot=random&seats=3")
            assert three.status == 200, three.text  # two computer players: the limit, reached
            more = await fetch(s.url + "/play", "POST", form, b"game=gin&preset=short&bot=random")
            assert more.status == 503 and "limit computer_players; 2 running, this table needs 1" in more.text
            opened = [t for t in s.ref.tables.values() if t.match_id.startswith("table-")]
            assert [t.spec.players for t in opened] == [("you", "random", "random-2")]

    referee.run(main)
