"""Scheduling efficiency on Dask (issue 13): a real ``dask scheduler`` and k = 1, 2, 4, 8
``dask worker`` processes (one thread each) on 127.0.0.1, bots that think ``--think-ms`` per
decision by sleeping (``arena._testbot --mode slow``: greedy after a sleep, so CPU is not the
limit), rules ``short`` with ``target=1`` by default (a game is about one deal: short games
stress the scheduling most), concurrency k. Every size plays the same ``--games`` games (one
run seed): games differ much in length, and sizes that played different games would compare
the games rather than the scheduling.

Printed per k: games/min over the games' window (bench/_runs.py) and the efficiency games/min
÷ (k × k=1's); the arena's scheduling overhead per game in three parts (medians; the arena
logs them as ``cluster_overhead``, see ``arena.run.cluster.overhead_parts``): *dispatch*, how
long a worker that could play a game sat idle before the game's task started (from its
submission, or from the end of that worker's previous game if later), *return*, the task's end
→ the arena holding the result, *bookkeeping*, the result held → its replay written and its
result handed to the run store (with a game queued on every worker only *dispatch* keeps a
worker from playing); the CPU per game over the games' window, of every process, of the arena
and the scheduler, of the scheduler, of the worker processes (Dask and each worker's referee),
of the bots; the cores busy with all of it, and the load average just after (other work of
the machine shows there); the games' mean duration (on the worker) and decisions, and how busy
the workers were (the games' time ÷ (k × the window)) and how busy they would have been with no
overhead at all (*ideal*: the same games, of the same durations, each started on the first worker
free: the end of a run leaves workers idle when games differ in length): the efficiency is the
busy share relative to k=1's times how much slower a game is at k than at k=1.

The sizes take turns, ``--repeats`` times; medians printed. ``--compare PYTHON`` runs the same
sizes, interleaved, with another checkout's interpreter (the arena and the workers, its
``dask`` beside it), e.g. a venv of a worktree of main, and prints the ratios.

    .venv/bin/python bench/scheduling.py [--sizes 1,2,4,8] [--games 32] [--think-ms 50] [--target 1]
        [--repeats 1] [--compare PYTHON]
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil  # type: ignore[import-untyped]  # (installed with distributed)
from distributed import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runs import Figure, load, logged, own_cpu, run_arena, tree_cpu

BOT = ('[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "arena._testbot", "--mode", "slow", '
       '"--delay", "{delay}"]\n')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def cluster(k: int, log: Path, python: str) -> Iterator[tuple[str, list[int], int]]:
    """A scheduler and ``k`` workers run by ``python``'s ``dask``: (address, every pid, the
    scheduler's pid)."""
    dask = str(Path(python).with_name("dask"))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    with open(log, "ab") as f:
        procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                   "--dashboard-address", "127.0.0.1:0"], stdout=f, stderr=f, start_new_session=True)]
        procs += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny",
                                    "--dashboard-address", "127.0.0.1:0"], stdout=f, stderr=f, start_new_session=True)
                  for _ in range(k)]
    try:
        with Client(address, timeout="30s") as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(k, timeout=120)
        yield address, [p.pid for p in procs], procs[0].pid
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@dataclass(frozen=True, slots=True)
class Measured:
    """One run on ``k`` workers."""

    made: Figure
    """Its games/min and CPU over the games' window."""
    parts: dict[str, float]
    """The arena's ``cluster_overhead`` line (ms; an older arena logs only ``median_ms``)."""
    split: tuple[float, float, float]
    """CPU seconds over the games' window of the scheduler, the worker processes themselves
    (Dask, their referees) and their children (the bots)."""
    load: float
    """The 1-minute load average just after the run."""
    game_s: float
    """The games' mean duration (as recorded)."""
    decisions: float
    """The games' mean number of decisions."""
    ideal: float
    """How busy the workers would have been with no overhead at all: the games' time ÷ (k ×
    the time k workers take to play these games, of these durations, in schedule order, each
    game starting on the first worker free)."""


