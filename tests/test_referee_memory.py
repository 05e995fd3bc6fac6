"""Memory that comes back: a referee that forgets finished matches frees them at once (no
reference cycles left for a full collection), so thousands of abandoned matches leave the
live match objects and the process's RSS bounded."""

from __future__ import annotations

import gc
import os
import weakref

import pytest
import trio

import referee
from referee import Limits, MatchSpec


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
def test_thousands_of_abandoned_matches_give_their_memory_back() -> None:
    kept = 100
    seen: dict[int, tuple[int, float]] = {}

    async def main() -> None:
        tables: list[weakref.ref[referee.Table]] = []
        async with referee.open_referee(limits=Limits(finished_matches=kept, waiting_matches=10_000)) as ref:
            gc.collect()
            gc.disable()  # what the referee frees must come back without a collection
            try:
                for i in range(1, 5_001):
                    tables.append(weakref.ref(ref.create_match(MatchSpec(players=("a", "b"), connect_timeout_ms=1))))
                    if i % 250 == 0:  # let them time out (no seat ever connects: abandoned)
                        while ref.waiting:
                            await trio.sleep(0.005)
                    if i in (500, 5_000):
                        await trio.sleep(0.05)
                        seen[i] = (sum(r() is not None for r in tables), _rss_mb())
            finally:
                gc.enable()

    referee.run(main)
    print(f"after 500: {seen[500][0]} live tables, RSS {seen[500][1]:.1f} MB; "
          f"after 5000: {seen[5_000][0]} live tables, RSS {seen[5_000][1]:.1f} MB")
    assert seen[500][0] <= kept and seen[5_000][0] <= kept
    assert seen[5_000][1] <= seen[500][1] + 10
