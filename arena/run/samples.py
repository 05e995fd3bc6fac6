"""Each game's sample bots, as ``sample_bots/demos.toml`` lists them (data of the ``sample_bots``
package, not code of the arena): ``arena demo --game NAME`` plays them, and the live web's
tables offer them as the computer's player."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import tomllib
from pathlib import Path


@dataclasses.dataclass(frozen=True, slots=True)
class Demo:
    """One game's demo: its sample bots and its tables."""

    samples: tuple[str, ...]
    """The sample bots' names (modules ``sample_bots.<module_prefix><name>_bot``)."""
    module_prefix: str = ""
    """What the sample bots' module names start with (the default game's have none)."""
    seats: int = 2
    """Seats of every table: 2 is a round robin of every pairing; more, tables of that many."""
    games: int = 0
    """Games per table by default (0: :data:`DEMO_GAMES` spread over the pairings)."""


DEMOS_FILE = "demos.toml"
"""The file of the ``sample_bots`` package that lists each game's demo (data, not code)."""


@functools.cache
def demos() -> dict[str, Demo]:
    """Each game's demo (``arena demo --game NAME``), from ``sample_bots/demos.toml``: the sample
    bots are the checkout's. Empty without the ``sample_bots`` package."""
    spec = importlib.util.find_spec("sample_bots")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / DEMOS_FILE
    with path.open("rb") as f:
        table = tomllib.load(f)
    return {game: Demo(tuple(d["samples"]), module_prefix=d.get("module_prefix", ""), seats=d.get("seats", 2),
                       games=d.get("games", 0)) for game, d in table.items()}
