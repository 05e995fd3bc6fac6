"""The seats' clocks: each seat under its own time control, in integer microseconds so that a
replay re-runs them exactly."""

from __future__ import annotations

from collections.abc import Sequence

from referee.model.limits import WIRE_MS_MAX
from referee.model.timecontrol import TimeControl


class Clocks:
    """Every seat's clock."""

    __slots__ = ("_fixed", "remaining_us", "tcs")

    def __init__(self, tcs: Sequence[TimeControl]) -> None:
        self.tcs = tuple(tcs)
        """The time control by seat."""
        self.remaining_us: list[int] = []
        """What is left on each incremental clock."""
        self._fixed = [tc.per_move_ms for tc in self.tcs] if all(tc.is_fixed for tc in self.tcs) else None
        self.reset()

    def reset(self) -> None:
        """Every clock back to its base time (at the start of a game)."""
        self.remaining_us = [tc.base_ms * 1000 for tc in self.tcs]

    def allowance(self, seat: int) -> int:
        """Milliseconds this seat may use for its next decision (without the margin)."""
        tc = self.tcs[seat]
        if tc.is_fixed:
            return tc.per_move_ms
        return min(WIRE_MS_MAX, max(0, self.remaining_us[seat] // 1000))  # a bank grown past the wire's range

    def charge(self, seat: int, used_us: int) -> bool:
        """Charge a decision; False if it lost on time."""
        tc = self.tcs[seat]
        if tc.is_fixed:
            return used_us <= (tc.per_move_ms + tc.margin_ms) * 1000
        self.remaining_us[seat] -= used_us
        ok = self.remaining_us[seat] + tc.margin_ms * 1000 >= 0
        self.remaining_us[seat] += tc.increment_ms * 1000
        return ok

    def refund(self, seat: int, used_us: int) -> None:
        """Undo :meth:`charge` of ``used_us`` (a decision lost on time that the seat plays on
        from: its clock stands as before that decision, without the increment)."""
        tc = self.tcs[seat]
        if not tc.is_fixed:
            self.remaining_us[seat] += used_us - tc.increment_ms * 1000

    def shown(self) -> list[int]:
        """Each seat's clock in milliseconds as the seats are shown it."""
        if self._fixed is not None:  # per-move clocks only: always the same
            return self._fixed.copy()
        return [tc.per_move_ms if tc.is_fixed else r // 1000 for tc, r in zip(self.tcs, self.remaining_us, strict=True)]
