"""Bots that connect from anywhere and play until stopped (issue 20): the Python kit, the
JavaScript bot and the stdio bridge, each with ``--matches 0``, against a real ``referee serve``
that creates matches for their tokens one round after another, after they connected; the
referee is killed and restarted and they come back. Also: a refused token ends at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from gin_arena.v2 import referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from tests._wait import HANG_S

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "sample_bots" / "js"
TOKENS = {"kit": "kit-token-0123456789", "js": "js-token-0123456789", "bridge": "bridge-token-0123456789"}
PAIRS = (("kit", "js"), ("js", "bridge"), ("bridge", "kit"))
OVER = (referee_pb2.MATCH_STATE_FINISHED, referee_pb2.MATCH_STATE_ABORTED)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIN_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "proto"), env.get("PYTHONPATH", "")])
    return env


class RefereeProcess:
    """``referee serve`` in a subprocess, restartable on the same port."""

    def __init__(self, folder: Path, limits: list[str] | None = None) -> None:
        self.folder = folder
        self.limits = limits or []
        self.address = "127.0.0.1:0"
        self.proc: subprocess.Popen[str] | None = None
        self.token = ""

    def start(self) -> None:
        argv = [sys.executable, "-m", "referee.cli", "serve", "--listen", self.address, "--replays",
                str(self.folder / "replays"), "--operator-token-file", str(self.folder / "operator-token"),
                "--log-level", "warning", *(f"--limit={item}" for item in self.limits)]
        log = (self.folder / "referee.log").open("a")
        self.proc = proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True, env=_env())
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("referee listening on "):
                self.address = line.split()[3]
                self.token = (self.folder / "operator-token").read_text().strip()
                return
        raise AssertionError(f"referee serve exited: {(self.folder / 'referee.log').read_text()[-2000:]}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def ops(self) -> tuple[grpc.Channel, referee_pb2_grpc.RefereeServiceStub]:
        channel = grpc.insecure_channel(self.address)
        return channel, referee_pb2_grpc.RefereeServiceStub(channel)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)


def _create_round(ref: RefereeProcess, round_no: int) -> list[str]:
    channel, ops = ref.ops()
    with channel:
        ids = []
        for a, b in PAIRS:
            response = ops.CreateMatch(referee_pb2.CreateMatchRequest(
                match_id=f"r{round_no}-{a}-{b}", gin=gin_pb2.RuleSet(name="short"), connect_timeout_ms=120_000,
                seats=[referee_pb2.SeatSpec(name=a, token=TOKENS[a]), referee_pb2.SeatSpec(name=b, token=TOKENS[b])],
            ), metadata=ref.metadata, timeout=30)
            ids.append(response.match_id)
        return ids


def _wait_over(ref: RefereeProcess, ids: list[str]) -> list[referee_pb2.MatchStatus]:
    channel, ops = ref.ops()
    deadline = time.monotonic() + HANG_S
    with channel:
        while True:
            statuses = [ops.GetMatch(referee_pb2.GetMatchRequest(match_id=i), metadata=ref.metadata, timeout=30).match
                        for i in ids]
            if all(s.state in OVER for s in statuses):
                return statuses
            assert time.monotonic() < deadline, f"matches not over: {statuses}"
            time.sleep(0.1)


@pytest.fixture
def bots_and_referee(tmp_path: Path) -> Iterator[tuple[RefereeProcess, dict[str, subprocess.Popen[str]]]]:
    if not (JS_DIR / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--silent"], cwd=JS_DIR, check=True, timeout=600)
    ref = RefereeProcess(tmp_path)
    ref.start()
    bots: dict[str, subprocess.Popen[str]] = {}
    try:
        yield ref, bots
    finally:
        for proc in bots.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if ref.proc is not None and ref.proc.poll() is None:
            ref.kill()


def _start_bots(ref: RefereeProcess, tmp: Path) -> dict[str, subprocess.Popen[str]]:
    common = ["--referee", ref.address, "--matches", "0", "--concurrent", "2"]
    argv = {
        "kit": [sys.executable, "-m", "sample_bots.greedy_bot", *common, "--token", TOKENS["kit"], "--name", "kit"],
        "js": ["node", str(JS_DIR / "bot.js"), *common, "--token", TOKENS["js"], "--name", "js", "--games", "gin"],
        "bridge": [sys.executable, "-m", "sample_bots.stdio_bridge", *common, "--token", TOKENS["bridge"],
                   "--name", "bridge", "--", "node", str(ROOT / "sample_bots" / "stdio" / "bot.js")],
    }
    return {name: subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=(tmp / f"{name}.log").open("w"),
                                   text=True, env=_env(), cwd=ROOT)
            for name, cmd in argv.items()}


def _welcomes(tmp: Path, name: str) -> int:
    return (tmp / f"{name}.log").read_text().count("welcome: session")


def test_three_kinds_of_bot_play_match_after_match_on_one_session_and_come_back_after_a_restart(
        bots_and_referee: tuple[RefereeProcess, dict[str, subprocess.Popen[str]]], tmp_path: Path) -> None:
    ref, bots = bots_and_referee
    first = _create_round(ref, 1)  # (a seat token opens a session only while one of its matches exists)
    bots.update(_start_bots(ref, tmp_path))
    statuses = _wait_over(ref, first)
    later = []
    for round_no in (2, 3):  # created after the bots connected, each while they wait with no match
        later += _create_round(ref, round_no)
        statuses += _wait_over(ref, later[-3:])
    assert all(s.state == referee_pb2.MATCH_STATE_FINISHED and s.result.termination == 1 for s in statuses), statuses
    for name in TOKENS:
        assert bots[name].poll() is None, f"{name} exited: {(tmp_path / f'{name}.log').read_text()[-2000:]}"
        assert _welcomes(tmp_path, name) == 1, f"{name} played on more than one session"

    ref.kill()
    ref.start()  # the same port; the bots' connections were lost
    again = _create_round(ref, 4)
    statuses = _wait_over(ref, again)
    assert all(s.state == referee_pb2.MATCH_STATE_FINISHED for s in statuses), statuses
    for name, proc in bots.items():
        log = (tmp_path / f"{name}.log").read_text()
        assert _welcomes(tmp_path, name) == 2, log[-2000:]
        assert "reconnecting in" in log, log[-2000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=HANG_S) == 0, log[-2000:]


@pytest.mark.parametrize("kind", ["kit", "js", "bridge"])
def test_a_refused_token_ends_the_session_at_once_with_one_clear_line(tmp_path: Path, kind: str) -> None:
    ref = RefereeProcess(tmp_path)
    ref.start()
    try:
        argv = {
            "kit": [sys.executable, "-m", "sample_bots.greedy_bot"],
            "js": ["node", str(JS_DIR / "bot.js")],
            "bridge": [sys.executable, "-m", "sample_bots.stdio_bridge"],
        }[kind] + ["--referee", ref.address, "--matches", "0", "--token", "no-such-token-0123"]
        if kind == "bridge":
            argv += ["--", "node", str(ROOT / "sample_bots" / "stdio" / "bot.js")]
        done = subprocess.run(argv, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=HANG_S)
        assert done.returncode == 1, done.stderr[-2000:]
        lines = [line for line in done.stderr.splitlines() if "refused the token" in line]
        assert len(lines) == 1 and "UNAUTHENTICATED" in lines[0] and ref.address in lines[0], done.stderr[-2000:]
        assert "reconnecting" not in done.stderr
    finally:
        ref.kill()
