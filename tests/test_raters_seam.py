"""The raters as a seam: ``--rater`` (several; the first orders the standings) on ``arena report``
and ``arena tournament``, every chosen rater's table in results.json, the text report and the
results page, named by the rater and drawn the same way whichever it is."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.parser import build_parser
from arena.competition.ratings import RATERS
from arena.model.records import Outcome
from arena.model.schedule import RunConfig
from arena.results.page import write_results_page
from arena.results.report import PlayedGame, build_report, render_text
from tests._wait import RUN_HANG_S

FIXTURES = Path(__file__).parent / "fixtures" / "v0_1"


def _game(i: int, players: tuple[str, str], winner: int) -> PlayedGame:
    o = Outcome(match_id=f"m{i}", players=players, winner=winner, termination="normal", faulting_seat=None,
                detail="", points=(0, 0), games_won=(0, 0), deals=1, decisions=0, think_ms=(0, 0), substituted=(),
                replay_path="", replay_hash="", seed_hex="")
    return PlayedGame(i, "", o)


def _field() -> list[PlayedGame]:
    """a beat b once (a perfect score: +inf Elo against its field); c beat b 9 times of 10."""
    games = [_game(0, ("a", "b"), 0)]
    games += [_game(1 + i, ("c", "b"), 0 if i < 9 else 1) for i in range(10)]
    return games


def test_the_first_rater_orders_the_standings_and_every_one_gets_its_table() -> None:
    by_elo = build_report(["a", "b", "c"], _field(), duplicate=False, raters=("elo", "bt"))
    assert [s["bot"] for s in by_elo["standings"]] == ["a", "c", "b"]
    by_bt = build_report(["a", "b", "c"], _field(), duplicate=False, raters=("bt", "glicko2"))
    assert [s["bot"] for s in by_bt["standings"]] == ["c", "a", "b"]  # one won game says little to BT
    assert [b["rater"] for b in by_bt["ratings"]] == ["bt", "glicko2"]
    assert [b["title"] for b in by_bt["ratings"]] == ["Bradley–Terry", "Glicko-2"]
    glicko = by_bt["ratings"][1]["rows"]
    assert {r["bot"] for r in glicko} == {"a", "b", "c"} and all(r["low"] <= r["rating"] <= r["high"] for r in glicko)
    assert {"rd", "volatility"} <= set(glicko[0])  # the rater's own columns come along
    text = render_text(by_bt)
    assert "Ratings: Bradley–Terry (bt):" in text and "Ratings: Glicko-2 (glicko2):" in text
    assert "volatility" in text and "Maximum-likelihood" not in text


def test_a_run_that_chose_no_rater_prints_what_it_always_printed() -> None:
    report = build_report(["a", "b", "c"], _field(), duplicate=False)
    assert report["raters"] == ["elo", "bt"] and not report["raters_chosen"]
    text = render_text(report)
    assert "Maximum-likelihood ratings (Bradley–Terry, mean 0):" in text and "Ratings:" not in text


def test_raters_are_stored_with_the_run_and_checked() -> None:
    cfg = RunConfig(run_id="r", bots=("a", "b"), raters=("glicko2", "elo"))
    assert cfg.to_dict()["raters"] == ["glicko2", "elo"] and RunConfig.from_dict(cfg.to_dict()) == cfg
    assert "raters" not in RunConfig(run_id="r", bots=("a", "b")).to_dict()  # old runs keep their keys
    with pytest.raises(ValueError, match="rater must be one of elo, bt, openskill, glicko2"):
        RunConfig(run_id="r", bots=("a", "b"), raters=("trueskill",))
    args = build_parser().parse_args(["tournament", "--bots", "x.toml", "--rater", "glicko2", "--rater", "bt"])
    assert args.rater == ["glicko2", "bt"] and set(RATERS) == {"elo", "bt", "openskill", "glicko2"}


def test_arena_report_rates_an_old_run_with_the_chosen_raters(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "demo_run", run)
    out = subprocess.run([sys.executable, "-m", "arena.cli", "report", str(run), "--rater", "openskill",
                          "--rater", "glicko2"], capture_output=True, text=True, timeout=RUN_HANG_S, check=False)
    assert out.returncode == 0, out.stderr
    assert "Ratings: Plackett–Luce (openskill):" in out.stdout and "Ratings: Glicko-2 (glicko2):" in out.stdout
    written = json.loads((run / "results.json").read_text())
    assert [b["rater"] for b in written["ratings"]] == ["openskill", "glicko2"]
    order = [r["bot"] for r in written["ratings"][0]["rows"]]
    assert [s["bot"] for s in written["standings"]] == order  # the first rater orders the standings
    html = write_results_page(run, replays=False).read_text()
    assert "id='ratings-openskill'" in html and "<h2>Ratings: Glicko-2</h2>" in html
