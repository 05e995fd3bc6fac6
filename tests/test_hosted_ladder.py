"""The hosted server's continuous ladder (issue 20), with real processes: ``arena serve --ladder``
and three registered bots, each its own process connecting with its own token (the sample greedy
bot through the kit with ``--matches 0``, and a test bot that crashes mid-match). They play
continuously; a bot killed and started again is paired again; the crashing bot is suspended with
the reason in the registry; the server killed with SIGKILL and started again on its folder and
its port keeps every finished game, and the same bot processes come back by themselves and play on."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio

import referee
from arena.competition.matchmaking import Matchmaking
from arena.hosted.ladder import HostedLadder, HostedLimits, suspension
from arena.hosted.ladder_file import LadderFileError, SuspendRules, load_ladder, parse_ladder
from arena.hosted.registry import BotRegistry
from arena.model.records import Outcome
from arena.store import open_db, record_game
from gin_arena.v2 import bot_pb2
from tests._bots import Client
from tests._wait import RUN_HANG_S, until

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LADDER = """
[[play]]
preset = "short"
tc = "st=2 timemargin=200"
reconnect_grace_ms = 200

[suspend]
crashes = 3
"""


class Server:
    """``arena serve`` on a folder, in its own process."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.dir = tmp / "srv"
        self.proc: subprocess.Popen[str] | None = None
        self.address = ""

    def start(self, port: int = 0) -> None:
        """Start it on ``port`` (0: a free one; the address it took is :attr:`address`)."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--listen", f"127.0.0.1:{port}", "--dir", str(self.dir),
             "--ladder", str(self.tmp / "ladder.toml"), "--limit", "bot_matches_per_minute=600"],
            cwd=self.tmp, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("referee listening on "), line
        self.address = line.split()[3].rstrip(";")

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def db(self) -> sqlite3.Connection:
        conn = sqlite3.connect(f"file:{self.dir / 'serve.sqlite'}?mode=ro", uri=True, timeout=30)
        conn.row_factory = sqlite3.Row
        return conn

    def games(self, bot: str = "", termination: str = "") -> list[sqlite3.Row]:
        sql = ("SELECT g.* FROM games g WHERE (? = '' OR g.idx IN (SELECT game FROM game_seats WHERE bot = ?)) "
               "AND (? = '' OR g.termination = ?) ORDER BY g.idx")
        with self.db() as conn:
            return conn.execute(sql, (bot, bot, termination, termination)).fetchall()

    def state(self, bot: str) -> tuple[str, str]:
        with self.db() as conn:
            row = conn.execute("SELECT state, reason FROM bots WHERE name = ?", (bot,)).fetchone()
        return str(row["state"]), str(row["reason"])

    def log_events(self, event: str) -> list[dict[str, object]]:
        lines = (self.dir / "serve.log").read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if e.get("event") == event]


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=RUN_HANG_S)


IDLE_BACKOFF_MAX_S = "1"
"""The kits' longest wait between reconnections while they have no match (30 s by default): the
restarted server is back within a second or two, and the test need not wait out a long backoff."""


def _greedy_bot(address: str, token: str, name: str) -> subprocess.Popen[str]:
    """The sample greedy bot until stopped (``--matches 0``: it reconnects by itself with backoff)."""
    return subprocess.Popen(
        [sys.executable, "-m", "sample_bots.greedy_bot", "--referee", address, "--token", token, "--matches", "0",
         "--name", name, "--idle-backoff-max", IDLE_BACKOFF_MAX_S],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def _crashing_bot(address: str, token: str) -> subprocess.Popen[str]:
    """A bot that leaves abruptly (exit 4) after three answers: a crash mid-match."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena._testbot", "--referee", address, "--token", token, "--mode", "quit-after",
         "--after", "3", "--matches", "0", "--name", "crashy"],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def test_registered_bots_play_continuously_survive_a_restart_and_a_crasher_is_suspended(
    tmp_path: Path, procs: list[subprocess.Popen[str]],
) -> None:
    (tmp_path / "ladder.toml").write_text(LADDER, encoding="utf-8")
    server = Server(tmp_path)
    server.start()
    assert server.proc is not None
    procs.append(server.proc)
    tokens = {}
    for name in ("alpha", "beta", "crashy"):
        added = _arena("bots", "add", name, "--dir", str(server.dir), cwd=tmp_path)
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip()

    alpha = _greedy_bot(server.address, tokens["alpha"], "alpha")
    beta = _greedy_bot(server.address, tokens["beta"], "beta")
    procs += [alpha, beta]
    until(lambda: len(server.games("alpha", "normal")) >= 4, "alpha and beta playing", alive=server.proc)

    # The crashing bot: started again each time it ends, until the ladder suspends it.
    crashes = 0
    while server.state("crashy")[0] == "enabled":
        crashy = _crashing_bot(server.address, tokens["crashy"])
        procs.append(crashy)
        crashy.wait(timeout=240)  # (it ends by itself: a crash, or its token refused once suspended)
        crashes += crashy.returncode == 4
        assert crashes < 20, "the crashing bot was never suspended"
    state, reason = server.state("crashy")
    assert state == "suspended" and "crashes" in reason and "more than 3" in reason
    own_faults = [g for g in server.games("crashy") if g["termination"] == "disconnected"]
    assert len(own_faults) >= 4
    listed = _arena("bots", "list", "--dir", str(server.dir), "--json", cwd=tmp_path)
    assert "suspended" in listed.stdout.lower() and "crashes" in listed.stdout
    refused = subprocess.run(  # its token is refused now, saying why
        [sys.executable, "-m", "arena._testbot", "--referee", server.address, "--token", tokens["crashy"]],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=RUN_HANG_S)
    assert refused.returncode == 1 and "UNAUTHENTICATED: bot 'crashy' is suspended: " in refused.stderr
    assert "arena bots enable" in refused.stderr
    assert server.log_events("bot_suspended")[0]["bot"] == "crashy"

    # One bot leaves (killed) and comes back: it is paired again.
    beta.kill()
    beta.wait(timeout=30)
    until(lambda: any(e.get("bot") == "beta" for e in server.log_events("bot_offline")), "beta offline")
    before = len(server.games("beta"))
    beta = _greedy_bot(server.address, tokens["beta"], "beta")
    procs.append(beta)
    until(lambda: len(server.games("beta", "normal")) >= before + 2, "beta paired again", alive=beta)

    # The server killed and started again on its folder and its port: every finished game kept;
    # the same bot processes, left running, reconnect by themselves and play on.
    bots = {"alpha": alpha, "beta": beta}
    pids = {name: bot.pid for name, bot in bots.items()}
    port = server.port
    online_before = len(server.log_events("bot_online"))
    server.kill()
    kept = {g["match_id"]: g["replay_hash"] for g in server.games()}
    server.start(port)
    procs.append(server.proc)
    assert server.port == port

    def played_after_restart(name: str) -> list[sqlite3.Row]:
        return [g for g in server.games(name) if g["match_id"] not in kept and g["termination"] == "normal"]

    until(lambda: all(len(played_after_restart(name)) >= 2 for name in bots), "the same bots playing after the "
          "restart", alive=server.proc)
    assert {name: bot.pid for name, bot in bots.items()} == pids
    assert all(bot.poll() is None for bot in bots.values())  # never restarted: they came back by themselves
    back = {e.get("bot") for e in server.log_events("bot_online")[online_before:]}
    assert {"alpha", "beta"} <= back, back  # (the log file goes on across the restart)
    after = {g["match_id"]: g["replay_hash"] for g in server.games()}
    assert all(after.get(m) == h for m, h in kept.items())  # every finished game still there, unchanged
    interrupted = [g for g in server.games() if g["termination"] == "interrupted"]
    assert all(g["match_id"] not in kept for g in interrupted)  # the one running at the kill, recorded now

    # Duplicate deals: the games of a pair share a seed, with the seats swapped.
    with server.db() as conn:
        seats = {(r["game"], r["seat"]): r["bot"] for r in conn.execute("SELECT * FROM game_seats")}
        pairs: dict[str, list[sqlite3.Row]] = {}
        for g in conn.execute("SELECT * FROM games WHERE pair_key != '' AND termination = 'normal'"):
            pairs.setdefault(g["pair_key"], []).append(g)
    full = [legs for legs in pairs.values() if len(legs) == 2]
    assert full
    for a, b in full:
        assert a["seed"] == b["seed"] and {a["leg"], b["leg"]} == {0, 1}
        for leg in (a, b):  # a match seen starting has when and how long (those from before the kill too)
            assert leg["started_at"] is not None and leg["finished_at"] >= leg["started_at"]
            assert leg["duration"] > 0
        assert (seats[a["idx"], 0], seats[a["idx"], 1]) == (seats[b["idx"], 1], seats[b["idx"], 0])
    for event in ("pairing", "match_finished", "bot_online", "bot_offline"):
        assert server.log_events(event), event


