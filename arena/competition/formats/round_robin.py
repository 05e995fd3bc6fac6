"""Round robin: everyone plays everyone (every table of ``seats`` bots, or ``--tables`` drawn at
random), all in one round."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.formats.base import Field, PlayedRound, Round, drawn_tables, every_table, interleaved


@dataclass(frozen=True, slots=True)
class RoundRobin:
    """Every table in one round."""

    name: str = "round-robin"
    """Its name on the command line."""

    def check(self, field: Field) -> None:
        if field.rounds:
            raise ValueError("a round robin is one round: --rounds does not apply")
        if not every_table(field):
            raise ValueError(f"{len(field.bots)} bots make no table of {field.seats} seats")

    def plan(self, field: Field, history: Sequence[PlayedRound]) -> Round | None:
        if history:
            return None
        return Round(0, interleaved(field, drawn_tables(field, every_table(field))), label="round robin")
