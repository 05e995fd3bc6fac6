"""Swiss: a set number of rounds, each pairing bots of equal score (Dutch style), never two that
met before while that can be avoided, the first seat to the one that had it less, a bye for an
odd field.

Scores: a meeting is won by the bot that finished ahead more often over its games (1 point), lost
(0) or drawn (½, also when none of its games had a result); a bye scores 1. Ranking: score, then
the seeding order (the field's order). Pairing: the top unpaired bot of the highest score group
meets, in order of preference, the bot half its score group below it (S1 against S2, Dutch),
the others of its group nearest that one, then the bots of the lower groups in rank order (it
floats down); a pairing that would leave the rest of the field without a rematch-free pairing
is backtracked. Only when no pairing avoids every rematch are rematches allowed. The bye goes
to the lowest-ranked bot without a bye yet. Deterministic: the same field and results plan the
same round."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from arena.competition.formats.base import Field, Group, PlayedRound, Round, check_two_seats
from arena.competition.result import Result
from arena.competition.seating import instance_names

SWISS_SEARCH_STEPS = 200_000
"""How many candidate opponents the rematch-free pairing search may try before it gives up and
allows rematches (a bound on a search that is exponential at worst)."""


@dataclass(frozen=True, slots=True)
class Standing:
    """Where the field stands after some rounds."""

    scores: dict[str, float]
    """Points by bot."""
    met: frozenset[frozenset[str]]
    """Every two bots that have met."""
    byes: frozenset[str]
    """The bots that had a bye."""
    first_seats: Counter[str]
    """Games each bot played in the first seat minus games in the second."""


def meeting_score(results: Sequence[Result], a: str, b: str) -> float:
    """``a``'s score of its meeting with ``b``: 1 if it finished ahead in more games than behind,
    ½ level (or no rated game), 0 behind."""
    net = 0.0
    for r in results:
        s = r.score_of(a, b)
        if s is not None and r.rated:
            net += s - 0.5
    return 1.0 if net > 0 else 0.0 if net < 0 else 0.5


def standing(field: Field, history: Sequence[PlayedRound]) -> Standing:
    """Scores, meetings, byes and seat balance after ``history``."""
    scores = dict.fromkeys(field.bots, 0.0)
    met: set[frozenset[str]] = set()
    byes: set[str] = set()
    seats: Counter[str] = Counter()
    for played in history:
        for bot in played.round.byes:
            scores[bot] += 1.0
            byes.add(bot)
        by_pair: dict[frozenset[str], list[Result]] = {frozenset(g.players): [] for g in played.round.groups}
        for r in played.results:
            by_pair.setdefault(frozenset(r.bots), []).append(r)
        for pair in {frozenset(g.players) for g in played.round.groups}:
            a, b = sorted(pair)
            s = meeting_score(by_pair[pair], a, b)
            scores[a] += s
            scores[b] += 1.0 - s
            met.add(pair)
        for r in played.results:
            seats[r.bots[0]] += 1
            seats[r.bots[-1]] -= 1
    return Standing(scores, frozenset(met), frozenset(byes), seats)


def _candidates(rest: Sequence[str], scores: dict[str, float]) -> list[str]:
    """The opponents of ``rest[0]`` in order of preference (Dutch: half its score group below it
    first, then the rest of its group nearest that one, then the lower groups in rank order)."""
    top = scores[rest[0]]
    group = [b for b in rest if scores[b] == top]
    h = len(group) // 2
    same = group[h:] + group[1:h][::-1] if h else []
    return same + [b for b in rest if scores[b] != top]


class _Search:
    """A backtracking search for a pairing of a ranked list."""

    def __init__(self, scores: dict[str, float], met: frozenset[frozenset[str]], rematches: bool) -> None:
        self.scores, self.met, self.rematches = scores, met, rematches
        self.steps = 0

    def pair(self, rest: list[str]) -> list[tuple[str, str]] | None:
        if not rest:
            return []
        first = rest[0]
        options = _candidates(rest, self.scores)
        if self.rematches:  # rematches last
            options = sorted(options, key=lambda b: frozenset((first, b)) in self.met)
        for other in options:
            self.steps += 1
            if self.steps > SWISS_SEARCH_STEPS:
                return None
            if not self.rematches and frozenset((first, other)) in self.met:
                continue
            tail = self.pair([b for b in rest[1:] if b != other])
            if tail is not None:
                return [(first, other), *tail]
        return None


def pair_round(ranked: Sequence[str], scores: dict[str, float], met: frozenset[frozenset[str]],
               had_bye: frozenset[str]) -> tuple[list[tuple[str, str]], str | None]:
    """The pairs of a round of ``ranked`` bots (best first) and the bye (an odd field), avoiding
    rematches while any pairing does."""
    byes: list[str | None] = [None]
    if len(ranked) % 2:
        lowest: list[str | None] = list(reversed(ranked))
        byes = [b for b in lowest if b not in had_bye] or lowest
    for rematches in (False, True):
        search = _Search(scores, met, rematches)
        for bye in byes:
            pairs = search.pair([b for b in ranked if b != bye])
            if pairs is not None:
                return pairs, bye
    raise AssertionError("a pairing that allows rematches always exists")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class Swiss:
    """Dutch-style Swiss pairing, a round at a time."""

    name: str = "swiss"
    """Its name on the command line."""

    def rounds(self, field: Field) -> int:
        """The rounds to play: ``field.rounds``, or by default enough to find a sole winner
        (``ceil(log2 N)``)."""
        return field.rounds or max(1, math.ceil(math.log2(len(field.bots))))

    def check(self, field: Field) -> None:
        check_two_seats("Swiss", field)
        if field.rounds < 0:
            raise ValueError(f"Swiss needs a positive number of rounds; got {field.rounds}")

    def plan(self, field: Field, history: Sequence[PlayedRound]) -> Round | None:
        number = len(history)
        if number >= self.rounds(field):
            return None
        now = standing(field, history)
        order = {b: i for i, b in enumerate(field.bots)}
        ranked = sorted(field.bots, key=lambda b: (-now.scores[b], order[b]))
        pairs, bye = pair_round(ranked, now.scores, now.met, now.byes)
        tables = []
        for a, b in pairs:  # the first seat to the bot that had it less (level: the higher-ranked in even rounds)
            first = a if (now.first_seats[a], number % 2) < (now.first_seats[b], 1) else b
            tables.append((first, b if first == a else a))
        groups = tuple(Group(instance_names(t), number * field.groups + g, g % 2)
                       for g in range(field.groups) for t in tables)
        return Round(number, groups, (bye,) if bye else (), f"round {number + 1} of {self.rounds(field)}")
