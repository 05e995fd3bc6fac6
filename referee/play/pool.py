"""Reused bot processes: a match context's :class:`BotPool`, keyed by :class:`BotLaunch`
(it hashes). A reused process is started once with its own bot token and plays match after
match on one session (the referee attaches each new match with that token to the live
session); a match checks one out, so a process plays one match at a time. A process is
replaced when its launch's ``restart`` says so (``after:N``), after it crashed or faulted in a
match, and when its memory exceeds ``max_rss_mb``. The pool also counts every launch's crashes
(reused or not): a bot whose process cannot be started, or that crashed more than
:data:`MAX_CRASHES` times, gets no more matches (:class:`BotFailed`)."""

from __future__ import annotations

import contextlib
import math
import os
import resource
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
import trio

from referee.model.spec import MatchReport
from referee.play.hosts import HostedMatch, first
from referee.play.launch import BotLaunch, restart_after
from referee.play.procs import ended_early
from referee.play.spawn import SeatLog, describe_exit, shown_argv, start, terminate, watch

log = structlog.get_logger("referee")

MAX_CRASHES = 3
"""A bot whose processes crashed more often than this (fishtest's limit) gets no more matches."""


class BotFailed(RuntimeError):
    """A bot gets no more matches: its process could not be started, or crashed more than
    :data:`MAX_CRASHES` times. Raised by a match context's ``play`` before the match is made."""

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"bot {name!r} gets no more games: {detail}")
        self.name = name
        self.detail = detail

    def __reduce__(self) -> tuple[type[BotFailed], tuple[str, str]]:
        return BotFailed, (self.name, self.detail)  # (pickled whole: from a Dask worker to the arena)


@dataclass(eq=False, slots=True)
class ReusedProcess:
    """One reused process (mutable state of the pool, not a value)."""

    launch: BotLaunch
    token: str
    name: str
    proc: trio.Process | None = None
    ended: trio.Event = field(default_factory=trio.Event)
    games: int = 0
    on_end: Callable[[int], None] = lambda pid: None
    tail: bytearray = field(default_factory=bytearray)
    """The end of its output (what it printed last says which resource limit it exceeded)."""

    @property
    def alive(self) -> bool:
        return self.proc is not None and not self.ended.is_set()


