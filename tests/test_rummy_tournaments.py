"""Rummy tournaments of the sample bots through the real ``arena`` command line and bot processes:
``arena demo --game rummy`` (four seats: the Python rummy bots and the JS bot) and a six-seat
tournament from a manifest (each bot in up to two seats), every game ``normal``, every replay
audited by ``arena audit RUN_DIR``, the results page linking every game to its rummy replay page."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests._wait import RUN_HANG_S

REPO = Path(__file__).resolve().parent.parent
JS = REPO / "sample_bots" / "js"


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=RUN_HANG_S, cwd=REPO)


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (JS / "node_modules").is_dir():
        pytest.fail("the JS bot needs node and sample_bots/js/node_modules (cd sample_bots/js && npm ci); this test "
                    "plays it and must not be skipped")
    return node


def _check_run(run: Path, games: int, seats: int, bots: set[str]) -> dict[str, object]:
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == games and results["terminations"] == {"normal": games}, results["terminations"]
    assert results["seats"] == seats and {r["bot"] for r in results["ranking"]} == bots
    for g in results["games"]:
        header = json.loads((run / g["replay_path"]).read_text().splitlines()[0])
        assert header["game"] == "rummy" and len(header["players"]) == seats
        assert sorted(g["places"])[0] == 1 and len(g["places"]) == seats
    audit = _arena("audit", str(run))
    assert audit.returncode == 0, audit.stdout[-3000:] + audit.stderr[-3000:]
    index = (run / "index.html").read_text()
    assert not re.findall(r"[-−]0(?![\w.])", index)  # never a negative zero (issue 22)
    for g in results["games"]:
        page = run / "html" / f"{g['match_id']}.html"
        assert f"href='html/{g['match_id']}.html'" in index and page.is_file()
        assert f"Rummy ({seats} seats)" in page.read_text()  # the game's display name
    return dict(results)


def test_the_rummy_demo_plays_four_sample_bots_at_a_table(tmp_path: Path) -> None:
    _node()
    run = tmp_path / "demo"
    out = _arena("demo", "--game", "rummy", "--games", "4", "--out", str(run), "--seed", "demo-rummy",
                 "--tc", "st=2 timemargin=500")  # a loaded machine must not make a bot lose on time
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "rummy, round-robin, 5 bots, 4 seats" in out.stdout and "Ranking (4 seats" in out.stdout
    results = _check_run(run, 20, 4, {"random", "hoarder", "greedy", "mc", "js"})
    games = results["games"]
    assert isinstance(games, list)
    # a table for each four of the five bots, each one rotation on one deck: at every table,
    # every bot of it held every seat once
    tables: dict[frozenset[str], list[list[str]]] = {}
    for g in games:
        tables.setdefault(frozenset(g["players"]), []).append(g["players"])
    assert len(tables) == 5
    for four, played in tables.items():
        for s in range(4):
            assert Counter(p[s] for p in played) == Counter(dict.fromkeys(four, 1))


def test_a_six_seat_tournament_of_python_and_js_bots(tmp_path: Path) -> None:
    node = _node()
    manifest = tmp_path / "bots.toml"
    lines = []
    for name in ("random", "hoarder", "greedy"):
        lines.append(f'[[bot]]\nname = "{name}"\ncwd = "{REPO}"\ngames = ["rummy"]\n'
                     f'command = ["{{python}}", "-m", "sample_bots.rummy_{name}_bot"]\n')
    lines.append(f'[[bot]]\nname = "js"\ncwd = "{REPO}"\ngames = ["gin", "rummy"]\n'
                 f'command = ["{node}", "{JS / "bot.js"}"]\n')
    manifest.write_text("".join(lines))
    run = tmp_path / "six"
    out = _arena("tournament", "--bots", str(manifest), "--game", "rummy", "--seats", "6", "--instances", "2",
                 "--tables", "1", "--games", "6", "--concurrency", "2", "--tc", "st=2 timemargin=500",
                 "--seed", "six-seats", "--out", str(run))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    results = _check_run(run, 6, 6, {"random", "hoarder", "greedy", "js"})
    games = results["games"]
    assert isinstance(games, list)
    assert all(any("#2" in p for p in g["players"]) for g in games)  # two bots hold two seats of the table
