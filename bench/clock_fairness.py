"""Clock fairness under load: time forfeits that the bots did not cause.

    .venv/bin/python bench/clock_fairness.py [--loads 0,2,4] [--clocks cpu,wall] [--seconds 60]
                                             [--think-ms 300] [--tc "st=1 timemargin=50"] [--concurrency 2]

Each bot is ``bench/_busy_bot.py``: it spins ``--think-ms`` of its own CPU time per decision,
well inside its time, so every time forfeit is the machine's fault, not the bot's. For each load
level (that many busy-loop processes, started and stopped by the bench) and each seat clock
(``cpu``: the bots' process-tree CPU time; ``wall``: the referee's clock without its own loop's
stalls), ``--concurrency`` Gin matches (rules ``short``) are kept running on an embedded referee
for ``--seconds``; the matches running then may finish for at most ``--grace`` seconds more,
then they are cancelled (their decisions so far are counted: a time forfeit would have ended
them). Printed per level: games finished, games cut short, decisions, time forfeits, other
faults, and the referee loop's worst stall. Bounded in time: about (seconds + grace) x levels x
clocks.

Run against another source tree (``PYTHONPATH=TREE``, e.g. the code before the seat clocks) the
bench notes that it has no seat clocks and times by wall clock only.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio

import referee
import referee.lowlevel
from referee import BotLaunch, MatchSpec, TimeControl
from referee.gin import RuleSet

BUSY_BOT = str(Path(__file__).resolve().parent / "_busy_bot.py")
HOG = "while True:\n    pass\n"


def start_load(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` busy-loop processes (one core's worth of demand each)."""
    return [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.send_signal(signal.SIGKILL)
    for p in procs:
        p.wait()


def _has_seat_clocks() -> bool:
    return "clock" in inspect.signature(referee.open_match_context).parameters


async def level(clock: str, args: argparse.Namespace, tc: TimeControl) -> dict[str, Any]:
    """One load level's matches on one seat clock."""
    launch = BotLaunch(command=("{python}", BUSY_BOT),
                       env=(("BENCH_BUSY_MS", str(args.think_ms)), ("GIN_LOG_LEVEL", "WARNING")))
    rules = RuleSet.preset(args.rules)
    reports: list[referee.MatchReport] = []
    cut: list[int] = []  # decisions of the matches cancelled at the end
    kw: dict[str, Any] = {"clock": clock} if _has_seat_clocks() else {}
    used = "wall (no seat clocks in this tree)"
    worst_stall = None
    async with referee.open_match_context(**kw) as ctx:
        if kw:
            used = ctx.clock
        end = trio.current_time() + args.seconds
        counter = iter(range(10**6))

        async def keep_playing() -> None:
            while trio.current_time() < end:
                spec = MatchSpec(players=("a", "b"), rules=rules, time_control=tc, connect_timeout_ms=120_000,
                                 match_id=f"fair-{clock}-{next(counter)}")
                try:
                    played = await ctx.play(spec, [launch, launch])
                except BaseException:  # (cancelled at the end: trio.Cancelled, maybe in a group)
                    held = ctx.host.referee.tables.get(spec.match_id)  # type: ignore[attr-defined]  # (embedded)
                    report = getattr(held, "report", None)  # (a cancelled match's, or the running table's)
                    cut.append(report.decisions if report is not None else getattr(getattr(held, "flow", None),
                                                                                   "decisions", 0))
                    raise
                reports.append(played.report)

        with trio.move_on_at(end + args.grace):
            async with trio.open_nursery() as nursery:
                for _ in range(args.concurrency):
                    nursery.start_soon(keep_playing)
        if _has_seat_clocks():
            from referee.table.seat_clock import loop_stalls

            worst_stall = loop_stalls().worst_s * 1000
    done = [r for r in reports if r.termination != "aborted"]
    forfeits = [r for r in done if r.termination == "time_forfeit"]
    return {
        "clock": used,
        "games": len(done),
        "decisions": sum(r.decisions for r in done) + sum(cut),
        "cut_short": len(cut),
        "time_forfeits": len(forfeits),
        "other_faults": sum(1 for r in done if r.faulting_seat is not None and r.termination != "time_forfeit"),
        "forfeit_details": [r.detail for r in forfeits][:5],
        "loop_worst_stall_ms": worst_stall,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--loads", default="0,2,4", help="busy-loop processes per level (default 0,2,4)")
    p.add_argument("--clocks", default="cpu,wall", help="seat clocks to compare (default cpu,wall)")
    p.add_argument("--seconds", type=float, default=60.0, help="matches are started for this long per level")
    p.add_argument("--grace", type=float, default=20.0, help="then the running ones may finish for this long")
    p.add_argument("--think-ms", type=int, default=300, help="CPU ms each bot spins per decision (default 300)")
    p.add_argument("--tc", default="st=1 timemargin=50", help="time control (default: the arena's default)")
    p.add_argument("--concurrency", type=int, default=2, help="matches at once (default 2: the arena's default)")
    p.add_argument("--rules", default="short")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args()
    referee.lowlevel.configure_logging("warning", stream=sys.stderr)  # (the figures go to stdout)
    tc = TimeControl.parse(args.tc)
    clocks = args.clocks.split(",") if _has_seat_clocks() else ["wall"]
    print(f"{os.cpu_count()} CPUs; concurrency {args.concurrency}; {tc}; bots spin {args.think_ms} ms of CPU "
          f"per decision; {args.seconds:g} s per level; seat clocks: {'yes' if _has_seat_clocks() else 'no'}")
    print(f"{'load':>4} {'clock':>6} {'games':>5} {'cut short':>9} {'decisions':>9} {'time forfeits':>13} "
          f"{'other faults':>12} {'wall s':>6} {'loop worst stall':>16}", flush=True)
    rows = []
    for load in (int(x) for x in args.loads.split(",")):
        for clock in clocks:
            hogs = start_load(load)
            t0 = time.monotonic()
            try:
                r = referee.run(level, clock, args, tc)
            finally:
                stop_load(hogs)
            r.update(load=load, wall_s=round(time.monotonic() - t0, 1))
            rows.append(r)
            stall = "-" if r["loop_worst_stall_ms"] is None else f"{r['loop_worst_stall_ms']:.0f} ms"
            print(f"{load:>4} {r['clock']:>6.6} {r['games']:>5} {r['cut_short']:>9} {r['decisions']:>9} "
                  f"{r['time_forfeits']:>13} {r['other_faults']:>12} {r['wall_s']:>6.0f} {stall:>16}", flush=True)
            for d in r["forfeit_details"]:
                print(f"       forfeit: {d}")
    if args.json is not None:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "levels": rows},
                                        indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
