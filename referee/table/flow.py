"""One match at the table: the trio supervisor of the match flow, for any game and any number
of seats.

A :class:`Table` owns one match. Its truth and every rule of its course are the match flow's
(:class:`~referee.table.match_flow.MatchFlow`, plain synchronous code: inputs in, outputs out);
the table is what runs it under trio. Seats talk to it through their
:class:`~referee.table.seats.SeatLink`; the table hands each answer, reconnect or disconnect to
the flow at once, inside the transport's call (a decision never waits for trio's scheduler),
then delivers the flow's outputs: the bytes to each seat's session, the spectators' events, the
log lines. The match's trio task (:meth:`Table.run`) waits for the seats, then sleeps until the
flow's deadline or an alert and tells the flow the time; it writes the replay when the match ends.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from gin_arena.v2 import bot_pb2
from referee import games
from referee.model.spec import MatchReport, MatchSpec
from referee.table.faults import Fault
from referee.table.match_flow import ASKING, MAX_STRAY_MESSAGES, PLAIN, MatchFlow, Outbox, TableState
from referee.table.recording import MatchRecorder
from referee.table.seat_clock import (
    CPU_CLOCK_WALL_FACTOR,
    TICK_S,
    CpuSample,
    LoopStalls,
    charged_s,
    loop_stalls,
    process_tree_cpu_s,
)
from referee.table.seats import SeatLink, Session
from referee.table.spectators import Sink, SpectatorLog

__all__ = ["MAX_STRAY_MESSAGES", "Fault", "SeatLink", "Session", "Table", "TableState"]

log = structlog.get_logger("referee")


class _Quiet:
    """A logger that says nothing (for re-runs of recorded matches)."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *a, **k: None


def _unused(at: float) -> None:
    """An ``on_written`` that needs not know when the message was written."""


_Input = tuple[Callable[..., None], tuple[Any, ...]]


class _TrioTime:
    """Trio's clock as it is (a re-run of a recorded match: its times are the record's)."""

    def now(self) -> float:
        """Trio's time."""
        return trio.current_time()

    def fair(self, real: float) -> float:
        """The same moment."""
        return real

    def real(self, fair: float) -> float:
        """The same moment."""
        return fair

_SET = trio.Event()
_SET.set()
"""One trio event that is set, shared: what a finished match's spent events become (a trio
event is ~270 bytes, and the referee keeps ``finished_matches`` finished matches listed)."""


class _Over:
    """What the seat links of a released table report to instead of it: a match that is over
    (a session that attaches is told so; there is nothing else to report)."""

    __slots__ = ("game_name", "match_id")

    over = True

    def __init__(self, match_id: str, game_name: str) -> None:
        self.match_id = match_id
        self.game_name = game_name

    def seat_connected(self) -> None:
        """Nothing to start."""

    def seat_reconnected(self, link: SeatLink) -> None:
        """Never (the link refuses a session: the match is over)."""

    def seat_disconnected(self, link: SeatLink, detail: str) -> None:
        """Nothing to tell."""

    def seat_answered(self, link: SeatLink, response: bot_pb2.ActionResponse, at: float) -> None:
        """Nothing to answer."""

    def alert(self, fault: Fault) -> None:
        """Nothing to fault."""


