"""Re-run a recorded match through the referee's own Table, from its replay alone.

The replay holds every answer with its request id and the microseconds it took, and every
fault with what caused it. Played again on a mock clock with those answers, the Table must
write the same replay byte for byte and tell each seat the same messages (same digests).
This is what ``arena audit`` checks, and how ``arena replay --seat N`` shows what a seat was sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio
import trio.testing

from gin_arena.v2 import bot_pb2, common_pb2
from referee import games
from referee.model.spec import MatchReport, MatchSpec, Termination
from referee.model.timecontrol import TimeControl
from referee.replays import ActionRecord, FaultRecord, HeaderRecord, Replay, ReplayVisitor, ResultRecord
from referee.table.faults import CLOSED_BY_BOT, Fault, is_goodbye
from referee.table.flow import Table
from referee.table.seats import SeatLink

_T = TypeVar("_T")


class ReplayError(ValueError):
    """A replay that cannot be re-run (missing or malformed records)."""


@dataclass
class Resimulation:
    """What the re-run produced."""

    lines: list[bytes]
    """The replay the re-run wrote (canonical JSON lines, without newlines)."""
    seat_messages: list[list[bot_pb2.RefereeMessage]]
    """Every message of the match's story sent to each seat, in order."""
    report: MatchReport
    """The re-run's report."""


@dataclass
class _ScriptedSeat:
    """A seat's session in the re-run: answers each request as the replay says."""

    seat: int
    bot_name: str
    nonce: bytes
    skip_event_messages: bool
    script: dict[int, tuple[common_pb2.Action, int]]
    fallbacks: set[int]
    silent: set[int]
    disconnect: set[int]
    goodbye: set[int]
    late: set[int]
    nursery: trio.Nursery
    on_request: Any
    link: SeatLink | None = None
    told: list[bot_pb2.RefereeMessage] = field(default_factory=list)

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        msg = bot_pb2.RefereeMessage.FromString(data)
        self.told.append(msg)
        if msg.WhichOneof("kind") != "action_request":
            return
        rid = msg.action_request.request_id
        self.on_request(self.seat, rid)
        if rid in self.disconnect and self.link is not None:  # (a clean close as the bot's own goodbye)
            self.link.detach(self, CLOSED_BY_BOT if rid in self.goodbye else "disconnected (replayed)")
            return
        answer = self.script.get(rid)
        # The request's clock runs from when the table sent it: after a late answer (below) the
        # table's time is ahead of the mock clock's, and the request's answer waits from there.
        link = self.link
        sent = max(link.sent_at if link is not None and link.pending == rid else 0.0, trio.current_time())
        if answer is not None and rid in self.late:
            # An answer read after its deadline but before the referee's timer woke (a busy
            # machine): on the mock clock the timer would win, so hand it over now, stamped
            # with the time it was read.
            self.nursery.start_soon(self._answer_late, msg.match_id, rid, *answer, sent)
        elif answer is not None and rid not in self.silent:
            self.nursery.start_soon(self._answer, msg.match_id, rid, *answer, sent)

    async def _answer(self, match_id: str, rid: int, action: common_pb2.Action, used_us: int, sent: float) -> None:
        await trio.sleep_until(sent + used_us / 1_000_000)
        assert self.link is not None
        self.link.deliver(bot_pb2.ActionResponse(match_id=match_id, request_id=rid, action=action,
                                                 fallback=rid in self.fallbacks), trio.current_time())

    async def _answer_late(self, match_id: str, rid: int, action: common_pb2.Action, used_us: int,
                           sent: float) -> None:
        assert self.link is not None
        self.link.deliver(bot_pb2.ActionResponse(match_id=match_id, request_id=rid, action=action,
                                                 fallback=rid in self.fallbacks), sent + used_us / 1_000_000)

    def close(self, code: str, detail: str) -> None:
        pass


