"""Tournaments on Dask distributed, with real processes: ``--workers 2`` on this machine; a
real ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, one of them SIGKILLed
mid-run (no game lost, none stored twice, every replay audits); ``--resume`` after the arena
itself was killed mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.run.placement import ClusterSpec
from tests._wait import RUN_HANG_S, until

pytestmark = pytest.mark.serial  # several interpreters and worker processes at once

BOTS = """
[[bot]]
name = "a"
command = ["{python}", "-m", "arena._testbot"]

[[bot]]
name = "b"
command = ["{python}", "-m", "arena._testbot", "--mode", "random"]
"""
SLOW_BOTS = BOTS.replace('command = ["{python}", "-m", "arena._testbot"]',
                        'command = ["{python}", "-m", "arena._testbot", "--mode", "slow", "--delay", "0.05"]')
"""The same bots, ``a`` taking 50 ms a decision: games that last long enough for a worker to be
killed while most of them are still to be played (fast bots finished all 12 before the kill)."""
assert SLOW_BOTS != BOTS
DASK = str(Path(sys.executable).with_name("dask"))


def tournament(tmp: Path, run: Path, games: int, *extra: str, bots_toml: str = BOTS) -> list[str]:
    bots = tmp / "bots.toml"
    bots.write_text(bots_toml)
    return [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", str(games),
            "--rules", "short", "--tc", "st=2", "--concurrency", "2", "--out", str(run), *extra]


def games(run: Path) -> tuple[int, int, list[str]]:
    """Done and pending games, and the match ids of the done ones."""
    db = sqlite3.connect(run / "run.sqlite")
    try:
        rows = db.execute("SELECT status, match_id FROM games").fetchall()
    finally:
        db.close()
    done = [m for s, m in rows if s == "done"]
    return len(done), sum(1 for s, _ in rows if s == "pending"), done


def wait_done(run: Path, n: int, proc: subprocess.Popen[Any], limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if (run / "run.sqlite").exists():
            try:
                if games(run)[0] >= n:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    raise AssertionError(f"{n} games were not done in time (arena exit {proc.poll()})")


def audit(run: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "arena.cli", "audit", str(run)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dask_cluster(tmp: Path, worker_envs: list[dict[str, str]], scheduler_args: Sequence[str] = (),
                 worker_args: Sequence[str] = (), scheme: str = "tcp",
                 ) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """A real ``dask scheduler`` on 127.0.0.1 and a ``dask worker`` per environment (with
    extra arguments each, e.g. Dask's TLS options and ``scheme="tls"``)."""
    port = free_port()
    address = f"{scheme}://127.0.0.1:{port}"
    log = open(tmp / "dask.log", "wb")  # noqa: SIM115 - closed below
    procs = [subprocess.Popen([DASK, "scheduler", "--protocol", scheme, "--host", "127.0.0.1", "--port", str(port),
                               "--dashboard-address", "127.0.0.1:0", *scheduler_args],
                              stdout=log, stderr=log, start_new_session=True)]
    for env in worker_envs:
        procs.append(subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--no-nanny",
                                       "--dashboard-address", "127.0.0.1:0", *worker_args], stdout=log, stderr=log,
                                      start_new_session=True, env=env))
    try:
        yield address, procs[1:]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        log.close()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    with dask_cluster(tmp_path, [dict(os.environ)] * 2) as made:
        yield made


def test_workers_2_on_this_machine(tmp_path: Path) -> None:
    """The header says where the games are played; the workers' referees log to the run's log
    folder (a file per worker), not on the arena's stdout or stderr."""
    run = tmp_path / "run"
    out = subprocess.run(tournament(tmp_path, run, 6, "--workers", "2"), capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0].endswith("on 2 local Dask workers (a referee each)"), out.stdout
    assert "Games run on Dask (2 local worker processes" in out.stdout and "dashboard: http" in out.stdout
    for event in ("referee_listening", "match_started", "session_opened"):
        assert event not in out.stdout + out.stderr, out.stdout + out.stderr
    worker_logs = sorted((run / "logs").glob("worker-127.0.0.1-*.log"))
    assert 1 <= len(worker_logs) <= 2, sorted((run / "logs").iterdir())
    lines = [json.loads(x) for f in worker_logs for x in f.read_text().splitlines()]
    started = {e["match_id"] for e in lines if e["event"] == "match_started"}
    assert started == set(games(run)[2]), started  # every game, each in the log of the worker that played it
    # The progress line: games, workers, running games, games/min.
    assert re.search(r"progress: 6/6 games 100% \| 2 workers \| 0 running \| \d+/min", out.stdout + out.stderr), \
        out.stdout + out.stderr
    done, pending, ids = games(run)
    assert (done, pending) == (6, 0) and len(set(ids)) == 6
    audit(run)


