"""Reused bot processes (a match context's ``BotPool``): one process plays match after match on
its bot token; a process that crashes is replaced and its games are scored by the fault policy;
``restart = "always"`` starts a process per match; a bot that crashes more than three times
gets no more matches; a normal match never reports a bot that "ended early"."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import structlog

import referee
import referee.lowlevel
from referee import BotFailed, BotLaunch, MatchSpec, TimeControl
from referee.gin import RuleSet
from tests._wait import HANG_S, POLL_S
from tests.test_run_bot import _gone


def arena_bot(mode: str, restart: str, name: str, *extra: str) -> BotLaunch:
    return BotLaunch(command=(sys.executable, "-m", "arena._testbot", "--mode", mode, *extra), restart=restart,
                     name=name)


def spec(i: int, players: tuple[str, str] = ("a", "b"), policy: referee.FaultPolicy = "forfeit") -> MatchSpec:
    return MatchSpec(players=players, rules=RuleSet.short(), time_control=TimeControl(per_move_ms=5_000),
                     fault_policy=policy, match_id=f"m{i:02d}", connect_timeout_ms=20_000)


class Starts(referee.MatchObserver):
    def __init__(self) -> None:
        self.pids: list[int] = []

    def process_started(self, seat: int, pid: int) -> None:
        self.pids.append(pid)


async def _series(launches: tuple[BotLaunch, BotLaunch], games: int, policy: referee.FaultPolicy = "forfeit"
                  ) -> tuple[list[referee.PlayedMatch], Starts, dict[BotLaunch, int], str]:
    starts = Starts()
    played: list[referee.PlayedMatch] = []
    failure = ""
    async with referee.open_match_context() as ctx:
        for i in range(games):
            players = ("a", "b") if i % 2 == 0 else ("b", "a")
            seats = launches if i % 2 == 0 else (launches[1], launches[0])
            try:
                played.append(await ctx.play(spec(i, players, policy), seats, starts))
            except BotFailed as e:
                failure = str(e)
                break
        crashes = dict(ctx.pool.crashes)
    return played, starts, crashes, failure


def test_one_process_plays_every_match_and_nothing_ends_early() -> None:
    a, b = arena_bot("greedy", "never", "a"), arena_bot("random", "never", "b", "--seed", "7")
    with structlog.testing.capture_logs() as logs:
        played, starts, crashes, failure = referee.run(_series, (a, b), 12)
    assert not failure
    assert len(played) == 12 and all(p.report.termination == "normal" for p in played)
    assert len(starts.pids) == 2, f"expected one process per bot, saw {len(starts.pids)} starts"
    assert all(e.startswith("kept running") for p in played for e in p.exits)
    assert not crashes
    assert [e for e in logs if e["event"] == "bot_ended_early"] == []


def test_a_reused_process_is_ended_with_its_whole_group_and_says_so_in_its_log(tmp_path: Path) -> None:
    """The pool's reused process lives as :func:`referee.play.spawn.watch` says, like ``run_bot``'s:
    its output in its log after its name and pid, its group ended when the pool closes (a process
    it left behind included), its end noted with the games it played."""
    log = tmp_path / "a.log"
    script = 'sleep 600 & echo "child $!"; exec "$0" -m arena._testbot --mode greedy "$@"'
    a = BotLaunch(command=("sh", "-c", script, sys.executable), restart="never", name="a", log_path=str(log))
    b = arena_bot("random", "never", "b", "--seed", "3")
    played, starts, _, failure = referee.run(_series, (a, b), 2)
    assert not failure and len(played) == 2
    text = log.read_text()
    child = int(text.split("] child ", 1)[1].split()[0])
    pid = starts.pids[0] if f"pid {starts.pids[0]} " in text else starts.pids[1]
    assert f"[a pid {pid}] child {child}" in text, text
    assert f"pid {pid} after 2 game(s): " in text, text  # (killed by SIGTERM, or exited as the referee closed)
    deadline = time.monotonic() + HANG_S
    while not _gone(child):  # (the pool ended the bot's group: the sleep it left went with it)
        assert time.monotonic() < deadline, f"the bot's child {child} outlived the pool"
        time.sleep(POLL_S)


def test_restart_always_starts_a_process_per_match_without_false_warnings() -> None:
    a, b = arena_bot("greedy", "always", "a"), arena_bot("greedy", "always", "b")
    with structlog.testing.capture_logs() as logs:
        played, starts, crashes, _ = referee.run(_series, (a, b), 4)
    assert [p.report.termination for p in played] == ["normal"] * 4
    assert len(set(starts.pids)) == 8
    assert not crashes
    assert [e for e in logs if e["event"] == "bot_ended_early"] == []


def test_after_n_replaces_the_process_every_n_matches() -> None:
    a, b = arena_bot("greedy", "after:2", "a"), arena_bot("greedy", "never", "b")
    played, starts, _, _ = referee.run(_series, (a, b), 6)
    assert len(played) == 6
    assert len(starts.pids) == 3 + 1  # a: a process per two matches; b: one


def test_a_crashing_bot_is_restarted_scored_by_the_fault_policy_and_then_stopped(tmp_path: Path) -> None:
    good, crashy = arena_bot("greedy", "never", "good"), arena_bot("quit-after", "never", "crashy", "--after", "2")
    played, starts, crashes, failure = referee.run(_series, (good, crashy), 8, "substitute")
    assert crashes == {crashy: referee.lowlevel.MAX_CRASHES + 1}
    assert len(played) == referee.lowlevel.MAX_CRASHES + 1  # the next match is refused
    for p in played:
        crashy_seat = p.report.players.index("b")
        assert crashy_seat in p.report.substituted_seats  # the fault policy played the seat on
        # the match ended by its own play, not by the crash (the crash may come after the bot's
        # last decision: once, the crashy seat won on its second answer, 4 decisions in all)
        assert p.report.termination == "normal" and p.report.winner is not None and p.report.decisions >= 2
    assert "crashed 4 times (more than 3)" in failure and "'crashy'" in failure
    assert len(starts.pids) == 1 + len(played)  # good: one process; crashy: a new one per match


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_arena_stops_the_games_of_a_bot_that_crashes_more_than_three_times(tmp_path: Path, workers: str) -> None:
    """In the arena's process and on Dask workers (each counts the crashes it saw) alike: the
    bot's games stop, the arena says why in a sentence (no exception's repr), the run is called
    incomplete (not "Interrupted": nobody interrupted it) and exits 1."""
    bots = tmp_path / "bots.toml"
    bots.write_text(
        '[[bot]]\nname = "good"\ncommand = ["{python}", "-m", "arena._testbot"]\n\n'
        '[[bot]]\nname = "broken"\ncommand = ["{python}", "-m", "arena._testbot", "--mode", "crash"]\n'
    )
    run = tmp_path / "run"
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", "12", "--rules", "short",
         "--tc", "st=1", "--concurrency", "1", "--workers", workers, "--out", str(run)], capture_output=True,
        text=True, timeout=240)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "bot 'broken': its games were stopped: its process crashed 4 times (more than 3)" in out.stderr
    assert f"arena tournament --resume {run}" in out.stderr
    assert "Interrupted" not in out.stdout + out.stderr and "BotFailed" not in out.stdout + out.stderr
    db = sqlite3.connect(run / "run.sqlite")
    done, pending = (db.execute("SELECT COUNT(*) FROM games WHERE status = ?", (s,)).fetchone()[0]
                     for s in ("done", "pending"))
    db.close()
    assert f"Incomplete: {pending} game(s) not played" in out.stdout, out.stdout
    if workers == "1":
        assert done == 4 and pending == 8  # the rest is left for --resume, not recorded as crashed
    else:  # each worker stops the bot after its own fourth crash
        assert 4 <= done <= 8 and done + pending == 12


KIT_BOT = """
import sys
from sample_bots.kit import Bot, run_bot

class Memo(Bot):
    def __init__(self) -> None:
        self.matches: list[str] = []
        self.decisions = 0

    def on_match_started(self, match_id, info):
        self.matches.append(match_id)

    def decide(self, request):
        self.decisions += 1
        return request.legal_actions[0]

    def on_match_finished(self, match_id, result):
        with open(sys.argv[1], "a") as f:
            f.write(f"{match_id} {len(self.matches)} {self.decisions > 0}\\n")

raise SystemExit(run_bot(Memo, argv=sys.argv[2:]))
"""


def test_the_kit_keeps_no_state_from_one_match_to_the_next(tmp_path: Path) -> None:
    memo = tmp_path / "memo.txt"
    kit = BotLaunch(command=(sys.executable, "-c", KIT_BOT, str(memo)), restart="never", name="kit")
    played, starts, _, _ = referee.run(_series, (kit, arena_bot("greedy", "never", "g")), 4)
    assert len(played) == 4 and len(starts.pids) == 2  # one kit process played all four
    lines = memo.read_text().split("\n")[:-1]
    assert lines == [f"m{i:02d} 1 True" for i in range(4)]  # a fresh Bot per match
