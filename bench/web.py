"""The live web under load: ``arena serve --web`` (a subprocess) while a tournament plays on it
(``arena tournament --referee``, lean test bots), then with W live-update watchers held open.

Prints, no asserts: p50/p99 time to serve each page and API call (sequential requests over one
keep-alive connection, while games finish); the server's RSS and CPU with no watcher and with
W watchers of ``/api/events`` open (memory per watcher, share of a core per watcher).

    .venv/bin/python bench/web.py [--watchers 500] [--requests 200] [--seconds 20] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARENA = [sys.executable, "-m", "arena.cli"]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_kb(pid: int) -> int:
    """Resident memory of a process (KB)."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE // 1024


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_server(folder: Path, watchers: int) -> tuple[subprocess.Popen[str], str, str]:
    """``arena serve --web`` on free ports; its referee's and web's addresses."""
    proc = subprocess.Popen(
        [*ARENA, "serve", "--listen", "127.0.0.1:0", "--dir", str(folder), "--web", "127.0.0.1:0",
         "--web-limit", f"sse_per_client={watchers + 10}", "--web-limit", f"sse_connections={watchers + 10}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    referee = web = ""
    for line in proc.stdout:
        if line.startswith("referee listening on "):
            referee = line.split()[3].rstrip(";")
        if line.startswith("live web on "):
            web = line.split()[3]
            break
    return proc, referee, web


def start_load(folder: Path, referee: str, token: Path, concurrency: int) -> subprocess.Popen[str]:
    """A long tournament on the server (lean test bots: the games finish quickly)."""
    bot = 'cmd="{python} -m arena._testbot"'
    return subprocess.Popen(
        [*ARENA, "tournament", "--referee", referee, "--operator-token-file", str(token),
         "--bot", f"name=alpha {bot}", "--bot", f"name=beta {bot}", "--bot", f"name=gamma {bot}",
         "--games", "2000", "--rules", "short", "--concurrency", str(concurrency), "--out", str(folder / "run")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def timings(web: str, path: str, n: int) -> list[float]:
    """``n`` sequential GETs of ``path`` over one keep-alive connection: seconds each."""
    host, port = web.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        out.append(time.perf_counter() - t)
        assert r.status == 200, (path, r.status)
    conn.close()
    return out


def get_json(web: str, path: str) -> object:
    host, port = web.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", path)
    data = conn.getresponse().read()
    conn.close()
    return json.loads(data)


def open_watchers(web: str, n: int) -> list[socket.socket]:
    host, port = web.removeprefix("http://").rsplit(":", 1)
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)), timeout=30)
        s.sendall(b"GET /api/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        head = s.recv(65536)
        assert head.startswith(b"HTTP/1.1 200"), head[:80]
        s.setblocking(False)
        socks.append(s)
    return socks


def drain(socks: list[socket.socket]) -> int:
    """Read what the watchers were sent (like a browser would); the bytes read."""
    total = 0
    for s in socks:
        try:
            while chunk := s.recv(65536):
                total += len(chunk)
        except BlockingIOError:
            pass
    return total


def measure_cpu(pid: int, seconds: float, socks: list[socket.socket]) -> tuple[float, int]:
    """The server's share of a core over ``seconds`` (watchers read every 0.2 s), and bytes read."""
    start, t0, read = cpu_s(pid), time.monotonic(), 0
    while time.monotonic() - t0 < seconds:
        time.sleep(0.2)
        read += drain(socks)
    return (cpu_s(pid) - start) / (time.monotonic() - t0), read


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--watchers", type=int, default=500)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--concurrency", type=int, default=4)
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-web-"))
    server, referee, web = start_server(folder / "serve", args.watchers)
    load = start_load(folder, referee, folder / "serve" / "operator-token", args.concurrency)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            rows = get_json(web, "/api/standings")
            if isinstance(rows, dict) and sum(r["games"] for r in rows["standings"]) >= 6:
                break
            time.sleep(0.5)
        matches = get_json(web, "/api/matches")
        assert isinstance(matches, dict)
        running = matches["running"][0]["match_id"] if matches["running"] else matches["recent"][0]["match_id"]
        print(f"server pid {server.pid}; games played on it while measured (concurrency {args.concurrency})")
        print(f"{'path':32} {'p50 ms':>8} {'p99 ms':>8}")
        for path in ("/", "/matches", "/api/standings", "/api/matches", f"/api/matches/{running}",
                     "/api/bots/alpha", "/bots/alpha", "/api/openapi.json"):
            t = sorted(timings(web, path, args.requests))
            p99 = t[min(len(t) - 1, int(len(t) * 0.99))]
            print(f"{path[:32]:32} {statistics.median(t) * 1000:8.2f} {p99 * 1000:8.2f}")

        base_rss = rss_kb(server.pid)
        base_cpu, _ = measure_cpu(server.pid, args.seconds, [])
        socks = open_watchers(web, args.watchers)
        time.sleep(1.0)
        drain(socks)
        with_rss = rss_kb(server.pid)
        with_cpu, read = measure_cpu(server.pid, args.seconds, socks)
        done = get_json(web, "/api/standings")
        assert isinstance(done, dict)
        print(f"\n{args.watchers} watchers of /api/events held open for {args.seconds:.0f} s "
              f"(they read {read / 1024:.0f} KB of events in all; "
              f"{sum(r['games'] for r in done['standings']) // 2} games finished by then)")
        print(f"server RSS: {base_rss / 1024:.1f} MB without watchers, {with_rss / 1024:.1f} MB with: "
              f"{(with_rss - base_rss) / args.watchers:.1f} KB per watcher")
        print(f"server CPU: {base_cpu * 100:.1f}% of a core without watchers, {with_cpu * 100:.1f}% with: "
              f"{(with_cpu - base_cpu) * 100 / args.watchers:.3f}% of a core per watcher")
        for s in socks:
            s.close()
    finally:
        load.terminate()
        load.wait(timeout=60)
        server.terminate()
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
