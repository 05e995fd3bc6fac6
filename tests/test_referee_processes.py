"""End to end with real processes: `referee serve`, two bot programs, a full game to 100."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc

from gin_arena.v2 import common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from tests._wait import finished_match


def _start_referee(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0",
         "--replays", str(tmp_path / "replays"), "--operator-token-file", str(tmp_path / "operator-token")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("referee listening on "), line
    where = proc.stdout.readline()
    assert where.startswith("operator token: created "), where
    return proc, line.split()[-1]


def test_two_bot_processes_play_a_full_game_to_100_through_a_standalone_referee(tmp_path: Path) -> None:
    referee, address = _start_referee(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        with grpc.insecure_channel(address) as channel:
            ops = referee_pb2_grpc.RefereeServiceStub(channel)
            md = (("authorization", "Bearer " + (tmp_path / "operator-token").read_text().strip()),)
            created = ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="greedy"), referee_pb2.SeatSpec(name="expert")],
                gin=gin_pb2.RuleSet(name="classic"),
                time_control=common_pb2.TimeControl(text="st=5"),
            ), metadata=md)
            programs = ["sample_bots.greedy_bot", "sample_bots.expert_bot"]
            for seat_token, program in zip(created.seat_tokens, programs, strict=True):
                bots.append(subprocess.Popen(
                    [sys.executable, "-m", program, "--referee", address, "--token", seat_token.token,
                     "--name", program.split(".")[-1]],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                ))
            for bot in bots:
                _, err = bot.communicate(timeout=240)
                assert bot.returncode == 0, err.decode()[-2000:]
            status = finished_match(ops, created.match_id, md)
        assert status.state == referee_pb2.MATCH_STATE_FINISHED
        result = status.result
        assert result.termination == common_pb2.TERMINATION_NORMAL, result.detail
        assert len(result.games) == 1
        assert max(result.games[0].gin.deal_points) >= 100, "a game is played to 100"
        assert Path(status.replay_path).exists()
    finally:
        for bot in bots:
            bot.kill()
        referee.terminate()
        referee.wait(timeout=10)
