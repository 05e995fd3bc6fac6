"""How a deal ended (R5, R6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from referee.cardcore import Value

from ._cards import Card

Phase = Literal["draw", "play", "stop", "lay_back", "over"]
"""Where a deal stands: the player to move must ``draw``; may ``play`` (meld, lay off, discard);
another seat is asked whether to call ``stop``; the stopped player must ``lay_back`` (lay off
the stopped card); or the deal is ``over``."""
EndReason = Literal["out", "lowest", "void"]


@dataclass(frozen=True, slots=True)
class RummyOutcome(Value):
    """The end of a deal, with its points per seat."""

    reason: EndReason
    """``out`` (a player went out, R4), ``lowest`` (R6: the stock ran out, the lowest hand won)
    or ``void`` (R6: the lowest hand was shared)."""
    winner: int | None
    """The seat that won the deal; ``None`` when void."""
    points: tuple[int, ...]
    """Deal points by seat (R5, R6, R9.4); all zero when void."""
    hand_values: tuple[int, ...]
    """The value of the cards left in each hand (R1)."""
    table_points: tuple[int, ...]
    """The value of the cards each seat put on the table (R9.4; counted into ``points`` only
    with ``scoring = table``)."""
    hands: tuple[tuple[Card, ...], ...]
    """The cards left in each hand, revealed when the deal is scored (R11)."""
    rummy: bool
    """Whether the winner went out "rummy" and the payments were doubled (R5)."""
