"""The rule set (R10): every field of RULES-RUMMY.md as one frozen, validated value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from referee.cardcore import rule_set, rules_from_dict, rules_to_dict

Ace = Literal["low", "low_or_high"]
DiscardDraw = Literal["top", "row"]
Scoring = Literal["hands", "table"]
FaceValues = Literal["ten", "rank"]
NextDealer = Literal["winner", "left"]
StockExhausted = Literal["lowest_wins", "reshuffle"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "ace": ("low", "low_or_high"),
    "discard_draw": ("top", "row"),
    "scoring": ("hands", "table"),
    "face_values": ("ten", "rank"),
    "next_dealer": ("winner", "left"),
    "stock_exhausted": ("lowest_wins", "reshuffle"),
}

PRESETS = ("rummy", "open", "michigan", "bozenkill")
"""Names of the presets of R10."""

_PRESET_FIELDS: dict[str, dict[str, Any]] = {
    "rummy": {},
    "open": {"rummy_doubles": True},
    "michigan": {
        "ace": "low_or_high", "discard_draw": "row", "stop": True, "out_needs_discard": True, "target": 500,
    },
    "bozenkill": {
        "ace": "low_or_high", "discard_draw": "row", "out_needs_discard": True, "scoring": "table",
        "target": 500,
    },
}


class RuleSetError(ValueError):
    """An invalid rule set: unknown option, bad value or a combination that cannot be played."""


@rule_set(RuleSetError, _CHOICES)
@dataclass(frozen=True, slots=True)
class RummyRules:
    """Every rule field of RULES-RUMMY.md. Build one with ``RummyRules.preset(name, **overrides)``;
    the constructor validates every field."""

    name: str = "rummy"
    """The preset this rule set was built from (informative; the fields are what counts)."""
    ace: Ace = "low"
    """R2/R8.1: ``low`` (A-2-3 only) or ``low_or_high`` (Q-K-A too, never K-A-2)."""
    discard_draw: DiscardDraw = "top"
    """R4/R8.2: ``top`` (the top discard, used at once) or ``row`` (any card of the row with
    every card above it)."""
    stop: bool = False
    """R8.3: whether other players may call "stop" on a discard that could be laid off."""
    rummy_doubles: bool = False
    """R5: going out "rummy" (the whole hand in one turn) doubles every payment to the winner."""
    out_needs_discard: bool = False
    """R8.4: going out needs a final discard (a meld or layoff emptying the hand is refused)."""
    scoring: Scoring = "hands"
    """R5/R9.4: ``hands`` (the winner scores the other hands) or ``table`` (everyone also scores
    the cards they put on the table)."""
    face_values: FaceValues = "ten"
    """R1: J, Q, K count ``ten`` each, or their ``rank`` (11, 12, 13)."""
    next_dealer: NextDealer = "winner"
    """R3: the next deal is dealt by the deal's ``winner`` or by the seat ``left`` of the dealer."""
    stock_exhausted: StockExhausted = "lowest_wins"
    """R6: when a turn begins with an empty stock, the lowest hand wins (``lowest_wins``) or the
    discard pile is reshuffled into a new stock (``reshuffle``, at most three times)."""
    target: int = 100
    """R7: a game ends when a player's total reaches this after a deal."""
    max_deals_per_game: int = 60
    """R7: a game that has not finished after this many deals (void ones count) ends."""
    games: int = 1
    """Games in a match."""

    def __post_init__(self) -> None:
        # Each option's type and choices: checked by @rule_set before the fields are set.
        for name in ("target", "max_deals_per_game", "games"):
            if getattr(self, name) < 1:
                raise RuleSetError(f"{name} must be at least 1; got {getattr(self, name)}")

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> RummyRules:
        """A preset by name (``rummy``, ``open``, ``michigan``, ``bozenkill``) with overrides."""
        if name not in _PRESET_FIELDS:
            raise RuleSetError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
        return cls.from_dict({"name": name, **_PRESET_FIELDS[name], **overrides})

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON-able data."""
        return rules_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RummyRules:
        """Build from plain data, refusing unknown options with a clear message."""
        return rules_from_dict(cls, data, RuleSetError)

    def replace(self, **changes: Any) -> RummyRules:
        """A copy with some fields changed (validated)."""
        return self.from_dict({**self.to_dict(), **changes})


def hand_size(num_seats: int) -> int:
    """Cards dealt to each seat (R3): 10 for two players, 7 for three or four, 6 for five or six."""
    if not 2 <= num_seats <= 6:
        raise ValueError(f"rummy is for 2 to 6 players; got {num_seats}")
    return 10 if num_seats == 2 else 7 if num_seats <= 4 else 6
