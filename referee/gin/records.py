"""Gin's own content in a replay's records: how a deal and a game ended, in Gin's terms.

The referee's records (:mod:`referee.replays`) name no game; a ``deal_end`` or ``game_end``
record carries one of these as its ``content``, whose fields sit beside the record's own in the
line's JSON object. Plain frozen dataclasses: the annotations say what each JSON value is (the
replay codec reads them, so this module stays interpreted in the compiled build: see setup.py),
cards are their text (``Ts``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GinDealEnd:
    """How a Gin deal ended (``deal_end`` content)."""

    kind: str
    """``knock``, ``undercut``, ``gin``, ``big_gin`` or ``dead``."""
    knocker: int | None
    """The seat that knocked (or went gin), if any."""
    winner: int | None
    """The seat that scored, if any."""
    points: int
    """The points it scored."""
    doubled: bool
    """The deal counted double (a spade upcard, Oklahoma)."""
    knock_discard: str | None
    """The card discarded face down with the knock, if any."""
    hands: tuple[tuple[str, ...], ...]
    """Each seat's hand at the end, by seat."""
    layoffs: tuple[str, ...]
    """The defender's cards laid off on the knocker's melds."""
    deadwood: tuple[int, ...]
    """The knocker's and the defender's deadwood at the showdown (empty: no showdown)."""


@dataclass(frozen=True, slots=True)
class GinGameEnd:
    """Gin's details of a game's result (``game_end`` content)."""

    deal_points: tuple[int, ...]
    """Each seat's points from the deals alone."""
    deals_won: tuple[int, ...]
    """Deals won, by seat."""
    shutout: bool
    """The loser scored no deal."""
