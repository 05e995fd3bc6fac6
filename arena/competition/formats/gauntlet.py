"""Gauntlet: one challenger plays every table of the others, all in one round."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.formats.base import Field, PlayedRound, Round, drawn_tables, every_table, interleaved


@dataclass(frozen=True, slots=True)
class Gauntlet:
    """The challenger (default: the first bot) at every table, once."""

    name: str = "gauntlet"
    """Its name on the command line."""

    def check(self, field: Field) -> None:
        if field.rounds:
            raise ValueError("a gauntlet is one round: --rounds does not apply")
        if field.challenger and field.challenger not in field.bots:
            raise ValueError(f"the gauntlet's challenger {field.challenger!r} is not one of the bots")

    def plan(self, field: Field, history: Sequence[PlayedRound]) -> Round | None:
        if history:
            return None
        tables = every_table(field, field.challenger or field.bots[0])
        return Round(0, interleaved(field, drawn_tables(field, tables)), label="gauntlet")
