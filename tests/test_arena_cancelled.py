"""The issue's "a bot cancels its own match when it is behind": against a remote referee
(``arena serve``), a bot that calls ``CancelMatch`` with its own token (or none) is refused and
its game plays on; a game the operator cancels is recorded as ``aborted`` with the operator's
reason — neither a win nor a loss for anyone, counted under the run's endings and as a no-result
in the standings, never silently dropped — and ``--resume`` does not play it again."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import grpc

import referee
import referee.lowlevel
from gin_arena.v2 import referee_pb2, referee_pb2_grpc
from tests._wait import RUN_HANG_S

ROOT = Path(__file__).resolve().parent.parent
TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
ENV = {**{k: v for k, v in os.environ.items() if k != TOKEN_ENV}, "PYTHONPATH": str(ROOT)}
REASON = "operator: the test cancels this match"

CHEAT = textwrap.dedent('''
    """A bot that tries to cancel its match at its first decision, then plays greedy, slowly."""
    import sys, time
    from pathlib import Path

    import grpc

    from gin_arena.v2 import referee_pb2, referee_pb2_grpc
    from sample_bots import greedy_bot
    from sample_bots.kit import Bot, make_parser, parse_config, run_bot

    class Cheat(Bot):
        name = "cheat"

        def __init__(self, referee, token, log):
            self.referee, self.token, self.log = referee, token, log

        def decide(self, request):
            if not self.log.exists():
                with grpc.insecure_channel(self.referee) as ch:
                    ops = referee_pb2_grpc.RefereeServiceStub(ch)
                    codes = []
                    for md in ((), (("authorization", "Bearer " + self.token),)):
                        try:
                            matches = ops.ListMatches(referee_pb2.ListMatchesRequest(), metadata=md, timeout=5)
                            for m in matches.matches:
                                ops.CancelMatch(referee_pb2.CancelMatchRequest(match_id=m.match_id), metadata=md)
                            codes.append("OK")
                        except grpc.RpcError as e:
                            codes.append(e.code().name)
                self.log.write_text(" ".join(codes))
            time.sleep(0.05)
            return greedy_bot.decide(request)

    parser = make_parser("cheat")
    parser.add_argument("--log", required=True)
    config, ns = parse_config(parser)
    sys.exit(run_bot(Cheat(config.referee, config.token, Path(ns.log)), config=config, log_level=ns.log_level))
''')


def _free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _cancel_one_running_match(address: str, token: str, tournament: subprocess.Popen[str]) -> str:
    md = referee.lowlevel.operator_metadata(token)
    with grpc.insecure_channel(address) as ch:
        ops = referee_pb2_grpc.RefereeServiceStub(ch)
        while tournament.poll() is None:
            running = ops.ListMatches(referee_pb2.ListMatchesRequest(
                state_filter=referee_pb2.MATCH_STATE_RUNNING), metadata=md, timeout=10).matches
            if running:
                match_id: str = running[0].match_id
                ops.CancelMatch(referee_pb2.CancelMatchRequest(match_id=match_id, reason=REASON), metadata=md,
                                timeout=10)
                return match_id
            time.sleep(0.05)
    raise AssertionError("the tournament ended before a match could be cancelled")


def test_an_operator_cancelled_game_is_recorded_unrated_and_a_bot_cannot_cancel(tmp_path: Path) -> None:
    (tmp_path / "cheat.py").write_text(CHEAT)
    address = _free_address()
    serve = subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", "--listen", address, "--dir", "srv"],
                             cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert serve.stdout is not None and serve.stdout.readline().startswith("referee listening on")
        token = (tmp_path / "srv" / "operator-token").read_text().strip()
        argv = [sys.executable, "-m", "arena.cli", "tournament", "--games", "2", "--rules", "short",
                "--tc", "st=5", "--concurrency", "2",
                "--bot", f'name=cheat cmd="{{python}} {tmp_path / "cheat.py"} --log {tmp_path / "codes.txt"}"',
                "--bot", 'name=greedy cmd="{python} -m sample_bots.greedy_bot"',
                "--referee", address, "--operator-token-file", "srv/operator-token", "--out", "run", "--no-progress"]
        tournament = subprocess.Popen(argv, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
        cancelled = _cancel_one_running_match(address, token, tournament)
        out, err = tournament.communicate(timeout=RUN_HANG_S)
        assert tournament.returncode == 0, err[-3000:]
        assert (tmp_path / "codes.txt").read_text().split() == ["UNAUTHENTICATED", "PERMISSION_DENIED"]
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        assert results["games_played"] == 2 and results["terminations"] == {"aborted": 1, "normal": 1}
        aborted = [g for g in results["games"] if g["termination"] == "aborted"]
        normal = [g for g in results["games"] if g["termination"] == "normal"]
        assert len(aborted) == 1 and aborted[0]["winner"] is None and REASON in aborted[0]["detail"]
        assert normal[0]["winner"] in ("cheat", "greedy")
        rows = {r["bot"]: r for r in results["standings"]}
        for bot in ("cheat", "greedy"):
            assert rows[bot]["games"] == 2 and rows[bot]["no_result"] == 1
            assert rows[bot]["wins"] + rows[bot]["losses"] == 1
        assert "aborted" in out  # the summary names the ending
        again = subprocess.run([*argv[:4], "--resume", "run", "--referee", address, "--operator-token-file",
                                "srv/operator-token", "--no-progress"],
                               cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=RUN_HANG_S)
        assert again.returncode == 0 and "already complete" in again.stdout, again.stderr[-2000:]
        assert json.loads((tmp_path / "run" / "results.json").read_text())["games"] == results["games"]
        assert cancelled
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)
