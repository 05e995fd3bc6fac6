"""How long the sample Gin bots take per decision, against the default time control's budget.

Each bot plays ``--matches`` classic matches against itself in this process (its ``decide``
called on the requests the referee would send, no gRPC); per bot the median, p99 and slowest
decision are printed with the slowest's share of the 1,000 ms a decision may take under the
arena's default ``st=1`` (a share near 1 means the bot risks losing on time on a loaded machine).
The load average is printed: on a busy machine every figure grows.

    .venv/bin/python bench/bot_decisions.py [--matches 3] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from gin_arena.v2 import bot_pb2
from referee import gin
from referee.gin import wire as gin_wire
from sample_bots import expert_bot, greedy_bot, random_bot
from sample_bots.kit.actions import Decision, to_action

BUDGET_MS = 1_000
"""What a decision may take under the arena's default time control (``st=1``)."""
BOTS: dict[str, Callable[[bot_pb2.ActionRequest], Decision]] = {
    "random": random_bot.RandomBot(1).decide, "greedy": greedy_bot.decide, "expert": expert_bot.decide}


def decision_times(decide: Callable[[bot_pb2.ActionRequest], Decision], seed: bytes) -> list[float]:
    """Milliseconds of each decision of one self-play match."""
    match = gin.Match(gin.RuleSet.classic(), seed)
    times: list[float] = []
    rid = 0
    while not match.is_over and rid < 100_000:
        seat = match.to_move
        assert seat is not None
        rid += 1
        request = gin_wire.action_request(rid, match.view(seat), [60_000, 60_000], 0, BUDGET_MS)
        t = time.perf_counter()
        answer = to_action(decide(request), request)
        times.append(1000 * (time.perf_counter() - t))
        match.apply(gin_wire.action_from_proto(answer), seat)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=3)
    ap.add_argument("--seed", default="bot-decisions")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.matches} classic self-play match(es) per bot")
    print(f"{'bot':8} {'decisions':>9} {'median ms':>10} {'p99 ms':>8} {'slowest ms':>11} {'slowest/budget':>15}")
    for name, decide in BOTS.items():
        times = sorted(t for m in range(args.matches) for t in decision_times(decide, f"{args.seed}-{m}".encode()))
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"{name:8} {len(times):9d} {statistics.median(times):10.2f} {p99:8.2f} {times[-1]:11.2f} "
              f"{times[-1] / BUDGET_MS:15.3f}")


if __name__ == "__main__":
    main()
