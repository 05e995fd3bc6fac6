"""The games a duplicate group of the hosted ladder still owes when the server is killed: played
first after the restart, on the group's deals, without revealing its seed. With real processes
(``arena serve`` killed with SIGKILL and started again on its folder, two registered bots): a
group cut after its first game is completed, its games' decks are those of its first game, as a
group played in one go has them; in one process with a real store and referee, the owed games
an earlier run's store holds become the first matches, their seats rotated, their seed withheld;
and the live web shows no game's replay or seed while its group still has games to play."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import trio

import referee
from arena.hosted.ladder import HostedLadder, HostedLimits
from arena.hosted.ladder_file import parse_ladder
from arena.hosted.owed import owed_games, record_run
from arena.hosted.registry import BotRegistry
from arena.model.records import Outcome
from arena.store import open_db, play_columns, record_game
from gin_arena.v2 import bot_pb2
from tests._bots import Client
from tests._wait import HANG_S, until
from tests._web import fetch, served

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LADDER = """
[[play]]
preset = "short"
tc = "st=5 timemargin=500"
reconnect_grace_ms = 200
"""


class _Server:
    """``arena serve --ladder`` on a folder, in its own process, one match per bot at a time (so
    a group's games follow one another and a kill falls between or inside them)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.dir = tmp / "srv"
        self.proc: subprocess.Popen[str] | None = None
        self.address = ""

    def start(self) -> subprocess.Popen[str]:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(self.dir),
             "--ladder", str(self.tmp / "ladder.toml"), "--limit", "bot_concurrent_matches=1",
             "--limit", "bot_matches_per_minute=600"],
            cwd=self.tmp, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("referee listening on "), line
        self.address = line.split()[3].rstrip(";")
        return self.proc

    def games(self) -> list[sqlite3.Row]:
        conn = sqlite3.connect(f"file:{self.dir / 'serve.sqlite'}?mode=ro", uri=True, timeout=30)
        conn.row_factory = sqlite3.Row
        try:
            return conn.execute(
                "SELECT g.*, (SELECT group_concat(bot, '|') FROM (SELECT bot FROM game_seats s WHERE s.game = g.idx "
                "ORDER BY s.seat)) AS seats FROM games g ORDER BY g.idx").fetchall()
        finally:
            conn.close()


