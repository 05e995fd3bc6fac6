"""Issue 34's sign-in flood against a real ``arena serve --web`` while bots play on it: B
registered bots play the hosted ladder (sessions of one lean client process,
``bench/_sessions.py``), then A wrong sign-ins are sent at once from D client addresses (each
address within ``signin_tries_per_minute``, each try a name of its own, so that every per-address
and per-name limit lets it through; the addresses are named by ``X-Forwarded-For`` to a web
started with ``--web-proxy-hops 1``, as behind a proxy: every connection stays on 127.0.0.1).

Prints, no asserts, for a quiet window of S seconds and then the flood's: the RSS of the server's
processes together (the referee, the web's own process and, with a bounded hashing pool, its
workers; the peak, sampled every 20 ms, over the quiet one's), the p95 (and max) time to serve
``/`` (sequential GETs over fresh connections the whole window), the sign-ins' statuses, and the
ladder's games finished, lost on time (``time_forfeit``) and the bots suspended in each window.
Run it from a checkout to measure that checkout's arena (``python -m arena.cli`` from the
repository's top): the figures of docs/security.md#password-hashing are this bench on the code
before and after the change.

    .venv/bin/python bench/signin_flood.py [--bots 20] [--tries 200] [--addresses 40] [--seconds 20]
"""

from __future__ import annotations

import argparse
import http.client
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hosted import ARENA, LADDER, NO_LIMITS, ROOT, load_avg, register, start_sessions, stop, wait_games

MB = 1024 * 1024
TIMEOUT_S = 300.0
"""A bound on one request (a hang, not a speed check)."""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", type=int, default=20, help="registered bots playing the ladder")
    p.add_argument("--tries", type=int, default=200, help="wrong sign-ins sent at once")
    p.add_argument("--addresses", type=int, default=40, help="client addresses they come from")
    p.add_argument("--seconds", type=float, default=20.0, help="the quiet window (the flood's lasts until answered)")
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-signin-"))
    names = [f"b{i:03d}" for i in range(args.bots)]
    tokens = register(folder / "serve", names)
    server, referee, web = start_server(folder / "serve")
    load = [start_sessions(referee, tokens, folder / "tokens.txt", play=True)]
    db = folder / "serve" / "serve.sqlite"
    try:
        wait_games(db, 10, 300, server)
        print(f"arena serve pid {server.pid}, {args.bots} bots playing the ladder ({load_avg()})")
        quiet = window(server.pid, web, db, lambda: time.sleep(args.seconds))
        answers: list[int] = []
        flood = window(server.pid, web, db, lambda: answers.extend(sign_ins(web, args.tries, args.addresses)))
        print(f"\n{'window':8} {'RSS MB':>7} {'peak MB':>8} {'/ p95 ms':>9} {'/ max ms':>9} {'pages':>6} "
              f"{'games':>6} {'on time':>8} {'suspended':>9} {'seconds':>8}")
        for label, w in (("quiet", quiet), ("flood", flood)):
            print(f"{label:8} {w['rss'] / MB:7.0f} {w['peak'] / MB:8.0f} {w['p95'] * 1000:9.0f} "
                  f"{w['max'] * 1000:9.0f} {w['pages']:6.0f} {w['games']:6.0f} {w['lost_on_time']:8.0f} "
                  f"{w['suspended']:9.0f} {w['seconds']:8.1f}")
        print(f"\nflood: {args.tries} wrong sign-ins from {args.addresses} addresses at once; RSS grew "
              f"{(flood['peak'] - quiet['peak']) / MB:+.0f} MB over the quiet window's peak; statuses "
              f"{dict(sorted(Counter(answers).items()))} ({load_avg()})")
    finally:
        stop([*load, server])
    return 0


