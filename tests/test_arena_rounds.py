"""Formats of several rounds through ``arena tournament --format``: each round is planned from the
stored results when the one before is done, stored and fingerprinted; a Swiss run killed (SIGKILL)
in the middle of a round and resumed plays the same rounds, and so does a ladder tournament (a
round: one wave of the ladder's pairing); a knockout runs and reports. Real bot
processes, an embedded referee on an ephemeral port."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.competition.formats import PlayedRound, get_format
from arena.model.schedule import field_of, round_jobs
from arena.store import ROUNDS, RunStore, StoreError
from tests._wait import RUN_HANG_S, until

BOTS = """
[[bot]]
name = "a"
command = ["{python}", "-m", "arena._testbot"]

[[bot]]
name = "b"
command = ["{python}", "-m", "arena._testbot", "--mode", "first"]

[[bot]]
name = "c"
command = ["{python}", "-m", "arena._testbot", "--mode", "slow", "--delay", "0.02"]

[[bot]]
name = "d"
command = ["{python}", "-m", "arena._testbot", "--mode", "random"]

[[bot]]
name = "e"
command = ["{python}", "-m", "arena._testbot", "--mode", "slow", "--delay", "0.01"]
"""


def _query(db: Path, sql: str) -> list[Any]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _rounds(db: Path) -> list[dict[str, Any]]:
    rows = _query(db, f"SELECT value FROM meta WHERE key = '{ROUNDS}'") if db.exists() else []
    return json.loads(rows[0][0]) if rows else []


def _tournament(tmp_path: Path, *args: str, concurrency: int = 2) -> list[str]:
    bots = tmp_path / "bots.toml"
    bots.write_text(BOTS)
    return [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(bots), "--rules", "short", "--tc",
            "st=1 timemargin=100", "--concurrency", str(concurrency), "--games", "2", "--seed", "rounds",
            *args]


def _replanned(run: Path) -> list[list[tuple[str, ...]]]:
    """Every stored round planned again, independently, by the competition core from the stored
    results of the rounds before it: each round's games' seatings."""
    store = RunStore.open(run)
    try:
        cfg, rows, stored = store.config, store.games(), store.rounds()
        fmt, field = get_format(cfg.format), field_of(cfg)
        history: list[PlayedRound] = []
        out = []
        for entry in stored:
            planned = fmt.plan(field, history)
            assert planned is not None
            jobs = round_jobs(cfg, planned, entry.first)
            mine = rows[entry.first:entry.first + entry.games]
            assert [j.players for j in jobs] == [r.job.players for r in mine]
            out.append([j.players for j in jobs])
            history.append(PlayedRound(planned, tuple(r.outcome.result(r.job.pair_key) for r in mine if r.outcome)))
        assert fmt.plan(field, history) is None, "the run ended before its format did"
        return out
    finally:
        store.close()


def test_a_swiss_run_killed_mid_round_resumes_with_the_same_rounds(tmp_path: Path) -> None:
    run = tmp_path / "run"
    db = run / "run.sqlite"
    proc = subprocess.Popen(_tournament(tmp_path, "--format", "swiss", "--rounds", "3", "--out", str(run),
                                        concurrency=1), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # the second round planned, one of its games started and at least two not finished (with one
        # game at a time that lasts two games): kill the arena there
        def mid_second_round() -> bool:
            rounds = _rounds(db)
            if len(rounds) != 2:
                return False
            first = rounds[1]["first"]
            status = [r[0] for r in _query(db, f"SELECT status FROM games WHERE idx >= {first}")]
            return status.count("pending") < len(status) and len(status) - status.count("done") >= 2

        until(mid_second_round, "the second Swiss round to be played", alive=proc, bound_s=RUN_HANG_S)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = _rounds(db)
    assert len(before) == 2 and [r["games"] for r in before] == [4, 4]  # 5 bots: two pairings and a bye a round
    assert _query(db, "SELECT COUNT(*) FROM games WHERE status != 'done'")[0][0] > 0

    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run)],
                         capture_output=True, text=True, timeout=RUN_HANG_S, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    after = _rounds(db)
    assert after[:2] == before, "the rounds stored before the kill are the rounds played"
    assert len(after) == 3 and [r["label"] for r in after] == ["round 1 of 3", "round 2 of 3", "round 3 of 3"]
    assert len({b for r in after for b in r["byes"]}) == 3  # a different bot sits out each round
    seatings = _replanned(run)  # the core plans the same rounds from the stored results
    pairs = [frozenset(s) for r in seatings for s in r[::2]]
    assert len(pairs) == len(set(pairs)) == 6, "no pair met twice (avoidable with five bots in three rounds)"
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 12 and results["run"]["status"] == "finished"
    assert results["run"]["format"] == "swiss" and results["run"]["rounds"] == 3
    assert results["rounds"] == after  # results.json lists the rounds, their games and byes
    assert sorted(s["bot"] for s in results["standings"]) == ["a", "b", "c", "d", "e"]


def test_a_ladder_tournament_killed_mid_round_resumes_with_the_same_rounds(tmp_path: Path) -> None:
    run = tmp_path / "ladder"
    db = run / "run.sqlite"
    proc = subprocess.Popen(_tournament(tmp_path, "--format", "ladder", "--rounds", "3", "--out", str(run),
                                        concurrency=1), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def second_round_started() -> bool:
            rounds = _rounds(db)
            if len(rounds) != 2:
                return False
            status = [r[0] for r in _query(db, f"SELECT status FROM games WHERE idx >= {rounds[1]['first']}")]
            return status.count("pending") < len(status) and len(status) - status.count("done") >= 2

        until(second_round_started, "the second ladder round to be played", alive=proc, bound_s=RUN_HANG_S)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = _rounds(db)
    assert [r["games"] for r in before] == [4, 4]  # 5 bots: two tables and one sitting out a round
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run)],
                         capture_output=True, text=True, timeout=RUN_HANG_S, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    after = _rounds(db)
    assert after[:2] == before and [r["label"] for r in after] == [f"round {k} of 3" for k in (1, 2, 3)]
    assert len({b for r in after for b in r["byes"]}) == 3  # a different bot sits out each round
    seatings = _replanned(run)  # the ladder format plans the same rounds from the stored results
    pairs = [frozenset(s) for r in seatings for s in r[::2]]
    assert len(pairs) == len(set(pairs)) == 6, "the least-met first: no pair met twice in three rounds"
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 12 and results["run"]["format"] == "ladder"


def test_a_knockout_runs_round_by_round_and_reports(tmp_path: Path) -> None:
    run = tmp_path / "ko"
    out = subprocess.run(_tournament(tmp_path, "--format", "knockout", "--rater", "glicko2", "--out", str(run)),
                         capture_output=True, text=True, timeout=RUN_HANG_S, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    rounds = _rounds(run / "run.sqlite")
    stages = [r["label"] for r in rounds if not r["label"].startswith("tie-break")]
    assert stages == ["quarter-final", "semi-final", "final"]
    assert rounds[0]["byes"] == ["a", "b", "c"] and rounds[0]["games"] == 2  # d v e; the top three seeds wait
    _replanned(run)
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == sum(r["games"] for r in rounds) and results["run"]["status"] == "finished"
    assert [b["rater"] for b in results["ratings"]] == ["glicko2"]
    assert "Ratings: Glicko-2 (glicko2):" in out.stdout
    # a changed store (a round's game edited) no longer opens: the rounds are checked on opening
    conn = sqlite3.connect(run / "run.sqlite")
    conn.execute("UPDATE games SET seed = ? WHERE idx = ?", ("00" * 32, rounds[-1]["first"]))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=f"scheduled game {rounds[-1]['first']} differs from its configuration"):
        RunStore.open(run)