def test_a_worker_killed_mid_run_loses_no_game(tmp_path: Path,
                                               cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    address, workers = cluster
    run = tmp_path / "run"
    arena = subprocess.Popen(tournament(tmp_path, run, 12, "--scheduler", address, "--log-json", bots_toml=SLOW_BOTS),
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        wait_done(run, 2, arena)
        os.killpg(workers[0].pid, signal.SIGKILL)  # the worker and its bots' referee
        out, _ = arena.communicate(timeout=240)
    finally:
        if arena.poll() is None:
            arena.kill()
    assert arena.returncode == 0, out
    assert out.splitlines()[0].endswith(f"on the Dask cluster of the scheduler at {address} (a referee per worker)")
    # The lost worker is reported (a warning naming it) and the progress line counts one worker.
    lost = [json.loads(x) for x in out.splitlines() if '"dask_worker_lost"' in x]
    assert len(lost) == 1 and lost[0]["worker"].startswith("tcp://127.0.0.1:") and lost[0]["workers_left"] == 1, out
    progress = [x for x in out.splitlines() if x.startswith("progress: ")]
    assert re.search(r"\| 2 workers \|", progress[0]) and re.search(r"\| 1 worker \|", progress[-1]), progress
    done, pending, ids = games(run)
    assert (done, pending) == (12, 0), out
    assert len(ids) == len(set(ids)) == 12  # every game stored once
    assert len(list((run / "replays").glob("*.jsonl"))) == 12
    audit(run)


def test_a_scheduler_without_workers_gives_up_after_worker_wait(tmp_path: Path) -> None:
    """``--scheduler`` with no worker connected: the arena says it waits, then after
    ``--worker-wait`` seconds what is missing (a worker, and how to start one), and exits 1;
    no game was played and the run resumes once a worker is there."""
    run = tmp_path / "run"
    with dask_cluster(tmp_path, []) as (address, _):
        out = subprocess.run(tournament(tmp_path, run, 2, "--scheduler", address, "--worker-wait", "3"),
                             capture_output=True, text=True, timeout=RUN_HANG_S)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"Waiting up to 3 s for a Dask worker to connect to {address}" in out.stdout, out.stdout
    errors = [line for line in out.stderr.splitlines() if line.startswith("arena: ")]
    assert errors == [f"arena: no Dask worker connected to the scheduler at {address} for 3 s (--worker-wait); "
                      f"start one with: dask worker {address} --nthreads 1"], out.stderr
    assert f"arena tournament --resume {run}" in out.stderr
    assert games(run)[:2] == (0, 2)


def test_every_worker_lost_mid_run_stops_it_after_worker_wait(
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """Both workers killed mid-run: each loss is reported, and ``--worker-wait`` seconds later the
    run stops (no game is anyone's loss, exit 1, the rest pending) and ``--resume`` finishes it."""
    address, workers = cluster
    run = tmp_path / "run"
    arena = subprocess.Popen(tournament(tmp_path, run, 12, "--scheduler", address, "--worker-wait", "3", "--log-json"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_done(run, 1, arena)
        for w in workers:
            os.killpg(w.pid, signal.SIGKILL)
        out, err = arena.communicate(timeout=RUN_HANG_S)
    finally:
        if arena.poll() is None:
            arena.kill()
    assert arena.returncode == 1, out + err
    lost = [json.loads(x) for x in err.splitlines() if '"dask_worker_lost"' in x]
    assert len({e["worker"] for e in lost}) == 2 and lost[-1]["workers_left"] == 0, err  # (in one poll, or two)
    assert "arena: no Dask worker was left; the games finished so far are kept." in err, err
    assert f"no Dask worker connected to the scheduler at {address} for 3 s" in err
    assert f"arena tournament --resume {run}" in err
    done, pending, _ = games(run)
    assert done >= 1 and pending >= 1 and done + pending == 12
    results = json.loads((run / "results.json").read_text())
    assert all(g["termination"] == "normal" for g in results["games"]), results["games"]
    resumed = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run), "--workers", "1"],
                             capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert games(run)[:2] == (12, 0)
    audit(run)


def test_resume_after_the_arena_is_killed_mid_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    arena = subprocess.Popen(tournament(tmp_path, run, 10, "--workers", "2"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_done(run, 2, arena)
    finally:
        os.killpg(arena.pid, signal.SIGKILL)  # the arena and its local cluster
        arena.wait()
    done, _, _ = games(run)
    assert done < 10
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run), "--workers", "2"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    done, pending, ids = games(run)
    assert (done, pending) == (10, 0) and len(set(ids)) == 10
    audit(run)


def test_the_scheduler_lost_mid_run_says_so_and_the_run_resumes(
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    address, _ = cluster
    run = tmp_path / "run"
    arena = subprocess.Popen(tournament(tmp_path, run, 12, "--scheduler", address), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        wait_done(run, 1, arena)
        scheduler = int(address.rsplit(":", 1)[1])
        for pid in os.listdir("/proc"):  # the scheduler's process (the fixture started it)
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"scheduler" in cmd and str(scheduler).encode() in cmd:
                os.kill(int(pid), signal.SIGKILL)
        out, err = arena.communicate(timeout=240)
    finally:
        if arena.poll() is None:
            arena.kill()
    assert arena.returncode == 1, out + err
    assert "the Dask scheduler was lost" in err and f"arena tournament --resume {run}" in err
    done, pending, _ = games(run)
    assert done >= 1 and done + pending == 12
    resumed = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run), "--workers", "2"],
                             capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    done, pending, ids = games(run)
    assert (done, pending) == (12, 0) and len(set(ids)) == 12
    audit(run)


SLOW = """
[[bot]]
name = "a"
command = ["{python}", "-m", "arena._testbot"]

[[bot]]
name = "slow"
command = ["{python}", "-m", "arena._testbot", "--mode", "slow", "--delay", "1.5"]
"""


def test_time_losses_while_a_worker_stalled_are_played_again_and_counted_by_worker(
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """The workers are stopped (SIGSTOP) for 300 ms of every 500 while the run lasts: their
    loops stall, so a time loss there is not the bot's fault and is played again (at most twice);
    results.json names the worker in each discarded game's reason and counts time losses by
    worker."""
    address, workers = cluster
    bots = tmp_path / "bots.toml"
    bots.write_text(SLOW)
    run = tmp_path / "run"
    arena = subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", "2",
                              "--rules", "short", "--tc", "st=0.3", "--concurrency", "2", "--scheduler", address,
                              "--out", str(run)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while arena.poll() is None:
            for w in workers:
                os.kill(w.pid, signal.SIGSTOP)
            time.sleep(0.3)
            for w in workers:
                os.kill(w.pid, signal.SIGCONT)
            time.sleep(0.2)
        out = arena.communicate(timeout=10)[0]
    finally:
        for w in workers:
            os.kill(w.pid, signal.SIGCONT)
        if arena.poll() is None:
            arena.kill()
    assert arena.returncode == 0, out
    results = json.loads((run / "results.json").read_text())
    terms = [g["termination"] for g in results["games"]]
    assert terms == ["time_forfeit", "time_forfeit"], out  # the third attempt is scored
    discarded = results["discarded"]
    assert len(discarded) == 4, discarded  # two replays of each game
    assert all("stalled for" in d["reason"] and "played again" in d["reason"] for d in discarded), discarded
    assert any("the event loop of worker tcp://127.0.0.1:" in d["reason"] for d in discarded), discarded
    losses = results["time_losses_by_worker"]
    assert sum(losses.values()) == 6 and all(w.startswith("tcp://127.0.0.1:") for w in losses), losses
    assert "Time losses by worker: tcp://127.0.0.1:" in out
    audit(run)


def test_a_bot_a_worker_cannot_start_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    """The bot's program is on the arena's PATH and on one worker's, not on the other's: the
    run stops before its first game with the worker and the bot named."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "mybot"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m arena._testbot "$@"\n')
    script.chmod(0o755)
    with_bin = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    without = {**os.environ, "PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                                     if p != str(bin_dir))}
    bots = tmp_path / "bots.toml"
    bots.write_text('[[bot]]\nname = "mine"\ncommand = ["mybot"]\n\n'
                    '[[bot]]\nname = "b"\ncommand = ["{python}", "-m", "arena._testbot"]\n')
    run = tmp_path / "run"
    with dask_cluster(tmp_path, [with_bin, without]) as (address, _):
        until(lambda: (tmp_path / "dask.log").read_bytes().count(b"Registered to") >= 2,
              "both workers connected before the check")
        out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", "2",
                              "--rules", "short", "--tc", "st=1", "--scheduler", address, "--out", str(run)],
                             capture_output=True, text=True, timeout=RUN_HANG_S, env=with_bin)
    assert out.returncode == 2, out.stdout + out.stderr
    problems = [line for line in out.stderr.splitlines() if line.strip().startswith("worker tcp://127.0.0.1:")]
    assert len(problems) == 1, out.stderr  # the one worker without the program
    assert "bot 'mine': program 'mybot' is not found" in problems[0]
    assert f"arena tournament --resume {run}" in out.stderr
    assert games(run)[:2] == (0, 2)


MYBOT = """import os, sys
from pathlib import Path
with open(os.environ["WHERE_FILE"], "a") as f:
    f.write(str(Path.cwd()) + " " + str(Path(__file__).resolve()) + "\\n")
from arena._testbot import main
raise SystemExit(main())
"""


def test_ship_bots_sends_each_bot_folder_to_the_workers(tmp_path: Path,
                                                         cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """``--ship-bots``: the bot's folder is zipped, unpacked on every worker, and the bot starts
    from the copy (its cwd and the script path in its command moved there)."""
    address, _ = cluster
    src = tmp_path / "botsrc"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mybot.py").write_text(MYBOT)
    (src / ".git").mkdir()
    (src / ".git" / "big").write_bytes(b"x" * 1000)  # (never shipped)
    where = tmp_path / "where.txt"
    bots = tmp_path / "bots.toml"
    bots.write_text(f'[[bot]]\nname = "mine"\ncwd = "{src}"\ncommand = ["{{python}}", "{src}/pkg/mybot.py"]\n'
                    f'env = {{ WHERE_FILE = "{where}" }}\n\n'
                    '[[bot]]\nname = "b"\ncommand = ["{python}", "-m", "arena._testbot"]\n')
    run = tmp_path / "run"
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", "4",
                          "--rules", "short", "--tc", "st=2", "--concurrency", "2", "--scheduler", address,
                          "--ship-bots", "--out", str(run)], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert games(run)[:2] == (4, 0)
    starts = [line.split() for line in where.read_text().splitlines()]
    assert starts, "the bot never started"
    for cwd, script in starts:
        assert "gin-arena-bots" in cwd and cwd != str(src), starts  # the worker's copy
        assert script == str(Path(cwd) / "pkg" / "mybot.py"), starts
        assert not (Path(cwd) / ".git").exists()
    audit(run)


def test_a_game_is_queued_on_every_worker_only_when_the_concurrency_fills_them(tmp_path: Path) -> None:
    """With at least as many games at once as the workers' threads, one more game per thread is
    submitted (it waits on a worker for that worker's game to end); with fewer, no more than
    the concurrency (a queued game would start on an idle worker); and none for the run's last
    games (fewer waiting than threads: each goes to the first worker free)."""
    from arena.run.cluster import Cluster
    from arena.run.placement import ClusterSpec

    cluster = Cluster(ClusterSpec(workers=2), tmp_path / "replays")
    try:
        assert cluster.slots(8, 100) == 8  # (before the threads are counted: the concurrency)
        cluster.refresh()
        assert cluster.threads == 2
        assert [cluster.slots(c, 100) for c in (1, 2, 3, 4, 5)] == [1, 4, 4, 4, 5]
        assert [cluster.slots(2, waiting) for waiting in (0, 1, 2)] == [2, 2, 4]
    finally:
        cluster.close()


def test_local_workers_play_the_concurrency_between_them(tmp_path: Path) -> None:
    """A local cluster sized for ten games at once on two workers has ten threads (issue 29:
    with one thread per worker it played two games at once, and the runner's eight others
    waited in Dask's queue)."""
    from arena.run.cluster import Cluster
    from arena.run.placement import ClusterSpec

    cluster = Cluster(ClusterSpec(workers=2).sized(concurrency=10, games=100), tmp_path / "replays")
    try:
        cluster.refresh()
        assert cluster.threads == 10
    finally:
        cluster.close()


REMOTE = """
[[bot]]
name = "a"
command = ["{python}", "-m", "arena._testbot"]

[[bot]]
name = "visitor"
remote = true
"""


def play_with_visitor(tmp: Path, run: Path, bots: str, games_each: int, visitor_games: int,
                      *extra: str) -> tuple[str, str]:
    """A tournament with the remote bot ``visitor``, which connects by itself (to the address and
    with the token the arena hands out) and plays ``visitor_games``; the arena's output."""
    (tmp / "bots.toml").write_text(bots)
    tour = subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", "--bots", str(tmp / "bots.toml"),
                             "--games", str(games_each), "--rules", "short", "--tc", "st=2", "--concurrency", "2",
                             "--out", str(run), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bot: subprocess.Popen[str] | None = None
    try:
        tokens = run / "remote-tokens.txt"
        deadline = time.monotonic() + 120
        while not tokens.exists() and time.monotonic() < deadline and tour.poll() is None:
            time.sleep(0.1)
        header, *lines = tokens.read_text().splitlines()
        address = re.search(r"connect to (\S+) with", header)
        assert address is not None, header
        token = next(x for x in lines if x.startswith("visitor\t")).split("\t")[1]
        bot = subprocess.Popen([sys.executable, "-m", "arena._testbot", "--referee", address.group(1), "--token",
                                token, "--name", "visitor", "--matches", str(visitor_games)],
                               stderr=subprocess.PIPE, text=True)
        out, err = tour.communicate(timeout=240)
        assert tour.returncode == 0, out + err
        assert bot.wait(timeout=30) == 0
    finally:
        for p in (tour, bot):
            if p is not None and p.poll() is None:
                p.kill()
    return out, err


def cluster_games(run: Path) -> int:
    """The games the run played on Dask workers (its ``cluster_overhead`` log line; 0: none)."""
    lines = [json.loads(x) for x in (run / "run.log").read_text().splitlines() if '"cluster_overhead"' in x]
    return int(lines[-1]["games"]) if lines else 0


def test_games_with_a_remote_seat_run_on_the_arenas_referee_and_are_not_counted_for_auto(tmp_path: Path) -> None:
    """``--workers auto`` counts only the games that can run on workers: every game of this run
    has a seat of the remote bot, so no local cluster is started; with ``--workers 2`` the
    remote bot's games are played on the arena's own referee (where the bot connects) and only
    the others on the workers; every game ends normally and audits."""
    run = tmp_path / "auto"
    out, _ = play_with_visitor(tmp_path, run, REMOTE, 2, 2, "--workers", "auto")
    assert "Games run on Dask" not in out and cluster_games(run) == 0, out
    assert games(run)[:2] == (2, 0)
    audit(run)

    run = tmp_path / "two"
    three = REMOTE + '\n[[bot]]\nname = "b"\ncommand = ["{python}", "-m", "arena._testbot", "--mode", "random"]\n'
    out, _ = play_with_visitor(tmp_path, run, three, 2, 4, "--workers", "2")
    assert "Games run on Dask (2 local worker processes" in out, out
    assert cluster_games(run) == 2  # a against b; the visitor's four games were played here
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 6 and all(g["termination"] == "normal" for g in results["games"])
    audit(run)


def test_a_ladder_run_on_workers_reports_time_losses_by_worker(
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """``arena ladder run`` on Dask workers: a bot too slow for the time control loses every
    game on time, and the run prints and logs its time losses by worker, as tournaments do."""
    address, _ = cluster
    db = ["--db", str(tmp_path / "ladder.sqlite")]
    arena = [sys.executable, "-m", "arena.cli", "ladder"]
    for name, mode in (("a", []), ("slow", ["--mode", "slow", "--delay", "1.5"])):
        added = subprocess.run([*arena, "add", name, *db, "--", "{python}", "-m", "arena._testbot", *mode],
                               capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
    out = subprocess.run([*arena, "run", "--games", "2", "--rules", "short", "--tc", "st=0.3", "--concurrency", "2",
                          "--scheduler", address, *db], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Time losses by worker: tcp://127.0.0.1:" in out.stdout, out.stdout
    logs = list((tmp_path / "ladder-runs").glob("ladder-*/run.log"))
    assert len(logs) == 1
    lines = [json.loads(x) for x in logs[0].read_text().splitlines() if '"time_losses_by_worker"' in x]
    assert len(lines) == 1
    losses = {k: v for k, v in lines[0].items() if k.startswith("tcp://")}
    assert sum(losses.values()) >= 2 and all(k.startswith("tcp://127.0.0.1:") for k in losses), lines[0]


def test_the_documented_dask_commands_keep_the_dashboards_on_127_0_0_1() -> None:
    """Dask's dashboards are HTTP without a key and listen on every address unless told: each
    ``dask scheduler``/``dask worker`` line of the README and docs/arena.md binds its dashboard
    to 127.0.0.1 (or turns it off)."""
    root = Path(__file__).resolve().parent.parent
    lines = [line for doc in (root / "README.md", root / "docs" / "arena.md")
             for line in doc.read_text().splitlines() if re.match(r"\s*dask (scheduler|worker) ", line)]
    assert len(lines) >= 4, lines
    for line in lines:
        assert re.search(r"--dashboard-address 127\.0\.0\.1:\d+\b", line) or "--no-dashboard" in line, line


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive ports of 127.0.0.1 that are free now, below the range
    the system hands out for port 0 (where any process's next listener could land meanwhile)."""
    try:
        ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    rng = random.Random()
    for _ in range(200):
        first = rng.randrange(10000, max(10001, ephemeral - count))
        with contextlib.ExitStack() as held:
            try:
                for port in range(first, first + count):
                    s = held.enter_context(socket.socket())
                    s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return first
    raise AssertionError(f"no {count} consecutive free ports found")


def test_the_local_clusters_ports_are_pinned_by_options(tmp_path: Path) -> None:
    """--dask-scheduler-port, --dask-dashboard and --dask-worker-ports: the scheduler, its
    dashboard and each worker (its own port, its nanny's and its HTTP server's) listen where
    they were told, which the header and run.log say; --dask-dashboard off: no dashboard."""
    first = free_ports(8)
    scheduler, dashboard, workers = first, first + 1, first + 2
    run = tmp_path / "run"
    out = subprocess.run(tournament(tmp_path, run, 4, "--workers", "2", "--dask-scheduler-port", str(scheduler),
                                    "--dask-dashboard", f"127.0.0.1:{dashboard}",
                                    "--dask-worker-ports", f"{workers}:{workers + 5}"),
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"dashboard: http://127.0.0.1:{dashboard}/status" in out.stdout, out.stdout
    opened = next(e for e in map(json.loads, (run / "run.log").read_text().splitlines())
                  if e["event"] == "cluster_opened")
    assert opened["scheduler"] == f"tls://127.0.0.1:{scheduler}", opened
    listening = {(w, i["nanny"], i["http"]) for w, i in opened["worker_addresses"].items()}
    assert listening == {(f"tls://127.0.0.1:{p}", f"tls://127.0.0.1:{p + 1}", p + 2) for p in (workers, workers + 3)}
    assert games(run)[:2] == (4, 0)

    off = tmp_path / "off"
    out = subprocess.run(tournament(tmp_path, off, 2, "--workers", "2", "--dask-dashboard", "off"),
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "dashboard: off" in out.stdout, out.stdout
    assert games(off)[:2] == (2, 0)


@pytest.mark.parametrize(("extra", "says"), [
    (("--workers", "2", "--dask-worker-ports", "40000:40004"),
     "--dask-worker-ports 40000:40004 has 5 ports; 2 workers take 6"),
    (("--workers", "2", "--dask-worker-ports", "40000"), "--dask-worker-ports must be LO:HI"),
    (("--workers", "2", "--dask-dashboard", "hostonly:"), "--dask-dashboard must be a port number 0-65535"),
    (("--workers", "2", "--dask-scheduler-port", "70000"), "--dask-scheduler-port must be a port number 0-65535"),
    (("--scheduler", "tcp://127.0.0.1:1", "--dask-dashboard", "off"), "the cluster at --scheduler tcp://127.0.0.1:1 "
                                                                      "has its own (dask scheduler --port"),
])
def test_bad_dask_port_options_are_refused_before_anything_starts(tmp_path: Path, extra: tuple[str, ...],
                                                                  says: str) -> None:
    run = tmp_path / "run"
    out = subprocess.run(tournament(tmp_path, run, 2, *extra), capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and says in out.stderr, out.stderr
    assert not run.exists()


@pytest.mark.parametrize("clock", ["wall", "cpu"])
def test_each_workers_referee_times_the_bots_by_the_runs_clock(tmp_path: Path, clock: str) -> None:
    """``--clock`` reaches the workers: each worker's match context times the bots it starts by
    the clock the run asked for (they all used ``cpu`` whatever it said)."""
    from arena.run.cluster import PLUGIN, Cluster

    cluster = Cluster(ClusterSpec(workers=2), tmp_path / "replays", None, tmp_path / "logs", clock)
    try:
        trio.run(cluster.wait_for_workers)

        def used(dask_worker: Any) -> str:
            context = dask_worker.plugins[PLUGIN].context
            return str(context.clock) if context is not None else "no context"

        clocks = cluster.client.run(used)
        assert len(clocks) == 2 and set(clocks.values()) == {clock}, clocks
    finally:
        cluster.close()