def _bot(server: _Server, token: str, name: str, seen: Path) -> subprocess.Popen[str]:
    """A test bot that thinks 0.05 s a move (a game lasts seconds: the kill falls inside one) and
    writes down every seed its matches reveal to it."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena._testbot", "--referee", server.address, "--token", token, "--mode", "slow",
         "--delay", "0.05", "--matches", "0", "--name", name, "--seen", str(seen)],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


def _decks(row: sqlite3.Row) -> dict[tuple[int, int], str]:
    """A game's deal digests: SHA-256 of each deal's deck, by (game, deal) within the match."""
    out = {}
    for line in Path(row["replay_path"]).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "deal":
            out[int(record["game"]), int(record["deal"])] = hashlib.sha256(
                json.dumps(record["deck"]).encode()).hexdigest()
    assert out, f"no deal in {row['replay_path']}"
    return out


def _same_deals(a: sqlite3.Row, b: sqlite3.Row) -> None:
    da, db = _decks(a), _decks(b)
    common = set(da) & set(db)
    assert (1, 1) in common and all(da[k] == db[k] for k in common), (a["match_id"], b["match_id"])


def test_a_group_cut_by_a_kill_is_completed_after_the_restart_on_its_deals(
    tmp_path: Path, procs: list[subprocess.Popen[str]],
) -> None:
    (tmp_path / "ladder.toml").write_text(LADDER, encoding="utf-8")
    server = _Server(tmp_path)
    procs.append(server.start())
    tokens = {}
    for name in ("alpha", "beta"):
        added = subprocess.run([sys.executable, "-m", "arena.cli", "bots", "add", name, "--dir", str(server.dir)],
                               cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=HANG_S)
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip()
    seen = tmp_path / "seen.txt"
    bots = [_bot(server, tokens[n], n, seen) for n in tokens]
    procs += bots

    def done(key: str) -> list[sqlite3.Row]:
        return [g for g in server.games() if g["pair_key"] == key and g["termination"] not in (None, "interrupted")]

    # The first group in one go; the second cut after its first game (its second one running or next).
    until(lambda: len(done(server.games()[0]["pair_key"])) == 2 if server.games() else False,
          "a group played in one go", alive=server.proc)
    whole = server.games()[0]["pair_key"]
    second = whole[: -5] + f"{int(whole[-5:]) + 1:05d}"
    until(lambda: len(done(second)) == 1, "the second group's first game", alive=server.proc)
    assert server.proc is not None
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=30)
    for bot in bots:
        bot.kill()
        bot.wait(timeout=30)
    (first,) = done(second)
    kept = {g["match_id"] for g in server.games()}

    procs.append(server.start())
    bots = [_bot(server, tokens[n], n, seen) for n in tokens]
    procs += bots
    until(lambda: len(done(second)) == 2, "the cut group completed after the restart", alive=server.proc)
    new = [g for g in server.games() if g["match_id"] not in kept and g["termination"] != "interrupted"]
    owed = next(g for g in done(second) if g["idx"] != first["idx"])
    assert new[0]["idx"] == owed["idx"]  # played first, before any new group
    assert owed["match_id"].startswith(f"{second}-l{1 - first['leg']}-r") and owed["leg"] == 1 - first["leg"]
    assert owed["seed"] == first["seed"] and owed["termination"] == "normal"
    assert owed["seats"].split("|") == first["seats"].split("|")[::-1]  # the seats swapped
    _same_deals(first, owed)  # on the group's deals, as a group played in one go has them:
    a, b = done(whole)
    _same_deals(a, b)
    assert set(_decks(a).values()).isdisjoint(_decks(first).values())  # (another group: other deals)
    conn = open_db(server.dir / "serve.sqlite", "serve")
    try:
        assert [g.pair_key for g in owed_games(conn, before_run="", duplicate_default=True)
                if g.pair_key in (whole, second)] == []  # nothing owed by either any more
    finally:
        conn.close()

    # No game of a group told its seats the seed (the bot that writes down revealed seeds saw none).
    revealed = [line.split() for line in seen.read_text(encoding="utf-8").splitlines()]
    assert revealed and all(len(parts) == 2 or parts[1] == "" for parts in revealed), revealed
    assert any(parts[0] == owed["match_id"] for parts in revealed)


def test_the_owed_games_of_an_earlier_run_are_the_first_matches(tmp_path: Path) -> None:
    """A store holding an earlier run's group: its game 1 played, game 0 interrupted (owed), and a
    lone game's group of a run without duplicate deals (owes nothing). The new ladder's first
    matches are the owed games — with the group's seed, the seats of each rotation, the seed
    withheld, ids the stored ones' with ``-r`` and the new run — before any new table."""
    db = open_db(tmp_path / "serve.sqlite", "serve")
    registry = BotRegistry(db)
    tokens = {name: registry.add(name) for name in ("a", "b", "c")}
    config = parse_ladder({"play": [{"preset": "short", "tc": "st=5"}], "pairing_wave_ms": 0})  # (no wave to wait)
    play = config.plays[0].play
    seed = bytes(range(32))
    record_run(db, "hosted-00aa11", True)
    record_run(db, "hosted-00bb22", False)
    columns = play_columns(play.game, play.rules, play.time_control)
    for match_id, players, leg, termination, run in (
            ("hosted-00aa11-p00001-l1", ("b", "a"), 1, "normal", "hosted-00aa11"),
            ("hosted-00aa11-p00002-l0", ("a", "c"), 0, "interrupted", "hosted-00aa11"),
            ("hosted-00bb22-p00001-l0", ("c", "b"), 0, "interrupted", "hosted-00bb22")):
        key = match_id.rsplit("-l", 1)[0]
        record_game(db, {**columns, "run": run, "pair": int(key[-5:]), "leg": leg, "pair_key": key,
                         "seed": seed.hex(), "pairing": "|".join(sorted(players))},
                    Outcome(match_id, players, 0, termination, None, "", (0, 0), (0, 0), None, 1, (0, 0), (), "", "",
                            "", places=(1, 2)))
    ladder = HostedLadder(registry, config, HostedLimits())
    new = ladder.run_id.removeprefix("hosted-")

    async def main() -> None:
        async with referee.open_referee(bot_directory=ladder.directory) as ref, trio.open_nursery() as nursery:
            for name, token in tokens.items():
                hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name=name, token=token, protocol_version=2,
                                                               max_concurrent_matches=2))
                nursery.start_soon(referee.aio, Client(ref.address, token).play(None, first=hello))
            seen = 0
            while len(ref.presence()) < 3:
                seen = await ref.wait_presence(seen)
            ladder.pair(ref)
            specs = [t.spec for t in ref.tables.values()]
            assert [(s.match_id, s.seat_bots) for s in specs[:2]] == [  # the owed games first,
                (f"hosted-00aa11-p00001-l0-r{new}", ("a", "b")), (f"hosted-00aa11-p00002-l0-r{new}", ("a", "c"))]
            assert len(specs) == 3 and specs[2].match_id == f"{ladder.run_id}-p00001-l0"  # then a new table
            assert sorted(specs[2].seat_bots) == ["b", "c"]  # (not the owed c, a: a holds its two matches)
            for owed in specs[:2]:
                assert owed.seed == seed and owed.reveal_seed is False
            assert specs[2].seed != seed
            nursery.cancel_scope.cancel()

    referee.run(main)
    owed = owed_games(db, before_run=ladder.run_id, duplicate_default=True)
    assert [(g.pair_key, g.leg, g.players) for g in owed] == [
        ("hosted-00aa11-p00001", 0, ("a", "b")), ("hosted-00aa11-p00002", 0, ("a", "c")),
        ("hosted-00aa11-p00002", 1, ("c", "a"))]
    db.close()


