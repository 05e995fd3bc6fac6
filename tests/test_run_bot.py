"""``referee.run_bot``: the bots of a match its caller plays (``arena play``'s opponents, the live
web's computer players) are started by the one module that starts every bot — real processes: the
token in ``GIN_TOKEN`` and not on the command line, their own process group ended whole (a
process the bot started included), their output in their log under the label, their exit code."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import trio

import referee
from tests._wait import HANG_S, POLL_S

TOKEN = "t" * 32
# Prints its argv and its token's length, starts a grandchild that would outlive it, then waits.
SCRIPT = 'echo "argv: $*"; echo "token of ${#GIN_TOKEN} in env"; sleep 600 & echo "child $!"; wait'


async def _poll(ready: object, what: str) -> None:
    assert callable(ready)
    deadline = time.monotonic() + HANG_S
    while not ready():
        assert time.monotonic() < deadline, f"waiting for {what}: nothing after {HANG_S:.0f} s (a hang)"
        await trio.sleep(POLL_S)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_run_bot_ends_the_bots_whole_group_and_keeps_its_output(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "bot.log"
    launch = referee.BotLaunch(command=("sh", "-c", SCRIPT, "sh"), token_in_argv=False, name="opp",
                               log_path=str(log))

    async def main() -> tuple[int, int | None]:
        over = trio.Event()
        result: list[int | None] = []

        async def run(*, task_status: trio.TaskStatus[int]) -> None:
            result.append(await referee.run_bot(launch, "127.0.0.1:1", TOKEN, over, label="m1 seat 1",
                                                exit_grace_s=0.1, task_status=task_status))

        async with trio.open_nursery() as nursery:
            pid = await nursery.start(run)
            assert os.getpgid(pid) == pid
            await _poll(lambda: log.exists() and b"] child " in log.read_bytes(), "the bot's output in its log")
            over.set()
        return pid, result[0]

    pid, code = trio.run(main)
    text = log.read_text()
    child = int(text.split("] child ", 1)[1].split()[0])
    assert "[m1 seat 1] argv: --referee 127.0.0.1:1 --name opp" in text, text
    assert f"[m1 seat 1] token of {len(TOKEN)} in env" in text and TOKEN not in text, text
    assert code is not None and code < 0, code  # (ended by a signal: it was waiting for ever)
    assert f"m1 seat 1: pid {pid}: sh -c" in text and "m1 seat 1: killed by SIGTERM" in text, text
    deadline = time.monotonic() + HANG_S
    while not _gone(child):  # (its grandchild went with its group)
        assert time.monotonic() < deadline, f"the bot's child {child} outlived it"
        time.sleep(POLL_S)


def test_run_bot_that_cannot_start_raises_and_says_so_in_its_log(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    launch = referee.BotLaunch(command=(str(tmp_path / "no-such-program"),), name="opp", log_path=str(log))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            with pytest.raises(OSError):  # (from nursery.start itself, as arena play and the web catch it)
                await nursery.start(referee.run_bot, launch, "127.0.0.1:1", TOKEN, trio.Event())

    trio.run(main)
    assert "bot 'opp' could not be started" in log.read_text()
