"""One match of a registered game driven the way the referee drives it, telling each seat what
the referee would tell it: the part of the training environment that touches the engine.

The engine's match and the game's wire stay inside :class:`Table` (private attributes, never
returned): what leaves it is the ``ActionRequest`` the referee would send the deciding seat (built
by the game's own wire, the same bytes a bot gets), plain points, and the game's presentation text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gin_arena.v2 import bot_pb2, common_pb2
from referee import games

Termination = Literal["deal", "game", "match"]
"""When an episode ends: at the first deal's end, the first game's end, or the match's end."""
TERMINATIONS: tuple[Termination, ...] = ("deal", "game", "match")
"""Every :data:`Termination`."""
CLOCK_MS = 60_000
"""The clocks an environment's requests show (no clock runs: an environment has no time control)."""
MAX_DECISIONS = 100_000
"""Decisions after which a match that has not ended is truncated (the engine's own guards end
every match far sooner; this bounds a broken plugin game)."""


@dataclass(frozen=True, slots=True)
class Step:
    """What one action led to."""

    points: tuple[int, ...]
    """Each seat's points scored by it (the game's own: deals' points as scored, a game's bonuses
    when it ends), by seat."""
    ended: bool
    """Whether the episode ended with it (by the table's :data:`Termination`)."""


class Table:
    """A match of ``game`` for ``seats`` seats under ``rules``, its decider's request ready."""

    def __init__(self, reg: games.Registered, rules: Any, seats: int, seed: bytes, termination: Termination,
                 telling: frozenset[int] = frozenset()):
        self.__reg = reg
        self.__rules = rules
        self.__seed = seed
        self.__match = reg.game.new_match(rules, seed, seats)
        self.__told: dict[int, list[tuple[str, Any]]] = {s: [] for s in telling}
        self.__caches = [reg.wire.new_seat_cache() for _ in range(seats)]
        self.seats = seats
        """Seats at the table."""
        self.termination = termination
        """When the episode ends."""
        self.__requests = 0
        self.__finished = [0] * seats
        self.__ended = False
        self.__tell(self.__match.opening())

    @property
    def decider(self) -> int | None:
        """The seat that must decide; ``None`` once the episode has ended."""
        return None if self.__ended else self.__match.decider

    @property
    def truncated(self) -> bool:
        """Whether the match ran past :data:`MAX_DECISIONS`."""
        return self.__requests >= MAX_DECISIONS

    def request(self) -> bot_pb2.ActionRequest:
        """The request the referee would send the deciding seat now (the game's wire builds it)."""
        seat = self.decider
        if seat is None:
            raise ValueError("the episode has ended: no seat decides")
        self.__requests += 1
        data, _ = self.__reg.wire.request(self.__match, seat, "train-env", self.__requests,
                                          [CLOCK_MS] * self.seats, 0, CLOCK_MS, self.__caches[seat])
        message = bot_pb2.RefereeMessage.FromString(data)
        return message.action_request

    def play(self, seat: int, action: Any) -> Step:
        """Apply a legal action message of the deciding seat (``common_pb2.Action``)."""
        before = self.__totals()
        happenings = self.__match.apply(seat, self.__reg.wire.action_from_proto(action))
        self.__tell(happenings)
        ended = self.__match.is_over
        for h in happenings:
            if isinstance(h, games.GameOver):
                self.__finished = [f + p for f, p in zip(self.__finished, h.ranking.points, strict=True)]
            if (isinstance(h, games.DealOver) and self.termination == "deal") \
                    or (isinstance(h, games.GameOver) and self.termination != "match"):
                ended = True
        after = self.__totals()
        self.__ended = ended
        return Step(tuple(a - b for a, b in zip(after, before, strict=True)), ended)

    def __totals(self) -> list[int]:
        current = (0,) * self.seats if self.__match.is_over else tuple(self.__match.scores)
        return [f + c for f, c in zip(self.__finished, current, strict=True)]

    def __tell(self, happenings: Sequence[games.Happening]) -> None:
        wire = self.__reg.wire
        for h in happenings:
            for s in range(self.seats):
                told = wire.tell(self.__match, h, s, 0, self.__caches[s])
                if told is not None and s in self.__told:
                    self.__told[s].append(told)

    def take_told(self, seat: int) -> list[tuple[str, Any]]:
        """What the referee told ``seat`` since the last call (a seat of ``telling``): each a
        ``RefereeMessage`` field and its value, as the game's wire builds them (``deal_started``,
        ``event``, ``deal_finished``, ``game_finished``). The table keeps them only until taken."""
        told = self.__told.get(seat, [])
        self.__told[seat] = []
        return told

    def match_started(self, seat: int, match_id: str, players: Sequence[str]) -> bot_pb2.MatchStarted:
        """The ``MatchStarted`` the referee would send ``seat`` (the rules as the game's wire gives
        them, the seed's commitment; no time control: an environment has no clock)."""
        return bot_pb2.MatchStarted(
            match_id=match_id, seat=seat, player_names=list(players), game_name=self.__reg.game.name,
            seed_commitment=self.__reg.game.commitment(self.__seed), **self.__reg.wire.start_fields(self.__rules))

    def match_result(self, match_id: str, players: Sequence[str]) -> common_pb2.MatchResult:
        """The ``MatchResult`` a seat is sent when the episode ends: the seed revealed, each seat's
        points so far; ``TERMINATION_NORMAL`` when the match is over, else ``TERMINATION_ABORTED``
        (the episode ended before the match: ``termination`` deal or game, truncated, or reset)."""
        over = self.__match.is_over
        return common_pb2.MatchResult(
            match_id=match_id, player_names=list(players), seed=self.__seed,
            seed_commitment=self.__reg.game.commitment(self.__seed), winner=-1,
            termination=common_pb2.TERMINATION_NORMAL if over else common_pb2.TERMINATION_ABORTED,
            total_points=self.__totals())

    def describe(self, audience: games.Audience) -> dict[str, Any] | None:
        """The game's presentation of the match for ``audience`` (``None``: the game has none)."""
        shown = self.__reg.presentation
        if shown is None:
            return None
        return shown.present(shown.match_view(self.__match, audience))


def seed_bytes(seed: int | None) -> bytes:
    """A match seed from an integer (the same integer, the same match), or fresh randomness."""
    if seed is None:
        return os.urandom(16)
    return b"train-env/" + str(int(seed)).encode()
