"""Faults and the match's fault policy, for any number of seats.

A seat that faults (time loss, illegal action, malformed message, crash, disconnect) is played
by the game's built-in bot to the end of the game, so that the others' game is not spoiled.
Under ``substitute`` its results count as they fall and play goes on. Under ``forfeit`` it
ranks last in that game — several faulting seats share the last places in the order they
faulted, the latest first — and the match ends after that game; when one seat is left that has
not faulted (always, with two seats), the match ends at once and that seat wins.

One exception, under ``substitute`` with ``substitute_time_faults="move"``: a time forfeit
hands the built-in bot only the decision that timed out (:meth:`FaultLedger.one_decision`);
the seat decides again from its next request.
"""

from __future__ import annotations

import re
from typing import Any

from referee.model.spec import FaultPolicy, SubstituteScope, Termination

GOODBYE = "goodbye"
"""A ``Resign`` whose reason starts with this word (``goodbye: stopped by SIGTERM``) is a bot
saying goodbye — its operator stopped it — not a bot whose code failed: the game is lost as by
any resignation, but the fault's detail says ``said goodbye`` (:func:`is_goodbye`)."""

CLOSED_BY_BOT = "the bot closed its stream"
"""A seat's session ended because its bot closed the stream itself (a clean close, not a broken
connection): if it does not come back, its ``disconnected`` fault says ``said goodbye``."""

_GOODBYE_DETAIL = re.compile(r"^seat \d+ (\([^()]*\) )?said goodbye\b")


def is_goodbye(detail: str) -> bool:
    """Whether a fault's detail (as the referee writes it, starting ``seat N``) is a bot saying
    goodbye (a ``Resign`` of :data:`GOODBYE`, or a clean close of its stream): a bot that was
    stopped, not one that crashed."""
    return _GOODBYE_DETAIL.match(detail) is not None


class Fault(Exception):
    """A seat's fault: what ended or changed its part in the match."""

    def __init__(self, seat: int, termination: Termination, detail: str, **evidence: Any) -> None:
        super().__init__(detail)
        self.seat = seat
        self.termination = termination
        self.detail = detail
        self.evidence = evidence
        """What a re-run of the replay needs to reproduce the fault."""


class FaultLedger:
    """Which seats faulted, which the built-in bot plays now, and what the policy does next."""

    __slots__ = ("first", "forfeited", "policy", "seats", "substituted", "time_scope")

    def __init__(self, policy: FaultPolicy, seats: int, time_scope: SubstituteScope = "game") -> None:
        self.policy = policy
        self.seats = seats
        self.time_scope = time_scope
        """What a time forfeit hands the built-in bot under ``substitute``
        (``MatchSpec.substitute_time_faults``)."""
        self.substituted: set[int] = set()
        """Seats the built-in bot played for at some time, to a game's end or for one decision
        (the report's ``substituted_seats``)."""
        self.forfeited: list[int] = []
        """Seats that forfeited (policy ``forfeit``), in the order they faulted."""
        self.first: Fault | None = None
        """The first forfeiting fault: its termination and seat end the match."""

    def decide(self, fault: Fault) -> bool:
        """Apply the policy to ``fault``; True if the match ends now (no seat but one is left
        that has not forfeited), False if the built-in bot takes the seat."""
        if self.policy == "forfeit":
            self.forfeit(fault)
            if self.seats - len(self.forfeited) <= 1:
                return True
        self.substituted.add(fault.seat)
        return False

    def one_decision(self, fault: Fault) -> bool:
        """Whether the built-in bot plays only the decision ``fault`` lost (a time forfeit under
        ``substitute`` with ``substitute_time_faults="move"``), not the seat to the game's end."""
        return self.policy == "substitute" and self.time_scope == "move" and fault.termination == "time_forfeit"

    def forfeit(self, fault: Fault) -> None:
        """``fault``'s seat forfeits whatever the policy (it failed before the match began)."""
        if fault.seat not in self.forfeited:
            self.forfeited.append(fault.seat)
        if self.first is None:
            # Kept past the frames it was raised in: without its traceback, which holds them (and
            # through their locals the match), so that a forgotten match is freed at once by
            # reference counting, not at a full collection (which a server runs rarely).
            self.first = fault.with_traceback(None)

    def ends_after_game(self) -> bool:
        """Whether the match ends when the current game does (a seat forfeited in it)."""
        return bool(self.forfeited)
