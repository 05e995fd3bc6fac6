"""The match flow (``referee.table.match_flow``) driven by hand: no trio, no gRPC, no clock. Time
is a number the test passes in; the outputs are bytes the test decodes as a bot would.

The one place trio runs here is the cross-check: a match played through the flow alone writes
the very replay that the trio table (``resimulate``) writes when it plays the same answers."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from gin_arena.v2.games import gin_pb2
from referee import MatchSpec, TimeControl, resimulate
from referee.gin import RuleSet
from referee.replays import FaultRecord, read_replay
from referee.table.faults import Fault
from referee.table.match_flow import ASKING, MAX_STRAY_MESSAGES, PLAIN, LogEvent, MatchFlow, Outbox
from referee.table.recording import MatchRecorder
from tests._bots import knock_first

SOURCE = Path(__file__).resolve().parents[1] / "referee" / "table" / "match_flow.py"
LIMIT_MS = 2000
GRACE_MS = 300


def spec(**kw: Any) -> MatchSpec:
    base: dict[str, Any] = {"players": ("alice", "bob"), "rules": RuleSet.classic(target=60), "match_id": "flow",
                            "time_control": TimeControl(per_move_ms=LIMIT_MS), "reconnect_grace_ms": GRACE_MS,
                            "seed": bytes(range(32))}
    base.update(kw)
    return MatchSpec(**base)


def new_flow(**kw: Any) -> MatchFlow:
    flow = MatchFlow(spec(**kw), "flow", bytes(range(32)), MatchRecorder())
    for seat in range(2):
        flow.connected(seat, bytes([seat]) * 8, f"bot{seat}", True)
    return flow


def decode(out: Outbox) -> list[tuple[int, bot_pb2.RefereeMessage, int]]:
    return [(seat, bot_pb2.RefereeMessage.FromString(data), ask) for seat, data, ask in out.sends]


def requests(out: Outbox) -> list[tuple[int, bot_pb2.ActionRequest]]:
    return [(seat, m.action_request) for seat, m, _ in decode(out) if m.WhichOneof("kind") == "action_request"]


def play(flow: MatchFlow, now: float, out: Outbox | None = None,
         choose: Callable[[bot_pb2.ActionRequest], Any] | None = None, think: float = 0.001,
         limit: int = 10_000) -> float:
    """Answer every request (``choose``, else knock first, ``think`` seconds after it was sent) until
    the match ends, starting from ``out`` (else the flow's outputs so far); the time it ended."""
    out = out or flow.take()
    pick = choose or knock_first(random.Random(7))
    for _ in range(limit):
        if flow.report is not None:
            return now
        asked = requests(out)
        assert len(asked) == 1, [m.WhichOneof("kind") for _, m, _ in decode(out)]
        seat, req = asked[0]
        now += think
        flow.answer(seat, req.request_id, pick(req), False, now)
        out = flow.take()
    raise AssertionError("the match did not end")


def test_the_flow_module_imports_no_trio_grpc_logging_or_clock() -> None:
    code = (
        "import sys, referee.table.match_flow\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('trio', 'grpc', 'structlog', 'asyncio'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"referee.table.match_flow pulled in: {out.stdout.strip()}"
    tree = ast.parse(SOURCE.read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"trio", "grpc", "structlog", "time", "asyncio", "gin_arena", "logging"}, imported


def test_a_match_played_through_the_flow_alone_is_the_match_the_trio_table_replays() -> None:
    flow = new_flow()
    flow.start(0.0)
    assert flow.state == "running"
    first = flow.out.sends[:2]
    assert [bot_pb2.RefereeMessage.FromString(d).WhichOneof("kind") for _, d, _ in first] == ["match_started"] * 2
    assert flow.out.public and any(e.event == "match_started" for e in flow.out.logs)
    play(flow, 0.0)
    report = flow.report
    assert report is not None and report.termination == "normal" and report.winner in (0, 1)
    assert report.decisions > 10 and sum(report.think_ms) == report.decisions  # 1 ms a decision
    lines = list(flow.recorder.lines)
    again = resimulate(read_replay(lines))
    assert again.lines == lines
    assert again.report.winner == report.winner and again.report.places == report.places


def test_the_deadline_is_the_request_time_from_when_it_was_written() -> None:
    flow = new_flow()
    flow.start(10.0)
    (seat, req), = requests(flow.take())
    assert flow.deadline == pytest.approx(10.0 + LIMIT_MS / 1000)
    flow.written(seat, req.request_id, 10.5)  # the transport wrote it later
    assert flow.deadline == pytest.approx(10.5 + LIMIT_MS / 1000)
    flow.written(seat, req.request_id + 1, 11.0)  # another request's: not this one's clock
    assert flow.deadline == pytest.approx(10.5 + LIMIT_MS / 1000)
    flow.timeout(12.4)  # not yet
    assert flow.report is None and not flow.take().sends
    flow.timeout(12.5)
    report = flow.report
    assert report is not None and report.termination == "time_forfeit"
    assert report.faulting_seat == seat and report.winner == 1 - seat
    assert flow.deadline == float("inf")
    out = flow.take()
    finished = [(s, m) for s, m, _ in decode(out) if m.WhichOneof("kind") == "match_finished"]
    assert sorted(s for s, _ in finished) == [0, 1]
    assert any(e == LogEvent("warning", "seat_faulted", {"seat": seat, "termination": "time_forfeit",
                                                         "detail": report.detail}) for e in out.logs)


def test_an_answer_after_its_time_loses_and_one_in_time_is_charged_to_the_seat() -> None:
    flow = new_flow()
    flow.start(0.0)
    (seat, req), = requests(flow.take())
    flow.answer(seat, req.request_id, req.legal_actions[0], False, 0.25)
    assert flow.report is None and flow.decisions == 1
    (seat2, req2), = requests(flow.take())
    flow.answer(seat2, req2.request_id, req2.legal_actions[0], False, 0.25 + LIMIT_MS / 1000 + 0.001)
    report = flow.report
    assert report is not None and report.termination == "time_forfeit" and report.faulting_seat == seat2
    assert "answered after 2001 ms" in report.detail


def test_a_disconnected_seat_gets_the_grace_then_its_request_again_on_reconnect() -> None:
    flow = new_flow()
    flow.start(0.0)
    (seat, _req), = requests(flow.take())
    sent = flow.seats[seat].open_request
    flow.disconnect(seat, "the stream broke", 0.1)
    assert flow.deadline == pytest.approx(0.1 + GRACE_MS / 1000)
    assert [e.event for e in flow.take().logs] == ["seat_disconnected"]
    flow.reconnect(seat, 0.3)
    out = flow.take()
    kinds = [(s, m.WhichOneof("kind")) for s, m, _ in decode(out)]
    assert kinds == [(seat, "match_started"), (seat, "deal_started"), (seat, "action_request")]
    assert out.sends[-1] == (seat, sent, PLAIN)  # the same bytes; its clock still runs from the first send
    assert flow.deadline == pytest.approx(LIMIT_MS / 1000)
    # Gone again, and not back within the grace: the seat loses by disconnection.
    flow.disconnect(seat, "again", 0.5)
    flow.timeout(0.5 + GRACE_MS / 1000)
    report = flow.report
    assert report is not None and report.termination == "disconnected" and report.faulting_seat == seat


def test_a_seat_that_reconnects_after_its_time_ran_out_loses_on_time() -> None:
    flow = new_flow(reconnect_grace_ms=5_000)
    flow.start(0.0)
    (seat, _), = requests(flow.take())
    flow.disconnect(seat, "the stream broke", 0.1)
    flow.reconnect(seat, LIMIT_MS / 1000 + 0.5)
    report = flow.report
    assert report is not None and report.termination == "time_forfeit" and "reconnected after" in report.detail


def test_stray_answers_get_errors_then_the_session_is_closed_as_a_flood() -> None:
    flow = new_flow()
    flow.start(0.0)
    (seat, req), = requests(flow.take())
    other = 1 - seat
    for _i in range(MAX_STRAY_MESSAGES):
        flow.answer(other, 999, req.legal_actions[0], False, 0.01)
        flow.answer(seat, req.request_id + 7, req.legal_actions[0], False, 0.01)
    out = flow.take()
    errors = [(s, m.error.code) for s, m, _ in decode(out)]
    assert errors.count((other, bot_pb2.ERROR_CODE_NOT_YOUR_TURN)) == MAX_STRAY_MESSAGES
    assert errors.count((seat, bot_pb2.ERROR_CODE_BAD_REQUEST_ID)) == MAX_STRAY_MESSAGES
    assert not out.closes
    flow.answer(other, 999, req.legal_actions[0], False, 0.02)
    out = flow.take()
    assert out.closes == [(other, "RESOURCE_EXHAUSTED", f"more than {MAX_STRAY_MESSAGES} unexpected actions")]
    assert not out.sends and flow.report is None  # the match goes on: the seat has its request
    flow.answer(seat, req.request_id, req.legal_actions[0], False, 0.03)
    assert flow.decisions == 1


def test_an_illegal_answer_is_rejected_and_asked_again_under_repeat_illegal() -> None:
    flow = new_flow(repeat_illegal=True)
    flow.start(0.0)
    (seat, req), = requests(flow.take())
    legal = {a.SerializeToString(deterministic=True) for a in req.legal_actions}
    wrong = next(a for a in _every_action() if a.SerializeToString(deterministic=True) not in legal)
    flow.answer(seat, req.request_id, wrong, False, 0.1)
    (s, msg, ask), = decode(flow.take())
    assert (s, msg.WhichOneof("kind"), ask) == (seat, "action_rejected", ASKING)
    assert msg.action_rejected.request_id == req.request_id and msg.action_rejected.reason
    flow.answer(seat, req.request_id, req.legal_actions[0], False, 0.2)
    assert flow.decisions == 1 and flow.report is None


def _every_action() -> list[Any]:
    """Well-formed actions of every kind that needs no card, and a discard of each card."""
    kinds = (gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_DRAW_DISCARD, gin_pb2.ACTION_KIND_PASS)
    return [common_pb2.Action(gin=gin_pb2.Action(kind=k)) for k in kinds] + [
        common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card=r + s))
        for r in "A23456789TJQK" for s in "cdhs"]


