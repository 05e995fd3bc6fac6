"""A bot that is stopped says goodbye: the kit's bot resigns its match with a goodbye on SIGTERM
(a real bot process, a real referee), and a seat whose bot closes its stream cleanly and does not
come back is recorded as having said goodbye — neither is a crash (``referee.lowlevel.is_goodbye``)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

import referee
import referee.lowlevel
from referee import BotLaunch, MatchObserver, MatchSpec, PlayedMatch, TimeControl, open_match_context
from referee.lowlevel import Table
from referee.table.faults import CLOSED_BY_BOT
from tests._tables import FakeSession

BUSY_BOT = str(Path(__file__).resolve().parents[1] / "bench" / "_busy_bot.py")
JS_DIR = Path(__file__).resolve().parents[1] / "sample_bots" / "js"


class _Pids(MatchObserver):
    def __init__(self) -> None:
        self.pids: dict[int, int] = {}

    def process_started(self, seat: int, pid: int) -> None:
        self.pids[seat] = pid


@pytest.mark.parametrize("kind", ["kit", "js"])
def test_a_bot_stopped_by_sigterm_says_goodbye_and_exits_0(kind: str) -> None:
    """A kit bot (each decision 50 ms of CPU) plays a kit bot or the JavaScript sample bot; once a
    few decisions are made, seat 1's process gets SIGTERM. The match ends at once with seat 1's
    ``bot_error`` that says goodbye (not a crash), and the process exited 0."""
    if kind == "js" and not (JS_DIR / "node_modules").is_dir():
        pytest.skip("the JS bot's packages are not installed (npm ci in sample_bots/js)")
    launch = BotLaunch(command=("{python}", BUSY_BOT), env=(("BENCH_BUSY_MS", "50"), ("GIN_LOG_LEVEL", "WARNING")))
    stopped = launch if kind == "kit" else BotLaunch(command=("node", str(JS_DIR / "bot.js")))
    played: list[PlayedMatch] = []
    observer = _Pids()

    async def main() -> None:
        async with open_match_context() as ctx:
            spec = MatchSpec(players=("stays", "stopped"), time_control=TimeControl(per_move_ms=60_000),
                             match_id="goodbye", connect_timeout_ms=120_000)

            async def play() -> None:
                played.append(await ctx.play(spec, [launch, stopped], observer))

            async with trio.open_nursery() as n:
                n.start_soon(play)
                tables = ctx.host.referee.tables  # type: ignore[attr-defined]  # (the embedded referee's)
                with trio.fail_after(300):  # generous: a loaded machine is slow, never red
                    while not (1 in observer.pids and "goodbye" in tables and tables["goodbye"].flow.decisions >= 4):
                        await trio.sleep(0.05)
                os.kill(observer.pids[1], signal.SIGTERM)

    referee.run(main)
    report = played[0].report
    assert report.termination == "bot_error" and report.faulting_seat == 1, report
    assert referee.lowlevel.is_goodbye(report.detail), report.detail
    assert "stopped by SIGTERM" in report.detail
    assert played[0].exits[1] == "exited with code 0", played[0].exits


def _closes(detail: str) -> referee.MatchReport:
    """A match whose seat to move ends its session with ``detail`` and never comes back."""
    spec = MatchSpec(players=("a", "b"), time_control=TimeControl(per_move_ms=60_000), match_id="closing",
                     reconnect_grace_ms=2_000, connect_timeout_ms=5_000)
    done: list[referee.MatchReport] = []

    async def main() -> None:
        table = Table(spec, None, lambda t: None, quiet=True)
        sessions = [FakeSession(bot_name="a"), FakeSession(bot_name="b")]
        for link, s in zip(table.links, sessions, strict=True):
            assert link.attach(s) is None
        async with trio.open_nursery() as n:
            n.start_soon(table.run)
            while table.asking is None:
                await trio.sleep(0.01)
            link = table.asking
            link.detach(sessions[link.seat], detail)
            await table.finished.wait()
        assert table.report is not None
        done.append(table.report)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return done[0]


def test_a_clean_close_that_does_not_come_back_says_goodbye() -> None:
    clean = _closes(CLOSED_BY_BOT)
    assert clean.termination == "disconnected" and referee.lowlevel.is_goodbye(clean.detail), clean.detail
    broken = _closes("stream error: ConnectionResetError()")
    assert broken.termination == "disconnected" and not referee.lowlevel.is_goodbye(broken.detail), broken.detail


def test_the_goodbye_detail_cannot_be_forged_by_a_reason() -> None:
    """Only the referee's own words at the start of a detail mark a goodbye."""
    assert referee.lowlevel.is_goodbye("seat 1 (bob) said goodbye: goodbye: stopped by SIGTERM")
    assert not referee.lowlevel.is_goodbye("seat 1 (bob) gave up: seat 1 (bob) said goodbye")
    assert not referee.lowlevel.is_goodbye("seat 1 (bob) gave up: said goodbye")
    assert sys.platform  # (the module runs everywhere)
