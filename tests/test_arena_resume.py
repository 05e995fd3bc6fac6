"""Resume after a crash: `kill -9` the arena in the middle of a tournament, then `--resume` the
run folder. No finished game is lost or played again; the games that were running are played
again from scratch under new match ids; the results are complete; no bot process is left."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests._wait import RUN_HANG_S

BOTS = """
[[bot]]
name = "a"
command = ["{python}", "-m", "arena._testbot"]

[[bot]]
name = "b"
command = ["{python}", "-m", "arena._testbot", "--mode", "slow", "--delay", "0.02"]
"""


def done_games(db_path: Path) -> dict[int, tuple[str, str, str]]:
    db = sqlite3.connect(db_path, timeout=10)
    try:
        rows = db.execute("SELECT idx, match_id, replay_path, replay_hash FROM games WHERE status = 'done'")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}
    finally:
        db.close()


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def test_kill_9_then_resume(tmp_path: Path) -> None:
    bots = tmp_path / "bots.toml"
    bots.write_text(BOTS)
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--games", "12", "--rules",
           "short", "--tc", "st=1 timemargin=100", "--concurrency", "3", "--seed", "resume-test", "--out", str(run)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db_path = run / "run.sqlite"
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            if db_path.exists() and len(done_games(db_path)) >= 3:
                break
            assert proc.poll() is None, "the tournament ended before it could be killed"
            time.sleep(0.1)
        else:
            raise AssertionError("no progress")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    before = done_games(db_path)
    db = sqlite3.connect(db_path)
    running = [r[0] for r in db.execute("SELECT idx FROM games WHERE status = 'running'")]
    orphans = [r[0] for r in db.execute("SELECT pid FROM procs")]
    db.close()
    assert 3 <= len(before) < 12
    assert running, "some games were running when the arena was killed"

    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run)],
                         capture_output=True, text=True, timeout=RUN_HANG_S)
    assert out.returncode == 0, out.stderr
    assert "will be played again" in out.stdout

    after = done_games(db_path)
    assert sorted(after) == list(range(12)), "every scheduled game is done"
    for idx, row in before.items():
        assert after[idx] == row, f"game {idx} finished before the kill and must not be played again"
    db = sqlite3.connect(db_path)
    attempts = dict(db.execute("SELECT idx, attempts FROM games").fetchall())
    assert db.execute("SELECT COUNT(*) FROM procs").fetchone()[0] == 0
    db.close()
    for idx in running:
        assert attempts[idx] == 2 and after[idx][0].endswith("-r1"), (idx, after[idx])
    for idx in set(range(12)) - set(running):
        assert attempts[idx] == 1
    # One replay per game, the one recorded, with the recorded final hash.
    replays = sorted(p.name for p in (run / "replays").iterdir() if p.suffix == ".jsonl")
    assert replays == sorted(Path(r[1]).name for r in after.values())
    for _, path, digest in after.values():
        last = Path(path).read_bytes().splitlines()[-1]
        assert hashlib.sha256(last).hexdigest() == digest

    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 12 and results["run"]["status"] == "finished"
    assert sorted(g["idx"] for g in results["games"]) == list(range(12))
    with open(run / "games.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 12
    # The bots the killed arena left behind were ended on resume (or had exited by themselves).
    for pid in orphans:
        assert not alive(pid), pid
    assert os.path.getsize(run / "run.log") > 0
