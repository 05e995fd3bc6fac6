"""The hosted arena's speed (issue 20): ``arena serve --ladder`` (a subprocess) with B registered
lean bots playing continuously, each its own process and token (``arena._testbot --matches 0``,
greedy: short games), against the same B bots in a local ``arena tournament`` (same game, preset
``short``, time control, duplicate pairs, B/2 tables at once) in the same run; then how many
connected idle bots one server holds.

Prints, no asserts:
(a) matches/min over a window after a warm-up, hosted and local, and hosted ÷ local (goal ≥ 80%;
    issue 29's: local ≥ hosted, so ≤ 100%), with the server's CPU share and the machine's load
    beside each, and the local games' mean wait (from the runner starting a game to its match
    playing) as a share of their time (issue 29's goal: < 10%); then the hosted ladder again
    with the B bots as sessions of one lean client process (``bench/_sessions.py --play``): what
    the server does when the bots cost the machine little;
(b) a fresh server with the ladder and I registered bots connected and idle (they declare only
    ``gin/classic``, which the ladder does not play; ``bench/_sessions.py``, one process):
    the server's RSS and CPU with none, with the first fifth and with all of them — KB and share
    of a core per idle session.

    .venv/bin/python bench/hosted.py [--bots 50] [--warmup 50] [--seconds 60] [--idle 1000]
        [--local-clock wall|cpu] [--local-workers auto|N] [--skip-hosted] [--skip-local] [--skip-lean]
        [--skip-idle]
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hosted import (
    ARENA,
    PRESET,
    ROOT,
    TC,
    cpu_s,
    games_finished,
    load_avg,
    pair_spread,
    register,
    rss_kb,
    start_bots,
    start_server,
    start_sessions,
    stop,
    wait_games,
)


def window(db: Path, seconds: float, pid: int) -> tuple[float, float]:
    """Matches/min finished into ``db`` over ``seconds`` from now, and ``pid``'s share of a core."""
    t0, c0 = time.time(), cpu_s(pid)
    time.sleep(seconds)
    t1, c1 = time.time(), cpu_s(pid)
    return games_finished(db, t0) / (t1 - t0) * 60, (c1 - c0) / (t1 - t0)


def hosted(folder: Path, n: int, warmup: int, seconds: float, *, lean: bool = False) -> float:
    names = [f"b{i:03d}" for i in range(n)]
    tokens = register(folder, names)
    server, referee, _ = start_server(folder)
    bots = [start_sessions(referee, tokens, folder / "tokens.txt", play=True)] if lean else start_bots(referee, tokens)
    how = "sessions of one lean client process" if lean else "a process each"
    try:
        wait_games(folder / "serve.sqlite", warmup, 300, server)
        rate, cpu = window(folder / "serve.sqlite", seconds, server.pid)
        print(f"hosted: arena serve --ladder, {n} registered bots connected ({how}): "
              f"{rate:.1f} matches/min over {seconds:.0f} s; the server used {cpu * 100:.0f}% of a core "
              f"({load_avg()})")
        met, possible, least, most = pair_spread(folder / "serve.sqlite")
        print(f"        pairs that met: {met} of {possible}; games per pair that met: {least} to {most}")
    finally:
        stop([*bots, server])
    return rate


LOCAL_GAMES = 1000
"""The local run plays at least this many games (duplicate pairs per pair as needed): a round
robin of 20 bots with one pair each (380 games) ended inside the window, whose rate then counted
the run's last, half-empty slots and the time after it."""


