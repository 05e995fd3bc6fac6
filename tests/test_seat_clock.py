"""A seat is charged the time its bot took, not the machine's: a stall of the referee's own loop
is not charged (``LoopStalls``), and a bot timed by its process tree's CPU time is not charged for
waiting for a CPU (``Table.bot_process``). Every timing here runs on trio's MockClock, with a fake
CPU-time source; only the /proc reader's test reads real CPU times of a real process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

from gin_arena.v2 import bot_pb2
from referee import MatchReport, MatchSpec, TimeControl
from referee.lowlevel import Table
from referee.table.seat_clock import (
    CPU_CLOCK_WALL_FACTOR,
    TICK_S,
    TICK_SLACK_S,
    LoopStalls,
    charged_s,
    cpu_clock_available,
    process_tree_cpu_s,
)
from referee.table.seats import SeatLink

Think = Callable[[int], Awaitable[None]]
"""What the bot does for its first decision before it answers (given the request's number)."""


class _Bot:
    """A bot's session: reports each message written at once (as the gRPC session does) and
    answers every request with its first legal action — the first one after ``think``."""

    def __init__(self, name: str, link: SeatLink, nursery: trio.Nursery, think: Think, asked: list[int]) -> None:
        self.bot_name = name
        self.nonce = b""
        self.skip_event_messages = True
        self.link = link
        self.nursery = nursery
        self.think = think
        self.asked = asked  # request ids in order, over both seats
        self.errors: list[bot_pb2.ErrorReport] = []

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        msg = bot_pb2.RefereeMessage.FromString(data)
        if on_written is not None:
            on_written(trio.current_time())
        if msg.WhichOneof("kind") == "error":
            self.errors.append(msg.error)
        if msg.WhichOneof("kind") == "action_request":
            self.asked.append(msg.action_request.request_id)
            self.nursery.start_soon(self._answer, msg, len(self.asked) == 1)

    async def _answer(self, msg: bot_pb2.RefereeMessage, first: bool) -> None:
        if first:
            await self.think(msg.action_request.request_id)
        else:
            await trio.sleep(0.01)  # (mock time passes: the test's task gets to look)
        req = msg.action_request
        self.link.deliver(bot_pb2.ActionResponse(match_id=msg.match_id, request_id=req.request_id,
                                                 action=req.legal_actions[0]), trio.current_time())

    def close(self, code: str, detail: str) -> None:
        pass


def _spec() -> MatchSpec:
    return MatchSpec(players=("a", "b"), time_control=TimeControl(per_move_ms=500, margin_ms=50),
                     match_id="clocked", connect_timeout_ms=5_000)


def _first_decision(think: Think, *, quiet: bool = False, cpu: dict[int, list[float]] | None = None,
                    pids: tuple[int, ...] = ()) -> tuple[MatchReport, float]:
    """Play a match on MockClock whose first decision takes ``think``; once a few decisions
    have been made (or the match ended), cancel it. Returns the report and the wall time from
    the first request to the first answer's handling (or the match's end)."""
    out: list[tuple[MatchReport, float]] = []

    async def main() -> None:
        source = cpu if cpu is not None else {}

        def cpu_time(pid: int) -> tuple[float, float, bool] | None:
            sample = source.get(pid)
            return (sample[0], sample[1], len(sample) > 2 and sample[2] > 0) if sample is not None else None

        table = Table(_spec(), None, lambda t: None, quiet=quiet, cpu_time=cpu_time)
        for seat, pid in enumerate(pids):
            table.bot_process(seat, pid)
        asked: list[int] = []
        async with trio.open_nursery() as n:
            for link in table.links:
                assert link.attach(_Bot(link.name, link, n, think, asked)) is None
            n.start_soon(table.run)
            while not asked and not table.over:
                await trio.sleep(0.001)
            start = trio.current_time()
            while table.flow.decisions < 1 and not table.over:
                await trio.sleep(0.001)
            took = trio.current_time() - start
            while table.flow.decisions < 5 and not table.over:
                await trio.sleep(0.001)
            table.cancel("enough")
            await table.finished.wait()
            n.cancel_scope.cancel()
        assert table.report is not None
        out.append((table.report, took))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out[0]


def test_loop_stalls_clock_stands_still_while_the_loop_is_late() -> None:
    real = [100.0]
    stalls = LoopStalls(lambda: real[0])
    real[0] += TICK_S  # on time
    stalls.tick()
    assert stalls.now() == pytest.approx(real[0]) and stalls.stalled_s == 0
    real[0] += 0.5  # the ticker is overdue by ~0.48 s: a stall in progress counts at once
    overdue = 0.5 - TICK_S - TICK_SLACK_S
    assert stalls.now() == pytest.approx(real[0] - overdue)
    assert stalls.fair(real[0]) == pytest.approx(stalls.now())
    assert stalls.real(stalls.now() + 0.1) == pytest.approx(real[0] + 0.1)
    stalls.tick()  # it woke: the stall is counted and the clock runs on from there
    assert stalls.stalled_s == pytest.approx(overdue) and stalls.worst_s == pytest.approx(overdue)
    before = stalls.now()
    real[0] += 0.01
    assert stalls.now() - before == pytest.approx(0.01)


def test_a_stall_of_the_referees_loop_is_not_charged_to_the_seat() -> None:
    """The bot thinks 0.2 s of its 0.5 s (+50 ms); meanwhile the referee's loop stalls for 1 s
    (MockClock.jump: time passes and no task runs). The seat is charged 0.2 s and plays on; on
    trio's clock as it is (a re-run's), the same decision is a time forfeit."""

    async def think_through_a_stall(_rid: int) -> None:
        await trio.sleep(0.1)
        clock = trio.lowlevel.current_clock()
        assert isinstance(clock, trio.testing.MockClock)
        clock.jump(1.0)
        await trio.sleep(0.1)

    report, took = _first_decision(think_through_a_stall)
    assert report.termination == "aborted" and report.detail == "enough", report
    assert took == pytest.approx(1.2, abs=0.05)
    # 0.2 s, the four next decisions' 10 ms each, and at most a tick and its slack of the stall
    assert 200 <= sum(report.think_ms) <= 200 + 40 + (TICK_S + TICK_SLACK_S) * 1000

    unfair, _ = _first_decision(think_through_a_stall, quiet=True)
    assert unfair.termination == "time_forfeit"


_OTHERS_MS = 10
"""What each decision after the first is charged: the fake bot's 10 ms of (mock) wall time, in
which it used no CPU and did not wait for one."""


def _starved(cpu: dict[int, list[float]], steps: int, share: float = 0.2) -> Think:
    """A bot that gets ``share`` of a CPU and waits for one the rest of the time, for ``steps``
    tenths of a second."""

    async def think(_rid: int) -> None:
        for sample in cpu.values():  # runnable all along: running or waiting for a CPU
            sample[2:] = [1.0]
        for _ in range(steps):
            await trio.sleep(0.1)
            for sample in cpu.values():  # (whichever seat was asked: both trees get the share)
                sample[0] += 0.1 * share
                sample[1] += 0.1 * (1 - share)
        for sample in cpu.values():
            sample[2:] = [0.0]

    return think


def test_a_bot_timed_by_cpu_is_not_charged_for_waiting_for_a_cpu() -> None:
    """Seat bots are processes 11 and 12 (a fake CPU-time source). The first decision takes
    1.5 s of wall time of which the bot got 0.3 s of CPU (a loaded host): charged 0.3 s, it plays
    on. Timed by the wall clock (no process known), the same decision loses on time."""
    cpu = {11: [5.0, 1.0], 12: [7.0, 2.0]}
    report, took = _first_decision(_starved(cpu, 15), cpu=cpu, pids=(11, 12))
    assert report.termination == "aborted" and report.detail == "enough", report
    assert took == pytest.approx(1.5, abs=0.05)
    assert sum(report.think_ms) == pytest.approx(300 + _OTHERS_MS * (report.decisions - 1), abs=25)

    cpu = {11: [5.0, 1.0], 12: [7.0, 2.0]}
    walled, _ = _first_decision(_starved(cpu, 15), cpu=cpu)
    assert walled.termination == "time_forfeit"


def test_a_bot_starved_past_the_wall_cap_still_plays_on() -> None:
    """Starved for 5 s of wall time (2.2 s is the cap for a bot that does not wait for a CPU:
    4 x 0.55 s), the bot used 0.5 s of CPU and waited 4.5 s for one: the time it waited does not
    count toward the cap, and its 0.5 s is within its 0.55 s."""
    cpu = {11: [0.0, 0.0], 12: [0.0, 0.0]}
    report, took = _first_decision(_starved(cpu, 50, share=0.1), cpu=cpu, pids=(11, 12))
    assert report.termination == "aborted" and report.detail == "enough", report
    assert took == pytest.approx(5.0, abs=0.05) and took > 0.55 * CPU_CLOCK_WALL_FACTOR
    assert sum(report.think_ms) == pytest.approx(500 + _OTHERS_MS * (report.decisions - 1), abs=25)


def test_a_bot_timed_by_cpu_still_loses_when_it_uses_its_time_or_waits_too_long() -> None:
    """A bot that spins its CPU past its time loses when its CPU time runs out (not later); a
    bot that uses no CPU and does not wait for one (it sleeps, or waits on another machine) is
    charged its wall time and loses when that runs out, as on the wall clock (not at the cap)."""
    cpu = {11: [0.0, 0.0], 12: [0.0, 0.0]}

    async def spins(_rid: int) -> None:
        for sample in cpu.values():
            sample[2:] = [1.0]
        while True:
            await trio.sleep(0.01)
            for sample in cpu.values():  # half a core: 0.55 s of CPU after 1.1 s
                sample[0] += 0.005
                sample[1] += 0.005

    report, took = _first_decision(spins, cpu=cpu, pids=(11, 12))
    assert report.termination == "time_forfeit"
    assert 1.1 - 1e-9 <= took <= 1.2

    cpu = {11: [0.0, 0.0], 12: [0.0, 0.0]}

    async def sleeps(_rid: int) -> None:
        await trio.sleep_forever()

    report, took = _first_decision(sleeps, cpu=cpu, pids=(11, 12))
    assert report.termination == "time_forfeit"
    assert took == pytest.approx(0.55, abs=0.03)


def test_a_bot_timed_by_cpu_is_charged_the_time_it_sleeps() -> None:
    """A decision that sleeps 0.4 s using no CPU is charged 0.4 s, not its CPU time (0): the
    CPU clock forgives only the time a bot waited for a CPU, never time it chose to wait."""
    cpu = {11: [0.0, 0.0], 12: [0.0, 0.0]}

    async def naps(_rid: int) -> None:
        await trio.sleep(0.4)

    report, took = _first_decision(naps, cpu=cpu, pids=(11, 12))
    assert report.termination == "aborted" and report.detail == "enough", report
    assert took == pytest.approx(0.4, abs=0.05)
    assert sum(report.think_ms) == pytest.approx(400 + _OTHERS_MS * (report.decisions - 1), abs=25)


def test_a_charge_is_wall_time_less_the_wait_for_a_cpu() -> None:
    assert charged_s(2.0, 0.3, 1.7) == pytest.approx(0.3)  # starved: its CPU time
    assert charged_s(2.0, 0.0, 0.0) == 2.0  # slept: the wall time
    assert charged_s(2.0, 0.5, 0.5) == pytest.approx(1.5)  # ran 0.5 s, waited 0.5 s, slept 1 s
    assert charged_s(1.0, 1.8, 0.0) == 1.0  # two threads busy: never more than the wall time
    assert charged_s(1.0, 0.2, 3.0) == pytest.approx(0.2)  # threads' waits add up past the wall time


@pytest.mark.skipif(not cpu_clock_available(), reason="no /proc to read CPU times from")
def test_process_tree_cpu_counts_a_real_process_and_its_child() -> None:
    """A real process whose child spins the CPU: the tree's CPU time grows; a pid that is gone
    reads as None."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:  # once in its loop, a process that never sleeps is runnable (running, or waiting for a CPU)
        sample = process_tree_cpu_s(spinner.pid)
        for _ in range(600):  # past its start-up (which reads files): 0.5 s of CPU
            if sample is not None and sample[0] >= 0.5:
                break
            trio.run(trio.sleep, 0.1)
            sample = process_tree_cpu_s(spinner.pid)
        for _ in range(5):
            sample = process_tree_cpu_s(spinner.pid)
            assert sample is not None and sample[0] >= 0.5 and sample[2], sample
    finally:
        spinner.kill()
        spinner.wait()
    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time\\nend = time.process_time() + 0.3\\n"
            "while time.process_time() < end: pass\\ntime.sleep(60)'])\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        used = 0.0
        for _ in range(600):  # up to a minute on a loaded machine: the child must get its 0.3 s
            sample = process_tree_cpu_s(proc.pid)
            used = sample[0] if sample is not None else 0.0
            if used >= 0.3:
                break
            trio.run(trio.sleep, 0.1)
        assert used >= 0.3
        own = process_tree_cpu_s(child)
        assert own is not None and own[0] >= 0.25 and own[1] >= 0  # (10 ms ticks; the parent has the rest)
        for _ in range(600):  # its spin done, the child sleeps: nothing of the tree is runnable
            sample = process_tree_cpu_s(proc.pid)
            if sample is not None and not sample[2]:
                break
            trio.run(trio.sleep, 0.1)
        assert sample is not None and not sample[2], sample
    finally:
        proc.kill()
        proc.wait()
    subprocess.run(["kill", "-9", str(child)], check=False)
    assert process_tree_cpu_s(proc.pid) is None


def test_a_run_stores_the_clock_it_asked_for() -> None:
    """``--clock`` is stored with the run (only when not the default, so older runs keep their
    keys) and read back; a clock that does not exist is refused."""
    from arena.model.schedule import PlayConfig

    assert "clock" not in PlayConfig().to_dict() and PlayConfig().clock == "cpu"
    wall = PlayConfig(clock="wall")
    assert wall.to_dict()["clock"] == "wall" and PlayConfig.from_dict(wall.to_dict()) == wall
    with pytest.raises(ValueError, match="clock must be one of cpu, wall"):
        PlayConfig(clock="sundial")
