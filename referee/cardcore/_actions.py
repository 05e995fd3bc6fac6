"""The actions the card games share (the same value, text and kind in each), and the error for
an illegal one. A game's own action union names them beside its own actions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._cards import Card
from ._values import Value

# Each action's ``kind`` is a read-only property: compiled by mypyc, a plain class attribute
# reads as an unset instance attribute, and a ``ClassVar`` one is taken for a field.


class IllegalActionError(ValueError):
    """An action that the rules do not allow now. The message names the reason; the state
    that refused it is unchanged."""


@dataclass(frozen=True, slots=True)
class DrawStock(Value):
    """Draw the top card of the stock."""

    @property
    def kind(self) -> Literal["draw_stock"]:
        """``"draw_stock"``."""
        return "draw_stock"

    def __str__(self) -> str:
        return "draw_stock"


@dataclass(frozen=True, slots=True)
class Discard(Value):
    """Discard a card face up, ending the turn."""

    card: Card
    """The card discarded."""

    @property
    def kind(self) -> Literal["discard"]:
        """``"discard"``."""
        return "discard"

    def __str__(self) -> str:
        return f"discard {self.card}"
