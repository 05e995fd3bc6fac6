"""What the arena benches share: one ``arena`` command run as a subprocess while the CPU of its
whole process tree is sampled, and its games/min and CPU per game read over the window from the
first game's start to the last game's end (what the run store records), so the arena's start-up
and shut-down are left out."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil  # type: ignore[import-untyped]  # (installed with distributed; no type hints)


def tree_cpu(proc: psutil.Process) -> float:
    """CPU seconds of ``proc`` and all its descendants, living or ended (an ended child's CPU
    is in its parent's ``children_*`` once the parent waited for it)."""
    total = 0.0
    try:
        kids = proc.children(recursive=True)
    except psutil.Error:  # (it ended)
        kids = []
    for p in (proc, *kids):
        try:
            t = p.cpu_times()
        except psutil.Error:  # (ended between the listing and the read)
            continue
        total += float(t.user + t.system + t.children_user + t.children_system)
    return total


def own_cpu(proc: psutil.Process) -> float:
    """CPU seconds of ``proc`` itself."""
    try:
        t = proc.cpu_times()
    except psutil.Error:
        return 0.0
    return float(t.user + t.system)


@dataclass(frozen=True, slots=True)
class Figure:
    """One run's measurements over its games' window."""

    games: int
    """Games played."""
    seconds: float
    """From the first game's start to the last game's end."""
    cpu_s: float
    """CPU of every process of the run (arena, workers, referees, bots) in that window."""
    own_cpu_s: float
    """CPU of the arena's own process and of any ``overhead`` process (not their children) in
    that window: what the arena itself, and a scheduler, spend."""

    @property
    def per_min(self) -> float:
        """Games per minute."""
        return self.games / self.seconds * 60

    @property
    def cpu_per_game(self) -> float:
        """CPU seconds per game, every process counted."""
        return self.cpu_s / self.games


class _Sampler:
    """Samples (time, tree CPU, own CPU) of a process every ``period`` seconds until it ends."""

    def __init__(self, pid: int, also: Sequence[int], overhead: Sequence[int], period: float = 0.1) -> None:
        self.proc = psutil.Process(pid)
        self.also = [psutil.Process(p) for p in also]
        self.overhead = [psutil.Process(p) for p in overhead]
        self.period = period
        self.samples: list[tuple[float, float, float]] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self.proc.is_running() and self.proc.status() != psutil.STATUS_ZOMBIE:
            others = sum(tree_cpu(p) for p in self.also)
            mine = own_cpu(self.proc) + sum(own_cpu(p) for p in self.overhead)
            self.samples.append((time.time(), tree_cpu(self.proc) + others, mine))
            time.sleep(self.period)

    def join(self) -> None:
        self._thread.join()

    def at(self, when: float) -> tuple[float, float]:
        """(tree CPU, own CPU) interpolated at ``when``."""
        s = self.samples
        for (t0, a0, b0), (t1, a1, b1) in itertools.pairwise(s):
            if t0 <= when <= t1:
                f = (when - t0) / (t1 - t0) if t1 > t0 else 0.0
                return a0 + f * (a1 - a0), b0 + f * (b1 - b0)
        last = s[-1] if when > s[-1][0] else s[0]
        return last[1], last[2]


def run_arena(argv: Sequence[str], out: Path, also: Sequence[int] = (), overhead: Sequence[int] = ()) -> Figure:
    """Run ``arena`` with ``argv`` (its run folder ``out``) and measure it; ``also``: processes
    outside its tree whose CPU (with their children's) counts too (an existing cluster's
    scheduler and workers); ``overhead``: processes whose own CPU counts as the arena's (a
    scheduler)."""
    log = out.parent / f"{out.name}.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
        sampler = _Sampler(proc.pid, also, overhead)
        code = proc.wait()
        sampler.join()
    if code != 0:
        raise SystemExit(f"the run failed ({code}):\n{log.read_text()[-3000:]}")
    db = sqlite3.connect(out / "run.sqlite")
    try:
        n, first, last = db.execute("SELECT COUNT(*), MIN(started_at), MAX(finished_at) FROM games "
                                    "WHERE status = 'done'").fetchone()
    finally:
        db.close()
    (c0, o0), (c1, o1) = sampler.at(float(first)), sampler.at(float(last))
    return Figure(int(n), float(last) - float(first), c1 - c0, o1 - o0)


def load() -> str:
    """The load average, as text."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def logged(out: Path, event: str) -> dict[str, object]:
    """The last line of a run's run.log with ``event`` (``{}``: none)."""
    found: dict[str, object] = {}
    for line in (out / "run.log").read_text().splitlines():
        if f'"{event}"' in line:
            found = json.loads(line)
    return found
