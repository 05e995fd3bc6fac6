"""The referee over real gRPC streams: faults end matches by their policy with the right
termination reason; bad input gets a precise status or error and never hurts other matches."""

from __future__ import annotations

import asyncio
import hashlib
import random
import tempfile
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio

import referee
import referee.lowlevel
from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import MatchReport, MatchSpec, TimeControl, resimulate
from referee.gin import RuleSet
from referee.replays import ActionRecord, FaultRecord, read_replay
from tests._bots import Client, knock_first
from tests._wait import HANG_S

SHORT = RuleSet.classic(target=60)  # several deals: every seat gets to act


def run_match(
    spec: MatchSpec,
    behaviours: list[Callable[[Client], Coroutine[Any, Any, None]] | None],
    replay_dir: Path | None = None,
    extra: Callable[[referee.Referee, referee.lowlevel.Table], Awaitable[None]] | None = None,
) -> tuple[MatchReport, list[Client]]:
    """Run one match with one client per seat (``None``: that seat never connects)."""

    replay_dir = replay_dir or Path(tempfile.mkdtemp(prefix="replays-"))

    async def main() -> tuple[MatchReport, list[Client]]:
        async with referee.open_referee(replay_dir=replay_dir) as ref:
            table = ref.create_match(spec)
            clients = [Client(ref.address, link.token, name=link.name) for link in table.links]
            async with trio.open_nursery() as nursery:
                for client, behave in zip(clients, behaviours, strict=True):
                    if behave is not None:
                        nursery.start_soon(referee.aio, behave(client))
                if extra is not None:
                    nursery.start_soon(extra, ref, table)
                await table.finished.wait()
                nursery.cancel_scope.deadline = trio.current_time() + HANG_S  # the clients end with their streams
            assert table.report is not None
            return table.report, clients

    report, clients = referee.run(main)
    # Every replay plays again, byte for byte, through the same Table (what `arena audit` does).
    replay = Path(report.replay_path)
    again = resimulate(read_replay(replay))
    assert again.lines == replay.read_bytes().splitlines(), "the replay does not re-run identically"
    assert again.report.replay_hash == report.replay_hash
    return report, clients


async def good(c: Client) -> None:
    await c.play()


ROOMY = TimeControl(per_move_ms=120_000)
"""The clock of a seat that must not lose on time however loaded the machine is (its opponent's
clock is the one under test)."""


def spec(**kw: Any) -> MatchSpec:
    base: dict[str, Any] = {"players": ("alice", "bob"), "rules": SHORT,
                            "time_control": TimeControl(per_move_ms=2000), "reconnect_grace_ms": 300}
    base.update(kw)
    return MatchSpec(**base)


def test_two_bots_finish_a_match_and_the_seed_is_revealed(tmp_path: Path) -> None:
    report, clients = run_match(spec(), [good, good], replay_dir=tmp_path)
    assert report.termination == "normal" and report.winner in (0, 1)
    assert report.outcome is not None and max(report.outcome.totals) >= 60
    finished = [m for m in clients[0].received if m.WhichOneof("kind") == "match_finished"]
    assert len(finished) == 1
    result = finished[0].match_finished.result
    assert hashlib.sha256(result.seed).digest() == result.seed_commitment
    started = next(m for m in clients[0].received if m.WhichOneof("kind") == "match_started").match_started
    assert started.seed_commitment == result.seed_commitment
    assert Path(report.replay_path).exists() and result.replay_hash == report.replay_hash


