"""Honest matches under attack: ``referee serve`` with N honest matches played to their ends
(``bench/_attacker.py honest``: trivial bots, fixed seeds, one connection per seat), once alone
("calm") and once beside four attacker processes (``bench/_attacker.py``: all pinned to one core,
each keeping its CPU under a quarter of it, 127.0.0.1 only) that flood 5,000 messages a second,
never read, rapid-reset 10,000 streams a second and hold 300 idle connections. Both phases play
the same matches (same seeds, same bots); ``--rounds`` repeats the pair, interleaved.

    .venv/bin/python bench/attack.py                 # 200 matches, 2 rounds, the rapid-reset probe
    .venv/bin/python bench/attack.py --quick         # 40 matches, 1 round, a 200-stream probe

Passes when every honest match of every phase ended ``normal``, the honest p99 decision latency
attacked / calm is at most 2, and the referee's RSS peak stays under ``--rss-mb``. It prints the
attackers' measured CPU (from /proc, over the honest window) and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocol import PY, Proc, pct, split, start, start_referee, stop

ATTACKER = Path(__file__).resolve().parent / "_attacker.py"
ATTACKS = {
    "flood": ["flood", "--rate", "5000"],
    "noread": ["noread"],
    "reset": ["reset", "--rate", "10000"],
    "idle": ["idle", "-n", "300"],
}


def attackers(target: str, log_dir: Path, tag: str) -> list[Proc]:
    procs = []
    for name, argv in ATTACKS.items():
        p = start(f"attacker-{name}-{tag}", [PY, str(ATTACKER), *argv, "--target", target, "--seconds", "3600"],
                  log_dir)
        p.expect("READY", 30)
        procs.append(p)
    return procs


def end_attackers(procs: list[Proc]) -> dict[str, Any]:
    """SIGTERM each attacker and read what it says it did."""
    out = {}
    for p in procs:
        p.p.terminate()
        try:
            out[p.name.split("-")[1]] = json.loads(p.expect("DONE", 15))
        except (TimeoutError, RuntimeError) as e:
            out[p.name.split("-")[1]] = {"error": str(e)[:200]}
        stop(p)
    return out


class RssPeak:
    """Samples a process's RSS every 0.2 s on a thread; ``peak_mb`` the largest seen."""

    def __init__(self, proc: Proc) -> None:
        self.proc, self.peak_kb, self.done = proc, proc.rss_kb(), threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self.done.wait(0.2):
            try:
                self.peak_kb = max(self.peak_kb, self.proc.rss_kb())
            except (OSError, RuntimeError):
                return

    @property
    def peak_mb(self) -> float:
        return round(self.peak_kb / 1024, 1)


def phase(name: str, args: argparse.Namespace, tmp: Path, attack: bool) -> dict[str, Any]:
    """One referee, the N honest matches to their ends (and the attackers, if ``attack``)."""
    server, target = start_referee(f"referee-{name}", tmp, tmp / f"replays-{name}", "warning")
    rss = RssPeak(server)
    try:
        procs = attackers(target, tmp, name) if attack else []
        time.sleep(2 if attack else 0)  # the idle connections are open, the floods under way
        cpu0, t0 = [p.cpu() for p in procs], time.monotonic()
        honest, first = [], 0
        for i, n in enumerate(split(args.matches, args.honest_procs)):
            honest.append(start(f"honest-{name}-{i}", [
                PY, str(ATTACKER), "honest", "--target", target, "-n", str(n), "--first", str(first),
                "--points", str(args.points), "--think-ms", str(args.think_ms)], tmp))
            first += n
        dones = [json.loads(h.expect("DONE", args.timeout)) for h in honest]
        wall = time.monotonic() - t0
        shares = {p.name.split("-")[1]: round((p.cpu() - c) / wall, 3) for p, c in zip(procs, cpu0, strict=True)}
        said = end_attackers(procs)
        for h in honest:
            stop(h)
    finally:
        rss.done.set()
        stop(server)
    done = merge(dones)
    lat = sorted(done.pop("latencies"))
    return {**done, "decisions": len(lat), "p50_ms": round(pct(lat, 0.5) * 1e3, 2),
            "p99_ms": round(pct(lat, 0.99) * 1e3, 2), "rss_peak_mb": rss.peak_mb, "latencies": lat,
            "attacker_cpu_share": shares, "attacker_cpu_total": round(sum(shares.values()), 3),
            "attackers_said": said}


