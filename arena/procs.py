"""Bot processes: started under trio in their own process group, told the referee's address and
their token, watched (an early exit is reported to the referee as a crash), their output kept
in a log file per bot, and always ended — at the end of their match, on errors and on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import BinaryIO

import structlog
import trio

from .backend import MatchHandle
from .manifest import BotSpec

log = structlog.get_logger("arena")

EXIT_GRACE_S = 3.0
"""How long a bot may take to exit by itself after its match ended."""
TERM_GRACE_S = 1.0
"""How long after SIGTERM before SIGKILL."""
MAX_LOG_BYTES_PER_PROCESS = 2 * 1024 * 1024
"""Output kept per process; beyond it the rest is read and dropped (so the bot never blocks)."""


class BotLogs:
    """One log file per bot in the run folder (``logs/<bot>.log``): each line of a process's
    stdout and stderr, prefixed with its match and seat."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._files: dict[str, BinaryIO] = {}

    def file(self, bot: str) -> BinaryIO:
        f = self._files.get(bot)
        if f is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            f = open(self.folder / f"{bot}.log", "ab")  # noqa: SIM115 - kept open for the run
            self._files[bot] = f
        return f

    def note(self, bot: str, text: str) -> None:
        f = self.file(bot)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        f.write(f"{stamp} === {text}\n".encode())
        f.flush()

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()


async def _pump(stream: trio.abc.ReceiveStream, out: BinaryIO, prefix: bytes) -> None:
    kept = 0
    pending = b""
    truncated = False
    try:
        async for chunk in stream:
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
            out.flush()
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass
    finally:
        if pending and not truncated:
            out.write(prefix + pending + b"\n")
            out.flush()


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


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class BotRunner:
    """Starts and watches the bot processes of one run."""

    def __init__(
        self,
        logs: BotLogs,
        on_start: Callable[[int, str, str], object] | None = None,
        on_end: Callable[[int, object], None] | None = None,
    ) -> None:
        self.logs = logs
        self._on_start = on_start
        self._on_end = on_end

    async def run(
        self, handle: MatchHandle, seat: int, bot: BotSpec, address: str, token: str, settled: trio.Event
    ) -> str:
        """Run the bot of one seat until its match is over; returns how the process ended.
        ``settled`` is set once the start-up is over: the bot connected, ended or never started."""
        argv = bot.argv(address, token)
        label = f"{handle.match_id} seat {seat}"
        shown = " ".join("***" if part == token else part for part in argv)
        with structlog.contextvars.bound_contextvars(bot=bot.name, seat=seat):
            try:
                try:
                    proc = await trio.lowlevel.open_process(
                        argv,
                        cwd=bot.cwd or None,
                        env=bot.environment(address, token),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                except OSError as e:
                    detail = f"bot {bot.name!r} could not be started: {e}"
                    self.logs.note(bot.name, f"{label}: {detail}")
                    log.warning("bot_start_failed", detail=detail, argv=shown)
                    handle.crashed(seat, detail)
                    return "not started"
                ticket = self._on_start(proc.pid, handle.match_id, bot.name) if self._on_start else None
                self.logs.note(bot.name, f"{label}: pid {proc.pid}: {shown}")
                log.debug("bot_started", pid=proc.pid)
                done_pumping = trio.Event()
                try:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._pump_task, proc, bot, label, done_pumping)
                        nursery.start_soon(self._settle, proc, handle, seat, settled)
                        how = await self._watch(proc, handle, seat, bot, label)
                        with trio.move_on_after(1.0):  # the pipe closes once the group is gone
                            await done_pumping.wait()
                        nursery.cancel_scope.cancel()
                    return how
                finally:
                    await terminate(proc)
                    if proc.stdout is not None:
                        with trio.CancelScope(shield=True):
                            await proc.stdout.aclose()
                    if self._on_end is not None:
                        self._on_end(proc.pid, ticket)
            finally:
                settled.set()

    @staticmethod
    async def _settle(proc: trio.Process, handle: MatchHandle, seat: int, settled: trio.Event) -> None:
        await _first(proc.wait, handle.connected(seat).wait, handle.finished.wait)
        settled.set()

    async def _pump_task(self, proc: trio.Process, bot: BotSpec, label: str, done: trio.Event) -> None:
        assert proc.stdout is not None
        try:
            await _pump(proc.stdout, self.logs.file(bot.name), f"[{label}] ".encode())
        finally:
            done.set()

    async def _watch(
        self, proc: trio.Process, handle: MatchHandle, seat: int, bot: BotSpec, label: str
    ) -> str:
        ended_first = await _first(proc.wait, handle.finished.wait) == 0
        if ended_first and not handle.finished.is_set():
            detail = (
                f"bot {bot.name!r} (pid {proc.pid}) {describe_exit(proc.returncode)} before its match ended"
            )
            log.warning("bot_ended_early", pid=proc.pid, detail=detail)
            self.logs.note(bot.name, f"{label}: {detail}")
            handle.crashed(seat, detail)
        else:
            with trio.move_on_after(EXIT_GRACE_S):
                await proc.wait()
            if proc.returncode is None:
                log.info("bot_did_not_exit", pid=proc.pid, grace_s=EXIT_GRACE_S)
        await terminate(proc)
        how = describe_exit(proc.returncode)
        self.logs.note(bot.name, f"{label}: {how}")
        return how


async def _first(*waits: Callable[[], Awaitable[object]]) -> int:
    """Wait until the first of some waits returns; returns its index (the others are cancelled)."""
    winner = -1
    async with trio.open_nursery() as nursery:
        for i, fn in enumerate(waits):

            async def one(i: int = i, fn: Callable[[], Awaitable[object]] = fn) -> None:
                nonlocal winner
                await fn()
                if winner < 0:
                    winner = i
                nursery.cancel_scope.cancel()

            nursery.start_soon(one)
    return winner
