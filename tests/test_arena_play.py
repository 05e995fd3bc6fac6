"""``arena play``: a scripted "human" plays bots through the real referee, bot processes and gRPC,
for every game: the screen is the game's own presentation drawn by the replay viewer's pieces."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.options import UsageError
from arena.cli.parser import build_parser
from arena.cli.play_cmd import spec_from_args
from arena.run.play import default_bot, parse_answer, sample_bots
from referee import games
from tests._wait import HANG_S, until

ROOT = Path(__file__).resolve().parent.parent


def play(tmp_path: Path, answers: str, *extra: str, game: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    base = game or ("--bot", "greedy", "--rules", "short", "--rule", "target=10")
    cmd = [sys.executable, "-m", "arena.cli", "play", *base, "--seed", "1", "--replay-dir", str(tmp_path), *extra]
    return subprocess.run(cmd, input=answers, capture_output=True, text=True, timeout=HANG_S, cwd=ROOT)


def _header(tmp_path: Path) -> dict[str, object]:
    (replay,) = tmp_path.glob("*.jsonl")
    header: dict[str, object] = json.loads(replay.read_text().splitlines()[0])
    return header


def test_scripted_human_plays_a_match(tmp_path: Path) -> None:
    r = play(tmp_path, "1\n" * 2000)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "Match " in out and "(gin): you vs greedy — you are seat 0 (you)." in out
    assert "Rules: short, target 10" in out
    assert "You    (dealer) " in out and "· deadwood " in out and "▶ to move (draw)" in out
    assert "greedy          10 cards (hidden)" in out  # the other hand is not shown
    assert "[2s 3s 4s]" in out  # a meld of the human's hand, grouped
    assert "Legal moves:" in out and "1) draw from the stock 2) take the discard" in out and "1) discard " in out
    assert "Last: greedy discards " in out and "discard pile (top last): " in out and "· stock " in out
    assert "*** Deal over: greedy won the deal — knock · knocker 1 · 64 points" in out and "laid off" in out
    assert "Scores: You 0, greedy 64  (game over)" in out
    assert "### Game 1 over: greedy won ###" in out and "##### Match over (normal): greedy won" in out
    assert "Replay: " in out and _header(tmp_path).get("game", "gin") == "gin"  # the default game is not written


def test_invalid_input_reprompts_and_the_game_goes_on(tmp_path: Path) -> None:
    r = play(tmp_path, "zzz\n99\nd Zz\ndiscard Kh\n\nd\n" + "1\n" * 2000)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "! 'zzz' is not a legal move now: choose 1-2" in out
    assert "! 99 is not a legal move number: choose 1-2" in out
    assert "! 'd Zz' is not a legal move now" in out
    assert "! 'discard Kh' is not a legal move now" in out  # a draw is due first
    assert "! nothing typed" in out
    assert "! 'd' could be 1) draw from the stock, 2) take the discard: say which" in out
    assert out.count("Your move [1-2") >= 7  # the same decision asked again
    assert "##### Match over (normal)" in out


def test_moves_typed_as_text(tmp_path: Path) -> None:
    """A move's id, its label, words shortened, or a card only one move uses."""
    r = play(tmp_path, "draw_stock\n" + "d 2s\ndraw from the stock\n3s\n" + "1\n" * 2000)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert out.count("-> draw from the stock") >= 2 and "-> discard 2s" in out and "-> discard 3s" in out


def test_q_resigns_cleanly(tmp_path: Path) -> None:
    r = play(tmp_path, "q\n")
    assert r.returncode == 0, r.stderr
    assert "You resign" in r.stdout
    assert "Match over (disconnected): greedy won" in r.stdout


def test_end_of_input_resigns(tmp_path: Path) -> None:
    r = play(tmp_path, "", "--seat", "1")
    assert r.returncode == 0, r.stderr
    assert "(end of input)" in r.stdout and "greedy won" in r.stdout


def test_a_rummy_game_for_three_through_arena_play(tmp_path: Path) -> None:
    r = play(tmp_path, "1\n" * 3000, "--seat", "1", game=("--game", "rummy", "--seats", "3", "--rule", "target=40"))
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "(rummy): greedy-1 vs you vs greedy-2 — you are seat 1 (you)." in out  # its registration's greedy
    assert "greedy-1          7 cards (hidden)" in out and "table: " in out
    assert "1) draw from the stock" in out and "-> discard " in out
    assert "*** Deal over: " in out and "##### Match over (normal): " in out
    header = _header(tmp_path)
    assert header["game"] == "rummy" and header["players"] == ["greedy-1", "you", "greedy-2"]


def test_a_toy3_game_through_arena_play(tmp_path: Path) -> None:
    """The plugin game (tests/plugin_game) plays through ``arena play`` with no edit of the arena."""
    bot = "{python} -m toy3_game.bot --strategy high"
    r = play(tmp_path, "2\n1\n" * 20, game=("--game", "toy3", "--seats", "3", "--command", bot))
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "(toy3): you vs opponent-1 vs opponent-2 — you are seat 0 (you)." in out
    assert "Legal moves:" in out and "1) play " in out and "2) play " in out and "played (top last): " in out
    assert "opponent-1          1 card (hidden)" in out
    assert "### Game 1 over: " in out and "##### Match over (normal): " in out
    assert _header(tmp_path)["game"] == "toy3"


