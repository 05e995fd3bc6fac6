"""Honest matches under attack: ``referee serve`` with N honest matches (the trivial bots of
``bench/_protocol_client.py``), measured once alone and once while four attacker processes
(``bench/_attacker.py``, all pinned to one core, 127.0.0.1 only, bounded in time) flood
messages, never read, rapid-reset and hold idle connections.

    .venv/bin/python bench/attack.py                       # 200 matches, 20 s windows
    .venv/bin/python bench/attack.py --matches 50 --seconds 10

Passes when every honest match ended ``normal``, the honest p99 decision latency under attack is
within 2x of the run without, and the referee's RSS stays under ``--rss-mb``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocol import PY, Proc, Window, client_argv, run_window, split, start, start_referee, stop

ATTACKER = Path(__file__).resolve().parent / "_attacker.py"


def attackers(target: str, seconds: float, log_dir: Path) -> list[Proc]:
    argvs = {
        "flood": ["flood", "--rate", "5000"],
        "noread": ["noread"],
        "reset": ["reset", "--rate", "10000"],
        "idle": ["idle", "-n", "300"],
    }
    procs = []
    for name, argv in argvs.items():
        p = start(f"attacker-{name}", [PY, str(ATTACKER), *argv, "--target", target, "--seconds", str(seconds)],
                  log_dir)
        p.expect("READY", 30)
        procs.append(p)
    return procs


def window(name: str, args: argparse.Namespace, tmp: Path, attack: bool) -> tuple[Window, list[str]]:
    replays = tmp / f"replays-{name}"
    server, target = start_referee(f"referee-{name}", tmp, replays, "warning")
    done: list[str] = []
    try:
        argvs = [client_argv("bots", target, n, args) for n in split(args.matches, 2)]
        extra = attackers(target, args.seconds * 3 + 60, tmp) if attack else []
        w = run_window(name, server, argvs, tmp, args.warmup, args.seconds)
        w.extra["rss_peak_kb"] = max(w.extra["rss_t0_kb"], w.extra["rss_end_kb"])
        for p in extra:
            stop(p)
            done.append(p.name)
        return w, done
    finally:
        stop(server)


def reset_probe(tmp: Path, streams: int) -> dict[str, object]:
    """New ``Play`` streams on other connections while one connection rapid-resets 10,000
    streams a second: each should get its own answer (``UNAUTHENTICATED``: the probe's token is
    unknown), none CANCELLED or UNAVAILABLE."""
    import grpc

    from gin_arena.v1 import bot_pb2
    server, target = start_referee("referee-resets", tmp, tmp / "replays-resets", "warning")
    attacker = start("attacker-resets", [PY, str(ATTACKER), "reset", "--rate", "10000", "--target", target,
                                         "--seconds", "120"], tmp)
    codes: dict[str, int] = {}
    try:
        attacker.expect("READY", 30)
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(token="x" * 32, protocol_version=1)).SerializeToString()
        chans = [grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(10)]
        for i in range(streams):
            play = chans[i % 10].stream_stream("/gin_arena.v1.BotService/Play", request_serializer=None,
                                               response_deserializer=None)
            try:
                for _ in play(iter([hello]), timeout=10):
                    pass
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            codes[code] = codes.get(code, 0) + 1
    finally:
        stop(attacker)
        stop(server)
    failed = sum(n for c, n in codes.items() if c != "UNAUTHENTICATED")
    return {"streams": streams, "codes": codes, "failed": failed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--rss-mb", type=float, default=400)
    parser.add_argument("--probe-streams", type=int, default=1000,
                        help="new Play streams opened during a rapid-reset burst (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gin-attack-") as d:
        tmp = Path(d)
        if args.probe_streams:
            probe = reset_probe(tmp, args.probe_streams)
            print("rapid reset, 10,000 HEADERS+RST_STREAM a second on one connection; new streams on others:",
                  json.dumps(probe), flush=True)
        calm, _ = window("calm", args, tmp, attack=False)
        hit, who = window("attacked", args, tmp, attack=True)
    figures = {}
    for w in (calm, hit):
        figures[w.design] = {
            "decisions": w.count, "decisions_per_s": round(w.rate), "p50_ms": round(w.pct(0.5) * 1e3, 3),
            "p99_ms": round(w.pct(0.99) * 1e3, 3), "abnormal": sum(r["abnormal"] for r in w.results),
            "matches_finished": sum(r["matches_finished"] for r in w.results),
            "errors": [e for r in w.results for e in r["errors"]][:3], "rss_peak_mb": w.extra["rss_peak_kb"] / 1e3,
        }
    print(json.dumps({"matches": args.matches, "seconds": args.seconds, "attackers": who, **figures}, indent=2))
    ok = (figures["attacked"]["abnormal"] == 0 and figures["calm"]["abnormal"] == 0
          and figures["attacked"]["p99_ms"] <= 2 * figures["calm"]["p99_ms"]
          and figures["attacked"]["rss_peak_mb"] < args.rss_mb)
    print(f"every honest match normal, p99 within 2x, RSS under {args.rss_mb:g} MB: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
