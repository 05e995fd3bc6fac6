"""Bot registration on a hosted server (issue 20): the registry in ``serve.sqlite``, ``arena bots``,
the operator's ``ArenaService`` and ``arena operator bots``, and TLS off loopback."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.cli.options import is_loopback
from arena.hosted.registry import BOT_STATES, LOOKUP_SQL, BotRegistry, RegistryError
from arena.store import open_db
from gin_arena.v2 import arena_pb2, arena_pb2_grpc
from referee.lowlevel import OPERATOR_TOKEN_ENV, operator_metadata
from tests._wait import HANG_S


def _registry(tmp_path: Path) -> tuple[BotRegistry, sqlite3.Connection]:
    db = open_db(tmp_path / "serve.sqlite", "serve")
    return BotRegistry(db), db


def test_a_registered_bot_is_known_by_its_token_only_while_enabled(tmp_path: Path) -> None:
    reg, db = _registry(tmp_path)
    token = reg.add("alice")
    other = reg.add("bob")
    assert len(token) == 64 and int(token, 16) >= 0 and token != other
    assert reg.identify(token) == "alice" and reg.identify(other) == "bob"
    assert reg.identify("") is None and reg.identify(token[:-1]) is None and reg.identify(token + "0") is None
    reg.disable("alice")
    assert reg.identify(token) is None and reg.get("alice").state == "disabled"  # type: ignore[union-attr]
    reg.enable("alice")
    assert reg.identify(token) == "alice"
    reg.suspend("alice", "4 crashes\nin its last 50 games")
    bot = reg.get("alice")
    assert bot is not None and bot.state == "suspended" and bot.reason == "4 crashes in its last 50 games"
    assert reg.identify(token) is None
    looked = reg.lookup(token)
    assert looked is not None and looked.name == "alice" and looked.state == "suspended"
    reg.enable("alice")  # lifts the suspension
    assert reg.identify(token) == "alice" and reg.get("alice").reason == ""  # type: ignore[union-attr]
    assert {b.state for b in reg.list()} <= set(BOT_STATES)
    assert [b.name for b in reg.list()] == ["alice", "bob"]
    db.close()


def test_rotating_a_token_stops_the_old_one_at_once_even_in_another_process(tmp_path: Path) -> None:
    reg, db = _registry(tmp_path)
    old = reg.add("alice")
    before = reg.get("alice")
    other_db = open_db(tmp_path / "serve.sqlite", "serve")  # another process's connection
    other = BotRegistry(other_db)
    assert other.identify(old) == "alice"
    new = reg.rotate_token("alice")
    assert new != old and other.identify(old) is None and other.identify(new) == "alice"
    after = reg.get("alice")
    assert before is not None and after is not None and after.token_set_at >= before.token_set_at
    reg.disable("alice")
    assert other.identify(new) is None
    other_db.close()
    db.close()


def test_a_token_is_found_through_the_index_not_by_reading_every_bot(tmp_path: Path) -> None:
    _, db = _registry(tmp_path)
    plan = " ".join(str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + LOOKUP_SQL, ("0" * 64,)))
    assert "USING INDEX bots_token" in plan, plan
    db.close()


def test_removing_a_bot_keeps_its_games_and_frees_its_name(tmp_path: Path) -> None:
    reg, db = _registry(tmp_path)
    token = reg.add("alice")
    db.execute("INSERT INTO games (match_id, status) VALUES ('m1', 'done')")
    db.execute("INSERT INTO game_seats (game, seat, bot) VALUES (1, 0, 'alice'), (1, 1, 'bob')")
    assert reg.games_played() == {"alice": 1, "bob": 1}
    reg.remove("alice")
    assert reg.get("alice") is None and reg.identify(token) is None and reg.list() == []
    assert reg.games_played() == {"alice": 1, "bob": 1}
    again = reg.add("alice")
    assert reg.identify(again) == "alice" and reg.identify(token) is None
    db.close()


def test_refusals_are_one_clear_line(tmp_path: Path) -> None:
    reg, db = _registry(tmp_path)
    reg.add("alice")
    cases: list[tuple[Callable[[], object], str, str]] = [
        (lambda: reg.add("alice"), "taken", "already registered"),
        (lambda: reg.add("<script>"), "invalid", "not a valid name"),
        (lambda: reg.add("x" * 41), "invalid", "1 to 40"),
        (lambda: reg.add(""), "invalid", "not a valid name"),
        (lambda: reg.enable("nobody"), "unknown", "no bot named 'nobody'"),
        (lambda: reg.disable("nobody"), "unknown", "no bot named"),
        (lambda: reg.suspend("nobody", "x"), "unknown", "no bot named"),
        (lambda: reg.remove("nobody"), "unknown", "no bot named"),
        (lambda: reg.rotate_token("nobody"), "unknown", "no bot named"),
    ]
    for call, kind, words in cases:
        with pytest.raises(RegistryError) as e:
            call()
        assert e.value.kind == kind and words in str(e.value) and "\n" not in str(e.value)
    reg.suspend("alice", "x" * 1000)
    assert len(reg.get("alice").reason) == 256  # type: ignore[union-attr]
    db.close()


def test_a_bot_name_that_differs_only_in_case_is_taken(tmp_path: Path) -> None:
    reg, db = _registry(tmp_path)
    reg.add("alice")
    for name in ("ALICE", "Alice", "aLiCe"):
        with pytest.raises(RegistryError) as e:
            reg.add(name)
        assert e.value.kind == "taken" and "'alice' is already registered" in str(e.value) and "looks like" in str(
            e.value), name
    assert [b.name for b in reg.list()] == ["alice"]
    # Bots registered before the check keep their names and tokens; a third like them is refused.
    token = reg.add("bob")
    db.execute("INSERT INTO bots (name, spec, token_digest, state) VALUES ('Bob', '{}', 'x', 'enabled')")
    db.commit()
    assert reg.identify(token) == "bob" and reg.get("Bob") is not None
    with pytest.raises(RegistryError):
        reg.add("BOB")
    reg.remove("alice")
    assert reg.identify(reg.add("Alice")) == "Alice"  # (a removed bot's name is free, whatever its case)
    db.close()


def test_the_database_holds_no_token_in_clear(tmp_path: Path) -> None:
    reg, db = _registry(tmp_path)
    tokens = [reg.add("alice"), reg.add("bob")]
    tokens.append(reg.rotate_token("bob"))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("serve.sqlite"))
    assert b"alice" in stored  # the file is readable as it is: the check below could fail
    for token in tokens:
        assert token.encode() not in stored and token.upper().encode() not in stored
        assert bytes.fromhex(token) not in stored


def test_an_older_serve_database_gets_the_registry_columns(tmp_path: Path) -> None:
    path = tmp_path / "serve.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '2'), ('kind', 'serve');"
        "CREATE TABLE bots (name TEXT PRIMARY KEY, position INTEGER NOT NULL DEFAULT 0, spec TEXT NOT NULL, "
        "token TEXT NOT NULL DEFAULT '', active INTEGER NOT NULL DEFAULT 1, added_at REAL NOT NULL DEFAULT 0);"
    )
    conn.close()
    reg, db = _registry(tmp_path)
    token = reg.add("alice")
    assert reg.identify(token) == "alice"
    db.close()


# ----------------------------------------------------------------------------------------------
# arena bots, on the server's folder (a real process)
# ----------------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k not in (OPERATOR_TOKEN_ENV, "GIN_ARENA_REFEREE")},
       "PYTHONPATH": str(ROOT)}
ARENA = [sys.executable, "-m", "arena.cli"]


def _arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=HANG_S)


def _identify(folder: Path, token: str) -> str | None:
    db = open_db(folder / "serve.sqlite", "serve")
    try:
        return BotRegistry(db).identify(token)
    finally:
        db.close()


def _token_of(done: subprocess.CompletedProcess[str]) -> str:
    """The token an add or rotate-token printed: alone on stdout, a line of 64 hex digits."""
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"[0-9a-f]{64}\n", done.stdout), repr(done.stdout)
    assert "shown this once" in done.stderr and done.stdout.strip() not in done.stderr
    return done.stdout.strip()


def test_arena_bots_adds_lists_and_changes_bots_on_the_servers_folder(tmp_path: Path) -> None:
    srv = tmp_path / "srv"
    token = _token_of(_arena(tmp_path, "bots", "add", "alice", "--dir", "srv"))
    assert _identify(srv, token) == "alice"  # the token the command printed opens the bot, here
    _token_of(_arena(tmp_path, "bots", "add", "bob", "--dir", "srv"))
    assert _arena(tmp_path, "bots", "disable", "bob", "--dir", "srv").stdout == "bot 'bob' is disabled\n"
    done = _arena(tmp_path, "bots", "suspend", "alice", "--reason", "4 crashes", "--dir", "srv")
    assert done.returncode == 0 and done.stdout == "bot 'alice' is suspended: 4 crashes\n"
    assert _identify(srv, token) is None
    table = _arena(tmp_path, "bots", "list", "--dir", "srv").stdout.splitlines()
    assert table[0].split() == ["BOT", "STATE", "GAMES", "ADDED", "REASON"]
    assert table[1].split()[:3] == ["alice", "suspended", "0"] and table[1].endswith("4 crashes")
    assert table[2].split()[:3] == ["bob", "disabled", "0"]
    listed = json.loads(_arena(tmp_path, "bots", "list", "--json", "--dir", "srv").stdout)
    assert [(b["name"], b["state"], b["reason"], b["games"]) for b in listed["bots"]] == [
        ("alice", "BOT_STATE_SUSPENDED", "4 crashes", 0), ("bob", "BOT_STATE_DISABLED", "", 0)]
    assert _arena(tmp_path, "bots", "enable", "alice", "--dir", "srv").returncode == 0
    assert _identify(srv, token) == "alice"
    new = _token_of(_arena(tmp_path, "bots", "rotate-token", "alice", "--dir", "srv"))
    assert new != token and _identify(srv, token) is None and _identify(srv, new) == "alice"
    done = _arena(tmp_path, "bots", "remove", "alice", "--dir", "srv")
    assert done.returncode == 0 and _identify(srv, new) is None
    assert "alice" not in _arena(tmp_path, "bots", "list", "--dir", "srv").stdout


def test_arena_bots_refusals_say_why_in_one_line(tmp_path: Path) -> None:
    _token_of(_arena(tmp_path, "bots", "add", "alice", "--dir", "srv"))
    cases = [
        (("add", "alice"), 1, "a bot named 'alice' is already registered"),
        (("disable", "nobody"), 1, "no bot named 'nobody' is registered (arena bots list --dir srv shows them)"),
        (("rotate-token", "nobody"), 1, "no bot named 'nobody'"),
        (("remove", "nobody"), 1, "no bot named 'nobody'"),
        (("add", "<script>"), 2, "'<script>' is not a valid name"),
    ]
    for args, status, words in cases:
        done = _arena(tmp_path, "bots", *args, "--dir", "srv")
        assert (done.returncode, done.stdout) == (status, ""), (args, done)
        assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    done = _arena(tmp_path, "bots", "list", "--dir", "elsewhere")
    assert done.returncode == 2 and "elsewhere holds no server database (serve.sqlite)" in done.stderr
    assert not (tmp_path / "elsewhere").exists()
    assert _arena(tmp_path, "bots", "add", "--dir", "srv").returncode == 2  # argparse: NAME missing


# ----------------------------------------------------------------------------------------------
# ArenaService on a real `arena serve`, and `arena operator bots` from "another machine"
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Served:
    """A running ``arena serve`` on loopback."""

    folder: Path
    """Its ``--dir``."""
    address: str
    """Where it listens (``HOST:PORT``)."""

    @property
    def token(self) -> str:
        return (self.folder / "operator-token").read_text().strip()

    def operator(self, *args: str, token: bool = True) -> subprocess.CompletedProcess[str]:
        key = ["--operator-token-file", str(self.folder / "operator-token")] if token else []
        return _arena(self.folder.parent, "operator", "--referee", self.address, *key, *args)


def _listening(proc: subprocess.Popen[str]) -> str:
    """The address an ``arena serve`` or ``referee serve`` prints once it listens."""
    assert proc.stdout is not None
    for line in proc.stdout:  # ends (empty) if the server exits first
        if found := re.match(r"referee listening on ([^;\s]+)", line):
            return found.group(1)
    raise AssertionError(f"the server ended (exit {proc.wait()}) without listening")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=HANG_S)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("hosted") / "srv"
    proc = subprocess.Popen([*ARENA, "serve", "--listen", "127.0.0.1:0", "--dir", str(folder)], cwd=folder.parent,
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield Served(folder, _listening(proc))
    finally:
        _stop(proc)


ARENA_SERVICE = "gin_arena.v2.ArenaService"
CALLS: list[tuple[str, Message]] = [
    ("AddBot", arena_pb2.AddBotRequest(name="mallory")),
    ("ListBots", arena_pb2.ListBotsRequest()),
    ("SetBotState", arena_pb2.SetBotStateRequest(name="x", state=arena_pb2.BOT_STATE_ENABLED)),
    ("RemoveBot", arena_pb2.RemoveBotRequest(name="x")),
    ("RotateBotToken", arena_pb2.RotateBotTokenRequest(name="x")),
]
"""One call of each of the service's rpcs."""