def rss_mb(pid: int) -> float:
    """The resident memory of a process in MiB (0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def cpu_seconds_used(pid: int) -> float:
    """The CPU time a process has used so far (user and system; 0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def renew_cpu_limit(pid: int, cpu_seconds: int) -> None:
    """Give a reused process ``cpu_seconds`` more CPU time (its soft ``RLIMIT_CPU``) for its next
    match; nothing without a limit."""
    if not cpu_seconds:
        return
    soft = math.ceil(cpu_seconds_used(pid)) + cpu_seconds
    with contextlib.suppress(OSError, ValueError):  # (it may have just ended)
        resource.prlimit(pid, resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


class BotPool:
    """The reused bot processes of one match context (see the module's docstring)."""

    def __init__(self, nursery: trio.Nursery | None, address: str) -> None:
        self._nursery = nursery
        self.reuses = nursery is not None
        """Whether the pool keeps processes (without a nursery to run them in it only counts crashes)."""
        self._address = address
        self._idle: dict[BotLaunch, list[ReusedProcess]] = {}
        self.starts: Counter[BotLaunch] = Counter()
        """Processes started, by launch (reused launches only)."""
        self.crashes: Counter[BotLaunch] = Counter()
        """Crashes (an exit before the match ended), by launch."""
        self.failed: dict[BotLaunch, str] = {}
        """Launches that get no more matches, with why."""

    def check(self, launch: BotLaunch, name: str) -> None:
        """Raise :class:`BotFailed` if ``launch`` gets no more matches."""
        if launch in self.failed:
            raise BotFailed(launch.name or name, self.failed[launch])

    def crashed(self, launch: BotLaunch, detail: str) -> None:
        """A process of ``launch`` ended before its match did."""
        self.crashes[launch] += 1
        n = self.crashes[launch]
        if n > MAX_CRASHES and launch not in self.failed:
            self.failed[launch] = f"its process crashed {n} times (more than {MAX_CRASHES}); the last time: {detail}"
            log.error("bot_failed", bot=launch.name, detail=self.failed[launch])

    def start_failed(self, launch: BotLaunch, detail: str) -> None:
        """A process of ``launch`` could not be started at all (it never will be)."""
        self.failed.setdefault(launch, detail)
        log.error("bot_failed", bot=launch.name, detail=detail)

    def checkout(self, launch: BotLaunch, name: str) -> ReusedProcess:
        """A live idle process of ``launch``, or a new one (started by :meth:`serve`)."""
        idle = self._idle.get(launch, [])
        while idle:
            p = idle.pop()
            if p.alive:
                assert p.proc is not None
                renew_cpu_limit(p.proc.pid, launch.limits.cpu_seconds)
                return p
        return ReusedProcess(launch, secrets.token_hex(24), launch.name or name)

    async def serve(self, p: ReusedProcess, match: HostedMatch, seat: int, on_start: Callable[[int], None],
                    on_end: Callable[[int], None], settled: trio.Event) -> str:
        """Play ``seat`` of ``match`` on ``p`` (started first if new) until the match is over;
        returns how the process is (``kept``, or how it ended)."""
        try:
            if p.proc is None:
                assert self._nursery is not None, "checkout() of a pool that reuses nothing"
                try:
                    await self._nursery.start(self._run, p, f"{match.match_id} seat {seat}")
                except OSError as e:
                    detail = f"bot {p.name!r} could not be started: {e}"
                    self.start_failed(p.launch, detail)
                    match.crashed(seat, detail)
                    return "not started"
                assert p.proc is not None
                on_start(p.proc.pid)
                p.on_end = on_end
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_settle, p, match, seat, settled)
                ended_first = await first(p.ended.wait, match.finished.wait) == 0
                nursery.cancel_scope.cancel()
        finally:
            settled.set()
        assert p.proc is not None
        if ended_first and not match.finished.is_set():
            detail = ended_early(p.name, p.proc.pid, p.proc.returncode, p.launch, bytes(p.tail))
            if match.crashed(seat, detail):
                log.warning("bot_ended_early", pid=p.proc.pid, detail=detail)
                self.crashed(p.launch, detail)
        return describe_exit(p.proc.returncode) if p.ended.is_set() else f"kept running (pid {p.proc.pid})"

    def checkin(self, p: ReusedProcess, seat: int, report: MatchReport | None) -> None:
        """A match of ``p`` is over (``report``: how, ``None`` if it was cancelled): keep the
        process for the next match, or end it."""
        p.games += 1
        if not p.alive:
            return
        assert p.proc is not None
        limit = restart_after(p.launch.restart)
        why = ""
        if report is None:
            why = "its match was cancelled"
        elif report.faulting_seat == seat or seat in report.substituted_seats:
            why = f"it faulted ({report.termination})"
        elif limit is not None and p.games >= limit:
            why = f"it played {p.games} games (restart = {p.launch.restart})"
        elif p.launch.max_rss_mb and (rss := rss_mb(p.proc.pid)) > p.launch.max_rss_mb:
            why = f"its memory ({rss:.0f} MiB) exceeds max_rss_mb = {p.launch.max_rss_mb}"
        if why:
            log.info("bot_restart", bot=p.name, pid=p.proc.pid, reason=why)
            assert self._nursery is not None
            self._nursery.start_soon(terminate, p.proc)
            return
        self._idle.setdefault(p.launch, []).append(p)

    async def _run(self, p: ReusedProcess, label: str, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                   ) -> None:
        """Start ``p``'s process, keep its output, and end it when it exits or the pool closes."""
        launch = p.launch
        seat_log = SeatLog(launch.log_path)
        try:
            proc = await start(launch, self._address, p.token, p.name, seat_log, {"GIN_MATCHES": "0"})
        except OSError:
            seat_log.close()
            raise
        p.proc = proc
        self.starts[launch] += 1
        shown = shown_argv(launch, self._address, p.token, p.name)
        seat_log.note(f"{label}: pid {proc.pid} (reused for match after match): {shown}")
        log.debug("bot_started", pid=proc.pid, bot=p.name, reused=True)
        task_status.started()
        try:
            await watch(proc, seat_log, f"[{p.name} pid {proc.pid}] ".encode(), proc.wait,
                        lambda code: f"pid {proc.pid} after {p.games} game(s): {describe_exit(code)}",
                        tail=p.tail if launch.limits else None)
        finally:
            p.ended.set()
            p.on_end(proc.pid)


async def _settle(p: ReusedProcess, match: HostedMatch, seat: int, settled: trio.Event) -> None:
    await first(p.ended.wait, match.connected(seat).wait, match.finished.wait)
    settled.set()
