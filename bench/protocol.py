"""Protocol overhead: the referee against a bare grpc.aio ping-pong, side by side in one run.

    .venv/bin/python bench/protocol.py            # ~3 min: 3 interleaved reps, then (b)
    .venv/bin/python bench/protocol.py --quick    # ~35 s: bare and referee only, 1 rep
    .venv/bin/python bench/protocol.py --ab DIR --designs referee-ab --skip-b
                                                  # A/B a patched copy of the referee package
    .venv/bin/python bench/protocol.py --ab-python .venv-compiled/bin/python --designs referee-ab,lean-ab --skip-b
                                                  # A/B the compiled build (mypyc) against this one

Servers and clients run in separate processes over 127.0.0.1 (the clients and the echo servers
are ``bench/_protocol_client.py``). Interleaved designs, each at 1 stream (1 match) and at
``--streams`` (100) concurrent streams (50 matches):

* **bare**: a grpc.aio server (``BotService.Play`` answering every ``Ping`` with a ``Pong``; no
  referee, no trio) and an aio client doing lock-step round trips (one outstanding per stream).
* **bare3**: the same server answering with the referee's pattern per decision: two small
  ``event`` messages, then a typical ``ActionRequest`` (~540 bytes): the gRPC cost of the protocol.
* **relay**: the gRPC floor of any two-seat referee, no game: a grpc.aio server pairing the
  streams (``--streams``/2 lock-step pairs, like matches) and relaying each message to the
  partner as a typical action request, through a queue and a writer task as the referee does.
* **lean**: the same with bots that set ``Hello.skip_event_messages`` (as the Python kit's bots do
  unless they read events): one message per decision instead of three.
* **referee**: ``referee serve`` (replays to a temp dir) with trivial bots that answer at once
  (knock / big gin if legal, else draw stock, pass the upcard, discard the highest deadwood
  card). Each match slot creates a match with ``CreateMatch`` (rules ``classic`` with
  ``target=--points``, ``st=10``), opens one stream per seat and starts the next match when it ends.

Then (b): a fresh referee with ``--matches`` (500) matches at once over ``--clients`` (2) client
processes, held until every match has sent its first request (memory is read then), released,
and measured; and (b') the same with bots thinking (by default so that the offered load is half
the throughput the 500 matches reached with instant bots). (b)'s bots are lean unless ``--b-bots events``.

Every stream has its own TCP connection (its own channel, local subchannel pool), as separate
bot processes would. Figures:

* CPU per round trip / decision: utime+stime of the server process from /proc/<pid>/stat over a
  fixed window after a warm-up, divided by what the clients completed in that window.
* decision overhead: measured at the clients — from a bot writing its action until the next
  action request of the same match arrives at either bot (both seats of a match live in the
  same client process). It excludes the bots' thinking and includes both network hops.
* memory per match: VmRSS (/proc/<pid>/status) of a fresh referee from idle (after a two-match
  warm-up) to the moment every one of the concurrent matches has sent its first action request,
  divided by their number; and the growth per decision played afterwards.

Windows of the designs are interleaved (bare, bare3, relay, referee, lean, bare, …) and medians
taken: the machine is shared, so only figures of one run are comparable. Every child process is
stopped on exit (and gets SIGTERM if this process dies); ports are picked by the OS (port 0).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import queue
import shlex
import signal
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
def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when this bench process dies, however it dies."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no such call
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Proc:
    """A child process with its stdout read line by line on a thread."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, env: dict[str, str] | None = None) -> None:
        # cwd: the temp dir, so that `python -m` does not put this checkout's folder first on sys.path
        self.name = name
        self.argv = argv
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in kill()
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1,
            env={**os.environ, **(env or {})}, cwd=log_dir, preexec_fn=_die_with_parent,
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