def test_every_arena_service_call_needs_the_operator_token(served: Served) -> None:
    with grpc.insecure_channel(served.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        assert {m.name for m in arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].methods} == {
            name for name, _ in CALLS}
        bot_token = _added_beside(served, "walter")  # a bot token carries no operator rights
        for metadata, code in (((), grpc.StatusCode.UNAUTHENTICATED),
                               (operator_metadata(bot_token), grpc.StatusCode.PERMISSION_DENIED),
                               (operator_metadata("x" * 64), grpc.StatusCode.PERMISSION_DENIED)):
            for name, request in CALLS:
                with pytest.raises(grpc.RpcError) as e:
                    getattr(stub, name)(request, metadata=metadata, timeout=HANG_S)
                assert e.value.code() == code, (name, metadata)
        assert _identify(served.folder, bot_token) == "walter"  # nothing was changed by the refused calls
        listed = stub.ListBots(arena_pb2.ListBotsRequest(), metadata=operator_metadata(served.token), timeout=HANG_S)
        assert "mallory" not in {b.name for b in listed.bots} and "walter" in {b.name for b in listed.bots}
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=ARENA_SERVICE),
                                                           timeout=HANG_S)
        assert health.status == health_pb2.HealthCheckResponse.SERVING


def _added_beside(served: Served, name: str) -> str:
    """A bot added by ``arena bots`` on the server's folder while it runs (another process)."""
    return _token_of(_arena(served.folder.parent, "bots", "add", name, "--dir", str(served.folder)))


