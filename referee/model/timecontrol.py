"""Time controls, cutechess-style: ``st=S``, ``tc=BASE+INC``, ``timemargin=MS``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


class TimeControlError(ValueError):
    """A time control that cannot be parsed or makes no sense."""


def _seconds_to_ms(text: str, what: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise TimeControlError(f"{what}: {text!r} is not a number of seconds") from None
    if value < 0 or value != value or value > 10**7:
        raise TimeControlError(f"{what}: {text!r} is out of range")
    return round(value * 1000)


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How much time a seat has. Either a fixed time per decision (``st``) or a bank per game
    plus an increment per decision (``tc``); ``timemargin`` forgives that much overrun."""

    per_move_ms: int = 0
    """``st=S``: milliseconds for every decision (0 when a bank is used)."""
    base_ms: int = 0
    """``tc=BASE+INC``: the bank at the start of each game, in milliseconds."""
    increment_ms: int = 0
    """``tc=BASE+INC``: added to the bank after every decision, in milliseconds."""
    margin_ms: int = 0
    """``timemargin=MS``: overrun forgiven before a loss on time."""

    def __post_init__(self) -> None:
        if self.per_move_ms < 0 or self.base_ms < 0 or self.increment_ms < 0 or self.margin_ms < 0:
            raise TimeControlError("times must not be negative")
        if bool(self.per_move_ms) == bool(self.base_ms or self.increment_ms):
            raise TimeControlError("give either st=S (fixed per decision) or tc=BASE+INC (a bank), exactly one")

    @property
    def is_fixed(self) -> bool:
        """Whether each decision has the same fixed time (``st``)."""
        return self.per_move_ms > 0

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse ``"st=1"``, ``"tc=60+0.5"``, ``"tc=60"``, each optionally with ``timemargin=50``
        (words separated by spaces or commas)."""
        per_move = base = inc = margin = 0
        seen: set[str] = set()
        for word in text.replace(",", " ").split():
            key, sep, value = word.partition("=")
            if not sep or not value:
                raise TimeControlError(f"{word!r}: expected key=value (st=S, tc=BASE+INC, timemargin=MS)")
            if key in seen:
                raise TimeControlError(f"{key} given twice in {text!r}")
            seen.add(key)
            if key == "st":
                per_move = _seconds_to_ms(value, "st")
                if per_move == 0:
                    raise TimeControlError("st must be positive")
            elif key == "tc":
                b, _, i = value.partition("+")
                base = _seconds_to_ms(b, "tc base")
                inc = _seconds_to_ms(i, "tc increment") if i else 0
                if base == 0 and inc == 0:
                    raise TimeControlError("tc must give some time")
            elif key == "timemargin":
                try:
                    margin = int(value)
                except ValueError:
                    raise TimeControlError(f"timemargin={value!r}: milliseconds as an integer") from None
                if margin < 0:
                    raise TimeControlError("timemargin must not be negative")
            else:
                raise TimeControlError(f"unknown time control key {key!r} (known: st, tc, timemargin)")
        if "st" in seen and "tc" in seen:
            raise TimeControlError("give st or tc, not both")
        if not seen & {"st", "tc"}:
            raise TimeControlError(f"{text!r}: give st=S or tc=BASE+INC")
        return cls(per_move_ms=per_move, base_ms=base, increment_ms=inc, margin_ms=margin)

    def to_dict(self) -> dict[str, int]:
        """The canonical stored form: the fields that are not zero, by name, in field order
        (``{"per_move_ms": 1000, "margin_ms": 50}``); :meth:`from_dict` is its one reader."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str) -> TimeControl:
        """Back from :meth:`to_dict`. A text (``"st=1 timemargin=50"``: how gin-arena 0.1 and
        the stores made before this form kept a time control) is parsed, so those still open."""
        if isinstance(data, str):
            return cls.parse(data)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise TimeControlError(f"unknown time control field(s) {', '.join(unknown)} (known: {', '.join(known)})")
        values: dict[str, int] = {}
        for name, value in data.items():
            if not isinstance(value, int) or isinstance(value, bool):
                raise TimeControlError(f"time control field {name}: {value!r} is not a whole number of ms")
            values[name] = value
        return cls(**values)

    def to_json(self) -> str:
        """:meth:`to_dict` as compact JSON (a database column; ``from_dict(json.loads(text))``
        reads it back)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def __str__(self) -> str:
        def s(ms: int) -> str:
            return f"{ms / 1000:g}"

        core = f"st={s(self.per_move_ms)}" if self.per_move_ms else (
            f"tc={s(self.base_ms)}+{s(self.increment_ms)}" if self.increment_ms else f"tc={s(self.base_ms)}"
        )
        return core + (f" timemargin={self.margin_ms}" if self.margin_ms else "")
