"""Who sits where: instances of one bot, the rotation of a table's seats within a duplicate group,
and the groups' shuffle seeds. The one copy every format, the tournament's schedule and both
ladders use.

A *group* is one rotation of a table: as many games as seats, game ``leg`` seating the table's
player ``i`` at seat ``(i - leg - shift) mod N`` (:func:`seating`). With duplicate deals the games
of a group are played on one shuffle seed, so each bot holds every hand once; every seed comes
from the run seed by SHA-256 (:func:`group_seeds`), so a schedule is a function of its inputs.
"""

from __future__ import annotations

import hashlib
import itertools
import struct
from collections.abc import Callable, Sequence


def base_name(player: str) -> str:
    """The bot a seat's player is an instance of: ``greedy#2`` → ``greedy``."""
    return player.partition("#")[0]


def instance_names(table: Sequence[str]) -> tuple[str, ...]:
    """A table's players: the second and later instances of a bot get ``#2``, ``#3``, …"""
    seen: dict[str, int] = {}
    out = []
    for bot in table:
        seen[bot] = seen.get(bot, 0) + 1
        out.append(bot if seen[bot] == 1 else f"{bot}#{seen[bot]}")
    return tuple(out)


def table_key(players: Sequence[str]) -> str:
    """The key of a table (its players joined by ``|``): what its groups' seeds derive from."""
    return "|".join(players)


def seating(table: Sequence[str], leg: int, shift: int = 0) -> tuple[str, ...]:
    """The players by seat of game ``leg`` of a group of ``table`` whose first seat moved on by
    ``shift``: seat ``s`` holds ``table[(s + leg + shift) mod N]``."""
    n = len(table)
    return tuple(table[(s + leg + shift) % n] for s in range(n))


def rotations(table: Sequence[str], shift: int = 0) -> list[tuple[str, ...]]:
    """The seatings of a whole group: one per rotation of the seats (for two, the seats swapped)."""
    return [seating(table, leg, shift) for leg in range(len(table))]


def _h(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def pair_seeds(run_seed: str, pairing: str, pair: int, duplicate: bool,
               first_dealer: Callable[[bytes], int] | None = None) -> tuple[bytes, bytes]:
    """The two games' seeds of pair ``pair`` of ``pairing``.

    ``base = SHA-256("gin-arena/arena-pair/v1\\0" || seed || "\\0" || pairing || u32be(pair))``;
    duplicate (or a game without ``first_dealer``): both games use ``base``. Otherwise game 0 uses
    ``SHA-256(base || "A")`` and game 1 the first ``SHA-256(base || "B" || u32be(k))``, k = 0, 1,
    …, whose ``first_dealer`` (seat) is the same as game 0's — so the other bot deals first."""
    base = _h(
        b"gin-arena/arena-pair/v1\x00", run_seed.encode(), b"\x00", pairing.encode(), struct.pack(">I", pair)
    )
    if duplicate or first_dealer is None:
        return base, base
    first = _h(base, b"A")
    dealer = first_dealer(first)
    for k in itertools.count():
        second = _h(base, b"B", struct.pack(">I", k))
        if first_dealer(second) == dealer:
            return first, second
    raise AssertionError("unreachable")  # pragma: no cover


def group_seeds(run_seed: str, key: str, group: int, seats: int, duplicate: bool,
                first_dealer: Callable[[bytes, int], int] | None = None) -> tuple[bytes, ...]:
    """The seeds of the ``seats`` games of group ``group`` of table ``key``: a two-seat pair of a
    game that draws its first dealer (``first_dealer(seed, seats)``,
    ``referee.games.DrawsFirstDealer``) as :func:`pair_seeds`; otherwise the base seed of
    :func:`pair_seeds` for every game (duplicate) or ``SHA-256(base || "L" || u32be(r))`` for game
    ``r``."""
    if seats == 2 and first_dealer is not None:
        draws = first_dealer
        return pair_seeds(run_seed, key, group, duplicate, lambda seed: int(draws(seed, seats)))
    base = pair_seeds(run_seed, key, group, True)[0]
    return tuple(base if duplicate else _h(base, b"L", struct.pack(">I", r)) for r in range(seats))
