"""One match at the table: seats, clocks, faults, messages and the replay, under trio.

A :class:`Table` owns the truth of one match (the engine's :class:`~referee.gin.Match`). Seats
talk to it through :class:`SeatLink`: the transport (the gRPC service, or a test) attaches a
session, hands in answers with :meth:`SeatLink.deliver`, and receives messages through the
session's ``send``. Every message to a seat is built by ``_wire`` from that seat's information
state; nothing else of the match reaches a seat.

A step of the match (an answer, a reconnect) runs inside the transport's call, so a decision
never waits for trio's scheduler; the match's trio task (:meth:`Table.run`) is its supervisor:
it sleeps until the open request's deadline, applies time losses and crash reports, and writes
the replay when the match ends.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
import secrets
import struct
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog
import trio

from gin_arena.v1 import bot_pb2, game_pb2, referee_pb2

from . import _wire as wire
from . import gin
from ._replay import ReplayRecorder
from ._spec import MatchReport, MatchSpec, Termination
from ._substitute import substitute_action
from ._timecontrol import TimeControl

log = structlog.get_logger("referee")


class _Quiet:
    """A logger that says nothing (for re-runs of recorded matches)."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *a, **k: None

MAX_STRAY_MESSAGES = 100
"""Answers that fit no open request (wrong id, out of turn, …) a seat may send between two of
its own requests before its session is closed as a flood (RESOURCE_EXHAUSTED)."""

TableState = Literal["waiting", "running", "finished", "aborted"]


class Session(Protocol):
    """A live connection of one bot (one gRPC stream)."""

    bot_name: str
    """The name the bot gave in its hello."""
    nonce: bytes
    """The nonce the bot gave in its hello."""
    skip_event_messages: bool
    """The bot asked for no ``event`` messages (it reads the events in each request's state)."""

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        """Queue a message to the bot (``data``: a serialised ``RefereeMessage``); never
        blocks. ``on_written``, if given, is called with the time the message was written."""

    def close(self, code: str, detail: str) -> None:
        """End the stream with a status (``code`` names a ``grpc.StatusCode``)."""


class _Fault(Exception):
    def __init__(self, seat: int, termination: Termination, detail: str, **evidence: Any) -> None:
        super().__init__(detail)
        self.seat = seat
        self.termination = termination
        self.detail = detail
        self.evidence = evidence  # what a re-run of the replay needs to reproduce the fault


