"""Bot registration on a hosted server (issue 20): the registry in ``serve.sqlite``, ``arena bots``,
the operator's ``ArenaService`` and ``arena operator bots``, and TLS off loopback."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.hosted.registry import BOT_STATES, BotRegistry, RegistryError
from arena.store import open_db


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
