"""Tables of n seats in the arena: schedules (every combination, random tables, instances of one
bot, seats rotated over the same deck), results for n seats (places, the ranking with openskill
ratings and intervals, head to head, a bot's instances rated as the bot), and a three-seat
tournament of the toy game (``toy3``, the plugin game of tests/plugin_game) through the real
``arena`` command line and bot processes, interrupted and resumed."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from toy3_game import engine as toy

from arena.cli import main
from arena.competition.formats import get_format
from arena.competition.ratings.openskill import openskill_ratings
from arena.competition.ratings.units import scoring_units
from arena.competition.result import Result
from arena.competition.seating import base_name
from arena.model.records import Outcome
from arena.model.schedule import PlayConfig, RunConfig, build_schedule, field_of, schedule_fingerprint
from arena.results.multi import head_to_head
from arena.results.report import PlayedGame, build_report, render_text
from tests._wait import RUN_HANG_S


def _game(players: tuple[str, ...], winner: int | None, group: str, places: tuple[int, ...] = ()) -> Result:
    """A result by its winner (or its places, when given), in duplicate group ``group``."""
    return Result(players, places, (), group) if places else Result.of_winner(players, winner, group)


def _alone(games: list[Result]) -> list[Result]:
    """The games scored without duplicate deals: no groups."""
    return [Result(g.players, g.places, g.points) for g in games]

TOY = toy.NAME
REPO = Path(__file__).resolve().parent.parent


def _config(**kw: object) -> RunConfig:
    base: dict[str, object] = {"run_id": "t", "bots": ("a", "b", "c", "d"), "games": 3, "seed": "s", "seats": 3,
                               "play": PlayConfig(game=TOY)}
    base.update(kw)
    return RunConfig(**base)  # type: ignore[arg-type]


# ----- schedules -----
def test_two_seat_schedules_are_unchanged() -> None:
    """The fingerprints of gin-arena's two-seat schedules before tables of n seats existed."""
    expected = {
        ("round-robin", True): "b43534b75a4909c4fff328a0f2d6fc4239540fcb887131e50c4ca32d14896a6e",
        ("gauntlet", True): "9071a22292d7294854e947526d3598453e95b8b552a56a4d2cc6c33333e10ab6",
        ("round-robin", False): "f0f6e4aec7863e84dd25ef7c4bc15340748eb4279c17bb88b487eef84535ee75",
        ("gauntlet", False): "01dace97d236cec753972884bbb969b30d187b495fa109ff850d73a944022895",
    }
    for (fmt, dup), fingerprint in expected.items():
        cfg = RunConfig(run_id="r", bots=("a", "b", "c"), format=fmt, games=4, duplicate=dup, seed="s")
        assert schedule_fingerprint(build_schedule(cfg)) == fingerprint
        assert "seats" not in cfg.to_dict() and "game" not in cfg.to_dict()


def test_every_combination_with_rotated_seats_on_one_deck() -> None:
    jobs = build_schedule(_config(games=6))
    tables = {j.pairing for j in jobs}
    assert tables == {"a|b|c", "a|b|d", "a|c|d", "b|c|d"} and len(jobs) == 4 * 6
    groups: dict[str, list[tuple[str, ...]]] = {}
    for j in jobs:
        groups.setdefault(j.pair_key, []).append(j.players)
        assert len({g.seed for g in jobs if g.pair_key == j.pair_key}) == 1  # the same deck n times
    assert len(groups) == 8
    for players in groups.values():
        assert len(players) == 3
        for seat in range(3):  # each bot holds every hand (seat) once
            assert sorted(p[seat] for p in players) == sorted(players[0])
    # the first seat moves on from group to group
    firsts = [j.players for j in jobs if j.pairing == "a|b|c" and j.leg == 0]
    assert firsts[0] != firsts[1]


def test_without_duplicate_deals_every_game_has_its_own_deck() -> None:
    jobs = build_schedule(_config(duplicate=False))
    assert len({j.seed for j in jobs}) == len(jobs) and all(j.pair_key == "" for j in jobs)


def pairings(cfg: RunConfig) -> list[tuple[str, ...]]:
    """The tables of a one-round run's round (one group each: ``games`` = ``seats``)."""
    planned = get_format(cfg.format).plan(field_of(cfg), ())
    assert planned is not None
    return [g.players for g in planned.groups]


