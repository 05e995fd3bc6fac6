"""The ladder: who plays whom next on a continuous ladder. The hosted ladder of ``arena serve``
and the local ``arena ladder`` both ask this format, through the registry
(:func:`arena.competition.formats.get_continuous`); ``arena tournament --format ladder`` plays it
in rounds (:meth:`Ladder.plan`: a round is one wave with every bot free). Pure: no clock, no
store, no I/O; the randomness and the times are the caller's. Its settings and the bots it pairs:
:mod:`arena.competition.matchmaking` (``Matchmaking``, ``Seeker``, ``Wave``).

The caller pairs in short *waves* (``Matchmaking.wave_ms``): a bot that becomes free is not
paired at once with whoever else is free at that instant — that instant holds only the bots its
own finished game freed, which would meet again, forever — but with the bots free when the wave
ends, and it may wait for a bot still playing (one *about to be* free). Each wave
(:func:`pair_wave`), longest-waiting bot first, a table is made of the partners it has met least
(head-to-head: games two bots played at one table), then the nearest in the standings. A table is
made only if, for each of its bots, its head-to-head with the others is within the share
``Matchmaking.slack`` of the least it could have with any bot online (playing or not), and its
bots stand within ``Matchmaking.band`` of the standings of each other — otherwise its bots wait,
if a bot playing now would fit them better (else the nearest table there is now is made: nothing
is gained by waiting). The band widens with each wave its longest-waiting bot has sat out, the
head-to-head accepted with each round of waves (``Matchmaking.patience``), both with each
``Matchmaking.patience_ms`` it has waited (lichess's pools widen the rating range the same way),
without bound: no bot starves.

A table is a duplicate group's bots: the caller plays its games (the seats rotated) with the
same bots, before pairing them anew.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.competition.formats.base import Field, Group, PlayedRound, Round
from arena.competition.matchmaking import HeadToHead, Matchmaking, Seeker, Wave, met_at
from arena.competition.seating import base_name, instance_names

LADDER_ROUND_TRIES = 8
"""A tournament round of the ladder: how many waves (each its own draw of the ties) are tried; the
one whose tables have met least before is played."""

class _Pool:
    """One wave's view of the bots online: places in the standings and the least head-to-head
    each could have."""

    def __init__(self, pool: Sequence[Seeker], met: HeadToHead, seats: int, group_games: int) -> None:
        self.met = met
        self.seats = seats
        self.unit = group_games * (seats - 1)
        self.tables = -(-len(pool) // seats)
        """The tables the bots online fill: the waves of a round of patience."""
        """What one more table of the same bots adds to a bot's head-to-head with the rest."""
        ratings = sorted((s.rating for s in pool), reverse=True)
        span = max(1, len(ratings) - 1)
        first = {r: i for i, r in reversed(list(enumerate(ratings)))}
        self.place = {s.bot: first[s.rating] / span for s in pool}
        """A bot's place in the standings, 0 (top) to 1 (bottom; equal ratings share a place)."""
        self._names = [s.bot for s in pool]
        self.busy = [s.bot for s in pool if not s.free]
        """The bots playing now (about to be free)."""
        self._best: dict[str, int] = {}

    def best(self, bot: str) -> int:
        """The least head-to-head ``bot`` could have at a table of bots online."""
        if bot not in self._best:
            met = sorted(self.h2h(bot, o) for o in self._names if o != bot)
            self._best[bot] = sum(met[: self.seats - 1])
        return self._best[bot]

    def h2h(self, a: str, b: str) -> int:
        return self.met.get(frozenset((a, b)), 0)

    def excess(self, bot: str, table: Sequence[str]) -> int:
        """How many games more ``bot`` has met the rest of ``table`` than it could have."""
        return sum(self.h2h(bot, o) for o in table if o != bot) - self.best(bot)

    def fits(self, table: Sequence[str], level: int, band: float, settings: Matchmaking) -> bool:
        """Whether ``table`` (whole or partial) may be made at head-to-head ``level`` and ``band``."""
        if len(table) == self.seats and any(
                self.excess(b, table) > settings.slack * self.best(b) + (level - 1) * self.unit for b in table):
            return False
        places = [self.place[b] for b in table]
        return max(places) - min(places) <= band


    def worth_waiting(self, table: Sequence[str], band: float, free: Sequence[str]) -> bool:
        """Whether another bot would fit one of ``table``'s bots better: one it has met less than
        a bot of the table (playing now, or ``free`` now: then that bot's own turn makes it), or
        one playing now, as little met, within the band where the table is not. If none would,
        the table is the best there is: it is made, whatever the tolerances."""
        for m in table:
            worst = max(self.h2h(m, o) for o in table if o != m)
            far = max(abs(self.place[m] - self.place[o]) for o in table if o != m) > band
            if any(self.h2h(m, y) < worst for y in free if y not in table):
                return True
            for y in self.busy:
                met = self.h2h(m, y)
                if met < worst or (far and met <= worst and abs(self.place[m] - self.place[y]) <= band):
                    return True
        return False