def test_an_alert_is_applied_by_the_policy_and_substitute_plays_on() -> None:
    flow = new_flow(fault_policy="substitute")
    flow.start(0.0)
    (seat, _req), = requests(flow.take())
    flow.alert(Fault(seat, "crashed", f"seat {seat}'s bot process ended"))
    assert flow.alerted
    flow.timeout(0.01)
    assert not flow.alerted and flow.report is None
    out = flow.take()
    told = decode(out)
    assert (seat, bot_pb2.ERROR_CODE_PROTOCOL_VIOLATION) in [(s, m.error.code) for s, m, _ in told]
    assert [e.event for e in out.logs if e.level == "warning"] == ["seat_substituted"]
    # The built-in bot plays the seat to the end of the game; the other seat is asked meanwhile.
    assert [s for s, _ in requests(out)] == [1 - seat]
    play(flow, 0.01, out)
    report = flow.report
    assert report is not None and report.termination == "normal" and report.substituted_seats == (seat,)


MOVE: dict[str, Any] = {"fault_policy": "substitute", "substitute_time_faults": "move"}
BANK = TimeControl(base_ms=LIMIT_MS, increment_ms=100, margin_ms=50)


def _records(flow: MatchFlow) -> list[dict[str, Any]]:
    return [json.loads(line) for line in flow.recorder.lines]


