"""A bot whose own code fails is a fault, not a good player (issue 22): real bot processes — the
Python kit, the JavaScript bot, the stdio bridge — play `arena tournament` against greedy.

By default an exception in ``decide`` resigns the match: the referee records a ``bot_error``
fault whose detail is the exception's last line, in results.json, the run's store, ``arena
report`` and the replay (which ``arena audit`` re-runs). With ``--on-error fallback`` the bot
answers the first legal action instead, marks it, and the referee counts it per bot."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests._wait import RUN_HANG_S

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "sample_bots" / "js"
HAS_JS = shutil.which("node") is not None and (JS_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir()

PY_BOT = """
from sample_bots.greedy_bot import decide as greedy
from sample_bots.kit import run_bot

calls = 0


def decide(request):
    global calls
    calls += 1
    if calls % 3 == 0:
        raise ValueError("bad card\\nthe traceback's other lines stay in the bot's log")
    return greedy(request)


if __name__ == "__main__":
    raise SystemExit(run_bot(decide, name="buggy-py"))
"""

JS_BOT = """
const bot = require(%(bot)s);
const { decide } = require(%(strategy)s);
let calls = 0;
bot.main({ name: 'buggy-js', decide: (view) => {
  calls += 1;
  if (calls %% 3 === 0) throw new TypeError('bad card');
  return decide(view);
} });
"""

# A stdio program: the first legal action, but every third answer is not JSON (or it exits).
STDIO_BOT = """
import json, sys
crash = "crash" in sys.argv[1:]
n = 0
for line in sys.stdin:
    request = json.loads(line).get("actionRequest")
    if request is None:
        continue
    n += 1
    if n % 3 == 0:
        if crash:
            sys.exit(3)
        print("oops", flush=True)
        continue
    legal = request["legalActions"]
    ends = [a for a in legal if a["gin"]["kind"] in ("ACTION_KIND_BIG_GIN", "ACTION_KIND_KNOCK")]
    print(json.dumps({"action": {"action": (ends or legal)[0]}}), flush=True)
"""


def _bots(folder: Path, on_error: str) -> list[str]:
    """``--bot`` arguments: greedy first (the gauntlet's own bot), then the failing bots."""
    (folder / "buggy.py").write_text(PY_BOT)
    (folder / "stdio_bot.py").write_text(STDIO_BOT)
    flag = f" --on-error {on_error}"
    bots = [
        "name=greedy", 'cmd={python} -m sample_bots.greedy_bot',
        "name=buggy-py", f"cmd={{python}} {folder / 'buggy.py'}{flag}",
        "name=stdio-garbage",
        f"cmd={{python}} -m sample_bots.stdio_bridge{flag} -- {{python}} {folder / 'stdio_bot.py'}",
    ]
    if on_error == "fault":  # a program that exits resigns whatever the option
        bots += ["name=stdio-crash", f"cmd={{python}} -m sample_bots.stdio_bridge -- {{python}} "
                 f"{folder / 'stdio_bot.py'} crash"]
    if HAS_JS:
        (folder / "buggy.js").write_text(JS_BOT % {"bot": json.dumps(str(JS_DIR / "bot.js")),
                                                   "strategy": json.dumps(str(JS_DIR / "strategy.js"))})
        bots += ["name=buggy-js", f"cmd=node {folder / 'buggy.js'}{flag}"]
    out: list[str] = []
    for i in range(0, len(bots), 2):
        out += ["--bot", bots[i], bots[i + 1]]
    return out


def _tournament(folder: Path, on_error: str) -> tuple[Path, dict[str, object]]:
    run = folder / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "proto")])}
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", "--format", "gauntlet", "--games", "2",
         "--rules", "short", "--tc", "st=10", "--concurrency", "2", "--out", str(run), *_bots(folder, on_error)],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return run, json.loads((run / "results.json").read_text())


def _audit(path: Path) -> None:
    """``arena audit`` of one replay (results.json names replays relative to the run folder)."""
    out = subprocess.run([sys.executable, "-m", "arena.cli", "audit", str(path)], capture_output=True, text=True,
                         timeout=RUN_HANG_S)
    assert out.returncode == 0, out.stdout + out.stderr


def _report(run: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "arena.cli", "report", str(run)], capture_output=True, text=True,
                         timeout=RUN_HANG_S)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


