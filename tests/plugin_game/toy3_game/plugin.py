"""What the entry point ``toy3 = "toy3_game.plugin:PLUGIN"`` names. Importing this module
imports neither the engine nor protobuf: ``load`` does, when the game is first used."""

from __future__ import annotations

from referee.games import PLUGIN_API, GamePlugin, Registered


def _load() -> Registered:
    from toy3_game.wire import REGISTERED

    return REGISTERED


PLUGIN = GamePlugin(plugin_api=PLUGIN_API, load=_load)
"""The game, for ``referee.games``."""
