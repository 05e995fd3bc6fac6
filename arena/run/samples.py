"""Each game's sample bots, as the game registers them (``referee.games.Registered.bots`` and
``.demo``): ``arena demo --game NAME`` plays them, ``arena play`` seats one against a person, and
the live web's tables offer them as the computer's players. Every installed game is offered the
same way — Gin's and Rummy's registrations list theirs exactly as a plugin lists its own — so the
arena names no game and no bot module.

Beside them, the JavaScript sample bot (``sample_bots/js``) joins the demo (and ``arena play
--bot js``) of each game its ``package.json`` lists under ``arenaGames``."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import sys
from pathlib import Path

from arena.model.manifest import PYTHON_PLACEHOLDER
from referee import BotLaunch, games
from referee.games import SampleBot

JS_BOT = "js"
"""The JavaScript sample bot's name (``sample_bots/js/bot.js``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Samples:
    """One game's sample bots and its demo's tables."""

    game: str
    """The game's registry name."""
    bots: tuple[SampleBot, ...]
    """Its sample bots, as it registers them."""
    seats: int
    """Seats of every demo table (the registration's, else the fewest the game allows)."""
    games: int
    """Games per demo table (0: the demo's default spread)."""
    opponent: str
    """The bot ``arena play`` seats by default ("": the game has none)."""

    def bot(self, name: str) -> SampleBot | None:
        """The sample bot named ``name``, or ``None``."""
        return next((b for b in self.bots if b.name == name), None)


def samples(game: str) -> Samples:
    """``game``'s sample bots and demo (``ValueError`` naming the problem for a game that cannot be
    used: unknown, broken, …)."""
    reg = games.get(game)
    demo = reg.demo
    return Samples(game, reg.bots, demo.seats or reg.game.seat_counts()[0], demo.games,
                   demo.opponent or (reg.bots[0].name if reg.bots else ""))


QUIET = (("GIN_LOG_LEVEL", "WARNING"),)
"""The environment of a sample bot that plays for a person's table or ``arena play``: it logs only
warnings (nobody reads its log there)."""


def launch(bot: SampleBot, name: str, log_path: str = "") -> BotLaunch:
    """How a sample bot plays one seat as ``name`` (started by ``referee.run_bot``): ``{python}``
    replaced (also inside an argument), ``--referee`` and ``--name`` appended and its token in the
    environment alone (``GIN_TOKEN``: ``ps`` shows a command line to everyone), logging warnings
    only, its output in ``log_path`` (``""``: dropped)."""
    return BotLaunch(command=tuple(part.replace(PYTHON_PLACEHOLDER, sys.executable) for part in bot.command),
                     env=QUIET, token_in_argv=False, name=name, log_path=log_path)


def sample_root() -> Path | None:
    """The folder holding the ``sample_bots`` package (the checkout), or ``None`` without it."""
    spec = importlib.util.find_spec("sample_bots")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


@functools.cache
def js_games() -> tuple[str, ...]:
    """The games the JavaScript sample bot plays (its ``package.json``'s ``arenaGames``)."""
    root = sample_root()
    if root is None:
        return ()
    try:
        meta = json.loads((root / "sample_bots" / "js" / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    listed = meta.get("arenaGames", []) if isinstance(meta, dict) else []
    return tuple(g for g in listed if isinstance(g, str))