def pair_wave(pool: Sequence[Seeker], met: HeadToHead, seats: int, settings: Matchmaking,
              rng: random.Random, group_games: int = 0) -> Wave:
    """The tables of ``seats`` bots to make now from the free bots of ``pool`` (every bot online
    for the play, free or playing: those playing count as partners worth waiting for); a table
    plays ``group_games`` games (0: ``seats``, one rotation)."""
    free = [s for s in pool if s.free]
    rng.shuffle(free)  # the ties' order
    if settings.rule == "random":
        return Wave(tuple(tuple(s.bot for s in free[i: i + seats]) for i in range(0, len(free) - seats + 1, seats)),
                    None)
    view = _Pool(pool, met, seats, group_games or seats)
    free.sort(key=lambda s: (-s.waves, -s.waited_ms))  # the longest-waiting first (stable: the shuffled ties)
    taken: set[str] = set()
    tables: list[tuple[str, ...]] = []
    for seeker in free:
        if seeker.bot in taken:
            continue
        others = [s for s in free if s.bot not in taken and s.bot != seeker.bot]
        table = _table(view, seeker, others, settings)
        if table is not None:
            tables.append(table)
            taken.update(table)
    waiting = [s.waited_ms for s in free if s.bot not in taken]
    retry = min((max(1.0, settings.patience_ms - w % settings.patience_ms) for w in waiting), default=None)
    return Wave(tuple(tables), retry)


def _table(view: _Pool, seeker: Seeker, others: Sequence[Seeker], settings: Matchmaking) -> tuple[str, ...] | None:
    """The table for ``seeker`` among the free ``others``, or ``None`` (it waits): partners added
    one at a time, the least met with the table so far first, then the nearest in the standings;
    the tolerances are those of the table's longest-waiting bot (``seeker``, taken first)."""
    level, band = settings.level(seeker, view.tables), settings.band_for(seeker)
    table = [seeker.bot]
    rest = list(others)
    while len(table) < view.seats:
        rest.sort(key=lambda s: (sum(view.h2h(s.bot, b) for b in table),
                                 max(abs(view.place[s.bot] - view.place[b]) for b in table)))
        pick = next((s for s in rest if view.fits([*table, s.bot], level, band, settings)), None)
        if pick is None:  # the nearest table there is now, unless a bot playing would fit better
            needed = view.seats - len(table)
            if len(rest) < needed:
                return None
            nearest = (*table, *(s.bot for s in rest[:needed]))
            return None if view.worth_waiting(nearest, band, [s.bot for s in rest]) else nearest
        table.append(pick.bot)
        rest.remove(pick)
    return tuple(table)


def plan_groups(ratings: Mapping[str, float], met: HeadToHead, groups: int, seats: int, settings: Matchmaking,
                rng: random.Random, games_per_group: int | None = None) -> list[tuple[str, ...]]:
    """``groups`` tables for a batch (the local ``arena ladder run``): waves over ``ratings``'s
    bots, every bot free at each wave (a wave with no table counts as a patience waited), each
    table's games (``games_per_group``, default ``seats``: a rotation) added to the head-to-head
    before the next wave. Each wave's tables hold distinct bots, so they can be played at once."""
    if len(ratings) < seats:
        raise ValueError(f"{seats} seats need at least {seats} bots; there are {len(ratings)}")
    counts: Counter[frozenset[str]] = Counter(met)
    out: list[tuple[str, ...]] = []
    waves = 0
    while len(out) < groups:
        pool = [Seeker(bot, rating, True, 0.0, waves) for bot, rating in ratings.items()]
        tables = pair_wave(pool, counts, seats, settings, rng, games_per_group or seats).tables[: groups - len(out)]
        waves = 0 if tables else waves + settings.patience
        out += tables
        met_at(tables, counts, games_per_group or seats)
    return out


