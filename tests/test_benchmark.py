"""``arena benchmark``: a benchmark defined as data, played by a bot the user names (or a
reference) against each reference with real bot processes; the same games on every run; the
published benchmarks and their errors. Small game counts, generous time controls: nothing here
depends on how fast a bot answers."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.run import benchmark as bm
from referee.replays import ActionRecord, DealRecord, read_replay
from tests._wait import RUN_HANG_S, until

TEST_BENCHMARKS = """
[[benchmark]]
name = "two"
version = 1
description = "test: today's Gin sample bots"
game = "gin"
rules = "short"
seats = 2
field = ["greedy", "expert"]
games = 4
quick_games = 2
seed = "two-v1"
tc = "st=60"

[[benchmark]]
name = "four"
version = 1
game = "rummy"
rules = "rummy"
seats = 4
field = ["random", "hoarder", "greedy"]
games = 4
quick_games = 4
seed = "four-v1"
tc = "st=60"

[[benchmark]]
name = "long"
version = 1
game = "gin"
rules = "short"
seats = 2
field = ["random", "greedy"]
games = 400
quick_games = 2
seed = "long-v1"
tc = "st=60"

[[benchmark]]
name = "missing"
version = 2
game = "gin"
rules = "short"
seats = 2
field = ["greedy", "no-such-bot"]
games = 2
quick_games = 2
seed = "m"
tc = "st=60"
"""
GREEDY = "cmd={python} -m sample_bots.greedy_bot"


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=RUN_HANG_S)


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    path = tmp_path / "benchmarks.toml"
    path.write_text(TEST_BENCHMARKS)
    return path


def played(run: Path) -> list[tuple[Any, ...]]:
    """Every game of a run folder as its record: the seats, each deal's dealer and deck, every
    action, the result (winner, totals, seed) — in schedule order."""
    report = json.loads((run / "results.json").read_text())
    records = []
    for g in sorted(report["games"], key=lambda g: g["idx"]):
        replay = read_replay(run / g["replay_path"])
        assert replay.result is not None
        records.append((
            tuple(replay.header.players),
            tuple((r.dealer, r.deck) for r in replay.records if isinstance(r, DealRecord)),
            tuple((r.seat, r.action, r.card) for r in replay.records if isinstance(r, ActionRecord)),
            (replay.result.winner, tuple(replay.result.totals), replay.result.seed),
        ))
    return records


def benchmark(defs: Path, out: Path, *extra: str) -> dict[str, Any]:
    done = arena("benchmark", "--benchmarks", str(defs), "--out", str(out), "--workers", "1", "--no-progress",
                 *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads((out / bm.BENCHMARK_JSON).read_text())
    assert f"Benchmark {report['benchmark']}" in done.stdout
    assert (out / bm.BENCHMARK_HTML).read_text().count("<tr>") == 1 + len(report["rows"])
    return report


def test_a_bot_against_each_reference_the_same_games_every_time(defs: Path, tmp_path: Path) -> None:
    first = benchmark(defs, tmp_path / "a", "two-v1", "--bot", "name=mine", GREEDY)
    assert first["candidate"]["name"] == "mine" and first["references"] == ["greedy", "expert"]
    assert [r["reference"] for r in first["rows"]] == ["greedy", "expert"]
    for row in first["rows"]:
        assert row["games"] == 4 and row["units"] == 2  # two duplicate pairs against each reference
        assert sum(row["pentanomial"]) == row["units"] and sum(row["trinomial"]) == 0
        assert row["unit_wins"] + row["unit_draws"] + row["unit_losses"] == row["units"]
        assert 0.0 <= row["los"] <= 1.0
    assert first["games_played"] == first["games_scheduled"] == 8
    assert first["overall"]["units"] == 4

    again = benchmark(defs, tmp_path / "b", "two-v1", "--bot", "name=other", GREEDY)
    records = played(tmp_path / "a")
    assert records == played(tmp_path / "b")  # the same deals, the same (deterministic) play, the same results
    assert len({deals[0] for _, deals, _, _ in records}) == 4  # four duplicate pairs of two games: four decks
    assert [r["pentanomial"] for r in again["rows"]] == [r["pentanomial"] for r in first["rows"]]

    quick = benchmark(defs, tmp_path / "q", "two-v1", "--bot", "name=mine", GREEDY, "--quick")
    assert quick["quick"] and quick["games_played"] == 4
    first_decks = {deals[0][1] for _, deals, _, _ in records}
    assert {deals[0][1] for _, deals, _, _ in played(tmp_path / "q")} < first_decks  # the full run's first pairs


def test_one_reference_against_another(defs: Path, tmp_path: Path) -> None:
    report = benchmark(defs, tmp_path / "r", "two-v1", "--reference", "greedy", "--against", "expert")
    assert report["candidate"] == {"name": "greedy", "reference": True,
                                   "command": "{python} -m sample_bots.greedy_bot"}
    assert [r["reference"] for r in report["rows"]] == ["expert"] and report["games_played"] == 4
    # The reference plays at the candidate's seat, under its name: the deals of every candidate.
    assert all(set(players) == {bm.CANDIDATE, "expert"} for players, _, _, _ in played(tmp_path / "r"))


def test_an_sprt_stops_the_benchmark_once_it_decides(defs: Path, tmp_path: Path) -> None:
    """``--sprt``: the expert against random is decided (H1: +100 or more) long before the 400
    games; the run stops there, its table says so, and its games are the full run's first ones."""
    report = benchmark(defs, tmp_path / "s", "long-v1", "--reference", "expert", "--against", "random",
                       "--sprt", "elo0=0,elo1=100")
    sprt = report["sprt"]
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"]
    # (games already started when it decided are played to the end and counted in the table)
    assert sprt["games_played"] <= report["games_played"] < report["games_scheduled"] == 400
    assert 2 * sum(sprt["pairs"]) <= sprt["games_played"]  # the SPRT counts whole duplicate pairs
    text = (tmp_path / "s" / bm.BENCHMARK_HTML).read_text()
    assert f"H1 accepted after {sprt['games_played']} games" in text
    assert "arena benchmark --resume" not in json.dumps(report)  # a decided run is finished, not stopped
    # Resuming a decided run plays nothing more and keeps the decision.
    again = arena("benchmark", "--resume", str(tmp_path / "s"), "--workers", "1", "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"H1 accepted after {sprt['games_played']} games" in again.stdout
    assert "Finish it with" not in again.stdout
    assert json.loads((tmp_path / "s" / bm.BENCHMARK_JSON).read_text())["games_played"] == report["games_played"]


def test_tables_of_four_seats(defs: Path, tmp_path: Path) -> None:
    report = benchmark(defs, tmp_path / "r4", "four-v1", "--bot", "name=mine",
                       "cmd={python} -m sample_bots.rummy_greedy_bot")
    assert report["scoring_unit"] == "rotations" and report["games_played"] == 4
    for row in report["rows"]:  # one table of the candidate and the three references, one rotation
        assert row["games"] == 4 and row["units"] == 1 and sum(row["trinomial"]) == 4
    assert "behind-level-ahead" in (tmp_path / "r4" / bm.BENCHMARK_HTML).read_text()


def test_errors_say_what_is_wrong(defs: Path, tmp_path: Path) -> None:
    def refused(*args: str) -> str:
        done = arena("benchmark", "--benchmarks", str(defs), "--out", str(tmp_path / "x"), *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert not (tmp_path / "x").exists()
        return done.stderr

    assert "no-such-bot, which gin does not register" in refused("missing-v2", "--bot", "name=m", GREEDY)
    assert "there are: two-v1, four-v1, long-v1, missing-v2" in refused("two-v2", "--bot", "name=m", GREEDY)
    assert "fixes every seat's time control" in refused("two-v1", "--bot", "name=m", GREEDY, "tc=st=1")
    assert "give the bot to benchmark" in refused("two-v1")
    assert "registers no such bot" in refused("two-v1", "--reference", "nobody")
    assert "not in two-v1's field" in refused("two-v1", "--reference", "greedy", "--against", "random")
    assert "only random, hoarder left" in refused("four-v1", "--reference", "greedy")
    assert "one reference at tables of two seats" in refused("two-v1", "--bot", "name=m", GREEDY, "--sprt", "elo1=50")
    assert "tables of two seats; four-v1 has 4 seats" in refused("four-v1", "--bot", "name=m", GREEDY, "--sprt",
                                                                 "elo1=50")
    assert "--sprt: SPRT needs elo1 > elo0" in refused("two-v1", "--reference", "greedy", "--against", "expert",
                                                      "--sprt", "elo0=5,elo1=5")
    listed = arena("benchmark", "--benchmarks", str(defs), "--list")
    assert listed.returncode == 0 and "two-v1" in listed.stdout and "not playable here" in listed.stdout


def test_the_published_benchmarks() -> None:
    published = bm.load_benchmarks()
    assert {"gin-v1", "rummy4-v1"} <= set(published)
    gin, rummy = published["gin-v1"], published["rummy4-v1"]
    assert {"eaai-simple", "mc"} <= set(gin.field) and gin.seats == 2 and "mc" in rummy.field and rummy.seats == 4
    for bench in published.values():  # every reference of every published benchmark is a registered bot
        assert list(bm.check_field(bench)) == list(bench.field)
    listed = arena("benchmark", "--list")
    assert listed.returncode == 0 and listed.stdout.count("ready") == len(published), listed.stdout


def test_a_published_benchmark_plays_from_this_checkout(tmp_path: Path) -> None:
    """The published ``gin-v1``, as the docs run it, on its own deals and time control: its two
    quickest references (deterministic bots), ``--quick``."""
    out = tmp_path / "gin"
    done = arena("benchmark", "gin-v1", "--reference", "eaai-simple", "--against", "greedy", "--quick", "--out",
                 str(out), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / bm.BENCHMARK_JSON).read_text())
    assert report["benchmark"] == "gin-v1" and report["quick"] and report["time_control"] == "st=1 timemargin=50"
    assert report["games_played"] == report["games_scheduled"] == 100 and report["rows"][0]["units"] == 50
    assert "Benchmark gin-v1 (quick): eaai-simple against 1 reference(s)" in done.stdout


def test_a_badly_defined_benchmark_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    for text, why in (
        (TEST_BENCHMARKS.replace("games = 4\nquick_games = 2", "games = 3\nquick_games = 2"), "not a multiple"),
        (TEST_BENCHMARKS.replace('seed = "m"', 'seed = "m"\nspeed = 3'), "unknown key(s) speed"),
        (TEST_BENCHMARKS.replace('name = "four"', 'name = "two"').replace('version = 1\ngame = "rummy"',
                                                                           'version = 1\ngame = "rummy"'),
         "defined twice"),
    ):
        bad.write_text(text)
        with pytest.raises(bm.BenchmarkError, match=why.replace("(", r"\(").replace(")", r"\)")):
            bm.load_benchmarks(bad)


def test_an_interrupted_benchmark_is_finished_by_resume(defs: Path, tmp_path: Path) -> None:
    out = tmp_path / "cut"
    slow = "cmd={python} -m arena._testbot --mode slow --delay 0.02"
    cut = subprocess.Popen([sys.executable, "-m", "arena.cli", "benchmark", "two-v1", "--benchmarks", str(defs),
                            "--out", str(out), "--workers", "1", "--concurrency", "1", "--no-progress",
                            "--bot", "name=slowpoke", slow],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def one_done() -> bool:
        if not (out / "run.sqlite").exists():
            return False
        with sqlite3.connect(f"file:{out / 'run.sqlite'}?mode=ro", uri=True, timeout=30) as db:
            return bool(db.execute("SELECT COUNT(*) FROM games WHERE status = 'done'").fetchone()[0])

    until(one_done, "the first game of the benchmark", alive=cut)
    cut.send_signal(signal.SIGINT)
    stdout, _ = cut.communicate(timeout=RUN_HANG_S)
    if cut.returncode == 130:  # (interrupted before its last game: the usual case)
        partial = json.loads((out / bm.BENCHMARK_JSON).read_text())
        assert partial["games_played"] < 8 and "arena benchmark --resume" in stdout
    else:  # (every game was done before the signal was handled: nothing to resume, it still says so)
        assert cut.returncode == 0, stdout

    done = arena("benchmark", "--resume", str(out), "--workers", "1", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / bm.BENCHMARK_JSON).read_text())
    assert report["games_played"] == report["games_scheduled"] == 8
    assert report["candidate"]["name"] == "slowpoke" and report["benchmark"] == "two-v1"
    assert [r["units"] for r in report["rows"]] == [2, 2]
    assert "Benchmark two-v1: slowpoke" in done.stdout

    refused = arena("benchmark", "--resume", str(tmp_path / "nothing-here"))
    assert refused.returncode == 2


def test_a_one_sided_record_shows_its_one_sided_interval() -> None:
    """Every pair won against a reference is not "+inf" alone: the Wilson bound says how far
    above 0 it is at least (40 of 40 units: at least +407 Elo)."""
    from arena.competition.ratings.score import elo_estimate
    from arena.results.stats import finite_or_none, format_elo

    def row(w: int, d: int, lo: int) -> dict[str, Any]:
        est = elo_estimate(w, d, lo)
        return {"elo_text": format_elo(est.elo), "elo_margin": finite_or_none(est.margin),
                "elo_low": finite_or_none(est.low), "elo_high": finite_or_none(est.high)}

    assert bm.interval_text(row(40, 0, 0)) == "+inf (≥ +407)"
    assert bm.interval_text(row(0, 0, 40)) == "-inf (≤ -407)"
    assert bm.interval_text(row(30, 0, 10)).startswith("+191 ± ")  # (a two-sided interval)
