"""A continuous ladder simulated on a clock it controls (no process, no sleep): bots that play one
game at a time, duplicate groups whose games follow one another, waves as the hosted ladder makes
them — to check :mod:`arena.competition.formats.ladder`'s properties over thousands of games in
milliseconds (tests/test_matchmaking.py). Times are seconds of the simulated clock."""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from dataclasses import dataclass, field

from arena.competition.formats.ladder import pair_wave
from arena.competition.matchmaking import Matchmaking, Seeker, met_at


@dataclass
class Sim:
    """The ladder's state; :meth:`run` plays until ``games`` are finished."""

    settings: Matchmaking
    seats: int = 2
    seed: int = 1
    joins: dict[str, float] = field(default_factory=dict)
    """Each bot and when it comes online."""
    game_s: tuple[float, float] = (0.2, 1.0)
    """A game's duration: uniform between these."""
    games: list[tuple[str, ...]] = field(default_factory=list)
    """The finished games' bots, in the order they finished."""
    waits: dict[str, float] = field(default_factory=dict)
    """The longest wait of each bot for a table (seconds)."""

    def run(self, games: int) -> float:
        """Play until ``games`` are finished; returns the simulated time it took."""
        rng = random.Random(self.seed)
        met: Counter[frozenset[str]] = Counter()
        free_since: dict[str, float] = {}
        events: list[tuple[float, int, str, tuple[str, ...], int]] = []
        order = itertools.count()
        for bot, at in self.joins.items():
            heapq.heappush(events, (at, next(order), "join", (bot,), 0))
        wave_at: float | None = None
        waves: Counter[str] = Counter()
        fresh = False
        now = 0.0
        while len(self.games) < games:
            now, _, kind, table, leg = heapq.heappop(events)
            if kind == "join":
                free_since[table[0]] = now
                fresh = True
            elif kind == "end":
                self.games.append(table)
                if leg + 1 < self.seats:  # the group's next game: the same bots, at once
                    end = now + rng.uniform(*self.game_s)
                    heapq.heappush(events, (end, next(order), "end", table, leg + 1))
                    continue
                for bot in table:
                    free_since[bot] = now
                    waves[bot] = 0
                fresh = True
            elif kind == "wave" and wave_at is not None and now >= wave_at:
                wave_at = None
                online = [b for b, at in self.joins.items() if at <= now]
                pool = [Seeker(b, -float(sorted(self.joins).index(b)), b in free_since,
                               (now - free_since[b]) * 1000 if b in free_since else 0.0, waves[b]) for b in online]
                wave = pair_wave(pool, met, self.seats, self.settings, rng)
                paired = {b for t in wave.tables for b in t}
                for b in free_since:
                    waves[b] += fresh and b not in paired
                fresh = False
                for t in wave.tables:
                    for bot in t:
                        self.waits[bot] = max(self.waits.get(bot, 0.0), now - free_since.pop(bot))
                    met_at([t], met, self.seats)
                    heapq.heappush(events, (now + rng.uniform(*self.game_s), next(order), "end", t, 0))
                if wave.retry_ms is not None:
                    wave_at = now + wave.retry_ms / 1000
                    heapq.heappush(events, (wave_at, next(order), "wave", (), 0))
                continue
            soon = now + self.settings.wave_ms / 1000
            if fresh and (wave_at is None or soon < wave_at):  # a bot freed: a wave soon
                wave_at = soon
                heapq.heappush(events, (wave_at, next(order), "wave", (), 0))
        return now


def pair_counts(games: list[tuple[str, ...]], bots: list[str]) -> dict[frozenset[str], int]:
    """Games each pair of ``bots`` played together in ``games``."""
    met = met_at(games)
    return {frozenset(p): met[frozenset(p)] for p in itertools.combinations(bots, 2)}
