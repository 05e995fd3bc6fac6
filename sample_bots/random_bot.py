"""The random sample bot: a uniformly random legal action.

Run: ``python -m sample_bots.random_bot --referee HOST:PORT --token T [--seed S]``.
"""

from __future__ import annotations

import random

from gin_arena.v2 import bot_pb2, common_pb2

from .kit import Bot, make_parser, parse_config, run_bot


class RandomBot(Bot):
    """Picks any legal action, uniformly; reproducible with a seed."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        return self.rng.choice(list(request.legal_actions))


def main(argv: list[str] | None = None) -> int:
    """Run the random bot from the command line."""
    parser = make_parser("random")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: unseeded)")
    config, ns = parse_config(parser, argv)
    return run_bot(RandomBot(ns.seed), config=config, log_level=ns.log_level)


if __name__ == "__main__":
    raise SystemExit(main())
