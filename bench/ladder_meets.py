"""Who meets whom on the hosted ladder (issue 29): ``arena serve --ladder`` (a subprocess, the
bench ladder of ``bench/_hosted.py``) with B registered bots, each its own process connected with
the kits' defaults (``arena._testbot --matches 0``: one game at a time), until G games are stored;
then one more bot joins late and plays 2×B games (2×(N−1) with N = B + 1).

With ``--local``, the same on the local ladder: ``arena ladder run`` with the B bots (each a
reused process of ``arena._testbot``, B/2 tables at once: one game at a time per bot), G games;
then the late bot is added and ``ladder run`` plays until it has played 2×B games.

Prints, no asserts: the games of every pair over the first G games (the goal: every pair meets,
the most-played pair at most 2× the least-played), matches/min over those G games, and which of
the first B bots the late bot met in its first 2×B games (the goal: all of them).

    .venv/bin/python bench/ladder_meets.py [--bots 6] [--games 300] [--local]
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hosted import load_avg, register, start_bots, start_server, stop


def games(db: Path) -> list[tuple[tuple[str, ...], float, float]]:
    """Every finished game of ``db``: its bots by seat, when it started and when it finished."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT g.idx, g.started_at, g.finished_at, s.bot FROM games g JOIN game_seats s "
                            "ON s.game = g.idx WHERE g.finished_at IS NOT NULL ORDER BY g.idx, s.seat").fetchall()
    except sqlite3.OperationalError:  # (the schema is not written yet)
        return []
    finally:
        conn.close()
    out = []
    for _, group in itertools.groupby(rows, key=lambda r: r[0]):
        seats = list(group)
        out.append((tuple(str(r[3]) for r in seats), float(seats[0][1] or seats[0][2]), float(seats[0][2])))
    return out


def wait_for(db: Path, enough: int, server: subprocess.Popen[str], bound_s: float = 1800.0, bot: str = "") -> None:
    """Until ``db`` holds ``enough`` finished games (of ``bot`` if given)."""
    deadline = time.monotonic() + bound_s
    while sum(1 for g in games(db) if not bot or bot in g[0]) < enough:
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{db}: fewer than {enough} games")
        time.sleep(0.5)


def report(names: list[str], first: list[tuple[str, ...]], span: float, late: list[tuple[str, ...]]) -> None:
    """Print the pairs' games over ``first`` (the games played in ``span`` seconds) and whom the
    late bot met in ``late`` (its first games)."""
    met = Counter(frozenset(pair) for g in first for pair in itertools.combinations(g, 2))
    counts = {f"{a}-{b}": met[frozenset((a, b))] for a, b in itertools.combinations(names, 2)}
    print(f"games per pair over the first {len(first)} games: {counts}")
    least, most = min(counts.values()), max(counts.values())
    print(f"pairs that met: {sum(1 for n in counts.values() if n)} of {len(counts)}; least {least}, most "
          f"{most} (most ÷ least: {most / least:.2f})" if least else
          f"pairs that met: {sum(1 for n in counts.values() if n)} of {len(counts)}; most {most}")
    print(f"matches/min over those games: {len(first) / span * 60:.1f} ({load_avg()})")
    opponents = [b for g in late for b in g if b != "late"]
    print(f"the late bot's first {len(late)} games (2×(N−1)): opponents {opponents}; met "
          f"{len(set(opponents))} of {len(names)}")


def local(bots: int, count: int) -> int:
    """The local ladder: ``arena ladder run`` (see the module's docstring)."""
    db = Path(tempfile.mkdtemp(prefix="bench-meets-")) / "ladder.sqlite"
    names = [f"b{i}" for i in range(bots)]

    def arena(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "arena.cli", *args, "--db", str(db)], check=True,
                       stdout=subprocess.DEVNULL)

    play = ["--rules", "short", "--tc", "st=2 timemargin=200", "--concurrency", str(bots // 2), "--no-progress"]
    for name in names:
        arena("ladder", "add", name, "--command", "{python} -m arena._testbot")
    print(f"{db}: {bots} bots, {bots // 2} tables at once ({load_avg()} at the start)")
    start = time.monotonic()
    arena("ladder", "run", "--games", str(count), *play)
    span = time.monotonic() - start
    arena("ladder", "add", "late", "--command", "{python} -m arena._testbot")
    arena("ladder", "run", "--games", str(6 * bots), *play)
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT group_concat(bot, '|') FROM game_seats GROUP BY game ORDER BY game").fetchall()
    finally:
        conn.close()
    played = [tuple(str(r[0]).split("|")) for r in rows]
    report(names, played[:count], span, [g for g in played[count:] if "late" in g][:2 * bots])
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", type=int, default=6, help="bots playing from the start")
    p.add_argument("--games", type=int, default=300, help="games over which the pairs are counted")
    p.add_argument("--local", action="store_true", help="the local ladder (arena ladder run), not arena serve")
    args = p.parse_args()
    if args.local:
        return local(args.bots, args.games)
    folder = Path(tempfile.mkdtemp(prefix="bench-meets-")) / "serve"
    names = [f"b{i}" for i in range(args.bots)]
    tokens = register(folder, [*names, "late"])
    server, referee, _ = start_server(folder)
    db = folder / "serve.sqlite"
    bots = start_bots(referee, {n: tokens[n] for n in names})
    print(f"folder {folder}; {args.bots} bots one game at a time ({load_avg()} at the start)")
    try:
        wait_for(db, args.games, server)
        first = games(db)[: args.games]
        span = max(g[2] for g in first) - min(g[1] for g in first)
        bots += start_bots(referee, {"late": tokens["late"]})
        window = 2 * args.bots
        wait_for(db, window, server, bot="late")
        late = [g[0] for g in games(db) if "late" in g[0]][:window]
        report(names, [g[0] for g in first], span, late)
    finally:
        stop([*bots, server])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
