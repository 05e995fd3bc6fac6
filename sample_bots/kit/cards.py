"""The old name of :mod:`sample_bots.kit.gin.cards` (Gin's card helpers: melds, deadwood), kept
for the bots that import it."""

from .gin.cards import *  # noqa: F403
