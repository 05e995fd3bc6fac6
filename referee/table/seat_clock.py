"""What a seat's decision is charged: time the machine's faults are not part of.

Two sources of lost time are the host's, not the bot's, and neither is charged to a seat:

- **A stall of the referee's own loop.** The referee timestamps each request when it is written
  and each answer when it is read, on its event loop. When that loop is late (a busy host, a
  long step of another match, a web request hashing a password, the process descheduled), the
  answer waits in the socket and the stamp comes late. :class:`LoopStalls` is a ticker on the
  loop that should wake every :data:`TICK_S`: every moment it wakes later than that (beyond
  :data:`TICK_SLACK_S`) is a stall, and :meth:`LoopStalls.now` is a clock that stands still
  during stalls — the time the referee hands its matches (``MatchFlow``'s ``now``). A stall in
  progress counts at once (the ticker has not woken yet, but it is overdue).
- **A bot starved of the CPU.** On a loaded host a bot that needs 0.4 s of CPU may take 2 s of
  wall time. Where the referee started the bot itself on this machine and can read its process
  tree's CPU time (Linux ``/proc``: :func:`process_tree_cpu_s`), a decision is charged its
  (stall-free) wall time less the time the tree's threads waited for a CPU (``/proc``'s
  ``schedstat``: runnable, not running), never less than the CPU time it used
  (:func:`charged_s`): a bot that sleeps or waits on another machine is charged that time, as on
  the wall clock, one starved of a CPU is not charged the starving. Its deadline is pushed on
  while that charge (or, while one of its threads is runnable now, whose wait under way
  ``schedstat`` has not counted yet, its CPU time) is under its time — up to
  :data:`CPU_CLOCK_WALL_FACTOR` times the decision's time in wall time plus the time it waited
  for a CPU. Remote bots (hosted,
  another machine) are timed by the wall clock (stall-free).

Each seat's clock is named in the match's log (``match_finished``'s ``seat_clocks``: ``cpu`` or
``wall``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import trio

__all__ = ["CPU_CLOCK_WALL_FACTOR", "TICK_S", "TICK_SLACK_S", "CpuSample", "LoopStalls", "charged_s",
           "cpu_clock_available",
           "loop_stalls", "process_tree_cpu_s"]

CpuSample = tuple[float, float, bool]
"""A process tree's CPU seconds, the seconds its threads waited for a CPU (runnable, not
running), and whether one of its threads is runnable now (running, or waiting for a CPU: a wait
under way is not in the seconds yet, ``schedstat`` adds it when the thread next runs)."""

TICK_S = 0.02
"""How often the stall ticker should wake (seconds)."""

TICK_SLACK_S = 0.005
"""Lateness of the ticker that is ordinary scheduling, not a stall (seconds)."""

CPU_CLOCK_WALL_FACTOR = 4
"""Under the CPU clock, the wall time a decision may take, as a multiple of its time (allowance
plus margin), not counting the time its bot waited for a CPU: past it the seat loses on time
however little CPU it used (a bot that sleeps or waits on something else must not hold a match
for ever)."""

PROCESS_TREE_MAX = 64
"""Processes of one bot's tree read for its CPU time (a bot that forks more is charged for the
first this many found)."""

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")


class LoopStalls:
    """The stalls of the event loop it runs on, and a clock without them (see the module)."""

    __slots__ = ("_due", "_real", "stalled_s", "worst_s")

    def __init__(self, real: Callable[[], float] = trio.current_time) -> None:
        self._real = real
        self._due = real() + TICK_S
        self.stalled_s = 0.0
        """Stall time seen so far (seconds), the one in progress not included."""
        self.worst_s = 0.0
        """The longest single stall so far (seconds)."""

    def _overdue(self, real: float) -> float:
        return max(0.0, real - self._due - TICK_SLACK_S)

    def now(self) -> float:
        """The loop's clock without its stalls (seconds on trio's clock's scale)."""
        real = self._real()
        return real - self.stalled_s - self._overdue(real)

    def fair(self, real: float) -> float:
        """A moment of trio's clock read just now (a transport's stamp) on :meth:`now`'s scale."""
        now = self._real()
        return min(real, now) - (now - self.now())

    def real(self, fair: float) -> float:
        """A moment of :meth:`now`'s scale on trio's clock, as if no stall came before it (when
        to wake for a deadline; a stall meanwhile makes the wake early, and the sleeper sleeps
        again)."""
        now = self._real()
        return fair + (now - self.now())

    def tick(self) -> None:
        """The ticker woke: its lateness beyond the slack is a stall."""
        real = self._real()
        late = self._overdue(real)
        if late > 0:
            self.stalled_s += late
            self.worst_s = max(self.worst_s, late)
        self._due = real + TICK_S

    async def run(self) -> None:
        """The ticker (runs until cancelled)."""
        while True:
            await trio.sleep_until(self._due)
            self.tick()


