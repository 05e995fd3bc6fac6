"""The random rummy bot: a uniformly random legal action.

Run: ``python -m sample_bots.rummy_random_bot --referee HOST:PORT --token T [--seed S]``.
"""

from __future__ import annotations

import random

from .kit.rummy import View


class RandomRummy:
    """Picks any legal action, uniformly; reproducible with a seed."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View) -> str:
        """Any of ``view.legal``."""
        return self.rng.choice(view.legal)
