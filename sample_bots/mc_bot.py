"""The ``mc`` reference bot: determinized Monte Carlo search, for Gin and rummy (2–6 seats).

Per decision it samples deals consistent with everything its seat was shown (its cards, every
public action, the cards picked up and by whom, the refused upcards, the discards — never the
true deal: it sees only its own messages), plays each candidate action out to the end of the
deal in each sampled deal with a fast greedy policy, and keeps the candidate with the best
total (:mod:`sample_bots.mc`: the algorithm, its sources, and how the worlds are kept
consistent). The worlds run on the referee's pure engines (``referee.gin``, ``referee.rummy``;
the mypyc-compiled engine when installed).

- ``--budget N``: N worlds per decision (default :data:`~sample_bots.mc.search.DEFAULT_WORLDS`),
  each candidate played out once in each: decisions then depend only on the seed and what the
  seat knows. ``--budget 250ms``: as many worlds as fit in the time (at least one).
- ``--seed S``: the search's random numbers (default 0). Same seed, same worlds budget, same
  request: same answer.

Run: ``python -m sample_bots.mc_bot --referee HOST:PORT --token T [--budget 24] [--seed 0]``.
"""

from __future__ import annotations

from gin_arena.v2 import bot_pb2, common_pb2
from referee import gin, rummy

from .kit import Bot, Decision, make_parser, parse_config, run_bot
from .mc import gin as mc_gin
from .mc import rummy as mc_rummy
from .mc.search import Budget, parse_budget


class MonteCarloBot(Bot):
    """The ``mc`` bot: keeps each match's rules (from ``MatchStarted``) until the match ends,
    nothing else; every decision is searched afresh from the request."""

    name = "mc"
    games: tuple[str, ...] = ("gin", "rummy")

    def __init__(self, budget: Budget | None = None, seed: int = 0) -> None:
        self.budget = budget or Budget()
        self.seed = seed
        self._gin_rules: dict[str, gin.RuleSet] = {}
        self._rummy_rules: dict[str, rummy.RummyRules] = {}

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        member = info.WhichOneof("game")
        if member == "gin":
            self._gin_rules[match_id] = mc_gin.rules_of_match(info.gin)
        elif member == "rummy":
            self._rummy_rules[match_id] = mc_rummy.rules_of_match(info.rummy)

    def on_match_finished(self, match_id: str, result: common_pb2.MatchResult) -> None:
        self._gin_rules.pop(match_id, None)
        self._rummy_rules.pop(match_id, None)

    def decide_in_match(self, match_id: str, request: bot_pb2.ActionRequest) -> Decision:
        if request.WhichOneof("game") == "rummy":
            rules = self._rummy_rules.get(match_id) or mc_rummy.default_rules()
            return mc_rummy.decide(request, rules, self.budget, self.seed)
        return mc_gin.decide(request, self._gin_rules.get(match_id) or gin.RuleSet.classic(), self.budget, self.seed)

    def decide(self, request: bot_pb2.ActionRequest) -> Decision:
        """A decision outside a match (the rules: the game's default preset)."""
        return self.decide_in_match("", request)


def main(argv: list[str] | None = None) -> int:
    """Run the mc bot from the command line."""
    parser = make_parser("mc")
    parser.add_argument("--budget", default=str(Budget()), metavar="N|Nms",
                        help="worlds sampled per decision (deterministic), or a time per decision such as 250ms "
                        "(default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="the search's random seed (default %(default)s)")
    config, ns = parse_config(parser, argv)
    try:
        budget = parse_budget(ns.budget)
    except ValueError as e:
        parser.error(str(e))
    return run_bot(MonteCarloBot(budget, ns.seed), config=config, log_level=ns.log_level)


if __name__ == "__main__":
    raise SystemExit(main())
