"""The seatings of a hosted ladder's duplicate group (who plays whom is
:mod:`arena.competition.matchmaking`'s)."""

from __future__ import annotations

from collections.abc import Sequence


def rotations(table: Sequence[str]) -> list[tuple[str, ...]]:
    """The seatings of a duplicate group: one per rotation of the seats (for two, the seats swapped)."""
    n = len(table)
    return [tuple(table[(s + leg) % n] for s in range(n)) for leg in range(n)]
