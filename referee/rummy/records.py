"""Rummy's own content in a replay's records: how a deal and a game ended, in rummy's terms.

A ``deal_end`` or ``game_end`` record carries one of these as its ``content`` (its fields sit
beside the record's own in the line's JSON object). Plain frozen dataclasses; cards are text.
The replay codec reads their annotations, so this module stays interpreted in the compiled build
(setup.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RummyDealEnd:
    """How a rummy deal ended (``deal_end`` content)."""

    reason: str
    """``out``, ``lowest`` or ``void`` (R4, R6)."""
    winner: int | None
    """The seat that won the deal, if any."""
    points: tuple[int, ...]
    """Deal points by seat."""
    rummy: bool
    """The winner went out "rummy" and was paid double (R5)."""
    hands: tuple[tuple[str, ...], ...]
    """The cards left in each hand, by seat (revealed at the end, R11)."""
    hand_values: tuple[int, ...]
    """The value of each hand, by seat."""
    table_points: tuple[int, ...]
    """The value of the cards each seat put on the table (R9.4)."""


@dataclass(frozen=True, slots=True)
class RummyGameEnd:
    """Rummy's details of a game's result (``game_end`` content)."""

    deals: int
    """Deals played, void ones included."""
    finished: bool
    """The target was reached (not ``max_deals_per_game`` or a forfeit)."""
    forfeited: tuple[int, ...]
    """The seats that forfeited the game, in the order they faulted."""
