"""Every hook a game declares is used by every viewer, for a plugin game exactly as for Gin and
Rummy (issue 30): the tests' plugin game (``toy3``) packs its content in the envelope's ``other``
(``google.protobuf.Any``), and its wire's ``describe`` writes it for ``arena replay --seat N``
(and ``arena play``), its ``event_words`` for the table page's log of moves — never protobuf's
text of the packed message."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main as arena_main
from arena.replays import seat_lines
from arena.replays.base import Style
from arena.web import table_session
from referee import games, read_replay, resimulate
from referee.replays import ActionRecord
from tests._toy3_match import SEATS, play


def _moves(replay: Path) -> list[str]:
    return [r.action for r in read_replay(replay).records if isinstance(r, ActionRecord)]


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play("toy3", tmp_path_factory.mktemp("toy3"))


def test_a_seats_messages_show_the_plugins_content_in_its_words(replay: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert arena_main(["replay", str(replay), "--seat", "1"]) == 0
    out = capsys.readouterr().out
    assert "type.googleapis.com" not in out and "toy3.v1" not in out, out
    requests = [line for line in out.splitlines() if "action_request" in line]
    events = [line for line in out.splitlines() if " event: " in line]
    assert len(requests) == 2 and len(events) == 2 * SEATS, out
    assert all("legal: play " in line for line in requests), requests
    moves = _moves(replay)
    assert [line.split(" plays ")[1].split(" ·")[0] for line in events] == moves, events


def test_the_tables_log_says_a_plugins_moves_in_its_words(replay: Path) -> None:
    """The table page's log of moves: toy3's ``event_words`` (translatable: template and fields),
    as for Gin and Rummy — where it showed protobuf's text of the packed message."""
    event_words = games.get("toy3").capabilities.event_words
    describe = seat_lines.describer("toy3", Style())
    moves = _moves(replay)
    said = []
    for msg in resimulate(read_replay(replay)).seat_messages[0]:
        if msg.WhichOneof("kind") == "event":
            text, texts = table_session._words(msg, "event", describe, event_words)
            assert texts == {text: ["plays {card}", {"card": text.split()[-1]}]}, texts
            said.append(text)
    assert said == [f"plays {m}" for m in moves]
