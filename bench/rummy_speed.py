"""Speed of the rummy engine beside Gin's: random self-play, per decision and per turn.

Each round plays a batch of random deals of Gin (classic rules, two seats) and of rummy (the
``rummy`` preset) for 2, 4 and 6 seats, in slices of ``SLICE`` deals taken in turn (Gin's slice,
then each rummy's, then Gin's next ...), so that the games compare under the same load even when
the machine's load changes within a round; rounds repeat and the figures are medians over rounds. Every step calls
``legal_actions()`` and plays a uniformly random legal action (``random.Random.choice``); the
decks are shuffled before the timer starts (engine and policy only, ``time.process_time``).

- a *decision* is one action (every ``apply``);
- a *turn* starts with each action that begins a seat's turn: Gin's ``pass``, ``take_upcard``,
  ``draw_stock``, ``draw_discard``; rummy's ``draw_stock`` and ``take_discard`` (a rummy turn
  holds the draw, its melds and layoffs, the discard and the stop questions it raises).

The ratios rummy/Gin are taken within each round, then the median. Goal: a 4-seat rummy decision
≤ 2× a Gin decision and a 4-seat rummy turn ≤ 2× a Gin turn.

``--referee``: the referee's CPU per decision for a 4-seat rummy match beside a two-seat Gin
match, interleaved, each played by ``referee.play_match`` on an embedded referee in this process
(the sample random bots in their own processes, so ``time.process_time`` of this process is the
referee's: gRPC, the game, the messages, the replay); divided by the match's decisions. Gin plays
classic rules to 25, rummy three games of the ``rummy`` preset to 500 (a few thousand decisions each).

Run: ``PYTHONPATH=. python bench/rummy_speed.py [--quick] [--referee]``
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee import gin, rummy

SLICE = 10
"""Deals of one game played before the next game's turn, within a round."""
GOAL = 2.0
"""A 4-seat rummy decision (and turn) may cost at most this many Gin decisions (turns)."""
SEATS = (2, 4, 6)
_GIN_TURN_KINDS = frozenset({"pass", "take_upcard", "draw_stock", "draw_discard"})
_RUMMY_TURN_KINDS = frozenset({"draw_stock", "take_discard"})


@dataclass(frozen=True, slots=True)
class Batch:
    """What one batch of random deals cost."""

    seconds: float
    """CPU seconds of the batch."""
    decisions: int
    """Actions applied."""
    turns: int
    """Turns begun."""

    def __add__(self, other: Batch) -> Batch:
        return Batch(self.seconds + other.seconds, self.decisions + other.decisions, self.turns + other.turns)

    @property
    def us_per_decision(self) -> float:
        """CPU microseconds per decision."""
        return 1e6 * self.seconds / self.decisions

    @property
    def us_per_turn(self) -> float:
        """CPU microseconds per turn."""
        return 1e6 * self.seconds / self.turns


def gin_batch(seed: int, first: int, deals: int) -> Batch:
    """``deals`` random deals of Gin (classic rules), from deal number ``first``."""
    rules = gin.RuleSet.classic()
    decks = [gin.deck_for_deal(seed.to_bytes(8, "big"), 1, i + 1) for i in range(first, first + deals)]
    choice = random.Random(seed * 100_003 + first).choice
    decisions = turns = 0
    t0 = time.process_time()
    for i, deck in enumerate(decks, first):
        deal = gin.Deal(deck, i & 1, rules)
        legal = deal.legal_actions()
        while legal:
            action = choice(legal)
            deal.apply(action)
            decisions += 1
            turns += action.kind in _GIN_TURN_KINDS
            legal = deal.legal_actions()
    return Batch(time.process_time() - t0, decisions, turns)


def rummy_batch(seed: int, first: int, deals: int, seats: int) -> Batch:
    """``deals`` random deals of rummy (the ``rummy`` preset) for ``seats`` seats, from deal
    number ``first``."""
    rules = rummy.RummyRules.preset("rummy")
    match_seed = seed.to_bytes(8, "big")
    keys = [rummy.deal_key(match_seed, 1, i + 1) for i in range(first, first + deals)]
    decks = [rummy.shuffle(rummy.DECK, k) for k in keys]
    choice = random.Random(seed * 100_003 + first).choice
    decisions = turns = 0
    t0 = time.process_time()
    for i, deck in enumerate(decks):
        deal = rummy.Deal.from_deck(deck, (first + i) % seats, rules, seats, key=keys[i])
        legal = deal.legal_actions()
        while legal:
            action = choice(legal)
            deal.apply(action)
            decisions += 1
            turns += action.kind in _RUMMY_TURN_KINDS
            legal = deal.legal_actions()
    return Batch(time.process_time() - t0, decisions, turns)


