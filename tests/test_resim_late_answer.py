"""A replay whose seat answered after its deadline, but before the referee's timer woke (a busy
machine), re-runs byte for byte: the re-run must not let the timer win where the original let the
late answer in (``arena audit``'s re-run check failed on such replays now and then)."""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing

from gin_arena.v2 import bot_pb2, common_pb2
from referee import MatchSpec, TimeControl, resimulate
from referee.gin import RuleSet
from referee.lowlevel import Table
from referee.replays import FaultRecord, read_replay
from tests._bots import knock_first
from tests._tables import FakeSession, Policy, seat_sessions


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
        # From when the table sent the request, as a real bot's answer: after the late answer
        # the table's time is ahead of the mock clock's (by the 150 ms it read the answer late).
        at = max(trio.current_time(), self.link.sent_at) + (0.150 if self.asked == self.late_at else 0.001)
        action = self.policy(req) if self.policy is not None else req.legal_actions[0]
        self.link.deliver(bot_pb2.ActionResponse(match_id=msg.match_id, request_id=req.request_id,
                                                 action=action), at)


def _first(req: bot_pb2.ActionRequest) -> common_pb2.Action:
    return req.legal_actions[0]


def _late_table(spec: MatchSpec, policy: Policy = _first) -> Table:
    """The match played with seat 1 answering its third request late (the others with ``policy``)."""

    async def main() -> Table:
        table = Table(spec, None, lambda t: None, quiet=True)
        seat_sessions(table, [policy, policy])
        late = LateSession(bot_name=table.links[1].name, policy=policy)
        table.links[1].detach(table.links[1].session, "replaced by the late session")  # type: ignore[arg-type]
        late.link = table.links[1]
        assert table.links[1].attach(late) is None
        await table.run()
        return table

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_late_answer_read_before_the_timer_woke_replays_identically() -> None:
    spec = MatchSpec(players=("a", "b"), time_control=TimeControl(per_move_ms=100), match_id="late",
                     seed=b"late-answer")
    table = _late_table(spec)
    lines = list(table._replay.lines)
    replay = read_replay(lines)
    faults = [r for r in replay.records if isinstance(r, FaultRecord)]
    assert [(f.seat, f.termination) for f in faults] == [(1, "time_forfeit")]
    assert faults[0].used_us == 150_000 and "answered after 150 ms" in faults[0].detail
    assert resimulate(replay).lines == lines


@pytest.mark.parametrize("scope", ["game", "move"])
def test_a_late_answer_that_play_goes_on_after_replays_identically(scope: str) -> None:
    """Under ``substitute`` the match goes on after the late answer: the table's time is then
    ahead of the mock clock by the answer's lateness, and the re-run times each later answer
    from its request's send time as the table had it (``move``: the late seat answers again)."""
    spec = MatchSpec(players=("a", "b"), time_control=TimeControl(base_ms=100, increment_ms=20), match_id="late",
                     seed=b"late-answer", rules=RuleSet.classic(target=10), fault_policy="substitute",
                     substitute_time_faults=scope)  # type: ignore[arg-type]
    table = _late_table(spec, knock_first(random.Random(1)))
    assert table.report is not None and table.report.termination == "normal"
    lines = list(table._replay.lines)
    replay = read_replay(lines)
    faults = [r for r in replay.records if isinstance(r, FaultRecord)]
    assert [(f.seat, f.termination, f.scope, f.used_us) for f in faults] == [(1, "time_forfeit", scope, 150_000)]
    assert resimulate(replay).lines == lines
