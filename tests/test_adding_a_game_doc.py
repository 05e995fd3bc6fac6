"""docs/adding-a-game.md documents the whole seam a game author implements: every member of each
protocol of ``referee.games`` (read from the code, so a member added later fails this until the
page names it), every field of the registration, its sample bots and its demo, the optional hooks
the arena looks for, and the conventions the pages depend on (the replay format's content types
read from the replay codec itself). Its ``run`` blocks run in tests/test_docs.py."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from referee import games
from referee.model import replay

PAGE = Path(__file__).resolve().parent.parent / "docs" / "adding-a-game.md"
TEXT = PAGE.read_text(encoding="utf-8")
PROTOCOLS = (games.Game, games.GameMatch, games.GameWire, games.KnowsCards, games.DrawsFirstDealer,
             games.GamePresentation)
"""What a game implements."""
DATACLASSES = (games.Registered, games.SampleBot, games.Demo, games.GamePlugin)
"""What a game fills in."""
OPTIONAL_HOOKS = ("describe", "event_words", "hasty", "deal_end_view")
"""Members the arena uses when a game has them (the protocols' docstrings name them)."""


def _members(cls: type) -> set[str]:
    names = {n for n in vars(cls) if not n.startswith("_")} | set(getattr(cls, "__annotations__", {}))
    return {n for n in names if not n.startswith("_")}


def _named(name: str) -> bool:
    """Whether the page names ``name`` as code: `name`, `name(…)` or `Owner.name`."""
    return re.search(rf"`(?:\w+\.)*{re.escape(name)}[`(]", TEXT) is not None


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda c: c.__name__)
def test_every_member_of_each_protocol_is_documented(protocol: type) -> None:
    members = _members(protocol)
    assert members, protocol
    missing = sorted(m for m in members if not _named(m))
    assert not missing, f"docs/adding-a-game.md does not name these members of {protocol.__name__}: {missing}"
    assert _named(protocol.__name__)


@pytest.mark.parametrize("cls", DATACLASSES, ids=lambda c: c.__name__)
def test_every_field_a_game_fills_in_is_documented(cls: type) -> None:
    assert dataclasses.is_dataclass(cls)
    missing = sorted(f.name for f in dataclasses.fields(cls) if not _named(f.name))
    assert not missing, f"docs/adding-a-game.md does not name these fields of {cls.__name__}: {missing}"
    assert _named(cls.__name__)


def test_the_optional_hooks_and_the_conventions_are_documented() -> None:
    assert [h for h in OPTIONAL_HOOKS if not _named(h)] == []
    for words in ("The rule set's `name` key", "`ActionRequest.events`", '`{"games_won": [...], "totals": [...]}`',
                  "A display name", "arena proto-gen", "gin-arena[codegen]", "arena new-game", "`GIN_TOKEN`"):
        assert words in TEXT, words
    for kind, record in (("deal_end", replay.DealEndRecord), ("game_end", replay.GameEndRecord)):
        arena_keys = [f.name for f in dataclasses.fields(record) if f.name != "content"]
        line = next(x for x in TEXT.splitlines() if x.lstrip().startswith(f"- `{kind}`"))
        block = TEXT[TEXT.index(line):TEXT.index(line) + 400]
        assert all(f"`{k}`" in block for k in arena_keys), (kind, arena_keys, block)


def test_the_content_types_listed_are_the_replay_codecs() -> None:
    """The page lists exactly the annotations a ``deal_end``/``game_end`` content field may have."""
    start = TEXT.index("**Which Python types a content dataclass may use**")
    listed = set(re.findall(r"`([^`]+)`", TEXT[start:TEXT.index("\n- ", start + 1)]))
    assert set(replay._DECODERS) <= listed, set(replay._DECODERS) - listed
