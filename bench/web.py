"""The live web under load: ``arena serve --web`` (a subprocess) while games are played on it —
by default the hosted ladder with B registered bots, each its own session and token
(``--load ladder``: the load of ``bench/hosted.py``; ``--client lean``: sessions of one lean client
process, ``bench/_sessions.py --play``, so that the bots leave the server the machine's cores;
``--client process``: ``arena._testbot`` processes), or a long tournament on the server
(``--load tournament``: ``arena tournament --referee``, lean test bots) — then with W live-update
watchers held open (the web's limits raised with ``--web-limit sse_per_client``/``sse_connections``).

Prints, no asserts: p50/p99 time to serve each page and API call (sequential requests over one
keep-alive connection, while games finish) and each p99 over that of ``/api/openapi.json`` (a
request that reads and computes nothing: what waiting for the busy interpreter alone costs);
the RSS and CPU of the process that serves the web (``arena serve --web``: its own process, a
child of the server's; the server's CPU beside it) with no watcher and with W watchers of
``/api/events`` open (memory per watcher, share of a core per watcher), and the machine's load
beside them. ``--probe``: every process of the server also runs ``bench/lagprobe`` (a thread that
sleeps 1 ms and counts how late it wakes; each garbage collection's duration) and its figures are
printed after the requests — where the long stalls of each process come from.

    .venv/bin/python bench/web.py [--load ladder|tournament] [--client lean|process] [--bots 50] [--watchers 500]
        [--requests 200] [--seconds 20] [--concurrency 4] [--probe]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hosted import ARENA, cpu_s, load_avg, register, rss_kb, start_bots, start_server, start_sessions, stop


def start_load(folder: Path, referee: str, token: Path, concurrency: int) -> subprocess.Popen[str]:
    """A long tournament on the server (lean test bots: the games finish quickly)."""
    bot = 'cmd="{python} -m arena._testbot"'
    return subprocess.Popen(
        [*ARENA, "tournament", "--referee", referee, "--operator-token-file", str(token),
         "--bot", f"name=alpha {bot}", "--bot", f"name=beta {bot}", "--bot", f"name=gamma {bot}",
         "--games", "2000", "--rules", "short", "--concurrency", str(concurrency), "--out", str(folder / "run")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def web_pid(server: int) -> int | None:
    """The server's web process (``arena serve --web`` serves from a child), if it has one."""
    for task in Path(f"/proc/{server}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                if b"arena.web.process" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return int(child)
            except OSError:
                continue
    return None


def print_probe(folder: Path, pids: dict[str, int]) -> None:
    """The stall probe's figures (``--probe``) of the server's processes."""
    for what, pid in pids.items():
        try:
            f = json.loads((folder / f"{pid}.json").read_text())
        except (OSError, ValueError):
            print(f"{what} (pid {pid}): no probe figures")
            continue
        over = ", ".join(f"> {ms} ms: {n}" for ms, n in f["late_ms_over"].items())
        full = f["gc_ms"]["2"]
        print(f"{what} (pid {pid}): 1 ms sleeps {f['ticks']}, woken late {over}, latest {f['late_max_ms']} ms; "
              f"full collections {len(full)} (ms: {', '.join(map(str, full[:12]))}); young/middle ones of "
              f">= 1 ms: {len(f['gc_ms']['0'])}/{len(f['gc_ms']['1'])} "
              f"(max {max(f['gc_ms']['0'] + f['gc_ms']['1'], default=0)} ms)")


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


def p99(sorted_times: list[float]) -> float:
    """The 99th percentile of sorted timings (the nearest rank below)."""
    return sorted_times[min(len(sorted_times) - 1, int(len(sorted_times) * 0.99))]


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
    p.add_argument("--load", choices=("ladder", "tournament"), default="ladder",
                   help="ladder: B registered bots on the hosted ladder; tournament: a tournament on the server")
    p.add_argument("--bots", type=int, default=50, help="--load ladder: registered bots playing")
    p.add_argument("--client", choices=("lean", "process"), default="lean",
                   help="--load ladder: the bots as sessions of one lean process, or a process each")
    p.add_argument("--watchers", type=int, default=500)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--concurrency", type=int, default=4, help="--load tournament: games at once")
    p.add_argument("--probe", action="store_true", help="run the stall probe in the server's processes and print it")
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-web-"))
    ladder = args.load == "ladder"
    names = [f"b{i:03d}" for i in range(args.bots)] if ladder else ["alpha", "beta", "gamma"]
    tokens = register(folder / "serve", names) if ladder else {}
    env = None
    if args.probe:
        (folder / "lag").mkdir()
        probe = str(Path(__file__).resolve().parent / "lagprobe")
        env = {**os.environ, "ARENA_LAG_DIR": str(folder / "lag"),
               "PYTHONPATH": os.pathsep.join(filter(None, [probe, os.environ.get("PYTHONPATH", "")]))}
    server, referee, web = start_server(folder / "serve", ladder=ladder, web_watchers=args.watchers, env=env)
    child = web_pid(server.pid)
    served_by = child or server.pid
    load: list[subprocess.Popen[bytes]] | list[subprocess.Popen[str]] = (
        ([start_sessions(referee, tokens, folder / "tokens.txt", play=True)] if args.client == "lean"
         else start_bots(referee, tokens)) if ladder
        else [start_load(folder, referee, folder / "serve" / "operator-token", args.concurrency)])
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
        what = (f"the hosted ladder with {args.bots} registered bots ({args.client} client)" if ladder
                else f"a tournament on it, {args.concurrency} games at once")
        print(f"server pid {server.pid}; games played on it while measured: {what} ({load_avg()})")
        paths = ("/", "/matches", "/api/standings", "/api/matches", f"/api/matches/{running}",
                 f"/api/bots/{names[0]}", f"/bots/{names[0]}", "/api/openapi.json")
        found = {path: sorted(timings(web, path, args.requests)) for path in paths}
        floor = found["/api/openapi.json"]  # reads nothing, computes nothing: the wait for the interpreter
        print(f"{'path':32} {'p50 ms':>8} {'p99 ms':>8} {'p99/floor':>9}   "
              f"(floor: /api/openapi.json, a request that reads nothing; goal p99 < 50 ms)")
        for path, t in found.items():
            print(f"{path[:32]:32} {statistics.median(t) * 1000:8.2f} {p99(t) * 1000:8.2f} "
                  f"{p99(t) / p99(floor):9.2f}")
        after = get_json(web, f"/api/matches/{running}")
        print(f"({load_avg()} after the requests; the match {running}: "
              f"{after.get('state') if isinstance(after, dict) else after} once all were made)")
        if args.probe:
            time.sleep(1.5)  # (the figures are written every second)
            print_probe(folder / "lag", {"server": server.pid, **({"its web process": child} if child else {})})

        base_rss = rss_kb(served_by)
        base_cpu, _ = measure_cpu(served_by, args.seconds, [])
        socks = open_watchers(web, args.watchers)
        time.sleep(1.0)
        drain(socks)
        with_rss = rss_kb(served_by)
        server_cpu = cpu_s(server.pid)
        t0 = time.monotonic()
        with_cpu, read = measure_cpu(served_by, args.seconds, socks)
        server_cpu = (cpu_s(server.pid) - server_cpu) / (time.monotonic() - t0)
        done = get_json(web, "/api/standings")
        assert isinstance(done, dict)
        print(f"\n{args.watchers} watchers ({load_avg()}) of /api/events held open for {args.seconds:.0f} s "
              f"(they read {read / 1024:.0f} KB of events in all; "
              f"{sum(r['games'] for r in done['standings']) // 2} games finished by then)")
        what = f"the web's own process (pid {child})" if child else "server"
        if child:
            print(f"(the server itself, referee and ladder: {server_cpu * 100:.1f}% of a core meanwhile)")
        print(f"{what} RSS: {base_rss / 1024:.1f} MB without watchers, {with_rss / 1024:.1f} MB with: "
              f"{(with_rss - base_rss) / args.watchers:.1f} KB per watcher")
        print(f"{what} CPU: {base_cpu * 100:.1f}% of a core without watchers, {with_cpu * 100:.1f}% with: "
              f"{(with_cpu - base_cpu) * 100 / args.watchers:.3f}% of a core per watcher")
        for s in socks:
            s.close()
    finally:
        stop([*load, server])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
