"""``arena certs`` makes what a TLS referee needs, and ``arena operator`` makes its calls: both
against a real ``arena serve`` (mutual TLS, with the certificates ``arena certs`` made) and a
real ``referee serve`` (plaintext), started by the tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests._wait import RUN_HANG_S

ROOT = Path(__file__).resolve().parent.parent
TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
ENV = {**{k: v for k, v in os.environ.items() if k not in (TOKEN_ENV, "GIN_ARENA_REFEREE")},
       "PYTHONPATH": str(ROOT)}
ARENA = [sys.executable, "-m", "arena.cli"]


def _arena(cwd: Path, *args: str, timeout: float = RUN_HANG_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


def _free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _wait_listening(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("referee listening on"):
            return line
    raise AssertionError("the server did not say where it listens")


@dataclass(frozen=True)
class Served:
    folder: Path
    address: str
    certs: Path

    def tls(self, client: str | None = "arena") -> list[str]:
        opts = ["--ca", str(self.certs / "ca.pem")]
        if client:
            opts += ["--tls-cert", str(self.certs / f"client-{client}.pem"),
                     "--tls-key", str(self.certs / f"client-{client}.key")]
        return opts

    def operator(self, *args: str, token: bool = True, client: str | None = "arena") -> list[str]:
        return ["operator", "--referee", self.address, *self.tls(client),
                *(["--operator-token-file", str(self.folder / "srv" / "operator-token")] if token else []), *args]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``arena certs`` for 127.0.0.1 with two clients, and ``arena serve`` with mutual TLS."""
    folder = tmp_path_factory.mktemp("mtls")
    made = _arena(folder, "certs", "--out", "certs", "--host", "127.0.0.1", "--client", "arena",
                  "--client", "bots")
    assert made.returncode == 0, made.stderr
    address = _free_address()
    certs = folder / "certs"
    serve = subprocess.Popen(
        [*ARENA, "serve", "--listen", address, "--dir", "srv", "--tls-cert", str(certs / "server.pem"),
         "--tls-key", str(certs / "server.key"), "--tls-client-ca", str(certs / "ca.pem")],
        cwd=folder, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert "(TLS)" in _wait_listening(serve)
        yield Served(folder, address, certs)
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)


