"""The match flow: one match as a plain, synchronous state machine, for any game and any number
of seats.

Its inputs are methods: a seat connected (:meth:`MatchFlow.connected`), the match starts
(:meth:`~MatchFlow.start`), an answer (:meth:`~MatchFlow.answer`), a request was written
(:meth:`~MatchFlow.written`), a timeout (:meth:`~MatchFlow.timeout`: the open request's
deadline passed, or an alert is due), a disconnect, a reconnect, an alert, a cancel. Time is an
input too (``now``, in seconds of the caller's clock: trio's, or a test's number): the flow
never reads a clock. Its outputs are plain data, collected in :attr:`MatchFlow.out` (an
:class:`Outbox`) until the caller takes them: the bytes to send to each seat, the sessions to
close, the spectators' events, the log events; the next deadline is :attr:`MatchFlow.deadline`.
Replay records go to the :class:`~referee.table.recording.MatchRecorder` the caller gives (its
sink: memory or the match's journal).

No trio, no gRPC, no logging library and no message type are named here (the game's wire and
:mod:`referee.table.notices` build the bytes): the supervisor (:class:`referee.table.flow.Table`)
sleeps until the deadline, delivers the outputs and writes the replay. The module compiles with
mypyc beside the engine (``GIN_ARENA_COMPILE``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, Final, Literal

from referee import games
from referee.model.spec import MatchReport, MatchSpec, Termination
from referee.table.clocks import Clocks
from referee.table.digests import StoryDigests
from referee.table.faults import CLOSED_BY_BOT, Fault, FaultLedger
from referee.table.notices import (
    ERROR_BAD_REQUEST_ID,
    ERROR_MATCH_OVER,
    ERROR_NOT_YOUR_TURN,
    ERROR_PROTOCOL_VIOLATION,
    ERROR_TOO_LATE,
    Notices,
)
from referee.table.recording import MatchRecorder

__all__ = ["ASKING", "COMPILED", "MAX_STRAY_MESSAGES", "PLAIN", "LogEvent", "MatchFlow", "Outbox", "SeatState",
           "TableState"]

def _probe() -> None:
    """A function whose type tells whether this module runs compiled (mypyc) or as Python."""


COMPILED: bool = not isinstance(_probe, FunctionType)
"""Whether the match flow runs compiled (``GIN_ARENA_COMPILE``, see setup.py)."""

MAX_STRAY_MESSAGES: Final = 100
"""Answers that fit no open request (wrong id, out of turn, …) a seat may send between two of
its own requests before its session is closed as a flood (RESOURCE_EXHAUSTED)."""

TableState = Literal["waiting", "running", "finished", "aborted", "interrupted"]

PLAIN: Final = 0
"""A send's ``ask``: a message that asks for no answer."""
ASKING: Final = -1
"""A send's ``ask``: a message outside the story that asks for an answer (``action_rejected``:
the request stands); an action request's ``ask`` is its request id (> 0)."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A line for the referee's log, as plain data (the supervisor writes it)."""

    level: str
    """``info``, ``warning`` or ``error``."""
    event: str
    """The event's name (``seat_substituted``, …)."""
    fields: dict[str, Any] = field(default_factory=dict)
    """The line's fields."""
    error: BaseException | None = None
    """The exception of an ``error`` (logged with its traceback)."""


class Outbox:
    """What the flow's inputs produced since the caller last took it."""

    __slots__ = ("closes", "logs", "public", "sends")

    def __init__(self) -> None:
        self.sends: list[tuple[int, bytes, int]] = []
        """``(seat, data, ask)`` in order: ``ask`` is :data:`PLAIN`, :data:`ASKING` or, for an
        action request, its request id (its clock restarts when the transport wrote it:
        :meth:`MatchFlow.written`)."""
        self.closes: list[tuple[int, str, str]] = []
        """``(seat, code, detail)``: end the seat's session with that status (``code`` names a
        ``grpc.StatusCode``)."""
        self.public: list[bytes] = []
        """Serialised ``SpectatorEvent``\\ s, in order."""
        self.logs: list[LogEvent] = []
        """Log lines, in order."""

    def clear(self) -> None:
        """Empty the box (its outputs were delivered)."""
        self.sends.clear()
        if self.closes:
            self.closes.clear()
        self.public.clear()
        if self.logs:
            self.logs.clear()


