"""The bot process of a seat, started as its :class:`BotLaunch` says: run under trio in its own
process group, told the referee's address and its token, watched (an early exit is reported to
the match as a crash), its output appended to a log file, and always ended — at the end of its
match, on errors, on cancellation and on Ctrl-C."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog
import trio

from referee.play.hosts import HostedMatch, first
from referee.play.launch import BotLaunch
from referee.play.spawn import (
    EXIT_GRACE_S,
    PUMP_DRAIN_S,
    SeatLog,
    close_output,
    describe_exit,
    pump_task,
    shown_argv,
    start,
    terminate,
)

log = structlog.get_logger("referee")


def ended_early(name: str, pid: int, code: int | None, launch: BotLaunch, output: bytes) -> str:
    """The fault's detail of a bot process that ended before its match did, with the resource
    limit it exceeded, if it shows."""
    detail = f"bot {name!r} (pid {pid}) {describe_exit(code)} before its match ended"
    if why := launch.limits.exceeded(code, output):
        return f"{detail}: {why}"
    return f"{detail} (limits: {launch.limits})" if launch.limits else detail


@dataclass(frozen=True, slots=True)
class SeatProcess:
    """One seat's bot process to run: what to start and whom to tell."""

    match: HostedMatch
    seat: int
    launch: BotLaunch
    address: str
    """The referee's address the bot connects to."""
    token: str
    name: str
    """The bot's name (what it is told, and what the log says)."""
    on_start: Callable[[int], None]
    """Called with the pid once the process started."""
    on_end: Callable[[int], None]
    """Called with the pid once the process (and its group) ended."""
    on_crash: Callable[[str], None] = lambda detail: None
    """Called with what happened when the process ended before its match did."""
    on_start_failed: Callable[[str], None] = lambda detail: None
    """Called with why when the process could not be started."""


async def run_seat(sp: SeatProcess, settled: trio.Event) -> str:
    """Run the bot of one seat until its match is over; returns how the process ended.
    ``settled`` is set once the start-up is over: the bot connected, ended or never started."""
    label = f"{sp.match.match_id} seat {sp.seat}"
    seat_log = SeatLog(sp.launch.log_path)
    with structlog.contextvars.bound_contextvars(bot=sp.name, seat=sp.seat):
        try:
            try:
                proc = await start(sp.launch, sp.address, sp.token, sp.name, seat_log)
            except OSError as e:
                detail = f"bot {sp.name!r} could not be started: {e}"
                seat_log.note(f"{label}: {detail}")
                log.warning("bot_start_failed", detail=detail,
                            argv=shown_argv(sp.launch, sp.address, sp.token, sp.name))
                sp.on_start_failed(detail)
                sp.match.crashed(sp.seat, detail)
                return "not started"
            sp.on_start(proc.pid)
            seat_log.note(f"{label}: pid {proc.pid}: {shown_argv(sp.launch, sp.address, sp.token, sp.name)}")
            log.debug("bot_started", pid=proc.pid)
            try:
                return await _supervise(sp, proc, seat_log, label, settled)
            finally:
                await terminate(proc)
                await close_output(proc)
                sp.on_end(proc.pid)
        finally:
            settled.set()
            seat_log.close()


async def _supervise(sp: SeatProcess, proc: trio.Process, seat_log: SeatLog, label: str, settled: trio.Event) -> str:
    done_pumping = trio.Event()
    tail = bytearray()
    async with trio.open_nursery() as nursery:
        if proc.stdout is not None and seat_log.file is not None:
            nursery.start_soon(pump_task, proc.stdout, seat_log.file, f"[{label}] ".encode(), done_pumping,
                               tail if sp.launch.limits else None)
        else:
            done_pumping.set()
        nursery.start_soon(_settle, proc, sp.match, sp.seat, settled)
        how = await _watch(sp, proc, seat_log, label, done_pumping, tail)
        with trio.move_on_after(PUMP_DRAIN_S):  # the pipe closes once the group is gone
            await done_pumping.wait()
        nursery.cancel_scope.cancel()
    return how


async def _settle(proc: trio.Process, match: HostedMatch, seat: int, settled: trio.Event) -> None:
    await first(proc.wait, match.connected(seat).wait, match.finished.wait)
    settled.set()


async def _watch(sp: SeatProcess, proc: trio.Process, seat_log: SeatLog, label: str, pumped: trio.Event,
                 tail: bytearray) -> str:
    match = sp.match
    ended_first = await first(proc.wait, match.finished.wait) == 0
    if ended_first and sp.launch.limits:
        with trio.move_on_after(PUMP_DRAIN_S):  # its last words say which limit it exceeded
            await pumped.wait()
    detail = ended_early(sp.name, proc.pid, proc.returncode, sp.launch, bytes(tail))
    # A bot that exits on hearing MatchFinished wins the race with ``finished`` (set once the
    # replay is written): the match tells whether it was still being played.
    if ended_first and not match.finished.is_set() and match.crashed(sp.seat, detail):
        log.warning("bot_ended_early", pid=proc.pid, detail=detail)
        seat_log.note(f"{label}: {detail}")
        sp.on_crash(detail)
    elif not ended_first:
        with trio.move_on_after(EXIT_GRACE_S):
            await proc.wait()
        if proc.returncode is None:
            log.info("bot_did_not_exit", pid=proc.pid, grace_s=EXIT_GRACE_S)
    await terminate(proc)
    how = describe_exit(proc.returncode)
    seat_log.note(f"{label}: {how}")
    return how
