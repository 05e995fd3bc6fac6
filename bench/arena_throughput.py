"""Arena throughput: games per minute at concurrency 1, 2, 4, 8 with the greedy sample bots,
time forfeits, and where the CPU goes (the arena+referee process vs the bot processes).

    .venv/bin/python bench/arena_throughput.py [--games 24] [--levels 1,2,4,8] [--tc "st=0.5 timemargin=50"]

Each level plays the same number of greedy-vs-greedy games (duplicate pairs, rules ``short``
by default) on the embedded referee, with bot processes started per game exactly as
``arena tournament`` does. CPU: ``time.process_time()`` of this process (arena + referee) and
``resource.getrusage(RUSAGE_CHILDREN)`` (the bots, once reaped).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import trio

import referee
from arena.console import Console, configure
from arena.model.manifest import BotSpec
from arena.model.records import Outcome
from arena.model.schedule import GameJob, PlayConfig, RunConfig, build_schedule
from arena.run.procs import BotLogs
from arena.run.runner import Runner, StallMonitor, default_startup_slots
from referee import TimeControl
from referee.gin import RuleSet
from referee.replays import ActionRecord, read_replay


class Tally:
    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []
        self.discards: list[Outcome] = []

    def started(self, job: GameJob, match_id: str) -> None:
        pass

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def abandoned(self, job: GameJob) -> None:
        pass

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        self.discards.append(outcome)

    def proc_started(self, pid: int, match_id: str, bot: str) -> object:
        return None

    def proc_ended(self, pid: int, ticket: object) -> None:
        pass


def max_think(outs: list[Outcome]) -> float:
    """The longest single decision in the replays (the referee's measure)."""
    worst = 0.0
    for o in outs:
        if o.replay_path:
            for rec in read_replay(Path(o.replay_path)).records:
                if isinstance(rec, ActionRecord):
                    worst = max(worst, rec.think_us / 1000)
    return worst


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


async def level(
    concurrency: int, games: int, rules: RuleSet, tc: TimeControl, folder: Path, bot: str, slots: int
) -> dict[str, float]:
    spec = BotSpec(name="greedy", command=(sys.executable, "-m", bot), env={"GIN_LOG_LEVEL": "WARNING"})
    spec2 = BotSpec(name="greedy2", command=spec.command, env=dict(spec.env))
    cfg = RunConfig(
        run_id=f"bench-c{concurrency}", bots=("greedy", "greedy2"), games=games, seed=f"bench-{concurrency}"
    )
    jobs = build_schedule(cfg)
    play = PlayConfig(rules=rules, time_control=tc, concurrency=concurrency)
    tally = Tally()
    logs = BotLogs(folder / f"logs-c{concurrency}")
    cpu0, child0, t0 = time.process_time(), children_cpu(), time.monotonic()
    lags: list[float] = []

    async def lag_monitor() -> None:
        while True:
            t = trio.current_time()
            await trio.sleep(0.01)
            lags.append(trio.current_time() - t - 0.01)

    async with (
        referee.open_match_context(replay_dir=folder / f"replays-c{concurrency}") as context,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(lag_monitor)
        await Runner(
            context, {"greedy": spec, "greedy2": spec2}, {}, play, logs, tally, run_id=cfg.run_id,
            stalls=StallMonitor(), startup_slots=slots,
        ).run([(j, 0) for j in jobs])
        nursery.cancel_scope.cancel()
    lags.sort()
    wall = time.monotonic() - t0
    cpu, child = time.process_time() - cpu0, children_cpu() - child0
    outs = tally.outcomes
    return {
        "games": len(outs),
        "wall": wall,
        "per_min": len(outs) / wall * 60,
        "decisions": sum(o.decisions for o in outs),
        "arena_cpu": cpu,
        "bots_cpu": child,
        "time_forfeits": sum(1 for o in outs if o.termination == "time_forfeit"),
        "discarded": len(tally.discards),
        "other_faults": sum(1 for o in outs if o.termination not in ("normal", "time_forfeit")),
        "lag_p99_ms": lags[int(len(lags) * 0.99)] * 1000 if lags else 0.0,
        "lag_max_ms": lags[-1] * 1000 if lags else 0.0,
        "think_max_ms": max_think(outs),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=24, help="games per level (even; default 24)")
    p.add_argument("--levels", default="1,2,4,8", help="concurrency levels (default 1,2,4,8)")
    p.add_argument("--tc", default="st=0.5 timemargin=50")
    p.add_argument("--rules", default="short")
    p.add_argument(
        "--startup-slots", type=int, default=default_startup_slots(), help="games starting at once"
    )
    p.add_argument(
        "--bot", default="sample_bots.greedy_bot", help="bot module (default sample_bots.greedy_bot)"
    )
    p.add_argument(
        "--dir", type=Path, default=None, help="keep replays and bot logs here (default: a temporary folder)"
    )
    args = p.parse_args()
    configure(Console(progress=False))
    rules = RuleSet.preset(args.rules)
    tc = TimeControl.parse(args.tc)
    levels = [int(x) for x in args.levels.split(",")]
    print(f"{os.cpu_count()} CPUs; {args.games} games per level; rules {args.rules}; {tc}; bot {args.bot}")
    print(
        f"{'conc':>4} {'games':>5} {'wall s':>7} {'games/min':>9} {'decisions/s':>11} {'arena CPU':>9} "
        f"{'bots CPU':>8} {'arena share':>11} {'time losses':>11} {'replayed':>8} {'other faults':>12} "
        f"{'max think':>9} "
        f"{'loop lag p99/max':>16}"
    )
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        folder = args.dir or Path(tmp)
        for c in levels:
            r = referee.run(level, c, args.games, rules, tc, folder, args.bot, args.startup_slots)
            share = r["arena_cpu"] / max(1e-9, r["arena_cpu"] + r["bots_cpu"])
            print(
                f"{c:>4} {r['games']:>5.0f} {r['wall']:>7.1f} {r['per_min']:>9.1f} "
                f"{r['decisions'] / r['wall']:>11.0f} {r['arena_cpu']:>8.1f}s {r['bots_cpu']:>7.1f}s "
                f"{share:>10.0%} {r['time_forfeits']:>11.0f} {r['discarded']:>8.0f} {r['other_faults']:>12.0f} "
                f"{r['think_max_ms']:>7.0f}ms "
                f"{r['lag_p99_ms']:>8.1f}/{r['lag_max_ms']:.0f} ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
