"""Gin rummy for bot authors: :mod:`.cards` (melds, deadwood), :mod:`.masks` (the same on bit
masks, fast), :mod:`.actions` (action texts, questions about a request). Importing this
package registers Gin's action texts with the kit (:mod:`sample_bots.kit.games`)."""

from __future__ import annotations

from ..games import GameKit, register
from . import actions as actions
from . import cards as cards
from . import masks as masks

NAME = "gin"
"""The game's name on the wire."""
register(GameKit(NAME, actions.action_text, actions.parse_action))
