"""``arena replay``: the positions the viewer rebuilds agree with the referee, the terminal views
print them, and ``--seat N`` prints exactly what that seat was sent."""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import pty
import random
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arena.cli.replays_cmd import cmd_replay
from arena.replays import view as replay_view
from arena.replays.model import MatchView, Position, load
from arena.replays.steps import card_texts
from gin_arena.v2 import bot_pb2
from gin_arena.v2.games import gin_pb2
from referee import MatchReport, MatchSpec, TimeControl, resimulate
from referee.gin import RuleSet
from referee.replays import ActionRecord, DealEndRecord, DealRecord, read_replay
from tests.test_audit import Answer, Behaviour, illegal_at, no_knock_in_first_deal, play_match


@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, MatchReport]:
    folder = tmp_path_factory.mktemp("view")
    spec = MatchSpec(players=("alice", "bob"), rules=RuleSet.classic(target=25, stock_exhausted="reshuffle", games=2),
                     time_control=TimeControl.parse("st=1 timemargin=50"), seed=b"view-seed", match_id="view-1",
                     fault_policy="substitute")
    illegal = illegal_at(1)

    def bob(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        # no knock in the first deal (a reshuffle), then an illegal move (a substitute plays on)
        if req.gin.deal_number == 2 and req.gin.phase == gin_pb2.PHASE_DRAW:
            return illegal(1, req, rng)
        return no_knock_in_first_deal(n, req, rng)

    behaviours: tuple[Behaviour, Behaviour] = (no_knock_in_first_deal, bob)
    report = play_match(spec, behaviours, folder, seed=3)
    return Path(report.replay_path), report


@pytest.fixture(scope="module")
def view(match: tuple[Path, MatchReport]) -> MatchView:
    loaded = load(match[0])
    assert isinstance(loaded, MatchView)
    return loaded


def _pile(pos: Position, name: str) -> dict[str, Any]:
    return next(p for p in pos.shown["piles"] if p["name"] == name)


def test_positions_agree_with_the_records(view: MatchView, match: tuple[Path, MatchReport]) -> None:
    records = read_replay(match[0]).records
    assert len(view.deals) == sum(1 for r in records if isinstance(r, DealRecord))
    assert len(view.positions) == len(view.deals) + sum(1 for r in records if isinstance(r, ActionRecord))
    assert any(p.reshuffled for p in view.positions), "a reshuffle is shown"
    assert any(p.move is not None and p.move.substitute for p in view.positions), "the substitute's moves are shown"
    ends = [r.content for r in records if isinstance(r, DealEndRecord)]
    for deal, end in zip(view.deals, ends, strict=True):
        shown = deal.end_shown
        assert deal.end is not None and shown is not None
        assert sum(shown["points"]) == end.points
        if end.winner is not None:
            assert shown["points"][end.winner] == end.points and view.players[end.winner] in shown["text"]
        final = deal.positions[-1]
        if end.kind != "dead":
            assert tuple(sorted(card_texts(final.shown, s)) for s in (0, 1)) == tuple(sorted(h) for h in end.hands)
            laid = tuple(c for s in shown["seats"] for c in s["laid_off"])
            assert laid == end.layoffs
            for s in shown["seats"]:
                assert f"deadwood {end.deadwood[s['seat']]}" in s["notes"]
    for p in view.positions:
        held = sum(s["count"] for s in p.shown["seats"]) + sum(q["count"] for q in p.shown["piles"])
        knocked = p.move is not None and p.move.action.startswith("knock")
        assert held == (51 if knocked else 52), p.index
        assert all(s["hand"] is not None for s in p.shown["seats"]), "the replay's viewer sees every hand"


def test_positions_agree_with_what_the_seats_were_told(view: MatchView, match: tuple[Path, MatchReport]) -> None:
    again = resimulate(read_replay(match[0]))
    by_deal = {(d.game, d.number): d for d in view.deals}
    checked = 0
    for seat, msgs in enumerate(again.seat_messages):
        for m in msgs:
            if m.WhichOneof("kind") != "action_request":
                continue
            st = m.action_request.gin
            deal = by_deal[(st.game_number, st.deal_number)]
            moves = sum(1 for e in m.action_request.events if not e.gin.reshuffled)  # a reshuffle is no move
            pos = deal.positions[moves]
            mine = card_texts(pos.shown, seat)
            assert sorted(mine) == sorted(st.hand) and len(mine) == len(st.hand)
            assert _pile(pos, "discard pile")["cards"] == list(st.discard_pile)
            assert _pile(pos, "stock")["count"] == st.stock_size and pos.shown["to_move"] == seat
            legal = {a["id"] for a in pos.shown["legal"]}
            assert len(legal) == len(m.action_request.legal_actions) > 0
            checked += 1
    assert checked > 20


def _run(argv: list[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="arena")
    replay_view.add_parser(parser.add_subparsers(dest="subcommand"))
    out = io.StringIO()
    code = cmd_replay(parser.parse_args(argv), stdin=io.StringIO(), stdout=out)
    return code, out.getvalue()


def test_summary_step_deal_and_all(view: MatchView, match: tuple[Path, MatchReport]) -> None:
    path = str(match[0])
    code, out = _run(["replay", path])
    assert code == 0 and f"{len(view.deals)} deals, {len(view.positions)} positions" in out
    assert "Fault: bob — illegal_action" in out and out.count("  deal ") == len(view.deals)
    assert f"final hash {match[1].replay_hash}" in out

    pos = view.positions[7]
    code, out = _run(["replay", path, "--step", "7"])
    assert code == 0 and "move 7 of" in out and "position 7 of" in out
    for seat in (0, 1):
        hand = pos.shown["seats"][seat]["hand"]
        for meld in hand["groups"]:
            assert "[" + " ".join(meld) + "]" in out
        assert " ".join(hand["loose"]) in out
    assert f"stock {_pile(pos, 'stock')['count']}" in out

    deal = view.deals[1]
    code, out = _run(["replay", path, "--deal", "2"])
    assert code == 0 and out.count("Game ") == len(deal.positions) + (deal.game_end is not None)
    assert out.count("Deal over: ") == 1 and "scores after the deal" in out
    code2, out2 = _run(["replay", path, "--deal", f"{deal.game}:{deal.number}"])
    assert code2 == 0 and out2 == out

    code, out = _run(["replay", path, "--all", "--symbols"])
    assert code == 0 and out.count("position ") == len(view.positions) and "♠" in out
    assert "Match over: " in out

    assert _run(["replay", path, "--step", "100000"])[0] == 2
    assert _run(["replay", path, "--deal", "99"])[0] == 2


def test_seat_view_prints_exactly_what_the_seat_was_sent(match: tuple[Path, MatchReport]) -> None:
    path = match[0]
    records = read_replay(path)
    result = records.result
    assert result is not None
    for seat in (0, 1):
        code, out = _run(["replay", str(path), "--seat", str(seat)])
        lines = out.splitlines()
        assert code == 0 and "matches the replay's result record ✓" in lines[0]
        assert len(lines) - 1 == result.messages[seat]
        assert lines[1].startswith("#0    match_started: ") and f"you are seat {seat}" in lines[1]
        kinds = [line.split()[1].rstrip(":") for line in lines[1:]]
        assert set(kinds) <= set(replay_view.STORY_KINDS) and "deal_finished" in kinds
        other = [line for line in lines if f": seat {1 - seat} draw_stock" in line]
        assert other and all("(hidden)" in line for line in other), "the opponent's stock draws stay hidden"
        mine = [line for line in lines if f": seat {seat} draw_stock" in line]
        assert mine and not any("(hidden)" in line for line in mine)
    code, raw = _run(["replay", str(path), "--seat", "1", "--raw"])
    assert code == 0 and "--- #0 match_started" in raw and "action_request {" in raw
    # the digest of what is printed is the replay's
    again = resimulate(records)
    h = hashlib.sha256()
    for m in again.seat_messages[1]:
        if m.WhichOneof("kind") in replay_view.STORY_KINDS:
            data = m.SerializeToString(deterministic=True)
            h.update(struct.pack(">I", len(data)) + data)
    assert h.hexdigest() == result.message_digests[1]
    assert _run(["replay", str(path), "--raw"])[0] == 2


def test_keys_step_through_the_match(view: MatchView) -> None:
    last = len(view.positions) - 1
    assert replay_view.step_key(view, 0, "n") == 1 and replay_view.step_key(view, 0, "p") == 0
    assert replay_view.step_key(view, 0, "d") == view.deals[1].positions[0].index
    assert replay_view.step_key(view, view.deals[1].positions[3].index, "u") == view.deals[1].positions[0].index
    assert replay_view.step_key(view, view.deals[1].positions[0].index, "u") == 0
    assert replay_view.step_key(view, 0, "G") == last and replay_view.step_key(view, last, "right") == last
    assert replay_view.step_key(view, 5, "q") is None


@pytest.mark.timeout(30)
def test_interactive_on_a_terminal(view: MatchView) -> None:
    master, slave = pty.openpty()

    def type_keys() -> None:
        time.sleep(0.3)
        for key in (b"n", b"n", b"\x1b[C", b"d", b"q", b"q", b"q"):
            os.write(master, key)
            time.sleep(0.05)

    typist = threading.Thread(target=type_keys, daemon=True)
    try:
        typist.start()
        with os.fdopen(os.dup(slave), "r") as stdin:
            out = io.StringIO()
            assert replay_view.interactive(view, replay_view.Style(), stdin, out) == 0
    finally:
        typist.join(5)
        os.close(master)
        os.close(slave)
    screens = out.getvalue().split("\x1b[2J\x1b[H")[1:]
    shown = [next(int(w.split()[1]) for w in s.split(" · ") if w.startswith("position ")) for s in screens]
    assert shown == [0, 1, 2, 3, view.deals[1].positions[0].index]
    assert replay_view.HELP in screens[0]


def test_a_replay_the_engine_refuses_is_explained(match: tuple[Path, MatchReport], tmp_path: Path) -> None:
    lines = match[0].read_bytes().splitlines()
    rng = random.Random(1)
    i = next(j for j in range(rng.randrange(5, 20), len(lines)) if b'"action":"discard ' in lines[j])
    bad = tmp_path / "bad.jsonl"
    lines[i] = lines[i].replace(b'"action":"discard ', b'"action":"knock ')
    bad.write_bytes(b"\n".join(lines))
    code, out = _run(["replay", str(bad)])
    assert code == 1 and out == ""