def test_the_operator_manages_bots_over_grpc_and_the_server_sees_each_change_at_once(served: Served) -> None:
    with grpc.insecure_channel(served.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        key = operator_metadata(served.token)
        added = stub.AddBot(arena_pb2.AddBotRequest(name="grpc-bot"), metadata=key, timeout=HANG_S)
        assert added.bot.name == "grpc-bot" and added.bot.state == arena_pb2.BOT_STATE_ENABLED
        assert _identify(served.folder, added.token) == "grpc-bot" and added.bot.added_at.seconds > 0
        suspended = stub.SetBotState(arena_pb2.SetBotStateRequest(
            name="grpc-bot", state=arena_pb2.BOT_STATE_SUSPENDED, reason="too many time losses"), metadata=key,
            timeout=HANG_S)
        assert suspended.bot.state == arena_pb2.BOT_STATE_SUSPENDED and suspended.bot.reason == "too many time losses"
        assert _identify(served.folder, added.token) is None
        rotated = stub.RotateBotToken(arena_pb2.RotateBotTokenRequest(name="grpc-bot"), metadata=key, timeout=HANG_S)
        assert rotated.token != added.token and len(rotated.token) == 64
        for name, request, code in (
            ("AddBot", arena_pb2.AddBotRequest(name="grpc-bot"), grpc.StatusCode.ALREADY_EXISTS),
            ("AddBot", arena_pb2.AddBotRequest(name="GRPC-Bot"), grpc.StatusCode.ALREADY_EXISTS),
            ("AddBot", arena_pb2.AddBotRequest(name="<img src=x>"), grpc.StatusCode.INVALID_ARGUMENT),
            ("SetBotState", arena_pb2.SetBotStateRequest(name="grpc-bot"), grpc.StatusCode.INVALID_ARGUMENT),
            ("RemoveBot", arena_pb2.RemoveBotRequest(name="nobody"), grpc.StatusCode.NOT_FOUND),
        ):
            with pytest.raises(grpc.RpcError) as e:
                getattr(stub, name)(request, metadata=key, timeout=HANG_S)
            assert e.value.code() == code, name
        stub.RemoveBot(arena_pb2.RemoveBotRequest(name="grpc-bot"), metadata=key, timeout=HANG_S)
        assert _identify(served.folder, rotated.token) is None
    log = (served.folder / "serve.log").read_text()
    assert '"call": "AddBot"' in log and added.token not in log and rotated.token not in log


def test_arena_operator_bots_end_to_end(served: Served) -> None:
    token = _token_of(served.operator("bots", "add", "remote-bot"))
    assert _identify(served.folder, token) == "remote-bot"
    done = served.operator("bots", "suspend", "remote-bot", "--reason", "3 crashes in its last 50 games")
    assert done.stdout == "bot 'remote-bot' is suspended: 3 crashes in its last 50 games\n"
    table = served.operator("bots", "list").stdout
    assert re.search(r"^remote-bot +suspended +0 +\S+ \S+ +3 crashes in its last 50 games$", table, re.M), table
    assert served.operator("bots", "enable", "remote-bot").stdout == "bot 'remote-bot' is enabled\n"
    # the same server's folder, changed by `arena bots` beside it, is what the operator sees
    assert _arena(served.folder.parent, "bots", "disable", "remote-bot", "--dir", str(served.folder)).returncode == 0
    listed = json.loads(served.operator("bots", "list", "--json").stdout)
    assert {b["name"]: b["state"] for b in listed["bots"]}["remote-bot"] == "BOT_STATE_DISABLED"
    assert served.operator("--json", "bots", "list").stdout == served.operator("bots", "list", "--json").stdout
    new = _token_of(served.operator("bots", "rotate-token", "remote-bot"))
    assert served.operator("bots", "enable", "remote-bot").returncode == 0
    assert _identify(served.folder, token) is None and _identify(served.folder, new) == "remote-bot"
    for args, words in ((("bots", "disable", "nobody"), "no bot named 'nobody' is registered"),
                        (("bots", "add", "remote-bot"), "ALREADY_EXISTS: a bot named 'remote-bot'")):
        done = served.operator(*args)
        assert done.returncode == 1 and done.stdout == "" and words in done.stderr, done
    done = served.operator("bots", "add", "sneaky", token=False)
    assert done.returncode == 1 and "wants the operator token" in done.stderr and done.stdout == ""
    assert served.operator("bots", "remove", "remote-bot").stdout.startswith("removed bot 'remote-bot'")
    assert _identify(served.folder, new) is None


def test_arena_operator_bots_on_a_referee_without_registry_says_so(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays", "r"],
                            cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        address = _listening(proc)
        done = _arena(tmp_path, "operator", "--referee", address, "--operator-token-file", "operator-token",
                      "bots", "list")
    finally:
        _stop(proc)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"arena operator bots list: the referee at {address} registers no bots (referee serve): "
                           "call an arena serve\n")


# ----------------------------------------------------------------------------------------------
# TLS off loopback
# ----------------------------------------------------------------------------------------------
def test_a_server_off_loopback_needs_tls_or_insecure(tmp_path: Path) -> None:
    done = _arena(tmp_path, "serve", "--listen", "0.0.0.0:0", "--dir", "srv")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "arena: --listen 0.0.0.0:0 is not a loopback address: bot and operator tokens would cross the network "
        "in clear; serve TLS (--tls-cert FILE --tls-key FILE; arena certs makes them) or, on a network you "
        "trust, add --insecure"]
    assert not (tmp_path / "srv").exists()
    proc = subprocess.Popen([*ARENA, "serve", "--listen", "0.0.0.0:0", "--dir", "srv", "--insecure"], cwd=tmp_path,
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert _listening(proc).startswith("0.0.0.0:")
    finally:
        _stop(proc)
    assert proc.returncode == 0


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST.", True), ("0.0.0.0", False), ("::", False), ("[::]", False), ("10.0.0.5", False),
    ("example.org", False), ("", False),
])
def test_which_listening_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
