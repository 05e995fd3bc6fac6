"""`referee.play_match`: one call plays one match between real bot processes, from a plain
description, and leaves no process behind — whatever the bots do, and when it is cancelled."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import trio

import referee
from referee import BotLaunch, MatchReport, MatchSpec, PlayedMatch, TimeControl
from referee.gin import RuleSet

GREEDY = BotLaunch(command=(sys.executable, "-m", "sample_bots.greedy_bot"))
RANDOM = BotLaunch(command=("{python}", "-m", "sample_bots.random_bot"))


def arena_bot(mode: str, *extra: str, log_path: str = "") -> BotLaunch:
    return BotLaunch(command=("{python}", "-m", "arena._testbot", "--mode", mode, *extra), log_path=log_path)


def audit(tmp_path: Path, played: PlayedMatch) -> str:
    """The replay bytes pass ``arena audit`` (chain, commitment, decks, re-run, digests); its report."""
    path = tmp_path / f"{played.report.match_id}.jsonl"
    path.write_bytes(played.replay)
    out = subprocess.run([sys.executable, "-m", "arena.cli", "audit", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def gone(pid: int) -> bool:
    """Whether the process (and its process group) no longer exists."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


class Pids(referee.MatchObserver):
    def __init__(self) -> None:
        self.started: dict[int, int] = {}
        self.ended: list[int] = []
        self.settles = 0
        self.reports: list[MatchReport] = []

    def process_started(self, seat: int, pid: int) -> None:
        self.started[seat] = pid

    def process_ended(self, seat: int, pid: int) -> None:
        self.ended.append(pid)

    def settled(self) -> None:
        self.settles += 1

    def finished(self, report: MatchReport) -> None:
        self.reports.append(report)


def play_observed(spec: MatchSpec, bots: list[BotLaunch]) -> tuple[PlayedMatch, Pids]:
    pids = Pids()
    played = referee.run(lambda: referee.play_match_async(spec, bots, observer=pids))
    assert all(gone(pid) for pid in pids.started.values()), pids.started
    assert sorted(pids.ended) == sorted(pids.started.values())
    return played, pids


def test_play_match_plays_a_gin_match_between_two_sample_bots(tmp_path: Path) -> None:
    played = referee.play_match(MatchSpec(players=("greedy", "random")), [GREEDY, RANDOM])
    report = played.report
    assert report.termination == "normal", report.detail
    assert report.winner in (0, 1) and report.outcome is not None
    assert max(report.outcome.totals) >= 100, "a classic match is played to 100"
    assert report.replay_path == "", "no replay folder was given: only the bytes are kept"
    assert played.exits == ("exited with code 0", "exited with code 0")
    header = json.loads(played.replay.split(b"\n", 1)[0])
    assert (header["type"], header["format"], header["match_id"]) == ("header", "gin-arena-replay", report.match_id)
    audit(tmp_path, played)


def test_a_bot_that_cannot_be_started_loses_by_crash_and_the_other_is_ended(tmp_path: Path) -> None:
    spec = MatchSpec(players=("good", "missing"), rules=RuleSet.preset("short"))
    missing = BotLaunch(command=(str(tmp_path / "no-such-program"),), log_path=str(tmp_path / "missing.log"))
    played, pids = play_observed(spec, [arena_bot("greedy"), missing])
    assert played.report.termination == "crashed" and played.report.faulting_seat == 1
    assert played.report.winner == 0
    assert "could not be started" in played.report.detail
    assert played.exits[1] == "not started" and list(pids.started) == [0]
    assert "could not be started" in (tmp_path / "missing.log").read_text()
    # No deal was dealt: the information check had nothing to check — said so, neither ✓ nor a failure.
    report = audit(tmp_path, played)
    assert "information – (nothing to check)" in report and "no card to check" in report, report
    assert "information ✓" not in report, report


def test_a_bot_that_crashes_mid_match_loses_by_crash(tmp_path: Path) -> None:
    spec = MatchSpec(players=("good", "quitter"), rules=RuleSet.preset("short"))
    log = tmp_path / "logs" / "quitter.log"
    quitter = arena_bot("quit-after", "--after", "2", log_path=str(log))
    played, pids = play_observed(spec, [arena_bot("greedy"), quitter])
    report = played.report
    assert report.termination == "crashed" and report.faulting_seat == 1 and report.winner == 0, report.detail
    assert played.exits[1] == "exited with code 4"
    text = log.read_text()
    assert f"[{report.match_id} seat 1] testbot: quitting abruptly" in text and "before its match ended" in text
    assert pids.settles == 1 and [r.match_id for r in pids.reports] == [report.match_id]
    audit(tmp_path, played)


def test_a_bot_that_never_connects_fails_to_connect_and_is_ended(tmp_path: Path) -> None:
    # Long enough for the good bot's Python to start on a loaded machine (1.5 s was not, once);
    # the hanging one never connects, however long it is given.
    spec = MatchSpec(players=("good", "hang"), rules=RuleSet.preset("short"), connect_timeout_ms=15_000)
    played, pids = play_observed(spec, [arena_bot("greedy"), arena_bot("hang")])
    report = played.report
    assert report.termination == "failed_to_connect" and report.faulting_seat == 1, report.detail
    assert played.exits[1] in ("killed by SIGTERM", "killed by SIGKILL")
    assert len(pids.started) == 2