def test_the_web_withholds_a_groups_replays_and_seed_until_the_group_is_over(tmp_path: Path) -> None:
    """Over HTTP (``arena serve``'s web in process): a group's first game finished, its second
    owed — the first one's page is 403 saying why, its API entry has no seed and no replay link;
    once the second is stored, both show their seed and replay. A tournament's pair with a game
    still pending is withheld the same way; a game of no group is shown at once."""
    seed = bytes(range(32)).hex()

    def store(match_id: str, leg: int, players: tuple[str, str], key: str, status: str = "done") -> None:
        db = open_db(tmp_path / "serve.sqlite", "serve")
        try:
            values = {"run": key.rsplit("-p", 1)[0] if key.startswith("hosted-") else "", "leg": leg,
                      "pair_key": key, "seed": seed}
            outcome = Outcome(match_id, players, 0, "normal", None, "", (0, 0), (0, 0), None, 1, (0, 0), (), "", "",
                              seed, places=(1, 2))
            if status == "done":
                record_game(db, values, outcome)
            else:
                with db:
                    db.execute("INSERT INTO games (run, leg, pair_key, seed, status) VALUES ('', ?, ?, ?, ?)",
                               (leg, key, seed, status))
        finally:
            db.close()

    async def main() -> None:
        async with served(tmp_path) as s:
            store("hosted-00aa11-p00001-l0", 0, ("a", "b"), "hosted-00aa11-p00001")
            store("t-g0001", 0, ("a", "b"), "a|b#1")
            store("", 1, ("b", "a"), "a|b#1", status="pending")
            store("lone", 0, ("a", "b"), "")
            for match_id in ("hosted-00aa11-p00001-l0", "t-g0001"):
                page = await fetch(s.url + f"/matches/{match_id}")
                assert page.status == 403 and "still being played" in page.text, match_id
                api = (await fetch(s.url + f"/api/matches/{match_id}")).json()
                assert api["seed"] == "" and api["replay"] is None and "still being played" in api["withheld"]
                assert seed not in page.text and seed not in json.dumps(api)
            lone = (await fetch(s.url + "/api/matches/lone")).json()
            assert lone["seed"] == seed and lone["replay"] == "/matches/lone" and "withheld" not in lone
            store("hosted-00aa11-p00001-l1", 1, ("b", "a"), "hosted-00aa11-p00001")  # the group is over
            # the web's kept reads may be up to view_stale_s behind the store (docs/web.md)
            for _ in range(100):
                over = (await fetch(s.url + "/api/matches/hosted-00aa11-p00001-l0")).json()
                if over["seed"]:
                    break
                await trio.sleep(0.1)
            assert over["seed"] == seed and over["replay"] == "/matches/hosted-00aa11-p00001-l0"
            assert "withheld" not in over

    referee.run(main)
