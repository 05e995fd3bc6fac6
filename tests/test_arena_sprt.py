"""The SPRT and the standings during a run, end to end: a lopsided match (the expert sample bot
against the random one) stops at the SPRT's bound before its games are all played, and
``--rating-interval N`` prints the standings every N finished games."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BOTS = ["--bot", 'name=expert cmd="{python} -m sample_bots.expert_bot"',
        "--bot", 'name=random cmd="{python} -m sample_bots.random_bot"']


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_a_lopsided_match_stops_at_its_sprt_bound(tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = arena("tournament", *BOTS, "--games", "80", "--rules", "short", "--tc", "st=5 timemargin=500",
                "--concurrency", "2", "--sprt", "elo0=0,elo1=20,alpha=0.05,beta=0.05", "--out", str(run))
    assert out.returncode == 0, out.stderr
    report = json.loads((run / "results.json").read_text())
    sprt = report["sprt"]
    assert report["run"]["status"] == "stopped"
    assert report["run"]["stop_reason"].startswith("SPRT H1 accepted")
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"]
    assert sprt["bot"] == "expert" and sum(sprt["pairs"]) + sum(sprt["games"]) >= 1
    assert report["games_played"] < 80  # stopped early: the rest were never played
    # the counts are those of the games in results.json: a pair's two games, by expert's wins
    by_pair: dict[str, list[int]] = {}
    for g in report["games"]:
        if g["winner"] is not None:
            by_pair.setdefault(g["pair_key"], []).append(int(g["winner"] == "expert"))
    pairs = [0] * 5
    games = [0] * 3
    for wins in by_pair.values():
        if len(wins) == 2:
            pairs[2 * sum(wins)] += 1
        else:
            games[2 * wins[0]] += 1
    assert sprt["pairs"] == pairs and sprt["games"] == games
    assert "H1 accepted (elo >= elo1)" in out.stdout and "LLR" in out.stdout
    assert "Stopped early: SPRT H1 accepted" in out.stdout
