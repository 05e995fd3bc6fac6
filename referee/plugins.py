"""The games that come with the referee, as their entry points name them
(``[project.entry-points."gin_arena.games"]`` in pyproject.toml) — exactly the way another
package registers its game (docs/adding-a-game.md). Importing this module imports no engine:
each game is imported when it is first used."""

from __future__ import annotations

from referee.games import PLUGIN_API, GamePlugin, Registered


def _gin() -> Registered:
    from referee import _gin_wire

    return _gin_wire.REGISTERED


def _rummy() -> Registered:
    from referee import _rummy_wire

    return _rummy_wire.REGISTERED


GIN = GamePlugin(plugin_api=PLUGIN_API, load=_gin)
"""Gin Rummy (two seats)."""
RUMMY = GamePlugin(plugin_api=PLUGIN_API, load=_rummy)
"""Rummy (two to six seats)."""
