""""Play the computer: easy / medium / hard" (issue 33): the difficulty offered for a game comes
from its registration (``SampleBot.level``); a person in real headless Chromium picks "hard" and
the game's hard sample bot is seated and started against them. The levels of today's bots, the
refusal of a level a game does not offer, and the words in every language."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import referee
from arena.web.i18n import lang
from arena.web.pages import tables as table_pages
from arena.web.pages.tables import LEVEL_WORDS
from arena.web.table_model import Place, Settings, Table, TableError, choices
from arena.web.tables import Room
from referee import games
from tests._web import served, until
from tests.test_web_browser import _driver, _js
from tests.test_web_tables import seat_page


def _pick_hard(driver: Any, url: str) -> None:
    driver.get(url + "/play")
    form = driver.find_element(By.CSS_SELECTOR, 'form[data-game="gin"]')
    levels = Select(form.find_element(By.NAME, "level"))
    assert [o.get_attribute("value") for o in levels.options] == ["easy", "medium", "hard"]
    assert levels.first_selected_option.get_attribute("value") == "easy"
    assert Select(form.find_element(By.NAME, "bot")).first_selected_option.get_attribute("value") == ""
    levels.select_by_value("hard")
    Select(form.find_element(By.NAME, "preset")).select_by_value("short")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def _bot_processes(module: str, address: str) -> list[str]:
    """The command lines of the processes running ``module`` that were told ``address``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if module in cmd and address in cmd:
            found.append(cmd)
    return found


def test_a_person_picks_hard_and_the_hard_bot_is_seated(tmp_path: Path) -> None:
    hard = next(b for b in games.get("gin").bots if b.level == "hard")
    module = hard.command[-1]
    driver = _driver(tmp_path / "profile")

    async def main() -> tuple[str, list[str]]:
        async with served(tmp_path / "srv") as s:
            await seat_page(driver, s.url, _pick_hard)
            title = str(await _js(driver, "return document.title"))
            players = str(await _js(driver, "return document.body.dataset.players || ''"))

            async def started() -> bool:
                return bool(_bot_processes(module, s.ref.address))
            await until(started, f"the hard bot ({module}) to be started for the table")
            return title + players, _bot_processes(module, s.ref.address)

    try:
        shown, procs = referee.run(main)
    finally:
        driver.quit()
    assert hard.name in shown
    assert any(f"--name {hard.name}" in cmd for cmd in procs), procs


def test_the_levels_come_from_the_registrations() -> None:
    by_game = {c.game: dict(c.levels) for c in choices()}
    assert by_game["gin"] == {"easy": "random", "medium": "greedy", "hard": "expert"}
    assert by_game["rummy"] == {"easy": "random", "medium": "hoarder", "hard": "greedy"}
    for level, bot in by_game["gin"].items():  # (the first bot of a level, as its registration lists them)
        assert next(b.name for b in games.get("gin").bots if b.level == level) == bot
    assert set(LEVEL_WORDS) == set(games.LEVELS)
    with pytest.raises(ValueError, match="level 'expert' is not one of easy, medium, hard"):
        games.SampleBot("x", ("x",), "expert")


def test_a_level_the_game_does_not_offer_is_refused_in_the_persons_language() -> None:
    with pytest.raises(TableError) as e:
        Room._of_level("gin", "impossible")
    assert e.value.status == 400 and e.value.message == "difficulty 'impossible': gin offers easy, medium, hard"
    assert e.value.say(lang("ru")) == "сложность 'impossible': gin предлагает easy, medium, hard"


def test_the_host_filling_a_seat_sees_each_bots_difficulty_in_their_language() -> None:
    settings = Settings("gin", "short", None, 2, 30.0, False, ("random", "greedy", "expert"))
    page = table_pages.seat(lang("ru"), Table("c0de", settings, [Place(), Place()]), "s3cret", 0, True)
    assert json.loads(page.data["levels"]) == {"random": "легко", "greedy": "средне", "expert": "сложно",
                                              "eaai-simple": "средне", "mc": "сложно",
                                              "hand-reader": "сложно"}
    script = (Path(__file__).resolve().parent.parent / "arena" / "web" / "static" / "people.js").read_text()
    assert "body.dataset.levels" in script and "levels[b]" in script  # (the seat list's choice shows them)
