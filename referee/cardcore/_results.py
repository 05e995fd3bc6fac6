"""What the games' results share: places once some seats forfeited."""

from __future__ import annotations

from collections.abc import Sequence


def places_with_forfeits(places: Sequence[int], forfeited: Sequence[int]) -> tuple[int, ...]:
    """``places`` with the ``forfeited`` seats (in the order they faulted) moved to the last
    places, the latest to fault first among them; the others keep their order and ties."""
    n = len(places)
    out = [0] * n
    others = [s for s in range(n) if s not in forfeited]
    for s in others:
        out[s] = 1 + sum(1 for o in others if places[o] < places[s])
    for i, s in enumerate(reversed(forfeited)):
        out[s] = len(others) + 1 + i
    return tuple(out)