def test_the_plugin_games_own_sample_bot_plays_by_default(tmp_path: Path) -> None:
    """toy3 registers its sample bots (``Registered.bots``): ``arena play --game toy3`` seats the
    first, ``--bot low`` the other — no file of the arena names them."""
    r = play(tmp_path, "1\n" * 20, game=("--game", "toy3", "--seats", "3"))
    assert r.returncode == 0, r.stderr
    assert "(toy3): you vs high-1 vs high-2 — you are seat 0 (you)." in r.stdout
    assert "##### Match over (normal): " in r.stdout
    assert _header(tmp_path)["players"] == ["you", "high-1", "high-2"]
    r = play(tmp_path / "low", "1\n" * 20, game=("--game", "toy3", "--bot", "low"))
    assert r.returncode == 0, r.stderr
    assert "(toy3): you vs low — you are seat 0 (you)." in r.stdout and "##### Match over (normal): " in r.stdout


def test_wrong_bots_and_seats_are_refused(tmp_path: Path) -> None:
    r = play(tmp_path, "", game=("--game", "toy3", "--seats", "9", "--command", "x"))
    assert r.returncode == 2 and "--seats 9: toy3 is played by 2-6 seats" in r.stderr
    r = play(tmp_path, "", game=("--bot", "nope"))
    assert r.returncode == 2 and ("--bot nope: gin has no such sample bot (choose from random, greedy, expert, "
                                  "eaai-simple, mc, hand-reader, js)") in r.stderr, r.stderr
    r = play(tmp_path, "", game=("--game", "toy3", "--bot", "js"))  # the JS bot plays only what it lists
    assert r.returncode == 2 and "--bot js: toy3 has no such sample bot (choose from high, low)" in r.stderr


def test_a_game_without_sample_bots_needs_a_command() -> None:
    """A game that registers no sample bot gets none by default: ``--command`` is asked for."""
    from toy3_game.wire import REGISTERED

    games.register("toy3-unbotted", lambda: dataclasses.replace(REGISTERED, bots=()))
    args = build_parser().parse_args(["play", "--game", "toy3-unbotted", "--seats", "3"])
    with pytest.raises(UsageError, match="--game toy3-unbotted: no sample bot plays it by default; give --bot NAME "
                       "or --command CMD"):
        spec_from_args(args)
    assert sample_bots("toy3-unbotted") == [] and default_bot("toy3-unbotted") == ""


def test_sample_bots_and_defaults() -> None:
    assert sample_bots("gin") == ["random", "greedy", "expert", "eaai-simple", "mc", "hand-reader", "js"]
    assert sample_bots("rummy") == ["random", "hoarder", "greedy", "mc", "js"]
    assert sample_bots("toy3") == ["high", "low"] and sample_bots("chess") == []
    assert default_bot("gin") == "greedy" and default_bot("rummy") == "greedy" and default_bot("toy3") == "high"


def test_parse_answer() -> None:
    legal = [{"id": i, "label": label, "kind": i.split()[0], "cards": [i.split()[1]]} for i, label in (
        ("discard Kh", "discard Kh"), ("discard Td", "discard Td"), ("knock Td", "knock, discarding face down Td"),
        ("knock Kh", "knock, discarding face down Kh"))]
    typed = ("2", "d Kh", "discard kh", "k td", "KNOCK Kh", "knock, discarding face down kh")
    pick = {t: parse_answer(t, legal) for t in typed}
    assert pick == {"2": 1, "d Kh": 0, "discard kh": 0, "k td": 2, "KNOCK Kh": 3, "knock, discarding face down kh": 3}
    assert "could be 1) discard Kh, 4) knock, discarding face down Kh" in str(parse_answer("Kh", legal))
    assert "not a legal move now" in str(parse_answer("stock", legal))
    assert "not a legal move number" in str(parse_answer("0", legal))
    toy = [{"id": "7", "label": "play 7", "kind": "play", "cards": ["7"]}]
    assert parse_answer("play 7", toy) == 0 and parse_answer("p 7", toy) == 0
    assert "not a legal move number" in str(parse_answer("7", toy))  # a number is always the move's number


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            if int(stat_line.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def test_the_opponents_seat_token_is_in_its_environment_not_on_its_command_line(tmp_path: Path) -> None:
    """A sample opponent gets its seat token in ``GIN_TOKEN`` (readable by its user alone), not
    in argv, which ``ps`` shows everyone (issue 34)."""
    cmd = [sys.executable, "-m", "arena.cli", "play", "--bot", "greedy", "--rules", "short", "--seed", "1",
           "--replay-dir", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=ROOT)
    try:
        bots: list[int] = []

        def started() -> bool:
            bots[:] = [c for c in _children(proc.pid)
                       if b"sample_bots.greedy" in Path("/proc", str(c), "cmdline").read_bytes()]
            return bool(bots)

        until(started, "the opponent's process", alive=proc)
        argv = Path("/proc", str(bots[0]), "cmdline").read_bytes().split(b"\0")
        environ = dict(item.split(b"=", 1) for item in Path("/proc", str(bots[0]), "environ").read_bytes().split(b"\0")
                       if b"=" in item)
        token = environ[b"GIN_TOKEN"]
        assert len(token) >= 32 and b"--token" not in argv and not any(token in a for a in argv), argv
        assert os.getpgid(bots[0]) == bots[0]  # (started as every bot is: its own process group, ended whole)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # (end of input: the human resigns)
        proc.wait(timeout=HANG_S)