_STALLS: trio.lowlevel.RunVar[LoopStalls] = trio.lowlevel.RunVar("gin_arena_loop_stalls")


def loop_stalls() -> LoopStalls:
    """The running trio run's :class:`LoopStalls` (its ticker started as a system task on first
    use: one per run, whatever number of matches)."""
    try:
        return _STALLS.get()
    except LookupError:
        stalls = LoopStalls()
        _STALLS.set(stalls)
        trio.lowlevel.spawn_system_task(stalls.run, name="referee-loop-stalls")
        return stalls


def cpu_clock_available() -> bool:
    """Whether this platform lets the referee read a process tree's CPU time (Linux ``/proc``)."""
    return sys.platform.startswith("linux") and (_PROC / "self" / "stat").exists()


def _one_process(pid: int) -> tuple[float, float, bool, list[int]] | None:
    """A process's CPU seconds (its own and its reaped children's), the seconds its threads
    waited for a CPU, whether one of its threads is runnable now, and its live children."""
    base = _PROC / str(pid)
    try:
        stat = (base / "stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after the last ")".
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    except ValueError:
        return None
    children: list[int] = []
    waited_ns = 0
    runnable = False
    try:
        for task in (base / "task").iterdir():
            try:
                waited_ns += int((task / "schedstat").read_bytes().split()[1])
                children.extend(int(c) for c in (task / "children").read_bytes().split())
                task_stat = (task / "stat").read_bytes()
                runnable = runnable or task_stat[task_stat.rfind(b")") + 2:task_stat.rfind(b")") + 3] == b"R"
            except (OSError, IndexError, ValueError):
                continue
    except OSError:
        pass
    return (utime + stime + cutime + cstime) / _CLK_TCK, waited_ns / 1e9, runnable, children


def process_tree_cpu_s(pid: int) -> CpuSample | None:
    """CPU seconds used by process ``pid`` and its descendants (the live ones, and those that
    ended and were waited for), and the seconds their live threads waited for a CPU, from
    ``/proc``; ``None`` if ``pid`` is gone or unreadable."""
    first = _one_process(pid)
    if first is None:
        return None
    total, waited, runnable, todo = first
    seen = 1
    while todo and seen < PROCESS_TREE_MAX:
        one = _one_process(todo.pop())
        seen += 1
        if one is not None:
            total += one[0]
            waited += one[1]
            runnable = runnable or one[2]
            todo.extend(one[3])
    return total, waited, runnable


def charged_s(wall: float, cpu: float, waited: float) -> float:
    """What a decision timed by its bot's process tree is charged: its stall-free ``wall`` time
    less the time the tree's threads ``waited`` for a CPU (runnable, not running: the machine's
    doing, not the bot's), never less than the ``cpu`` time the tree used nor more than ``wall``.
    A bot that sleeps, or waits on another process or machine, is charged that time as on the
    wall clock; one starved of a CPU is not charged the starving."""
    return min(wall, max(cpu, wall - waited))
