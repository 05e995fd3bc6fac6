"""The arena's view of one finished game, whichever referee (embedded or remote) played it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee import MatchReport


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one game (one referee match) ended."""

    match_id: str
    players: tuple[str, str]
    """The bots by seat."""
    winner: int | None
    """The winning seat, or ``None`` (no result: aborted, both failed to connect, …)."""
    termination: str
    """The referee's termination reason (``normal``, ``time_forfeit``, ``crashed``, …)."""
    faulting_seat: int | None
    detail: str
    points: tuple[int, int]
    """Final game totals by seat (bonuses included)."""
    games_won: tuple[int, int]
    deals: int | None
    """Deals dealt (dead hands included); ``None`` if the referee did not say (remote)."""
    decisions: int
    think_ms: tuple[int, int]
    substituted: tuple[int, ...]
    """Seats a built-in bot took over (fault policy ``substitute``)."""
    replay_path: str
    replay_hash: str
    seed_hex: str
    """The revealed shuffle seed."""
    duration_s: float = 0.0

    @property
    def winner_name(self) -> str | None:
        return None if self.winner is None else self.players[self.winner]

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
            "replay_path": self.replay_path,
            "replay_hash": self.replay_hash,
            "seed": self.seed_hex,
            "duration_s": round(self.duration_s, 3),
        }


def _pair(values: Any) -> tuple[int, int]:
    v = [int(x) for x in values]
    return (v[0], v[1]) if len(v) >= 2 else (0, 0)


def from_report(report: MatchReport, duration_s: float) -> Outcome:
    """From a referee's report (a remote referee's carries no deal counts: the runner says so)."""
    out = report.outcome
    return Outcome(
        match_id=report.match_id,
        players=(report.players[0], report.players[1]),
        winner=report.winner,
        termination=report.termination,
        faulting_seat=report.faulting_seat,
        detail=report.detail,
        points=_pair(out.totals) if out else (0, 0),
        games_won=_pair(out.games_won) if out else (0, 0),
        deals=sum(g.deals for g in out.games) if out else 0,
        decisions=report.decisions,
        think_ms=_pair(report.think_ms),
        substituted=tuple(report.substituted_seats),
        replay_path=report.replay_path,
        replay_hash=report.replay_hash,
        seed_hex=report.seed.hex(),
        duration_s=duration_s,
    )
