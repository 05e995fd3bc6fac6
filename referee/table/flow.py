"""One match at the table: the match flow under trio, for any game and any number of seats.

A :class:`Table` owns the truth of one match (the game's :class:`~referee.games.GameMatch`).
Seats talk to it through their :class:`~referee.table.seats.SeatLink`; every message to a seat is
built by the game's wire from that seat's information state; nothing else of the match reaches
a seat. The table is made of small pieces with one job each: the links (``_seats``), the clocks
(``_clocks``), the fault policy (``_faults``), the story digests (``_digests``), the spectator
log (``_spectators``) and what goes into the replay (``_recording``); this module is the match
flow.

A step of the match (an answer, a reconnect) runs inside the transport's call, so a decision
never waits for trio's scheduler; the match's trio task (:meth:`Table.run`) is its supervisor:
it sleeps until the open request's deadline, applies time losses and crash reports, and writes
the replay when the match ends.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import structlog
import trio

from gin_arena.v2 import bot_pb2, referee_pb2
from referee import games
from referee.model.spec import MatchReport, MatchSpec, Termination
from referee.table.clocks import Clocks
from referee.table.digests import StoryDigests
from referee.table.faults import Fault, FaultLedger
from referee.table.recording import MatchRecorder
from referee.table.seats import SeatLink, Session
from referee.table.spectators import Sink, SpectatorLog
from referee.wire import envelope as wire

__all__ = ["MAX_STRAY_MESSAGES", "Fault", "SeatLink", "Session", "Table", "TableState"]

log = structlog.get_logger("referee")


class _Quiet:
    """A logger that says nothing (for re-runs of recorded matches)."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *a, **k: None


MAX_STRAY_MESSAGES = 100
"""Answers that fit no open request (wrong id, out of turn, …) a seat may send between two of
its own requests before its session is closed as a flood (RESOURCE_EXHAUSTED)."""

TableState = Literal["waiting", "running", "finished", "aborted", "interrupted"]

_EVENTS = (games.Acted, games.Chance)
"""The happenings a game's wire tells the seats as ``event`` messages (``GameWire.tell``)."""


