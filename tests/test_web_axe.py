"""axe-core on the live web's pages in real Chromium (docs/web.md#accessibility): home, play,
lobby, the rules (index and each game's page, in Bulgarian too), the standings, the matches, a
bot's page, a finished match's replay, a running match's live view mid-deal, the doors, the
people's standings — at a phone's width, no serious or critical violation of WCAG 2.1 A/AA or
axe's best practices, and nothing that scrolls sideways. axe-core comes from npm
(``tests/axe/package-lock.json``, installed by ``.ci/run``), and the test gives it to the page
itself (no CDN). Every violation found (of any impact) is kept in ``test-artifacts/axe/``, with a screenshot of
the page checked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio

import referee
from tests._bots import Client
from tests._web import fetch, play, served, slow, spec, until
from tests.test_web_browser import _driver, _js

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core's script, as npm installed it."""
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "axe"
"""Where every page's violations are written."""
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
"""The rule sets run."""
FAILING = ("serious", "critical")
"""The impacts that fail the test."""
PAGES = ("/", "/play", "/lobby", "/rules", "/rules/gin", "/rules/rummy", "/rules/rummy?lang=bg", "/standings",
         "/matches", "/bots/alpha", "/matches/m-1", "/signin", "/signup", "/people", "/?lang=ru")
"""The pages checked (``/matches/m-1``: the finished match's replay)."""
PHONE = (390, 844)
"""The window the pages are checked in (a phone's): no sideways scroll there either."""


def _axe_source() -> str:
    if not AXE.is_file():
        why = f"{AXE} missing: install it with (cd tests/axe && npm ci) (.ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return AXE.read_text(encoding="utf-8")


def run_axe(driver: Any, source: str) -> list[dict[str, Any]]:
    """axe-core's violations on the page the driver shows (the script given to the page by
    WebDriver, not loaded from anywhere)."""
    driver.execute_script(source)
    driver.set_script_timeout(120)
    found: dict[str, Any] = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"axe.run(document, {{runOnly: {{type: 'tag', values: {json.dumps(RULES)}}}, resultTypes: ['violations']}})"
        ".then(r => done({passes: r.passes.length, violations: r.violations.map(v => ({id: v.id, impact: v.impact,"
        " help: v.help, nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary}))}))}))"
        ".catch(e => done({error: String(e)}));")
    assert "error" not in found, found
    assert found["passes"] >= 10, found  # (the rules ran on this page: a clean report means something)
    violations: list[dict[str, Any]] = found["violations"]
    return violations


def _check(driver: Any, source: str, path: str) -> dict[str, list[str]]:
    """axe on the page shown (``path``): its violations kept in ``ARTIFACTS``, the serious and
    critical ones returned by page."""
    violations = run_axe(driver, source)
    name = path.strip("/").replace("/", "_").replace("?", "_") or "home"
    (ARTIFACTS / f"{name}.json").write_text(json.dumps(violations, indent=1, ensure_ascii=False))
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))  # (what was checked, to look at)
    bad = [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:5]}"
           for v in violations if v["impact"] in FAILING]
    return {path: bad} if bad else {}


def test_axe_finds_no_serious_or_critical_violation_on_the_sites_pages(tmp_path: Path) -> None:
    source = _axe_source()
    driver = _driver(tmp_path / "profile")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            u = s.url
            await play(s, ("alpha", "beta"), "m-1")

            async def rated() -> bool:
                return len((await fetch(u + "/api/standings")).json()["standings"]) == 2
            await until(rated, "the match in the standings")
            failures = {}
            await trio.to_thread.run_sync(driver.set_window_size, *PHONE)
            for path in PAGES:
                await trio.to_thread.run_sync(driver.get, u + path)
                ready = await _js(driver, "return document.readyState")
                assert ready == "complete", path
                # At a phone's width nothing scrolls sideways (a wide table scrolls in its own box).
                wide = await _js(driver, "return [document.documentElement.scrollWidth, window.innerWidth]")
                assert wide[0] <= wide[1], (path, wide)
                failures.update(await trio.to_thread.run_sync(_check, driver, source, path))
            # A running match's live spectator view, mid-deal (two slow bots keep it there).
            table = s.ref.create_match(spec(("north", "south"), "live-1"))
            async with trio.open_nursery() as nursery:
                for seat, link in enumerate(table.links):
                    nursery.start_soon(referee.aio, Client(s.ref.address, link.token, name=table.spec.players[seat])
                                       .play(slow(1.0)))
                await trio.to_thread.run_sync(driver.get, u + "/matches/live-1")

                async def dealt() -> bool:
                    return bool(await _js(driver, "return !!document.querySelector('#live .card')"))
                await until(dealt, "the live view's cards")
                failures.update(await trio.to_thread.run_sync(_check, driver, source, "/matches/live-1"))
                nursery.cancel_scope.cancel()
            assert not failures, json.dumps(failures, indent=1, ensure_ascii=False)

    try:
        referee.run(main)
    finally:
        driver.quit()


def test_the_axe_check_sees_a_violation(tmp_path: Path) -> None:
    """The check itself: a page with an image without a text alternative and a button without a
    name is reported (critical), so a clean report means something."""
    source = _axe_source()
    driver = _driver(tmp_path / "profile")
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html lang="en"><head><title>bad</title></head><body><main>'
                    '<img src="x.png"><button></button></main></body></html>', encoding="utf-8")
    try:
        driver.get(page.as_uri())
        found = {v["id"]: v["impact"] for v in run_axe(driver, source)}
        assert found.get("image-alt") == "critical" and found.get("button-name") == "critical", found
    finally:
        driver.quit()


def test_axe_finds_no_serious_or_critical_violation_at_a_table_mid_game(tmp_path: Path) -> None:
    """The people's table while it is the person's turn (cards, piles and moves drawn; at a
    phone's width, nothing scrolling sideways) and the lobby with the table running."""
    from tests.test_web_tables import STATE, _open_table, seat_page

    source = _axe_source()
    driver = _driver(tmp_path / "profile")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    async def main() -> None:
        async with served(tmp_path / "srv") as s:
            await trio.to_thread.run_sync(driver.set_window_size, *PHONE)
            await seat_page(driver, s.url, _open_table)

            async def my_turn() -> bool:
                return bool((await _js(driver, STATE))["moves"])
            await until(my_turn, "the person's turn at the table")
            wide = await _js(driver, "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert wide[0] <= wide[1], wide
            failures = await trio.to_thread.run_sync(_check, driver, source, "/play/t/table")
            await trio.to_thread.run_sync(driver.get, s.url + "/lobby")
            failures.update(await trio.to_thread.run_sync(_check, driver, source, "/lobby/running"))
            assert not failures, json.dumps(failures, indent=1, ensure_ascii=False)

    try:
        referee.run(main)
    finally:
        driver.quit()
