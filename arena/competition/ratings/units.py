"""The scoring *units* the pairwise raters count: a single game, or — with duplicate deals — a
group of games played on the same cards with the seats rotated, scored 1 / ½ / 0 for a bot
against each other by the group's combined result (for two seats: a pair, 2 wins, 1 win each, 0
wins). Counting groups as units removes most of the luck of the deal from the variance; the Elo
numbers are then on the scale of "pair results"."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.competition.result import Result


def unit_name(duplicate: bool, seats: int) -> str:
    """What a run's scoring units are called: ``games`` (no duplicate deals), ``pairs`` (the group
    of two games a duplicate deal of two seats makes) or ``rotations`` (a group of more seats)."""
    return "games" if not duplicate else "pairs" if seats <= 2 else "rotations"


@dataclass(frozen=True, slots=True)
class Unit:
    """One scoring unit between bots ``a`` and ``b``: ``score`` is ``a``'s (1, 0.5 or 0)."""

    a: str
    """The first bot."""
    b: str
    """The second bot."""
    score: float
    """``a``'s score."""


def game_units(r: Result) -> list[Unit]:
    """One game alone: a unit for each two seats of different bots, the better place winning
    (equal places draw)."""
    bots = r.bots
    n = len(bots)
    return [Unit(bots[i], bots[j], r.score(i, j)) for i in range(n) for j in range(i + 1, n) if bots[i] != bots[j]]


def group_units(members: Sequence[Result]) -> list[Unit]:
    """A complete group (as many rated games as seats, the same bots): one unit for each two
    bots, scored 1 / ½ / 0 by whether the first finished ahead of the second more often than
    behind over the group (every seat of the one against every seat of the other). An incomplete
    group counts its games alone."""
    first = sorted(members[0].bots)
    if len(members) != len(first) or any(sorted(g.bots) != first for g in members):
        return [u for g in members for u in game_units(g)]
    names = sorted(set(first))
    units = []
    for x, a in enumerate(names):
        for b in names[x + 1:]:
            net = sum((g.places[i] < g.places[j]) - (g.places[i] > g.places[j]) for g in members
                      for i, p in enumerate(g.bots) for j, q in enumerate(g.bots) if p == a and q == b)
            units.append(Unit(a, b, 1.0 if net > 0 else 0.0 if net < 0 else 0.5))
    return units


def scoring_units(results: Iterable[Result]) -> list[Unit]:
    """The scoring units of some games: the rated games of a duplicate group (one ``group`` key)
    make a unit for each two bots (:func:`group_units`); a game outside a group counts alone; a
    game without a result counts nothing."""
    units: list[Unit] = []
    groups: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if not r.rated:
            continue
        if r.group:
            groups[r.group].append(r)
        else:
            units.extend(game_units(r))
    for key in sorted(groups):
        units.extend(group_units(groups[key]))
    return units


def wdl(units: Iterable[Unit], bot: str, opponent: str | None = None) -> tuple[int, int, int]:
    """Wins, draws and losses of ``bot`` (against ``opponent``, or everyone)."""
    w = d = lo = 0
    for u in units:
        if u.a == bot and (opponent is None or u.b == opponent):
            s = u.score
        elif u.b == bot and (opponent is None or u.a == opponent):
            s = 1.0 - u.score
        else:
            continue
        if s == 1.0:
            w += 1
        elif s == 0.0:
            lo += 1
        else:
            d += 1
    return w, d, lo
