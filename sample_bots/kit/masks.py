"""The old name of :mod:`sample_bots.kit.gin.masks` (Gin's deadwood on bit masks), kept for the
bots that import it."""

from .gin.masks import *  # noqa: F403