def _is_legal(action: Any, legal: Container[Any]) -> bool:
    """``action in legal``, trying identity first: the engines' actions are interned values, so
    the answer is usually found without a dataclass ``__eq__`` per legal action before it."""
    if isinstance(legal, tuple):
        for a in legal:
            if a is action:
                return True
    return action in legal


class SeatState:
    """What the flow knows of one seat: its bot, whether it is online, its open request."""

    __slots__ = ("allowance_ms", "bot_name", "cache", "closed_by_bot", "connected", "disconnected_at", "event_messages",
                 "extended_to", "legal", "limit_ms", "nonce", "online", "open_request", "pending", "seat", "sent_at",
                 "stray", "substitute_next", "substituted")

    def __init__(self, seat: int, cache: Any) -> None:
        self.seat = seat
        """The seat's number."""
        self.connected = False
        """Whether a session of the seat ever arrived."""
        self.online = False
        """Whether the seat has a live session now."""
        self.nonce = b""
        """The nonce of the seat's first session's hello."""
        self.bot_name = ""
        """The bot name of the seat's first session's hello."""
        self.event_messages = True
        """Whether the seat is sent ``event`` messages (fixed by its first session's hello)."""
        self.substituted = False
        """The built-in bot plays this seat now (to the end of the game)."""
        self.substitute_next = False
        """The built-in bot plays this seat's next decision only (it lost the decision on time
        under ``substitute_time_faults="move"``); the seat is asked the one after."""
        self.pending = 0
        """The id of this seat's open request (0: none)."""
        self.open_request: bytes | None = None
        """The open request as sent (a reconnecting session gets it again)."""
        self.sent_at = 0.0
        """When the open request was written to the seat (the clock runs from then)."""
        self.limit_ms = 0
        """The open request's time: the allowance plus the margin."""
        self.allowance_ms = 0
        """The open request's allowance (without the margin)."""
        self.extended_to = 0.0
        """A later deadline for the open request than its time (:meth:`MatchFlow.extend`: its bot,
        timed by its CPU time, has not used its time yet); 0: none."""
        self.legal: Container[Any] = ()
        """The open request's legal actions (the game's values)."""
        self.disconnected_at: float | None = None
        """When the seat's last session ended, while it has none."""
        self.closed_by_bot = False
        """The seat's last session ended by its bot closing the stream (a goodbye), while it has
        none."""
        self.cache = cache
        """What the seat's messages repeat within a deal, kept encoded by the game's wire."""
        self.stray = 0
        """Answers that fit no open request since the seat's last request."""

    def deadline(self, grace_ms: int) -> float:
        """When the open request is lost: its time, or the reconnect grace while disconnected."""
        if not self.online and self.disconnected_at is not None:
            return self.disconnected_at + grace_ms / 1000
        return max(self.sent_at + self.limit_ms / 1000, self.extended_to)


