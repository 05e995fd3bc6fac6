"""The bot process of a seat, started as its :class:`BotLaunch` says: run under trio in its own
process group, told the referee's address and its token, watched (an early exit is reported to
the match as a crash), its output appended to a log file, and always ended — at the end of its
match, on errors, on cancellation and on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import structlog
import trio

from ._hosts import HostedMatch, first
from ._launch import BotLaunch

log = structlog.get_logger("referee")

EXIT_GRACE_S = 3.0
"""How long a bot may take to exit by itself after its match ended."""
TERM_GRACE_S = 1.0
"""How long after SIGTERM before SIGKILL."""
MAX_LOG_BYTES_PER_PROCESS = 2 * 1024 * 1024
"""Output kept per process; beyond it the rest is read and dropped (so the bot never blocks)."""
OUTPUT_TAIL_BYTES = 8192
"""The end of a process's output kept in memory: what it printed last says which resource limit
it exceeded (a ``MemoryError``)."""


class SeatLog:
    """The log file of one process (appended unbuffered: processes of other matches may
    append to the same file); no file: nothing is kept."""

    def __init__(self, path: str) -> None:
        self.file: BinaryIO | None = None
        if path:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            self.file = open(path, "ab", buffering=0)  # noqa: SIM115 - closed by close()

    def note(self, text: str) -> None:
        if self.file is not None:
            self.file.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} === {text}\n".encode())

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


async def _pump(stream: trio.abc.ReceiveStream, out: BinaryIO, prefix: bytes, tail: bytearray | None = None) -> None:
    kept = 0
    pending = b""
    truncated = False
    try:
        async for chunk in stream:
            if tail is not None:
                tail += chunk
                del tail[:-OUTPUT_TAIL_BYTES]
            if truncated:
                continue
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if len(pending) > 4096:
                lines.append(pending)
                pending = b""
            data = b"".join(prefix + line + b"\n" for line in lines)
            kept += len(data)
            if kept > MAX_LOG_BYTES_PER_PROCESS:
                data += prefix + b"[output truncated: more than %d bytes]\n" % MAX_LOG_BYTES_PER_PROCESS
                truncated = True
            out.write(data)
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass
    finally:
        if pending and not truncated:
            out.write(prefix + pending + b"\n")


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def terminate(proc: trio.Process) -> None:
    """End a bot's process group: SIGTERM, then SIGKILL; also any process the bot left in its
    group after it exited. Safe to call under cancellation (shielded)."""
    with trio.CancelScope(shield=True):
        if proc.returncode is None:
            _signal_group(proc.pid, signal.SIGTERM)
            with trio.move_on_after(TERM_GRACE_S):
                await proc.wait()
            if proc.returncode is None:
                _signal_group(proc.pid, signal.SIGKILL)
                await proc.wait()
        _signal_group(proc.pid, signal.SIGKILL)


def ended_early(name: str, pid: int, code: int | None, launch: BotLaunch, output: bytes) -> str:
    """The fault's detail of a bot process that ended before its match did, with the resource
    limit it exceeded, if it shows."""
    detail = f"bot {name!r} (pid {pid}) {describe_exit(code)} before its match ended"
    if why := launch.limits.exceeded(code, output):
        return f"{detail}: {why}"
    return f"{detail} (limits: {launch.limits})" if launch.limits else detail


def describe_exit(code: int | None) -> str:
    """How a process ended, in words."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


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
    argv = sp.launch.argv(sp.address, sp.token, sp.name)
    label = f"{sp.match.match_id} seat {sp.seat}"
    shown = " ".join("***" if part == sp.token else part for part in argv)
    seat_log = SeatLog(sp.launch.log_path)
    with structlog.contextvars.bound_contextvars(bot=sp.name, seat=sp.seat):
        try:
            try:
                proc = await trio.lowlevel.open_process(
                    argv,
                    cwd=sp.launch.cwd or None,
                    env=sp.launch.environment(sp.address, sp.token, sp.name),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE if seat_log.file is not None else subprocess.DEVNULL,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as e:
                detail = f"bot {sp.name!r} could not be started: {e}"
                seat_log.note(f"{label}: {detail}")
                log.warning("bot_start_failed", detail=detail, argv=shown)
                sp.on_start_failed(detail)
                sp.match.crashed(sp.seat, detail)
                return "not started"
            sp.on_start(proc.pid)
            seat_log.note(f"{label}: pid {proc.pid}: {shown}")
            log.debug("bot_started", pid=proc.pid)
            try:
                return await _supervise(sp, proc, seat_log, label, settled)
            finally:
                await terminate(proc)
                if proc.stdout is not None:
                    with trio.CancelScope(shield=True):
                        await proc.stdout.aclose()
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
        with trio.move_on_after(1.0):  # the pipe closes once the group is gone
            await done_pumping.wait()
        nursery.cancel_scope.cancel()
    return how


async def _settle(proc: trio.Process, match: HostedMatch, seat: int, settled: trio.Event) -> None:
    await first(proc.wait, match.connected(seat).wait, match.finished.wait)
    settled.set()


async def pump_task(stream: trio.abc.ReceiveStream, out: BinaryIO, prefix: bytes, done: trio.Event,
                    tail: bytearray | None = None) -> None:
    try:
        await _pump(stream, out, prefix, tail)
    finally:
        done.set()


async def _watch(sp: SeatProcess, proc: trio.Process, seat_log: SeatLog, label: str, pumped: trio.Event,
                 tail: bytearray) -> str:
    match = sp.match
    ended_first = await first(proc.wait, match.finished.wait) == 0
    if ended_first and sp.launch.limits:
        with trio.move_on_after(1.0):  # its last words say which limit it exceeded
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
