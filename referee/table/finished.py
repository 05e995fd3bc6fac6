"""A finished match as the referee keeps it: a compact record, not the whole table.

The referee keeps its last ``finished_matches`` finished matches for ``GetMatch``,
``ListMatches``, ``WatchMatch`` from the start and the web. A whole :class:`~referee.table.flow.Table`
is ~12-14 KB of objects (the flow, the game's match, the seat links, clocks, events); a
:class:`FinishedMatch` keeps only what those readers ask of a finished match (~2 KB): its report,
its final status, the packed spectator log and its final spectator view, drawn once.

Both answer :class:`HeldMatch`, the one interface the readers of ``Referee.tables`` use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
import trio

from gin_arena.v2 import common_pb2
from referee import games
from referee.model.spec import MatchReport, MatchSpec
from referee.table.flow import _SET, Table
from referee.table.match_flow import TableState
from referee.table.spectators import Sink, SpectatorLog

log = structlog.get_logger("referee")


class HeldMatch(Protocol):
    """What a match the referee holds answers, running (:class:`Table`) or finished
    (:class:`FinishedMatch`)."""

    @property
    def match_id(self) -> str:
        """The match's id."""

    @property
    def spec(self) -> MatchSpec:
        """What was asked for."""

    @property
    def game_name(self) -> str:
        """The game played (the registry's name)."""

    @property
    def state(self) -> TableState:
        """Where the match is: waiting, running, finished, aborted, interrupted."""

    @property
    def report(self) -> MatchReport | None:
        """The match's report, once it has ended."""

    @property
    def over(self) -> bool:
        """Whether the match has finished or was aborted."""

    @property
    def finished(self) -> trio.Event:
        """Set once the match is over and its replay written."""

    @property
    def game(self) -> games.Game:
        """The game's engine (its ``result_fields``)."""

    @property
    def operator_seed(self) -> bytes:
        """The operator's seed."""

    @property
    def nonces(self) -> Any:
        """The seats' nonces (known once the match began)."""

    @property
    def commitment(self) -> bytes:
        """The seed's commitment."""

    @property
    def match(self) -> Any:
        """Where the match is (``scores``, ``game_number``, ``deal_number``, ``games_won``):
        the game's match while it runs, its :class:`FinalPosition` once kept; ``None`` before
        it began."""

    @property
    def connected(self) -> tuple[bool, ...]:
        """Whether each seat has a live session (a kept match: none)."""

    @property
    def spectator_log(self) -> SpectatorLog:
        """The match's public events."""

    @property
    def spectators(self) -> list[Sink]:
        """The live spectators."""

    def watch(self, sink: Sink, from_start: bool) -> None:
        """Add a spectator; with ``from_start`` it first gets everything so far."""

    def match_result(self) -> Any:
        """The finished match's ``MatchResult`` message."""

    def spectator_presentation(self) -> Mapping[str, Any] | None:
        """The game's presentation of the spectator's view (``{N}`` not yet named); ``None``
        before the first deal or for a game without a presentation."""


@dataclass(frozen=True, slots=True)
class FinalPosition:
    """Where a finished match ended, under the names a game's match gives them."""

    scores: tuple[int, ...]
    """Each seat's score."""
    game_number: int
    """The game the match ended in."""
    deal_number: int
    """The deal the match ended in."""
    games_won: tuple[int, ...]
    """Games each seat won."""


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """A finished match as the referee keeps it (:meth:`of` a table whose report is written)."""

    match_id: str
    """The match's id."""
    spec: MatchSpec
    """What was asked for."""
    state: TableState
    """finished, aborted or interrupted."""
    report: MatchReport
    """The match's report (its replay path set)."""
    game: games.Game
    """The game's engine (the registry's, shared)."""
    operator_seed: bytes
    """The operator's seed (revealed or not as ``spec.reveal_seed`` says, by the result)."""
    nonces: tuple[bytes, ...]
    """The seats' nonces."""
    commitment: bytes
    """The seed's commitment."""
    match: FinalPosition | None
    """Where the match ended (``None``: it never began)."""
    connected: tuple[bool, ...]
    """Whether each seat has a live session for the match: never, once it is over (a session
    still attached at the end has nothing more to do with it, and is soon gone)."""
    spectator_log: SpectatorLog
    """The public events, packed."""
    result: bytes
    """The serialised ``MatchResult`` (what ``GetMatch`` and the spectators' last event give)."""
    presented: str | None
    """The spectator's final view as the game presents it, in JSON (``None``: none)."""

    @classmethod
    def of(cls, table: Table) -> FinishedMatch:
        """The record of ``table``, whose match is over and whose report is written."""
        report = table.report
        assert report is not None and table.over
        match = table.match
        position = None if match is None else FinalPosition(
            tuple(match.scores), match.game_number, match.deal_number, tuple(match.games_won))
        try:  # (a game's presentation that fails must not end the referee: the web shows no view)
            view = table.spectator_presentation()
            presented = None if view is None else json.dumps(view, separators=(",", ":"))
        except Exception:
            log.exception("final_view_failed", match_id=table.match_id, game=table.spec.game)
            presented = None
        return cls(
            match_id=table.match_id, spec=table.spec, state=table.state, report=report, game=table.game,
            operator_seed=table.operator_seed, nonces=tuple(table.nonces), commitment=table.commitment,
            match=position, connected=(False,) * len(table.spec.players), spectator_log=table.spectator_log,
            result=table.match_result().SerializeToString(),
            presented=presented)

    @property
    def game_name(self) -> str:
        """The game played (the registry's name)."""
        return self.spec.game

    @property
    def over(self) -> bool:
        """Always: a kept match is over."""
        return True

    @property
    def finished(self) -> trio.Event:
        """Set (a waiter returns at once)."""
        return _SET

    @property
    def spectators(self) -> list[Sink]:
        """The live spectators (those who came after the end: they get its log and the end)."""
        return self.spectator_log.sinks

    def watch(self, sink: Sink, from_start: bool) -> None:
        """Add a spectator; with ``from_start`` it first gets everything."""
        self.spectator_log.watch(sink, from_start, True)

    def match_result(self) -> common_pb2.MatchResult:
        """The match's ``MatchResult`` message (a new one each call)."""
        return common_pb2.MatchResult.FromString(self.result)

    def spectator_presentation(self) -> Mapping[str, Any] | None:
        """The spectator's final view as the game presents it (drawn once, at the match's end)."""
        return None if self.presented is None else json.loads(self.presented)
