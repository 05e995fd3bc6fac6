"""The seats of a match: a bot's live session (``Session``) and a seat's link to its match
(``SeatLink``): its token, its current session and its open request.

The transport (the gRPC service, or a test) attaches a session, hands in answers with
:meth:`SeatLink.deliver`, and receives messages through the session's ``send``. The link passes
each event to its match (a :class:`SeatOwner`) at once, as a plain call on the trio thread, so
a decision costs no trip through trio's scheduler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import trio

from gin_arena.v2 import bot_pb2
from referee.model.spec import DEFAULT_GAME
from referee.table.faults import GOODBYE, Fault
from referee.table.match_flow import SeatState


class Session(Protocol):
    """A live connection of one bot (one gRPC stream)."""

    bot_name: str
    """The name the bot gave in its hello."""
    nonce: bytes
    """The nonce the bot gave in its hello."""
    skip_event_messages: bool
    """The bot asked for no ``event`` messages (it reads the events in each request's state)."""
    # A session may also have ``games``: the games its bot declared in ``Hello.games`` (empty:
    # gin only). A session without it (in-process stand-ins) plays whatever it is seated at.

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        """Queue a message to the bot (``data``: a serialised ``RefereeMessage``); never
        blocks. ``on_written``, if given, is called with the time the message was written; it is
        given for the messages that ask the bot for an answer (each pays for one message of the
        bot's: ``Limits.inbound_burst``)."""

    def close(self, code: str, detail: str) -> None:
        """End the stream with a status (``code`` names a ``grpc.StatusCode``)."""


class SeatOwner(Protocol):
    """What a seat's link reports to: its match."""

    match_id: str
    """The match's id."""
    game_name: str
    """The game the match plays (the registry's name)."""

    @property
    def over(self) -> bool:
        """Whether the match has finished or was aborted."""

    def seat_connected(self) -> None:
        """A seat's first session arrived."""

    def seat_reconnected(self, link: SeatLink) -> None:
        """A seat's session arrived again."""

    def seat_disconnected(self, link: SeatLink, detail: str) -> None:
        """A seat's session ended."""

    def seat_answered(self, link: SeatLink, response: bot_pb2.ActionResponse, at: float) -> None:
        """An answer arrived from a seat (read at ``at``)."""

    def alert(self, fault: Fault) -> None:
        """A fault that does not wait for the seat's turn."""


class SeatLink:
    """One seat of one match: its token, its current session and its open request."""

    def __init__(self, owner: SeatOwner, seat: int, token: str, name: str, state: SeatState) -> None:
        self.table = owner
        """The match."""
        self.seat = seat
        self.token = token
        self.name = name
        self.session: Session | None = None
        self.connected = trio.Event()
        self.nonce = b""
        self.bot_name = ""
        self.event_messages = True
        """Whether the seat is sent ``event`` messages (fixed by its first session's hello)."""
        self.state = state
        """The match flow's state of this seat (its open request, …)."""

    # --- called by the transport ---
    def game_refusal(self, session: Session) -> str | None:
        """Why the session's bot may not play this seat: its match plays a game the bot did not
        declare in ``Hello.games`` (empty: gin only); ``None`` if it may."""
        declared = getattr(session, "games", None)
        if declared is None:
            return None
        plays = tuple(declared) or (DEFAULT_GAME,)
        game = self.table.game_name
        if game in plays:
            return None
        said = f"declared {', '.join(repr(g) for g in declared)}" if declared else "declared no games (gin only)"
        return (f"match {self.table.match_id} plays {game!r}, which this bot did not declare in Hello.games "
                f"(it {said}); a bot that plays {game} lists {game!r} in Hello.games")

    def attach(self, session: Session) -> str | None:
        """Attach a newly authenticated session; returns an error text if refused."""
        refused = self.game_refusal(session)
        if refused is not None:
            return refused
        if self.table.over:
            return f"match {self.table.match_id} is over"
        if self.session is not None:
            return f"seat {self.seat} of match {self.table.match_id} already has a live session"
        self.session = session
        if not self.connected.is_set():
            self.nonce = session.nonce
            self.bot_name = session.bot_name
            self.event_messages = not getattr(session, "skip_event_messages", False)
            self.connected.set()
            self.table.seat_connected()
        else:
            self.table.seat_reconnected(self)
        return None

    def detach(self, session: Session, detail: str) -> None:
        """The session ended (the stream closed or broke)."""
        if self.session is session:
            self.session = None
            self.table.seat_disconnected(self, detail)

    def deliver(self, response: bot_pb2.ActionResponse, at: float) -> None:
        """An action arrived from this seat's session (``at``: when it was read)."""
        self.table.seat_answered(self, response, at)

    def crashed(self, detail: str) -> None:
        """The operator reports that this seat's bot process died: the fault applies at once,
        whoever is to move."""
        self.table.alert(Fault(self.seat, "crashed", detail or f"seat {self.seat}'s bot process ended"))

    def resigned(self, reason: str, limit: int) -> None:
        """The seat's bot gave up (``Resign``: its own code failed): a ``bot_error`` fault of
        this seat, applied by the match's policy at once, whoever is to move. ``reason`` is cut
        to its first line and ``limit`` characters."""
        lines = reason.strip().splitlines()
        said = lines[0][:limit] if lines else ""
        gave = "said goodbye" if said.lower().startswith(GOODBYE) else "gave up"
        detail = f"seat {self.seat} ({self.bot_name or self.name}) {gave}: {said or 'no reason given'}"
        self.table.alert(Fault(self.seat, "bot_error", detail))

    def malformed(self, detail: str) -> None:
        """The session sent bytes that are no message: a ``malformed_message`` fault of this
        seat, applied by the match's policy at once, whoever is to move."""
        self.table.alert(Fault(self.seat, "malformed_message", f"seat {self.seat}: {detail}"))

    # --- the open request, as the match flow has it ---
    @property
    def pending(self) -> int:
        """The id of this seat's open request (0: none)."""
        return self.state.pending

    @property
    def sent_at(self) -> float:
        """When the open request was written to the seat (its clock runs from then)."""
        return self.state.sent_at

    @property
    def open_request(self) -> bytes | None:
        """The open request as sent (a reconnecting session gets it again)."""
        return self.state.open_request

    # --- used by the match's supervisor ---
    def send(self, msg: bot_pb2.RefereeMessage) -> None:
        """Send a message outside the match's story (a resend, an error)."""
        if self.session is not None:
            self.session.send(msg.SerializeToString(deterministic=True))

    def error(self, code: int, message: str, request_id: int = 0, fatal: bool = False) -> None:
        """Send an ``ErrorReport``."""
        self.send(bot_pb2.RefereeMessage(
            match_id=self.table.match_id,
            error=bot_pb2.ErrorReport(code=code, message=message, request_id=request_id, fatal=fatal),  # type: ignore[arg-type]
        ))
