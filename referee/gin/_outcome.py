"""How a deal ended (RULES §9) and the phases of a deal: the values both the deal and the
views of it use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from referee.cardcore import Value

from ._cards import Card
from ._showdown import Showdown

Phase = Literal["upcard", "draw", "discard", "over"]
OutcomeKind = Literal["knock", "undercut", "gin", "big_gin", "dead"]

@dataclass(frozen=True, slots=True)
class DealOutcome(Value):
    """How a deal ended and what it scored (RULES §9)."""

    kind: OutcomeKind
    """``knock``, ``undercut``, ``gin``, ``big_gin`` or ``dead`` (void, nobody scores)."""
    knocker: int | None
    """The seat that knocked or declared big gin; ``None`` for a dead hand."""
    winner: int | None
    """The seat that scores; ``None`` for a dead hand."""
    points: int
    """Points to the winner (after any Oklahoma doubling)."""
    doubled: bool
    """Whether the score was doubled (Oklahoma spade upcard)."""
    showdown: Showdown | None
    """Arrangements, layoffs and deadwoods; ``None`` for a dead hand."""
    knock_discard: Card | None
    """The knocker's face-down discard (never shown to the opponent, RULES §6)."""
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's final cards (the knocker's kept cards), by seat."""