class SeatLink:
    """One seat of one match: its token, its current session and its open request.

    The transport calls :meth:`attach`, :meth:`detach`, :meth:`deliver` and :meth:`sent` as
    plain functions on the trio thread (the gRPC handlers run on the same thread); the table
    handles each at once, so a decision costs no trip through trio's scheduler."""

    def __init__(self, table: Table, seat: int, token: str, name: str) -> None:
        self.table = table
        self.seat = seat
        self.token = token
        self.name = name
        self.session: Session | None = None
        self.connected = trio.Event()
        self.nonce = b""
        self.bot_name = ""
        self.substituted = False
        self.pending = 0
        """The id of this seat's open request (0: none)."""
        self.open_request: bytes | None = None
        """The open request as sent (a reconnecting session gets it again)."""
        self.sent_at = 0.0
        """When the open request was written to the seat (the clock runs from then)."""
        self.limit_ms = 0
        """The open request's time: the allowance plus the margin."""
        self.allowance_ms = 0
        self.legal: tuple[gin.Action, ...] = ()
        """The open request's legal actions (the engine's interned values)."""
        self.disconnected_at: float | None = None
        """When the seat's last session ended, while it has none."""
        self.events = wire.EventLog()
        self.event_messages = True
        """Whether the seat is sent ``event`` messages (fixed by its first session's hello)."""
        self.stray = 0

    def token_matches(self, token: str) -> bool:
        """Constant-time comparison of a presented token with this seat's."""
        return hmac.compare_digest(self.token.encode(), token.encode())

    # --- called by the transport ---
    def attach(self, session: Session) -> str | None:
        """Attach a newly authenticated session; returns an error text if refused."""
        if self.table.state in ("finished", "aborted"):
            return f"match {self.table.match_id} is over"
        if self.session is not None:
            return f"seat {self.seat} of match {self.table.match_id} already has a live session"
        self.session = session
        if not self.connected.is_set():
            self.nonce = session.nonce
            self.bot_name = session.bot_name
            self.event_messages = not getattr(session, "skip_event_messages", False)
            self.connected.set()
            self.table._changed.set()
        else:
            self.table._handle(self.table._reconnected, self)
        return None

    def detach(self, session: Session, detail: str) -> None:
        """The session ended (the stream closed or broke)."""
        if self.session is session:
            self.session = None
            self.table._handle(self.table._disconnected, self, detail)

    def deliver(self, response: bot_pb2.ActionResponse, at: float) -> None:
        """An action arrived from this seat's session (``at``: when it was read)."""
        self.table._handle(self.table._answer, self, response, at)

    def sent(self, request_id: int, at: float) -> None:
        """The transport finished writing the request ``request_id`` at ``at``."""
        if request_id and request_id == self.pending:
            self.sent_at = at  # a later deadline: the table's timer finds it when it wakes

    def crashed(self, detail: str) -> None:
        """The operator reports that this seat's bot process died: the fault applies at once,
        whoever is to move."""
        self.table.alert(_Fault(self.seat, "crashed", detail or f"seat {self.seat}'s bot process ended"))

    # --- used by the table ---
    def deadline(self, grace_ms: int) -> float:
        """When the open request is lost: its time, or the reconnect grace while disconnected."""
        if self.session is None and self.disconnected_at is not None:
            return self.disconnected_at + grace_ms / 1000
        return self.sent_at + self.limit_ms / 1000

    def send(self, msg: bot_pb2.RefereeMessage) -> None:
        if self.session is not None:
            self.session.send(msg.SerializeToString(deterministic=True))

    def send_request(self, data: bytes, request_id: int) -> None:
        """Send the serialised action request ``request_id``; its clock restarts when written."""
        if self.session is not None:
            self.session.send(data, partial(self.sent, request_id))

    def error(self, code: int, message: str, request_id: int = 0, fatal: bool = False) -> None:
        self.send(bot_pb2.RefereeMessage(
            match_id=self.table.match_id,
            error=bot_pb2.ErrorReport(code=code, message=message, request_id=request_id, fatal=fatal),  # type: ignore[arg-type]
        ))


