"""The arena's view of one finished game, whichever referee (embedded or remote) played it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.competition.result import Result
from referee import MatchReport


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one game (one referee match) ended."""

    match_id: str
    players: tuple[str, ...]
    """The bots by seat."""
    winner: int | None
    """The winning seat, or ``None`` (no result: aborted, both failed to connect, …)."""
    termination: str
    """The referee's termination reason (``normal``, ``time_forfeit``, ``crashed``, …)."""
    faulting_seat: int | None
    """The seat whose fault ended the match, if one did."""
    detail: str
    """The referee's words about how the match ended."""
    points: tuple[int, ...]
    """Final game totals by seat (bonuses included)."""
    games_won: tuple[int, ...]
    """Games won by seat."""
    deals: int | None
    """Deals dealt (dead hands included); ``None`` if the referee did not say (remote)."""
    decisions: int
    """Decisions the bots made in all."""
    think_ms: tuple[int, ...]
    """Thinking time by seat."""
    substituted: tuple[int, ...]
    """Seats a built-in bot took over (fault policy ``substitute``)."""
    replay_path: str
    """The replay file."""
    replay_hash: str
    """The SHA-256 of the replay's last line."""
    seed_hex: str
    """The revealed shuffle seed."""
    duration_s: float = 0.0
    """Wall time of the game."""
    fallbacks: tuple[int, ...] = ()
    """By seat: the answers its bot marked as fallbacks (its code failed and its client answered
    the first legal action, ``--on-error fallback``); empty when none did."""
    places: tuple[int, ...] = ()
    """The 1-based place of each seat, tied seats sharing one (the referee's ``MatchReport.places``);
    left empty: derived from ``winner`` (the winner first, everyone else next; with no winner every
    seat shares first place)."""

    def __post_init__(self) -> None:
        if not self.places:
            object.__setattr__(self, "places", Result.of_winner(self.players, self.winner).places)

    @property
    def winner_name(self) -> str | None:
        """The winning seat's player, or ``None``."""
        return next((p for s, p in enumerate(self.players) if s == self.winner), None)

    def result(self, group: str = "") -> Result:
        """The game as the formats and raters read it (``group``: its duplicate group, if it is
        scored as one)."""
        return Result(self.players, self.places, self.points, group)

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "players": list(self.players),
            "winner_seat": self.winner,
            "winner": self.winner_name,
            "termination": self.termination,
            "faulting_seat": self.faulting_seat,
            "detail": self.detail,
            "points": list(self.points),
            "games_won": list(self.games_won),
            "deals": self.deals,
            "decisions": self.decisions,
            "think_ms": list(self.think_ms),
            "substituted_seats": list(self.substituted),
            "fallbacks": list(self.fallbacks) or [0] * len(self.players),
            "replay_path": self.replay_path,
            "replay_hash": self.replay_hash,
            "seed": self.seed_hex,
            "duration_s": round(self.duration_s, 3),
            "places": list(self.places),
        }


def _per_seat(values: Any, seats: int) -> tuple[int, ...]:
    v = [int(x) for x in values]
    return tuple(v) if len(v) == seats else (0,) * seats


def from_report(report: MatchReport, duration_s: float) -> Outcome:
    """From a referee's report (a remote referee's carries no deal counts: the runner says so):
    places and points as the referee ranked the seats, whatever the game; games won and deals
    where the game's outcome has them (Gin's does)."""
    out = report.outcome
    n = len(report.players)
    totals = report.points or (getattr(out, "totals", ()) if out else ())
    won = getattr(out, "games_won", ()) if out else ()
    played = getattr(out, "games", ()) if out else ()
    return Outcome(
        match_id=report.match_id,
        players=tuple(report.players),
        winner=report.winner,
        termination=report.termination,
        faulting_seat=report.faulting_seat,
        detail=report.detail,
        points=_per_seat(totals, n),
        games_won=_per_seat(won, n),
        deals=sum(int(getattr(g, "deals", 0)) for g in played) if out is None or hasattr(out, "games") else None,
        decisions=report.decisions,
        think_ms=_per_seat(report.think_ms, n),
        substituted=tuple(report.substituted_seats),
        replay_path=report.replay_path,
        replay_hash=report.replay_hash,
        seed_hex=report.seed.hex(),
        duration_s=duration_s,
        places=_per_seat(report.places, n) if len(report.places) == n else (),
        fallbacks=_per_seat(report.fallbacks, n) if any(report.fallbacks) else (),
    )
