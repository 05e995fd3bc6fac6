"""What the referee tells its subscribers about its matches: a match started, a match finished.

A :class:`MatchEvent` is a plain value (no trio, no gRPC), so the ``WatchMatches`` rpc is a thin
conversion of it and an in-process subscriber (``arena serve``) reads the same value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from referee.model.spec import MatchReport, MatchSpec, Termination

MatchEventKind = Literal["started", "finished"]
MATCH_EVENT_KINDS: tuple[MatchEventKind, ...] = ("started", "finished")
"""Every kind of match event, in the order they happen to one match."""


class MatchEventsDropped(Exception):
    """A subscriber that did not keep up was dropped (its queue reached the referee's limit
    ``match_events_queue``); the message says so. The matches were not slowed: subscribe again
    (with ``past=True`` to get the finished matches the referee still holds)."""


DROPPED_REASON = "dropped: {queue} match events were not read (limit match_events_queue); subscribe again"
"""Why a subscriber that let its queue fill was dropped (``queue``: the limit's value)."""


@dataclass(frozen=True, slots=True)
class MatchEvent:
    """One happening of one match, as a subscriber sees it."""

    kind: MatchEventKind
    """``started`` (every seat connected, the first deal is on its way) or ``finished`` (the
    match is over and its replay written)."""
    match_id: str
    """The match's id."""
    game: str
    """The game played: a name in ``referee.games``' registry."""
    players: tuple[str, ...]
    """The players' names, by seat."""
    state: str
    """The table's state when the event was published: ``running`` for ``started``;
    ``finished``, ``aborted`` or ``interrupted`` for ``finished``."""
    spec: MatchSpec
    """The match as it was created (rules, time controls, fault policy…)."""
    termination: Termination | None = None
    """Why the match ended (``None`` for ``started``)."""
    winner: int | None = None
    """The winning seat (``None``: not over, a draw, or aborted)."""
    places: tuple[int, ...] = ()
    """Each seat's place, 1 = first (empty for ``started``)."""
    points: tuple[int, ...] = ()
    """Each seat's points (empty for ``started``)."""
    summary: Mapping[str, Any] = field(default_factory=dict)
    """The game's JSON-able result summary (``Game.result_fields``; empty for ``started``)."""
    report: MatchReport | None = None
    """The full report of a finished match (``None`` for ``started``)."""
    operator_seed: bytes = b""
    """The referee's seed of a finished match, revealed with its result (empty for ``started``)."""
    nonces: tuple[bytes, ...] = ()
    """The seats' nonces mixed into a finished match's seed, by seat (empty for ``started``)."""
    sequence: int = 0
    """The event's number within its referee instance, from 1, given when the referee published
    it (0 for the held matches a ``past`` subscription begins with, never published)."""
    time_ms: int = 0
    """When the referee published it, in milliseconds since the Unix epoch (0: not published)."""

    def __post_init__(self) -> None:
        if self.kind not in MATCH_EVENT_KINDS:
            raise ValueError(f"match event kind must be one of {', '.join(MATCH_EVENT_KINDS)}; got {self.kind!r}")
        if (self.kind == "finished") != (self.report is not None):
            raise ValueError("a finished match event carries the match's report, a started one none")

    @classmethod
    def started(cls, spec: MatchSpec, match_id: str, state: str) -> MatchEvent:
        """The event of a match that started."""
        return cls("started", match_id, spec.game, spec.players, state, spec)

    @classmethod
    def finished(cls, spec: MatchSpec, report: MatchReport, state: str, summary: Mapping[str, Any],
                 operator_seed: bytes = b"", nonces: tuple[bytes, ...] = ()) -> MatchEvent:
        """The event of a match that finished with ``report`` (``summary``: the game's result
        fields; ``operator_seed`` and ``nonces``: what its result reveals)."""
        return cls("finished", report.match_id, spec.game, report.players, state, spec,
                   termination=report.termination, winner=report.winner, places=report.places,
                   points=report.points, summary=dict(summary), report=report,
                   operator_seed=operator_seed, nonces=nonces)
