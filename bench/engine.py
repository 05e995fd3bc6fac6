"""Speed of the rules engine: random self-play and the 11-card deadwood query.

(a) Random self-play: complete deals (classic rules) where each step calls ``legal_actions()``
    and plays a uniformly random legal action (``random.Random.choice``); every deck comes from
    ``deck_for_deal`` (the SHA-256 shuffle, as in a match) inside the timer. Reported: deals per
    CPU-second (``time.process_time``), median of 5 runs of 1000 deals with fixed seeds, and
    steps (actions) per deal; also the rate with the decks shuffled before the timer starts.
(b) ``min_deadwood_after_discard_mask`` on 20,000 random 11-card hands: median and p90 µs
    per call (``perf_counter_ns`` around each call).
(c) If OpenSpiel (``pyspiel``) can be imported: the same random play of its ``gin_rummy``
    (``state.legal_actions()`` at every step, chance nodes of the deal included, a uniform
    choice among ``chance_outcomes()``), and its ``GinRummyUtils.min_deadwood`` on the same
    11-card hands, with the ratios.

(d) The compiled build (mypyc, ``GIN_ARENA_COMPILE=require pip install .`` into ``.venv-compiled``,
    or ``--compiled PYTHON``): the same self-play as (a) in that interpreter, run from here, with
    the ratio compiled/pure.

Run: ``PYTHONPATH=. python bench/engine.py [--quick]``
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_INSTALLED = "GIN_ARENA_BENCH_INSTALLED"
"""Set in the child that measures an installed (compiled) build: the source tree stays off its path."""
if not os.environ.get(_INSTALLED):
    sys.path.insert(0, str(ROOT))

from referee.gin import Deal, RuleSet, deck_for_deal, from_mask  # noqa: E402 (after the path)
from referee.gin import min_deadwood_after_discard_mask as min_dw  # noqa: E402

GOAL_DEALS = 2500
GOAL_US = 20.0
TARGET_US = 5.6


# ----------------------------------------------------------------------------- self-play


def selfplay_ours(seed: int, deals: int, decks_outside: bool = False) -> tuple[float, float, Counter[str]]:
    """(deals per CPU-second, steps per deal, outcome kinds) for ``deals`` random deals. With
    ``decks_outside`` the decks are shuffled before the timer starts (engine and policy only)."""
    rules = RuleSet.classic()
    rng = random.Random(seed)
    choice = rng.choice
    match_seed = seed.to_bytes(8, "big")
    kinds: Counter[str] = Counter()
    steps = 0
    ready = [deck_for_deal(match_seed, 1, i + 1) for i in range(deals)] if decks_outside else []
    t0 = time.process_time()
    for i in range(deals):
        deck = ready[i] if decks_outside else deck_for_deal(match_seed, 1, i + 1)
        deal = Deal(deck, i & 1, rules)
        legal = deal.legal_actions()
        while legal:
            deal.apply(choice(legal))
            steps += 1
            legal = deal.legal_actions()
        out = deal.outcome
        assert out is not None
        kinds[out.kind] += 1
    elapsed = time.process_time() - t0
    return deals / elapsed, steps / deals, kinds


def selfplay_openspiel(pyspiel: Any, seed: int, deals: int) -> tuple[float, float, float]:
    """(deals per CPU-second, player steps per deal, chance steps per deal) for OpenSpiel."""
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    choice = rng.choice
    steps = chance = 0
    t0 = time.process_time()
    for _ in range(deals):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])
                chance += 1
            else:
                state.apply_action(choice(state.legal_actions()))
                steps += 1
    elapsed = time.process_time() - t0
    return deals / elapsed, steps / deals, chance / deals


# ----------------------------------------------------------------------------- deadwood


def random_masks(rng: random.Random, n: int, size: int) -> list[int]:
    return [sum(1 << i for i in rng.sample(range(52), size)) for _ in range(n)]


def per_call_us(fn: Callable[[Any], object], args: Sequence[Any]) -> list[float]:
    clock = time.perf_counter_ns
    out: list[float] = []
    gc.disable()
    try:
        for a in args:
            t = clock()
            fn(a)
            out.append((clock() - t) / 1000)
    finally:
        gc.enable()
    return out


def quantiles(times: list[float]) -> tuple[float, float]:
    ts = sorted(times)
    return statistics.median(ts), ts[min(len(ts) - 1, int(0.9 * len(ts)))]


_OS_SUIT = (0, 3, 2, 1)
"""OpenSpiel's card int is ``suit * 13 + rank - 1`` with suits s c d h; ours s h d c."""


def to_openspiel(mask: int) -> list[int]:
    return [_OS_SUIT[c.suit] * 13 + c.rank - 1 for c in from_mask(mask)]


def import_pyspiel() -> Any | None:
    try:
        import pyspiel  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return pyspiel


# ----------------------------------------------------------------------------- compiled build


def selfplay_rates(seeds: Sequence[int], deals: int) -> list[float]:
    """Deals per CPU-second of (a)'s self-play, one run per seed, after a warm-up."""
    selfplay_ours(999, 20)
    return [selfplay_ours(s, deals)[0] for s in seeds]


def selfplay_in(python: str, seeds: Sequence[int], deals: int) -> tuple[bool, list[float]]:
    """(whether its engine is compiled, the rates) of (a)'s self-play in another interpreter."""
    env = {**os.environ, _INSTALLED: "1"}
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [python, "-P", __file__, "--child", "--runs", str(len(seeds)), "--deals", str(deals), "--first-seed",
         str(seeds[0])], check=True, capture_output=True, text=True, env=env, cwd="/",
    ).stdout
    data = json.loads(out)
    return bool(data["compiled"]), [float(x) for x in data["rates"]]


