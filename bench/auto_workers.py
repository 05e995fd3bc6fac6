"""What ``--workers auto`` costs or gains on a run's wall time (issue 22: a 12-game run took 23 s
with ``auto`` and 12 s with ``--workers 1``): the same tournament of two sample bots played in
the arena's process (``--workers 1``), on a local cluster of one worker per core (``--workers
N``, what ``auto`` used to pick for every run) and with ``--workers auto``, for a few run sizes;
each command timed from its start to its exit (what a user waits for), then the ratios.

    .venv/bin/python bench/auto_workers.py                   # 12 and 48 games, 2 repeats
    .venv/bin/python bench/auto_workers.py --games 12 96 --repeats 3

A loaded machine makes single figures noisy; the medians of the repeats are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOTS = ('name=greedy cmd="{python} -m sample_bots.greedy_bot"', 'name=random cmd="{python} -m sample_bots.random_bot"')


def run_once(games: int, workers: str, concurrency: int, folder: Path) -> float:
    """Seconds from the command's start to its exit."""
    cmd = [sys.executable, "-m", "arena.cli", "tournament", "--games", str(games), "--rules", "short",
           "--tc", "st=1 timemargin=200", "--concurrency", str(concurrency), "--workers", workers,
           "--out", str(folder), "--no-progress"]
    for bot in BOTS:
        cmd += ["--bot", bot]
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False,
                          env={k: v for k, v in os.environ.items() if k != "GIN_ARENA_WORKERS"})
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, nargs="+", default=[12, 48], help="games per run (even)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--concurrency", type=int, default=os.cpu_count() or 2)
    args = p.parse_args()
    cores = str(max(2, os.cpu_count() or 2))
    settings = ("1", cores, "auto")
    print(f"{'games':>5}  " + "  ".join(f"{'--workers ' + s:>14}" for s in settings) + "   auto/1  cores/1")
    with tempfile.TemporaryDirectory(prefix="auto-workers-") as tmp:
        for games in args.games:
            medians = []
            for workers in settings:
                times = [run_once(games, workers, args.concurrency, Path(tmp) / f"g{games}-w{workers}-{k}")
                         for k in range(args.repeats)]
                medians.append(statistics.median(times))
            one, many, auto = medians
            print(f"{games:>5}  " + "  ".join(f"{m:>12.1f} s" for m in medians)
                  + f"   {auto / one:6.2f}  {many / one:7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
