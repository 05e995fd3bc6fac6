"""``arena play``: a scripted "human" plays greedy through the real referee, bot process and gRPC."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.run.play import action_text, parse_answer
from gin_arena.v2 import common_pb2
from gin_arena.v2.games import gin_pb2 as G

ROOT = Path(__file__).resolve().parent.parent


def play(tmp_path: Path, answers: str, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "arena.cli", "play", "--bot", "greedy", "--rules", "short", "--rule", "target=10",
           "--seed", "1", "--replay-dir", str(tmp_path), *extra]
    return subprocess.run(cmd, input=answers, capture_output=True, text=True, timeout=50, cwd=ROOT)


def test_scripted_human_plays_a_match(tmp_path: Path) -> None:
    r = play(tmp_path, "1\n" * 2000)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "Your hand (" in out and "melds:" in out and "deadwood:" in out
    assert "[2s 3s 4s]" in out  # a meld of the human's hand, grouped
    assert "Legal moves:" in out and "1) draw_stock 2) draw_discard (" in out and "1) discard " in out
    assert "greedy discarded" in out and "Discard pile (top last):" in out and "Stock:" in out
    assert "*** Deal over: KNOCK" in out and "scored 64 points" in out and "laid off" in out
    assert "### Game 1 over: greedy won" in out and "##### Match over (normal): greedy won" in out
    assert "Replay: " in out and list(tmp_path.glob("*.jsonl"))


def test_invalid_input_reprompts_and_the_game_goes_on(tmp_path: Path) -> None:
    r = play(tmp_path, "zzz\n99\nd Zz\ndiscard Kh\n" + "1\n" * 2000)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "! 'zzz' is not a move" in out
    assert "! 99 is not a legal move number: choose 1-2" in out
    assert "! 'zz' is not a card" in out
    assert "! discard Kh is not legal now" in out  # a draw is due first
    assert out.count("Your move [1-2") >= 5  # the same decision asked again
    assert "##### Match over (normal)" in out


def test_q_resigns_cleanly(tmp_path: Path) -> None:
    r = play(tmp_path, "q\n")
    assert r.returncode == 0, r.stderr
    assert "You resign" in r.stdout
    assert "Match over (disconnected): greedy won" in r.stdout


def test_end_of_input_resigns(tmp_path: Path) -> None:
    r = play(tmp_path, "", "--seat", "1")
    assert r.returncode == 0, r.stderr
    assert "(end of input)" in r.stdout and "greedy won" in r.stdout


def test_parse_answer() -> None:
    legal = [common_pb2.Action(gin=G.Action(kind=kind, card=card)) for kind, card in (
        (G.ACTION_KIND_DISCARD, "Kh"), (G.ACTION_KIND_DISCARD, "Td"), (G.ACTION_KIND_KNOCK, "Td"),
        (G.ACTION_KIND_KNOCK, "Kh"))]
    after = {"Kh": 0, "Td": 4}
    pick = {t: parse_answer(t, legal, after) for t in ("2", "d Kh", "discard kh", "10d", "k td", "KNOCK Kh", "gin")}
    assert {t: action_text(a) if not isinstance(a, str) else a for t, a in pick.items()} == {
        "2": "discard Td", "d Kh": "discard Kh", "discard kh": "discard Kh", "10d": "discard Td",
        "k td": "knock Td", "KNOCK Kh": "knock Kh", "gin": "knock Kh"}
    assert "needs a card" in str(parse_answer("k", legal, after))
    assert "not legal" in str(parse_answer("stock", legal, after))
    assert "not a legal move number" in str(parse_answer("0", legal, after))