@dataclass(slots=True)
class _Clocks:
    """The seats' clocks, in integer microseconds so that a replay re-runs them exactly."""

    tc: TimeControl
    remaining_us: list[int] = field(default_factory=list)

    def reset(self, seats: int) -> None:
        self.remaining_us = [self.tc.base_ms * 1000] * seats

    def allowance(self, seat: int) -> int:
        """Milliseconds this seat may use for its next decision (without the margin)."""
        return self.tc.per_move_ms if self.tc.is_fixed else max(0, self.remaining_us[seat] // 1000)

    def charge(self, seat: int, used_us: int) -> bool:
        """Charge a decision; False if it lost on time."""
        if self.tc.is_fixed:
            return used_us <= (self.tc.per_move_ms + self.tc.margin_ms) * 1000
        self.remaining_us[seat] -= used_us
        ok = self.remaining_us[seat] + self.tc.margin_ms * 1000 >= 0
        self.remaining_us[seat] += self.tc.increment_ms * 1000
        return ok

    def shown(self) -> list[int]:
        if self.tc.is_fixed:
            return [self.tc.per_move_ms] * len(self.remaining_us)
        return [r // 1000 for r in self.remaining_us]


class Table:
    """One match: created from a :class:`MatchSpec`, run by :meth:`run` in a nursery."""

    def __init__(
        self, spec: MatchSpec, replay_dir: Path | None, on_finish: Callable[[Table], None], *, quiet: bool = False
    ) -> None:
        self.spec = spec
        self._log: Any = _Quiet() if quiet else log
        self.match_id = spec.match_id or secrets.token_hex(8)
        self.operator_seed = spec.seed if spec.seed is not None else secrets.token_bytes(32)
        self.commitment = gin.commitment(self.operator_seed)
        # 192-bit seat tokens in hex: never starting with "-", which a bot's argument parser
        # would take for an option (`--token -x…`).
        tokens = spec.seat_tokens or tuple(secrets.token_hex(24) for _ in spec.players)
        self.links = [SeatLink(self, s, t, n) for s, (t, n) in enumerate(zip(tokens, spec.players, strict=True))]
        self.replay_dir = replay_dir
        self.state: TableState = "waiting"
        self.match: gin.Match | None = None
        self.report: MatchReport | None = None
        self.finished = trio.Event()
        self.spectators: list[Callable[[referee_pb2.SpectatorEvent], None]] = []
        self._public_log = bytearray()  # serialised events, each after its 4-byte length (a bytes
        # object per event costs ~50 bytes more; a message object ~30x)
        self._public_packed = b""  # the log once the match is over, deflated
        self.cancel_scope = trio.CancelScope()
        self._cancel_reason = ""
        self._cancelled = False
        self._on_finish = on_finish
        self._request_id = 0
        self._clocks = _Clocks(spec.time_control)
        self._clocks.reset(len(spec.players))
        self._replay = ReplayRecorder()
        self._decisions = 0
        self._think = [0] * len(spec.players)
        self._substituted: set[int] = set()
        self._seed = self.operator_seed
        self.nonces: list[bytes] = [b""] * len(spec.players)
        self._alerts: list[_Fault] = []
        self._changed = trio.Event()
        self._digests = [hashlib.sha256() for _ in spec.players]
        self._told = [0] * len(spec.players)
        self._open: SeatLink | None = None  # the seat with the open request
        self._steps: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._busy = False
        self._wake = trio.Event()  # the supervisor's: a fault to apply, or the match ended
        self._timer: trio.CancelScope | None = None  # the supervisor's sleep, until the open request's deadline

    # ----- operator side -----
    def alert(self, fault: _Fault) -> None:
        """A fault that does not wait for the seat's turn (its process died)."""
        if self.state in ("finished", "aborted"):
            return
        self._alerts.append(fault)
        self._changed.set()
        self._wake.set()

    def cancel(self, reason: str) -> None:
        """Abort the match (operator's decision)."""
        self._cancel_reason = reason or "cancelled by the operator"
        self._cancelled = True  # no step runs from now on (cheaper to ask than the scope)
        self.cancel_scope.cancel()

    def watch(self, sink: Callable[[referee_pb2.SpectatorEvent], None], from_start: bool) -> None:
        """Add a spectator; with ``from_start`` it first gets everything so far."""
        log = self._public_events()
        if from_start:
            for data in log:
                sink(referee_pb2.SpectatorEvent.FromString(data))
        elif log:
            sink(referee_pb2.SpectatorEvent.FromString(log[0]))
            if self.report is not None and len(log) > 1:  # over: the header and the result
                sink(referee_pb2.SpectatorEvent.FromString(log[-1]))
        self.spectators.append(sink)

    # ----- the match -----
    async def run(self) -> MatchReport:
        """Play the match to its end; never raises for anything a bot does."""
        bound = structlog.contextvars.bound_contextvars(match_id=self.match_id)
        bound.__enter__()
        try:
            with self.cancel_scope:
                try:
                    await self._play()
                except _Fault as f:
                    self._end_by_fault(f)
            if self.report is None:  # cancelled
                self._finish(None, "aborted", None, self._cancel_reason or "aborted", state="aborted")
        except Exception as e:  # a bug of ours: the match ends, the server lives on
            self._log.exception("match_internal_error")
            if self.report is None:
                self._finish(None, "internal_error", None, f"internal error: {e!r}", state="aborted")
        try:
            await self._persist()
        finally:
            bound.__exit__(None, None, None)
        assert self.report is not None
        return self.report

    async def _play(self) -> None:
        spec = self.spec
        with trio.move_on_after(spec.connect_timeout_ms / 1000):
            while not all(link.connected.is_set() for link in self.links) and not self._alerts:
                self._changed = trio.Event()
                await self._changed.wait()
        if self._alerts:  # a bot process died before its match could start
            self._header()
            fault = self._alerts.pop(0)
            fault.evidence["after_request"] = 0
            raise fault
        missing = [link.seat for link in self.links if not link.connected.is_set()]
        self.nonces = [link.nonce for link in self.links]
        self._header()
        if missing:
            detail = "seat(s) " + ", ".join(map(str, missing)) + f" did not connect within {spec.connect_timeout_ms} ms"
            if len(missing) == len(self.links):
                self._finish(None, "failed_to_connect", None, detail, state="aborted")
                return
            raise _Fault(missing[0], "failed_to_connect", detail, missing=missing)
        if spec.mix_nonces:
            self._seed = gin.mix_seed(self.operator_seed, self.nonces)
        self.state = "running"
        match = gin.Match(spec.rules, self._seed)
        self.match = match
        self._log.info("match_started", players=list(spec.players))
        for link in self.links:
            self._tell(link, self._match_started(link.seat))
        self._public(header=referee_pb2.SpectatorHeader(
            player_names=spec.players, rules=wire.rules_to_proto(spec.rules),
            time_control=wire.time_control_to_proto(spec.time_control), seed_commitment=self.commitment,
            fault_policy=game_pb2.FAULT_POLICY_FORFEIT if spec.fault_policy == "forfeit"
            else game_pb2.FAULT_POLICY_SUBSTITUTE,
        ))
        self._deal_started()
        self._handle(self._advance)
        await self._supervise()

    def _header(self) -> None:
        if self._replay.count:
            return
        spec = self.spec
        self._replay.add(
            "header", format="gin-arena-replay", version=1, match_id=self.match_id,
            players=list(spec.players), bots=[link.bot_name for link in self.links],
            rules=spec.rules.to_dict(), time_control=str(spec.time_control),
            fault_policy=spec.fault_policy, seed_commitment=self.commitment.hex(),
            mix_nonces=spec.mix_nonces, repeat_illegal=spec.repeat_illegal,
            reconnect_grace_ms=spec.reconnect_grace_ms, connect_timeout_ms=spec.connect_timeout_ms,
            max_actions_per_deal=spec.max_actions_per_deal,
            event_messages=[link.event_messages for link in self.links],
        )

    def _match_started(self, seat: int) -> bot_pb2.RefereeMessage:
        spec = self.spec
        return bot_pb2.RefereeMessage(match_id=self.match_id, match_started=bot_pb2.MatchStarted(
            match_id=self.match_id, seat=seat, player_names=spec.players,
            rules=wire.rules_to_proto(spec.rules), time_control=wire.time_control_to_proto(spec.time_control),
            seed_commitment=self.commitment,
            fault_policy=game_pb2.FAULT_POLICY_FORFEIT if spec.fault_policy == "forfeit"
            else game_pb2.FAULT_POLICY_SUBSTITUTE,
            reconnect_grace_ms=spec.reconnect_grace_ms, repeat_illegal=spec.repeat_illegal,
            mix_bot_nonces=spec.mix_nonces,
        ))

    def _deal_started(self) -> None:
        match = self.match
        assert match is not None
        deal = match.deal
        game = match.game
        self._replay.add(
            "deal", game=game.number, deal=game.deal_number, dealer=deal.dealer,
            deck=[str(c) for c in deal.deck], key=deal.key.hex(),
        )
        for link in self.links:
            self._tell(link, bot_pb2.RefereeMessage(
                match_id=self.match_id, deal_started=wire.deal_started(match.view(link.seat), link.events)))
        pub = match.view(-1)
        self._public(deal_started=referee_pb2.SpectatorDeal(
            game_number=pub.game_number, deal_number=pub.deal_number, dealer=pub.dealer,
            upcard=str(pub.first_upcard), stock_size=pub.stock_size, hand_sizes=pub.hand_sizes,
            scores=pub.scores, knock_limit=-1 if pub.knock_limit is None else pub.knock_limit,
            spade_double=pub.doubled,
        ))

    # ----- the steps of a match: plain calls, from the transport or the supervisor -----
    def _handle(self, step: Callable[..., None], *args: Any) -> None:
        """Run one step of the match now, or right after the step that is running (a session
        may answer from inside ``send``). A fault applies the match's policy; a bug of ours
        ends this match as an internal error and never reaches the caller (the transport)."""
        self._steps.append((step, args))
        if self._busy:
            return
        self._busy = True
        try:
            while self._steps:
                step, args = self._steps.popleft()
                try:
                    step(*args)
                except _Fault as f:
                    self._fault(f)
                except Exception as e:  # a bug of ours: this match ends, the server lives on
                    self._internal_error(e)
        finally:
            self._busy = False

    def _internal_error(self, e: Exception) -> None:
        self._log.exception("match_internal_error")
        if self.report is None:
            self._open = None
            try:
                self._finish(None, "internal_error", None, f"internal error: {e!r}", state="aborted")
            except Exception:  # the finish itself failed: the supervisor ends the match
                self._log.exception("match_internal_error")
                self.cancel_scope.cancel()
        self._wake.set()

    def _live(self) -> bool:
        return self.report is None and self.match is not None and not self._cancelled

    def _advance(self) -> None:
        """Play on until a seat's bot is asked for a decision or the match ends."""
        match = self.match
        assert match is not None
        while self._live():
            if match.is_over:
                outcome = match.outcome
                assert outcome is not None
                self._finish(outcome.winner, "normal", None, "the match was played to its end")
                return
            seat = match.to_move
            assert seat is not None
            link = self.links[seat]
            if self._alerts:
                fault = self._alerts.pop(0)
                fault.evidence["after_request"] = 0
                raise fault
            if link.substituted:
                self._play_action(seat, substitute_action(match.view(seat)), 0, 0)
                if self._stalled():
                    return
                continue
            self._request(link)
            return

    def _request(self, link: SeatLink) -> None:
        """Send the seat its next request (its clock starts when the request is written)."""
        match = self.match
        assert match is not None
        seat = link.seat
        self._request_id += 1
        request_id = self._request_id
        tc = self.spec.time_control
        allowance = self._clocks.allowance(seat)
        state = match.view(seat)
        data = wire.action_request_bytes(self.match_id, request_id, state, self._clocks.shown(), tc.increment_ms,
                                         allowance, link.events)
        link.legal = state.legal_actions
        link.stray = 0
        link.pending = request_id
        link.open_request = data
        link.allowance_ms = allowance
        link.limit_ms = allowance + tc.margin_ms
        link.sent_at = trio.current_time()
        self._open = link
        self._record(link, data)
        link.send_request(data, request_id)
        self._arm()

    def _close_request(self) -> None:
        link = self._open
        if link is not None:
            link.pending = 0
            link.open_request = None
            self._open = None

    def _answer(self, link: SeatLink, response: bot_pb2.ActionResponse, at: float) -> None:
        """An answer from a seat's session, read at ``at``."""
        if self.state in ("finished", "aborted"):
            link.error(bot_pb2.ERROR_CODE_MATCH_OVER, f"match {self.match_id} is over", response.request_id)
            return
        if self._cancelled:
            return  # the supervisor ends the match
        if self._alerts and self._live():  # a bot process died: that comes first
            self._take_alert()
        request_id = link.pending
        if not self._live() or not request_id or response.request_id != request_id:
            self._stray(link, response.request_id)
            return
        seat = link.seat
        spec = self.spec
        tc = spec.time_control
        used_us = max(0, round((at - link.sent_at) * 1_000_000))
        raw = {"request_id": request_id, "raw_kind": int(response.action.kind),
               "raw_card": response.action.card, "used_us": used_us}
        try:
            action = wire.action_from_proto(response.action)
        except wire.WireError as e:
            raise _Fault(seat, "malformed_message", f"seat {seat}: {e}", **raw) from None
        if action not in link.legal:
            reason = self._why_illegal(action)
            if spec.repeat_illegal:
                link.send(bot_pb2.RefereeMessage(match_id=self.match_id, action_rejected=bot_pb2.ActionRejected(
                    request_id=request_id, action=response.action, reason=reason)))
                return
            raise _Fault(seat, "illegal_action", f"seat {seat} played {action}: {reason}", **raw)
        if not self._clocks.charge(seat, used_us):
            raise _Fault(seat, "time_forfeit", f"seat {seat} answered after {used_us / 1000:.0f} ms; it had "
                         f"{link.allowance_ms} ms (+{tc.margin_ms} ms margin)", **raw)
        self._think[seat] += used_us
        self._close_request()
        self._play_action(seat, action, request_id, used_us)
        if not self._stalled():
            self._advance()

    def _stray(self, link: SeatLink, request_id: int) -> None:
        """An answer that fits no open request of the seat."""
        link.stray += 1
        if link.stray > MAX_STRAY_MESSAGES:
            if link.session is not None:
                link.session.close("RESOURCE_EXHAUSTED", f"more than {MAX_STRAY_MESSAGES} unexpected actions")
            return
        if not link.pending:
            link.error(bot_pb2.ERROR_CODE_NOT_YOUR_TURN,
                       f"no action is requested from seat {link.seat} now", request_id)
        else:
            link.error(bot_pb2.ERROR_CODE_BAD_REQUEST_ID,
                       f"request_id {request_id} is not the open request {link.pending}", request_id)

    def _stalled(self) -> bool:
        """End the match if its deal has run too long without ending (two bots can keep taking
        each other's discards for ever)."""
        match = self.match
        assert match is not None
        cap = self.spec.max_actions_per_deal
        if len(match.deal.history) < cap:
            return False
        self._finish(None, "aborted", None, f"deal {match.game.deal_number} of game {match.game.number} reached "
                     f"{cap} actions without ending (stalling)", state="aborted")
        return True

    def _take_alert(self) -> None:
        fault = self._alerts.pop(0)
        fault.evidence["after_request"] = self._open.pending if self._open is not None else 0
        raise fault

    def _fault(self, f: _Fault) -> None:
        """Apply the match's fault policy: forfeit ends the match, substitute seats the
        built-in bot to the end of the game and plays on."""
        while self._live():
            self._close_request()
            if self.spec.fault_policy == "forfeit":
                self._end_by_fault(f)
                return
            self._substitute(f)
            try:
                self._advance()
                return
            except _Fault as again:
                f = again

    def _reconnected(self, link: SeatLink) -> None:
        link.disconnected_at = None
        if not self._live():
            self.resume(link)
            return
        self._log.info("seat_reconnected", seat=link.seat)
        if link.pending and (trio.current_time() - link.sent_at) * 1000 > link.limit_ms:
            self._fault(_Fault(link.seat, "time_forfeit",
                               f"seat {link.seat} reconnected after its time ({link.allowance_ms} ms) ran out",
                               request_id=link.pending))
        if self.report is None:
            self.resume(link)
            self._arm()

    def _disconnected(self, link: SeatLink, detail: str) -> None:
        link.disconnected_at = trio.current_time()
        if self._live():
            self._log.warning("seat_disconnected", seat=link.seat, detail=detail)
            if link.pending:
                self._arm()

    def _arm(self) -> None:
        """Bring the supervisor's wake-up forward if the open request's deadline is earlier
        (a later one it finds when it wakes: no trip through trio per decision)."""
        timer, link = self._timer, self._open
        if timer is not None and link is not None:
            deadline = link.deadline(self.spec.reconnect_grace_ms)
            if deadline < timer.deadline:
                timer.deadline = deadline

    async def _supervise(self) -> None:
        """Sleep until the open request's deadline or an alert; apply what is due; until the
        match has a result. Decisions never pass through here."""
        grace = self.spec.reconnect_grace_ms
        while self.report is None:
            self._wake = trio.Event()
            link = self._open
            with trio.move_on_at(link.deadline(grace) if link is not None else math.inf) as timer:
                self._timer = timer
                await self._wake.wait()
            self._timer = None
            self._handle(self._check)

    def _check(self) -> None:
        if not self._live():
            return
        if self._alerts:
            self._take_alert()
        link = self._open
        grace = self.spec.reconnect_grace_ms
        if link is None or trio.current_time() < link.deadline(grace):
            return
        seat = link.seat
        if link.session is None and link.disconnected_at is not None:
            raise _Fault(seat, "disconnected", f"seat {seat} disconnected and did not come back within "
                         f"{grace} ms", request_id=link.pending)
        raise _Fault(seat, "time_forfeit", f"seat {seat} did not answer within {link.allowance_ms} ms"
                     f" (+{self.spec.time_control.margin_ms} ms margin)", request_id=link.pending)

    def _why_illegal(self, action: gin.Action) -> str:
        assert self.match is not None
        try:
            self.match.deal.copy().apply(action)
        except gin.IllegalActionError as e:
            return str(e)
        return "not among the legal actions"  # pragma: no cover - legal_actions is exact

    def resume(self, link: SeatLink) -> None:
        """A seat reconnected: give it the match, the current deal and its open request."""
        if self.match is None:
            return
        link.send(self._match_started(link.seat))
        link.send(bot_pb2.RefereeMessage(
            match_id=self.match_id, deal_started=wire.deal_started(self.match.view(link.seat))))
        if link.open_request is not None and link.session is not None:
            link.session.send(link.open_request)  # its clock still runs from the first send

    def _substitute(self, f: _Fault) -> None:
        link = self.links[f.seat]
        link.substituted = True
        self._substituted.add(f.seat)
        self._replay.add("fault", seat=f.seat, termination=f.termination, detail=f.detail, policy="substitute",
                         decisions=self._decisions, **f.evidence)
        self._log.warning("seat_substituted", seat=f.seat, termination=f.termination, detail=f.detail)
        link.error(bot_pb2.ERROR_CODE_PROTOCOL_VIOLATION,
                   f"{f.detail}; a built-in bot plays seat {f.seat} to the end of this game")

    def _play_action(self, seat: int, action: gin.Action, request_id: int, think_us: int) -> None:
        think_ms = think_us // 1000
        match = self.match
        assert match is not None
        deal = match.deal
        events = match.apply(action, seat)
        self._decisions += 1
        move = deal.history[-1]
        reshuffle = None
        if move.seat == -1:  # the discard just played triggered a reshuffle
            reshuffle = move
            move = deal.history[-2]
        self._replay.add_action(seat, request_id, str(action), str(move.card) if move.card is not None else None,
                                think_us, self.links[seat].substituted, self._clocks.shown())
        for link in self.links:
            if link.event_messages:
                ev = gin.seat_event(link.seat, seat, action.kind, move.card, move.stock_size)
                self._tell(link, bot_pb2.RefereeMessage(match_id=self.match_id, event=wire.public_event(ev, think_ms)))
        self._public_data(wire.spectator_event_bytes(self.match_id, wire.public_event_bytes(
            gin.seat_event(-1, seat, action.kind, move.card, move.stock_size), think_ms)))
        if reshuffle is not None:
            self._replay.add("reshuffle", stock_size=reshuffle.stock_size)
            rs = wire.public_event(gin.PublicEvent(-1, "reshuffle", None, reshuffle.stock_size))
            for link in self.links:
                if link.event_messages:
                    self._tell(link, bot_pb2.RefereeMessage(match_id=self.match_id, event=rs))
            self._public(event=rs)
        for step in events:
            if isinstance(step, gin.DealEnded):
                self._deal_ended(deal, step, game_over=any(isinstance(e, gin.GameEnded) for e in events))
            elif isinstance(step, gin.GameEnded):
                self._game_ended(step.result)
            elif isinstance(step, gin.DealStarted):
                self._deal_started()

    def _deal_ended(self, deal: gin.Deal, ev: gin.DealEnded, *, game_over: bool) -> None:
        out = ev.outcome
        sd = out.showdown
        self._replay.add(
            "deal_end", game=ev.game, deal=ev.deal, kind=out.kind, knocker=out.knocker, winner=out.winner,
            points=out.points, doubled=out.doubled,
            knock_discard=str(out.knock_discard) if out.knock_discard else None,
            hands=[[str(c) for c in h] for h in out.hands],
            layoffs=[str(c) for c in sd.layoffs] if sd else [],
            deadwood=[sd.knocker_deadwood, sd.defender_deadwood] if sd else [],
            scores=list(ev.scores),
        )
        for link in self.links:
            st = gin.deal_state(deal, link.seat, game_number=ev.game, deal_number=ev.deal, scores=ev.scores)
            self._tell(link, bot_pb2.RefereeMessage(match_id=self.match_id, deal_finished=bot_pb2.DealFinished(
                result=wire.deal_result(st, game_over=game_over))))
        pub = gin.deal_state(deal, -1, game_number=ev.game, deal_number=ev.deal, scores=ev.scores)
        self._public(deal_finished=wire.deal_result(pub, game_over=game_over))

    def _game_ended(self, result: gin.GameResult) -> None:
        self._replay.add(
            "game_end", game=result.game, winner=result.winner, totals=list(result.totals),
            deal_points=list(result.deal_points), deals_won=list(result.deals_won),
            shutout=result.shutout, deals=result.deals, forfeit=result.forfeit,
        )
        msg = wire.game_result(result)
        for link in self.links:
            self._tell(link, bot_pb2.RefereeMessage(match_id=self.match_id,
                                                    game_finished=bot_pb2.GameFinished(result=msg)))
            link.substituted = False  # the substitute plays to the end of the game only
        self._public(game_finished=msg)
        if not self.spec.time_control.is_fixed:
            self._clocks.reset(len(self.links))

    def _end_by_fault(self, f: _Fault) -> None:
        self._log.warning("seat_faulted", seat=f.seat, termination=f.termination, detail=f.detail)
        self._replay.add("fault", seat=f.seat, termination=f.termination, detail=f.detail, policy="forfeit",
                         decisions=self._decisions, **f.evidence)
        winner: int | None = 1 - f.seat
        if self.match is not None and not self.match.is_over:
            for ev in self.match.forfeit(f.seat):
                if isinstance(ev, gin.GameEnded):
                    self._game_ended(ev.result)
        self._finish(winner, f.termination, f.seat, f.detail)

    def _finish(self, winner: int | None, termination: Termination, faulting: int | None, detail: str,
                state: TableState = "finished") -> None:
        outcome = self.match.outcome if self.match is not None else None
        self._header()
        self._replay.add(
            "result", winner=winner, termination=termination, faulting_seat=faulting, detail=detail,
            games_won=list(outcome.games_won) if outcome else [], totals=list(outcome.totals) if outcome else [],
            seed=self.operator_seed.hex(), nonces=[n.hex() for n in self.nonces],
            substituted_seats=sorted(self._substituted), decisions=self._decisions, think_us=self._think,
            message_digests=[d.hexdigest() for d in self._digests], messages=self._told,
        )
        replay_hash = self._replay.last_hash
        self.state = state
        self.report = MatchReport(
            match_id=self.match_id, players=self.spec.players, winner=winner, termination=termination,
            faulting_seat=faulting, detail=detail, outcome=outcome, substituted_seats=tuple(sorted(self._substituted)),
            seed=self._seed, seed_commitment=self.commitment, replay_path="", replay_hash=replay_hash,
            decisions=self._decisions, think_ms=tuple(t // 1000 for t in self._think),
        )
        self._open = None
        self._wake.set()
        result = wire.match_result(self.report, self.operator_seed, self.nonces)
        for link in self.links:
            link.pending = 0
            link.open_request = None
            link.send(bot_pb2.RefereeMessage(match_id=self.match_id,
                                             match_finished=bot_pb2.MatchFinished(result=result)))
        self._public(match_finished=result)

    async def _persist(self) -> None:
        """Write the replay (in a worker thread: its fsyncs must not stall other matches),
        log the one ``match_finished`` line, and let waiters know."""
        report = self.report
        assert report is not None
        path = ""
        if self.replay_dir is not None:
            target = self.replay_dir / f"{self.match_id}.jsonl"
            try:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(self._replay.write, target)
                path = str(target)
            except OSError as e:
                self._log.error("replay_write_failed", error=str(e))
        self.report = report = dataclasses.replace(report, replay_path=path)
        outcome = report.outcome
        self._log.info(
            "match_finished", players=list(self.spec.players), winner=report.winner,
            termination=report.termination, faulting_seat=report.faulting_seat,
            games_won=list(outcome.games_won) if outcome else [], totals=list(outcome.totals) if outcome else [],
            decisions=self._decisions, replay=path, replay_hash=report.replay_hash, detail=report.detail,
        )
        self._match_data_done()
        self.finished.set()
        self._on_finish(self)

    def _match_data_done(self) -> None:
        """Drop what a finished match no longer needs (its replay lines are on disk)."""
        if self.report is not None and self.report.replay_path:
            self._replay.clear()
        for link in self.links:
            link.events = wire.EventLog()
            link.open_request = None
        # A finished match stays listed (GetMatch, WatchMatch from the start) for a while: keep
        # its spectator log deflated (~60 bytes per decision otherwise).
        self._public_packed = zlib.compress(self._public_log)
        self._public_log = bytearray()

    def _public_events(self) -> list[bytes]:
        """The spectator events so far, serialised."""
        data = zlib.decompress(self._public_packed) if self._public_packed else bytes(self._public_log)
        out, i = [], 0
        while i < len(data):
            (n,) = struct.unpack_from(">I", data, i)
            out.append(data[i + 4:i + 4 + n])
            i += 4 + n
        return out

    def _tell(self, link: SeatLink, msg: bot_pb2.RefereeMessage) -> None:
        """Send a message of the match's story to a seat, adding it to that seat's digest (what
        ``arena audit`` re-derives). Resends after a reconnect, errors and rejections are not
        part of the story and go through ``link.send`` directly."""
        data = msg.SerializeToString(deterministic=True)
        self._record(link, data)
        if link.session is not None:
            link.session.send(data)

    def _record(self, link: SeatLink, data: bytes) -> None:
        """Add a message of the story to the seat's digest."""
        digest = self._digests[link.seat]
        digest.update(len(data).to_bytes(4, "big"))
        digest.update(data)
        self._told[link.seat] += 1

    def _public(self, **kind: Any) -> None:
        self._public_data(referee_pb2.SpectatorEvent(match_id=self.match_id, **kind).SerializeToString())

    def _public_data(self, data: bytes) -> None:
        """Add a serialised ``SpectatorEvent`` to the public log and show it to the spectators."""
        self._public_log += len(data).to_bytes(4, "big")
        self._public_log += data
        if self.spectators:
            ev = referee_pb2.SpectatorEvent.FromString(data)
            for sink in list(self.spectators):
                sink(ev)
