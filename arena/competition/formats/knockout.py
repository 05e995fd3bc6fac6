"""Knockout: a seeded bracket for any number of bots; the loser of a meeting is out.

The bracket has the next power of two of slots, seeded so that seeds 1 and 2 can meet only in
the final (1 v 8, 4 v 5, 2 v 7, 3 v 6 for eight); the slots beyond the field are byes, which go
to the top seeds. A meeting (a *tie*) is ``games`` games: duplicate groups, the seats rotated.
The bot that finished ahead in more games wins it. A drawn tie: another group of the two bots
(a tie-break round, only the drawn ties playing) — up to :data:`KNOCKOUT_TIEBREAK_GROUPS` of them;
still level, the higher seed goes through."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.formats.base import Field, Group, PlayedRound, Round, check_two_seats
from arena.competition.result import Result
from arena.competition.seating import instance_names

KNOCKOUT_TIEBREAK_GROUPS = 2
"""Tie-break rounds a drawn tie may play (one group each) before the higher seed goes through."""


def bracket_order(size: int) -> list[int]:
    """The seeds (1-based) of a bracket of ``size`` slots (a power of two) in slot order: slots
    ``2i`` and ``2i + 1`` meet in the first round; ``[1, 8, 4, 5, 2, 7, 3, 6]`` for 8."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order) + 1
        order = [x for s in order for x in (s, n - s)]
    return order


def bracket(bots: Sequence[str]) -> list[str | None]:
    """The first round's slots: the bots by seed (the given order), ``None`` for a bye."""
    size = 1
    while size < len(bots):
        size *= 2
    return [bots[s - 1] if s <= len(bots) else None for s in bracket_order(size)]


def _net(results: Sequence[Result], a: str, b: str) -> float:
    """How many more games ``a`` finished ahead of ``b`` than behind (rated games only)."""
    return sum(s - 0.5 for r in results if r.rated and (s := r.score_of(a, b)) is not None) * 2


def stage_name(entrants: int) -> str:
    """A stage by its entrants: ``final`` (2), ``semi-final`` (4), ``quarter-final`` (8), else
    ``last N``."""
    return {2: "final", 4: "semi-final", 8: "quarter-final"}.get(entrants, f"last {entrants}")


def _round(field: Field, number: int, ties: Sequence[tuple[str, str]], byes: Sequence[str], label: str,
           groups: int) -> Round:
    """A round of ``groups`` groups per tie (numbered from ``number * field.groups``: unique per round)."""
    return Round(number, tuple(Group(instance_names(t), number * field.groups + g, g % 2)
                               for g in range(groups) for t in ties), tuple(byes), label)


def walk(field: Field, history: Sequence[PlayedRound]) -> tuple[Round | None, list[str | None]]:
    """Replay the bracket through ``history``: the next round (``None`` when it is over) and the
    slots of the stage reached (one when over: the champion)."""
    seed = {b: i for i, b in enumerate(field.bots)}
    slots = bracket(field.bots)
    done = 0  # rounds of the history consumed
    while len(slots) > 1:
        label = stage_name(len(slots))
        halves = list(zip(slots[::2], slots[1::2], strict=True))
        ties = [(a, b) for a, b in halves if a is not None and b is not None]
        byes = [x for a, b in halves if (a is None) != (b is None) for x in (a, b) if x is not None]
        if done == len(history):
            return _round(field, done, ties, byes, label, field.groups), slots
        net = {t: _net(history[done].results, *t) for t in ties}
        done += 1
        for extra in range(KNOCKOUT_TIEBREAK_GROUPS):
            level = [t for t in ties if net[t] == 0]
            if not level:
                break
            if done == len(history):
                return _round(field, done, level, (), f"tie-break {extra + 1} of the {label}", 1), slots
            for t in level:
                net[t] += _net(history[done].results, *t)
            done += 1
        won = {t: t[0] if net[t] > 0 or (net[t] == 0 and seed[t[0]] < seed[t[1]]) else t[1] for t in ties}
        slots = [a if b is None else b if a is None else won[(a, b)] for a, b in halves]
    return None, slots


@dataclass(frozen=True, slots=True)
class Knockout:
    """A seeded single-elimination bracket, a round at a time."""

    name: str = "knockout"
    """Its name on the command line."""

    def check(self, field: Field) -> None:
        check_two_seats("a knockout", field)
        if field.rounds:
            raise ValueError("a knockout's rounds follow from its field: --rounds does not apply")

    def plan(self, field: Field, history: Sequence[PlayedRound]) -> Round | None:
        return walk(field, history)[0]