def test_time_forfeit_when_a_bot_does_not_answer_in_time() -> None:
    async def slow(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            await asyncio.sleep(0.6)
            return msg.action_request.legal_actions[0]

        await c.play(decide)

    tight = TimeControl(per_move_ms=200, margin_ms=50)  # the good seat's clock: one no load can run out
    report, _ = run_match(spec(time_control=tight, seat_time_controls=(tight, ROOMY)), [slow, good])
    assert report.termination == "time_forfeit" and report.faulting_seat == 0 and report.winner == 1
    assert "200 ms" in report.detail


def test_time_bank_runs_out_with_tc() -> None:
    async def slowish(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            await asyncio.sleep(0.12)
            return msg.action_request.legal_actions[0]

        await c.play(decide)

    bank = TimeControl(base_ms=500, increment_ms=10)
    report, clients = run_match(spec(time_control=bank, seat_time_controls=(ROOMY, bank)), [good, slowish])
    assert report.termination == "time_forfeit" and report.faulting_seat == 1
    requests = [m.action_request for m in clients[1].received if m.WhichOneof("kind") == "action_request"]
    banks = [r.clocks[1].remaining_ms for r in requests]
    assert banks[0] == 500 and banks[-1] < banks[0], "the bank shrinks and goes out with every request"
    assert all(r.time_for_move_ms == r.clocks[1].remaining_ms for r in requests)


def test_illegal_action_forfeits() -> None:
    async def cheat(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            hand = set(msg.action_request.gin.hand)
            card = next(x for x in ("As", "2s", "3s", "4s", "5s") if x not in hand)
            return common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card=card))

        await c.play(decide)

    report, _ = run_match(spec(), [cheat, good])
    assert report.termination == "illegal_action" and report.faulting_seat == 0 and report.winner == 1


def test_malformed_action_forfeits() -> None:
    async def garbage(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            return common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card="Zz"))

        await c.play(decide)

    report, _ = run_match(spec(), [good, garbage])
    assert report.termination == "malformed_message" and report.faulting_seat == 1
    assert "Zz" in report.detail


def test_repeat_illegal_development_option_rejects_and_asks_again() -> None:
    async def clumsy(c: Client) -> None:
        tried: set[int] = set()

        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            rid = msg.action_request.request_id
            if rid not in tried:
                tried.add(rid)
                await _c.send_action(msg.match_id, rid, common_pb2.Action(
                    gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_BIG_GIN)))
            return msg.action_request.legal_actions[0]

        await c.play(decide)

    report, clients = run_match(spec(repeat_illegal=True), [clumsy, good])
    assert report.termination == "normal"
    rejected = [m.action_rejected for m in clients[0].received if m.WhichOneof("kind") == "action_rejected"]
    assert rejected and "big gin" in rejected[0].reason


def test_disconnect_not_healed_forfeits_after_the_grace() -> None:
    async def quitter(c: Client) -> None:
        await c.play(stop=lambda m: m.WhichOneof("kind") == "action_request")

    report, _ = run_match(spec(reconnect_grace_ms=200), [quitter, good])
    assert report.termination == "disconnected" and report.faulting_seat == 0 and report.winner == 1


def test_reconnect_within_the_grace_resumes_the_match() -> None:
    async def flaky(c: Client) -> None:
        await c.play(stop=lambda m: m.WhichOneof("kind") == "action_request")
        again = Client(c.address, c.token, name=c.name)
        await again.play()
        kinds = again.kinds()
        assert kinds[:4] == ["welcome", "match_started", "deal_started", "action_request"], kinds
        c.received.extend(again.received)

    report, clients = run_match(spec(reconnect_grace_ms=3000), [flaky, good])
    assert report.termination == "normal", report.detail
    assert "match_finished" in clients[0].kinds()


