"""The actions a player may take (``DrawStock`` and ``Discard`` are the card games' shared ones,
RULES §5), and the error for an illegal one (shared too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from referee.cardcore import Discard as Discard
from referee.cardcore import DrawStock as DrawStock
from referee.cardcore import IllegalActionError as IllegalActionError
from referee.cardcore import Value

from ._cards import DECK, Card, parse_card

ActionKind = Literal["pass", "take_upcard", "draw_stock", "draw_discard", "discard", "knock", "big_gin"]
ACTION_KINDS: Final[tuple[ActionKind, ...]] = (
    "pass", "take_upcard", "draw_stock", "draw_discard", "discard", "knock", "big_gin",
)
"""Every action kind, in a fixed order."""


# Each action's ``kind`` is a read-only property: compiled by mypyc, a plain class attribute
# reads as an unset instance attribute, and a ``ClassVar`` one is taken for a field.


@dataclass(frozen=True, slots=True)
class Pass(Value):
    """Decline the upcard (RULES §4)."""

    @property
    def kind(self) -> ActionKind:
        """``"pass"``."""
        return "pass"

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class TakeUpcard(Value):
    """Take the offered upcard (RULES §4); a discard (or knock) follows."""

    @property
    def kind(self) -> ActionKind:
        """``"take_upcard"``."""
        return "take_upcard"

    def __str__(self) -> str:
        return "take_upcard"


@dataclass(frozen=True, slots=True)
class DrawDiscard(Value):
    """Draw the top card of the discard pile (RULES §5); it may not be discarded this turn."""

    @property
    def kind(self) -> ActionKind:
        """``"draw_discard"``."""
        return "draw_discard"

    def __str__(self) -> str:
        return "draw_discard"


@dataclass(frozen=True, slots=True)
class Knock(Value):
    """Knock (RULES §6): discard ``card`` face down and end the deal. With 0 deadwood left
    this is gin."""

    card: Card
    """The card discarded face down."""

    @property
    def kind(self) -> ActionKind:
        """``"knock"``."""
        return "knock"

    def __str__(self) -> str:
        return f"knock {self.card}"


@dataclass(frozen=True, slots=True)
class BigGin(Value):
    """Declare big gin (RULES §6): all 11 cards held form melds; no discard."""

    @property
    def kind(self) -> ActionKind:
        """``"big_gin"``."""
        return "big_gin"

    def __str__(self) -> str:
        return "big_gin"


Action = Pass | TakeUpcard | DrawStock | DrawDiscard | Discard | Knock | BigGin
"""Any action."""

# Final: compiled, the engine reads these as C statics (other module globals are dictionary lookups).
PASS: Final = Pass()
TAKE_UPCARD: Final = TakeUpcard()
DRAW_STOCK: Final = DrawStock()
DRAW_DISCARD: Final = DrawDiscard()
BIG_GIN: Final = BigGin()
DISCARDS: Final[tuple[Discard, ...]] = tuple(Discard(c) for c in DECK)
"""``DISCARDS[card.index]``: shared instances (actions are values; sharing saves allocations)."""
KNOCKS: Final[tuple[Knock, ...]] = tuple(Knock(c) for c in DECK)
"""``KNOCKS[card.index]``: shared instances."""

_SIMPLE: Final[dict[str, Action]] = {
    "pass": PASS, "take_upcard": TAKE_UPCARD, "draw_stock": DRAW_STOCK,
    "draw_discard": DRAW_DISCARD, "big_gin": BIG_GIN,
}


def make_action(kind: str, card: Card | None = None) -> Action:
    """Build an action from its kind name and, for ``discard``/``knock``, its card."""
    if kind in ("discard", "knock"):
        if card is None:
            raise ValueError(f"a {kind} action needs a card")
        return (DISCARDS if kind == "discard" else KNOCKS)[card.index]
    action = _SIMPLE.get(kind)
    if action is None:
        raise ValueError(f"unknown action kind {kind!r}; expected one of {', '.join(ACTION_KINDS)}")
    if card is not None:
        raise ValueError(f"a {kind} action takes no card")
    return action


def parse_action(text: str) -> Action:
    """Parse the text form: ``pass``, ``take_upcard``, ``draw_stock``, ``draw_discard``,
    ``discard Ts``, ``knock 2c``, ``big_gin``."""
    parts = text.split()
    if not parts:
        raise ValueError("empty action")
    card = parse_card(parts[1]) if len(parts) == 2 else None
    if len(parts) > 2:
        raise ValueError(f"not an action: {text!r}")
    return make_action(parts[0], card)