class MatchFlow:
    """One match as a synchronous state machine (see the module's text)."""

    def __init__(self, spec: MatchSpec, match_id: str, operator_seed: bytes, recorder: MatchRecorder,
                 open_journal: Callable[[list[bytes]], None] | None = None) -> None:
        """``open_journal``, if given, is called with the seats' nonces once, before the
        replay's first record (the supervisor opens the match's journal there)."""
        self.spec = spec
        entry = spec.game_entry
        self.game: games.Game = entry.game
        self.wire: games.GameWire = entry.wire
        self.match_id = match_id
        self.operator_seed = operator_seed
        self.commitment: bytes = self.game.commitment(operator_seed)
        n = len(spec.players)
        self.seats = [SeatState(s, self.wire.new_seat_cache()) for s in range(n)]
        """The seats' states, by seat."""
        self.notices = Notices(spec, match_id, self.wire, self.commitment)
        self.out = Outbox()
        """The outputs not yet taken (:meth:`take`)."""
        self.state: TableState = "waiting"
        self.match: games.GameMatch | None = None
        self.report: MatchReport | None = None
        self.nonces: list[bytes] = [b""] * n
        self.recorder = recorder
        self.cancelled = False
        """The operator cancelled the match: no step runs from now on."""
        self.cancel_reason = ""
        self.broken = False
        """Finishing the match failed (a bug of ours): the supervisor must end it."""
        self.decisions = 0
        self._open_journal = open_journal
        self._request_id = 0
        self._clocks = Clocks([spec.seat_time_control(s) for s in range(n)])
        self._think = [0] * n
        self._fallbacks = [0] * n  # answers each seat marked as its client's fallback
        self._faults = FaultLedger(spec.fault_policy, n, spec.substitute_time_faults)
        self._seed = operator_seed
        self._alerts: list[Fault] = []
        self._digests = StoryDigests(n)
        self._open: SeatState | None = None  # the seat with the open request
        self._now = 0.0

    # ----- what the caller reads -----
    @property
    def over(self) -> bool:
        """Whether the match has finished or was aborted."""
        return self.state in ("finished", "aborted", "interrupted")

    @property
    def asking(self) -> SeatState | None:
        """The seat with the open request, if any."""
        return self._open

    @property
    def deadline(self) -> float:
        """When the supervisor must call :meth:`timeout` next (``inf``: no request is open)."""
        link = self._open
        return link.deadline(self.spec.reconnect_grace_ms) if link is not None else math.inf

    @property
    def alerted(self) -> bool:
        """An alert waits to be applied (the supervisor calls :meth:`timeout` now)."""
        return bool(self._alerts)

    def take(self) -> Outbox:
        """The outputs so far (and a fresh box for the next ones)."""
        out = self.out
        self.out = Outbox()
        return out

    # ----- the inputs -----
    def connected(self, seat: int, nonce: bytes, bot_name: str, event_messages: bool) -> None:
        """A seat's first session arrived (its hello's nonce, bot name and wish for events)."""
        s = self.seats[seat]
        s.connected = s.online = True
        s.nonce, s.bot_name, s.event_messages = nonce, bot_name, event_messages

    def alert(self, fault: Fault) -> None:
        """A fault that does not wait for the seat's turn (its process died, it resigned): applied
        by the next :meth:`timeout` (or answer), or at :meth:`start`."""
        if not self.over:
            self._alerts.append(fault)

    def cancel(self, reason: str) -> None:
        """The operator aborts the match: no step runs from now on; :meth:`abort` ends it."""
        self.cancel_reason = reason or "cancelled by the operator"
        self.cancelled = True

    def start(self, now: float) -> None:
        """The connect phase is over (every seat came, the connect timeout passed, or an alert):
        the match begins, or ends at once."""
        self._now = now
        try:
            self._begin()
        except Fault as f:
            self._faults.forfeit(f)
            self._guarded_end_by_fault(f)
        except Exception as e:  # a bug of ours: this match ends, the server lives on
            self._internal_error(e)

    def answer(self, seat: int, request_id: int, action: Any, fallback: bool, now: float, cpu_us: int = -1) -> None:
        """An answer from ``seat``'s session, read at ``now`` (``action``: the wire's message).
        ``cpu_us`` (if not negative): the CPU time the seat's bot used for it; the decision is
        charged the smaller of that and the time since the request was written."""
        self._now = now
        try:
            self._answer(self.seats[seat], request_id, action, fallback, now, cpu_us)
        except Fault as f:
            self._guarded_fault(f)
        except Exception as e:
            self._internal_error(e)

    def written(self, seat: int, request_id: int, at: float) -> None:
        """The transport finished writing ``seat``'s request ``request_id`` at ``at``: its clock
        runs from then (a later deadline: :attr:`deadline` moves on)."""
        s = self.seats[seat]
        if request_id and request_id == s.pending:
            s.sent_at = at

    def extend(self, seat: int, request_id: int, until: float) -> None:
        """``seat``'s open request ``request_id`` is not lost before ``until`` (its bot is timed
        by its CPU time and has not used its time yet: the supervisor pushes its deadline on)."""
        s = self.seats[seat]
        if request_id and request_id == s.pending:
            s.extended_to = max(s.extended_to, until)

    def timeout(self, now: float) -> None:
        """The supervisor woke: apply a due alert, or the loss of the open request if its
        deadline passed (nothing if neither)."""
        self._now = now
        try:
            self._check(now)
        except Fault as f:
            self._guarded_fault(f)
        except Exception as e:
            self._internal_error(e)

    def disconnect(self, seat: int, detail: str, now: float) -> None:
        """``seat``'s session ended."""
        self._now = now
        s = self.seats[seat]
        s.online = False
        s.disconnected_at = now
        s.closed_by_bot = detail == CLOSED_BY_BOT
        if self._live():
            self._log("warning", "seat_disconnected", seat=seat, detail=detail)

    def reconnect(self, seat: int, now: float) -> None:
        """``seat``'s session came back."""
        self._now = now
        s = self.seats[seat]
        s.online = True
        try:
            self._reconnected(s, now)
        except Fault as f:
            self._guarded_fault(f)
        except Exception as e:
            self._internal_error(e)

    def abort(self, detail: str) -> None:
        """End the match without a result if it has none yet (cancelled: the operator's detail)."""
        if self.report is None:
            self._finish("aborted", None, self.cancel_reason or detail, state="aborted")

    def fail(self, e: BaseException) -> None:
        """A bug of ours outside the flow's steps: the match ends as an internal error."""
        if self.report is None:
            self._finish("internal_error", None, f"internal error: {e!r}", state="aborted")

    # ----- the steps -----
    def _guarded_fault(self, f: Fault) -> None:
        try:
            self._fault(f)
        except Exception as e:
            self._internal_error(e)

    def _guarded_end_by_fault(self, f: Fault) -> None:
        try:
            self._end_by_fault(f)
        except Exception as e:
            self._internal_error(e)

    def _internal_error(self, e: Exception) -> None:
        self.out.logs.append(LogEvent("error", "match_internal_error", {}, e))
        if self.report is None:
            self._open = None
            try:
                self._finish("internal_error", None, f"internal error: {e!r}", state="aborted")
            except Exception as again:  # the finish itself failed: the supervisor ends the match
                self.out.logs.append(LogEvent("error", "match_internal_error", {}, again))
                self.broken = True

    def _log(self, level: str, event: str, **fields: Any) -> None:
        self.out.logs.append(LogEvent(level, event, fields))

    def _live(self) -> bool:
        return self.report is None and self.match is not None and not self.cancelled

    def _header(self) -> None:
        recorder = self.recorder
        if self._open_journal is not None and recorder.count == 0 and recorder.journal is None:
            opener, self._open_journal = self._open_journal, None  # once; and the supervisor's method
            opener(self.nonces)  # held here would keep the table and its match in a reference cycle
        recorder.header(self.spec, self.match_id, self.game.rules_to_dict(self.spec.rules), self.commitment,
                        [s.bot_name for s in self.seats], [s.event_messages for s in self.seats])

    def _begin(self) -> None:
        spec = self.spec
        missing = [s.seat for s in self.seats if not s.connected]
        if self._alerts:  # a bot process died before its match could start
            self._header()
            fault = self._alerts.pop(0)
            fault.evidence["after_request"] = 0
            raise fault
        self.nonces = [s.nonce for s in self.seats]
        self._header()
        if missing:
            detail = "seat(s) " + ", ".join(map(str, missing)) + f" did not connect within {spec.connect_timeout_ms} ms"
            if len(missing) == len(self.seats):
                self._finish("failed_to_connect", None, detail, state="aborted")
                return
            for seat in missing[1:]:
                self._faults.forfeit(Fault(seat, "failed_to_connect", detail))
            raise Fault(missing[0], "failed_to_connect", detail, missing=missing)
        if spec.mix_nonces:
            self._seed = self.game.mix_seed(self.operator_seed, self.nonces)
        self.state = "running"
        match = self.game.new_match(spec.rules, self._seed, len(self.seats))
        self.match = match
        self._log("info", "match_started", players=list(spec.players))
        for s in self.seats:
            self._tell(s, self.notices.match_started(s.seat))
        self.out.public.append(self.notices.header())
        for h in match.opening():
            self._narrate(match, h, 0)
        try:
            self._advance()
        except Fault as f:
            self._fault(f)

    def _advance(self) -> None:
        """Play on until a seat's bot is asked for a decision or the match ends."""
        match = self.match
        assert match is not None
        while self._live():
            if match.is_over:
                self._finish("normal", None, "the match was played to its end")
                return
            seat = match.decider
            assert seat is not None
            s = self.seats[seat]
            if self._alerts:
                fault = self._alerts.pop(0)
                fault.evidence["after_request"] = 0
                raise fault
            if s.substituted or s.substitute_next:
                self._play_action(seat, match.substitute(seat), 0, 0, False)
                if self._stalled():
                    return
                continue
            self._request(s)
            return

    def _request(self, s: SeatState) -> None:
        """Send the seat its next request (its clock starts when the request is written)."""
        match = self.match
        assert match is not None
        seat = s.seat
        self._request_id += 1
        request_id = self._request_id
        clocks = self._clocks
        tc = clocks.tcs[seat]
        allowance = clocks.allowance(seat)
        data, legal = self.wire.request(match, seat, self.match_id, request_id, clocks.shown(),
                                        tc.increment_ms, allowance, s.cache)
        s.legal = legal
        s.stray = 0
        s.pending = request_id
        s.open_request = data
        s.allowance_ms = allowance
        s.limit_ms = allowance + tc.margin_ms
        s.extended_to = 0.0
        s.sent_at = self._now
        self._open = s
        self._digests.add(seat, data)
        if s.online:
            self.out.sends.append((seat, data, request_id))

    def _close_request(self) -> None:
        s = self._open
        if s is not None:
            s.pending = 0
            s.open_request = None
            self._open = None

    def _send(self, s: SeatState, data: bytes, ask: int = PLAIN) -> None:
        """A message outside the match's story (a resend, an error)."""
        if s.online:
            self.out.sends.append((s.seat, data, ask))

    def _error(self, s: SeatState, code: int, message: str, request_id: int = 0) -> None:
        if s.online:
            self.out.sends.append((s.seat, self.notices.error(code, message, request_id), PLAIN))

    def _answer(self, s: SeatState, request_id: int, action_msg: Any, fallback: bool, at: float, cpu_us: int) -> None:
        if self.over:
            self._error(s, ERROR_MATCH_OVER, f"match {self.match_id} is over", request_id)
            return
        if self.cancelled:
            return  # the supervisor ends the match
        if self._alerts and self._live():  # a bot process died: that comes first
            self._take_alert()
        pending = s.pending
        if not self._live() or not pending or request_id != pending:
            self._stray(s, request_id)
            return
        seat = s.seat
        match = self.match
        assert match is not None
        tc = self._clocks.tcs[seat]
        used_us = max(0, round((at - s.sent_at) * 1_000_000))
        if cpu_us >= 0:
            used_us = min(used_us, cpu_us)
        try:
            action = self.wire.action_from_proto(action_msg)
        except games.WireError as e:
            raise Fault(seat, "malformed_message", f"seat {seat}: {e}",
                        **self._raw(pending, action_msg, used_us)) from None
        if not _is_legal(action, s.legal):
            reason = match.why_illegal(seat, action)
            if self.spec.repeat_illegal:
                self._send(s, self.notices.rejected(pending, action_msg, reason), ASKING)
                return
            raise Fault(seat, "illegal_action", f"seat {seat} played {action}: {reason}",
                        **self._raw(pending, action_msg, used_us))
        if not self._clocks.charge(seat, used_us):
            late = Fault(seat, "time_forfeit", f"seat {seat} answered after {used_us / 1000:.0f} ms; it had "
                         f"{s.allowance_ms} ms (+{tc.margin_ms} ms margin)", **self._raw(pending, action_msg, used_us))
            if self._faults.one_decision(late):  # it plays on: its clock as if it had not answered (as a timeout)
                self._clocks.refund(seat, used_us)
            raise late
        self._think[seat] += used_us
        if fallback:
            self._fallbacks[seat] += 1
        self._close_request()
        self._play_action(seat, action, pending, used_us, fallback)
        if not self._stalled():
            self._advance()

    def _raw(self, request_id: int, action_msg: Any, used_us: int) -> dict[str, Any]:
        """A fault's evidence: what a re-run needs to send the same answer."""
        return {"request_id": request_id, **self.wire.raw_action(action_msg), "used_us": used_us}

    def _stray(self, s: SeatState, request_id: int) -> None:
        """An answer that fits no open request of the seat."""
        s.stray += 1
        if s.stray > MAX_STRAY_MESSAGES:
            if s.online:
                self.out.closes.append((s.seat, "RESOURCE_EXHAUSTED",
                                        f"more than {MAX_STRAY_MESSAGES} unexpected actions"))
            return
        if not s.pending:
            self._error(s, ERROR_NOT_YOUR_TURN, f"no action is requested from seat {s.seat} now", request_id)
        else:
            self._error(s, ERROR_BAD_REQUEST_ID, f"request_id {request_id} is not the open request {s.pending}",
                        request_id)

    def _stalled(self) -> bool:
        """End the match if its deal has run too long without ending (bots can keep taking
        each other's discards for ever)."""
        match = self.match
        assert match is not None
        cap = self.spec.max_actions_per_deal
        if self.report is not None or match.actions_in_deal < cap:
            return self.report is not None
        self._finish("aborted", None, f"deal {match.deal_number} of game {match.game_number} reached "
                     f"{cap} actions without ending (stalling)", state="aborted")
        return True

    def _take_alert(self) -> None:
        fault = self._alerts.pop(0)
        fault.evidence["after_request"] = self._open.pending if self._open is not None else 0
        raise fault

    def _fault(self, f: Fault) -> None:
        """Apply the match's fault policy: the match ends now, or the built-in bot takes the
        seat to the end of the game (or, for a time forfeit under ``substitute_time_faults="move"``,
        the one decision) and play goes on."""
        while self._live():
            self._close_request()
            if self._faults.decide(f):
                self._end_by_fault(f)
                return
            self._substitute(f)
            try:
                self._advance()
                return
            except Fault as again:
                f = again

    def _reconnected(self, s: SeatState, now: float) -> None:
        s.disconnected_at = None
        s.closed_by_bot = False
        if not self._live():
            self._resume(s)
            return
        self._log("info", "seat_reconnected", seat=s.seat)
        if s.pending and now > s.deadline(self.spec.reconnect_grace_ms):
            late = Fault(s.seat, "time_forfeit",
                         f"seat {s.seat} reconnected after its time ({s.allowance_ms} ms) ran out",
                         request_id=s.pending)
            if self._faults.one_decision(late):
                # It plays on: the match again first (without the lost request), then the notice,
                # the bot's decision and its next request, in the order they happen.
                s.open_request = None
                self._resume(s)
                self._fault(late)
                return
            self._fault(late)
        if self.report is None:
            self._resume(s)

    def _check(self, now: float) -> None:
        if not self._live():
            return
        if self._alerts:
            self._take_alert()
        s = self._open
        grace = self.spec.reconnect_grace_ms
        if s is None or now < s.deadline(grace):
            return
        seat = s.seat
        if not s.online and s.disconnected_at is not None:
            how = "said goodbye (its bot closed its stream)" if s.closed_by_bot else "disconnected"
            raise Fault(seat, "disconnected", f"seat {seat} {how} and did not come back within "
                        f"{grace} ms", request_id=s.pending)
        raise Fault(seat, "time_forfeit", f"seat {seat} did not answer within {s.allowance_ms} ms"
                    f" (+{self._clocks.tcs[seat].margin_ms} ms margin)", request_id=s.pending)

    def _resume(self, s: SeatState) -> None:
        """A seat reconnected: give it the match, the current deal and its open request."""
        match = self.match
        if match is None:
            return
        self._send(s, self.notices.match_started(s.seat))
        self._send(s, self.notices.deal_started(match, s.seat))
        if s.open_request is not None and s.online:
            self.out.sends.append((s.seat, s.open_request, PLAIN))  # its clock still runs from the first send

    def _substitute(self, f: Fault) -> None:
        s = self.seats[f.seat]
        if self._faults.one_decision(f):
            s.substitute_next = True  # _advance plays it (the seat has the decision)
            self.recorder.fault(f, self.spec.fault_policy, self.decisions, scope="move")
            self._log("warning", "seat_substituted", seat=f.seat, termination=f.termination, detail=f.detail,
                      scope="move")
            self._error(s, ERROR_TOO_LATE, f"{f.detail}: your time ran out; a built-in bot played this decision, "
                        "and you play on from your next request", f.evidence.get("request_id", 0))
            return
        s.substituted = True
        self.recorder.fault(f, self.spec.fault_policy, self.decisions)
        self._log("warning", "seat_substituted", seat=f.seat, termination=f.termination, detail=f.detail)
        self._error(s, ERROR_PROTOCOL_VIOLATION,
                    f"{f.detail}; a built-in bot plays seat {f.seat} to the end of this game")

    def _play_action(self, seat: int, action: Any, request_id: int, think_us: int, fallback: bool) -> None:
        match = self.match
        assert match is not None
        s = self.seats[seat]
        substitute = s.substituted or s.substitute_next
        s.substitute_next = False
        happenings = match.apply(seat, action)
        self.decisions += 1
        think_ms = think_us // 1000
        for h in happenings:
            if isinstance(h, games.Acted):
                self.recorder.add_action(seat, request_id, h.text, h.revealed, think_us,
                                         substitute, self._clocks.shown(), fallback)
            if self._narrate(match, h, think_ms):
                return

    def _narrate(self, match: games.GameMatch, h: games.Happening, think_ms: int) -> bool:
        """Record ``h`` (unless an action: recorded by the caller), tell every seat and the
        spectators; True if the match ends with it (a game ended with a seat forfeited)."""
        acted = isinstance(h, games.Acted)
        if not acted:  # (an action is recorded by the caller)
            self.recorder.happening(h)
        tell = self.wire.tell
        # Told as an ``event``: not even built for the seats that want none.
        event = acted or isinstance(h, games.Chance)
        for s in self.seats:
            if event and not s.event_messages:
                continue
            told = tell(match, h, s.seat, think_ms, s.cache)
            if told is not None and (s.event_messages or told[0] != "event"):
                self._tell(s, self.notices.told(told[0], told[1]))
        self.out.public.append(self.wire.show(match, h, self.match_id, think_ms))
        if isinstance(h, games.GameOver):
            return self._game_ended(h)
        return False

    def _game_ended(self, h: games.GameOver) -> bool:
        for s in self.seats:
            s.substituted = s.substitute_next = False  # the built-in bot plays to the end of the game only
        self._clocks.reset()
        if not self._faults.ends_after_game() or self.report is not None:
            return False
        first = self._faults.first
        assert first is not None
        self._finish(first.termination, first.seat, first.detail, ranking=h.ranking)
        return True

    def _end_by_fault(self, f: Fault) -> None:
        self._log("warning", "seat_faulted", seat=f.seat, termination=f.termination, detail=f.detail)
        self.recorder.fault(f, "forfeit", self.decisions)
        match = self.match
        if match is not None and not match.is_over:
            for h in match.forfeit(self._faults.forfeited):
                self._narrate(match, h, 0)
        first = self._faults.first or f  # the match ends for the first seat that forfeited
        if self.report is None:
            self._finish(first.termination, first.seat, first.detail)

    def _places(self, ranking: games.Ranking | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The match's places and points, the forfeiting seats last."""
        n = len(self.seats)
        match = self.match
        if ranking is None or (match is not None and match.is_over):
            ranking = match.ranking() if match is not None else games.Ranking((1,) * n, (0,) * n)
        return games.places_with_forfeits(ranking.places, self._faults.forfeited), ranking.points

    def _finish(self, termination: Termination, faulting: int | None, detail: str,
                state: TableState = "finished", ranking: games.Ranking | None = None) -> None:
        match = self.match
        outcome = match.outcome if match is not None else None
        places, points = self._places(ranking)
        aborted = state == "aborted"
        winner = None if aborted else games.Ranking(places, points).winner
        summary = self.game.result_fields(outcome)
        self._header()  # a match that ended before it began has none yet
        substituted = sorted(self._faults.substituted)
        fallbacks = self._fallbacks if any(self._fallbacks) else []
        self.recorder.result(
            winner=winner, termination=termination, faulting=faulting, detail=detail, summary=summary,
            seed=self.operator_seed, nonces=self.nonces, substituted=substituted,
            decisions=self.decisions, think_us=self._think, digests=self._digests.hexdigests(),
            messages=self._digests.told, fallbacks=fallbacks,
        )
        self.state = state
        self.report = MatchReport(
            match_id=self.match_id, players=self.spec.players, winner=winner, termination=termination,
            faulting_seat=faulting, detail=detail, outcome=outcome,
            substituted_seats=tuple(substituted), seed=self._seed,
            seed_commitment=self.commitment, replay_path="", replay_hash=self.recorder.last_hash,
            decisions=self.decisions, think_ms=tuple(t // 1000 for t in self._think),
            places=places, points=points, fallbacks=tuple(fallbacks),
        )
        self._open = None
        result = self.match_result()
        if not self.spec.reveal_seed:  # another game is dealt from it (see MatchSpec.reveal_seed)
            result.ClearField("seed")
        to_seats, to_public = self.notices.finished(result)
        for s in self.seats:
            s.pending = 0
            s.open_request = None
            self._send(s, to_seats)
        self.out.public.append(to_public)

    def match_result(self) -> Any:
        """The finished match's ``MatchResult`` message, with the seed revealed."""
        report = self.report
        assert report is not None
        return self.notices.match_result(report, self.operator_seed, self.nonces, self.game)

    def _tell(self, s: SeatState, data: bytes) -> None:
        """Send a message of the match's story to a seat, adding it to that seat's digest (what
        ``arena audit`` re-derives). Resends after a reconnect, errors and rejections are not
        part of the story and go through :meth:`_send`."""
        self._digests.add(s.seat, data)
        if s.online:
            self.out.sends.append((s.seat, data, PLAIN))
