"""The local ladder (add, run, show, remove; least-played pairs first; ratings from every stored
game), and the remote setup: `arena serve` as a standalone referee, `arena tournament --referee`,
and a remote bot that connects by itself with the token the arena hands out."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.cli import main as arena_main
from referee import DEFAULT_GAME, games
from tests._wait import HANG_S, until


def arena(*args: str, timeout: float = HANG_S) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` as a process of its own (a run: bots, a referee, a trio run)."""
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def book(capsys: pytest.CaptureFixture[str]) -> Book:
    return Book(capsys)


class Book:
    """The ladder's bookkeeping commands (add, show, runs, drop, remove: no bot plays, nothing is
    waited on) through the same ``arena`` entry point, in this process: a process of its own
    spends seconds importing, and a test of the ladder makes a score of these calls."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.capsys.readouterr()
        try:
            code = arena_main(list(args))
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 2
        said = self.capsys.readouterr()
        return subprocess.CompletedProcess(["arena", *args], code, said.out, said.err)


def pairs_played(db: Path) -> Counter[frozenset[str]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT group_concat(bot, '|') FROM game_seats GROUP BY game").fetchall()
        return Counter(frozenset(r[0].split("|")) for r in rows)
    finally:
        conn.close()


def test_ladder(tmp_path: Path, book: Book) -> None:
    db = tmp_path / "lad" / "ladder.sqlite"
    opts = ["--db", str(db)]
    out = book("ladder", "show", *opts)
    assert out.returncode == 0 and "No ladder" in out.stdout
    assert book("ladder", "add", "alpha", "--command", "{python} -m arena._testbot", *opts).returncode == 0
    out = book("ladder", "add", "beta", *opts, "--", "{python}", "-m", "arena._testbot", "--mode", "first")
    assert out.returncode == 0, out.stderr
    (tmp_path / "m.toml").write_text('[[bot]]\nname = "gamma"\ncommand = ["{python}", "-m", "arena._testbot"]\n')
    assert book("ladder", "add", "--manifest", str(tmp_path / "m.toml"), *opts).returncode == 0
    dup = book("ladder", "add", "alpha", "--command", "{python} -m arena._testbot", *opts)
    assert dup.returncode == 2 and "already on the ladder" in dup.stderr

    play = ["--rules", "short", "--tc", "st=1 timemargin=100", "--concurrency", "3"]
    out = arena("ladder", "run", "--games", "4", *play, *opts)
    assert out.returncode == 0, out.stderr
    first = pairs_played(db)
    assert sum(first.values()) == 4 and len(first) == 2 and set(first.values()) == {2}  # two pairs of games
    out = arena("ladder", "run", "--games", "2", *play, *opts)
    assert out.returncode == 0, out.stderr
    after = pairs_played(db)
    assert len(after) == 3 and set(after.values()) == {2}, after  # the least-played pair came next

    out = book("ladder", "show", "--json", *opts)
    shown = json.loads(out.stdout)
    assert {r["bot"] for r in shown["ratings"]} == {"alpha", "beta", "gamma"}
    assert abs(sum(r["elo"] for r in shown["ratings"])) < 1.0  # centred
    assert sum(s["games"] for s in shown["standings"]) == 2 * 6
    text = book("ladder", "show", *opts).stdout
    assert "6 games" in text and "LOS vs next" in text
    # The standings engine the hosted server uses (arena.results.standings): openskill with its
    # uncertainty, provisional below 20 rated games, each bot's state.
    skill = {s["bot"]: s for s in shown["skill"]}
    assert set(skill) == {"alpha", "beta", "gamma"} and sum(s["games"] for s in skill.values()) == 2 * 6
    assert all(s["provisional"] and s["uncertainty"] > 0 and s["state"] == "enabled" for s in skill.values())
    assert "rating" in text and "? provisional" in text

    assert book("ladder", "remove", "gamma", *opts).returncode == 0
    out = arena("ladder", "run", "--games", "2", *play, *opts)
    assert out.returncode == 0, out.stderr
    assert sum(pairs_played(db).values()) == 8
    assert pairs_played(db)[frozenset(("alpha", "beta"))] == 4
    assert "(removed)" in book("ladder", "show", *opts).stdout
    removed = json.loads(book("ladder", "show", "--json", *opts).stdout)["skill"]
    assert {s["bot"]: s["state"] for s in removed}["gamma"] == "removed"
    runs = list((db.parent / "ladder-runs").iterdir())
    assert len(runs) == 3 and all((r / "replays").is_dir() for r in runs)

    # The ladder's runs, and dropping one run's games or every game of a bot.
    listed = json.loads(book("ladder", "runs", "--json", *opts).stdout)
    assert [r["games"] for r in listed] == [4, 2, 2]
    assert listed[2]["bots"] == ["alpha", "beta"]
    assert listed[0]["run"] in book("ladder", "runs", *opts).stdout
    out = book("ladder", "drop", "--run", listed[2]["run"], *opts)
    assert out.returncode == 0 and "2 game(s) deleted" in out.stdout, out.stderr
    assert sum(pairs_played(db).values()) == 6
    assert book("ladder", "drop", "--run", "no-such-run", *opts).returncode == 2
    out = book("ladder", "drop", "--bot", "gamma", *opts)
    assert out.returncode == 0 and "dropped 4 game(s) of gamma" in out.stdout, out.stderr
    assert set(pairs_played(db)) == {frozenset(("alpha", "beta"))}
    shown = json.loads(book("ladder", "show", "--json", *opts).stdout)
    assert {r["bot"] for r in shown["ratings"]} == {"alpha", "beta"}
    # Which of the first two runs played alpha-beta is chance; the other one's games all had gamma.
    assert sorted(r["games"] for r in json.loads(book("ladder", "runs", "--json", *opts).stdout)) == [0, 2]


def test_ladder_refuses_a_bot_that_cannot_start(tmp_path: Path, book: Book) -> None:
    """The README's old example: `python -m …` with a `python` that cannot import the bot made every
    game crash; now the bot is refused at `add` with the reason, and nothing is stored."""
    db = tmp_path / "ladder.sqlite"
    out = book("ladder", "add", "ghost", "--command", "no-such-program-here --x", "--db", str(db))
    assert out.returncode == 2 and "'no-such-program-here' is not found" in out.stderr
    out = book("ladder", "add", "lost", "--command", f"{sys.executable} -m no_such_module_anywhere", "--db", str(db))
    assert out.returncode == 2 and "cannot import 'no_such_module_anywhere'" in out.stderr, out.stderr
    # The module is there but what it imports is not (grpc outside the venv, say): found without running it.
    (tmp_path / "mybot.py").write_text("import no_such_dependency_xyz\nraise SystemExit('the bot ran')\n")
    out = book("ladder", "add", "needy", "--command", "{python} -m mybot", "--cwd", str(tmp_path), "--db", str(db))
    assert out.returncode == 2 and "missing: no_such_dependency_xyz" in out.stderr, out.stderr
    out = book("ladder", "add", "--bot", 'name=fine cmd="{python} -m arena._testbot" tc=st=0.5', "--db", str(db))
    assert out.returncode == 0, out.stderr
    conn = sqlite3.connect(db)
    try:
        specs = [json.loads(r[0]) for r in conn.execute("SELECT spec FROM bots")]
    finally:
        conn.close()
    assert [(s["name"], s["tc"]) for s in specs] == [("fine", {"per_move_ms": 500})]  # TimeControl.to_dict

    # A bot that starts but crashes in every game: the run says so and how to undo it.
    assert book("ladder", "add", "crasher", "--db", str(db), "--", "{python}", "-m", "arena._testbot",
                 "--mode", "crash").returncode == 0
    out = arena("ladder", "run", "--games", "2", "--rules", "short", "--tc", "st=1", "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert "warning: crasher crashed or never connected in every game it played" in out.stdout
    run_id = json.loads(book("ladder", "runs", "--json", "--db", str(db)).stdout)[0]["run"]
    assert f"arena ladder drop --run {run_id}" in out.stdout
    assert book("ladder", "drop", "--bot", "crasher", "--db", str(db)).returncode == 0
    assert sum(pairs_played(db).values()) == 0


def test_serve_remote_referee_and_remote_bot(tmp_path: Path) -> None:
    # Port 0: the server takes a free port itself and says which. (A port found free beforehand
    # could be taken by another test meanwhile, and gRPC servers share a port with SO_REUSEPORT.)
    serve = subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir",
                              str(tmp_path / "srv")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bot: subprocess.Popen[str] | None = None
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()
        listening = re.search(r"referee listening on (127\.0\.0\.1:[1-9][0-9]*)", line)
        assert listening is not None, line
        address = listening.group(1)
        (tmp_path / "bots.toml").write_text(
            '[[bot]]\nname = "local"\ncommand = ["{python}", "-m", "arena._testbot"]\n\n'
            '[[bot]]\nname = "visitor"\nremote = true\n')
        run = tmp_path / "run"
        tour = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(tmp_path / "bots.toml"), "--games", "2",
             "--rules", "short", "--tc", "st=1", "--referee", address, "--out", str(run),
             "--operator-token-file", str(tmp_path / "srv" / "operator-token")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tokens = run / "remote-tokens.txt"
        until(tokens.exists, "the run's remote-tokens.txt", alive=tour)
        line = next(x for x in tokens.read_text().splitlines() if x.startswith("visitor\t"))
        token = line.split("\t")[1]
        bot = subprocess.Popen([sys.executable, "-m", "arena._testbot", "--referee", address, "--token", token,
                                "--name", "visitor", "--matches", "2"], stderr=subprocess.PIPE, text=True)
        out, err = tour.communicate(timeout=HANG_S)
        assert tour.returncode == 0, err
        assert f"--token {token}" in out
        assert bot.wait(timeout=HANG_S) == 0
        results = json.loads((run / "results.json").read_text())
        assert results["games_played"] == 2
        assert all(g["termination"] == "normal" for g in results["games"])
        # each finished replay is fetched from the remote referee into the run folder (GetReplay)
        assert all((run / g["replay_path"]).parent == run / "replays" for g in results["games"])
        assert arena("audit", str(run)).returncode == 0

        def recorded() -> int:  # `arena serve` records a game once it is over, on its own time
            conn = sqlite3.connect(tmp_path / "srv" / "serve.sqlite")
            try:
                return int(conn.execute("SELECT COUNT(*) FROM games WHERE termination = 'normal'").fetchone()[0])
            finally:
                conn.close()

        until(lambda: recorded() >= 2, "arena serve recording both games", alive=serve)
        assert recorded() == 2
        # serve recorded them from the referee's match events: the game, its rules through the game,
        # the time control in its canonical form
        conn = sqlite3.connect(tmp_path / "srv" / "serve.sqlite")
        try:
            rows = conn.execute("SELECT game, rules, time_control FROM games").fetchall()
        finally:
            conn.close()
        assert {(game, tc) for game, _, tc in rows} == {(DEFAULT_GAME, '{"per_move_ms":1000}')}
        engine = games.get(DEFAULT_GAME).game
        assert all(engine.rules_from_dict(json.loads(r)) == engine.rules_preset("short") for _, r, _ in rows)
    finally:
        if bot is not None and bot.poll() is None:
            bot.kill()
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=15)
        finally:
            if serve.poll() is None:
                serve.kill()
    assert serve.returncode == 0