def test_random_tables_come_from_the_seed() -> None:
    cfg = _config(bots=("a", "b", "c", "d", "e"), tables=5)
    tables = pairings(cfg)
    assert len(tables) == 5 and all(len(set(t)) == 3 for t in tables)
    assert tables == pairings(_config(bots=("a", "b", "c", "d", "e"), tables=5))
    assert tables != pairings(_config(bots=("a", "b", "c", "d", "e"), tables=5, seed="other"))
    jobs = build_schedule(cfg)
    assert len(jobs) == 5 * 3 and len({j.pair_key for j in jobs}) == 5


def test_a_bot_fills_several_seats_as_instances() -> None:
    jobs = build_schedule(_config(bots=("a", "b"), instances=2))
    assert {j.pairing for j in jobs} == {"a|a#2|b", "a|b|b#2"}  # never one bot alone
    for j in jobs:
        assert len(set(j.players)) == 3 and {base_name(p) for p in j.players} == {"a", "b"}
    gauntlet = build_schedule(_config(format="gauntlet", challenger="c", bots=("a", "b", "c")))
    assert {j.pairing for j in gauntlet} == {"c|a|b"}


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="gin is played by 2 to 2 seats; got 3"):
        RunConfig(run_id="r", bots=("a", "b", "c"), games=3, seats=3)
    with pytest.raises(ValueError, match="multiple of the 3 seats"):
        _config(games=4)
    with pytest.raises(ValueError, match="cannot fill 3 seats"):
        _config(bots=("a", "b"))