def test_crash_reported_by_the_operator_forfeits() -> None:
    async def idle(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            return None

        await c.play(decide)

    async def crash_it(_ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        await trio.sleep(0.3)
        table.links[0].crashed("exit code -9")

    report, _ = run_match(spec(time_control=TimeControl(per_move_ms=5000)), [idle, idle], extra=crash_it)
    assert report.termination == "crashed" and report.faulting_seat == 0 and "exit code -9" in report.detail


def test_failed_to_connect() -> None:
    report, _ = run_match(spec(connect_timeout_ms=300), [good, None])
    assert report.termination == "failed_to_connect" and report.faulting_seat == 1 and report.winner == 0


def test_substitute_policy_plays_the_seat_to_the_end() -> None:
    async def quitter(c: Client) -> None:
        await c.play(stop=lambda m: m.WhichOneof("kind") == "action_request")

    report, _ = run_match(spec(fault_policy="substitute", reconnect_grace_ms=100), [quitter, good])
    assert report.termination == "normal" and report.substituted_seats == (0,)
    assert report.outcome is not None and len(report.outcome.games) == 1


def test_a_time_forfeit_under_move_scope_tells_the_seat_and_its_session_plays_on() -> None:
    async def slow_once(c: Client) -> None:
        pick = knock_first(random.Random(5))

        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            if sum(m.WhichOneof("kind") == "action_request" for m in c.received) == 1:
                await asyncio.sleep(1.0)  # past its time (400 ms + 100 ms margin): it may lose the next request too
            return pick(msg.action_request)

        await c.play(decide)

    tight = TimeControl(per_move_ms=400, margin_ms=100)
    report, clients = run_match(spec(fault_policy="substitute", substitute_time_faults="move", time_control=tight,
                                     seat_time_controls=(tight, ROOMY)), [slow_once, good])
    assert report.termination == "normal" and report.substituted_seats == (0,)
    slow = clients[0]
    assert slow.status is None and slow.kinds()[-1] == "match_finished"  # its session stayed open to the end
    late = [e for e in slow.errors() if e.code == bot_pb2.ERROR_CODE_TOO_LATE]
    assert late and not late[0].fatal and "a built-in bot played this decision" in late[0].message
    first = next(m for m in slow.received if m.WhichOneof("kind") == "action_request").action_request
    assert late[0].request_id == first.request_id
    assert not [e for e in clients[1].errors()]  # the other seat sees what it always saw
    records = read_replay(Path(report.replay_path)).records
    faults = [r for r in records if isinstance(r, FaultRecord)]
    assert faults and all((f.seat, f.termination, f.scope) == (0, "time_forfeit", "move") for f in faults)
    own = [r for r in records if isinstance(r, ActionRecord) and r.seat == 0 and not r.substitute]
    assert own and all(r.request_id > first.request_id for r in own)  # it played its later requests itself


def test_wrong_token_is_unauthenticated_and_the_match_goes_on() -> None:
    async def intruder(_ref: referee.Referee, _table: referee.lowlevel.Table) -> None:
        c = Client(_ref.address, "not-a-token" * 3)
        await referee.aio(c.play())
        assert c.status == grpc.StatusCode.UNAUTHENTICATED

    report, _ = run_match(spec(), [good, good], extra=intruder)
    assert report.termination == "normal"


def test_second_live_stream_for_a_seat_is_refused() -> None:
    twin_done = asyncio.Event()

    async def steady(c: Client) -> None:  # holds the match open until the twin has been answered
        pick = knock_first(random.Random(1))

        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            await twin_done.wait()
            return pick(msg.action_request)

        await c.play(decide)

    async def twin(_ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        while table.state != "running":
            await trio.sleep(0.01)
        c = Client(_ref.address, table.links[0].token)
        await referee.aio(c.play())
        twin_done.set()
        assert c.status == grpc.StatusCode.ALREADY_EXISTS, c.status
        assert "live session" in c.details

    report, _ = run_match(spec(), [good, steady], extra=twin)
    assert report.termination == "normal"


def test_wrong_protocol_version_and_missing_hello() -> None:
    async def probe(_ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        v3 = Client(_ref.address, table.links[0].token, protocol_version=3)
        await referee.aio(v3.play())
        assert v3.status == grpc.StatusCode.FAILED_PRECONDITION and "version 3" in v3.details
        nohello = Client(_ref.address, table.links[0].token)
        await referee.aio(nohello.play(first=bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=1))))
        assert nohello.status == grpc.StatusCode.INVALID_ARGUMENT and "hello" in nohello.details
        for link in table.links:
            c = Client(_ref.address, link.token, name=link.name)
            _ref_nursery.start_soon(referee.aio, c.play())

    _ref_nursery: trio.Nursery

    async def wrapper(ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        nonlocal _ref_nursery
        async with trio.open_nursery() as n:
            _ref_nursery = n
            await probe(ref, table)

    report, _ = run_match(spec(), [None, None], extra=wrapper)
    assert report.termination == "normal"


def test_stray_answers_get_precise_errors_and_the_match_goes_on() -> None:
    async def noisy(c: Client) -> None:
        strays = 0

        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            nonlocal strays
            req = msg.action_request
            a = req.legal_actions[0]
            if strays < 100:  # inside the stream's inbound budget (Limits.inbound_burst)
                strays += 2
                await _c.send_action(msg.match_id, req.request_id + 1000, a)  # wrong request id
                await _c.send_action("no-such-match", req.request_id, a)  # another match
            return a

        await c.play(decide)

    report, clients = run_match(spec(), [noisy, good])
    assert report.termination == "normal"
    codes = {e.code for e in clients[0].errors()}
    assert bot_pb2.ERROR_CODE_BAD_REQUEST_ID in codes and bot_pb2.ERROR_CODE_UNKNOWN_MATCH in codes


def test_out_of_turn_action_is_refused_with_not_your_turn() -> None:
    pokes: list[Any] = []

    def poke_while_the_opponent_thinks(c: Client, m: bot_pb2.RefereeMessage) -> bool:
        # The opponent has just drawn (from either pile, or the upcard) and thinks 100 ms about its
        # discard: no request of ours is open. (Any draw: a deal may see few of one kind.)
        if m.WhichOneof("kind") == "event" and m.event.seat == 1 and not pokes \
                and m.event.gin.kind in (gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_DRAW_DISCARD,
                                         gin_pb2.ACTION_KIND_TAKE_UPCARD):
            pokes.append(asyncio.ensure_future(c.send_action(m.match_id, 1, common_pb2.Action(gin=gin_pb2.Action(
                kind=gin_pb2.ACTION_KIND_DRAW_STOCK)))))
        return False

    impatient_clients: list[Client] = []

    def refused() -> bool:
        return any(e.code == bot_pb2.ERROR_CODE_NOT_YOUR_TURN for c in impatient_clients for e in c.errors())

    async def impatient(c: Client) -> None:
        impatient_clients.append(c)
        await c.play(stop=lambda m: poke_while_the_opponent_thinks(c, m))

    async def thinker(c: Client) -> None:
        pick = knock_first(random.Random(7))

        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            if not refused():  # think until the poke has been answered; then the match plays out fast
                await asyncio.sleep(0.1)
            return pick(msg.action_request)

        await c.play(decide)

    report, clients = run_match(spec(rules=RuleSet.classic(target=1)), [impatient, thinker])
    assert report.termination == "normal"
    assert pokes, "the dealer poked out of turn"
    codes = [e.code for c in clients for e in c.errors()]
    assert bot_pb2.ERROR_CODE_NOT_YOUR_TURN in codes


def test_oversized_message_is_refused_and_the_policy_applies() -> None:
    async def huge(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            return common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card="x" * 100_000))

        await c.play(decide)

    report, clients = run_match(spec(reconnect_grace_ms=100), [huge, good])
    assert report.faulting_seat == 0 and report.termination == "disconnected"
    assert clients[0].status == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_faulting_match_never_disturbs_another() -> None:
    async def main() -> tuple[MatchReport, MatchReport]:
        async with referee.open_referee() as ref:
            bad = ref.create_match(spec(reconnect_grace_ms=100))
            ok = ref.create_match(spec())
            async with trio.open_nursery() as n:
                quitter = Client(ref.address, bad.links[0].token)
                n.start_soon(referee.aio, quitter.play(stop=lambda m: m.WhichOneof("kind") == "action_request"))
                n.start_soon(referee.aio, Client(ref.address, bad.links[1].token).play())
                for link in ok.links:
                    n.start_soon(referee.aio, Client(ref.address, link.token).play())
                await bad.finished.wait()
                await ok.finished.wait()
            assert bad.report is not None and ok.report is not None
            return bad.report, ok.report

    bad, ok = referee.run(main)
    assert bad.termination == "disconnected"
    assert ok.termination == "normal" and ok.outcome is not None


def test_token_of_a_finished_match_is_refused() -> None:
    async def late(_ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        await table.finished.wait()
        c = Client(_ref.address, table.links[0].token)
        await referee.aio(c.play())
        assert c.status == grpc.StatusCode.UNAUTHENTICATED

    report, _ = run_match(spec(), [good, good], extra=late)
    assert report.termination == "normal"


@pytest.mark.parametrize("nonce", [b"n" * 65])
def test_overlong_nonce_is_invalid(nonce: bytes) -> None:
    async def probe(_ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        c = Client(_ref.address, table.links[0].token, nonce=nonce)
        await referee.aio(c.play())
        assert c.status == grpc.StatusCode.INVALID_ARGUMENT
        table.cancel("done")

    report, _ = run_match(spec(), [None, None], extra=probe)
    assert report.termination == "aborted"


def test_stalling_bots_are_stopped_by_the_action_cap() -> None:
    async def staller(c: Client) -> None:
        async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            legal = msg.action_request.legal_actions
            for kind in (gin_pb2.ACTION_KIND_PASS, gin_pb2.ACTION_KIND_DRAW_DISCARD):
                for a in legal:
                    if a.gin.kind == kind:
                        return a
            return next((a for a in legal if a.gin.kind == gin_pb2.ACTION_KIND_DRAW_STOCK), None) or next(
                a for a in legal if a.gin.kind == gin_pb2.ACTION_KIND_DISCARD)

        await c.play(decide)

    report, _ = run_match(spec(max_actions_per_deal=60), [staller, staller])
    assert report.termination == "aborted" and "stalling" in report.detail and report.winner is None


def test_a_bot_that_dies_before_connecting_is_scored_at_once() -> None:
    async def crash_early(_ref: referee.Referee, table: referee.lowlevel.Table) -> None:
        await trio.sleep(0.2)
        table.links[1].crashed("exit code 1 before connecting")

    report, _ = run_match(spec(connect_timeout_ms=30_000), [good, None], extra=crash_early)
    assert report.termination == "crashed" and report.faulting_seat == 1 and report.winner == 0


def test_answers_before_the_match_starts_or_after_it_is_cancelled() -> None:
    """An action while the match still waits for its other seat gets NOT_YOUR_TURN; once the
    operator cancels, answers change nothing and the match ends as aborted."""
    import trio.testing

    from referee.lowlevel import Table
    from tests._tables import FakeSession

    async def main() -> None:
        table = Table(spec(match_id="early", connect_timeout_ms=5_000), None, lambda t: None, quiet=True)
        early = FakeSession(bot_name="early")
        assert table.links[0].attach(early) is None
        async with trio.open_nursery() as n:
            n.start_soon(table.run)
            await trio.sleep(1)
            table.links[0].deliver(bot_pb2.ActionResponse(match_id="early", request_id=1, action=common_pb2.Action(
                gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DRAW_STOCK))), trio.current_time())
            errors = [m.error for m in early.messages if m.WhichOneof("kind") == "error"]
            assert [e.code for e in errors] == [bot_pb2.ERROR_CODE_NOT_YOUR_TURN]
            late = FakeSession(bot_name="late")
            assert table.links[1].attach(late) is None
            await trio.sleep(0.1)
            asked = [m for s in (early, late) for m in s.messages if m.WhichOneof("kind") == "action_request"]
            assert len(asked) == 1 and table.state == "running"
            table.cancel("operator")
            seat = next(s for s in (early, late) if asked[0] in s.messages)
            link = table.links[0 if seat is early else 1]
            legal = asked[0].action_request.legal_actions[0]
            link.deliver(bot_pb2.ActionResponse(match_id="early", request_id=asked[0].action_request.request_id,
                                                action=legal), trio.current_time())
            await table.finished.wait()
        assert table.report is not None and table.report.termination == "aborted"
        assert table.report.decisions == 0 and table.report.detail == "operator"

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_reconnect_does_not_restart_the_clock() -> None:
    """The open request is sent again to a seat that reconnects, but its clock still runs from
    the first send: disconnecting cannot buy time."""
    import trio.testing

    from referee.lowlevel import Table
    from tests._tables import FakeSession

    class Transport(FakeSession):
        """Reports each message written at once, as the gRPC session does."""

        def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
            super().send(data, on_written)
            if on_written is not None:
                on_written(trio.current_time())

    async def main() -> None:
        tc = TimeControl(per_move_ms=1000, margin_ms=0)
        table = Table(spec(match_id="clock", time_control=tc, reconnect_grace_ms=5_000), None, lambda t: None,
                      quiet=True)
        sessions = [Transport(bot_name="a"), Transport(bot_name="b")]
        for link, s in zip(table.links, sessions, strict=True):
            assert link.attach(s) is None
        async with trio.open_nursery() as n:
            n.start_soon(table.run)
            while table.asking is None:
                await trio.sleep(0.01)
            asked = table.asking
            started = asked.sent_at
            await trio.sleep(0.6)
            old = sessions[asked.seat]
            asked.detach(old, "the stream broke")
            again = Transport(bot_name=old.bot_name)
            assert asked.attach(again) is None
            resent = [m for m in again.messages if m.WhichOneof("kind") == "action_request"]
            assert len(resent) == 1 and resent[0].action_request.request_id == asked.pending
            await table.finished.wait()
            ended = trio.current_time()
        assert table.report is not None and table.report.termination == "time_forfeit"
        assert table.report.faulting_seat == asked.seat
        assert ended - started == pytest.approx(1.0, abs=0.01)  # not 1.6 s: the clock ran on

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.parametrize("policy", ["forfeit", "substitute"])
def test_undecodable_bytes_mid_match_are_a_malformed_message_by_the_policy(policy: str) -> None:
    """Bytes that are no BotMessage, after some good answers: the match's fault policy applies
    as ``malformed_message`` (not a disconnect) and the stream ends with a status saying why."""
    status: list[tuple[grpc.StatusCode, str]] = []

    async def corrupt(c: Client) -> None:
        async with grpc.aio.insecure_channel(c.address) as ch:
            call = ch.stream_stream("/gin_arena.v2.BotService/Play", request_serializer=None,
                                    response_deserializer=bot_pb2.RefereeMessage.FromString)(None)
            await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(
                token=c.token, protocol_version=2)).SerializeToString())
            requests = 0
            try:
                async for msg in call:
                    if msg.WhichOneof("kind") != "action_request":
                        continue
                    requests += 1
                    if requests == 3:
                        await call.write(b"\xff\xff\xff\xff")  # an invalid tag: no BotMessage
                        continue
                    req = msg.action_request
                    await call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                        match_id=msg.match_id, request_id=req.request_id, action=req.legal_actions[0],
                    )).SerializeToString())
            except grpc.aio.AioRpcError as e:
                status.append((e.code(), e.details() or ""))
                return
            status.append((await call.code(), await call.details() or ""))

    report, _ = run_match(spec(fault_policy=policy), [corrupt, good])
    assert status and status[0][0] == grpc.StatusCode.INVALID_ARGUMENT and "undecodable" in status[0][1], status
    if policy == "forfeit":
        assert report.termination == "malformed_message" and report.faulting_seat == 0
    else:
        assert report.termination == "normal" and report.substituted_seats == (0,)