def interleaved(rounds: int, deals: int) -> dict[str, list[Batch]]:
    """Each round: ``deals`` deals of Gin and of rummy per seat count, in slices of ``SLICE``
    deals taken in turn (same seeds per round)."""
    games: dict[str, Callable[[int, int, int], Batch]] = {"gin": gin_batch}
    for n in SEATS:
        games[f"rummy-{n}"] = functools.partial(rummy_batch, seats=n)
    for play in games.values():  # warm up
        play(999, 0, deals)
    out: dict[str, list[Batch]] = {name: [] for name in games}
    for r in range(rounds):
        total = dict.fromkeys(games, Batch(0.0, 0, 0))
        for first in range(0, deals, SLICE):
            for name, play in games.items():
                total[name] += play(1000 + r, first, min(SLICE, deals - first))
        for name, batch in total.items():
            out[name].append(batch)
    return out


def ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """The median over rounds of ``a[i] / b[i]``."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def report(batches: dict[str, list[Batch]]) -> None:
    """Print the figures per game and the ratios to Gin's."""
    gin_dec = [b.us_per_decision for b in batches["gin"]]
    gin_turn = [b.us_per_turn for b in batches["gin"]]
    print(f"{'game':10} {'us/decision':>12} {'us/turn':>10} {'decisions/turn':>15} {'x Gin decision':>15}"
          f" {'x Gin turn':>11}")
    for name, bs in batches.items():
        dec = [b.us_per_decision for b in bs]
        turn = [b.us_per_turn for b in bs]
        per_turn = sum(b.decisions for b in bs) / sum(b.turns for b in bs)
        print(f"{name:10} {statistics.median(dec):12.2f} {statistics.median(turn):10.2f} {per_turn:15.2f}"
              f" {ratio(dec, gin_dec):14.2f}x {ratio(turn, gin_turn):10.2f}x")
    four = batches["rummy-4"]
    dec4 = ratio([b.us_per_decision for b in four], gin_dec)
    turn4 = ratio([b.us_per_turn for b in four], gin_turn)
    print(f"goal: 4-seat rummy decision <= {GOAL:.0f}x Gin's -> {'met' if dec4 <= GOAL else 'NOT met'} ({dec4:.2f}x);"
          f" turn <= {GOAL:.0f}x -> {'met' if turn4 <= GOAL else 'NOT met'} ({turn4:.2f}x)")


def referee_match_cpu(game: str, seed: int) -> tuple[float, int]:
    """CPU microseconds of the embedded referee per decision of one match of the random bots,
    and the match's decisions."""
    from referee import BotLaunch, MatchSpec, TimeControl, play_match

    seats = 2 if game == "gin" else 4
    module = "sample_bots.random_bot" if game == "gin" else "sample_bots.rummy_random_bot"
    bot = BotLaunch(command=("{python}", "-m", module), env=(("GIN_LOG_LEVEL", "WARNING"),))
    rules = gin.RuleSet.classic(target=25) if game == "gin" else rummy.RummyRules.preset("rummy", target=500, games=3)
    spec = MatchSpec(players=tuple(f"random{s}" for s in range(seats)), rules=rules, game=game,
                     time_control=TimeControl(per_move_ms=10_000), seed=seed.to_bytes(8, "big"))
    t0 = time.process_time()
    report = play_match(spec, (bot,) * seats).report
    return 1e6 * (time.process_time() - t0) / max(1, report.decisions), report.decisions


def referee_cpu(rounds: int) -> None:
    """Print the referee's CPU per decision, Gin's and 4-seat rummy's, rounds interleaved."""
    from referee.lowlevel import configure_logging

    configure_logging("warning")
    runs: dict[str, list[tuple[float, int]]] = {"gin": [], "rummy": []}
    for r in range(rounds):
        for game, played in runs.items():
            played.append(referee_match_cpu(game, 2000 + r))
    print(f"referee CPU per decision ({rounds} matches each, interleaved; random bots, embedded referee):")
    for game, played in runs.items():
        label = "gin, 2 seats:  " if game == "gin" else "rummy, 4 seats:"
        print(f"  {label} {statistics.median(us for us, _ in played):8.1f} us  (matches: "
              f"{', '.join(f'{us:.0f} us x {n}' for us, n in played)} decisions)")
    print(f"  ratio rummy/gin: {ratio([us for us, _ in runs['rummy']], [us for us, _ in runs['gin']]):.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="3 rounds of 100 deals")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--deals", type=int, default=None)
    ap.add_argument("--referee", action="store_true", help="also the referee's CPU per decision (plays matches)")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    deals = args.deals or (100 if args.quick else 500)
    print(f"Python {sys.version.split()[0]}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())};"
          f" {rounds} rounds x {deals} deals per game, interleaved")
    report(interleaved(rounds, deals))
    if args.referee:
        referee_cpu(rounds)
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
