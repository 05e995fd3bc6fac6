"""Which planned game the runner starts when a slot is free (issue 29).

A bot the arena starts keeps its process from game to game (the match context's pool): a game
whose bot is busy in another game either waits for it or has a further process of it started —
each start an interpreter's, taken one at a time through the runner's start-up slots, so the
games queued behind it wait too. Taking the games in their planned order did exactly that: a
round robin's first games all seat its first bot (``b0–b1``, ``b0–b2``, …), so with 25 slots
that bot got 25 processes and every slot waited for start-ups (``bench/hosted.py``: a game's
mean 1.55 s from its start to its end, of which its match played 0.31 s).

So the runner starts, whenever a slot is free, the first game in the planned order whose bots
all have a free process (or have none yet: a bot's first process is started for its first
game); only when no such game is planned does it start a game that needs a further process of a
busy bot — and then only up to the bot's fair share of the slots (:meth:`BotsInPlay.plan`), so
that two bots with four slots still play four games at once, while fifty bots with 25 slots
play one game each at a time, as the hosted ladder does. A slot that no game fits stays free
until a game ends (it is not handed to a game that would wait in it).

Pure bookkeeping: no trio, no I/O; the order is deterministic (the planned order, free games
first), and a game's result never depends on when it was played.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from arena.competition.seating import base_name
from arena.model.schedule import GameJob


class BotsInPlay:
    """The bots of the games being played: games per player (a bot, or one of its instances
    ``greedy#2``, each with its own process or token), the processes each player has, and
    each player's fair share of the slots for the games planned."""

    def __init__(self, limits: Mapping[str, int]) -> None:
        """``limits``: a bot's games at once (its seats counted, instances with it; 0: no limit)."""
        self.limits = dict(limits)
        self.busy: Counter[str] = Counter()
        """Games being played, by player."""
        self.per_bot: Counter[str] = Counter()
        """Seats being played, by bot (its instances counted with it: what ``limits`` bound)."""
        self.processes: Counter[str] = Counter()
        """The processes (or tokens) a player has: the most games it played at once so far (the
        match context's pool keeps each for the next game)."""
        self.shares: dict[str, int] = {}
        """A player's games at once allowed by :meth:`plan` (1 if it is not planned)."""
        self.extra_processes = 0
        """Games started with a further process of a player that was busy in another game."""

    def plan(self, jobs: Sequence[GameJob], slots: int) -> None:
        """The fair shares for playing ``jobs`` with ``slots`` games at once: a player seated in
        ``k`` of the ``n`` games may play ``ceil(slots × k / n)`` at once (at least one, at most
        its bot's limit) — what it would play if the slots were filled with games drawn evenly
        from the planned ones. A round robin of many bots gives each one game at a time, a
        gauntlet's challenger every slot, two bots every slot."""
        seats = Counter(p for job in jobs for p in job.players)
        n = max(1, len(jobs))
        self.shares = {}
        for player, k in seats.items():
            share = max(1, -(-slots * k // n))
            limit = self.limits.get(base_name(player), 0)
            self.shares[player] = min(share, limit) if limit else share

    def pick(self, jobs: Sequence[GameJob], fits: Callable[[GameJob], bool] = lambda job: True) -> int | None:
        """The index in ``jobs`` (planned order) of the game to start now: the first that
        ``fits`` (the runner's slots), within its bots' limits, whose players all have a free
        process; else the first whose busy players are below their share (a further process is
        started for it); ``None``: none may start until a game ends."""
        grow: int | None = None
        for i, job in enumerate(jobs):
            if not self._within_limits(job) or not fits(job):
                continue
            if all(self.busy[p] < max(1, self.processes[p]) for p in job.players):
                return i
            if grow is None and all(self.busy[p] < self.shares.get(p, 1) for p in job.players):
                grow = i
        return grow

    def _within_limits(self, job: GameJob) -> bool:
        # (a bot at its limit starts no game; one below it may, whatever its seats in the game)
        return all(not self.limits.get(bot) or self.per_bot[bot] < self.limits[bot]
                   for bot in {base_name(p) for p in job.players})

    def take(self, job: GameJob) -> None:
        """``job`` starts."""
        extra = False
        for p in job.players:
            self.busy[p] += 1
            self.per_bot[base_name(p)] += 1
            if self.busy[p] > self.processes[p]:
                extra = extra or self.processes[p] > 0
                self.processes[p] = self.busy[p]
        self.extra_processes += extra

    def give(self, job: GameJob) -> None:
        """``job`` ended (or will not be played now): its bots are free again."""
        for p in job.players:
            self.busy[p] -= 1
            self.per_bot[base_name(p)] -= 1