def spec_from_header(header: HeaderRecord, result: ResultRecord) -> MatchSpec:
    """The match spec a replay's header and result describe (the seed is the revealed one)."""
    try:
        return MatchSpec(
            players=header.players,
            game=header.game,
            rules=games.get(header.game).game.rules_from_dict(header.rules),
            time_control=TimeControl.parse(header.time_control),
            seat_time_controls=tuple(TimeControl.parse(t) for t in header.seat_time_controls),
            fault_policy=header.fault_policy,  # type: ignore[arg-type]  # MatchSpec checks it
            substitute_time_faults=header.substitute_time_faults,  # type: ignore[arg-type]  # (so does this)
            reconnect_grace_ms=header.reconnect_grace_ms,
            connect_timeout_ms=header.connect_timeout_ms,
            repeat_illegal=header.repeat_illegal,
            seed=bytes.fromhex(result.seed),
            match_id=header.match_id,
            mix_nonces=header.mix_nonces,
            max_actions_per_deal=header.max_actions_per_deal,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayError(f"the header cannot describe a match: {e!r}") from None


class _Script(ReplayVisitor):
    """What the seats did, as the replay tells it: each seat's answers by request id, the
    requests it left unanswered or disconnected on, the seats that never connected, a crash."""

    def __init__(self, seats: int, wire: games.GameWire) -> None:
        self.wire = wire
        self.answers: list[dict[int, tuple[common_pb2.Action, int]]] = [{} for _ in range(seats)]
        self.fallbacks: list[set[int]] = [set() for _ in range(seats)]
        """The requests each seat answered with a fallback (``ActionResponse.fallback``)."""
        self.silent: list[set[int]] = [set() for _ in range(seats)]
        self.disconnect: list[set[int]] = [set() for _ in range(seats)]
        self.goodbye: list[set[int]] = [set() for _ in range(seats)]
        """The disconnects that were the bot closing its stream itself (the fault says goodbye)."""
        self.late: list[set[int]] = [set() for _ in range(seats)]
        self.missing: set[int] = set()
        self.crash: tuple[int, int, int, str, Termination] | None = None
        """A fault that came outside the seat's turn (a crash, undecodable bytes): seat,
        decisions, after_request, detail, termination"""

    def visit_action(self, record: ActionRecord) -> None:
        if record.request_id:
            action = self.wire.action_from_text(record.action)
            self.answers[record.seat][record.request_id] = (action, record.think_us)
            if record.fallback:
                self.fallbacks[record.seat].add(record.request_id)

    def visit_fault(self, record: FaultRecord) -> None:
        seat, term = record.seat, record.termination
        if term == "failed_to_connect":
            self.missing.update(_given(record.missing, "missing"))
        elif term in ("crashed", "bot_error") or (term == "malformed_message" and record.after_request is not None):
            kind: Termination = "malformed_message" if term == "malformed_message" else term  # type: ignore[assignment]
            self.crash = (seat, record.decisions, _given(record.after_request, "after_request"), record.detail, kind)
        elif record.used_us is not None:  # the answer that faulted, as the bot sent it
            raw = self.wire.raw_action_from_record(record.to_json())
            rid = _given(record.request_id, "request_id")
            self.answers[seat][rid] = (raw, record.used_us)
            if term == "time_forfeit":
                self.late[seat].add(rid)
        elif term == "disconnected":
            self.disconnect[seat].add(_given(record.request_id, "request_id"))
            if is_goodbye(record.detail):
                self.goodbye[seat].add(_given(record.request_id, "request_id"))
        else:
            self.silent[seat].add(_given(record.request_id, "request_id"))


def _given(value: _T | None, name: str) -> _T:
    if value is None:
        raise ReplayError(f"malformed record: a fault record without {name!r}")
    return value


def resimulate(replay: Replay) -> Resimulation:
    """Play the recorded match again through a :class:`Table` on a mock clock."""
    header, result = replay.header, replay.result
    if result is None:
        raise ReplayError("a replay starts with a header record and ends with a result record")
    spec = spec_from_header(header, result)
    script = _Script(len(spec.players), spec.game_entry.wire)
    try:
        replay.accept(script)
        if not all(0 <= seat < len(spec.players) for seat in script.missing):
            raise ValueError(f"no such seat among the missing: {sorted(script.missing)}")
        bots = header.bots
        event_messages = [header.events_for(seat) for seat in range(len(bots))]
        nonces = [bytes.fromhex(n) for n in result.nonces]
    except (IndexError, TypeError, ValueError, LookupError) as e:
        raise ReplayError(f"malformed record: {e!r}") from None
    # A seat that never connected has no bot name (a connected bot always gets one).
    missing = script.missing | {seat for seat, name in enumerate(bots) if not name}
    crash = script.crash
    decisions_total = result.decisions
    cancel_reason = result.detail if result.termination == "aborted" and "stalling" not in result.detail else None
    if result.termination == "interrupted":  # the replay stops here: so does the re-run
        cancel_reason = result.detail

    async def main() -> Resimulation:
        table = Table(spec, None, lambda t: None, quiet=True)
        table._replay.protocol = header.protocol

        def on_request(seat: int, request_id: int) -> None:
            if crash is not None and table.flow.decisions == crash[1] and request_id == crash[2]:
                table.alert(Fault(crash[0], crash[4], crash[3]))
            if cancel_reason is not None and table.flow.decisions >= decisions_total:
                table.cancel(cancel_reason)

        async with trio.open_nursery() as nursery:
            sessions = []
            for seat, link in enumerate(table.links):
                s = _ScriptedSeat(seat, bots[seat], nonces[seat], not event_messages[seat], script.answers[seat],
                                  script.fallbacks[seat], script.silent[seat], script.disconnect[seat],
                                  script.goodbye[seat], script.late[seat], nursery, on_request)
                s.link = link
                sessions.append(s)
                if seat not in missing:
                    link.attach(s)
            if crash is not None and crash[2] == 0 and crash[1] == 0:
                table.alert(Fault(crash[0], crash[4], crash[3]))
            if cancel_reason is not None and decisions_total == 0:
                table.cancel(cancel_reason)
            report = await table.run()
            nursery.cancel_scope.cancel()
        return Resimulation(list(table._replay.lines), [s.told for s in sessions], report)

    try:
        return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    except ReplayError:
        raise
    except Exception as e:  # the replay drove the table somewhere it cannot go
        raise ReplayError(f"the replay cannot be played again: {e!r}") from e
