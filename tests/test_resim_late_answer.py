"""A replay whose seat answered after its deadline, but before the referee's timer woke (a busy
machine), re-runs byte for byte: the re-run must not let the timer win where the original let the
late answer in (``arena audit``'s re-run check failed on such replays now and then)."""

from __future__ import annotations

import trio
import trio.testing

from gin_arena.v2 import bot_pb2, common_pb2
from referee import MatchSpec, Table, TimeControl, resimulate
from referee.replays import FaultRecord, read_replay
from tests._tables import FakeSession, seat_sessions


class LateSession(FakeSession):
    """Answers its ``late_at``-th request 150 ms after it was sent, read at once (as a referee
    whose timer is held up reads it: the answer is already there when the timer wakes)."""

    late_at: int = 3
    asked: int = 0

    def send(self, data: bytes, on_written: object = None) -> None:
        msg = bot_pb2.RefereeMessage.FromString(data)
        if msg.WhichOneof("kind") != "action_request" or self.link is None:
            super().send(data)
            return
        self.sent.append(data)
        self.messages.append(msg)
        self.asked += 1
        req = msg.action_request
        at = trio.current_time() + (0.150 if self.asked == self.late_at else 0.001)
        self.link.deliver(bot_pb2.ActionResponse(match_id=msg.match_id, request_id=req.request_id,
                                                 action=req.legal_actions[0]), at)


def _first(req: bot_pb2.ActionRequest) -> common_pb2.Action:
    return req.legal_actions[0]


def test_a_late_answer_read_before_the_timer_woke_replays_identically() -> None:
    spec = MatchSpec(players=("a", "b"), time_control=TimeControl(per_move_ms=100), match_id="late",
                     seed=b"late-answer")

    async def main() -> Table:
        table = Table(spec, None, lambda t: None, quiet=True)
        seat_sessions(table, [_first, _first])
        late = LateSession(bot_name=table.links[1].name)
        table.links[1].detach(table.links[1].session, "replaced by the late session")  # type: ignore[arg-type]
        late.link = table.links[1]
        assert table.links[1].attach(late) is None
        await table.run()
        return table

    table = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    lines = list(table._replay.lines)
    replay = read_replay(lines)
    faults = [r for r in replay.records if isinstance(r, FaultRecord)]
    assert [(f.seat, f.termination) for f in faults] == [(1, "time_forfeit")]
    assert faults[0].used_us == 150_000 and "answered after 150 ms" in faults[0].detail
    assert resimulate(replay).lines == lines