def compare_compiled(python: str, seeds: Sequence[int], deals: int, pure_rate: float) -> float | None:
    """Prints (d): the compiled build's self-play beside the pure build's of this run; its rate."""
    print()
    if not Path(python).exists():
        print(f"(d) compiled build: {python} not found (GIN_ARENA_COMPILE=require pip install . into a venv): skipped")
        return None
    compiled, rates = selfplay_in(python, seeds, deals)
    rate = statistics.median(rates)
    print(f"(d) {python} (engine {'compiled (mypyc)' if compiled else 'NOT compiled'}), the same self-play as (a)")
    print(f"    compiled:  {rate:8.0f} deals/CPU-s  (runs: {', '.join(f'{x:.0f}' for x in rates)})")
    print(f"    ratio compiled/pure: {rate / pure_rate:.2f}x  (acceptance >= 1.6x)")
    return rate


# ----------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="3 runs of 200 deals, 4000 hands")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--deals", type=int, default=None)
    ap.add_argument("--hands", type=int, default=None)
    ap.add_argument("--compiled", default=str(ROOT / ".venv-compiled" / "bin" / "python"),
                    help="the interpreter of the compiled build (default .venv-compiled's)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--first-seed", type=int, default=1000, help=argparse.SUPPRESS)
    args = ap.parse_args()
    runs = args.runs or (3 if args.quick else 5)
    deals = args.deals or (200 if args.quick else 1000)
    hands = args.hands or (4000 if args.quick else 20_000)
    seeds = [args.first_seed + i for i in range(runs)]
    if args.child:
        from referee.gin import COMPILED

        print(json.dumps({"compiled": COMPILED, "rates": selfplay_rates(seeds, deals)}))
        return
    print(f"Python {sys.version.split()[0]}; {runs} runs x {deals} deals (seeds {seeds[0]}..{seeds[-1]}), "
          f"{hands} hands")

    # (a) self-play
    selfplay_ours(999, 20)  # warm up
    results = [selfplay_ours(s, deals) for s in seeds]
    rates = [r[0] for r in results]
    ours_rate = statistics.median(rates)
    ours_steps = statistics.mean(r[1] for r in results)
    kinds: Counter[str] = Counter()
    for r in results:
        kinds.update(r[2])
    total = sum(kinds.values())
    print()
    print("(a) random self-play, classic rules, legal_actions() at every step")
    print(f"    ours:      {ours_rate:8.0f} deals/CPU-s  (median of {runs}; runs: "
          f"{', '.join(f'{x:.0f}' for x in rates)})  {ours_steps:.1f} steps/deal")
    pre = statistics.median(selfplay_ours(s, deals, decks_outside=True)[0] for s in seeds)
    print(f"    ours, decks shuffled before the timer (engine + policy only): {pre:8.0f} deals/CPU-s")
    print("    outcomes:  " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in sorted(kinds.items())))
    print(f"    goal: >= {GOAL_DEALS} deals/CPU-s  -> {'met' if ours_rate >= GOAL_DEALS else 'NOT met'}")
    compiled_rate = compare_compiled(args.compiled, seeds, deals, ours_rate)

    # (b) deadwood
    rng = random.Random(20240601)
    h11 = random_masks(rng, hands, 11)
    for h in h11[:500]:
        min_dw(h)
    med, p90 = quantiles(per_call_us(min_dw, h11))
    print()
    print(f"(b) min_deadwood_after_discard_mask, {hands} random 11-card hands")
    print(f"    ours:      median {med:6.2f} us   p90 {p90:6.2f} us")
    print(f"    goal: <= {GOAL_US:.0f} us (target ~{TARGET_US})  -> {'met' if med <= GOAL_US else 'NOT met'}"
          f"{'' if med <= TARGET_US else ' (above the target)'}")

    # (c) OpenSpiel
    print()
    pyspiel = import_pyspiel()
    if pyspiel is None:
        print("(c) OpenSpiel: pyspiel not importable (pip install open_spiel): comparison skipped")
        return
    os_deals = max(deals // 5, 20)
    selfplay_openspiel(pyspiel, 999, 5)
    os_results = [selfplay_openspiel(pyspiel, s, os_deals) for s in seeds]
    os_rate = statistics.median(r[0] for r in os_results)
    os_steps = statistics.mean(r[1] for r in os_results)
    os_chance = statistics.mean(r[2] for r in os_results)
    print(f"(c) OpenSpiel {getattr(pyspiel, '__version__', '')} gin_rummy, random play "
          f"({runs} runs x {os_deals} deals)")
    print(f"    OpenSpiel: {os_rate:8.0f} deals/CPU-s  {os_steps:.1f} player steps + {os_chance:.1f} chance "
          f"steps/deal")
    print(f"    ratio ours/OpenSpiel: {ours_rate / os_rate:.1f}x deals/CPU-s (goal >= 10x)")
    if compiled_rate is not None:
        print(f"    ratio compiled/OpenSpiel: {compiled_rate / os_rate:.1f}x deals/CPU-s (goal >= 20x)")
    try:
        utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        fn = utils.min_deadwood
    except AttributeError:
        print("    GinRummyUtils.min_deadwood not reachable from Python: deadwood comparison skipped")
        return
    os11 = [to_openspiel(h) for h in h11]
    for oh in os11[:500]:
        fn(oh)
    omed, op90 = quantiles(per_call_us(fn, os11))
    print(f"    OpenSpiel GinRummyUtils.min_deadwood (11 cards): median {omed:6.2f} us   p90 {op90:6.2f} us")
    print(f"    ratio OpenSpiel/ours (median): {omed / med:.1f}x")


if __name__ == "__main__":
    main()