def test_cancelling_a_match_ends_its_bots() -> None:
    spec = MatchSpec(players=("slow", "hang"), rules=RuleSet.preset("short"))
    pids = Pids()

    async def main() -> bool:
        with trio.move_on_after(3) as scope:
            bots = [arena_bot("slow", "--delay", "0.5"), arena_bot("hang")]
            await referee.play_match_async(spec, bots, observer=pids)
        return scope.cancelled_caught

    assert referee.run(main), "the match should still have been running after 3 s"
    assert len(pids.started) == 2 and all(gone(pid) for pid in pids.started.values())
    assert pids.reports == []


def test_two_concurrent_matches_share_one_context(tmp_path: Path) -> None:
    spec = MatchSpec(players=("greedy", "random"), rules=RuleSet.preset("short"),
                     time_control=TimeControl(per_move_ms=5_000))
    played: list[PlayedMatch] = []
    address: list[str] = []

    async def main() -> None:
        async with referee.open_match_context(replay_dir=tmp_path / "replays") as ctx:
            address.append(ctx.bot_address)

            async def one() -> None:
                played.append(await referee.play_match_async(spec, [GREEDY, RANDOM], context=ctx))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(one)
                nursery.start_soon(one)

    referee.run(main)
    assert len(played) == 2 and played[0].report.match_id != played[1].report.match_id
    for p in played:
        assert p.report.termination == "normal", p.report.detail
        assert Path(p.report.replay_path).read_bytes() == p.replay, "kept in the context's replay folder"
        audit(tmp_path, p)


def test_play_match_from_another_thread_plays_on_a_long_lived_context(tmp_path: Path) -> None:
    """A context's trio run in one thread, matches asked for from others (what a worker does)."""
    ready = threading.Event()
    stop = threading.Event()
    holder: list[referee.MatchContext] = []

    async def serve() -> None:
        async with referee.open_match_context() as ctx:
            holder.append(ctx)
            ready.set()
            while not stop.is_set():
                await trio.sleep(0.05)

    thread = threading.Thread(target=referee.run, args=(serve,))
    thread.start()
    try:
        assert ready.wait(30)
        spec = MatchSpec(players=("greedy", "random"), rules=RuleSet.preset("short"))
        results = [referee.play_match(spec, [GREEDY, RANDOM], context=holder[0]) for _ in range(2)]
    finally:
        stop.set()
        thread.join(30)
    assert [r.report.termination for r in results] == ["normal", "normal"]
    audit(tmp_path, results[1])


def _play_in_child(data: bytes) -> bytes:
    spec, bots = pickle.loads(data)
    return pickle.dumps(referee.play_match(spec, bots))


def test_the_description_pickles_and_plays_in_a_fresh_process(tmp_path: Path) -> None:
    spec = MatchSpec(players=("greedy", "random"), rules=RuleSet.preset("short"), seed=b"\x07" * 32, match_id="shipped")
    quiet = BotLaunch(command=("{python}", "-m", "sample_bots.random_bot"), env=(("GIN_LOG_LEVEL", "WARNING"),))
    bots = (GREEDY, quiet)
    data = pickle.dumps((spec, bots))
    assert pickle.loads(data) == (spec, bots)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        played: PlayedMatch = pickle.loads(pool.apply(_play_in_child, (data,)))
    assert played.report.match_id == "shipped" and played.report.termination == "normal"
    assert played.report.seed_commitment == referee.gin.commitment(b"\x07" * 32)
    audit(tmp_path, played)


def _logged_pid(log: Path) -> int | None:
    text = log.read_text() if log.exists() else ""
    return int(text.split(": pid ", 1)[1].split(":", 1)[0]) if ": pid " in text else None


def test_ctrl_c_ends_the_match_and_its_bots(tmp_path: Path) -> None:
    logs = [tmp_path / "slow.log", tmp_path / "hang.log"]
    script = textwrap.dedent(f"""
        import sys
        import referee
        from referee import BotLaunch, MatchSpec

        bot = ("{{python}}", "-m", "arena._testbot", "--mode")
        slow = BotLaunch(command=(*bot, "slow", "--delay", "0.5"), log_path={str(logs[0])!r})
        hang = BotLaunch(command=(*bot, "hang"), log_path={str(logs[1])!r})
        try:
            referee.play_match(MatchSpec(players=("a", "b")), [slow, hang])
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pids: list[int | None] = [None, None]
        for _ in range(600):  # until both bots started
            pids = [_logged_pid(log) for log in logs]
            if all(pids):
                break
            time.sleep(0.1)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err[-3000:]
    assert "interrupted" in out
    assert all(pid is not None and gone(pid) for pid in pids), pids


def test_a_context_on_a_remote_referee_plays_there(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0",
         "--replays", str(tmp_path / "remote"), "--operator-token-file", str(tmp_path / "operator-token")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("referee listening on "), line
        address = line.split()[-1]
        spec = MatchSpec(players=("greedy", "random"), rules=RuleSet.preset("short"))

        async def main() -> tuple[bool, PlayedMatch]:
            token = (tmp_path / "operator-token").read_text().strip()
            async with referee.open_match_context(referee=address, operator_token=token) as ctx:
                return ctx.remote, await referee.play_match_async(spec, [GREEDY, RANDOM], context=ctx)

        remote, played = referee.run(main)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert remote and played.report.termination == "normal", played.report.detail
    assert Path(played.report.replay_path).parent == tmp_path / "remote"
    assert Path(played.report.replay_path).read_bytes() == played.replay, "the same machine: the bytes are read"
    audit(tmp_path, played)
