"""Reused bot processes and workers: games/min of the same run, greedy vs greedy (the sample
bots, rules ``short``), with a process per game (``restart = "always"``) vs reused
(``restart = "never"``) at concurrency 1, 2, 4, 8; then workers 1 vs 2 (Dask). Each figure is
one ``arena tournament`` in a fresh run folder; its games/min counts from the first game's start
to the last game's end (what the run store records), so start-up of the arena is left out. CPU:
``RUSAGE_CHILDREN`` of the whole command (arena, referee, bots, workers).

    .venv/bin/python bench/reuse_throughput.py [--games 24] [--levels 1,2,4,8] [--tc st=0.5]
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

BOT = '[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "sample_bots.greedy_bot"]\nrestart = "{restart}"\n'


def run(folder: Path, restart: str, games: int, tc: str, concurrency: int, workers: int) -> tuple[float, float]:
    """(games/min, CPU seconds per game) of one tournament."""
    bots = folder / f"bots-{restart}.toml"
    bots.write_text("\n".join(BOT.format(name=n, restart=restart) for n in ("g1", "g2")))
    out = Path(tempfile.mkdtemp(dir=folder, prefix=f"run-{restart}-{concurrency}-{workers}-")) / "run"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", str(games), "--rules",
         "short", "--tc", tc, "--concurrency", str(concurrency), "--workers", str(workers), "--out", str(out)],
        capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    db = sqlite3.connect(out / "run.sqlite")
    first, last = db.execute("SELECT MIN(started_at), MAX(finished_at) FROM games").fetchone()
    db.close()
    seconds = float(last) - float(first)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return games / seconds * 60, cpu / games


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=24)
    p.add_argument("--levels", default="1,2,4,8")
    p.add_argument("--tc", default="st=0.5 timemargin=50")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-reuse-") as tmp:
        folder = Path(tmp)
        print(f"{args.games} games per figure, greedy vs greedy, rules short, {args.tc}")
        print(f"{'concurrency':>11} {'per game':>10} {'reused':>10} {'ratio':>6} {'cpu/game per':>13} {'reused':>7}")
        for level in (int(x) for x in args.levels.split(",")):
            fresh, fresh_cpu = run(folder, "always", args.games, args.tc, level, 1)
            kept, kept_cpu = run(folder, "never", args.games, args.tc, level, 1)
            print(f"{level:>11} {fresh:>8.0f}/m {kept:>8.0f}/m {kept / fresh:>5.2f}x "
                  f"{fresh_cpu:>12.3f}s {kept_cpu:>6.3f}s")
        one, one_cpu = run(folder, "never", args.games, args.tc, 4, 1)
        two, two_cpu = run(folder, "never", args.games, args.tc, 4, 2)
        print(f"workers 1: {one:.0f}/min ({one_cpu:.3f} s CPU/game); workers 2: {two:.0f}/min "
              f"({two_cpu:.3f} s CPU/game); ratio {two / one:.2f}x")


if __name__ == "__main__":
    main()
