"""Scheduling efficiency on Dask (issue 13): a real ``dask scheduler`` and k = 1, 2, 4, 8
``dask worker`` processes (one thread each) on 127.0.0.1, bots that think ``--think-ms`` per
decision by sleeping (``arena._testbot --mode slow``: greedy after a sleep, so CPU is not the
limit), ``--per-worker`` games per worker at concurrency k, rules ``short`` with ``target=1``
by default (a game is about one deal: short games stress the scheduling most). Printed per k:
games/min over the games' window (bench/_runs.py), the efficiency games/min ÷ (k × k=1's), the
arena's scheduling overhead per game — the median time a game spent between the arena and a
worker (submission → task start, plus task end → result in the arena; the arena logs it as
``cluster_overhead``) — and the CPU per game of the arena's own process plus the scheduler's
(background work of idle processes included). The sizes take turns, ``--repeats`` times;
medians printed.

    .venv/bin/python bench/scheduling.py [--sizes 1,2,4,8] [--per-worker 4] [--think-ms 50] [--target 1]
        [--repeats 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from distributed import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runs import Figure, load, logged, run_arena

DASK = str(Path(sys.executable).with_name("dask"))
BOT = ('[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "arena._testbot", "--mode", "slow", '
       '"--delay", "{delay}"]\n')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def cluster(k: int, log: Path) -> Iterator[tuple[str, list[int], int]]:
    """A scheduler and ``k`` workers: (address, every pid, the scheduler's pid)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    with open(log, "ab") as f:
        procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                   "--dashboard-address", "127.0.0.1:0"], stdout=f, stderr=f, start_new_session=True)]
        procs += [subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--no-nanny",
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


def figure(folder: Path, k: int, args: argparse.Namespace) -> tuple[Figure, float]:
    """One run on ``k`` workers, and its median scheduling overhead per game (seconds)."""
    bots = folder / "bots.toml"
    bots.write_text("\n".join(BOT.format(name=n, delay=args.think_ms / 1000) for n in ("s1", "s2")))
    out = Path(tempfile.mkdtemp(dir=folder, prefix=f"k{k}-")) / "run"
    with cluster(k, folder / "dask.log") as (address, pids, scheduler):
        time.sleep(1)  # (the workers' start-up settles)
        games = max(2, args.per_worker * k + (args.per_worker * k) % 2)  # (even: pairs swap the seats)
        made = run_arena([sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", str(games),
                          "--rules", "short", "--rule", f"target={args.target}", "--tc", "st=2", "--concurrency",
                          str(k), "--scheduler", address, "--no-progress", "--out", str(out)], out,
                         also=pids, overhead=[scheduler])
    return made, float(str(logged(out, "cluster_overhead").get("median_ms", "nan"))) / 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1,2,4,8")
    p.add_argument("--per-worker", type=int, default=4, help="games per worker")
    p.add_argument("--target", type=int, default=1, help="the rules' target score")
    p.add_argument("--think-ms", type=int, default=50)
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"{load()}; bots sleep {args.think_ms} ms per decision; {args.per_worker} games per worker; "
          f"medians of {args.repeats}")
    figures: dict[int, list[tuple[Figure, float]]] = {k: [] for k in sizes}
    with tempfile.TemporaryDirectory(prefix="bench-sched-") as tmp:
        for _ in range(args.repeats):
            for k in sizes:
                figures[k].append(figure(Path(tmp), k, args))
    rate = {k: statistics.median(f.per_min for f, _ in fs) for k, fs in figures.items()}
    base = rate[sizes[0]] / sizes[0]
    print(f"{'workers':>7} {'games/min':>10} {'efficiency':>10} {'overhead/game':>14} {'arena+scheduler cpu/game':>25}")
    for k in sizes:
        overhead = statistics.median(o for _, o in figures[k])
        own = statistics.median(f.own_cpu_s / f.games for f, _ in figures[k])
        print(f"{k:>7} {rate[k]:>10.1f} {rate[k] / (k * base):>10.2f} {overhead * 1000:>12.1f}ms "
              f"{own * 1000:>23.1f}ms")
    print(load())


if __name__ == "__main__":
    main()