class Table:
    """One match: created from a :class:`MatchSpec`, run by :meth:`run` in a nursery."""

    def __init__(
        self, spec: MatchSpec, replay_dir: Path | None, on_finish: Callable[[Table], None], *, quiet: bool = False,
        on_start: Callable[[Table], None] | None = None,
    ) -> None:
        self.spec = spec
        entry = spec.game_entry
        self.game: games.Game = entry.game
        self.wire: games.GameWire = entry.wire
        self._log: Any = _Quiet() if quiet else log
        self.match_id = spec.match_id or secrets.token_hex(8)
        self.game_name = spec.game
        self.operator_seed = spec.seed if spec.seed is not None else secrets.token_bytes(32)
        self.commitment = self.game.commitment(self.operator_seed)
        n = len(spec.players)
        # 192-bit seat tokens in hex: never starting with "-", which a bot's argument parser
        # would take for an option (`--token -x…`).
        tokens = spec.seat_tokens or tuple(secrets.token_hex(24) for _ in spec.players)
        self.links = [SeatLink(self, s, t, name, self.wire.new_seat_cache())
                      for s, (t, name) in enumerate(zip(tokens, spec.players, strict=True))]
        self.replay_dir = replay_dir
        self.state: TableState = "waiting"
        self.match: games.GameMatch | None = None
        self.report: MatchReport | None = None
        self.finished = trio.Event()
        self.spectator_log = SpectatorLog()
        self.cancel_scope = trio.CancelScope()
        self._cancel_reason = ""
        self._cancelled = False
        self._on_finish = on_finish
        self._on_start = on_start
        self._request_id = 0
        self._clocks = Clocks([spec.seat_time_control(s) for s in range(n)])
        self._replay = MatchRecorder()
        self._decisions = 0
        self._think = [0] * n
        self._fallbacks = [0] * n  # answers each seat marked as its client's fallback
        self._faults = FaultLedger(spec.fault_policy, n)
        self._seed = self.operator_seed
        self.nonces: list[bytes] = [b""] * n
        self._alerts: list[Fault] = []
        self._changed = trio.Event()
        self._digests = StoryDigests(n)
        self._open: SeatLink | None = None  # the seat with the open request
        self._steps: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._busy = False
        self._wake = trio.Event()  # the supervisor's: a fault to apply, or the match ended
        self._timer: trio.CancelScope | None = None  # the supervisor's sleep, until the open request's deadline

    # ----- what the seats' links report (``_seats.SeatOwner``) -----
    @property
    def over(self) -> bool:
        """Whether the match has finished or was aborted."""
        return self.state in ("finished", "aborted", "interrupted")

    def seat_connected(self) -> None:
        """A seat's first session arrived: the match may start."""
        self._changed.set()

    def seat_reconnected(self, link: SeatLink) -> None:
        """A seat's session came back."""
        self._handle(self._reconnected, link)

    def seat_disconnected(self, link: SeatLink, detail: str) -> None:
        """A seat's session ended."""
        self._handle(self._disconnected, link, detail)

    def seat_answered(self, link: SeatLink, response: bot_pb2.ActionResponse, at: float) -> None:
        """An answer from a seat, handled now."""
        self._handle(self._answer, link, response, at)

    # ----- operator side -----
    def alert(self, fault: Fault) -> None:
        """A fault that does not wait for the seat's turn (its process died)."""
        if self.over:
            return
        self._alerts.append(fault)
        self._changed.set()
        self._wake.set()

    def cancel(self, reason: str) -> None:
        """Abort the match (operator's decision)."""
        self._cancel_reason = reason or "cancelled by the operator"
        self._cancelled = True  # no step runs from now on (cheaper to ask than the scope)
        self.cancel_scope.cancel()

    @property
    def spectators(self) -> list[Sink]:
        """The live spectators."""
        return self.spectator_log.sinks

    def watch(self, sink: Sink, from_start: bool) -> None:
        """Add a spectator; with ``from_start`` it first gets everything so far."""
        self.spectator_log.watch(sink, from_start, self.report is not None)

    # ----- the match -----
    async def run(self) -> MatchReport:
        """Play the match to its end; never raises for anything a bot does."""
        bound = structlog.contextvars.bound_contextvars(match_id=self.match_id)
        bound.__enter__()
        try:
            with self.cancel_scope:
                try:
                    await self._play()
                except Fault as f:
                    self._faults.forfeit(f)
                    self._end_by_fault(f)
            if self.report is None:  # cancelled
                self._finish("aborted", None, self._cancel_reason or "aborted", state="aborted")
        except Exception as e:  # a bug of ours: the match ends, the server lives on
            self._log.exception("match_internal_error")
            if self.report is None:
                self._finish("internal_error", None, f"internal error: {e!r}", state="aborted")
        try:
            await self._persist()
        finally:
            bound.__exit__(None, None, None)
        assert self.report is not None
        return self.report

    async def _connect(self) -> list[int]:
        """Wait for the seats; the seats that did not connect."""
        with trio.move_on_after(self.spec.connect_timeout_ms / 1000):
            while not all(link.connected.is_set() for link in self.links) and not self._alerts:
                self._changed = trio.Event()
                await self._changed.wait()
        return [link.seat for link in self.links if not link.connected.is_set()]

    async def _play(self) -> None:
        spec = self.spec
        missing = await self._connect()
        if self._alerts:  # a bot process died before its match could start
            self._header()
            fault = self._alerts.pop(0)
            fault.evidence["after_request"] = 0
            raise fault
        self.nonces = [link.nonce for link in self.links]
        self._header()
        if missing:
            detail = "seat(s) " + ", ".join(map(str, missing)) + f" did not connect within {spec.connect_timeout_ms} ms"
            if len(missing) == len(self.links):
                self._finish("failed_to_connect", None, detail, state="aborted")
                return
            for seat in missing[1:]:
                self._faults.forfeit(Fault(seat, "failed_to_connect", detail))
            raise Fault(missing[0], "failed_to_connect", detail, missing=missing)
        if spec.mix_nonces:
            self._seed = self.game.mix_seed(self.operator_seed, self.nonces)
        self.state = "running"
        match = self.game.new_match(spec.rules, self._seed, len(self.links))
        self.match = match
        self._log.info("match_started", players=list(spec.players))
        if self._on_start is not None:
            self._on_start(self)
        for link in self.links:
            self._tell(link, self._match_started(link.seat))
        self._public(header=referee_pb2.SpectatorHeader(**self._start_fields()))
        for h in match.opening():
            self._narrate(match, h, 0)
        self._handle(self._advance)
        await self._supervise()

    def _start_fields(self) -> dict[str, Any]:
        """What ``MatchStarted`` and ``SpectatorHeader`` share (a field only a game other than
        the default or per-seat clocks need is left out when unused: old bytes stay the same)."""
        spec = self.spec
        fields: dict[str, Any] = {
            "player_names": spec.players, "time_control": wire.time_control_to_proto(spec.time_control),
            "seed_commitment": self.commitment, "fault_policy": wire.FAULT_POLICY_TO_PB[spec.fault_policy],
            **self.wire.start_fields(spec.rules),
        }
        fields["game_name"] = spec.game
        if spec.seat_time_controls:
            fields["seat_time_controls"] = [wire.time_control_to_proto(tc) for tc in spec.seat_time_controls]
        return fields

    def _header(self) -> None:
        if self.replay_dir is not None and self._replay.count == 0 and self._replay.journal is None:
            try:
                self._replay.start_journal(self.replay_dir, self.match_id, self.operator_seed, self.nonces)
            except OSError as e:  # the replay is then kept in memory and written at the end
                self._log.error("journal_open_failed", error=str(e))
        self._replay.header(self.spec, self.match_id, self.game.rules_to_dict(self.spec.rules), self.commitment,
                            [link.bot_name for link in self.links], [link.event_messages for link in self.links])

    def _match_started(self, seat: int) -> bot_pb2.RefereeMessage:
        spec = self.spec
        return bot_pb2.RefereeMessage(match_id=self.match_id, match_started=bot_pb2.MatchStarted(
            match_id=self.match_id, seat=seat, reconnect_grace_ms=spec.reconnect_grace_ms,
            repeat_illegal=spec.repeat_illegal, mix_bot_nonces=spec.mix_nonces, **self._start_fields(),
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
                except Fault as f:
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
                self._finish("internal_error", None, f"internal error: {e!r}", state="aborted")
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
                self._finish("normal", None, "the match was played to its end")
                return
            seat = match.decider
            assert seat is not None
            link = self.links[seat]
            if self._alerts:
                fault = self._alerts.pop(0)
                fault.evidence["after_request"] = 0
                raise fault
            if link.substituted:
                self._play_action(seat, match.substitute(seat), 0, 0)
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
        tc = self._clocks.tcs[seat]
        allowance = self._clocks.allowance(seat)
        data, link.legal = self.wire.request(match, seat, self.match_id, request_id, self._clocks.shown(),
                                             tc.increment_ms, allowance, link.cache)
        link.stray = 0
        link.pending = request_id
        link.open_request = data
        link.allowance_ms = allowance
        link.limit_ms = allowance + tc.margin_ms
        link.sent_at = trio.current_time()
        self._open = link
        self._digests.add(seat, data)
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
        if self.over:
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
        match = self.match
        assert match is not None
        tc = self._clocks.tcs[seat]
        used_us = max(0, round((at - link.sent_at) * 1_000_000))
        raw = {"request_id": request_id, **self.wire.raw_action(response.action), "used_us": used_us}
        try:
            action = self.wire.action_from_proto(response.action)
        except games.WireError as e:
            raise Fault(seat, "malformed_message", f"seat {seat}: {e}", **raw) from None
        if action not in link.legal:
            reason = match.why_illegal(seat, action)
            if self.spec.repeat_illegal:
                link.send_asking(bot_pb2.RefereeMessage(match_id=self.match_id, action_rejected=bot_pb2.ActionRejected(
                    request_id=request_id, action=response.action, reason=reason)))
                return
            raise Fault(seat, "illegal_action", f"seat {seat} played {action}: {reason}", **raw)
        if not self._clocks.charge(seat, used_us):
            raise Fault(seat, "time_forfeit", f"seat {seat} answered after {used_us / 1000:.0f} ms; it had "
                        f"{link.allowance_ms} ms (+{tc.margin_ms} ms margin)", **raw)
        self._think[seat] += used_us
        fallback = response.fallback
        if fallback:
            self._fallbacks[seat] += 1
        self._close_request()
        self._play_action(seat, action, request_id, used_us, fallback)
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
        """Apply the match's fault policy (``_faults``): the match ends now, or the built-in
        bot takes the seat to the end of the game and play goes on."""
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

    def _reconnected(self, link: SeatLink) -> None:
        link.disconnected_at = None
        if not self._live():
            self.resume(link)
            return
        self._log.info("seat_reconnected", seat=link.seat)
        if link.pending and (trio.current_time() - link.sent_at) * 1000 > link.limit_ms:
            self._fault(Fault(link.seat, "time_forfeit",
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
            raise Fault(seat, "disconnected", f"seat {seat} disconnected and did not come back within "
                        f"{grace} ms", request_id=link.pending)
        raise Fault(seat, "time_forfeit", f"seat {seat} did not answer within {link.allowance_ms} ms"
                    f" (+{self._clocks.tcs[seat].margin_ms} ms margin)", request_id=link.pending)

    def resume(self, link: SeatLink) -> None:
        """A seat reconnected: give it the match, the current deal and its open request."""
        if self.match is None:
            return
        link.send(self._match_started(link.seat))
        link.send(bot_pb2.RefereeMessage(
            match_id=self.match_id, deal_started=self.wire.deal_started(self.match, link.seat, None)))
        if link.open_request is not None and link.session is not None:
            link.session.send(link.open_request)  # its clock still runs from the first send

    def _substitute(self, f: Fault) -> None:
        link = self.links[f.seat]
        link.substituted = True
        self._record_fault(f, self.spec.fault_policy)
        self._log.warning("seat_substituted", seat=f.seat, termination=f.termination, detail=f.detail)
        link.error(bot_pb2.ERROR_CODE_PROTOCOL_VIOLATION,
                   f"{f.detail}; a built-in bot plays seat {f.seat} to the end of this game")

    def _record_fault(self, f: Fault, policy: str) -> None:
        self._replay.fault(f, policy, self._decisions)

    def _play_action(self, seat: int, action: Any, request_id: int, think_us: int, fallback: bool = False) -> None:
        match = self.match
        assert match is not None
        happenings = match.apply(seat, action)
        self._decisions += 1
        think_ms = think_us // 1000
        for h in happenings:
            if isinstance(h, games.Acted):
                self._replay.add_action(seat, request_id, h.text, h.revealed, think_us,
                                        self.links[seat].substituted, self._clocks.shown(), fallback)
            if self._narrate(match, h, think_ms):
                return

    def _narrate(self, match: games.GameMatch, h: games.Happening, think_ms: int) -> bool:
        """Record ``h`` (unless an action: recorded by the caller), tell every seat and the
        spectators; True if the match ends with it (a game ended with a seat forfeited)."""
        self._replay.happening(h)
        tell = self.wire.tell
        event = isinstance(h, _EVENTS)  # told as an ``event``: not even built for the seats that want none
        for link in self.links:
            if event and not link.event_messages:
                continue
            told = tell(match, h, link.seat, think_ms, link.cache)
            if told is not None and (link.event_messages or told[0] != "event"):
                self._tell(link, bot_pb2.RefereeMessage(match_id=self.match_id, **{told[0]: told[1]}))
        self.spectator_log.add(self.wire.show(match, h, self.match_id, think_ms))
        if isinstance(h, games.GameOver):
            return self._game_ended(h)
        return False

    def _game_ended(self, h: games.GameOver) -> bool:
        for link in self.links:
            link.substituted = False  # the built-in bot plays to the end of the game only
        self._clocks.reset()
        if not self._faults.ends_after_game() or self.report is not None:
            return False
        first = self._faults.first
        assert first is not None
        self._finish(first.termination, first.seat, first.detail, ranking=h.ranking)
        return True

    def _end_by_fault(self, f: Fault) -> None:
        self._log.warning("seat_faulted", seat=f.seat, termination=f.termination, detail=f.detail)
        self._record_fault(f, "forfeit")
        match = self.match
        if match is not None and not match.is_over:
            for h in match.forfeit(self._faults.forfeited):
                self._narrate(match, h, 0)
        first = self._faults.first or f  # the match ends for the first seat that forfeited
        if self.report is None:
            self._finish(first.termination, first.seat, first.detail)

    def _places(self, ranking: games.Ranking | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The match's places and points, the forfeiting seats last."""
        n = len(self.links)
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
        self._replay.result(
            winner=winner, termination=termination, faulting=faulting, detail=detail, summary=summary,
            seed=self.operator_seed, nonces=self.nonces, substituted=sorted(self._faults.substituted),
            decisions=self._decisions, think_us=self._think, digests=self._digests.hexdigests(),
            messages=self._digests.told, fallbacks=self._fallbacks if any(self._fallbacks) else (),
        )
        self.state = state
        self.report = MatchReport(
            match_id=self.match_id, players=self.spec.players, winner=winner, termination=termination,
            faulting_seat=faulting, detail=detail, outcome=outcome,
            substituted_seats=tuple(sorted(self._faults.substituted)), seed=self._seed,
            seed_commitment=self.commitment, replay_path="", replay_hash=self._replay.last_hash,
            decisions=self._decisions, think_ms=tuple(t // 1000 for t in self._think),
            places=places, points=points, fallbacks=tuple(self._fallbacks) if any(self._fallbacks) else (),
        )
        self._open = None
        self._wake.set()
        result = self.match_result()
        if not self.spec.reveal_seed:  # another game is dealt from it (see MatchSpec.reveal_seed)
            result.ClearField("seed")
        for link in self.links:
            link.pending = 0
            link.open_request = None
            link.send(bot_pb2.RefereeMessage(match_id=self.match_id,
                                             match_finished=bot_pb2.MatchFinished(result=result)))
        self._public(match_finished=result)

    def match_result(self) -> Any:
        """The finished match's ``MatchResult`` message, with the seed revealed."""
        report = self.report
        assert report is not None
        return wire.match_result(report, self.operator_seed, self.nonces, self.game.result_fields(report.outcome),
                                 self.wire.game_results(report.outcome), self.spec.game)

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
        self._log.info(
            "match_finished", players=list(self.spec.players), winner=report.winner,
            termination=report.termination, faulting_seat=report.faulting_seat,
            **{**self.game.result_fields(report.outcome), "places": list(report.places)},
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
            link.cache = self.wire.new_seat_cache()
            link.open_request = None
        # A finished match stays listed (GetMatch, WatchMatch from the start) for a while.
        self.spectator_log.pack()

    def release(self) -> None:
        """The referee forgets the finished match: break the table's cycles (its links point
        back to it) so that its memory comes back at once, not at the next full collection."""
        assert self.over
        self.links = []

    def _tell(self, link: SeatLink, msg: bot_pb2.RefereeMessage) -> None:
        """Send a message of the match's story to a seat, adding it to that seat's digest (what
        ``arena audit`` re-derives). Resends after a reconnect, errors and rejections are not
        part of the story and go through ``link.send`` directly."""
        data = msg.SerializeToString(deterministic=True)
        self._digests.add(link.seat, data)
        if link.session is not None:
            link.session.send(data)

    def _public(self, **kind: Any) -> None:
        self.spectator_log.add(referee_pb2.SpectatorEvent(match_id=self.match_id, **kind).SerializeToString())
