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
    or ``--compiled PYTHON``): the same self-play as (a) in that interpreter, with the ratio
    compiled/pure.
(e) With ``--today DIR`` (a source tree of an older commit, e.g. ``git archive COMMIT referee |
    tar -x -C DIR``): the same self-play of that tree's engine in this interpreter, with the
    ratio pure/today (is the pure build still as fast as before?).

The self-play runs of (a), (c), (d) and (e) are interleaved: round ``i`` runs seed ``i`` in each
(the compiled and "today" engines in child processes kept running, each told one seed at a
time), so that the machine's load hits them alike; ratios are medians of per-round ratios, and
the load average is printed before and after.

Run: ``.venv/bin/python bench/engine.py [--quick] [--today DIR]``
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


# ----------------------------------------------------------------------------- other builds


class SelfPlayChild:
    """(a)'s self-play in another interpreter or source tree: a child process kept running, told
    one seed at a time (so that its runs interleave with this process's)."""

    def __init__(self, python: str, source: str | None = None) -> None:
        env = {**os.environ, _INSTALLED: "1"}
        env.pop("PYTHONPATH", None)
        if source is not None:
            env["PYTHONPATH"] = source
        self.proc = subprocess.Popen(
            [python, "-P", __file__, "--child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=env, cwd="/",
        )
        hello = json.loads(self._line())
        self.compiled: bool = bool(hello["compiled"])
        self.file: str = str(hello["file"])

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the self-play child ended early (see its error above)")
        return line

    def rate(self, seed: int, deals: int) -> float:
        """Deals per CPU-second of one run."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{seed} {deals}\n")
        self.proc.stdin.flush()
        return float(self._line())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def child_loop() -> None:
    """The child's side: which engine it runs, then one rate per ``seed deals`` line read."""
    import referee.gin as engine

    selfplay_ours(999, 20)  # warm up
    print(json.dumps({"compiled": getattr(engine, "COMPILED", False), "file": engine.__file__}), flush=True)
    for line in sys.stdin:
        seed, deals = map(int, line.split())
        print(selfplay_ours(seed, deals)[0], flush=True)


def ratio_of_rounds(top: Sequence[float], bottom: Sequence[float]) -> float:
    """The median of the per-round ratios ``top[i] / bottom[i]``."""
    return statistics.median(t / b for t, b in zip(top, bottom, strict=True))


def runs_text(rates: Sequence[float]) -> str:
    return ", ".join(f"{x:.0f}" for x in rates)


# ----------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="3 runs of 200 deals, 4000 hands")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--deals", type=int, default=None)
    ap.add_argument("--hands", type=int, default=None)
    ap.add_argument("--compiled", default=str(ROOT / ".venv-compiled" / "bin" / "python"),
                    help="the interpreter of the compiled build (default .venv-compiled's)")
    ap.add_argument("--today", default=None, metavar="DIR",
                    help="a source tree of an older commit: its engine's self-play beside this one's, as (e)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_loop()
        return
    runs = args.runs or (3 if args.quick else 5)
    deals = args.deals or (200 if args.quick else 1000)
    hands = args.hands or (4000 if args.quick else 20_000)
    seeds = [1000 + i for i in range(runs)]
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"Python {sys.version.split()[0]}; {runs} interleaved rounds x {deals} deals (seeds {seeds[0]}.."
          f"{seeds[-1]}), {hands} hands; load average {os.getloadavg()[0]:.2f} (before)")
    rounds = selfplay_rounds(args, seeds, deals)
    report_selfplay(rounds, seeds)
    med = report_deadwood(hands)
    report_openspiel(rounds, med, hands)
    print(f"\nload average {os.getloadavg()[0]:.2f} (after)")


def selfplay_rounds(args: argparse.Namespace, seeds: Sequence[int], deals: int) -> dict[str, Any]:
    """(a), (c), (d), (e) interleaved: per engine, the rate of each round (and what ran)."""
    pyspiel = import_pyspiel()
    children: dict[str, SelfPlayChild] = {}
    if Path(args.compiled).exists():
        children["compiled"] = SelfPlayChild(args.compiled)
    if args.today:
        children["today"] = SelfPlayChild(sys.executable, str(Path(args.today).resolve()))
    selfplay_ours(999, 20)  # warm up
    if pyspiel is not None:
        selfplay_openspiel(pyspiel, 999, 5)
    out: dict[str, Any] = {"pure": [], "steps": [], "kinds": Counter(), "openspiel": [], "pyspiel": pyspiel,
                           "children": children, **{name: [] for name in children}}
    for seed in seeds:
        rate, steps, kinds = selfplay_ours(seed, deals)
        out["pure"].append(rate)
        out["steps"].append(steps)
        out["kinds"].update(kinds)
        for name, child in children.items():
            out[name].append(child.rate(seed, deals))
        if pyspiel is not None:
            out["openspiel"].append(selfplay_openspiel(pyspiel, seed, max(deals // 5, 20)))
    for child in children.values():
        child.close()
    out["pre"] = statistics.median(selfplay_ours(s, deals, decks_outside=True)[0] for s in seeds)
    return out


def report_selfplay(rounds: dict[str, Any], seeds: Sequence[int]) -> None:
    """Prints (a), (d), (e)."""
    rates: list[float] = rounds["pure"]
    ours_rate = statistics.median(rates)
    kinds: Counter[str] = rounds["kinds"]
    total = sum(kinds.values())
    print()
    print("(a) random self-play, classic rules, legal_actions() at every step")
    print(f"    pure:      {ours_rate:8.0f} deals/CPU-s  (median of {len(seeds)}; runs: {runs_text(rates)})  "
          f"{statistics.mean(rounds['steps']):.1f} steps/deal")
    print(f"    pure, decks shuffled before the timer (engine + policy only): {rounds['pre']:8.0f} deals/CPU-s")
    print("    outcomes:  " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in sorted(kinds.items())))
    print(f"    goal: >= {GOAL_DEALS} deals/CPU-s  -> {'met' if ours_rate >= GOAL_DEALS else 'NOT met'}")
    children: dict[str, SelfPlayChild] = rounds["children"]
    if "compiled" in children:
        c = children["compiled"]
        print(f"(d) compiled build: {c.file} (engine {'compiled (mypyc)' if c.compiled else 'NOT compiled'})")
        print(f"    compiled:  {statistics.median(rounds['compiled']):8.0f} deals/CPU-s  (runs: "
              f"{runs_text(rounds['compiled'])})")
        print(f"    ratio compiled/pure: {ratio_of_rounds(rounds['compiled'], rates):.2f}x  (acceptance >= 1.6x)")
    else:
        print("(d) compiled build: not found (GIN_ARENA_COMPILE=require pip install . into .venv-compiled): skipped")
    if "today" in children:
        t = children["today"]
        print(f"(e) today: {t.file}")
        today = rounds["today"]
        print(f"    today:     {statistics.median(today):8.0f} deals/CPU-s  (runs: {runs_text(today)})")
        print(f"    ratio pure/today: {ratio_of_rounds(rates, today):.2f}x  (acceptance: no slower, >= ~1.0x)")


def report_deadwood(hands: int) -> float:
    """Prints (b); the median µs per call."""
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
    return med


def report_openspiel(rounds: dict[str, Any], med: float, hands: int) -> None:
    """Prints (c): OpenSpiel's self-play (run in the same rounds) and deadwood, with the ratios."""
    print()
    pyspiel = rounds["pyspiel"]
    if pyspiel is None:
        print("(c) OpenSpiel: pyspiel not importable (pip install open_spiel): comparison skipped")
        return
    os_results: list[tuple[float, float, float]] = rounds["openspiel"]
    os_rates = [r[0] for r in os_results]
    print(f"(c) OpenSpiel {getattr(pyspiel, '__version__', '')} gin_rummy, random play (same rounds, a fifth of "
          "the deals)")
    print(f"    OpenSpiel: {statistics.median(os_rates):8.0f} deals/CPU-s  "
          f"{statistics.mean(r[1] for r in os_results):.1f} player steps + "
          f"{statistics.mean(r[2] for r in os_results):.1f} chance steps/deal")
    print(f"    ratio pure/OpenSpiel: {ratio_of_rounds(rounds['pure'], os_rates):.1f}x deals/CPU-s (goal >= 10x)")
    if "compiled" in rounds["children"]:
        print(f"    ratio compiled/OpenSpiel: {ratio_of_rounds(rounds['compiled'], os_rates):.1f}x deals/CPU-s "
              "(goal >= 20x)")
    if "today" in rounds["children"]:
        print(f"    ratio today/OpenSpiel: {ratio_of_rounds(rounds['today'], os_rates):.1f}x deals/CPU-s")
    try:
        fn = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10).min_deadwood
    except AttributeError:
        print("    GinRummyUtils.min_deadwood not reachable from Python: deadwood comparison skipped")
        return
    rng = random.Random(20240601)
    os11 = [to_openspiel(h) for h in random_masks(rng, hands, 11)]
    for oh in os11[:500]:
        fn(oh)
    omed, op90 = quantiles(per_call_us(fn, os11))
    print(f"    OpenSpiel GinRummyUtils.min_deadwood (11 cards): median {omed:6.2f} us   p90 {op90:6.2f} us")
    print(f"    ratio OpenSpiel/ours (median): {omed / med:.1f}x")


if __name__ == "__main__":
    main()