@pytest.mark.parametrize("policy", ["forfeit", "substitute"])
def test_a_resigning_bot_is_a_bot_error_fault_with_its_reason_cut_to_one_bounded_line(policy: str) -> None:
    """``Resign`` (the bot's own code failed): a ``bot_error`` fault of that seat, applied by the
    policy at once; the detail is the reason's first line, at most ``text_length`` characters."""
    reason = "ValueError: " + "x" * 400 + "\nthe rest of the traceback"

    async def resigner(c: Client) -> None:
        asked = 0

        async def decide(msg: bot_pb2.RefereeMessage, client: Client) -> common_pb2.Action | None:
            nonlocal asked
            asked += 1
            if asked == 3:  # the empty match id: the session's only match
                await client.call.write(bot_pb2.BotMessage(resign=bot_pb2.Resign(reason=reason)))
                return None
            return msg.action_request.legal_actions[0]

        await c.play(decide)

    report, _ = run_match(spec(fault_policy=policy), [resigner, good])
    faults = [r for r in read_replay(Path(report.replay_path)).records if isinstance(r, FaultRecord)]
    assert [(f.seat, f.termination) for f in faults] == [(0, "bot_error")]
    detail = faults[0].detail
    assert detail == f"seat 0 (alice) gave up: {reason.splitlines()[0][:256]}"
    if policy == "forfeit":
        assert report.termination == "bot_error" and report.faulting_seat == 0 and report.winner == 1
        assert report.detail == detail
    else:
        assert report.termination == "normal" and report.substituted_seats == (0,)


