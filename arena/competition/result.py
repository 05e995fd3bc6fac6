"""One finished game as the competition sees it, whatever the number of seats: who sat where,
their places (tied seats share one), their points and the duplicate group the game belongs to.
The winner is derived from the places, never stored beside them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.seating import base_name


@dataclass(frozen=True, slots=True)
class Result:
    """How one game ended, for the formats and the raters."""

    players: tuple[str, ...]
    """The players by seat (an instance ``greedy#2`` counts as its bot: :attr:`bots`)."""
    places: tuple[int, ...]
    """The 1-based place of each seat, tied seats sharing one; every seat first: no result (an
    aborted game says nothing about the order)."""
    points: tuple[int, ...] = ()
    """The game totals by seat (empty: not known)."""
    group: str = ""
    """The duplicate group the game belongs to (the games of one rotation of the seats on one
    deck share it); empty: the game stands alone."""

    def __post_init__(self) -> None:
        if len(self.places) != len(self.players):
            raise ValueError(f"a result needs a place for each of its {len(self.players)} seats; "
                             f"got {len(self.places)}")
        if self.points and len(self.points) != len(self.players):
            raise ValueError(f"a result's points are by seat ({len(self.players)}); got {len(self.points)}")

    @classmethod
    def of_winner(cls, players: Sequence[str], winner: int | None, group: str = "",
                  points: Sequence[int] = ()) -> Result:
        """A game known by its winning seat: the winner first, every other seat second; no winner:
        every seat first (no result)."""
        places = tuple(1 if winner is None or s == winner else 2 for s in range(len(players)))
        return cls(tuple(players), places, tuple(points), group)

    @property
    def bots(self) -> tuple[str, ...]:
        """The bots by seat (instances as their bot)."""
        return tuple(base_name(p) for p in self.players)

    @property
    def rated(self) -> bool:
        """Whether the game says anything about the order (not every seat shares one place)."""
        return len(set(self.places)) > 1

    @property
    def winner(self) -> int | None:
        """The seat alone in first place, or ``None`` (no result, or first place shared)."""
        firsts = [s for s, p in enumerate(self.places) if p == 1]
        return firsts[0] if len(firsts) == 1 and self.rated else None

    def score(self, i: int, j: int) -> float:
        """Seat ``i``'s score against seat ``j``: 1 ahead, ½ level, 0 behind."""
        a, b = self.places[i], self.places[j]
        return 1.0 if a < b else 0.0 if a > b else 0.5

    def score_of(self, bot: str, opponent: str) -> float | None:
        """``bot``'s mean score against ``opponent`` over their seats (every seat of the one
        against every seat of the other); ``None`` if the two did not both play."""
        bots = self.bots
        scores = [self.score(i, j) for i, a in enumerate(bots) for j, b in enumerate(bots)
                  if a == bot and b == opponent]
        return sum(scores) / len(scores) if scores else None