def local(folder: Path, n: int, warmup: int, seconds: float, clock: str = "wall", workers: str = "") -> float:
    bot = 'cmd="{python} -m arena._testbot"'
    pairs = n * (n - 1) // 2
    games = 2 * max(1, -(-LOCAL_GAMES // (2 * pairs)))  # (per pair: whole duplicate pairs)
    argv = [*ARENA, "tournament", "--rules", PRESET, "--tc", TC, "--games", str(games), "--concurrency", str(n // 2),
            "--clock", clock, "--no-progress", "--out", str(folder / "run"),
            *(["--workers", workers] if workers else [])]
    for i in range(n):
        argv += ["--bot", f"name=b{i:03d} {bot}"]
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        wait_games(folder / "run" / "run.sqlite", warmup, 300, run)
        opened = time.time()
        rate, cpu = window(folder / "run" / "run.sqlite", seconds, run.pid)
        if run.poll() is not None:
            print(f"local:  (the run of {games * pairs} games ended inside the window: its rate is too low)")
        how = f", --workers {workers}" if workers else ""
        print(f"local:  arena tournament, the same {n} bots, {n // 2} games at once, --clock {clock}{how}: {rate:.1f} "
              f"matches/min over {seconds:.0f} s; the arena (with its embedded referee) used {cpu * 100:.0f}% of a "
              f"core ({load_avg()})")
        taken, played = waits(folder / "run" / "run.sqlite", opened)
        share = (taken - played) / taken * 100 if taken else 0.0
        print(f"        the window's games: a game's mean time from its start to its end: {taken:.2f} s, of which "
              f"its match played "
              f"{played:.2f} s (the rest between the runner starting it and its match playing): it waited "
              f"{share:.0f}% of its time (goal < 10%)")
        at_once, gap = occupancy(folder / "run" / "run.sqlite", opened, opened + seconds)
        print(f"        games at once on average: {at_once:.2f} of {n // 2}; a bot's mean idle time between its "
              f"games: {gap * 1000:.0f} ms")
    finally:
        run.send_signal(signal.SIGINT)  # (Ctrl-C: it stops its bots and keeps what finished)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            stop([run])
    return rate


def idle(folder: Path, n: int, seconds: float) -> None:
    names = [f"idle{i:04d}" for i in range(n)]
    tokens = register(folder, names)
    server, referee, _ = start_server(folder)
    first = max(1, n // 5)
    clients: list[subprocess.Popen[str]] = []
    try:
        time.sleep(2.0)
        rows = [(0, rss_kb(server.pid), measure_cpu(server.pid, seconds))]
        for i, batch in enumerate((names[:first], names[first:])):
            clients.append(start_sessions(referee, {b: tokens[b] for b in batch}, folder / f"tokens-{i}.txt",
                                          play=False))
            time.sleep(2.0)
            rows.append((rows[-1][0] + len(batch), rss_kb(server.pid), measure_cpu(server.pid, seconds)))
        print(f"\nidle: arena serve --ladder with registered bots connected and never paired ({load_avg()}):")
        print(f"{'sessions':>9} {'server RSS MB':>14} {'KB/session':>11} {'server CPU %':>13} {'% core/session':>15}")
        base = rows[0]
        for count, rss, cpu in rows:
            per_kb = (rss - base[1]) / count if count else 0.0
            per_cpu = (cpu - base[2]) * 100 / count if count else 0.0
            print(f"{count:9d} {rss / 1024:14.1f} {per_kb:11.1f} {cpu * 100:13.2f} {per_cpu:15.4f}")
    finally:
        stop([*clients, server])


def waits(db: Path, since: float) -> tuple[float, float]:
    """The mean seconds per game from its start to its end of a run's games that finished after
    ``since`` (the window: not the first games, which wait for every bot's first start-up), and
    their matches' own duration."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = conn.execute("SELECT AVG(finished_at - started_at), AVG(duration) FROM games "
                           "WHERE finished_at IS NOT NULL AND finished_at > ?", (since,)).fetchone()
    finally:
        conn.close()
    return float(row[0] or 0.0), float(row[1] or 0.0)


def occupancy(db: Path, start: float, end: float) -> tuple[float, float]:
    """Over ``start``–``end``: the games being played at once on average (each from its start to
    its end), and the mean time a bot waited between the end of one of its games and the start
    of its next (both stamped by the run's writer)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT started_at, finished_at, pairing FROM games WHERE finished_at IS NOT NULL "
                            "AND finished_at > ? AND started_at < ? ORDER BY started_at", (start, end)).fetchall()
    finally:
        conn.close()
    busy = sum(min(f, end) - max(s, start) for s, f, _ in rows)
    last: dict[str, float] = {}
    gaps: list[float] = []
    for s, f, pairing in rows:
        for bot in str(pairing).split("|"):
            if bot in last and s >= start:
                gaps.append(max(0.0, s - last[bot]))
            last[bot] = f
    return busy / max(1e-9, end - start), sum(gaps) / len(gaps) if gaps else 0.0


def measure_cpu(pid: int, seconds: float) -> float:
    """``pid``'s share of a core over ``seconds`` from now."""
    t0, c0 = time.monotonic(), cpu_s(pid)
    time.sleep(seconds)
    return (cpu_s(pid) - c0) / (time.monotonic() - t0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", type=int, default=50, help="registered bots playing (even)")
    p.add_argument("--warmup", type=int, default=50,
                   help="games finished before the window opens (past every bot's start-up in the local run)")
    p.add_argument("--seconds", type=float, default=60.0, help="the measuring window")
    p.add_argument("--idle", type=int, default=1000, help="idle registered sessions connected in (b)")
    p.add_argument("--skip-local", action="store_true")
    p.add_argument("--skip-hosted", action="store_true", help="only the local run (and whatever else is not skipped)")
    p.add_argument("--local-workers", default="",
                   help="the local run's --workers (default: the arena's own default, auto)")
    p.add_argument("--local-clock", choices=("wall", "cpu"), default="wall",
                   help="the local run's --clock (default wall: the hosted ladder times its bots so)")
    p.add_argument("--skip-idle", action="store_true")
    p.add_argument("--skip-lean", action="store_true", help="skip the hosted run with one lean client process")
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-hosted-"))
    print(f"folders under {folder}; {load_avg()} at the start")
    rate = 0.0 if args.skip_hosted else hosted(folder / "serve", args.bots, args.warmup, args.seconds)
    if not args.skip_local:
        base = local(folder, args.bots, args.warmup, args.seconds, args.local_clock, args.local_workers)
        if rate:
            print(f"hosted ÷ local: {rate / base * 100:.0f}% (issue 20: ≥ 80%; issue 29: local at least as fast, "
                  "≤ 100%)" if base else "local: no game in the window")
    if not args.skip_lean:
        hosted(folder / "serve-lean", args.bots, args.warmup, args.seconds, lean=True)
    if not args.skip_idle:
        idle(folder / "idle", args.idle, min(args.seconds, 20.0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