def test_a_resignation_for_a_match_the_session_does_not_play_is_refused_and_ends_nothing() -> None:
    async def confused(c: Client) -> None:
        sent = False

        async def decide(msg: bot_pb2.RefereeMessage, client: Client) -> common_pb2.Action | None:
            nonlocal sent
            if not sent:
                sent = True
                await client.call.write(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id="nope", reason="x")))
            return msg.action_request.legal_actions[0]

        await c.play(decide)

    report, clients = run_match(spec(), [confused, good])
    assert report.termination == "normal"
    assert [e.code for e in clients[0].errors()] == [bot_pb2.ERROR_CODE_UNKNOWN_MATCH]


def test_answers_marked_fallback_are_counted_per_seat_and_re_run_identically() -> None:
    marked = 0

    async def falls_back(c: Client) -> None:
        nonlocal marked
        asked = 0
        async with grpc.aio.insecure_channel(c.address) as ch:
            call = bot_pb2_grpc.BotServiceStub(ch).Play(None)
            await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(token=c.token, protocol_version=2)))
            async for msg in call:
                kind = msg.WhichOneof("kind")
                if kind == "match_finished":
                    await call.done_writing()
                    return
                if kind == "action_request":
                    asked += 1
                    req = msg.action_request
                    fallback = asked % 2 == 0
                    marked += fallback
                    await call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                        match_id=msg.match_id, request_id=req.request_id, action=req.legal_actions[0],
                        fallback=fallback)))

    report, _ = run_match(spec(), [falls_back, good])  # (run_match re-runs the replay byte for byte)
    assert report.termination == "normal" and marked > 0
    assert report.fallbacks == (marked, 0)
    replay = read_replay(Path(report.replay_path))
    flagged = [r for r in replay.records if isinstance(r, ActionRecord) and r.fallback]
    assert len(flagged) == marked and {r.seat for r in flagged} == {0}
    assert replay.result is not None and replay.result.fallbacks == (marked, 0)


def test_a_bot_that_closes_its_stream_mid_match_said_goodbye_and_the_replay_reruns_so() -> None:
    """A bot that closes its own stream (cleanly) on its turn and does not come back: its
    ``disconnected`` fault says it said goodbye — and the replay re-runs byte for byte (the
    re-run closed the stream as a broken connection: a detail that differed, found under load)."""
    async def closes(c: Client) -> None:
        async def decide(_msg: bot_pb2.RefereeMessage, c: Client) -> common_pb2.Action | None:
            await c.call.done_writing()
            return None

        await c.play(decide)

    report, _clients = run_match(spec(reconnect_grace_ms=100), [closes, good])  # (it re-runs the replay)
    assert report.faulting_seat == 0 and report.termination == "disconnected", report
    assert "said goodbye" in report.detail, report.detail
