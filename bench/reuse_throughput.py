"""Reused bot processes, the CPU bound, and workers (issue 13's speed goals), each figure one
``arena tournament`` in a fresh run folder, measured over its games' window (bench/_runs.py:
games/min from the first game's start to the last game's end; CPU of every process of the run —
arena, workers, referees, bots — sampled with psutil, ended children included):

(a) greedy vs greedy (the sample bots, rules ``short``), a process per game (``restart =
    "always"``) vs reused (``restart = "never"``) at concurrency 1, 2, 4, 8, in this process
    (``--workers 1``); the two modes alternate, ``--repeats`` times, medians printed.
(b) the machine's CPU bound for the reused mode: cores × 60 s ÷ CPU seconds per game, the
    share of it reached, and the cores the reused run used (CPU seconds ÷ seconds: on a machine
    shared with other work the share is capped by what the run gets).
(c) workers 2 vs 1 (Dask, ``--workers N``) with CPU-bound bots (bench/_busy_bot.py: greedy
    after spinning ``--busy-ms`` of CPU per decision), alternating; the CPU used is printed.

    .venv/bin/python bench/reuse_throughput.py [--games 16] [--levels 1,2,4,8] [--repeats 1]
        [--tc "st=0.5 timemargin=50"] [--busy-ms 20] [--skip-workers]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _runs import Figure, load, run_arena

GREEDY = '[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "sample_bots.greedy_bot"]\nrestart = "{restart}"\n'
BUSY = '[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "{path}"]\nenv = {{ BENCH_BUSY_MS = "{ms}" }}\n'
CORES = os.cpu_count() or 1


def tournament(folder: Path, manifest: str, label: str, games: int, tc: str, concurrency: int,
               workers: int) -> Figure:
    bots = folder / f"bots-{label}.toml"
    bots.write_text(manifest)
    out = Path(tempfile.mkdtemp(dir=folder, prefix=f"run-{label}-{concurrency}-{workers}-")) / "run"
    return run_arena([sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", str(games),
                      "--rules", "short", "--tc", tc, "--concurrency", str(concurrency), "--workers", str(workers),
                      "--no-progress", "--out", str(out)], out)


def medians(figures: list[Figure]) -> tuple[float, float]:
    """Median games/min and median CPU seconds per game."""
    return statistics.median(f.per_min for f in figures), statistics.median(f.cpu_per_game for f in figures)


def alternate(repeats: int, *runs: Callable[[], Figure]) -> list[list[Figure]]:
    """Each run ``repeats`` times, the runs taking turns (so load changes hit them alike)."""
    figures: list[list[Figure]] = [[] for _ in runs]
    for _ in range(repeats):
        for i, go in enumerate(runs):
            figures[i].append(go())
    return figures


def reuse(folder: Path, args: argparse.Namespace) -> None:
    """(a) and (b)."""
    print(f"(a) {args.games} games per figure, greedy vs greedy, rules short, {args.tc}, --workers 1; "
          f"medians of {args.repeats}")
    print(f"{'concurrency':>11} {'per game':>10} {'reused':>10} {'ratio':>6} {'cpu/game per':>13} {'reused':>7} "
          f"{'bound':>8} {'of bound':>8} {'cores used':>10}")
    for level in (int(x) for x in args.levels.split(",")):
        manifests = {r: "\n".join(GREEDY.format(name=n, restart=r) for n in ("g1", "g2")) for r in ("always", "never")}
        fresh, kept = alternate(
            args.repeats,
            partial(tournament, folder, manifests["always"], "always", args.games, args.tc, level, 1),
            partial(tournament, folder, manifests["never"], "never", args.games, args.tc, level, 1),
        )
        (f_rate, f_cpu), (k_rate, k_cpu) = medians(fresh), medians(kept)
        bound = CORES * 60 / k_cpu  # (b): games/min if every core did nothing but these games
        used = statistics.median(f.cpu_s / f.seconds for f in kept)  # (what the reused run got of the machine)
        print(f"{level:>11} {f_rate:>8.0f}/m {k_rate:>8.0f}/m {k_rate / f_rate:>5.2f}x {f_cpu:>12.3f}s "
              f"{k_cpu:>6.3f}s {bound:>6.0f}/m {k_rate / bound:>7.0%} {used:>10.2f}")
        print(f"{'':>11} ({load()})")


def workers(folder: Path, args: argparse.Namespace) -> None:
    """(c)."""
    path = Path(__file__).resolve().parent / "_busy_bot.py"
    manifest = "\n".join(BUSY.format(name=n, path=path, ms=args.busy_ms) for n in ("b1", "b2"))
    games = max(args.games, 8)
    one, two = alternate(
        args.repeats,
        partial(tournament, folder, manifest, "busy", games, "st=2", 2, 1),
        partial(tournament, folder, manifest, "busy", games, "st=2", 2, 2),
    )
    (r1, c1), (r2, c2) = medians(one), medians(two)
    use1 = statistics.median(f.cpu_s / f.seconds for f in one)
    use2 = statistics.median(f.cpu_s / f.seconds for f in two)
    print(f"(c) {games} games per figure, CPU-bound bots ({args.busy_ms} ms of CPU per decision), concurrency 2; "
          f"medians of {args.repeats}")
    print(f"    workers 1: {r1:.0f}/min, {c1:.3f} s CPU/game, {use1:.2f} of {CORES} cores busy")
    print(f"    workers 2: {r2:.0f}/min, {c2:.3f} s CPU/game, {use2:.2f} of {CORES} cores busy")
    print(f"    ratio {r2 / r1:.2f}x ({load()})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=16)
    p.add_argument("--levels", default="1,2,4,8")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--tc", default="st=0.5 timemargin=50")
    p.add_argument("--busy-ms", type=int, default=20)
    p.add_argument("--skip-workers", action="store_true", help="leave out (c)")
    p.add_argument("--skip-reuse", action="store_true", help="leave out (a) and (b)")
    args = p.parse_args()
    print(f"{load()}; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="bench-reuse-") as tmp:
        if not args.skip_reuse:
            reuse(Path(tmp), args)
        if not args.skip_workers:
            workers(Path(tmp), args)


if __name__ == "__main__":
    main()
