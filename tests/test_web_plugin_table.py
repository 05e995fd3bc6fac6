"""A person plays the tests' plugin game (``toy3``, tests/plugin_game) in real headless Chromium at
``/play``, against two of its own sample bots — which the game lists on its registration
(``Registered.bots``), so no file of the project names the game or its bots: the form is offered
because the game is installed. Each bot runs as its own process (``toy3_game.bot --strategy
high``: it plays its highest card, where the referee's substitute would play the lowest, so the
replay shows the real bots played); the person plays by clicking; the page never showed a card
seat 0 could not know."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import referee
from tests._web import served, until
from tests.test_web_browser import _driver, _js
from tests.test_web_tables import _click, seat_page

SEATS = 3
"""The person and two computers."""
STATE = """
const b = document.body;
return {over: b.dataset.over === 'yes', closed: b.dataset.closed === 'yes',
        moves: [...document.querySelectorAll('#moves button[data-action]')].map(e => e.dataset.action),
        cards: [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card),
        n: (window.__tablePayloads || []).length};"""
FORM = """
const f = document.querySelector('form[data-game="toy3"]');
return f ? {bots: [...f.querySelectorAll('select[name=bot] option')].map(o => o.value),
            seats: [...f.querySelectorAll('select[name=seats] option')].map(o => o.value),
            chosen: f.querySelector('select[name=seats]').value} : null;"""


def _open_table(driver: Any, url: str) -> None:
    driver.get(url + "/play")
    form = driver.find_element(By.CSS_SELECTOR, 'form[data-game="toy3"]')
    Select(form.find_element(By.NAME, "bot")).select_by_value("high")
    Select(form.find_element(By.NAME, "preset")).select_by_value("standard")
    Select(form.find_element(By.NAME, "seats")).select_by_value(str(SEATS))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def test_a_person_plays_the_plugin_game_in_the_browser_against_its_own_sample_bots(tmp_path: Path) -> None:
    driver = _driver(tmp_path / "profile")
    seen: list[list[str]] = []  # the cards the page showed at each of the person's turns

    async def main() -> tuple[Any, dict[str, Any]]:
        async with served(tmp_path / "srv") as s:
            await trio.to_thread.run_sync(driver.get, s.url + "/play")
            form = await _js(driver, FORM)
            await seat_page(driver, s.url, _open_table)
            while not (state := await _js(driver, STATE))["over"]:
                if not state["moves"]:
                    await trio.sleep(0.05)
                    continue
                seen.append(state["cards"])
                move = min(state["moves"], key=int)  # the person plays low
                await trio.to_thread.run_sync(_click, driver, f'#moves button[data-action="{move}"]')

                async def answered(n: int = state["n"]) -> bool:
                    now = await _js(driver, STATE)
                    return bool(now["n"] > n or now["over"])
                await until(answered, f"the referee's answer to {move!r}")

            async def closed() -> bool:
                return bool((await _js(driver, STATE))["closed"])
            await until(closed, "the stream's end")
            (table,) = [t for t in s.ref.tables.values() if t.match_id.startswith("table-")]
            await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal", table.report
            assert not table.report.substituted_seats, table.report
            return table.report, form

    try:
        report, form = referee.run(main)
    finally:
        driver.quit()
    assert form == {"bots": ["high", "low"], "seats": ["2", "3", "4", "5", "6"], "chosen": "3"}, form
    records = [json.loads(line) for line in Path(report.replay_path).read_text().splitlines()]
    assert records[0]["game"] == "toy3" and records[0]["players"][0] == "you", records[0]
    assert seen, "the person was never asked to move"
    deals = [r for r in records if r.get("type") == "deal"]
    moves = [r for r in records if r.get("type") == "action"]
    assert len(deals) == 2 and len(moves) == 2 * 2 * SEATS, (len(deals), len(moves))  # 2 games, 2 cards a seat
    per_game: list[list[dict[str, Any]]] = []
    for r in records:  # each deal's moves follow its deal record
        if r.get("type") == "deal":
            per_game.append([])
        elif r.get("type") == "action":
            per_game[-1].append(r)
    for deal, played in zip(deals, per_game, strict=True):
        deck = [str(c) for c in deal["deck"]]
        hands = {s: sorted(int(c) for c in deck[2 * s:2 * s + 2]) for s in range(SEATS)}
        for r in played:
            seat, card = int(r["seat"]), int(r["action"])
            pick = max if seat else min  # the bots played high (the substitute would play low); the person low
            assert card == pick(hands[seat]), (seat, card, hands[seat])
            hands[seat].remove(card)
    # The page showed seat 0 only its own cards and the cards played: never another hand's.
    first = deals[0]["deck"]
    mine = {str(c) for c in first[0:2]}
    others = {str(c) for c in first[2:2 * SEATS]}
    played_before_me = {str(r["action"]) for r in per_game[0] if int(r["seat"]) != 0}
    shown = set(seen[0])
    assert mine <= shown, (mine, shown)
    assert not (shown & others) - played_before_me, (shown, others, played_before_me)