def start_server(folder: Path) -> tuple[subprocess.Popen[str], str, str]:
    """``arena serve --web`` with the bench ladder, behind one (pretended) proxy."""
    (folder / "ladder.toml").write_text(LADDER, encoding="utf-8")
    proc = subprocess.Popen([*ARENA, "serve", "--listen", "127.0.0.1:0", "--dir", str(folder), *NO_LIMITS,
                             "--ladder", str(folder / "ladder.toml"), "--web", "127.0.0.1:0", "--web-proxy-hops", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert proc.stdout is not None
    referee = ""
    for line in proc.stdout:
        if line.startswith("referee listening on "):
            referee = line.split()[3].rstrip(";")
        if line.startswith("live web on "):
            return proc, referee, line.split()[3]
    raise SystemExit(f"arena serve did not start (exit {proc.wait()})")


def window(pid: int, web: str, db: Path, during: Callable[[], None]) -> dict[str, float]:
    """While ``during()`` runs: the tree's RSS (first and peak), ``/``'s times, the games."""
    since = time.time()
    before = suspended(db)
    first = tree_rss(pid)
    peak = [first]
    times: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(pid))
            time.sleep(0.02)

    def pages() -> None:
        while not done.is_set():
            times.append(get_page(web, "/"))

    threads = [threading.Thread(target=sample), threading.Thread(target=pages)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    try:
        during()
    finally:
        done.set()
        for t in threads:
            t.join()
    games, lost = finished(db, since)
    times.sort()
    return {"rss": first, "peak": peak[0], "p95": times[int(0.95 * (len(times) - 1))] if times else 0.0,
            "max": times[-1] if times else 0.0, "pages": len(times), "games": games, "lost_on_time": lost,
            "suspended": suspended(db) - before, "seconds": time.monotonic() - t0,
            "median": statistics.median(times) if times else 0.0}


def sign_ins(web: str, tries: int, addresses: int) -> list[int]:
    """``tries`` wrong sign-ins sent at once, spread over ``addresses`` (of 198.18.0.0/15, the
    benchmarking range, only named in the header): their statuses (0: no answer)."""
    host, port = urllib.parse.urlsplit(web).netloc.rsplit(":", 1)
    go = threading.Barrier(tries)
    statuses: list[int] = []

    def one(i: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT_S)
        try:
            conn.connect()
            go.wait()
            body = urllib.parse.urlencode({"name": f"nobody-{i}", "password": "not the password"})
            conn.request("POST", "/signin", body=body, headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Forwarded-For": f"198.18.{i % addresses // 256}.{i % addresses % 256 + 1}"})
            r = conn.getresponse()
            r.read()
            statuses.append(r.status)
        except OSError:
            statuses.append(0)
        finally:
            conn.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(tries)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def get_page(web: str, path: str) -> float:
    """Seconds to get ``path`` whole over a fresh connection (a 5xx or a failure counts as the time it took)."""
    host, port = urllib.parse.urlsplit(web).netloc.rsplit(":", 1)
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT_S)
    try:
        conn.request("GET", path)
        conn.getresponse().read()
    except OSError:
        pass
    finally:
        conn.close()
    return time.perf_counter() - t0


def tree_rss(pid: int) -> int:
    """The RSS of ``pid`` and its descendants together (bytes)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path("/proc", str(p), "status").read_text()
        except OSError:
            continue
        total += next((int(s.split()[1]) * 1024 for s in status.splitlines() if s.startswith("VmRSS:")), 0)
        todo += [c for c, parent in parents.items() if parent == p]
    return total


def finished(db: Path, since: float) -> tuple[int, int]:
    """Ladder games finished since ``since``, and how many of them ended on time."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = conn.execute("SELECT COUNT(*), SUM(termination = 'time_forfeit') FROM games WHERE finished_at > ?",
                           (since,)).fetchone()
    finally:
        conn.close()
    return int(row[0]), int(row[1] or 0)


def suspended(db: Path) -> int:
    """Bots the ladder suspended so far."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM bots WHERE state = 'suspended'").fetchone()[0])
    finally:
        conn.close()


if __name__ == "__main__":
    raise SystemExit(main())
