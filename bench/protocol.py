"""Protocol overhead: the referee against a bare grpc.aio ping-pong, side by side in one run.

    .venv/bin/python bench/protocol.py [--quick] [--window 5] [--reps 3] [--matches 500]

Server and clients run in separate processes over 127.0.0.1 (clients: ``bench/_protocol_client.py``):

* **bare**: a grpc.aio server (``BotService.Play`` answering every ``Ping`` with a ``Pong``, no
  referee, no trio) and an aio client doing lock-step round trips (one outstanding per stream).
* **referee**: ``referee serve`` (replays to a temp dir) with trivial bots that answer at once
  (knock / big gin if legal, else draw stock, pass the upcard, discard the highest deadwood
  card). Each match slot creates a match with ``CreateMatch`` (rules ``classic`` with a short
  ``target``, ``st=10``), opens one stream per seat and starts the next match when it ends.

Every stream has its own TCP connection (its own channel, local subchannel pool), as separate
bot processes would. Figures:

* CPU per round trip / decision: utime+stime of the server process from /proc/<pid>/stat over a
  fixed window after a warm-up, divided by what the clients completed in that window.
* decision overhead: measured at the clients — from a bot writing its action until the next
  action request of the same match arrives at either bot (both seats of a match live in the
  same client process).
* memory per match: VmRSS of a fresh referee from idle (after a two-match warm-up) to the moment
  every one of the concurrent matches has sent its first action request, divided by their number.

Bare and referee windows are interleaved (bare, referee, bare, referee, …) and medians taken:
the machine is shared, so only figures of one run are comparable.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "_protocol_client.py"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PY = sys.executable


# ----------------------------------------------------------------- processes
class Proc:
    """A child process with its stdout read line by line on a thread."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in kill()
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1,
            env={**os.environ, **(env or {})},
        )
        self.pid = self.p.pid
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, prefix: str, timeout: float) -> str:
        """The next stdout line starting with ``prefix`` (other lines are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: no {prefix!r} line within {timeout:g} s (log: {self.log_path})")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"{self.name} exited ({self.p.wait()}) before {prefix!r}; log: {self.log_path}\n"
                                   + self.log_path.read_text()[-3000:])
            if line.startswith(prefix):
                return line[len(prefix):].strip()

    def tell(self, line: str) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def cpu(self) -> float:
        """utime + stime in seconds (from /proc/<pid>/stat)."""
        return proc_cpu(self.pid)

    def rss_kb(self) -> int:
        return proc_rss_kb(self.pid)

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._log.close()


def proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime: fields 14 and 15 of stat


def proc_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


PROCS: list[Proc] = []


def start(name: str, argv: list[str], log_dir: Path, env: dict[str, str] | None = None) -> Proc:
    proc = Proc(name, argv, log_dir, env)
    PROCS.append(proc)
    return proc


def stop(proc: Proc) -> None:
    proc.kill()
    if proc in PROCS:
        PROCS.remove(proc)


# ----------------------------------------------------------------- servers
def start_bare(log_dir: Path) -> tuple[Proc, str]:
    proc = start("bare-server", [PY, str(CLIENT), "bare-server", "--port", "0"], log_dir)
    return proc, "127.0.0.1:" + proc.expect("PORT", 30)


def start_referee(name: str, log_dir: Path, replays: Path, log_level: str) -> tuple[Proc, str]:
    argv = [str(Path(PY).parent / "referee"), "serve", "--port", "0", "--replays", str(replays),
            "--log-level", log_level]
    proc = start(name, argv, log_dir)
    return proc, proc.expect("referee listening on", 30)


# ----------------------------------------------------------------- windows
@dataclass
class Window:
    """One measured window of one design."""

    design: str
    seconds: float
    server_cpu: float
    client_cpu: list[float]
    results: list[dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(r["count"] for r in self.results)

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    @property
    def cpu_per_op_us(self) -> float:
        return self.server_cpu / max(1, self.count) * 1e6

    def samples(self) -> list[float]:
        return sorted(x for r in self.results for x in r["samples"])

    def pct(self, q: float) -> float:
        s = self.samples()
        if not s:
            return float("nan")
        return s[min(len(s) - 1, int(q * len(s)))]


def run_window(
    design: str, server: Proc, client_argvs: list[list[str]], log_dir: Path, warmup: float, seconds: float,
    on_ready: Any = None,
) -> Window:
    """Start the clients, wait until every one is READY, warm up, measure, stop them."""
    clients = [start(f"{design}-client{i}", argv, log_dir) for i, argv in enumerate(client_argvs)]
    try:
        for c in clients:
            c.expect("READY", 120)
        extra = on_ready() if on_ready is not None else {}
        time.sleep(warmup)
        c0 = [c.cpu() for c in clients]
        s0 = server.cpu()
        t0 = time.monotonic()
        time.sleep(seconds)
        t1 = time.monotonic()
        s1 = server.cpu()
        c1 = [c.cpu() for c in clients]
        extra["rss_end_kb"] = server.rss_kb()
        for c in clients:
            c.tell(f"STOP {t0!r} {t1!r}")
        results = [json.loads(c.expect("RESULT", 60)) for c in clients]
        return Window(design, t1 - t0, s1 - s0, [b - a for a, b in zip(c0, c1, strict=True)], results, extra)
    finally:
        for c in clients:
            stop(c)


def client_argv(mode: str, target: str, n: int, args: argparse.Namespace) -> list[str]:
    argv = [PY, str(CLIENT), mode, "--target", target, "-n", str(n)]
    if mode == "bots":
        argv += ["--points", str(args.points)]
    return argv


def split(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts) if n // parts + (1 if i < n % parts else 0)]


# ----------------------------------------------------------------- report
def fmt_ms(s: float) -> str:
    return f"{s * 1e3:.3f} ms"


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition, short windows (~30 s)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved repetitions of each window (default 3)")
    parser.add_argument("--window", type=float, default=5.0, help="measured seconds per window (default 5)")
    parser.add_argument("--warmup", type=float, default=1.5, help="seconds of load before each window (default 1.5)")
    parser.add_argument("--streams", type=int, default=100, help="concurrent streams for (a) (default 100)")
    parser.add_argument("--matches", type=int, default=500, help="concurrent matches for (b) (default 500)")
    parser.add_argument("--clients", type=int, default=2, help="client processes for (b) (default 2)")
    parser.add_argument("--points", type=int, default=100, help="classic rules' game target (default 100)")
    parser.add_argument("--log-level", default="info", help="the referee's --log-level (default info)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, replays)")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.window, args.warmup = 1, 2.5, 1.0

    import grpc  # noqa: PLC0415 - only for the versions
    import google.protobuf  # noqa: PLC0415
    import trio  # noqa: PLC0415

    print(f"command: {shlex.join([PY, *sys.argv])}")
    print(f"python {sys.version.split()[0]} · grpcio {grpc.__version__} · protobuf {google.protobuf.__version__} · "
          f"trio {trio.__version__} · {os.cpu_count()} cpus · load avg {os.getloadavg()[0]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-protocol-"))
    replays = tmp / "replays"
    replays.mkdir()
    began = time.monotonic()
    rows: list[tuple[str, str, str, str]] = []
    try:
        bare, bare_addr = start_bare(tmp)
        ref, ref_addr = start_referee("referee", tmp, replays, args.log_level)
        print(f"bare server pid {bare.pid} at {bare_addr}; referee pid {ref.pid} at {ref_addr}: "
              f"{shlex.join(ref.argv)}")
        # Warm the referee (imports, first match) before any window.
        run_window("warm", ref, [client_argv("bots", ref_addr, 2, args)], tmp, 0.5, 0.5)

        w1: dict[str, list[Window]] = {"bare": [], "referee": []}
        wn: dict[str, list[Window]] = {"bare": [], "referee": []}
        for rep in range(args.reps):
            for design, server, addr, mode in (("bare", bare, bare_addr, "ping"), ("referee", ref, ref_addr, "bots")):
                w = run_window(design, server, [client_argv(mode, addr, 1, args)], tmp, args.warmup, args.window)
                w1[design].append(w)
                print(f"  rep {rep + 1} 1 stream/match   {design:8s} p50 {fmt_ms(w.pct(0.5))}  "
                      f"{w.rate:8.0f}/s  server CPU {w.cpu_per_op_us:6.1f} µs/op", flush=True)
            for design, server, addr, mode, n in (("bare", bare, bare_addr, "ping", args.streams),
                                                  ("referee", ref, ref_addr, "bots", args.streams // 2)):
                w = run_window(design, server, [client_argv(mode, addr, n, args)], tmp, args.warmup, args.window)
                wn[design].append(w)
                print(f"  rep {rep + 1} {args.streams} streams      {design:8s} p50 {fmt_ms(w.pct(0.5))} "
                      f"p99 {fmt_ms(w.pct(0.99))}  {w.rate:8.0f}/s  server CPU {w.cpu_per_op_us:6.1f} µs/op  "
                      f"client CPU {sum(w.client_cpu) / w.seconds * 100:4.0f}%", flush=True)
        ref_stats = [r for w in wn["referee"] for r in w.results]
        stop(bare)
        stop(ref)

        # (b): a fresh referee, many matches at once.
        big, big_addr = start_referee("referee-b", tmp, replays, args.log_level)
        run_window("warm-b", big, [client_argv("bots", big_addr, 2, args)], tmp, 0.3, 0.3)
        time.sleep(0.5)
        idle_kb = big.rss_kb()

        def at_ready() -> dict[str, Any]:
            return {"rss_ready_kb": big.rss_kb()}

        wb = run_window("b", big, [client_argv("bots", big_addr, n, args) for n in split(args.matches, args.clients)],
                        tmp, max(args.warmup, 2.0), args.window * (2 if not args.quick else 1), at_ready)
        stop(big)

        # ----- the table
        b1p50 = median([w.pct(0.5) for w in w1["bare"]])
        r1p50 = median([w.pct(0.5) for w in w1["referee"]])
        bn_rate = median([w.rate for w in wn["bare"]])
        bn_cpu = median([w.cpu_per_op_us for w in wn["bare"]])
        rn_rate = median([w.rate for w in wn["referee"]])
        rn_cpu = median([w.cpu_per_op_us for w in wn["referee"]])
        ratio = median([r.cpu_per_op_us / b.cpu_per_op_us for b, r in zip(wn["bare"], wn["referee"], strict=True)])
        per_match_kb = (wb.extra["rss_ready_kb"] - idle_kb) / args.matches
        b_p99 = wb.pct(0.99)
        dpm = [r["decisions_per_match"] for r in ref_stats if r["decisions_per_match"]]
        rows += [
            ("bare ping-pong p50, 1 stream", fmt_ms(b1p50), "(ref. 0.18 ms)", ""),
            (f"bare ping-pong, {args.streams} streams", f"{bn_rate:,.0f} rt/s", "(ref. ~18.8k)", ""),
            (f"bare server CPU per round trip, {args.streams} streams", f"{bn_cpu:.1f} µs", "(ref. ~51 µs)", ""),
            (f"referee, {args.streams} streams ({args.streams // 2} matches)", f"{rn_rate:,.0f} decisions/s", "", ""),
            (f"referee CPU per decision, {args.streams} streams", f"{rn_cpu:.1f} µs", "", ""),
            ("(a) referee CPU/decision ÷ bare CPU/round trip", f"{ratio:.2f}×", "≤ 1.3×", verdict(ratio <= 1.3)),
            (f"(b) p99 decision overhead, {args.matches} matches (client-side)", fmt_ms(b_p99), "< 20 ms",
             verdict(b_p99 < 0.020)),
            (f"    p50 / p99.9 at {args.matches} matches", f"{fmt_ms(wb.pct(0.5))} / {fmt_ms(wb.pct(0.999))}", "", ""),
            (f"    throughput / server CPU per decision at {args.matches} matches",
             f"{wb.rate:,.0f}/s / {wb.cpu_per_op_us:.0f} µs", "", ""),
            (f"    server CPU / client CPU ({len(wb.client_cpu)} procs) at {args.matches} matches",
             f"{wb.server_cpu / wb.seconds * 100:.0f}% / "
             + " + ".join(f"{c / wb.seconds * 100:.0f}%" for c in wb.client_cpu), "", ""),
            (f"(b) server memory per match ({args.matches} running)", f"{per_match_kb:.0f} KB", "< 200 KB",
             verdict(per_match_kb < 200)),
            ("    referee RSS idle / all running / end of window",
             f"{idle_kb / 1024:.0f} / {wb.extra['rss_ready_kb'] / 1024:.0f} / {wb.extra['rss_end_kb'] / 1024:.0f} MB",
             "", ""),
            ("(c) p50 decision overhead, 1 match (client-side)", fmt_ms(r1p50), "< 0.4 ms", verdict(r1p50 < 0.0004)),
            ("    same, ÷ bare p50 round trip", f"{r1p50 / b1p50:.2f}×", "", ""),
            ("    decisions per match (median)", f"{median(dpm):.0f}", "", ""),
        ]
        print()
        w0 = max(len(r[0]) for r in rows)
        print(f"{'figure':{w0}}  {'value':>22}  {'goal':>15}  result")
        for name, value, goal, res in rows:
            print(f"{name:{w0}}  {value:>22}  {goal:>15}  {res}")
        bad = sum(r.get("abnormal", 0) for w in (*w1["referee"], *wn["referee"], wb) for r in w.results)
        print(f"\nmatches not ending normally during the windows: {bad}; whole run {time.monotonic() - began:.0f} s; "
              f"medians of {args.reps} interleaved windows of {args.window:g} s (warm-up {args.warmup:g} s)")
        return 0
    finally:
        for proc in list(PROCS):
            stop(proc)
        if args.keep:
            print(f"logs and replays kept in {tmp}")
        else:
            import shutil  # noqa: PLC0415

            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
