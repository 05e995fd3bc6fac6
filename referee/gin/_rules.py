"""The rule set: every option of RULES.md as one frozen, validated value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from referee.cardcore import rule_set, rules_from_dict, rules_to_dict

KnockMode = Literal["limit", "oklahoma", "gin_only"]
NextDealer = Literal["alternate", "winner", "loser"]
StockExhausted = Literal["void", "reshuffle"]
Shutout = Literal["double", "bonus", "none"]
FirstDealer = Literal["random", "alternate"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "knock": ("limit", "oklahoma", "gin_only"),
    "next_dealer": ("alternate", "winner", "loser"),
    "stock_exhausted": ("void", "reshuffle"),
    "shutout": ("double", "bonus", "none"),
    "first_dealer": ("random", "alternate"),
}

PRESETS = ("classic", "oklahoma", "straight", "short")
"""Names of the presets of RULES §11."""


class RuleSetError(ValueError):
    """An invalid rule set: unknown option, bad value or a combination that cannot be played."""


@rule_set(RuleSetError, _CHOICES)
@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every rule option of RULES.md. Build one with a preset (``RuleSet.classic()``) or
    ``RuleSet.preset(name, **overrides)``; the constructor validates every field."""

    name: str = "classic"
    """The preset this rule set was built from (informative; the fields are what counts)."""
    knock: KnockMode = "limit"
    """How knocking is limited: ``limit`` (at most ``knock_limit``), ``oklahoma`` (the value of
    the deal's first upcard, RULES §11) or ``gin_only`` (straight gin: no knock but gin)."""
    knock_limit: int = 10
    """Greatest deadwood a knock may leave, when ``knock == "limit"``."""
    oklahoma_ace_gin_only: bool = True
    """Oklahoma: an ace as first upcard allows gin only."""
    oklahoma_spades_double: bool = True
    """Oklahoma: a spade as first upcard doubles that deal's score."""
    big_gin: bool = True
    """Whether big gin (all 11 cards melded after a draw, RULES §6) may be declared."""
    gin_bonus: int = 25
    """Points for gin on top of the defender's deadwood."""
    big_gin_bonus: int = 31
    """Points for big gin on top of the defender's deadwood."""
    undercut_bonus: int = 25
    """Points for an undercut on top of the difference."""
    target: int = 100
    """A game ends when a player's total reaches this after a deal."""
    game_bonuses: bool = True
    """Whether the line bonus and game bonus are added at the end of a game (RULES §10)."""
    line_bonus: int = 25
    """Added per deal won, at the end of a game."""
    game_bonus: int = 100
    """Added to the game's winner."""
    shutout: Shutout = "double"
    """Shutout (the loser won no deal): ``double`` the winner's deal points before bonuses,
    add ``shutout_bonus``, or ``none``."""
    shutout_bonus: int = 100
    """The extra points for a shutout when ``shutout == "bonus"``."""
    next_dealer: NextDealer = "alternate"
    """Who deals the next deal: ``alternate``, the deal's ``winner``, or its ``loser``. After a
    dead hand the same dealer deals again."""
    stock_exhausted: StockExhausted = "void"
    """``void``: a deal ends void once two stock cards remain and a player discards without
    knocking; ``reshuffle``: the discard pile (but its top) becomes the stock, once."""
    first_dealer: FirstDealer = "random"
    """First dealer of each game: ``random`` from the match seed, or ``alternate`` (first game
    random, then the other seat begins each game)."""
    games: int = 1
    """Games in a match (ignored when ``match_target`` is set)."""
    match_target: int = 0
    """Tournament format (RULES §11): if positive, games go on until a player's cumulative
    total over the match reaches this (500 or 1000)."""

    def __post_init__(self) -> None:
        # Each option's type and choices: checked by @rule_set before the fields are set.
        if not 0 <= self.knock_limit <= 100:
            raise RuleSetError(f"knock_limit must be between 0 and 100; got {self.knock_limit}")
        if self.knock != "limit" and self.knock_limit != 10:
            raise RuleSetError(
                f"knock_limit applies only with knock='limit' (knock is {self.knock!r}); leave it at 10"
            )
        for bonus in ("gin_bonus", "big_gin_bonus", "undercut_bonus", "line_bonus", "game_bonus", "shutout_bonus"):
            if getattr(self, bonus) < 0:
                raise RuleSetError(f"{bonus} must not be negative; got {getattr(self, bonus)}")
        if self.target < 1:
            raise RuleSetError(f"target must be at least 1; got {self.target}")
        if self.games < 1:
            raise RuleSetError(f"games must be at least 1; got {self.games}")
        if self.match_target < 0:
            raise RuleSetError(f"match_target must be 0 (off) or positive; got {self.match_target}")
        if self.match_target and self.match_target < self.target:
            raise RuleSetError(
                f"match_target ({self.match_target}) must be at least the game target ({self.target})"
            )
        if self.match_target and self.games != 1:
            raise RuleSetError("set either games (a fixed number) or match_target (play to a total), not both")
        if not self.game_bonuses and self.shutout == "bonus":
            raise RuleSetError("shutout='bonus' needs game_bonuses on (it is one of the end-of-game bonuses)")
        if self.knock == "gin_only" and not self.big_gin and self.gin_bonus == 0:
            raise RuleSetError("gin_only with no big gin and no gin bonus cannot score a deal")

    # ----- presets -----
    @classmethod
    def classic(cls, **overrides: Any) -> RuleSet:
        """Classic gin: knock at 10, play to 100."""
        return cls.preset("classic", **overrides)

    @classmethod
    def oklahoma(cls, **overrides: Any) -> RuleSet:
        """Oklahoma gin: the first upcard's value is the knock limit, play to 150."""
        return cls.preset("oklahoma", **overrides)

    @classmethod
    def straight(cls, **overrides: Any) -> RuleSet:
        """Straight gin: no knocking, only gin or big gin, play to 100."""
        return cls.preset("straight", **overrides)

    @classmethod
    def short(cls, **overrides: Any) -> RuleSet:
        """Short game: classic rules to 50."""
        return cls.preset("short", **overrides)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> RuleSet:
        """A preset by name (``classic``, ``oklahoma``, ``straight``, ``short``) with overrides."""
        base: dict[str, Any]
        if name == "classic":
            base = {}
        elif name == "oklahoma":
            base = {"knock": "oklahoma", "target": 150}
        elif name == "straight":
            base = {"knock": "gin_only"}
        elif name == "short":
            base = {"target": 50}
        else:
            raise RuleSetError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
        return cls.from_dict({"name": name, **base, **overrides})

    # ----- plain data -----
    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON-able data."""
        return rules_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Build from plain data, refusing unknown options with a clear message."""
        return rules_from_dict(cls, data, RuleSetError)

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some options changed (validated)."""
        return self.from_dict({**self.to_dict(), **changes})

    def knock_limit_for(self, first_upcard_value: int, first_upcard_is_ace: bool) -> int | None:
        """The deal's knock limit: ``None`` means gin only."""
        if self.knock == "gin_only":
            return None
        if self.knock == "oklahoma":
            if first_upcard_is_ace and self.oklahoma_ace_gin_only:
                return None
            return first_upcard_value
        return self.knock_limit
