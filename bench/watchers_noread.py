"""Spectators that never read: N ``WatchMatch`` streams with a zero HTTP/2 window (raw clients
that acknowledge the server's SETTINGS, ``tests/_h2.py``), each on its own connection, watch one
long match played by two fast in-process bots. Prints how many were dropped (at
``spectator_queue_bytes``), the match's spectator events, and this process's RSS before the match, at
its end, and once the dropped streams were let go (the referee runs in this process).

    .venv/bin/python bench/watchers_noread.py --watchers 100 --bound 65536 --target 300
    .venv/bin/python bench/watchers_noread.py --watchers 0 --target 300      # the same match alone
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

import referee
from referee import Limits, MatchSpec
from referee.gin import RuleSet
from tests._bots import Client
from tests._h2 import never_reading_watchers


def rss_mb() -> float:
    """This process's resident set, MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def run(watchers: int, bound: int, target: int) -> dict[str, object]:
    async with referee.open_referee(limits=Limits(spectator_queue_bytes=bound), public_watch=True) as ref:
        table = ref.create_match(MatchSpec(players=("a", "b"), rules=RuleSet.classic(target=target), seed=b"w"))
        conns, sinks = await never_reading_watchers(ref, table.match_id, watchers)
        before = rss_mb()
        async with trio.open_nursery() as n:
            for link in table.links:
                n.start_soon(referee.aio, Client(ref.address, link.token).play())
            await table.finished.wait()
        at_end = rss_mb()
        with trio.move_on_after(30):
            while ref.open_streams:
                await trio.sleep(0.05)
        let_go = rss_mb()
        dropped = sum(1 for s in sinks if s.__self__.dropped)
        events = len(table.spectator_log.events())
        for conn in conns:
            conn.close()
        return {"watchers": watchers, "bound": bound, "dropped": dropped, "streams_left": ref.open_streams,
                "deals": table.match.deal_number if table.match else None, "events": events,
                "rss_mb": {"before": before, "at_end": at_end, "let_go": let_go},
                "termination": table.report.termination if table.report else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--bound", type=int, default=1 << 20, help="spectator_queue_bytes")
    parser.add_argument("--target", type=int, default=300, help="the match's target points (its length)")
    args = parser.parse_args()
    out: dict[str, object] = {}

    async def go() -> None:
        out.update(await run(args.watchers, args.bound, args.target))

    referee.run(go)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