class Table:
    """One match: created from a :class:`MatchSpec`, run by :meth:`run` in a nursery."""

    def __init__(
        self, spec: MatchSpec, replay_dir: Path | None, on_finish: Callable[[Table], None], *, quiet: bool = False,
        on_start: Callable[[Table], None] | None = None,
        cpu_time: Callable[[int], CpuSample | None] = process_tree_cpu_s,
    ) -> None:
        """``quiet``: a re-run of a recorded match (no log lines, and trio's clock as it is:
        the record's times are already the charged ones). ``cpu_time``: a process tree's CPU
        seconds and seconds waited for a CPU by its leader's pid, for the seats whose bot process
        is known (:meth:`bot_process`)."""
        self.spec = spec
        self._quiet = quiet
        self._time: LoopStalls | _TrioTime | None = None  # on first use (in the trio run)
        self._cpu_time = cpu_time
        n = len(spec.players)
        self._pids: list[int | None] = [None] * n  # each seat's bot process (its CPU time is its clock)
        self._cpu_at: list[tuple[int, CpuSample] | None] = [None] * n  # (request id, CPU times when it was written)
        self._cpu_timed = [False] * n  # a decision of the seat was charged by its CPU time
        self._log: Any = _Quiet() if quiet else log
        self.match_id = spec.match_id or secrets.token_hex(8)
        self.game_name = spec.game
        self.operator_seed = spec.seed if spec.seed is not None else secrets.token_bytes(32)
        self.replay_dir = replay_dir
        self._replay = MatchRecorder()
        self.flow = MatchFlow(spec, self.match_id, self.operator_seed, self._replay,
                              self._open_journal if replay_dir is not None else None)
        """The match itself (the table runs it)."""
        self.wire = self.flow.wire
        self.commitment = self.flow.commitment
        # 192-bit seat tokens in hex: never starting with "-", which a bot's argument parser
        # would take for an option (`--token -x…`).
        tokens = spec.seat_tokens or tuple(secrets.token_hex(24) for _ in spec.players)
        self.links = [SeatLink(self, s, t, name, self.flow.seats[s])
                      for s, (t, name) in enumerate(zip(tokens, spec.players, strict=True))]
        self.finished = trio.Event()
        self.spectator_log = SpectatorLog()
        self.cancel_scope = trio.CancelScope()
        self._on_finish = on_finish
        self._on_start = on_start
        self._changed = trio.Event()
        self._inputs: list[_Input] = []  # (a list: it rarely holds one, and a deque is 600 bytes empty)
        self._busy = False
        self._wake = trio.Event()  # the supervisor's: an alert to apply, or the match ended
        self._timer: trio.CancelScope | None = None  # the supervisor's sleep, until the flow's deadline
        self._handed_over = False  # the match is over and the referee keeps its record, not this table

    # ----- the match's state (the flow's) -----
    @property
    def game(self) -> games.Game:
        """The game played (``referee.games.Game``)."""
        return self.flow.game

    @game.setter
    def game(self, value: games.Game) -> None:
        self.flow.game = value

    @property
    def state(self) -> TableState:
        """Where the match is: waiting, running, finished, aborted, interrupted."""
        return self.flow.state

    @state.setter
    def state(self, value: TableState) -> None:
        self.flow.state = value

    @property
    def report(self) -> MatchReport | None:
        """The match's report, once it has ended."""
        return self.flow.report

    @report.setter
    def report(self, value: MatchReport | None) -> None:
        self.flow.report = value

    @property
    def nonces(self) -> list[bytes]:
        """The seats' nonces (known once the match began)."""
        return self.flow.nonces

    @nonces.setter
    def nonces(self, value: list[bytes]) -> None:
        self.flow.nonces = value

    @property
    def match(self) -> Any:
        """The game's match (``None`` before it began)."""
        return self.flow.match

    @property
    def over(self) -> bool:
        """Whether the match has finished or was aborted."""
        return self.flow.over

    @property
    def connected(self) -> tuple[bool, ...]:
        """Whether each seat has a live session now."""
        return tuple(link.session is not None for link in self.links)

    def spectator_presentation(self) -> dict[str, Any] | None:
        """The game's presentation of the spectator's view now (``{N}`` not yet named); ``None``
        before the first deal or for a game without a presentation."""
        match = self.flow.match
        presentation = games.get(self.spec.game).presentation
        if match is None or presentation is None:
            return None
        return presentation.present(presentation.match_view(match, games.SPECTATOR))

    @property
    def asking(self) -> SeatLink | None:
        """The seat with the open request, if any."""
        s = self.flow.asking
        return self.links[s.seat] if s is not None else None

    # ----- the seats' clocks -----
    @property
    def clock(self) -> LoopStalls | _TrioTime:
        """The clock the match is timed by: the loop's without its stalls (a stall of the
        referee's own loop is never charged to a seat), or trio's as it is for a re-run."""
        if self._time is None:
            self._time = _TrioTime() if self._quiet else loop_stalls()
        return self._time

    def bot_process(self, seat: int, pid: int) -> None:
        """``seat``'s bot runs as process ``pid`` on this machine (it leads its process group):
        from its next request the seat is timed by its process tree's CPU time (see
        :mod:`referee.table.seat_clock`)."""
        self._pids[seat] = pid
        self._cpu_at[seat] = None

    @property
    def seat_clocks(self) -> tuple[str, ...]:
        """Which clock timed each seat: ``cpu`` (its bot's CPU time, for at least one of its
        decisions) or ``wall`` (the referee's loop's clock without its stalls)."""
        return tuple("cpu" if c else "wall" for c in self._cpu_timed)

    def _written(self, seat: int, request_id: int, at: float) -> None:
        """A request was written (``at``: trio's clock): the seat's clock runs from then."""
        pid = self._pids[seat]
        if pid is not None:
            cpu = self._cpu_time(pid)
            self._cpu_at[seat] = (request_id, cpu) if cpu is not None else None
        self.flow.written(seat, request_id, self.clock.fair(at))

    def _cpu_used(self, seat: int, request_id: int) -> CpuSample | None:
        """CPU seconds ``seat``'s bot used since its request ``request_id`` was written, the
        seconds it waited for a CPU meanwhile, and whether it is runnable now (``None``: not
        timed by CPU)."""
        pid, start = self._pids[seat], self._cpu_at[seat]
        if pid is None or start is None or start[0] != request_id:
            return None
        now = self._cpu_time(pid)
        if now is None:
            return None
        return max(0.0, now[0] - start[1][0]), max(0.0, now[1] - start[1][1]), now[2]

    def _extend_by_cpu(self, now: float) -> None:
        """The open request's wall deadline passed: if its bot is timed by CPU and has not used
        its time, push the deadline on (to the most its wall time may take)."""
        flow = self.flow
        s = flow.asking
        if s is None or not s.online or flow.alerted or now < s.deadline(self.spec.reconnect_grace_ms):
            return
        sample = self._cpu_used(s.seat, s.pending)
        if sample is None:
            return
        used, waited, runnable = sample
        limit = s.limit_ms / 1000
        cap = s.sent_at + limit * CPU_CLOCK_WALL_FACTOR + waited  # (waiting for a CPU is not the bot's doing)
        # (a thread runnable now may be waiting for a CPU: a wait under way is not in ``waited`` yet)
        charged = used if runnable else charged_s(now - s.sent_at, used, waited)
        if charged < limit and now < cap:
            flow.extend(s.seat, s.pending, min(cap, now + max(limit - charged, TICK_S)))

    # ----- what the seats' links report (``_seats.SeatOwner``) -----
    def seat_connected(self) -> None:
        """A seat's first session arrived: the match may start."""
        for link in self.links:
            s = link.state
            if link.connected.is_set() and not s.connected:
                self.flow.connected(link.seat, link.nonce, link.bot_name, link.event_messages)
        self._changed.set()

    def seat_reconnected(self, link: SeatLink) -> None:
        """A seat's session came back."""
        self._handle(self.flow.reconnect, link.seat, self.clock.now())

    def seat_disconnected(self, link: SeatLink, detail: str) -> None:
        """A seat's session ended."""
        if self._handed_over:  # the referee keeps a record now: the table goes with its last session
            self._release_when_alone()
            return
        self._handle(self.flow.disconnect, link.seat, detail, self.clock.now())

    def seat_answered(self, link: SeatLink, response: bot_pb2.ActionResponse, at: float) -> None:
        """An answer from a seat, handled now (``at``: trio's clock when it was read)."""
        seat = link.seat
        cpu = self._cpu_used(seat, response.request_id) if self._pids[seat] is not None else None
        fair = self.clock.fair(at)
        cpu_us = -1
        if cpu is not None:  # (it answered: it ran since its last wait, which ``schedstat`` has counted)
            cpu_us = round(charged_s(fair - self.flow.seats[seat].sent_at, cpu[0], cpu[1]) * 1_000_000)
            self._cpu_timed[seat] = True
        self._handle(self.flow.answer, seat, response.request_id, response.action, response.fallback, fair, cpu_us)

    # ----- operator side -----
    def alert(self, fault: Fault) -> None:
        """A fault that does not wait for the seat's turn (its process died)."""
        if self.over:
            return
        self.flow.alert(fault)
        self._changed.set()
        self._wake.set()

    def cancel(self, reason: str) -> None:
        """Abort the match (operator's decision)."""
        self.flow.cancel(reason)  # no step runs from now on (cheaper to ask than the scope)
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
                await self._play()
            if self.report is None:  # cancelled
                self.flow.abort("aborted")
                self._deliver(self.flow.take())
        except Exception as e:  # a bug of ours: the match ends, the server lives on
            self._log.exception("match_internal_error")
            if self.report is None:
                self.flow.fail(e)
                self._deliver(self.flow.take())
        try:
            await self._persist()
        finally:
            bound.__exit__(None, None, None)
        assert self.report is not None
        return self.report

    async def _connect(self) -> None:
        """Wait for the seats (until the connect timeout, or an alert)."""
        with trio.move_on_after(self.spec.connect_timeout_ms / 1000):
            while not all(link.connected.is_set() for link in self.links) and not self.flow.alerted:
                self._changed = trio.Event()
                await self._changed.wait()

    async def _play(self) -> None:
        await self._connect()
        self._handle(self.flow.start, self.clock.now())
        if self._on_start is not None and self.flow.match is not None:  # the match began
            self._on_start(self)
        await self._supervise()

    def _open_journal(self, nonces: list[bytes]) -> None:
        """Journal every record of the replay from its first (the flow asks before it)."""
        assert self.replay_dir is not None
        try:
            self._replay.start_journal(self.replay_dir, self.match_id, self.operator_seed, nonces)
        except OSError as e:  # the replay is then kept in memory and written at the end
            self._log.error("journal_open_failed", error=str(e))

    def _handle(self, step: Callable[..., None], *args: Any) -> None:
        """Hand one input to the flow now, or right after the one that is running (a session
        may answer from inside ``send``), and deliver what it produced."""
        if self._busy:
            self._inputs.append((step, args))
            return
        self._busy = True
        flow = self.flow
        try:
            self._step(step, args)
            inputs = self._inputs
            while inputs:
                step, args = inputs.pop(0)
                self._step(step, args)
        finally:
            self._busy = False
        if flow.report is not None or flow.alerted:
            self._wake.set()
            if flow.broken:
                self.cancel_scope.cancel()
        else:
            timer = self._timer  # bring the supervisor's wake-up forward (a later one it finds when it wakes)
            if timer is not None:
                deadline = self.clock.real(flow.deadline)
                if deadline < timer.deadline:
                    timer.deadline = deadline

    def _step(self, step: Callable[..., None], args: tuple[Any, ...]) -> None:
        flow = self.flow
        out = flow.out  # delivered, then emptied: an input that arrives meanwhile waits in _inputs
        try:
            step(*args)
            self._deliver(out)
            out.clear()
        except Exception as e:  # a bug of ours (delivering): this match ends, the server lives on
            out.clear()
            self._log.exception("match_internal_error")
            try:
                flow.fail(e)
                self._deliver(flow.take())
            except Exception:  # the finish itself failed: the supervisor ends the match
                self._log.exception("match_internal_error")
                flow.broken = True

    def _deliver(self, out: Outbox) -> None:
        """Send the flow's outputs: messages to the seats' sessions, closes, spectators' events,
        log lines."""
        if out.logs:
            self._write_logs(out)
        links = self.links
        for seat, data, ask in out.sends:
            session = links[seat].session
            if session is None:
                continue
            if ask == PLAIN:
                session.send(data)
            elif ask == ASKING:
                session.send(data, _unused)
            else:
                session.send(data, partial(self._written, seat, ask))  # its clock runs from then
        for seat, code, detail in out.closes:
            session = links[seat].session
            if session is not None:
                session.close(code, detail)
        add = self.spectator_log.add
        for data in out.public:
            add(data)

    def _write_logs(self, out: Outbox) -> None:
        for e in out.logs:
            if e.error is not None:
                self._log.error(e.event, exc_info=e.error, **e.fields)
            else:
                getattr(self._log, e.level)(e.event, **e.fields)

    async def _supervise(self) -> None:
        """Sleep until the flow's deadline or an alert; tell the flow the time; until the match
        has a result. Decisions never pass through here."""
        flow = self.flow
        clock = self.clock
        while self.report is None:
            self._wake = trio.Event()
            with trio.move_on_at(clock.real(flow.deadline)) as timer:
                self._timer = timer
                await self._wake.wait()
            self._timer = None
            now = clock.now()
            self._extend_by_cpu(now)
            self._handle(flow.timeout, now)

    def match_result(self) -> Any:
        """The finished match's ``MatchResult`` message, with the seed revealed."""
        return self.flow.match_result()

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
            decisions=self.flow.decisions, seat_clocks=list(self.seat_clocks), replay=path,
            replay_hash=report.replay_hash, detail=report.detail,
        )
        self._match_data_done()
        self.finished.set()
        self.finished = _SET  # (whoever waited has been woken; later waits return at once)
        self._on_finish(self)

    def _match_data_done(self) -> None:
        """Drop what a finished match no longer needs (its replay lines are on disk)."""
        if self.report is not None and self.report.replay_path:
            self._replay.clear()
        for s in self.flow.seats:
            s.cache = self.wire.new_seat_cache()
            s.open_request = None
        # A finished match stays listed (GetMatch, WatchMatch from the start) for a while.
        self.spectator_log.pack()
        self._changed = self._wake = _SET  # nobody waits on them any more
        for link in self.links:
            if link.connected.is_set():
                link.connected = _SET

    def hand_over(self) -> None:
        """The referee keeps the finished match's record (``referee.table.finished``) and no
        longer this table: once no session is attached to a seat (at once, usually; else when
        the last one ends), break the table's cycles (its links point back to it) so that its
        memory comes back by reference counting, not at the next full collection."""
        assert self.over
        self._handed_over = True
        self._release_when_alone()

    def _release_when_alone(self) -> None:
        if all(link.session is None for link in self.links):
            self.release()

    def release(self) -> None:
        """Break the finished table's cycles: its seat links point to a stand-in that says the
        match is over instead of back to it (whoever still holds the table, a host's handle or
        the web's table, reads its links, report, match and spectator log as before)."""
        assert self.over
        gone = _Over(self.match_id, self.game_name)
        for link in self.links:
            link.table = gone