def _errors(out: Outbox, seat: int) -> list[bot_pb2.ErrorReport]:
    return [m.error for s, m, _ in decode(out) if s == seat and m.WhichOneof("kind") == "error"]


def _until_asked(flow: MatchFlow, seat: int, out: Outbox, now: float) -> tuple[bot_pb2.ActionRequest, Outbox, float]:
    """Answer the other seats (knock first) until ``seat`` is asked: its request, the outputs
    that asked it, the time."""
    pick = knock_first(random.Random(3))
    while True:
        (asked, req), = requests(out)
        if asked == seat:
            return req, out, now
        now += 0.001
        flow.answer(asked, req.request_id, pick(req), False, now)
        out = flow.take()


@pytest.mark.parametrize("late", [False, True], ids=["no-answer", "late-answer"])
def test_a_time_forfeit_under_move_hands_the_bot_that_one_decision_and_the_seat_plays_on(late: bool) -> None:
    flow = new_flow(time_control=BANK, **MOVE)
    flow.start(0.0)
    out = flow.take()
    started = [m.match_started for _, m, _ in decode(out) if m.WhichOneof("kind") == "match_started"]
    assert len(started) == 2 and all(m.time_forfeit_substitutes_one_decision for m in started)
    (seat, req), = requests(out)
    now = flow.deadline
    if late:  # an answer read past its time: lost, and not played
        now += 0.001
        flow.answer(seat, req.request_id, req.legal_actions[0], False, now)
    else:  # no answer: the timer wakes
        flow.timeout(now)
    out = flow.take()
    assert flow.report is None and flow.decisions == 1 and not out.closes
    (err,) = _errors(out, seat)
    assert err.code == bot_pb2.ERROR_CODE_TOO_LATE and err.request_id == req.request_id and not err.fatal
    assert "your time ran out; a built-in bot played this decision" in err.message
    assert "to the end of this game" not in err.message
    assert not _errors(out, 1 - seat)  # the other seat is told the move, as any move
    assert [(e.event, e.fields["scope"]) for e in out.logs if e.level == "warning"] == [("seat_substituted", "move")]
    if not late:  # an answer to the lost request, too late: refused, nothing changes
        flow.answer(seat, req.request_id, req.legal_actions[0], False, now + 0.002)
        stray = flow.take()
        assert [e.code for e in _errors(stray, seat)] in ([bot_pb2.ERROR_CODE_NOT_YOUR_TURN],
                                                          [bot_pb2.ERROR_CODE_BAD_REQUEST_ID])
        assert flow.decisions == 1 and not requests(stray)
    # The seat is asked again (its clock as before the lost decision), and answers itself from then on.
    again, out, now = _until_asked(flow, seat, out, now)
    assert again.request_id > req.request_id and again.time_for_move_ms == req.time_for_move_ms
    assert flow.seats[seat].substitute_next is False and flow.seats[seat].substituted is False
    play(flow, now, out)
    report = flow.report
    assert report is not None and report.termination == "normal" and report.substituted_seats == (seat,)
    records = _records(flow)
    assert records[0]["substitute_time_faults"] == "move"
    (fault,) = [r for r in records if r["type"] == "fault"]
    assert (fault["termination"], fault["policy"], fault["scope"]) == ("time_forfeit", "substitute", "move")
    assert ("used_us" in fault) == late and fault["request_id"] == req.request_id
    mine = [r for r in records if r["type"] == "action" and r["seat"] == seat]
    assert mine[0]["substitute"] and mine[0]["request_id"] == 0  # the one decision the bot played
    assert len(mine) > 2 and not any(r["substitute"] for r in mine[1:]) and all(r["request_id"] for r in mine[1:])
    assert not any(r["substitute"] for r in records if r["type"] == "action" and r["seat"] != seat)
    lines = list(flow.recorder.lines)
    rerun = resimulate(read_replay(lines))
    assert rerun.lines == lines and rerun.report.substituted_seats == (seat,)
    (read,) = [r for r in read_replay(lines).records if isinstance(r, FaultRecord)]
    assert read.scope == "move" and read.applied == "substitute for this decision only"


