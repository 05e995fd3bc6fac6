"""A bot for high cards on the Python kit: ``python -m toy3_game.bot --strategy high`` plays its
highest card, ``low`` its lowest (so that a tournament between them has a clear order)."""

from __future__ import annotations

import sys

from gin_arena.v2 import bot_pb2, common_pb2
from sample_bots.kit import Bot, run_bot
from sample_bots.kit.actions import Decision
from toy3_game import toy3_pb2
from toy3_game.engine import NAME


def card(action: common_pb2.Action) -> int:
    """The card a legal action plays (the game's ``toy3.v1.Play`` packed in ``action.other``)."""
    play = toy3_pb2.Play()
    if not action.other.Unpack(play):
        raise ValueError(f"not a toy3 play: {action.other.type_url!r}")
    return play.card


class HighCards(Bot):
    """Plays its highest (or lowest) card."""

    name = "toy3-high"
    games = (NAME,)

    def __init__(self, high: bool) -> None:
        self.high = high

    def decide(self, request: bot_pb2.ActionRequest) -> Decision:
        pick = max if self.high else min
        return pick(request.legal_actions, key=card)


def main(argv: list[str]) -> int:
    """``--strategy high|low`` and the kit's own options (``--referee``, ``--token``, ``--name``…)."""
    high = True
    if "--strategy" in argv:
        i = argv.index("--strategy")
        if i + 1 >= len(argv) or argv[i + 1] not in ("high", "low"):
            print("toy3_game.bot: --strategy takes high or low", file=sys.stderr)
            return 2
        high = argv[i + 1] == "high"
        argv = argv[:i] + argv[i + 2:]
    return run_bot(HighCards(high), name="toy3-high" if high else "toy3-low", argv=argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
