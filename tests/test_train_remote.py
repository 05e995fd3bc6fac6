"""A bot process over gRPC as an opponent of the Gymnasium wrapper (train_env.remote): started by
the referee's launcher, reused across episodes, sent what the referee would send its seat; the
learner sees what it sees against the same bot in process; a crash is an error, not a hang; no
process outlives the environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tests._wait import HANG_S, RUN_HANG_S, until
from train_env.remote import BotProcess, BotProcessError
from train_env.single import SingleAgentEnv

GREEDY = BotProcess(("{python}", "-m", "sample_bots.greedy_bot"), name="greedy", connect_s=HANG_S, answer_s=HANG_S)
CRASH_AT = 3
CRASHER = (
    "import os, sys\n"
    "from sample_bots.kit.policy import main\n"
    "asked = []\n"
    "def crash(obs):\n"
    "    asked.append(1)\n"
    f"    if len(asked) == {CRASH_AT}:\n"
    "        os._exit(3)\n"
    "    return int(obs['action_mask'].nonzero()[0][0])\n"
    "raise SystemExit(main(sys.argv[1:] + ['--policy', '__main__:crash']))\n"
)
"""A policy bot (the bridge back) that dies at its third decision."""


def _pids(log: Path) -> list[int]:
    """The bot processes started, as the launcher's log names them."""
    return [int(pid) for pid in re.findall(r"train-env seat \d+: pid (\d+):", log.read_text())]


def _greedy(log: Path) -> BotProcess:
    return BotProcess(GREEDY.command, name="greedy", log_path=str(log), connect_s=HANG_S, answer_s=HANG_S)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


def _episode(env: SingleAgentEnv, seed: int) -> tuple[list[bytes], list[float]]:
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen, rewards, done = [obs["observation"].tobytes() + obs["action_mask"].tobytes()], [], False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        seen.append(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        rewards.append(reward)
        done = terminated or truncated
    return seen, rewards


def test_check_env_passes_with_a_bot_process_and_close_ends_it(tmp_path: Path) -> None:
    log = tmp_path / "greedy.log"
    env = SingleAgentEnv("gin", opponents=_greedy(log), illegal="random", termination="game")
    try:
        check_env(env, skip_render_check=True)
        pids = _pids(log)
        assert len(pids) == 1 and not _gone(pids[0])  # one process for all of check_env's resets
    finally:
        env.close()
    until(lambda: _gone(pids[0]), "the bot process to be gone after close()")
    assert re.search(r"train-env seat 1: (exited|killed)", log.read_text())


def test_the_bot_process_plays_as_the_same_bot_in_process_and_is_reused(tmp_path: Path) -> None:
    """The greedy bot decides by the request alone: over gRPC it makes the moves it makes in process,
    so the learner sees byte-identical observations and gets the same rewards, episode after episode,
    from one process."""
    log = tmp_path / "greedy.log"
    remote = SingleAgentEnv("gin", opponents=_greedy(log), termination="game")
    local = SingleAgentEnv("gin", opponents="greedy", termination="game")
    try:
        for seed in (1, 2, 5):
            over_grpc = _episode(remote, seed)
            assert over_grpc == _episode(local, seed), seed
            assert len(over_grpc[0]) > 3
        assert len(_pids(log)) == 1
    finally:
        remote.close()
    text = log.read_text()
    assert "match train-env-3 started" in text, text[-2000:]


def test_rummy_seats_may_mix_bot_processes_and_bots_in_process() -> None:
    rummy = BotProcess(("{python}", "-m", "sample_bots.rummy_greedy_bot"), connect_s=HANG_S, answer_s=HANG_S)
    mixed = SingleAgentEnv("rummy", seats=3, seat=1, opponents=[rummy, "hoarder"], termination="deal")
    local = SingleAgentEnv("rummy", seats=3, seat=1, opponents=["greedy", "hoarder"], termination="deal")
    try:
        assert _episode(mixed, 7) == _episode(local, 7)
    finally:
        mixed.close()


def test_a_bot_that_crashes_mid_episode_is_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    log = tmp_path / "crasher.log"
    env = SingleAgentEnv("gin", termination="match", opponents=BotProcess(
        ("{python}", "-c", CRASHER), name="crasher", log_path=str(log), connect_s=HANG_S, answer_s=RUN_HANG_S))
    try:
        with pytest.raises(BotProcessError, match=r"(?s)seat 1 .*(exited with code 3|closed its gRPC session)"):
            for _ in range(10):
                _episode(env, 1)
    finally:
        env.close()
    pids = _pids(log)
    assert len(pids) == 1
    until(lambda: _gone(pids[0]), "the crashed bot's process to be gone")


def test_a_bot_that_does_not_play_the_game_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "greedy.log"
    env = SingleAgentEnv("rummy", seats=2, opponents=_greedy(log))
    with pytest.raises(BotProcessError, match="does not play rummy: its hello declares gin"):
        env.reset(seed=1)
    until(lambda: _gone(_pids(log)[0]), "the refused bot's process to be gone")
    env.close()


def test_a_bot_that_cannot_start_is_a_clear_error() -> None:
    env = SingleAgentEnv("gin", opponents=BotProcess(("/nonexistent-bot-program",), connect_s=HANG_S))
    with pytest.raises(BotProcessError, match="could not be started"):
        env.reset(seed=1)
    env.close()


@pytest.mark.parametrize("how", ["collected", "left open at exit"])
def test_no_bot_process_outlives_its_environment(how: str, tmp_path: Path) -> None:
    log = tmp_path / "greedy.log"
    script = (
        "import gc, sys\n"
        "from train_env.remote import BotProcess\n"
        "from train_env.single import SingleAgentEnv\n"
        f"env = SingleAgentEnv('gin', opponents=BotProcess(('{{python}}', '-m', 'sample_bots.greedy_bot'), "
        f"log_path=sys.argv[1], connect_s={HANG_S}))\n"
        "env.reset(seed=1)\n"
        + ("del env\ngc.collect()\nimport re\n"
           "print('collected', re.search(r'seat 1: (exited|killed)', open(sys.argv[1]).read()) is not None)\n"
           if how == "collected" else "")
        + "print('exiting', flush=True)\n"
    )
    done: Any = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True,
                               timeout=RUN_HANG_S, cwd=os.getcwd(), check=True)
    said = done.stdout.split()
    # collected: its process had ended (the launcher's log says so) before the interpreter exited
    assert said == (["collected", "True", "exiting"] if how == "collected" else ["exiting"]), done.stderr[-2000:]
    pids = _pids(log)
    assert len(pids) == 1
    until(lambda: _gone(pids[0]), f"the bot process {pids[0]} to be gone")
    assert re.search(r"train-env seat 1: (exited|killed)", log.read_text())
