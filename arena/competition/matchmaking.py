"""Who plays whom next on a continuous ladder: the hosted ladder of ``arena serve`` and the local
``arena ladder`` both ask this module. Pure: no clock, no store, no I/O; the randomness and the
times are the caller's.

The caller pairs in short *waves* (:attr:`Matchmaking.wave_ms`): a bot that becomes free is not
paired at once with whoever else is free at that instant — that instant holds only the bots its
own finished game freed, which would meet again, forever — but with the bots free when the wave
ends, and it may wait for a bot still playing (one *about to be* free). Each wave
(:func:`pair_wave`), longest-waiting bot first, a table is made of the partners it has met least
(head-to-head: games two bots played at one table), then the nearest in the standings. A table is
made only if, for each of its bots, its head-to-head with the others is within
the share :attr:`Matchmaking.slack` of the least it could have with any bot online (playing or not),
and its bots stand within :attr:`Matchmaking.band` of the standings of each other — otherwise
its bots wait, if a bot playing now would fit them better (else the nearest table there is now is
made: nothing is gained by waiting). The band widens with each wave its longest-waiting bot
has sat out, the head-to-head accepted with each round of waves (:attr:`Matchmaking.patience`),
both with each :attr:`Matchmaking.patience_ms` it has waited (lichess's pools widen the rating
range the same way), without bound: no bot starves.

A table is a duplicate group's bots: the caller plays its games (the seats rotated) with the
same bots, before pairing them anew.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

PairingRule = Literal["least-met", "random"]
PAIRING_RULES: tuple[PairingRule, ...] = get_args(PairingRule)
FORMER_RULES: Mapping[str, PairingRule] = {"fewest-games": "least-met"}
"""Rule names of earlier versions, read as today's rule (a ladder file written before keeps working)."""

HeadToHead = Mapping[frozenset[str], int]
"""Games two bots played at one table, by the pair (a missing pair: none)."""


@dataclass(frozen=True, slots=True)
class Matchmaking:
    """How a ladder pairs (the hosted ladder file's ``pairing…`` keys; the local ladder's defaults)."""

    rule: PairingRule = "least-met"
    """``least-met``: as this module says; ``random``: any free bots at once, no waiting."""
    wave_ms: int = 100
    """``pairing_wave_ms``: a bot that becomes free waits this long for others to become free too;
    then the bots free are paired together (0: a wave on every change)."""
    slack: float = 0.25
    """``pairing_slack``: a table is made at once when each bot's head-to-head with the others
    exceeds the least it could have by at most this share of that least (0 while it has not met
    every bot yet: a bot that has never met some bot online waits for one)."""
    patience: int = 2
    """``pairing_patience``: each time a table's longest-waiting bot has sat out this many rounds
    of waves in which other bots became free (a round: as many waves as the bots online for the
    play fill tables — every table playing may have ended once), its bots accept one table's
    games more of head-to-head: a bot waits for partners to be freed, not for a clock."""
    patience_ms: int = 60_000
    """``pairing_patience_ms``: … and each time it has waited this long (when nothing frees a bot)."""
    band: float = 0.5
    """``pairing_band``: a table's bots stand at most this share of the standings apart (of the
    bots online for the play: 0.5, the nearer half); as wide again for each wave its
    longest-waiting bot sat out."""

    def __post_init__(self) -> None:
        if self.rule not in PAIRING_RULES:
            raise ValueError(f"pairing must be one of {', '.join(PAIRING_RULES)}; got {self.rule!r}")
        if not isinstance(self.wave_ms, int) or isinstance(self.wave_ms, bool) or self.wave_ms < 0:
            raise ValueError(f"pairing_wave_ms must be an integer >= 0; got {self.wave_ms!r}")
        if isinstance(self.slack, bool) or not isinstance(self.slack, (int, float)) or self.slack < 0:
            raise ValueError(f"pairing_slack must be a number >= 0; got {self.slack!r}")
        for name in ("patience", "patience_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"pairing_{name} must be an integer >= 1; got {value!r}")
        if isinstance(self.band, bool) or not isinstance(self.band, (int, float)) or not 0 < self.band <= 1:
            raise ValueError(f"pairing_band must be a number above 0 and at most 1; got {self.band!r}")

    def level(self, seeker: Seeker, tables: int) -> int:
        """How far a table of ``seeker`` (its longest-waiting bot) widens the head-to-head it
        accepts, with ``tables`` tables in a round: 1, then one more per patience (of rounds or of
        time) waited."""
        rounds = seeker.waves // (self.patience * max(1, tables))
        return 1 + max(rounds, int(max(0.0, seeker.waited_ms) // self.patience_ms))

    def band_for(self, seeker: Seeker) -> float:
        """The band of a table of ``seeker``: :attr:`band`, as wide again for each wave it sat
        out (the standings give way before the head-to-head does)."""
        return self.band * (1 + seeker.waves + int(max(0.0, seeker.waited_ms) // self.patience_ms)) + 1e-9


@dataclass(frozen=True, slots=True)
class Seeker:
    """A bot online for the play being paired."""

    bot: str
    """Its name."""
    rating: float
    """Its rating now (any scale: only its place in the standings counts)."""
    free: bool = True
    """It may be seated now (it has room for a new table); else it is playing: a partner to wait
    for, not one to seat."""
    waited_ms: float = 0.0
    """How long it has been free without a table."""
    waves: int = 0
    """The waves in which other bots became free that it has sat out since it became free."""


@dataclass(frozen=True, slots=True)
class Wave:
    """What one wave decided."""

    tables: tuple[tuple[str, ...], ...]
    """The tables to start now (each a duplicate group's bots; no bot in two)."""
    retry_ms: float | None
    """After how long the tolerances of a free bot left waiting widen (pair again then, or on a
    change before); ``None``: no free bot waits for that."""


def met_at(tables: Iterable[Sequence[str]], met: Counter[frozenset[str]] | None = None,
           games: int = 1) -> Counter[frozenset[str]]:
    """``met`` (a new count if ``None``) with ``games`` games added for every pair of each of
    ``tables`` (a table's bots, by seat; a bot's second seat adds nothing)."""
    out = met if met is not None else Counter()
    for table in tables:
        for a, b in itertools.combinations(sorted(set(table)), 2):
            out[frozenset((a, b))] += games
    return out


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
