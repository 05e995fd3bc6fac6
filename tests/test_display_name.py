"""A game's display name (issue 30): declared on its registration (``Registered.display_name``:
"Gin", "Rummy", the tests' plugin game its own), translated by the game's own catalogs, shown by
the viewers and the web instead of the registry's name, and checked by ``arena games --check``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import main as arena_main
from arena.replays import html as replay_html
from arena.replays import model as replay_model
from arena.replays import view as replay_view
from arena.web import i18n
from referee import games

OLD_GIN_REPLAY = (Path(__file__).parent / "fixtures" / "v0_1" / "demo_run" / "replays" / "run-f5e532-g0002.jsonl")
"""A replay gin-arena 0.1 wrote (a game of Gin)."""
NAMELESS = "toy3-nameless"
"""The tests' plugin game registered in process without a display name."""


@pytest.fixture
def nameless() -> Iterator[str]:
    games.register(NAMELESS, lambda: dataclasses.replace(games.get("toy3"), display_name=""))
    try:
        yield NAMELESS
    finally:
        games.unregister(NAMELESS)


def test_every_game_declares_its_display_name() -> None:
    assert {name: games.get(name).display_name for name in ("gin", "rummy", "toy3")} == {
        "gin": "Gin", "rummy": "Rummy", "toy3": "High cards"}
    assert [games.display_name(n) for n in ("gin", "rummy", "toy3")] == ["Gin", "Rummy", "High cards"]
    assert games.display_name("chess") == "chess"  # a game not installed (an old run's): its key, no error


@pytest.mark.parametrize(("text", "says"), [
    ("", "no display name"), (" Gin", "without blanks around it"), ("Gin\nRummy", "not one line"),
    ("x" * (games.DISPLAY_NAME_MAX + 1), f"1-{games.DISPLAY_NAME_MAX} characters"),
])
def test_a_bad_display_name_is_a_problem(text: str, says: str) -> None:
    problem = games.check_display_name(text)
    assert problem is not None and says in problem
    assert games.check_display_name("Crazy eights") is None


@pytest.mark.usefixtures("nameless")
def test_arena_games_check_fails_on_a_game_without_a_display_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert games.display_name(NAMELESS) == NAMELESS  # the viewers fall back to the registry's name
    assert arena_main(["games", "--check"]) == 1
    err = capsys.readouterr().err
    assert f"arena: warning: game {NAMELESS!r}: no display name (games.Registered(display_name=" in err, err
    assert "game 'toy3':" not in err and "game 'gin':" not in err, err
    assert arena_main(["games", "--json"]) == 0
    listed = {g["name"]: g["display_name"] for g in json.loads(capsys.readouterr().out)}
    assert listed["gin"] == "Gin" and listed["toy3"] == "High cards" and listed[NAMELESS] == ""


def test_the_web_says_a_games_name_in_the_pages_language() -> None:
    assert [i18n.lang(code).game_name("gin") for code in i18n.LANGUAGES] == ["Gin", "Джин", "Джин"]
    assert [i18n.lang(code).game_name("rummy") for code in i18n.LANGUAGES] == ["Rummy", "Рами", "Рамми"]
    assert i18n.lang("bg").game_name("toy3") == "High cards"  # no catalog: the game's English
    assert i18n.lang("ru").game_name("chess") == "chess"
    data = json.loads(i18n.lang("ru").script_data())
    assert data["game_names"]["gin"] == "Джин" and data["game_names"]["toy3"] == "High cards"


def test_the_replay_viewers_show_the_display_name() -> None:
    view = replay_model.load(OLD_GIN_REPLAY)
    assert view.game == "gin"
    assert "(Gin, 2 seats)" in replay_view.header_text(view)
    page = replay_html.replay_page(view)
    assert "Gin (2 seats)" in page and "· gin ·" not in page and "gin (2 seats)" not in page