class SplitSampler:
    """Samples (time, scheduler, worker processes, bots) CPU seconds every 0.1 s until stopped;
    ``pids[0]`` the scheduler."""

    def __init__(self, pids: list[int]) -> None:
        self.procs = [psutil.Process(p) for p in pids]
        self.samples: list[tuple[float, float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            own = [own_cpu(p) for p in self.procs]
            bots = sum(tree_cpu(p) for p in self.procs[1:]) - sum(own[1:])
            self.samples.append((time.time(), own[0], sum(own[1:]), bots))
            self._stop.wait(0.1)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, start: float, end: float) -> tuple[float, float, float]:
        """The CPU used from ``start`` to ``end`` (the samples nearest them)."""
        first = min(self.samples, key=lambda s: abs(s[0] - start))
        last = min(self.samples, key=lambda s: abs(s[0] - end))
        return last[1] - first[1], last[2] - first[2], last[3] - first[3]


def figure(folder: Path, k: int, args: argparse.Namespace, python: str) -> Measured:
    """One run on ``k`` workers, the arena and the workers run by ``python``."""
    bots = folder / "bots.toml"
    bots.write_text("\n".join(BOT.format(name=n, delay=args.think_ms / 1000) for n in ("s1", "s2")))
    out = Path(tempfile.mkdtemp(dir=folder, prefix=f"k{k}-")) / "run"
    with cluster(k, folder / "dask.log", python) as (address, pids, scheduler):
        time.sleep(1)  # (the workers' start-up settles)
        sampler = SplitSampler(pids)
        made = run_arena([python, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", str(args.games),
                          "--rules", "short", "--rule", f"target={args.target}", "--tc", "st=2", "--seed", args.seed,
                          "--concurrency", str(k), "--scheduler", address, "--no-progress", "--out", str(out)], out,
                         also=pids, overhead=[scheduler])
        sampler.stop()
    parts = {key: float(str(v)) for key, v in logged(out, "cluster_overhead").items() if key.endswith("_ms")}
    db = sqlite3.connect(out / "run.sqlite")
    try:
        first, last, game_s, decisions = db.execute(
            "SELECT MIN(started_at), MAX(finished_at), AVG(duration), AVG(decisions) FROM games "
            "WHERE status = 'done'").fetchone()
        durations = [float(d) for (d,) in db.execute("SELECT duration FROM games WHERE status = 'done' ORDER BY idx")]
    finally:
        db.close()
    return Measured(made, parts, sampler.between(first, last), os.getloadavg()[0], float(game_s), float(decisions),
                    sum(durations) / (k * makespan(durations, k)))


def makespan(durations: list[float], k: int) -> float:
    """The time ``k`` workers take to play games of ``durations`` in order, each game starting on
    the first worker free, with no time between games."""
    free = [0.0] * k
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def row(k: int, rate: float, base: float, ms: list[Measured]) -> str:
    """One size's line of the table."""

    def part(name: str) -> float:
        return median(m.parts.get(f"{name}_median_ms", float("nan")) for m in ms)

    def per_game(f: float, m: Measured) -> float:
        return f / m.made.games * 1000

    total = median(m.parts.get("total_median_ms", m.parts.get("median_ms", float("nan"))) for m in ms)
    split = [median(per_game(m.split[i], m) for m in ms) for i in range(3)]
    busy = median(m.game_s * m.made.games / (k * m.made.seconds) for m in ms)
    ideal = median(m.ideal for m in ms)
    return (f"{k:>7} {rate:>9.1f} {rate / (k * base):>6.2f} | {part('dispatch'):>8.1f} {part('return'):>6.1f} "
            f"{part('bookkeeping'):>6.1f} {total:>6.1f} | {median(per_game(m.made.cpu_s, m) for m in ms):>5.0f} "
            f"{median(per_game(m.made.own_cpu_s, m) for m in ms):>9.0f} {split[0]:>6.0f} {split[1]:>7.0f} "
            f"{split[2]:>6.0f} | {median(m.made.cpu_s / m.made.seconds for m in ms):>5.2f}/{os.cpu_count()} "
            f"{median(m.load for m in ms):>5.2f} | {median(m.game_s for m in ms):>6.2f} "
            f"{median(m.decisions for m in ms):>6.1f} {busy:>5.2f} {ideal:>5.2f}")


def table(title: str, sizes: list[int], runs: dict[int, list[Measured]]) -> dict[int, float]:
    """Print one interpreter's table; its games/min by size."""
    rate = {k: median(m.made.per_min for m in runs[k]) for k in sizes}
    base = rate[sizes[0]] / sizes[0]
    print(f"\n{title}")
    print(f"{'':>7} {'':>9} {'':>6} | {'overhead/game (ms)':<29} | {'CPU/game (ms)':<39} | {'CPU':<12} | "
          f"{'games':<25}")
    print(f"{'workers':>7} {'games/min':>9} {'effic.':>6} | {'dispatch':>8} {'return':>6} {'bookk.':>6} {'total':>6} | "
          f"{'all':>5} {'arena+sch':>9} {'sched':>6} {'workers':>7} {'bots':>6} | {'busy':>6} {'load':>5} | "
          f"{'s':>6} {'decis.':>6} {'busy':>5} {'ideal':>5}")
    for k in sizes:
        print(row(k, rate[k], base, runs[k]))
    return rate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1,2,4,8")
    p.add_argument("--games", type=int, default=32, help="games of every size (even)")
    p.add_argument("--target", type=int, default=1, help="the rules' target score")
    p.add_argument("--think-ms", type=int, default=50)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--seed", default="bench-scheduling", help="the run seed (every size plays the same deals)")
    p.add_argument("--compare", default="", help="the interpreter of another checkout to measure too (a venv "
                   "of a worktree of main, with its own dask script)")
    args = p.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    pythons = [sys.executable, args.compare] if args.compare else [sys.executable]
    print(f"{load()}; bots sleep {args.think_ms} ms per decision; {args.games} games per size; "
          f"medians of {args.repeats}")
    runs: dict[str, dict[int, list[Measured]]] = {c: {k: [] for k in sizes} for c in pythons}
    with tempfile.TemporaryDirectory(prefix="bench-sched-") as tmp:
        for _ in range(args.repeats):
            for k in sizes:
                for python in pythons:
                    runs[python][k].append(figure(Path(tmp), k, args, python))
    rates = {c: table(f"run by {c}", sizes, runs[c]) for c in pythons}
    if args.compare:
        print(f"\ngames/min, {pythons[0]} ÷ {pythons[1]}: "
              + ", ".join(f"k={k} {rates[pythons[0]][k] / rates[pythons[1]][k]:.2f}×" for k in sizes))
    print(load())


if __name__ == "__main__":
    main()
