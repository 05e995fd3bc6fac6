"""The actions a player may take (R4, R8.3; ``DrawStock`` and ``Discard`` are the card games'
shared ones), and the error for an illegal one (shared too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from referee.cardcore import Discard as Discard
from referee.cardcore import DrawStock as DrawStock
from referee.cardcore import IllegalActionError as IllegalActionError
from referee.cardcore import Value

from ._cards import Card, format_cards, parse_card, parse_cards

ActionKind = Literal["draw_stock", "take_discard", "meld", "lay_off", "discard", "call_stop", "decline_stop"]
ACTION_KINDS: tuple[ActionKind, ...] = (
    "draw_stock", "take_discard", "meld", "lay_off", "discard", "call_stop", "decline_stop",
)
"""Every action kind, in a fixed order."""
End = Literal["set", "low", "high"]
"""Where a layoff goes: onto a ``set``, or the ``low`` or ``high`` end of a run."""


@dataclass(frozen=True, slots=True)
class TakeDiscard(Value):
    """Take a card of the discard pile (R4.1; with ``discard_draw = row`` also every card above
    it, R8.2). The first play after it must use that card."""

    card: Card
    """The card taken (the top of the pile unless the row may be drawn from)."""

    @property
    def kind(self) -> ActionKind:
        """``"take_discard"``."""
        return "take_discard"

    def __str__(self) -> str:
        return f"take_discard {self.card}"


@dataclass(frozen=True, slots=True)
class LayMeld(Value):
    """Lay a set or a run from the hand on the table (R2, R4.2)."""

    cards: tuple[Card, ...]
    """The meld's cards in index order (a run: low to high, except an ace laid high)."""

    @property
    def kind(self) -> ActionKind:
        """``"meld"``."""
        return "meld"

    def __str__(self) -> str:
        return f"meld {format_cards(self.cards)}"


@dataclass(frozen=True, slots=True)
class LayOff(Value):
    """Add one card of the hand to a meld on the table (R2)."""

    card: Card
    """The card laid off."""
    meld: int
    """The meld's number: its position on the table, in the order melds were laid (from 0)."""
    end: End
    """``set`` for a set, ``low`` or ``high`` for the end of a run."""

    @property
    def kind(self) -> ActionKind:
        """``"lay_off"``."""
        return "lay_off"

    def __str__(self) -> str:
        return f"lay_off {self.card} {self.meld} {self.end}"


@dataclass(frozen=True, slots=True)
class CallStop(Value):
    """Call "stop" on the last discard (R8.3): its player must take it back and lay it off."""

    @property
    def kind(self) -> ActionKind:
        """``"call_stop"``."""
        return "call_stop"

    def __str__(self) -> str:
        return "call_stop"


@dataclass(frozen=True, slots=True)
class DeclineStop(Value):
    """Decline to call "stop" on the last discard (R8.3)."""

    @property
    def kind(self) -> ActionKind:
        """``"decline_stop"``."""
        return "decline_stop"

    def __str__(self) -> str:
        return "decline_stop"


Action = DrawStock | TakeDiscard | LayMeld | LayOff | Discard | CallStop | DeclineStop


def parse_action(text: str) -> Action:
    """Parse the text form of an action (what ``str(action)`` gives)."""
    word, _, rest = text.strip().partition(" ")
    args = rest.split()
    try:
        if word == "draw_stock" and not args:
            return DrawStock()
        if word == "call_stop" and not args:
            return CallStop()
        if word == "decline_stop" and not args:
            return DeclineStop()
        if word == "take_discard" and len(args) == 1:
            return TakeDiscard(parse_card(args[0]))
        if word == "discard" and len(args) == 1:
            return Discard(parse_card(args[0]))
        if word == "meld" and args:
            return LayMeld(tuple(parse_cards(args)))
        if word == "lay_off" and len(args) == 3 and args[2] in ("set", "low", "high"):
            end: End = "set" if args[2] == "set" else "low" if args[2] == "low" else "high"
            return LayOff(parse_card(args[0]), int(args[1]), end)
    except ValueError as exc:
        raise ValueError(f"not an action: {text!r} ({exc})") from None
    raise ValueError(f"not an action: {text!r} (kinds: {', '.join(ACTION_KINDS)})")
