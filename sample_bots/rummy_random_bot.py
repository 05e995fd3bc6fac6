"""The random rummy bot: a uniformly random legal action.

Run: ``python -m sample_bots.rummy_random_bot --referee HOST:PORT --token T [--seed S]``.
"""

from __future__ import annotations

import random

from .kit import RummyBot, make_parser, parse_config, run_bot
from .kit.rummy import View


class RandomRummy:
    """Picks any legal action, uniformly; reproducible with a seed."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View) -> str:
        """Any of ``view.legal``."""
        return self.rng.choice(view.legal)


def main(argv: list[str] | None = None) -> int:
    """Run the random rummy bot from the command line."""
    parser = make_parser("rummy-random")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: unseeded)")
    config, ns = parse_config(parser, argv)
    return run_bot(RummyBot(RandomRummy(ns.seed).choose, name="rummy-random"), config=config, log_level=ns.log_level)


if __name__ == "__main__":
    raise SystemExit(main())
