"""What the viewers of every game share: the error for a replay that cannot be shown, suit
symbols, and how cards are written on a terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from referee.replays import HeaderRecord, ResultRecord


class ReplayModelError(ValueError):
    """A replay that cannot be shown (unreadable, or an action the engine refuses)."""


SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
"""Suit letter → symbol."""


class HasCards(Protocol):
    """A meld of any game: its cards in table order."""

    @property
    def cards(self) -> Sequence[object]:
        """The meld's cards (each prints as its text, ``Ah``)."""
        ...


class Style:
    """How cards are written: card text (``Ah``) or rank + suit symbol (``A♥``), in colour or not."""

    def __init__(self, *, symbols: bool = False, color: bool = False) -> None:
        self.symbols = symbols
        self.color = color

    def card(self, card: object) -> str:
        text = str(card)
        if len(text) != 2 or text[1] not in SUIT_SYMBOLS:  # another game's card (``7``): as it is
            return text
        shown = text[0] + SUIT_SYMBOLS[text[1]] if self.symbols else text
        if self.color and text[1] in "hd":
            return f"\x1b[31m{shown}\x1b[0m"
        return shown

    def cards(self, cards: Sequence[object]) -> str:
        return " ".join(self.card(c) for c in cards) if cards else "—"

    def meld(self, meld: HasCards) -> str:
        return self.group(meld.cards)

    def group(self, cards: Sequence[object]) -> str:
        """Cards that belong together (a meld), in brackets."""
        return "[" + " ".join(self.card(c) for c in cards) + "]"

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text


class MatchRecords:
    """What every game's match view reads straight from its replay's header and result records
    (a base of the views, which are dataclasses with ``header`` and ``result`` fields)."""

    header: HeaderRecord
    result: ResultRecord | None

    @property
    def players(self) -> tuple[str, ...]:
        """The players' names by seat."""
        return self.header.players

    @property
    def match_id(self) -> str:
        """The match's id."""
        return self.header.match_id

    @property
    def detail(self) -> str:
        """The result record's detail (empty without one)."""
        return self.result.detail if self.result is not None else ""