# ----------------------------------------------------------------------------------------------
# arena certs
# ----------------------------------------------------------------------------------------------
def test_certs_are_made_with_private_keys_for_the_owner_and_never_overwritten(tmp_path: Path) -> None:
    done = _arena(tmp_path, "certs", "--out", "c", "--host", "referee.example.org", "--host", "10.0.0.7",
                  "--client", "alice")
    assert done.returncode == 0, done.stderr
    files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "c").iterdir()}
    assert set(files) == {"ca.pem", "ca.key", "server.pem", "server.key", "client-alice.pem", "client-alice.key"}
    assert all(mode == 0o600 for name, mode in files.items() if name.endswith(".key"))
    for name in files:  # each file is said what it is for
        assert f"c/{name}" in done.stdout
    assert "--tls-cert c/server.pem --tls-key c/server.key --tls-client-ca c/ca.pem" in done.stdout
    assert "--ca c/ca.pem --tls-cert c/client-alice.pem --tls-key c/client-alice.key" in done.stdout
    from cryptography import x509  # the server certificate names what was asked, signed by the CA
    cert = x509.load_pem_x509_certificate((tmp_path / "c" / "server.pem").read_bytes())
    ca = x509.load_pem_x509_certificate((tmp_path / "c" / "ca.pem").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["referee.example.org"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["10.0.0.7"]
    cert.verify_directly_issued_by(ca)
    before = {p.name: p.read_bytes() for p in (tmp_path / "c").iterdir()}
    again = _arena(tmp_path, "certs", "--out", "c")
    assert again.returncode == 2 and "already there; nothing was written" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in (tmp_path / "c").iterdir()} == before
    bad = _arena(tmp_path, "certs", "--out", "d", "--host", "not a host")
    assert bad.returncode == 2 and "--host 'not a host'" in bad.stderr and not (tmp_path / "d").exists()


def test_a_tournament_reaches_a_mutual_tls_referee_with_the_certificates_arena_certs_made(served: Served) -> None:
    def tournament(out: str, client: str | None) -> subprocess.CompletedProcess[str]:
        return _arena(served.folder, "tournament", "--games", "2", "--rules", "short", "--tc", "st=2",
                      "--bot", 'name=greedy cmd="{python} -m sample_bots.greedy_bot"',
                      "--bot", 'name=random cmd="{python} -m sample_bots.random_bot"',
                      "--referee", served.address, *served.tls(client),
                      "--operator-token-file", "srv/operator-token", "--out", out, "--no-progress")
    done = tournament("run", "arena")
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((served.folder / "run" / "results.json").read_text())
    assert results["games_played"] == 2 and all(g["termination"] == "normal" for g in results["games"])
    refused = tournament("run-without-cert", None)  # mutual TLS: no client certificate, no call
    assert refused.returncode != 0


# ----------------------------------------------------------------------------------------------
# arena operator
# ----------------------------------------------------------------------------------------------
def _create(served: Served, *extra: str) -> dict[str, object]:
    done = _arena(served.folder, *served.operator("create", "--player", "ann", "--player", "bob", "--rules", "short",
                                                  "--tc", "st=2", "--json", *extra))
    assert done.returncode == 0, done.stderr
    created: dict[str, object] = json.loads(done.stdout)
    return created


def test_operator_creates_lists_shows_watches_and_fetches_a_match_that_bots_play(served: Served) -> None:
    created = _create(served)
    mid = str(created["matchId"])
    tokens = [str(t["token"]) for t in created["seatTokens"]]  # type: ignore[attr-defined]
    listed = _arena(served.folder, *served.operator("list"))
    assert listed.returncode == 0 and listed.stdout.splitlines()[0].split()[:3] == ["MATCH", "STATE", "GAME.DEAL"]
    row = next(line for line in listed.stdout.splitlines() if line.startswith(mid))
    assert "waiting_for_players" in row and "ann bob" in row
    bots = [subprocess.Popen([sys.executable, "-m", "sample_bots.greedy_bot", "--referee", served.address,
                              "--token", t, *served.tls("bots")], cwd=ROOT, env=ENV,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for t in tokens]
    try:
        watch = _arena(served.folder, *served.operator("watch", mid, "--from-start"))  # ends with the match
        for bot in bots:
            _, err = bot.communicate(timeout=RUN_HANG_S)
            assert bot.returncode == 0, err[-2000:]
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
    assert watch.returncode == 0, watch.stderr
    lines = watch.stdout.splitlines()
    assert lines[0].startswith("header: player_names=ann,bob") and lines[-1].startswith("match_finished: ")
    assert any(line.startswith("event: seat=ann ") for line in lines)  # seat 0 by name too
    shown = _arena(served.folder, *served.operator("show", mid, "--json"))
    status = json.loads(shown.stdout)["match"]
    assert status["state"] == "MATCH_STATE_FINISHED" and status["playerNames"] == ["ann", "bob"]
    text = _arena(served.folder, *served.operator("show", mid)).stdout
    assert "state      finished" in text and "the match was played to its end" in text
    fetched = _arena(served.folder, *served.operator("replay", mid, "-o", f"{mid}.jsonl"))
    assert fetched.returncode == 0, fetched.stderr
    final_hash = fetched.stdout.split("final hash ")[1].split(")")[0]
    audit = _arena(served.folder, "audit", f"{mid}.jsonl", "--expect-hash", final_hash)
    assert audit.returncode == 0, audit.stdout[-2000:]
    finished = json.loads(_arena(served.folder, *served.operator("list", "--state", "finished", "--json")).stdout)
    assert mid in [m["matchId"] for m in finished["matches"]]


def test_operator_cancels_a_match(served: Served) -> None:
    mid = str(_create(served)["matchId"])
    done = _arena(served.folder, *served.operator("cancel", mid, "--reason", "testing the cancel"))
    assert done.returncode == 0, done.stderr
    status = json.loads(_arena(served.folder, *served.operator("show", mid, "--json")).stdout)["match"]
    assert status["state"] == "MATCH_STATE_ABORTED" and "testing the cancel" in status["result"]["detail"]


@pytest.mark.parametrize(("case", "says"), [
    ("no-token", "the referee wants the operator token: give --operator-token-file FILE"),
    ("seat-token", "this token carries no operator rights"),
    ("unknown-match", "no match 'no-such-match' on the referee at"),
    ("plaintext", "cannot reach the referee at"),
    ("unreachable", "cannot reach the referee at"),
])
def test_operator_errors_are_one_line_with_status_1(served: Served, tmp_path: Path, case: str, says: str) -> None:
    if case == "no-token":
        args = served.operator("list", token=False)
    elif case == "seat-token":
        seat = tmp_path / "seat-token"
        seat.write_text(str(_create(served)["seatTokens"][0]["token"]))  # type: ignore[index]
        seat.chmod(0o600)
        args = ["operator", "--referee", served.address, *served.tls(), "--operator-token-file", str(seat), "list"]
    elif case == "unknown-match":
        args = served.operator("show", "no-such-match")
    elif case == "plaintext":  # a TLS referee called in plaintext
        args = ["operator", "--referee", served.address, "--operator-token-file",
                str(served.folder / "srv" / "operator-token"), "--timeout", "5", "list"]
    else:
        args = ["operator", "--referee", _free_address(), "--timeout", "5", "list"]
    done = _arena(served.folder, *args)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_operator_refuses_a_bad_command_line_with_status_2(served: Served, tmp_path: Path) -> None:
    for args in (["operator", "--referee", "nowhere", "list"],
                 ["operator", "--operator-token-file", str(tmp_path / "missing"), "list"],
                 [*served.operator("create", "--player", "solo")],
                 [*served.operator("create", "--player", "a", "--player", "b", "--rules", "michgan")]):
        done = _arena(served.folder, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_operator_against_a_plaintext_referee_serve(tmp_path: Path) -> None:
    """``referee serve`` (no TLS); the options after the action work as before it."""
    serve = subprocess.Popen([*ARENA[:-1], "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays", "r"],
                             cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = _wait_listening(serve).split()[3]
        empty = _arena(tmp_path, "operator", "list", "--referee", address, "--operator-token-file", "operator-token")
        assert empty.returncode == 0 and empty.stdout.strip() == "no matches", empty.stderr
        made = _arena(tmp_path, "operator", "--referee", address, "--operator-token-file", "operator-token",
                      "create", "--game", "rummy", "--rules", "michigan", "--player", "a", "--player", "b",
                      "--player", "c", "--match-id", "three")
        assert made.returncode == 0, made.stderr
        assert made.stdout.startswith("created match three") and made.stdout.count("--token ") == 3
        listed = _arena(tmp_path, "operator", "--referee", address, "--operator-token-file", "operator-token",
                        "list", "--json")
        assert [m["playerNames"] for m in json.loads(listed.stdout)["matches"]] == [["a", "b", "c"]]
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)