def test_a_time_forfeit_under_game_still_hands_the_bot_the_seat_to_the_end_of_the_game() -> None:
    flow = new_flow(fault_policy="substitute")
    flow.start(0.0)
    out = flow.take()
    assert not any(m.match_started.time_forfeit_substitutes_one_decision for _, m, _ in decode(out))
    (seat, _req), = requests(out)
    now = flow.deadline
    flow.timeout(now)
    out = flow.take()
    (err,) = _errors(out, seat)
    assert err.code == bot_pb2.ERROR_CODE_PROTOCOL_VIOLATION and "to the end of this game" in err.message
    assert [s for s, _ in requests(out)] == [1 - seat]
    play(flow, now, out)
    report = flow.report
    assert report is not None and report.termination == "normal" and report.substituted_seats == (seat,)
    records = _records(flow)
    assert "substitute_time_faults" not in records[0]  # the replay's bytes as before the option
    (fault,) = [r for r in records if r["type"] == "fault"]
    assert fault["policy"] == "substitute" and "scope" not in fault
    first_game = records[: [r["type"] for r in records].index("game_end")]
    mine = [r for r in first_game if r["type"] == "action" and r["seat"] == seat]
    assert mine and all(r["substitute"] and r["request_id"] == 0 for r in mine)
    lines = list(flow.recorder.lines)
    assert resimulate(read_replay(lines)).lines == lines


def test_a_disconnect_under_move_still_substitutes_to_the_end_of_the_game() -> None:
    flow = new_flow(**MOVE)
    flow.start(0.0)
    (seat, _req), = requests(flow.take())
    flow.disconnect(seat, "the stream broke", 0.1)
    flow.timeout(0.1 + GRACE_MS / 1000)
    out = flow.take()
    assert flow.report is None and flow.seats[seat].substituted
    play(flow, 0.5, out)
    records = _records(flow)
    (fault,) = [r for r in records if r["type"] == "fault"]
    assert fault["termination"] == "disconnected" and "scope" not in fault
    first_game = records[: [r["type"] for r in records].index("game_end")]
    assert all(r["substitute"] for r in first_game if r["type"] == "action" and r["seat"] == seat)