EXPECTED_FAULT = {
    "buggy-py": "gave up: ValueError: bad card",
    "buggy-js": "gave up: TypeError: bad card",
    "stdio-garbage": "gave up: stdio protocol error: the answer to request",
    "stdio-crash": "gave up: the program exited with code 3 before answering request",
}


def test_a_bot_whose_code_fails_loses_by_a_bot_error_fault_that_says_why(tmp_path: Path) -> None:
    run, results = _tournament(tmp_path, "fault")
    games = results["games"]
    assert isinstance(games, list)
    failing = {p for g in games for p in g["players"]} - {"greedy"}
    assert failing == set(EXPECTED_FAULT) - ({"buggy-js"} if not HAS_JS else set())
    for g in games:
        bad = next(p for p in g["players"] if p != "greedy")
        seat = g["players"].index(bad)
        assert g["termination"] == "bot_error" and g["faulting_seat"] == seat, g
        assert g["winner"] == "greedy" and EXPECTED_FAULT[bad] in g["detail"], g
        assert "the traceback's other lines" not in g["detail"]  # only the exception's last line
        assert g["fallbacks"] == [0, 0]
    standings = {s["bot"]: s for s in results["standings"]}  # type: ignore[attr-defined]
    assert {b: s["faults"] for b, s in standings.items()} == {"greedy": 0, **{b: 2 for b in failing}}
    listed = results["faults"]
    assert isinstance(listed, list) and sorted(f["bot"] for f in listed) == sorted(2 * list(failing))
    assert all(f["termination"] == "bot_error" and EXPECTED_FAULT[f["bot"]] in f["detail"] for f in listed)
    # the bot's own log has the whole traceback
    assert "Traceback" in (run / "logs" / "buggy-py.log").read_text()
    # the store keeps it; `arena report` shows the fault list from the store
    with sqlite3.connect(run / "run.sqlite") as db:
        stored = db.execute("SELECT termination, detail FROM games WHERE status = 'done'").fetchall()
    assert len(stored) == len(games) and all(t == "bot_error" for t, _ in stored)
    text = _report(run)
    assert "Faults:" in text and "ValueError: bad card" in text and "bot_error" in text
    # the replay re-runs to the same bytes (the fault included)
    _audit(run / next(g["replay_path"] for g in games if "buggy-py" in g["players"]))
    _audit(run / next(g["replay_path"] for g in games if "stdio-crash" in g["players"]))


def test_with_on_error_fallback_games_finish_and_the_referee_counts_the_fallbacks(tmp_path: Path) -> None:
    run, results = _tournament(tmp_path, "fallback")
    games = results["games"]
    assert isinstance(games, list)
    per_bot: dict[str, int] = {}
    for g in games:
        assert g["termination"] == "normal", g
        for seat, name in enumerate(g["players"]):
            per_bot[name] = per_bot.get(name, 0) + g["fallbacks"][seat]
    standings = {s["bot"]: s for s in results["standings"]}  # type: ignore[attr-defined]
    assert per_bot["greedy"] == 0 and standings["greedy"]["fallbacks"] == 0
    failing = set(per_bot) - {"greedy"}
    assert failing == {"buggy-py", "stdio-garbage"} | ({"buggy-js"} if HAS_JS else set())
    for bot in failing:  # every third answer of each game fell back
        assert per_bot[bot] > 0 and standings[bot]["fallbacks"] == per_bot[bot], (bot, per_bot)
        assert standings[bot]["faults"] == 0
    with sqlite3.connect(run / "run.sqlite") as db:
        stored = dict(db.execute("SELECT bot, SUM(fallbacks) FROM game_seats GROUP BY bot").fetchall())
    assert stored == per_bot
    text = _report(run)
    header = next(line for line in text.splitlines() if line.lstrip().startswith("#") and "fallbacks" in line)
    assert header.split()[-1] == "fallbacks"
    _audit(run / next(g["replay_path"] for g in games if "buggy-py" in g["players"]))


@pytest.mark.skipif(not HAS_JS, reason="node or sample_bots/js/node_modules missing")
def test_the_js_bot_refuses_a_bad_on_error() -> None:
    out = subprocess.run(["node", str(JS_DIR / "bot.js"), "--token", "t", "--on-error", "ignore"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--on-error must be one of fault, fallback" in out.stderr
