"""The one storage schema: databases made by gin-arena 0.1 (tests/fixtures/v0_1) are migrated and
then report, resume and show the same results; a game with more than two seats fits; every game
row names its game (filled in for databases made before), its rules as its game writes them and
its time control in the canonical form."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.model.records import Outcome
from arena.model.schedule import PlayConfig, RunConfig
from arena.store import (
    SCHEMA_VERSION,
    RunStore,
    StoreError,
    open_db,
    outcome_from_row,
    play_columns,
    record_game,
    seats_by_game,
)
from referee import DEFAULT_GAME, TimeControl, games
from tests._wait import RUN_HANG_S

FIXTURES = Path(__file__).parent / "fixtures" / "v0_1"
REPO = Path(__file__).resolve().parent.parent


def arena(*args: str, timeout: float = RUN_HANG_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def copy(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(FIXTURES / name, dest)
    return dest


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def cells(text: str) -> list[list[str]]:
    """The words of each line, without the rules drawn under table headers (how they are drawn
    is the table library's business; what they say must not change)."""
    return [line.split() for line in text.splitlines() if line.strip() and set(line.strip()) - set("- ")]


NEW_SECTIONS = ("Ranking (", "Head to head (")
"""The report's sections gin-arena 0.1 did not print for two seats (every report has them since
a game of any number of seats became one result, issue 29)."""


def without_new_sections(text: str) -> str:
    """A report's text without :data:`NEW_SECTIONS`, after checking it has them."""
    blocks = text.split("\n\n")
    assert all(any(b.startswith(h) for b in blocks) for h in NEW_SECTIONS), text
    return "\n\n".join(b for b in blocks if not b.startswith(NEW_SECTIONS))


def without_fallbacks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of results.json without the ``fallbacks`` that 0.1 did not have, after checking
    that a migrated database says there were none (per seat or per bot), and without the
    interval ends of a one-sided record, which 0.1 did not compute."""
    for row in rows:
        assert row.pop("fallbacks") in (0, [0, 0]), row
        if "elo" in row and row["elo"] is None:  # a one-sided record (±inf): 0.1 gave it no interval
            row["elo_low"] = row["elo_high"] = None  # ends; now its Wilson bound (tests/test_arena_stats.py)
    return rows


def assert_migrated(db: Path, kind: str) -> None:
    meta = dict(query(db, "SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION) and meta["kind"] == kind
    assert meta["migrated_from"] == "1"
    columns = {r[1] for r in query(db, "PRAGMA table_info(games)")}
    assert "seat0" not in columns and "points0" not in columns
    assert not query(db, "SELECT name FROM sqlite_master WHERE name IN ('games_v1', 'matches')")
    assert query(db, "SELECT DISTINCT game FROM games") == [(DEFAULT_GAME,)]  # 0.1 played one game


def test_finished_run_migrates_and_reports_the_same_results(tmp_path: Path) -> None:
    run = copy("demo_run", tmp_path)
    out = arena("report", str(run))
    assert out.returncode == 0, out.stderr
    assert cells(without_new_sections(out.stdout)) == cells((FIXTURES / "demo_run" / "report.txt").read_text())
    assert_migrated(run / "run.sqlite", "run")
    seats = query(run / "run.sqlite", "SELECT game, seat, bot, place, points FROM game_seats ORDER BY game, seat")
    assert len(seats) == 12 and {s[1] for s in seats} == {0, 1}
    old = json.loads((FIXTURES / "demo_run" / "results.json").read_text())
    new = json.loads((run / "results.json").read_text())
    assert without_fallbacks(new["standings"]) == old["standings"] and new["crosstable"] == old["crosstable"]
    assert new.pop("faults") == []  # (0.1's results had no fault list; these games had none)
    for g_old, g_new in zip(old["games"], without_fallbacks(new["games"]), strict=True):
        # every game has its places now (0.1's two-seat games had a winner only): they agree with it
        assert g_new.pop("places") == [1 if s == g_old["winner_seat"] else 2 for s in range(2)]
        assert {k: v for k, v in g_new.items() if k != "replay_path"} == {
            k: v for k, v in g_old.items() if k != "replay_path"}
        # The stored paths are another machine's: the replay is found in the run folder instead,
        # and named relative to it (the folder may move again).
        assert not Path(g_new["replay_path"]).is_absolute() and (run / g_new["replay_path"]).is_file()
    assert arena("report", str(run)).stdout == out.stdout  # a migrated database opens as it is
    audit = arena("audit", str(run))
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_killed_run_migrates_and_resumes_to_completion(tmp_path: Path) -> None:
    run = copy("partial_run", tmp_path)
    before = query(run / "run.sqlite", "SELECT idx, match_id, replay_hash FROM games WHERE status = 'done'")
    assert len(before) == 5

    def set_cwd(cwd: Path) -> None:
        conn = sqlite3.connect(run / "run.sqlite")
        with conn:
            for name, spec in conn.execute("SELECT name, spec FROM bots").fetchall():
                conn.execute("UPDATE bots SET spec = ? WHERE name = ?", (json.dumps({**json.loads(spec),
                                                                                      "cwd": str(cwd)}), name))
        conn.close()

    # The bots' folder is the old machine's: the resume says so before it plays anything.
    set_cwd(tmp_path / "gone")
    out = arena("tournament", "--resume", str(run))
    assert out.returncode == 2 and "does not exist" in out.stderr, out.stderr
    assert query(run / "run.sqlite", "SELECT COUNT(*) FROM games WHERE status = 'done'") == [(5,)]

    set_cwd(REPO)  # the commands are "{python} -m sample_bots...": this interpreter
    out = arena("tournament", "--resume", str(run))
    assert out.returncode == 0, out.stderr
    assert "1 game(s) that were running will be played again" in out.stdout
    assert_migrated(run / "run.sqlite", "run")
    done = query(run / "run.sqlite", "SELECT idx, match_id, replay_hash FROM games WHERE status = 'done' ORDER BY idx")
    assert len(done) == 10 and done[:5] == sorted(before)
    assert dict(query(run / "run.sqlite", "SELECT idx, match_id FROM games"))[5] == "partial-52440b-g0005-r1"
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 10 and results["run"]["status"] == "finished"
    assert results["run"]["time_control"] == "st=0.5 timemargin=100"


def test_ladder_migrates_and_shows_the_same_ratings(tmp_path: Path) -> None:
    folder = copy("ladder", tmp_path)
    out = arena("ladder", "show", "--json", "--db", str(folder / "ladder.sqlite"))
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    without_fallbacks(shown["standings"])
    skill = shown.pop("skill")  # the shared standings (arena.results.standings), newer than the fixture
    assert {s["bot"] for s in skill} >= {r["bot"] for r in shown["ratings"]} and all(s["games"] for s in skill)
    assert shown == json.loads((FIXTURES / "ladder" / "show.json").read_text())
    assert_migrated(folder / "ladder.sqlite", "ladder")
    runs = json.loads(arena("ladder", "runs", "--json", "--db", str(folder / "ladder.sqlite")).stdout)
    assert [(r["run"], r["games"], r["bots"]) for r in runs] == [
        ("ladder-20261201-083443-4019c9", 4, ["expert", "greedy", "random"])]


def test_serve_database_migrates(tmp_path: Path) -> None:
    folder = copy("serve", tmp_path)
    old = query(folder / "serve.sqlite", "SELECT match_id, seat0, seat1, winner, points0, points1 FROM matches")
    conn = open_db(folder / "serve.sqlite", "serve")
    try:
        seats = seats_by_game(conn)
        got = []
        for r in conn.execute("SELECT * FROM games ORDER BY idx"):
            o = outcome_from_row(r, seats[int(r["idx"])])
            got.append((o.match_id, *o.players, o.winner, *o.points))
    finally:
        conn.close()
    assert got == old and got
    assert_migrated(folder / "serve.sqlite", "serve")
    with pytest.raises(StoreError, match="is a serve database, not a ladder database"):
        open_db(folder / "serve.sqlite", "ladder")


def test_a_game_of_three_seats_fits(tmp_path: Path) -> None:
    conn = open_db(tmp_path / "x.sqlite", "serve")
    try:
        o = Outcome(match_id="m3", players=("a", "b", "c"), winner=2, termination="normal", faulting_seat=None,
                    detail="", points=(10, 0, 61), games_won=(0, 0, 1), deals=3, decisions=40, think_ms=(1, 2, 3),
                    substituted=(1,), replay_path="", replay_hash="", seed_hex="")
        idx = record_game(conn, {"rules": "{}", "time_control": "st=1"}, o)
        row = conn.execute("SELECT * FROM games WHERE idx = ?", (idx,)).fetchone()
        back = outcome_from_row(row, seats_by_game(conn)[idx])
        places = [r[0] for r in conn.execute("SELECT place FROM game_seats ORDER BY seat")]
    finally:
        conn.close()
    assert back == o and places == [2, 2, 1]


def test_the_games_rows_name_their_game_and_older_databases_learn_it(tmp_path: Path) -> None:
    other = next(name for name in games.names() if name != DEFAULT_GAME)
    config = RunConfig(run_id="r", bots=("a", "b"), games=2, seed="s", play=PlayConfig(game=other))
    RunStore.create(tmp_path / "run", config, [], {}).close()
    db = tmp_path / "run" / "run.sqlite"
    assert query(db, "SELECT DISTINCT game FROM games") == [(other,)]
    conn = sqlite3.connect(db)  # a database of schema 2 made before the column existed
    conn.execute("ALTER TABLE games DROP COLUMN game")
    conn.close()
    RunStore.open(tmp_path / "run").close()
    assert query(db, "SELECT DISTINCT game FROM games") == [(other,)]  # from the run's configuration

    ladder = tmp_path / "ladder.sqlite"
    conn = open_db(ladder, "ladder")
    conn.execute("INSERT INTO runs VALUES ('l1', 0, ?)", (json.dumps(PlayConfig(game=other).to_dict()),))
    conn.execute("INSERT INTO runs VALUES ('l2', 0, ?)", (json.dumps(PlayConfig().to_dict()),))
    conn.execute("INSERT INTO games (run, match_id) VALUES ('l1', 'm1'), ('l2', 'm2')")
    conn.execute("ALTER TABLE games DROP COLUMN game")
    conn.close()
    open_db(ladder, "ladder").close()
    assert query(ladder, "SELECT match_id, game FROM games ORDER BY match_id") == [("m1", other), ("m2", DEFAULT_GAME)]


def test_rules_are_stored_through_their_game_and_the_time_control_in_one_form(tmp_path: Path) -> None:
    tc = TimeControl.parse("tc=30+0.5 timemargin=20")
    for name in games.names():
        engine = games.get(name).game
        rules = engine.default_rules()
        columns = play_columns(name, rules, tc)
        assert columns["game"] == name
        assert engine.rules_from_dict(json.loads(columns["rules"])) == rules
        assert json.loads(columns["time_control"]) == {"base_ms": 30_000, "increment_ms": 500, "margin_ms": 20}
        assert TimeControl.from_dict(json.loads(columns["time_control"])) == tc
    assert TimeControl.from_dict("st=1 timemargin=50") == TimeControl(per_move_ms=1000, margin_ms=50)  # rows of before
    with pytest.raises(ValueError, match="unknown time control field"):
        TimeControl.from_dict({"per_move": 1000})
    with pytest.raises(ValueError, match="not a whole number"):
        TimeControl.from_dict({"per_move_ms": "1000"})