def test_the_command_line_checks_game_and_seats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bots = ["--bot", 'name=a cmd="{python}"', "--bot", 'name=b cmd="{python}"', "--bot", 'name=c cmd="{python}"']
    assert main(["tournament", *bots, "--seats", "3", "--out", str(tmp_path / "r1")]) == 2
    assert "gin is played by 2 to 2 seats" in capsys.readouterr().err
    assert main(["tournament", *bots, "--game", "nope", "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert "unknown game 'nope'" in err and "gin" in err
    assert main(["tournament", *bots, "--game", TOY, "--seats", "3", "--games", "4",
                 "--out", str(tmp_path / "r3")]) == 2
    assert "multiple of --seats 3" in capsys.readouterr().err
    assert not any((tmp_path / r).exists() for r in ("r1", "r2", "r3"))


# ----- results of stored n-seat outcomes -----
def _outcome(i: int, players: tuple[str, ...], places: tuple[int, ...], points: tuple[int, ...]) -> Outcome:
    n = len(players)
    winner = places.index(1) if places.count(1) == 1 else None
    return Outcome(match_id=f"m{i}", players=players, winner=winner, termination="normal", faulting_seat=None,
                   detail="", points=points, games_won=(0,) * n, deals=1, decisions=10, think_ms=(0,) * n,
                   substituted=(), replay_path="", replay_hash="", seed_hex="", places=places)


def _games() -> list[Outcome]:
    """``strong`` (with two seats as strong and strong#2 at times) mostly finishes ahead of ``mid``;
    ``weak`` is always last."""
    out = []
    for i in range(12):
        if i % 3 == 0:
            out.append(_outcome(i, ("weak", "strong", "mid"), (3, 1, 2), (1, 30, 9)))
        elif i % 3 == 1:
            out.append(_outcome(i, ("strong#2", "mid", "strong"), (2, 3, 1), (20, 5, 25)))
        else:
            out.append(_outcome(i, ("mid", "weak", "strong"), (1, 3, 2), (12, 4, 8)))
    return out


def test_openskill_ratings_with_intervals_and_instances_as_one_bot() -> None:
    ratings = openskill_ratings(_games(), ("strong", "mid", "weak"))
    assert [r.bot for r in ratings] == ["strong", "mid", "weak"]
    assert all(r.low < r.mu < r.high for r in ratings)
    assert all(r.sigma < 25 / 3 for r in ratings)  # every rated game narrows the belief
    assert {r.bot: r.games for r in ratings} == {"strong": 12, "mid": 12, "weak": 8}
    aborted = _outcome(99, ("weak", "strong", "mid"), (1, 1, 1), (0, 0, 0))
    assert openskill_ratings([*_games(), aborted], ("strong", "mid", "weak")) == ratings  # no information


def test_head_to_head_counts_each_meeting() -> None:
    h2h = head_to_head(("strong", "mid", "weak"), _games())
    # strong vs mid: games 0 (1 v 2), 1 (two seats: 2 v 3 and 1 v 3), 2 (3 v 1)
    assert h2h["strong"]["mid"] == {"meetings": 16, "ahead": 12, "behind": 4, "level": 0}
    assert h2h["mid"]["strong"] == {"meetings": 16, "ahead": 4, "behind": 12, "level": 0}
    assert h2h["weak"]["strong"] == {"meetings": 8, "ahead": 0, "behind": 8, "level": 0}
    assert "strong" not in h2h["strong"]  # a bot's two seats are never compared


def test_the_report_ranks_n_seat_games_and_rates_instances_as_the_bot(tmp_path: Path) -> None:
    played = [PlayedGame(i, "", o) for i, o in enumerate(_games())]
    report = build_report(["strong", "mid", "weak"], played, duplicate=False)
    assert report["seats"] == 3
    rank = {r["bot"]: r for r in report["ranking"]}
    assert [r["bot"] for r in report["ranking"]] == ["strong", "mid", "weak"]
    assert rank["strong"]["seats"] == 16 and rank["strong"]["games"] == 12
    assert rank["strong"]["firsts"] == 8 and rank["strong"]["points"] == 4 * (30 + 20 + 25 + 8)
    assert rank["weak"]["mean_place"] == 3.0
    names = {r["bot"] for r in report["ratings_mle"]} | {r["bot"] for r in report["standings"]}
    assert names == {"strong", "mid", "weak"}  # strong#2 is strong
    assert report["standings"][0]["bot"] == "strong"
    text = render_text(report)
    assert "Ranking (3 seats" in text and "Head to head" in text and "strong#2" not in text


def test_a_rotation_on_one_deck_is_one_unit_per_two_bots() -> None:
    rotation = [_game(("x", "y", "z"), 0, "k", (1, 2, 3)), _game(("y", "z", "x"), 2, "k", (2, 3, 1)),
                _game(("z", "x", "y"), 0, "k", (1, 3, 2))]
    units = {(u.a, u.b): u.score for u in scoring_units(rotation)}
    # each bot is ahead of the next two games out of three
    assert units == {("x", "y"): 1.0, ("x", "z"): 1.0, ("y", "z"): 1.0}
    level = [_game(("x", "y", "z"), 0, "k", (1, 2, 3)), _game(("y", "z", "x"), 0, "k", (1, 2, 3)),
             _game(("z", "x", "y"), 0, "k", (1, 2, 2))]
    units = {(u.a, u.b): u.score for u in scoring_units(level)}
    assert units == {("x", "y"): 0.5, ("x", "z"): 0.0, ("y", "z"): 1.0}  # x-y: ahead, behind, level
    # an incomplete rotation counts its games alone: three units a game
    assert len(scoring_units(rotation[:2])) == 6
    instances = [_game(("x", "x", "y"), 0, "k", (1, 3, 2)), _game(("x", "y", "x"), 0, "k", (1, 2, 3)),
                 _game(("y", "x", "x"), 1, "k", (3, 1, 2))]
    assert [(u.a, u.b, u.score) for u in scoring_units(instances)] == [("x", "y", 1.0)]


def test_a_two_seat_report_has_the_shape_of_any_other() -> None:
    """One result type for any number of seats: a report of two-seat games has the ranking, the
    head to head and every game's places, like a report of three-seat games (issue 29)."""
    two = [_outcome(i, ("a", "b") if i % 2 else ("b", "a"), (1, 2), (100, 20)) for i in range(4)]
    report = build_report(["a", "b"], [PlayedGame(i, "", o) for i, o in enumerate(two)], duplicate=False)
    three = build_report(["strong", "mid", "weak"], [PlayedGame(i, "", o) for i, o in enumerate(_games())],
                         duplicate=False)
    assert report.keys() == three.keys() and report["seats"] == 2
    assert {r["bot"]: (r["firsts"], r["mean_place"]) for r in report["ranking"]} == {"a": (2, 1.5), "b": (2, 1.5)}
    assert report["head_to_head"]["a"]["b"] == {"meetings": 4, "ahead": 2, "behind": 2, "level": 0}
    assert [g["places"] for g in report["games"]] == [[1, 2]] * 4
    text = render_text(report)
    assert "Ranking (2 seats" in text and "Head to head" in text and text.startswith("Standings")
    assert render_text(three).startswith("Standings")


def test_the_crosstable_reads_places_whoever_won() -> None:
    """A game that a third bot won still says who of the other two finished ahead (before issue
    29 the crosstable counted only the winner: such a game was "no result" between them)."""
    games = [_outcome(0, ("c", "a", "b"), (1, 2, 3), (30, 20, 10)), _outcome(1, ("b", "c", "a"), (3, 1, 2), (0, 9, 5)),
             _outcome(2, ("a", "b", "c"), (1, 1, 1), (0, 0, 0))]
    cross = build_report(["a", "b", "c"], [PlayedGame(i, "", o) for i, o in enumerate(games)],
                         duplicate=False)["crosstable"]
    assert {k: cross["a"]["b"][k] for k in ("games", "wins", "losses", "no_result")} == {
        "games": 3, "wins": 2, "losses": 0, "no_result": 1}
    assert (cross["b"]["a"]["wins"], cross["b"]["a"]["losses"]) == (0, 2)
    standings = {r["bot"]: (r["wins"], r["losses"], r["no_result"]) for r in build_report(
        ["a", "b", "c"], [PlayedGame(i, "", o) for i, o in enumerate(games)], duplicate=False)["standings"]}
    assert standings == {"a": (0, 2, 1), "b": (0, 2, 1), "c": (2, 0, 1)}  # a loss: someone finished ahead


def test_the_sprt_counts_the_two_bots_in_games_of_any_seats() -> None:
    """The SPRT of two bots counts every rated game they both sat in, by their places (before
    issue 29 it counted only games of two seats: a three-seat run's SPRT never moved)."""
    from arena.results.stats import sprt_counts

    games = [Result(("a", "a#2", "b"), (1, 2, 3)), Result(("b", "a", "a#2"), (1, 3, 2)),
             Result(("a", "b", "a#2"), (1, 2, 3)), Result(("a", "b", "a#2"), (1, 1, 1))]
    counts = sprt_counts(games, "a", "b")
    assert counts.games == (1, 1, 1) and counts.pairs == (0,) * 5  # lost, level (mean ½), won; the aborted: none
    rotation = [Result(("a", "b", "a#2"), (1, 3, 2), (), "k"), Result(("b", "a#2", "a"), (3, 1, 2), (), "k")]
    assert sprt_counts(rotation, "a", "b").pairs == (0, 0, 0, 0, 1)  # two games of one group: a pair


def test_an_old_two_seat_results_file_opens_with_places(tmp_path: Path) -> None:
    """A results file written before every game had places (two seats: a winner only, by name
    or seat) still makes a page: each game's places derived from its winner, the ranking and
    the head to head computed like any report's."""
    from arena.results.page import compute_report, results_page

    games: list[dict[str, Any]] = [{"players": ["a", "b"], "winner": "b", "points": [3, 100]},
             {"players": ["b", "a"], "winner_seat": 1, "points": [0, 100]}, {"players": ["a", "b"], "winner": None}]
    report = compute_report(games)
    page = results_page(tmp_path, report, {}, {})
    assert "<th>seats (place)</th>" in page and "<th>seat 0</th>" not in page
    assert "a <small>(2)</small>, b <small>(1)</small>" in page and "b <small>(2)</small>, a <small>(1)</small>" in page
    assert "a <small>(1)</small>, b <small>(1)</small>" in page  # no winner: no result, every seat first
    assert "id='ranking'" in page and "id='head-to-head'" in page
    assert {r["bot"]: r["firsts"] for r in report["ranking"]} == {"a": 2, "b": 2}


# ----- a three-seat tournament of the toy game, end to end -----
def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=RUN_HANG_S, cwd=REPO)


def _db(run: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(run / "run.sqlite")
    try:
        with conn:
            return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_three_seat_tournament_of_the_toy_game_resumes(tmp_path: Path) -> None:
    bots = tmp_path / "bots.toml"
    bots.write_text(
        f'[[bot]]\nname = "first"\ncwd = "{REPO}"\ngames = ["{TOY}"]\n'
        'command = ["{python}", "-m", "arena._testbot", "--mode", "first"]\n'
        f'[[bot]]\nname = "rnd"\ncwd = "{REPO}"\ngames = ["gin", "{TOY}"]\n'
        'command = ["{python}", "-m", "arena._testbot", "--mode", "random", "--seed", "3"]\n')
    run = tmp_path / "run"
    refused = _arena("tournament", "--bots", str(bots), "--out", str(run))  # gin: "first" does not play it
    assert refused.returncode == 2 and "bot 'first' does not play gin" in refused.stderr, refused.stderr
    assert not run.exists()
    out = _arena("tournament", "--bots", str(bots), "--game", TOY, "--seats", "3", "--instances", "2", "--games",
                 "3", "--concurrency", "3", "--tc", "st=2 timemargin=200", "--seed", "toy", "--out", str(run))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "toy3, round-robin, 2 bots, 3 seats" in out.stdout and "Ranking (3 seats" in out.stdout
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 6 and results["terminations"] == {"normal": 6}
    assert [r["bot"] for r in results["ranking"]] != [] and {r["bot"] for r in results["ranking"]} == {"first", "rnd"}
    for g in results["games"]:
        header = json.loads((run / g["replay_path"]).read_text().splitlines()[0])
        assert header["game"] == TOY and header["bots"] == g["players"]  # each instance said its own name
        assert sorted(g["places"]) in ([1, 2, 3], [1, 1, 3], [1, 2, 2], [1, 1, 1])
    # every instance is its own process (reused from game to game): the bot's log names each
    # process it started with the instance's name, and no process serves both instances
    log = (run / "logs" / "first.log").read_text()
    starts = re.findall(r"=== (\S+) seat (\d): pid (\d+)(?: \([^)]*\))?: .* --name (\S+)", log)
    by_name: dict[str, set[str]] = {}
    for _match, _seat, pid, name in starts:
        by_name.setdefault(name, set()).add(pid)
    assert set(by_name) == {"first", "first#2"} and not by_name["first"] & by_name["first#2"], by_name
    # rotation: in each group every bot instance held each seat once
    for key in {g["pair_key"] for g in results["games"]}:
        group = [g["players"] for g in results["games"] if g["pair_key"] == key]
        assert len(group) == 3 and all(Counter(p[s] for p in group) == Counter(group[0]) for s in range(3))
    with (run / "games.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {"seat2", "place2", "points2"} <= set(rows[0])
    assert (run / "ranking.csv").is_file() and (run / "headtohead.csv").is_file()
    page = (run / "index.html").read_text()
    assert "id='ranking'" in page and "id='head-to-head'" in page

    # A crash left game 4 running and game 5 not yet played: --resume plays them again.
    _db(run, "UPDATE games SET status = 'running' WHERE idx = 4")
    _db(run, "UPDATE games SET status = 'pending' WHERE idx = 5")
    _db(run, "UPDATE meta SET value = 'interrupted' WHERE key = 'status'")
    before = dict(_db(run, "SELECT idx, match_id FROM games"))
    out = _arena("tournament", "--resume", str(run))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 game(s) that were running will be played again" in out.stdout
    after = dict(_db(run, "SELECT idx, match_id FROM games WHERE status = 'done'"))
    assert len(after) == 6 and after[4] == f"{before[4]}-r1" and after[5] == f"{before[5]}-r1"
    assert {k: v for k, v in after.items() if k < 4} == {k: v for k, v in before.items() if k < 4}
    seats = _db(run, "SELECT game, COUNT(*), COUNT(place) FROM game_seats GROUP BY game")
    assert seats == [(i, 3, 3) for i in range(6)]
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 6 and results["run"]["status"] == "finished" and results["seats"] == 3


def test_a_ladder_of_three_seats(tmp_path: Path) -> None:
    db = str(tmp_path / "ladder.sqlite")
    for name, mode in (("first", "first"), ("rnd", "random"), ("rnd2", "random")):
        out = _arena("ladder", "add", "--db", db, "--bot",
                     f'name={name} cwd={REPO} games={TOY} cmd="{{python}} -m arena._testbot --mode {mode}"')
        assert out.returncode == 0, out.stdout + out.stderr
    out = _arena("ladder", "run", "--db", db, "--game", TOY, "--seats", "3", "--games", "2", "--tc", "st=2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 game(s) played" in out.stdout and "Ranking (3 seats" in out.stdout  # a whole rotation
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT game, seat, bot, place FROM game_seats ORDER BY game, seat").fetchall()
        keys = {r[0] for r in conn.execute("SELECT pair_key FROM games")}
    finally:
        conn.close()
    assert len(rows) == 9 and all(r[3] is not None for r in rows) and len(keys) == 1
    by_game: dict[int, list[str]] = {}
    for game, _seat, bot, _place in rows:
        by_game.setdefault(game, []).append(bot)
    assert all(Counter(p[s] for p in by_game.values()) == Counter(("first", "rnd", "rnd2")) for s in range(3))
    out = _arena("ladder", "show", "--db", db)
    assert out.returncode == 0 and "Ranking (3 seats" in out.stdout, out.stdout + out.stderr
    out = _arena("ladder", "run", "--db", db, "--games", "2")
    assert out.returncode == 2 and f"this ladder plays {TOY}" in out.stderr
