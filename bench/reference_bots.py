"""The reference bots measured (issue 33; docs/benchmark.md, "Reference bots").

- **Gin**: ``mc`` (default budget) against ``expert`` and against ``eaai-simple``, each a
  two-bot ``arena tournament`` of one-game matches, classic rules, duplicate deals (the two games
  of a pair on the same cards, seats swapped), the default time control (``st=1``, CPU clock):
  ``mc``'s Elo over the other with the 95% interval and LOS, as the tournament reports them.
- **Gin, the heuristics**: ``hand-reader`` against ``expert`` the same way, over more games
  (``--hr-games``: a heuristic game takes about a second), the figure of docs/benchmark.md.
- **Rummy, 4 seats**: ``mc`` with the rummy sample bots (``greedy``, ``hoarder``, ``random``) at
  one table, the seats rotated on one deck (duplicate): each bot's share of first places, with a
  95% Wilson interval.
- **Profile**: where ``mc``'s time goes, from ``cProfile`` over the decisions of a few deals
  (Gin against the expert; rummy at 4 seats against greedy bots), in this process.

Every run folder is kept under ``--out``; the wall time, the cores and the load average before
and after each part are printed with the figures.

Run: ``PYTHONPATH=. python bench/reference_bots.py --games 100 --rummy-games 40 --out runs/refbots``
(``--quick``: 10, 8 and 10 games, for a check that it works; ``--skip gin --skip rummy --skip profile``
for the hand-reader's figure alone).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gin_arena.v2 import bot_pb2
from referee import gin, rummy
from referee.gin import wire as gin_wire
from referee.rummy import wire as rummy_wire
from sample_bots import expert_bot, rummy_greedy_bot
from sample_bots.kit import rummy as kit_rummy
from sample_bots.kit.actions import to_action
from sample_bots.mc import gin as mc_gin
from sample_bots.mc import rummy as mc_rummy
from sample_bots.mc.search import Budget

BOTS = {
    "mc": "{python} -m sample_bots.mc_bot",
    "expert": "{python} -m sample_bots.expert_bot",
    "hand-reader": "{python} -m sample_bots.hand_reader_bot",
    "eaai-simple": "{python} -m sample_bots.eaai_simple_bot",
    "greedy": "{python} -m sample_bots.rummy_greedy_bot",
    "hoarder": "{python} -m sample_bots.rummy_hoarder_bot",
    "random": "{python} -m sample_bots.rummy_random_bot",
}
"""The bots' command lines (the arena's own Python for ``{python}``)."""
Z95 = 1.96
"""The normal quantile of a two-sided 95% interval."""


def load() -> str:
    """The 1-, 5- and 15-minute load averages."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def tournament(out: Path, game: str, bots: list[str], games: int, seats: int, seed: str
               ) -> tuple[dict[str, object], str]:
    """Run one ``arena tournament``; its results.json and the command line."""
    args = [sys.executable, "-m", "arena.cli", "tournament", "--game", game, "--games", str(games),
            "--seats", str(seats), "--seed", seed, "--out", str(out), "--no-progress"]
    for b in bots:
        args += ["--bot", f'name={b} cmd="{BOTS[b]}" games={game}']
    shown = " ".join(a if " " not in a else f"'{a}'" for a in args[1:])
    done = subprocess.run(args, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise SystemExit(f"{shown}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    print(done.stdout)
    return dict(json.loads((out / "results.json").read_text())), shown


def wilson(k: int, n: int) -> tuple[float, float]:
    """A 95% Wilson interval for a share of k in n."""
    if not n:
        return 0.0, 1.0
    p = k / n
    d = 1 + Z95 ** 2 / n
    mid = (p + Z95 ** 2 / (2 * n)) / d
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / d
    return mid - half, mid + half


def first_places(results: dict[str, object]) -> dict[str, tuple[int, int]]:
    """By bot: (first places, games played), from the results' games (``name#2`` counts as the bot)."""
    out: dict[str, list[int]] = {}
    games = results.get("games")
    assert isinstance(games, list)
    for g in games:
        for player, place in zip(g["players"], g["places"], strict=True):
            bot = player.split("#")[0]
            row = out.setdefault(bot, [0, 0])
            row[0] += place == 1
            row[1] += 1
    return {b: (w, n) for b, (w, n) in out.items()}


def profile_mc(deals: int) -> str:
    """cProfile of mc's decisions over a few Gin deals (against the expert) and 4-seat rummy
    deals (against greedy bots): the functions taking the most time, cumulative."""
    prof = cProfile.Profile()
    budget = Budget()
    for i in range(deals):
        match = gin.Match(gin.RuleSet.preset("classic", target=25), f"profile-{i}".encode())
        rid = 0
        while not match.is_over:
            seat = match.to_move
            assert seat is not None
            rid += 1
            req = gin_wire.action_request(rid, match.view(seat), [60_000, 60_000], 0, 0)
            if seat == 0:
                answer = prof.runcall(mc_gin.decide, req, gin.RuleSet.classic(), budget, 0)
            else:
                answer = to_action(expert_bot.decide(req), req)
            match.apply(gin_wire.action_from_proto(answer), seat)
    rules = rummy.RummyRules.preset("rummy", target=40)
    krules = kit_rummy.rules_of(mc_rummy.rules_message(rules))
    for i in range(deals):
        rmatch = rummy.Match(rules, f"profile-{i}".encode(), 4)
        rid = 0
        while not rmatch.is_over:
            seat = rmatch.to_move
            assert seat is not None
            rid += 1
            data = rummy_wire.action_request_bytes("", rid, rmatch.view(seat), [0] * 4, [60_000] * 4, 0, 0)
            req = bot_pb2.RefereeMessage.FromString(data).action_request
            if seat == 0:
                answer = prof.runcall(mc_rummy.decide, req, rules, budget, 0)
            else:
                answer = kit_rummy.answer(req, rummy_greedy_bot.choose(kit_rummy.view_of(req, krules)))
            rmatch.apply(rummy.parse_action(kit_rummy.action_text(answer.rummy)), seat)
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(25)
    return text.getvalue()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=100, help="Gin games per pairing (even; default %(default)s)")
    p.add_argument("--rummy-games", type=int, default=40, help="4-seat rummy games (a multiple of 4)")
    p.add_argument("--hr-games", type=int, default=1000, help="Gin games of hand-reader against expert (even)")
    p.add_argument("--profile-deals", type=int, default=2, help="matches of each game profiled")
    p.add_argument("--out", type=Path, default=Path("runs/refbots"))
    p.add_argument("--quick", action="store_true", help="10 Gin games a pairing, 8 rummy games")
    p.add_argument("--skip", action="append", default=[], choices=["gin", "eaai-simple", "hand-reader", "rummy",
                                                                         "profile"])
    p.add_argument("--mc-budget", default="", metavar="N|Nms",
                   help="mc's --budget in the tournaments (default: mc's own default)")
    p.add_argument("--seed", default="refbots", help="the tournaments' seeds begin with this (other deals: another "
                   "seed; default %(default)s)")
    ns = p.parse_args()
    if ns.mc_budget:
        BOTS["mc"] += f" --budget {ns.mc_budget}"
    games, rummy_games, hr_games = (10, 8, 10) if ns.quick else (ns.games, ns.rummy_games, ns.hr_games)
    print(f"cores: {os.cpu_count()}, load before: {load()}")
    if "gin" not in ns.skip:
        for other in [o for o in ("expert", "eaai-simple") if o not in ns.skip]:
            t = time.monotonic()
            _, shown = tournament(ns.out / f"gin-mc-{other}", "gin", ["mc", other], games, 2, f"{ns.seed}-{other}")
            wall = time.monotonic() - t
            print(f"== mc vs {other}: {games} games, wall {wall:.0f} s, load after {load()}\n   {shown}")
    if "hand-reader" not in ns.skip:
        t = time.monotonic()
        _, shown = tournament(ns.out / "gin-hand-reader-expert", "gin", ["hand-reader", "expert"], hr_games, 2,
                              f"{ns.seed}-hand-reader")
        print(f"== hand-reader vs expert: {hr_games} games, wall {time.monotonic() - t:.0f} s, load after {load()}\n"
              f"   {shown}")
    if "rummy" not in ns.skip:
        t = time.monotonic()
        results, shown = tournament(ns.out / "rummy-4", "rummy", ["mc", "greedy", "hoarder", "random"],
                                    rummy_games, 4, f"{ns.seed}-rummy")
        print(f"== rummy, 4 seats: {rummy_games} games, wall {time.monotonic() - t:.0f} s, load after {load()}\n"
              f"   {shown}")
        for bot, (won, played) in sorted(first_places(results).items(), key=lambda kv: -kv[1][0]):
            lo, hi = wilson(won, played)
            print(f"   {bot:8} first {won}/{played} = {won / played:.1%} (95%: {lo:.1%}–{hi:.1%})")
    if "profile" not in ns.skip:
        random.seed(0)
        print(profile_mc(ns.profile_deals))


if __name__ == "__main__":
    main()