def standings(field: Field, history: Sequence[PlayedRound]) -> dict[str, float]:
    """Each bot's points after ``history`` (a rated game: its score against each other seat,
    averaged over them — 1 ahead, ½ level, 0 behind): what a round's pairing orders the bots by."""
    points = dict.fromkeys(field.bots, 0.0)
    for played in history:
        for r in played.results:
            bots = r.bots
            if not r.rated or len(bots) < 2:
                continue
            for i, bot in enumerate(bots):
                if bot in points:
                    points[bot] += sum(r.score(i, j) for j in range(len(bots)) if j != i) / (len(bots) - 1)
    return points


def head_to_head(field: Field, history: Sequence[PlayedRound]) -> Counter[frozenset[str]]:
    """The games each two bots were planned to play at one table in ``history``."""
    met: Counter[frozenset[str]] = Counter()
    for played in history:
        met_at(([base_name(p) for p in g.players] for g in played.round.groups), met, field.seats)
    return met


def round_tables(field: Field, history: Sequence[PlayedRound], settings: Matchmaking,
                 rng: random.Random) -> tuple[list[tuple[str, ...]], list[str]]:
    """One round's tables (every bot free, no bot at two) and the bots sitting it out: as many as
    the tables leave over, those that sat out least so far (ties: at random); then waves of the
    bots not yet seated, each wave that seats nobody widening the tolerances as a patience waited
    would (they widen without bound: every bot not sitting out is seated)."""
    met = head_to_head(field, history)
    sat_out = Counter(b for played in history for b in played.round.byes)
    points = standings(field, history)
    order = list(field.bots)
    rng.shuffle(order)
    order.sort(key=lambda b: sat_out[b])
    byes = order[: len(order) % field.seats]
    left = [b for b in field.bots if b not in byes]
    tables: list[tuple[str, ...]] = []
    waves = 0
    while len(left) >= field.seats:
        pool = [Seeker(b, points[b], True, 0.0, waves) for b in left]
        made = pair_wave(pool, met, field.seats, settings, rng, field.games).tables
        waves = 0 if made else waves + settings.patience * len(left)
        tables += made
        left = [b for b in left if not any(b in t for t in made)]
    return tables, sorted(byes, key=field.bots.index)


@dataclass(frozen=True, slots=True)
class Ladder:
    """The continuous ladder's pairing (:func:`pair_wave`), a wave at a time for the ladders, a
    round at a time (a wave with every bot free) for a tournament."""

    name: str = "ladder"
    """Its name on the command line."""

    def rounds(self, field: Field) -> int:
        """The rounds to play: ``field.rounds``, or by default as many as every pair meeting once
        takes if no pair met twice (the pairs of the field over the pairs of a round's tables:
        N − 1 rounds for an even field of two seats, N for an odd one)."""
        n, seats = len(field.bots), field.seats
        return field.rounds or max(1, math.ceil(math.comb(n, 2) / ((n // seats) * math.comb(seats, 2))))

    def check(self, field: Field) -> None:
        if field.tables:
            raise ValueError("the ladder plans its own meetings: --tables does not apply")
        if field.instances != 1:
            raise ValueError("the ladder seats each bot once at a table: --instances does not apply")
        if len(set(field.bots)) < field.seats:
            raise ValueError(f"the ladder needs at least {field.seats} bots for {field.seats} seats")
        if field.rounds < 0:
            raise ValueError(f"the ladder needs a positive number of rounds; got {field.rounds}")

    def plan(self, field: Field, history: Sequence[PlayedRound]) -> Round | None:
        number = len(history)
        if number >= self.rounds(field):
            return None
        tries = [round_tables(field, history, Matchmaking(), random.Random(f"gin-arena/ladder-round/v1\0{field.seed}"
                                                                          f"\0{number}\0{t}"))
                 for t in range(LADDER_ROUND_TRIES)]
        met = head_to_head(field, history)
        tables, left = min(tries, key=lambda t: sum(met[frozenset(p)] for table in t[0]
                                                    for p in itertools.combinations(table, 2)))
        groups = tuple(Group(instance_names(t), number * field.groups + g, g % field.seats)
                       for g in range(field.groups) for t in tables)
        return Round(number, groups, tuple(left), f"round {number + 1} of {self.rounds(field)}")

    def wave(self, pool: Sequence[Seeker], met: HeadToHead, seats: int, settings: Matchmaking,
             rng: random.Random, group_games: int = 0) -> Wave:
        return pair_wave(pool, met, seats, settings, rng, group_games)

    def batch(self, ratings: Mapping[str, float], met: HeadToHead, groups: int, seats: int,
              settings: Matchmaking, rng: random.Random) -> list[tuple[str, ...]]:
        return plan_groups(ratings, met, groups, seats, settings, rng)