def test_a_seat_back_after_its_time_under_move_gets_the_match_the_notice_then_its_next_request() -> None:
    flow = new_flow(reconnect_grace_ms=5_000, **MOVE)
    flow.start(0.0)
    (seat, req), = requests(flow.take())
    flow.disconnect(seat, "the stream broke", 0.1)
    flow.take()
    now = LIMIT_MS / 1000 + 0.5
    flow.reconnect(seat, now)
    out = flow.take()
    assert flow.report is None and flow.decisions == 1
    told = [m for s, m, _ in decode(out) if s == seat]
    kinds = [m.WhichOneof("kind") for m in told]
    assert kinds[:3] == ["match_started", "deal_started", "error"], kinds
    assert told[2].error.code == bot_pb2.ERROR_CODE_TOO_LATE and "reconnected after" in told[2].error.message
    assert req.request_id not in [m.action_request.request_id for m in told if m.WhichOneof("kind") == "action_request"]
    assert kinds.count("action_request") <= 1  # its next request once, if it is its turn
    play(flow, now, out)
    report = flow.report
    assert report is not None and report.termination == "normal" and report.substituted_seats == (seat,)
    mine = [r for r in _records(flow) if r["type"] == "action" and r["seat"] == seat]
    assert mine[0]["substitute"] and not any(r["substitute"] for r in mine[1:])


def test_the_one_decision_scope_is_checked_and_crosses_create_match_and_the_spectators_header() -> None:
    from referee.lowlevel import create_match_request
    from referee.transport.service import spec_from_request

    with pytest.raises(ValueError, match="substitute_time_faults must be game or move; got 'turn'"):
        spec(fault_policy="substitute", substitute_time_faults="turn")
    moving = spec(**MOVE)
    request = create_match_request(moving)
    assert request.time_forfeit_substitutes_one_decision and spec_from_request(request) == moving
    plain = spec(fault_policy="substitute")
    assert spec_from_request(create_match_request(plain)).substitute_time_faults == "game"
    flow = new_flow(**MOVE)
    flow.start(0.0)
    header = referee_pb2.SpectatorEvent.FromString(flow.take().public[0]).header
    assert header.fault_policy == common_pb2.FAULT_POLICY_SUBSTITUTE and header.time_forfeit_substitutes_one_decision


def test_a_crash_before_the_start_forfeits_and_no_seat_ever_connecting_aborts() -> None:
    flow = MatchFlow(spec(), "flow", bytes(range(32)), MatchRecorder())
    flow.connected(0, b"n" * 8, "bot0", True)
    flow.alert(Fault(1, "crashed", "seat 1's bot process ended"))
    flow.start(1.0)
    report = flow.report
    assert report is not None and report.termination == "crashed" and report.winner == 0
    empty = MatchFlow(spec(), "flow", bytes(range(32)), MatchRecorder())
    empty.start(1.0)
    assert empty.report is not None and empty.report.termination == "failed_to_connect" and empty.state == "aborted"


def test_a_bug_of_ours_ends_the_match_as_an_internal_error_and_never_reaches_the_caller() -> None:
    flow = new_flow()
    flow.start(0.0)
    (seat, req), = requests(flow.take())

    def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("a bug")

    flow.wire = type("BrokenWire", (), {"action_from_proto": staticmethod(broken),
                                        "raw_action": staticmethod(broken)})()
    flow.answer(seat, req.request_id, req.legal_actions[0], False, 0.1)
    report = flow.report
    assert report is not None and report.termination == "internal_error" and "a bug" in report.detail
    errors = [e for e in flow.take().logs if e.level == "error"]
    assert errors and isinstance(errors[0].error, RuntimeError)


def test_cancel_stops_every_step_and_abort_ends_with_the_reason() -> None:
    flow = new_flow()
    flow.start(0.0)
    (seat, req), = requests(flow.take())
    flow.cancel("the operator said so")
    flow.answer(seat, req.request_id, req.legal_actions[0], False, 0.1)
    assert flow.decisions == 0 and not flow.take().sends
    flow.abort("aborted")
    report = flow.report
    assert report is not None and report.termination == "aborted" and report.detail == "the operator said so"
