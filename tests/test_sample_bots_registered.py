"""A game's sample bots and demo are part of its registration (``Registered.bots``, ``.demo``):
the registry refuses a malformed one as a broken game, naming what is wrong, and Gin, Rummy and
the tests' plugin game list theirs (the arena's demo, ``arena play`` and the web's tables read
them through ``arena.run.samples``)."""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Callable, Iterator

import pytest
from toy3_game.wire import REGISTERED as TOY3

from arena.replays import game_words
from arena.run import samples
from referee import games

_names = (f"toy3-sample-{i}" for i in itertools.count())


@pytest.fixture
def registered() -> Iterator[Callable[..., str]]:
    """Register toy3 changed as asked under a new name, for one test: the registry is the
    process's, and a broken game left in it would be met by every later test on this worker."""
    names: list[str] = []

    def register(**changes: object) -> str:
        names.append(next(_names))
        games.register(names[-1], lambda: dataclasses.replace(TOY3, **changes))  # type: ignore[arg-type]
        return names[-1]
    yield register
    for name in names:
        games.unregister(name)


@pytest.mark.parametrize(("changes", "says"), [
    ({"bots": ("high",)}, "its bots hold a str, not a referee.games.SampleBot"),
    ({"bots": (games.SampleBot("my bot", ("x",)),)}, "sample bot 'my bot': a name is letters, digits, _ and -"),
    ({"bots": (games.SampleBot("a", ("x",)), games.SampleBot("a", ("y",)))}, "sample bot 'a' is listed twice"),
    ({"bots": (games.SampleBot("a", ()),)}, "sample bot 'a': its command is empty"),
    ({"demo": games.Demo(seats=9)}, "its demo's seats 9 are not among the game's seat counts"),
    ({"demo": games.Demo(games=-1)}, "its demo's games -1 are negative"),
    ({"demo": games.Demo(opponent="nobody")}, "its demo's opponent 'nobody' is not one of its sample bots (high, low)"),
])
def test_a_malformed_registration_is_a_broken_game(changes: dict[str, object], says: str,
                                                   registered: Callable[..., str]) -> None:
    name = registered(**changes)
    with pytest.raises(games.GamePluginError, match=f"game '{name}' is broken: registered in process: .*"):
        games.get(name)
    assert says in games.samples_problem(dataclasses.replace(TOY3, **changes))  # type: ignore[arg-type]
    # A broken game costs only its own words: every other game's are still read (a page never breaks).
    words = game_words.game_words("ru")
    assert name not in words and {"gin", "rummy"} <= set(words)


def test_every_installed_games_samples_as_the_arena_reads_them() -> None:
    gin, rummy, toy3 = samples.samples("gin"), samples.samples("rummy"), samples.samples("toy3")
    assert [b.name for b in gin.bots] == ["random", "greedy", "expert", "eaai-simple", "mc", "hand-reader"]
    assert (gin.seats, gin.opponent) == (2, "greedy")
    assert [b.name for b in rummy.bots] == ["random", "hoarder", "greedy", "mc"]
    assert (rummy.seats, rummy.games, rummy.opponent) == (4, 8, "greedy")
    assert [b.name for b in toy3.bots] == ["high", "low"] and (toy3.seats, toy3.games, toy3.opponent) == (3, 3, "high")
    low = samples.launch(toy3.bots[1], "low-1")
    assert low.argv("127.0.0.1:5", "t" * 32, "low-1") == [  # (the token in GIN_TOKEN alone)
        sys.executable, "-m", "toy3_game.bot", "--strategy", "low", "--referee", "127.0.0.1:5", "--name", "low-1"]
    assert low.environment("127.0.0.1:5", "t" * 32, "low-1")["GIN_TOKEN"] == "t" * 32
    assert samples.js_games() == ("gin", "rummy")
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        samples.samples("chess")


def test_the_js_bots_listed_games_are_the_ones_it_declares() -> None:
    """``arena demo`` seats the JS bot in the games its package.json lists (``arenaGames``): the
    games its Hello declares by default, or it would be refused at a table of a game it does not play."""
    import re

    root = samples.sample_root()
    assert root is not None
    script = (root / "sample_bots" / "js" / "bot.js").read_text(encoding="utf-8")
    found = re.search(r"games: listOption\(env\.GIN_GAMES\) \|\| \[([^\]]*)\]", script)
    assert found is not None, "bot.js's default games"
    assert tuple(re.findall(r"'([^']+)'", found.group(1))) == samples.js_games()