def merge(dones: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``DONE`` reports of the honest processes of one phase, as one."""
    endings: dict[str, int] = {}
    for d in dones:
        for k, v in d["endings"].items():
            endings[k] = endings.get(k, 0) + v
    return {"matches": sum(d["matches"] for d in dones), "endings": endings,
            "errors": [e for d in dones for e in d["errors"]][:3],
            "details": [x for d in dones for x in d["details"]][:3],
            "latencies": [x for d in dones for x in d["latencies"]], "wall_s": max(d["wall_s"] for d in dones),
            "longest_match_s": max(d["longest_match_s"] for d in dones)}


def reset_probe(tmp: Path, streams: int) -> dict[str, object]:
    """New ``Play`` streams on other connections while one connection rapid-resets 10,000
    streams a second, in one burst a second: each should get its own answer (``UNAUTHENTICATED``: the probe's token is
    unknown), none CANCELLED or UNAVAILABLE."""
    import grpc

    from gin_arena.v2 import bot_pb2
    server, target = start_referee("referee-resets", tmp, tmp / "replays-resets", "warning")
    attacker = start("attacker-resets", [PY, str(ATTACKER), "reset", "--rate", "10000", "--burst", "--target",
                                         target, "--seconds", "600", "--cpu-share", "1"], tmp)
    codes: dict[str, int] = {}
    try:
        attacker.expect("READY", 30)
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token="x" * 32, protocol_version=2)).SerializeToString()
        chans = [grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(10)]
        for i in range(streams):
            play = chans[i % 10].stream_stream("/gin_arena.v2.BotService/Play", request_serializer=None,
                                               response_deserializer=None)
            try:
                for _ in play(iter([hello]), timeout=10):
                    pass
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            codes[code] = codes.get(code, 0) + 1
        said = end_attackers([attacker])
    finally:
        stop(attacker)
        stop(server)
    failed = sum(n for c, n in codes.items() if c != "UNAUTHENTICATED")
    return {"streams": streams, "codes": codes, "failed": failed, "attacker": said.get("resets")}


def summary(phases: list[dict[str, Any]]) -> dict[str, Any]:
    """The calm or the attacked phases of every round together."""
    lat = sorted(x for p in phases for x in p["latencies"])
    endings: dict[str, int] = {}
    for p in phases:
        for k, v in p["endings"].items():
            endings[k] = endings.get(k, 0) + v
    return {"matches": sum(p["matches"] for p in phases), "endings": endings, "decisions": len(lat),
            "p50_ms": round(pct(lat, 0.5) * 1e3, 2), "p99_ms": round(pct(lat, 0.99) * 1e3, 2),
            "rss_peak_mb": max(p["rss_peak_mb"] for p in phases),
            "longest_match_s": max(p["longest_match_s"] for p in phases)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 matches, 1 round and a 200-stream probe")
    parser.add_argument("--matches", type=int, default=200, help="honest matches played at once (default 200)")
    parser.add_argument("--points", type=int, default=5, help="each honest match's target (default 5: a deal or two)")
    parser.add_argument("--think-ms", type=float, default=400, help="the honest bots' mean thinking time")
    parser.add_argument("--honest-procs", type=int, default=2, help="processes the honest bots run in (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="calm/attacked pairs, interleaved (default 2)")
    parser.add_argument("--rss-mb", type=float, default=300, help="the referee's RSS bound (default 300 MB)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a phase may take")
    parser.add_argument("--probe-streams", type=int, default=1000,
                        help="new Play streams opened during a rapid-reset burst (0: skip)")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.probe_streams, args.rounds = min(args.matches, 40), min(args.probe_streams, 200), 1
    print(f"load average before: {os.getloadavg()[0]:.2f}; {args.matches} matches to {args.points} points, "
          f"think {args.think_ms:g} ms, {args.rounds} round(s)", flush=True)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gin-attack-") as d:
        tmp = Path(d)
        if args.probe_streams:
            out["rapid_reset_probe"] = reset_probe(tmp, args.probe_streams)
            print("rapid reset probe:", json.dumps(out["rapid_reset_probe"]), flush=True)
        calm, hit = [], []
        for r in range(args.rounds):
            calm.append(phase(f"calm{r}", args, tmp, attack=False))
            hit.append(phase(f"attacked{r}", args, tmp, attack=True))
            for p in (calm[-1], hit[-1]):
                print(json.dumps({k: v for k, v in p.items() if k != "latencies"}), flush=True)
    out["calm"], out["attacked"] = summary(calm), summary(hit)
    out["attacker_cpu_total_max"] = max(p["attacker_cpu_total"] for p in hit)
    out["p99_ratio"] = round(out["attacked"]["p99_ms"] / max(1e-9, out["calm"]["p99_ms"]), 3)
    out["load_average_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=2))
    normal = all(set(s["endings"]) == {"normal"} for s in (out["calm"], out["attacked"]))
    probe_ok = not args.probe_streams or out["rapid_reset_probe"]["failed"] == 0
    ok = normal and probe_ok and out["p99_ratio"] <= 2 and out["attacked"]["rss_peak_mb"] < args.rss_mb
    print(f"every honest match normal: {normal}; p99 attacked/calm {out['p99_ratio']} (<= 2); referee RSS peak "
          f"{out['attacked']['rss_peak_mb']} MB (< {args.rss_mb:g} MB); attackers' CPU at most "
          f"{out['attacker_cpu_total_max']} of a core; probe failures "
          f"{out.get('rapid_reset_probe', {}).get('failed', '-')}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
