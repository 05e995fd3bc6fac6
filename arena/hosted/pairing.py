"""Who plays whom next on the continuous ladder: pure choices over the bots that are online and
have room (no clock, no I/O; the randomness is the caller's)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from arena.hosted.ladder_file import PairingRule


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bot that may be seated now."""

    bot: str
    """Its registered name."""
    games: int
    """Games it has played or is playing on this server."""
    rating: float
    """Its rating now (the standings' ``mu``)."""


def choose_table(candidates: Sequence[Candidate], seats: int, rule: PairingRule,
                 rng: random.Random) -> tuple[str, ...] | None:
    """The bots of the next table, or ``None`` if fewer than ``seats`` may play. ``fewest-games``:
    the bot with the fewest games (ties at random), then the bots nearest its rating (ties: fewer
    games first, then at random); ``random``: any ``seats`` of them."""
    if len(candidates) < seats:
        return None
    if rule == "random":
        return tuple(c.bot for c in rng.sample(list(candidates), seats))
    shuffled = list(candidates)
    rng.shuffle(shuffled)  # the ties' order
    first = min(shuffled, key=lambda c: c.games)
    others = sorted((c for c in shuffled if c is not first), key=lambda c: (abs(c.rating - first.rating), c.games))
    return (first.bot, *(c.bot for c in others[: seats - 1]))
