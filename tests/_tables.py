"""Drive a referee Table in-process with fake sessions: every message a seat is sent is kept as
bytes, and answers come from a policy function (no network, deterministic on MockClock)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gin_arena.v2 import bot_pb2, common_pb2
from referee.lowlevel import Table
from referee.table.seats import SeatLink

Policy = Callable[[bot_pb2.ActionRequest], common_pb2.Action | None]


@dataclass
class FakeSession:
    """A bot session that records what it is sent and answers requests with ``policy``."""

    bot_name: str
    nonce: bytes = b""
    skip_event_messages: bool = False
    policy: Policy | None = None
    sent: list[bytes] = field(default_factory=list)
    messages: list[bot_pb2.RefereeMessage] = field(default_factory=list)
    closed: tuple[str, str] | None = None
    link: SeatLink | None = None

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        self.sent.append(data)
        msg = bot_pb2.RefereeMessage.FromString(data)
        self.messages.append(msg)
        if msg.WhichOneof("kind") == "action_request" and self.policy is not None and self.link is not None:
            action = self.policy(msg.action_request)
            if action is not None:
                self.link.deliver(bot_pb2.ActionResponse(
                    match_id=msg.match_id, request_id=msg.action_request.request_id, action=action), _now())

    def close(self, code: str, detail: str) -> None:
        self.closed = (code, detail)


def _now() -> float:
    import trio

    return trio.current_time()


def seat_sessions(table: Table, policies: list[Policy], *, skip_event_messages: bool = False) -> list[FakeSession]:
    """Attach one fake session per seat."""
    sessions = []
    for link, policy in zip(table.links, policies, strict=True):
        s = FakeSession(bot_name=link.name, policy=policy, skip_event_messages=skip_event_messages)
        s.link = link
        assert link.attach(s) is None
        sessions.append(s)
    return sessions
