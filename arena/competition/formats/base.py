"""What a format is: a planner asked for one round at a time, given the field and every round
played so far with its results (cutechess's ``nextPair``, pulled a round at a time so that a
resumed run re-plans the same rounds from the stored results)."""

from __future__ import annotations

import hashlib
import itertools
import random
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from arena.competition.matchmaking import HeadToHead, Matchmaking, Seeker, Wave
from arena.competition.result import Result
from arena.competition.seating import instance_names, table_key


@dataclass(frozen=True, slots=True)
class Field:
    """Who takes part and how each meeting is played: what every format plans from."""

    bots: tuple[str, ...]
    """The bots, in their seeding order (the manifest's: the first is seed 1)."""
    seats: int = 2
    """Seats of every table."""
    games: int = 2
    """Games of one meeting (a table of a round): a multiple of ``seats``, whole groups."""
    seed: str = ""
    """The run seed (any text): random choices and every game's shuffle seed derive from it."""
    tables: int = 0
    """Round robin and gauntlet: tables drawn at random from every combination (0: all of them)."""
    instances: int = 1
    """Seats of one table that one bot may fill (as separate instances)."""
    challenger: str = ""
    """Gauntlet: the bot that plays everyone else (empty: the first bot)."""
    rounds: int = 0
    """Swiss: the rounds to play (0: the format's default)."""

    @property
    def groups(self) -> int:
        """Groups (rotations of the seats) in one meeting."""
        return self.games // self.seats


@dataclass(frozen=True, slots=True)
class Group:
    """One rotation of a table: ``seats`` games on one deck (duplicate) with the seats rotated
    (:func:`arena.competition.seating.seating`)."""

    players: tuple[str, ...]
    """The table's players (instance names) in the seat order of the group's first game before
    its ``shift``."""
    number: int
    """The group's number within its table: what its seeds and its duplicate key derive from."""
    shift: int = 0
    """How far the first seat moved on (it alternates from group to group)."""

    @property
    def key(self) -> str:
        """The table's key (its players joined by ``|``)."""
        return table_key(self.players)


@dataclass(frozen=True, slots=True)
class Round:
    """What one round plays: its groups in playing order, and the bots sitting it out."""

    number: int
    """The round's number, from 0."""
    groups: tuple[Group, ...]
    """The groups, in the order their games are played."""
    byes: tuple[str, ...] = ()
    """Bots without a game this round (a Swiss bye scores as a won meeting; a knockout bye
    goes through)."""
    label: str = ""
    """What the round is called (``round 2``, ``semi-final``, ``tie-break 1 of the final``)."""


@dataclass(frozen=True, slots=True)
class PlayedRound:
    """A round and the results of its games (so far: a resumed run's last round may be partly
    played; a format asks for the next round only once every game of the last has a result)."""

    round: Round
    """The round as it was planned."""
    results: tuple[Result, ...] = field(default=())
    """Its games' results (aborted games included: they share every place)."""


@runtime_checkable
class Format(Protocol):
    """Who plays whom: a new format is one file with a class like this and one line in
    :data:`arena.competition.formats.FORMATS`."""

    @property
    def name(self) -> str:
        """Its name on the command line (``--format``)."""

    def check(self, field: Field) -> None:
        """Raise ``ValueError`` (saying why) if the format cannot run this field."""

    def plan(self, field: Field, history: Sequence[PlayedRound]) -> Round | None:
        """The next round after ``history`` (every round planned so far, with its results), or
        ``None`` when the competition is over. A function of its arguments: the same field and
        history plan the same round."""


@runtime_checkable
class Continuous(Format, Protocol):
    """A format that also pairs continuously, a wave at a time, for a ladder that never ends (the
    hosted ``arena serve`` and the local ``arena ladder``, through
    :func:`arena.competition.formats.get_continuous`)."""

    def wave(self, pool: Sequence[Seeker], met: HeadToHead, seats: int, settings: Matchmaking,
             rng: random.Random, group_games: int = 0) -> Wave:
        """The tables of ``seats`` bots to start now from the free bots of ``pool`` (every bot
        online, free or playing), given the head-to-head ``met``; a table plays ``group_games``
        games (0: ``seats``, one rotation)."""

    def batch(self, ratings: Mapping[str, float], met: HeadToHead, groups: int, seats: int,
              settings: Matchmaking, rng: random.Random) -> list[tuple[str, ...]]:
        """``groups`` tables for a batch of a ladder whose bots are all free (waves, each table's
        games counted in the head-to-head before the next)."""


def _multisets(bots: Sequence[str], size: int, most: int) -> list[tuple[str, ...]]:
    """Every choice of ``size`` of ``bots`` (in order), each bot at most ``most`` times."""
    return [c for c in itertools.combinations_with_replacement(bots, size)
            if max(c.count(b) for b in c) <= most]


def every_table(field: Field, challenger: str | None = None) -> list[tuple[str, ...]]:
    """Every combination of ``seats`` bots (a bot at most ``instances`` times, never one bot
    alone), in order; with a ``challenger``, the tables that hold it once and any others."""
    if challenger is not None:
        others = [b for b in field.bots if b != challenger]
        return [(challenger, *c) for c in _multisets(others, field.seats - 1, field.instances)]
    return [c for c in _multisets(field.bots, field.seats, field.instances) if len(set(c)) > 1]


def drawn_tables(field: Field, every: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The tables: ``every`` one, or ``field.tables`` drawn from them at random
    (``SHA-256("gin-arena/arena-table/v1\\0" || seed || u32be(t))`` mod the number of
    combinations, t = 0, 1, …; the same table may be drawn twice)."""
    if not field.tables or not every:
        return every
    picks = []
    for t in range(field.tables):
        h = hashlib.sha256(b"gin-arena/arena-table/v1\x00" + field.seed.encode() + struct.pack(">I", t)).digest()
        picks.append(every[int.from_bytes(h[:8], "big") % len(every)])
    return picks


def interleaved(field: Field, tables: Sequence[tuple[str, ...]], first_number: int = 0) -> tuple[Group, ...]:
    """Every group of ``tables`` (each ``field.groups`` groups), interleaved so that a partial
    round is balanced: group 0 of every table, then group 1 of every table, …; the first seat
    moving on from group to group. A group's number is ``first_number`` plus its number within
    its table — with drawn tables (the same table may be drawn twice), its position in the
    interleaving."""
    out = []
    for g in range(field.groups):
        for t, table in enumerate(tables):
            number = g if not field.tables else g * len(tables) + t
            out.append(Group(instance_names(table), first_number + number, g % field.seats))
    return tuple(out)


def check_two_seats(name: str, field: Field) -> None:
    """The checks of a format of two-seat meetings (Swiss, knockout)."""
    if field.seats != 2:
        raise ValueError(f"{name} pairs bots two by two: it needs --seats 2; got {field.seats}")
    if field.tables:
        raise ValueError(f"{name} plans its own meetings: --tables does not apply")
    if len(set(field.bots)) < 2:
        raise ValueError(f"{name} needs at least two bots")
