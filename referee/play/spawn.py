"""The one place a bot's process is started (``tests/test_structure.py`` checks that nothing else
starts one): a :class:`BotLaunch` run under trio in its own process group — its resource limits
applied before its program runs, told the referee's address, its name and its token (in
``GIN_TOKEN``; on its command line too unless ``BotLaunch.token_in_argv`` is off), with the TLS
material a remote referee asks for (``BotLaunch.env``: ``GIN_TLS``, ``GIN_CA``, …), its output
appended to its log file — and always ended, its whole group, by :func:`terminate` (its life
after the start, for every caller: :func:`watch`).

Its callers: a match's seat (``referee.play.procs``), a match context's reused processes
(``referee.play.pool``) — and through those every arena run, local or on a Dask worker — and,
through :func:`run_bot`, the bots of a match someone else plays: ``arena play``'s opponents and
the live web's computer players."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import BinaryIO

import structlog
import trio

from referee.play.hosts import first
from referee.play.launch import BotLaunch

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
PUMP_DRAIN_S = 1.0
"""How long the output of an ended process is still read (its pipe closes once its group is gone)."""


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


def shown_argv(launch: BotLaunch, address: str, token: str, name: str) -> str:
    """The command line a bot is started with, as a log shows it (its token as ``***``)."""
    return " ".join("***" if part == token else part for part in launch.argv(address, token, name))


async def start(launch: BotLaunch, address: str, token: str, name: str, seat_log: SeatLog,
                extra_env: Mapping[str, str] | None = None) -> trio.Process:
    """Start ``launch``'s program as the bot ``name`` with ``token`` at the referee ``address``:
    in its own process group (so that :func:`terminate` ends everything it started), under its
    limits, its stdout and stderr piped for ``seat_log`` (dropped without a file), its
    environment ``launch.environment(…)`` and ``extra_env``. ``OSError`` if it cannot start."""
    return await trio.lowlevel.open_process(
        launch.argv(address, token, name),
        cwd=launch.cwd or None,
        env={**launch.environment(address, token, name), **(extra_env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if seat_log.file is not None else subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


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


async def pump_task(stream: trio.abc.ReceiveStream, out: BinaryIO, prefix: bytes, done: trio.Event,
                    tail: bytearray | None = None) -> None:
    """Append a process's output to ``out``, each line after ``prefix`` (``tail``: keep its end
    there too); ``done`` is set when the output ends."""
    try:
        await _pump(stream, out, prefix, tail)
    finally:
        done.set()


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


async def watch(proc: trio.Process, seat_log: SeatLog, prefix: bytes, stop: Callable[[], Awaitable[object]],
                farewell: Callable[[int | None], str], *, tail: bytearray | None = None,
                exit_grace_s: float = 0.0) -> None:
    """The life of a started bot process, for every caller (:func:`run_bot`, the reused processes
    of :mod:`referee.play.pool`): its output appended to ``seat_log`` (each line after ``prefix``;
    ``tail``: its end kept there too) until ``stop()`` returns; then ``exit_grace_s`` to exit by
    itself, its group ended (:func:`terminate`) and its last output read (up to
    :data:`PUMP_DRAIN_S`). Always — on cancellation or an error too — its group is ended, its
    pipe closed, ``farewell(exit code)`` noted and the log closed."""
    pumped = trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            if proc.stdout is not None and seat_log.file is not None:
                nursery.start_soon(pump_task, proc.stdout, seat_log.file, prefix, pumped, tail)
            else:
                pumped.set()
            await stop()
            with trio.move_on_after(exit_grace_s):
                await proc.wait()
            await terminate(proc)
            with trio.move_on_after(PUMP_DRAIN_S):
                await pumped.wait()
            nursery.cancel_scope.cancel()
    finally:
        await terminate(proc)
        await close_output(proc)
        seat_log.note(farewell(proc.returncode))
        seat_log.close()


async def close_output(proc: trio.Process) -> None:
    """Close a process's output pipe (shielded: also under cancellation)."""
    if proc.stdout is not None:
        with trio.CancelScope(shield=True):
            await proc.stdout.aclose()


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


async def run_bot(launch: BotLaunch, address: str, token: str, until: trio.Event, *, label: str = "",
                  exit_grace_s: float = EXIT_GRACE_S,
                  task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> int | None:
    """Run one bot for a match that its caller plays and watches (a person's table at the live web,
    ``arena play``'s opponents): started as :func:`start` starts every bot (``launch.name`` is
    its name), its output in ``launch.log_path`` (each line after ``[label]``), until it exits
    or ``until`` is set; then it has ``exit_grace_s`` to exit by itself before its group is
    ended (at once on cancellation). ``task_status.started`` gets its pid (``nursery.start``:
    ``OSError`` there if it cannot start). Returns its exit code (negative: a signal's)."""
    name = launch.name
    seat_log = SeatLog(launch.log_path)
    label = label or name
    try:
        proc = await start(launch, address, token, name, seat_log)
    except OSError as e:
        seat_log.note(f"{label}: bot {name!r} could not be started: {e}")
        seat_log.close()
        raise
    seat_log.note(f"{label}: pid {proc.pid}: {shown_argv(launch, address, token, name)}")
    task_status.started(proc.pid)
    await watch(proc, seat_log, f"[{label}] ".encode(), lambda: first(proc.wait, until.wait),
                lambda code: f"{label}: {describe_exit(code)}", exit_grace_s=exit_grace_s)
    return proc.returncode
