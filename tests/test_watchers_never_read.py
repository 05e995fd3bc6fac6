"""Spectators whose HTTP/2 flow-control window is zero (they never read a byte) over a raw
client that acknowledges the server's SETTINGS like any real one (``tests/_h2.py``): each is
dropped at its named bound, ``spectator_queue_bytes``, counted as gRPC takes the events (not as
the handler hands them over, which a zero window never stops), and the referee lets go of
their streams while their connections stay open."""

from __future__ import annotations

import trio

import referee
from referee import Limits, MatchSpec
from referee.gin import RuleSet
from tests._bots import Client
from tests._h2 import never_reading_watchers
from tests._wait import HANG_S

WATCHERS = 20
"""Spectators that never read, each on its own connection."""
BOUND = 8_192
"""Their ``spectator_queue_bytes``."""


def test_spectators_with_a_zero_window_are_dropped_at_their_bound_and_let_go() -> None:
    """20 zero-window spectators of a long match: every one is dropped naming
    ``spectator_queue_bytes`` while the match plays on to its normal end, and every stream they
    held is let go (0 open) with their connections still open. Before: the events piled up
    inside gRPC, none was dropped."""
    async def main() -> None:
        async with referee.open_referee(limits=Limits(spectator_queue_bytes=BOUND), public_watch=True) as ref:
            table = ref.create_match(MatchSpec(players=("a", "b"), rules=RuleSet.classic(target=200)))
            conns, sinks = await never_reading_watchers(ref, table.match_id, WATCHERS)
            async with trio.open_nursery() as n:
                for link in table.links:
                    n.start_soon(referee.aio, Client(ref.address, link.token).play())
                await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal"
            drops = [sink.__self__.dropped for sink in sinks]
            assert all(d.startswith(f"the spectator did not read: more than {BOUND} bytes") for d in drops), drops
            with trio.fail_after(HANG_S):
                while ref.open_streams:  # let go, though no status can reach them (their windows are zero)
                    await trio.sleep(0.01)
            assert all(not conn.goaway for conn in conns)
            for conn in conns:
                conn.close()

    referee.run(main)
