"""The bridge back (docs/training.md#the-bridge-back): a policy trained in the training environment
runs as a bot over gRPC, unchanged. :class:`PolicyBot` encodes each ``ActionRequest`` the referee
sends with the very encoder the environment used (:mod:`.encodings`), calls the policy on the
observation dict and sends the legal action of the index it returns.

    python -m sample_bots.kit.policy --policy my_module:policy [--encoding NAME] --referee HOST:PORT

``my_module:policy`` names a callable ``policy(observation) -> action index`` (the dict has
``observation``, ``action_mask`` and any extras of the encoding), or a callable of no argument that
returns one (``--factory``). Needs NumPy (``pip install -e '.[train]'``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from gin_arena.v2 import bot_pb2, common_pb2
from referee import games

from . import encodings
from .session import Bot, make_parser, parse_config, run_bot

Policy = Callable[[dict[str, Any]], int]
"""A policy: from an observation dict to one of its legal action indices."""


def load_encoding(game: str, name: str = "") -> encodings.Encoding:
    """The encoding ``name`` of a game: the kit's own, or those of the module its registration
    declares (``games.Capabilities.encodings``, imported here)."""
    if not encodings.names(game):
        module = games.get(game).capabilities.encodings
        if module:
            importlib.import_module(module)
    return encodings.encoding(game, name)


class PolicyBot(Bot):
    """A bot that plays ``policy`` on the observations of the encoding ``encoding`` of each match's
    game."""

    name = "policy"

    def __init__(self, policy: Policy, encoding: str = "", games: tuple[str, ...] = ()):
        self.policy = policy
        """The policy."""
        self.encoding = encoding
        """The encoding's name (``""``: each game's default)."""
        if games:
            self.games = games
        self._encodings: dict[str, encodings.Encoding] = {}

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        """Ready the match's game's encoder."""
        self._encodings[match_id] = load_encoding(info.game_name, self.encoding)

    def on_match_finished(self, match_id: str, result: common_pb2.MatchResult) -> None:
        """Forget the match."""
        self._encodings.pop(match_id, None)

    def decide_in_match(self, match_id: str, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        """The legal action of the index the policy chooses (``ValueError`` for an index that is not legal)."""
        encoded = encodings.encode(self._encodings[match_id], request)
        index = int(self.policy(encoded.observation))
        if index not in encoded.legal:
            raise ValueError(f"the policy chose action {index}, not legal now (legal: {sorted(encoded.legal)})")
        return request.legal_actions[encoded.legal.index(index)]


def _named(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise SystemExit(f"--policy {spec!r}: MODULE:NAME (e.g. my_policies:linear)")
    return getattr(importlib.import_module(module), attr)


def main(argv: list[str] | None = None) -> int:
    """Run a policy as a bot from the command line."""
    parser = make_parser("policy")
    parser.add_argument("--policy", required=True, metavar="MODULE:NAME", help="the policy callable")
    parser.add_argument("--factory", action="store_true", help="MODULE:NAME returns the policy when called")
    parser.add_argument("--encoding", default="", help="the observation encoding's name (default: the game's)")
    config, ns = parse_config(parser, argv)
    policy = _named(ns.policy)
    if ns.factory:
        policy = policy()
    return run_bot(PolicyBot(policy, ns.encoding), config=config, log_level=ns.log_level)


if __name__ == "__main__":
    raise SystemExit(main())