def main_thread_cpu(pid: int) -> tuple[float, float]:
    """The process's main thread (the event loop's: Python, and the sendmsg of every write):
    its user and system seconds (/proc/<pid>/task/<pid>/stat). The rest of the process's CPU is
    gRPC's own threads (event engine, completion-queue poller) and trio's I/O thread."""
    with open(f"/proc/{pid}/task/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


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
def start_echo(kind: str, log_dir: Path) -> tuple[Proc, str]:
    """``bare-server`` (the echo) or ``relay-server`` (pairs of streams), grpc.aio only."""
    proc = start(kind, [PY, str(CLIENT), kind, "--port", "0"], log_dir)
    return proc, "127.0.0.1:" + proc.expect("PORT", 30)


# The referee's operator token: every process of the bench inherits it (the referee reads it,
# the bench clients send it).
os.environ.setdefault("GIN_ARENA_OPERATOR_TOKEN", os.urandom(32).hex())


def start_referee(
    name: str, log_dir: Path, replays: Path, log_level: str, code: Path | None = None, python: str | None = None
) -> tuple[Proc, str]:
    """``referee serve`` on a free port; with ``code``, the ``referee`` package found in that
    folder instead of the installed one (for A/B runs of a patched copy); with ``python``, the
    package installed in that interpreter's environment (e.g. the compiled build's venv)."""
    opts = ["--listen", "127.0.0.1:0", "--replays", str(replays), "--log-level", log_level]
    if code is not None and "--listen" not in (code / "referee" / "cli.py").read_text():
        opts[:2] = ["--port", "0"]  # a copy from before the one address spelling
    if python is not None:  # -P and the temp dir as cwd: this checkout stays off its path
        proc = start(name, [os.path.abspath(python), "-P", "-m", "referee.cli", "serve", *opts], log_dir)
    elif code is None:
        proc = start(name, [str(Path(PY).parent / "referee"), "serve", *opts], log_dir)
    else:
        proc = start(name, [PY, "-m", "referee.cli", "serve", *opts], log_dir,
                     env={"PYTHONPATH": str(code.resolve())})
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

    def split_us(self) -> tuple[float, float, float]:
        """The server's CPU per op: its main thread's user and system time, the other threads'."""
        n = max(1, self.count)
        user, sys_ = self.extra["main_user_s"], self.extra["main_sys_s"]
        return user / n * 1e6, sys_ / n * 1e6, (self.server_cpu - user - sys_) / n * 1e6

    def samples(self) -> list[float]:
        return sorted(x for r in self.results for x in r["samples"])

    def pct(self, q: float) -> float:
        return pct(self.samples(), q)


def run_window(
    design: str, server: Proc, client_argvs: list[list[str]], log_dir: Path, warmup: float, seconds: float,
    on_started: Any = None,
) -> Window:
    """Start the clients, wait until every one is READY, warm up, measure, stop them. With
    ``on_started`` the clients hold their matches until all have started (``--hold``); it is
    called then, before they are released."""
    clients = [start(f"{design}-client{i}", argv + (["--hold"] if on_started else []), log_dir)
               for i, argv in enumerate(client_argvs)]
    try:
        extra: dict[str, Any] = {}
        t_start = time.monotonic()
        if on_started is not None:
            for c in clients:
                c.expect("STARTED", 180)
            extra["ramp_s"] = time.monotonic() - t_start
            extra.update(on_started())
            for c in clients:
                c.tell("GO")
        for c in clients:
            c.expect("READY", 180)
        time.sleep(warmup)
        extra["rss_t0_kb"] = server.rss_kb()
        c0 = [c.cpu() for c in clients]
        s0, m0 = server.cpu(), main_thread_cpu(server.pid)
        t0 = time.monotonic()
        time.sleep(seconds)
        t1 = time.monotonic()
        s1, m1 = server.cpu(), main_thread_cpu(server.pid)
        extra["main_user_s"], extra["main_sys_s"] = m1[0] - m0[0], m1[1] - m0[1]
        c1 = [c.cpu() for c in clients]
        extra["rss_end_kb"] = server.rss_kb()
        for c in clients:
            c.tell(f"STOP {t0!r} {t1!r}")
        results = [json.loads(c.expect("RESULT", 60)) for c in clients]
        return Window(design, t1 - t0, s1 - s0, [b - a for a, b in zip(c0, c1, strict=True)], results, extra)
    finally:
        for c in clients:
            stop(c)


def client_argv(mode: str, target: str, n: int, args: argparse.Namespace, *, replies: int = 1,
                think_ms: float = 0) -> list[str]:
    argv = [PY, str(CLIENT), mode.removesuffix("-lean"), "--target", target, "-n", str(n)]
    if mode.startswith("bots"):
        argv += ["--points", str(args.points), "--think-ms", str(think_ms)]
        if mode == "bots-lean":
            argv.append("--skip-events")
    else:
        argv += ["--replies", str(replies)]
    return argv


def split(n: int, parts: int) -> list[int]:
    sizes = [n // parts + (1 if i < n % parts else 0) for i in range(parts)]
    return [s for s in sizes if s]


# ----------------------------------------------------------------- report
def fmt_ms(s: float) -> str:
    return f"{s * 1e3:.3f} ms"


def replay_decisions(folder: Path) -> list[float]:
    """Decisions of every match that ended normally, from its replay's result record."""
    out = []
    for path in folder.glob("*.jsonl"):
        last = json.loads(path.read_bytes().rstrip().rsplit(b"\n", 1)[-1])
        if last.get("termination") == "normal":
            out.append(float(last["decisions"]))
    return out


def pct(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


DESIGNS = {
    "bare": "bare grpc.aio echo: 1 reply per round trip",
    "bare3": "bare grpc.aio, the referee's writes: 2 events + 1 request per round trip",
    "relay": "grpc.aio relaying each message to the paired stream (a referee without a game)",
    "referee": "referee serve + trivial bots (per decision)",
    "lean": "the same bots asking for no event messages (Hello.skip_event_messages): 1 write per decision",
    "referee-ab": "the referee package of --ab DIR (or --ab-python), same bots",
    "lean-ab": "the referee package of --ab DIR (or --ab-python), lean bots",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one repetition, short windows, bare/referee only (~40 s)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved repetitions of each window (default 3)")
    parser.add_argument("--window", type=float, default=3.0, help="measured seconds per window (default 3; "
                        "(b) uses 3x this)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of load before each window (default 1)")
    parser.add_argument("--streams", type=int, default=100, help="concurrent streams for (a) (default 100)")
    parser.add_argument("--matches", type=int, default=500, help="concurrent matches for (b) (default 500)")
    parser.add_argument("--clients", type=int, default=2, help="client processes for (b) (default 2)")
    parser.add_argument("--points", type=int, default=100, help="classic rules' game target (default 100)")
    parser.add_argument("--think-ms", type=float, default=-1.0,
                        help="(b') (b) again with bots thinking this long on average (uniform 0.5x-1.5x); default: "
                             "so that the offered load is half the throughput of (b) with instant bots; 0: skip")
    parser.add_argument("--log-level", default="info", help="the referee's --log-level (default info)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, replays)")
    parser.add_argument("--ab", type=Path, metavar="DIR",
                        help="also run the referee package found in DIR (a patched copy: DIR/referee/...) "
                             "in the interleaved windows, as design referee-ab")
    parser.add_argument("--ab-python", metavar="PYTHON",
                        help="instead of --ab: the referee installed for interpreter PYTHON (e.g. the compiled "
                             "build, .venv-compiled/bin/python) as design referee-ab")
    parser.add_argument("--designs", default="", help="comma-separated subset of the interleaved designs")
    parser.add_argument("--skip-b", action="store_true", help="skip (b) (the 500-match runs)")
    parser.add_argument("--b-bots", choices=["lean", "events"], default="lean",
                        help="(b)'s bots: lean (no event messages, as the sample bots; default) or events")
    return parser


def main() -> int:
    args = build_parser().parse_args()
    if args.quick:
        args.reps, args.window, args.warmup, args.think_ms = 1, 2.0, 0.7, 0.0

    import google.protobuf
    import grpc
    import trio

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally below (children are stopped)

    print(f"command: {shlex.join([PY, *sys.argv])}")
    print(f"python {sys.version.split()[0]} · grpcio {grpc.__version__} · protobuf {google.protobuf.__version__} · "
          f"trio {trio.__version__} · {os.cpu_count()} cpus · load avg {os.getloadavg()[0]:.2f} (before start)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-protocol-"))
    replays = tmp / "replays"
    replays.mkdir()
    began = time.monotonic()
    try:
        w1, wn, mem = run_interleaved(args, tmp, replays)
        wb = run_many_matches(args, tmp, replays)
        report(args, w1, wn, wb, replays, mem)
        print(f"whole run {time.monotonic() - began:.0f} s; load avg now {os.getloadavg()[0]:.2f}; medians of "
              f"{args.reps} interleaved windows of {args.window:g} s after {args.warmup:g} s of warm-up")
        return 0
    finally:
        for proc in list(PROCS):
            stop(proc)
        if args.keep:
            print(f"logs and replays kept in {tmp}")
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


def run_interleaved(
    args: argparse.Namespace, tmp: Path, replays: Path
) -> tuple[dict[str, list[Window]], dict[str, list[Window]], tuple[int, int, int, int]]:
    """(a): the designs' windows at 1 and ``--streams`` streams, interleaved; the windows and the
    referee's memory (idle and after) with its replay counts."""
    bare, bare_addr = start_echo("bare-server", tmp)
    relay, relay_addr = start_echo("relay-server", tmp)
    ref, ref_addr = start_referee("referee", tmp, replays, args.log_level)
    print(f"servers: bare pid {bare.pid}, relay pid {relay.pid}, referee pid {ref.pid}: {shlex.join(ref.argv)}")
    setups = {
        "bare": (bare, "ping", bare_addr, 1, 1), "bare3": (bare, "ping", bare_addr, 1, 3),
        "relay": (relay, "relay", relay_addr, 1, 1), "referee": (ref, "bots", ref_addr, 2, 1),
        "lean": (ref, "bots-lean", ref_addr, 2, 1),
    }
    if args.ab or args.ab_python:
        ab_replays = tmp / "replays-ab"
        ab_replays.mkdir()
        ab, ab_addr = start_referee("referee-ab", tmp, ab_replays, args.log_level, args.ab, args.ab_python)
        where = f"PYTHONPATH={args.ab}" if args.ab_python is None else "installed"
        print(f"A/B: referee-ab pid {ab.pid}: {where} {shlex.join(ab.argv)}")
        setups["referee-ab"] = (ab, "bots", ab_addr, 2, 1)
        setups["lean-ab"] = (ab, "bots-lean", ab_addr, 2, 1)
        run_window("warm", ab, [client_argv("bots", ab_addr, 2, args)], tmp, 0.5, 0.5)
    # Warm the referee (imports, first matches) before any window.
    run_window("warm", ref, [client_argv("bots", ref_addr, 2, args)], tmp, 0.5, 0.5)
    time.sleep(0.3)
    ref_idle_kb, ref_idle_replays = ref.rss_kb(), len(list(replays.iterdir()))

    n = args.streams
    names = ["bare", "referee", "lean"] if args.quick else [d for d in DESIGNS if d in setups]
    if args.designs:
        names = [d for d in args.designs.split(",") if d in setups]
        names = list(dict.fromkeys(["bare", "referee", *names]))  # the table needs these two
    w1: dict[str, list[Window]] = {d: [] for d in names}
    wn: dict[str, list[Window]] = {d: [] for d in names}
    for rep in range(args.reps):
        for streams, store in ((1, w1), (n, wn)):
            for design in names:
                server, mode, addr, per, replies = setups[design]
                argv = client_argv(mode, addr, max(1, streams // per), args, replies=replies)
                w = run_window(design, server, [argv], tmp, args.warmup, args.window)
                store[design].append(w)
                print(f"  rep {rep + 1} {streams:3d} stream(s)  {design:8s} p50 {fmt_ms(w.pct(0.5))} "
                      f"p99 {fmt_ms(w.pct(0.99))}  {w.rate:6.0f}/s  server CPU {w.cpu_per_op_us:6.1f} µs/op"
                      " (main thread user {:.0f} + sys {:.0f}, other threads {:.0f})".format(*w.split_us())
                      + f"  client CPU {sum(w.client_cpu) / w.seconds * 100:3.0f}%", flush=True)
    ref_after_kb, ref_after_replays = ref.rss_kb(), len(list(replays.iterdir()))
    for proc, *_ in setups.values():
        stop(proc)
    return w1, wn, (ref_idle_kb, ref_idle_replays, ref_after_kb, ref_after_replays)


def run_many_matches(args: argparse.Namespace, tmp: Path, replays: Path) -> dict[float, Window]:
    """(b): a fresh referee, many matches at once (held until all have started, then released),
    with instant bots and then (b') with thinking bots; the windows by think time."""
    wb: dict[float, Window] = {}
    b_mode = "bots-lean" if args.b_bots == "lean" else "bots"
    for think in () if args.skip_b else (0.0, *([args.think_ms] if args.think_ms else [])):
        if think < 0:  # half the capacity: what the same 500 matches did with instant bots
            think = args.think_ms = round(1000 * args.matches / (0.5 * wb[0.0].rate))
        big, big_addr = start_referee(f"referee-b{think:g}", tmp, replays, args.log_level)
        run_window("warm-b", big, [client_argv("bots", big_addr, 2, args)], tmp, 0.3, 0.3)
        time.sleep(0.3)
        idle = big.rss_kb()

        def at_start(big: Proc = big) -> dict[str, Any]:
            return {"rss_started_kb": big.rss_kb()}

        w = run_window(f"b{think:g}", big, [client_argv(b_mode, big_addr, k, args, think_ms=think)
                                             for k in split(args.matches, args.clients)],
                       tmp, max(args.warmup, 2.0), args.window * 3, at_start)
        w.extra["rss_idle_kb"] = idle
        wb[think] = w
        stop(big)
        print(f"  {args.matches} matches, think {think:g} ms: ramp {w.extra['ramp_s']:.1f} s, "
              f"p50 {fmt_ms(w.pct(0.5))} p99 {fmt_ms(w.pct(0.99))}, {w.rate:.0f} decisions/s, "
              f"server CPU {w.cpu_per_op_us:.0f} µs/decision", flush=True)
    return wb


def report(
    args: argparse.Namespace, w1: dict[str, list[Window]], wn: dict[str, list[Window]], wb: dict[float, Window],
    replays: Path, mem: tuple[int, int, int, int],
) -> None:
    n = args.streams
    rows: list[tuple[str, str, str, str]] = []

    def med(ws: list[Window], f: Any) -> float:
        return median([f(w) for w in ws])

    def cpu(w: Window) -> float:
        return w.cpu_per_op_us

    def p50(w: Window) -> float:
        return w.pct(0.5)

    b1p50, r1p50 = med(w1["bare"], p50), med(w1["referee"], p50)
    bn_cpu, rn_cpu = med(wn["bare"], cpu), med(wn["referee"], cpu)
    ratio = median([r.cpu_per_op_us / b.cpu_per_op_us for b, r in zip(wn["bare"], wn["referee"], strict=True)])
    rows += [
        ("bare ping-pong p50 round trip, 1 stream", fmt_ms(b1p50), "(ref. 0.18 ms)", ""),
        (f"bare ping-pong, {n} streams", f"{med(wn['bare'], lambda w: w.rate):,.0f} rt/s", "(ref. ~18.8k)", ""),
        (f"bare server CPU per round trip, {n} streams", f"{bn_cpu:.1f} µs", "(ref. ~51 µs)", ""),
        (f"referee, {n} streams ({n // 2} matches)", f"{med(wn['referee'], lambda w: w.rate):,.0f} decisions/s",
         "", ""),
        (f"referee CPU per decision, {n} streams", f"{rn_cpu:.1f} µs", "", ""),
        ("(a) referee CPU/decision ÷ bare CPU/round trip", f"{ratio:.2f}×", "≤ 1.3×", verdict(ratio <= 1.3)),
    ]
    if wn.get("lean"):
        lean_ratio = median([r.cpu_per_op_us / b.cpu_per_op_us for b, r in zip(wn["bare"], wn["lean"], strict=True)])
        rows += [
            (f"referee, lean bots (no event messages), {n} streams",
             f"{med(wn['lean'], lambda w: w.rate):,.0f} decisions/s", "", ""),
            (f"referee CPU per decision, lean bots, {n} streams", f"{med(wn['lean'], cpu):.1f} µs", "", ""),
            ("(a) lean: referee CPU/decision ÷ bare CPU/round trip", f"{lean_ratio:.2f}×", "≤ 1.3×",
             verdict(lean_ratio <= 1.3)),
        ]
    for d in ("bare3", "relay"):
        if wn.get(d):
            rows.append((f"    {d}: {DESIGNS[d]}", f"{med(wn[d], cpu):.1f} µs = {med(wn[d], cpu) / bn_cpu:.2f}×",
                         "", ""))
    rows += split_rows(wn)
    rn_client = med(wn["referee"], lambda w: sum(w.client_cpu) / w.seconds)
    starts = sorted(x for w in wn["referee"] for r in w.results for x in r["start_latency"])
    rows.append((f"    client CPU (1 process) at {n} streams, referee", f"{rn_client * 100:.0f}%", "", ""))
    if starts:
        rows.append((f"    match start (CreateMatch → 1st request) at {n} streams, p50/max of {len(starts)}",
                     f"{fmt_ms(pct(starts, 0.5))} / {fmt_ms(pct(starts, 1.0))}", "", ""))
    if "referee-ab" in wn:
        ab_ratio = median([a.cpu_per_op_us / r.cpu_per_op_us
                           for r, a in zip(wn["referee"], wn["referee-ab"], strict=True)])
        rows += [
            (f"A/B: referee-ab CPU per decision, {n} streams", f"{med(wn['referee-ab'], cpu):.1f} µs", "", ""),
            ("    referee-ab ÷ referee (median of per-rep ratios)", f"{ab_ratio:.2f}×", "", ""),
            ("    referee-ab ÷ bare", f"{med(wn['referee-ab'], cpu) / bn_cpu:.2f}×", "≤ 1.3×",
             verdict(med(wn["referee-ab"], cpu) / bn_cpu <= 1.3)),
            ("    1 match p50 decision overhead, referee / referee-ab",
             f"{fmt_ms(r1p50)} / {fmt_ms(med(w1['referee-ab'], p50))}", "", ""),
        ]
    if "lean-ab" in wn and "lean" in wn:
        rows += lean_ab_rows(w1, wn, n)
    idle_kb, idle_replays, after_kb, after_replays = mem
    dpm = replay_decisions(replays) or [float("nan")]
    if 0.0 in wb:
        rows += b_rows(args, wb, dpm)
    rows += [
        ("(c) p50 decision overhead, 1 match (client-side)", fmt_ms(r1p50), "< 0.4 ms", verdict(r1p50 < 0.0004)),
        ("    ÷ bare p50 round trip", f"{r1p50 / b1p50:.2f}×", "", ""),
    ]
    if w1.get("lean"):
        l1p50 = med(w1["lean"], p50)
        rows.append(("(c) lean: p50 decision overhead, 1 match", fmt_ms(l1p50), "< 0.4 ms", verdict(l1p50 < 0.0004)))
    for d in ("bare3", "relay"):
        if w1.get(d):
            rows.append((f"    1 stream {d} p50 round trip", fmt_ms(med(w1[d], p50)), "", ""))
    rows += [
        ("    1 stream: server CPU per op, bare / referee",
         f"{med(w1['bare'], cpu):.0f} / {med(w1['referee'], cpu):.0f} µs", "", ""),
        (f"decisions per match (classic, target {args.points}; median of {len(dpm)})", f"{median(dpm):.0f}", "", ""),
    ]
    if after_replays - idle_replays >= 20:  # finished tables stay in the referee: what each one costs
        rows.append((f"referee RSS growth per match ended in (a)+(c) ({after_replays - idle_replays}, all kept; "
                     "most cut at window ends)",
                     f"{(after_kb - idle_kb) / (after_replays - idle_replays):.0f} KB", "", ""))
    print()
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':{width}}  {'value':>23}  {'goal':>14}  result")
    for name, value, goal, res in rows:
        print(f"{name:{width}}  {value:>23}  {goal:>14}  {res}")
    everything = [*[w for ws in w1.values() for w in ws], *[w for ws in wn.values() for w in ws], *wb.values()]
    bad = sum(r.get("abnormal", 0) for w in everything for r in w.results)
    errors = [e for w in everything for r in w.results for e in r.get("errors", [])]
    print(f"\nmatches not ending normally inside the runs: {bad}; client errors: {len(errors)}"
          + (f" (first: {errors[0][:200]})" if errors else ""))


def lean_ab_rows(w1: dict[str, list[Window]], wn: dict[str, list[Window]], n: int) -> list[tuple[str, str, str, str]]:
    """The lean A/B: the other referee's CPU per decision against this one's and against bare's
    (medians of per-rep ratios), and its one-match overhead."""
    def ratios(over: str, under: str) -> float:
        return median([a.cpu_per_op_us / b.cpu_per_op_us for b, a in zip(wn[under], wn[over], strict=True)])

    ab_p50, lean_p50 = (median([w.pct(0.5) for w in w1[d]]) for d in ("lean-ab", "lean"))
    return [
        (f"A/B: lean-ab CPU per decision, {n} streams", f"{median([w.cpu_per_op_us for w in wn['lean-ab']]):.1f} µs",
         "", ""),
        ("    lean-ab ÷ lean (median of per-rep ratios)", f"{ratios('lean-ab', 'lean'):.2f}×", "", ""),
        ("    lean-ab ÷ bare (median of per-rep ratios)", f"{ratios('lean-ab', 'bare'):.2f}×", "≤ 1.5× compiled", ""),
        ("    1 match p50 decision overhead, lean / lean-ab", f"{fmt_ms(lean_p50)} / {fmt_ms(ab_p50)}", "", ""),
    ]


def split_rows(wn: dict[str, list[Window]]) -> list[tuple[str, str, str, str]]:
    """Where each design's server CPU goes: the main thread (Python, and the kernel's side of
    its sendmsg/recvfrom/epoll) against gRPC's own threads (they read the sockets)."""
    return [(f"    {d}: CPU per op, main thread user · sys · other threads",
             " · ".join(f"{median([w.split_us()[i] for w in ws]):.0f}" for i in range(3)) + " µs", "", "")
            for d, ws in wn.items()]


def b_rows(args: argparse.Namespace, wb: dict[float, Window], dpm: list[float]) -> list[tuple[str, str, str, str]]:
    w0 = wb[0.0]
    b_p99 = w0.pct(0.99)
    grow_kb = (w0.extra["rss_end_kb"] - w0.extra["rss_t0_kb"]) / max(1, w0.count)
    per_match_kb = (w0.extra["rss_started_kb"] - w0.extra["rss_idle_kb"]) / args.matches
    rows = [
        (f"(b) p99 decision overhead, {args.matches} matches, instant {args.b_bots} bots", fmt_ms(b_p99), "< 20 ms",
         verdict(b_p99 < 0.020)),
        ("    p50 / p99.9", f"{fmt_ms(w0.pct(0.5))} / {fmt_ms(w0.pct(0.999))}", "", ""),
        ("    decisions/s · server CPU per decision", f"{w0.rate:,.0f}/s · {w0.cpu_per_op_us:.0f} µs", "", ""),
        (f"    Little's law: {args.matches} matches ÷ throughput", fmt_ms(args.matches / max(w0.rate, 1e-9)), "", ""),
        (f"    CPU: server · {len(w0.client_cpu)} client procs",
         f"{w0.server_cpu / w0.seconds * 100:.0f}% · "
         + " + ".join(f"{c / w0.seconds * 100:.0f}%" for c in w0.client_cpu), "", ""),
        (f"    time for all {args.matches} matches to connect and start", f"{w0.extra['ramp_s']:.1f} s", "", ""),
    ]
    if args.think_ms and args.think_ms in wb:
        wt = wb[args.think_ms]
        rows += [
            (f"(b') same, bots thinking ~{args.think_ms:g} ms (½ capacity): p50 / p99",
             f"{fmt_ms(wt.pct(0.5))} / {fmt_ms(wt.pct(0.99))}", "(< 20 ms)", verdict(wt.pct(0.99) < 0.020)),
            ("    decisions/s · server CPU", f"{wt.rate:,.0f}/s · {wt.server_cpu / wt.seconds * 100:.0f}%", "", ""),
        ]
    rows += [
        (f"(b) server memory per match ({args.matches} started)", f"{per_match_kb:.0f} KB", "< 200 KB",
         verdict(per_match_kb < 200)),
        ("    referee RSS idle / all started / end of window",
         f"{w0.extra['rss_idle_kb'] / 1024:.0f} / {w0.extra['rss_started_kb'] / 1024:.0f} / "
         f"{w0.extra['rss_end_kb'] / 1024:.0f} MB", "", ""),
        (f"    RSS growth per decision played in the window ({w0.count:,} decisions)", f"{grow_kb:.2f} KB", "", ""),
        (f"    → per match half-way through a median match ({median(dpm) / 2:.0f} decisions)",
         f"{per_match_kb + grow_kb * median(dpm) / 2:.0f} KB", "(< 200 KB)",
         verdict(per_match_kb + grow_kb * median(dpm) / 2 < 200)),
    ]
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