@pytest.mark.parametrize(("text", "said"), [
    ("[[play]]\npreset = 'nonsense'\n", "play[0]"),
    ("[[play]]\nseats = 9\n", "seats 9"),
    ("[[play]]\ntc = 'what'\n", "play[0]"),
    ("pairing = 'elo'\n", "pairing must be one of least-met, random"),
    ("pairing_wave_ms = -1\n", "pairing_wave_ms must be an integer >= 0"),
    ("pairing_band = 2\n", "pairing_band must be a number above 0 and at most 1"),
    ("colour = 1\n", "unknown key colour"),
    ("[suspend]\nwindow = 0\n", "window >= 1"),
    ("[suspend]\nwhatever = 0\n", "suspend: unknown key whatever"),
    ("[[play]\n", "--ladder"),
    ('raters = ["elo", "nope"]\n', "rater must be one of"),
    ('raters = ["elo", "elo"]\n', "each rater once"),
    ('raters = "elo"\n', "raters must be an array"),
])
def test_a_bad_ladder_file_is_one_clear_error(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "ladder.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LadderFileError, match=r"--ladder .*ladder\.toml") as e:
        load_ladder(path)
    assert said in str(e.value)


def test_the_default_ladder_and_a_bad_one_on_the_command_line(tmp_path: Path) -> None:
    default = load_ladder(None)
    assert len(default.plays) == 1 and default.plays[0].seats == 2 and default.pairing.rule == "least-met"
    assert parse_ladder({"pairing": "fewest-games"}).pairing.rule == "least-met"  # (a file from before)
    assert parse_ladder({"pairing": "random", "pairing_wave_ms": 0}).pairing == Matchmaking("random", wave_ms=0)
    assert default.raters == ()
    assert parse_ladder({"raters": ["glicko2", "openskill"]}).raters == ("glicko2", "openskill")
    (tmp_path / "bad.toml").write_text("pairing = 'elo'\n", encoding="utf-8")
    bad = _arena("serve", "--listen", "127.0.0.1:0", "--dir", "srv", "--ladder", "bad.toml", cwd=tmp_path)
    assert bad.returncode == 2 and "pairing must be one of" in bad.stderr
    bad_limit = _arena("serve", "--listen", "127.0.0.1:0", "--dir", "srv", "--limit", "bot_matches_per_minute=x",
                       cwd=tmp_path)
    assert bad_limit.returncode == 2 and "bot_matches_per_minute" in bad_limit.stderr


def _store(tmp_path: Path, results: Sequence[tuple[str, int | None]], detail: str = "") -> sqlite3.Connection:
    """A server database with games of ``slow`` (seat 0) against ``fine``: each ends with the
    termination given and the faulting seat (``None``: no fault), and ``detail``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = open_db(tmp_path / "serve.sqlite", "serve")
    for i, (termination, faulting) in enumerate(results):
        winner = None if faulting is None else 1 - faulting
        record_game(db, {}, Outcome(f"m{i}", ("slow", "fine"), winner, termination, faulting, detail, (0, 0), (0, 0),
                                    None, 1, (0, 0), (), "", "", "", places=(1, 1) if winner is None else
                                    (2 - winner, 1 + winner)))
    return db


def test_suspension_counts_its_own_faults_in_its_last_games(tmp_path: Path) -> None:
    rules = SuspendRules(crashes=3, time_loss_share=0.10, window=50, min_games=10)
    own = [("disconnected", 0), ("crashed", 0), ("bot_error", 0), ("disconnected", 1)]
    db = _store(tmp_path, own + [("normal", None)] * 5)
    assert suspension(db, "slow", rules) is None  # three of its own: not more than 3
    assert suspension(db, "fine", rules) is None
    db = _store(tmp_path / "b", [("disconnected", 0)] * 4)
    assert "4 crashes" in (suspension(db, "slow", rules) or "")
    assert suspension(db, "slow", SuspendRules(window=3)) is None  # only its last 3 count
    losses = [("time_forfeit", 0)] * 2 + [("normal", None)] * 7
    assert suspension(_store(tmp_path / "c", losses), "slow", rules) is None  # 9 games: under min_games
    db = _store(tmp_path / "d", [*losses, ("normal", None)] * 1)
    assert "2 time losses in its last 10 games: over 10%" in (suspension(db, "slow", rules) or "")
    db = _store(tmp_path / "e", [("time_forfeit", 0)] + [("normal", None)] * 9)
    assert suspension(db, "slow", rules) is None  # 1 of 10 is not over 10%


def test_suspension_does_not_count_a_bot_that_said_goodbye(tmp_path: Path) -> None:
    """A bot stopped by its operator (SIGTERM: the kit resigns with a goodbye, or it closes its
    stream cleanly and does not come back) is no crash; the same faults without the goodbye are."""
    rules = SuspendRules(crashes=3, time_loss_share=0.10, window=50, min_games=10)
    resigned = _store(tmp_path / "a", [("bot_error", 0)] * 5, "seat 0 (slow) said goodbye: goodbye: stopped by SIGTERM")
    assert suspension(resigned, "slow", rules) is None
    closed = _store(tmp_path / "b", [("disconnected", 0)] * 5,
                    "seat 0 said goodbye (its bot closed its stream) and did not come back within 5000 ms")
    assert suspension(closed, "slow", rules) is None
    broke = _store(tmp_path / "c", [("disconnected", 0)] * 5,
                   "seat 0 disconnected and did not come back within 5000 ms")
    assert "5 crashes" in (suspension(broke, "slow", rules) or "")
    failed = _store(tmp_path / "d", [("bot_error", 0)] * 5, "seat 0 (slow) gave up: ValueError: said goodbye")
    assert "5 crashes" in (suspension(failed, "slow", rules) or "")


def test_the_ladder_stores_its_raters_for_the_web(tmp_path: Path) -> None:
    """The ladder file's ``raters`` reach the live standings through the store (the web reads them
    there, whatever process it runs in); a ladder file without them brings back the default."""
    from arena.store import live_raters

    registry = BotRegistry(open_db(tmp_path / "serve.sqlite", "serve"))
    try:
        HostedLadder(registry, parse_ladder({"raters": ["glicko2", "openskill"]}))
        assert live_raters(registry.db) == ("glicko2", "openskill")
        HostedLadder(registry, parse_ladder({}))  # (the next start of the server, without them)
        assert live_raters(registry.db) == ()
    finally:
        registry.db.close()


def test_the_ladder_pairs_bots_that_declare_the_preset_within_their_rate_limit(tmp_path: Path) -> None:
    """In one process, a real referee and gRPC sessions: the ladder seats only bots whose hello
    names the preset (or none), and ``bot_matches_per_minute`` holds back the pair's second game."""
    registry = BotRegistry(open_db(tmp_path / "serve.sqlite", "serve"))
    tokens = {name: registry.add(name) for name in ("a", "b", "c")}
    ladder = HostedLadder(registry, parse_ladder({"play": [{"preset": "short", "tc": "st=5"}], "pairing_wave_ms": 0}),
                          HostedLimits(bot_matches_per_minute=1))
    presets = {"a": [], "b": ["gin/short"], "c": ["gin/classic"]}

    async def main() -> None:
        async with referee.open_referee(bot_directory=ladder.directory) as ref, trio.open_nursery() as nursery:
            for name, token in tokens.items():
                hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(
                    bot_name=name, token=token, protocol_version=2, max_concurrent_matches=4,
                    presets=presets[name]))
                nursery.start_soon(referee.aio, Client(ref.address, token).play(None, first=hello))
            seen = 0
            while len(ref.presence()) < 3:
                seen = await ref.wait_presence(seen)
            wake = ladder.pair(ref)
            assert [t.spec.seat_bots for t in ref.tables.values()] in ([("a", "b")], [("b", "a")])
            assert wake < math.inf  # it looks again when the minute is over
            assert ladder.pair(ref) < math.inf and len(ref.tables) == 1  # nothing more meanwhile
            nursery.cancel_scope.cancel()

    referee.run(main)
