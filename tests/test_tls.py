"""TLS: the servers serve it (and mutual TLS), the Python kit, the JS bot and the arena's remote
backend connect with ``--tls``/``--ca``; a match is played over TLS. The CA and certificates are
made by the test (trustme)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import trio
import trustme

import referee
import referee.lowlevel
from gin_arena.v2 import common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from tests._wait import RUN_HANG_S, finished_match

TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
"""(``referee.lowlevel.OPERATOR_TOKEN_ENV``, spelled out: the environment a user sets.)"""
ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != TOKEN_ENV}, "PYTHONPATH": str(ROOT)}
JS_BOT = ROOT / "sample_bots" / "js" / "bot.js"


@dataclass(frozen=True)
class Pki:
    ca: Path
    cert: Path
    key: Path
    client_cert: Path
    client_key: Path


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("a-client.example")
    p = Pki(tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key", tmp_path / "client.pem",
            tmp_path / "client.key")
    ca.cert_pem.write_to_path(str(p.ca))
    server.private_key_pem.write_to_path(str(p.key))
    server.cert_chain_pems[0].write_to_path(str(p.cert))
    for blob in server.cert_chain_pems[1:]:
        blob.write_to_path(str(p.cert), append=True)
    client.private_key_pem.write_to_path(str(p.client_key))
    client.cert_chain_pems[0].write_to_path(str(p.client_cert))
    return p


def _free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _first_line(proc: subprocess.Popen[str], prefix: str) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(prefix) or not line:
            return line
    raise AssertionError(f"no line starting with {prefix!r}")


def _list_code(channel: grpc.Channel, token: str) -> grpc.StatusCode:
    ops = referee_pb2_grpc.RefereeServiceStub(channel)
    try:
        ops.ListMatches(referee_pb2.ListMatchesRequest(), metadata=referee.lowlevel.operator_metadata(token), timeout=5)
    except grpc.RpcError as e:
        code: grpc.StatusCode = e.code()
        return code
    return grpc.StatusCode.OK


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_a_match_over_tls_between_the_python_kit_and_the_js_bot(pki: Pki, tmp_path: Path, mutual: bool) -> None:
    """With ``mutual``, the referee asks every client for a certificate: the operator, the kit
    bot and the JS bot show theirs (``--tls-cert/--tls-key``)."""
    client_ca = ["--tls-client-ca", str(pki.ca)] if mutual else []
    cert = ["--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key)] if mutual else []
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays", "replays",
         "--tls-cert", str(pki.cert), "--tls-key", str(pki.key), *client_ca],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bots: list[subprocess.Popen[str]] = []
    try:
        line = _first_line(serve, "referee listening on")
        assert line.strip().endswith("(TLS)"), line
        address = line.split()[3]
        token = (tmp_path / "operator-token").read_text().strip()
        with grpc.insecure_channel(address) as plain:
            assert _list_code(plain, token) == grpc.StatusCode.UNAVAILABLE, "no plaintext on a TLS port"
        creds = grpc.ssl_channel_credentials(pki.ca.read_bytes(), *(
            (pki.client_key.read_bytes(), pki.client_cert.read_bytes()) if mutual else ()))
        with grpc.secure_channel(address, creds) as channel:
            ops = referee_pb2_grpc.RefereeServiceStub(channel)
            md = referee.lowlevel.operator_metadata(token)
            created = ops.CreateMatch(referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="kit"), referee_pb2.SeatSpec(name="js")],
                gin=gin_pb2.RuleSet(name="short"), time_control=common_pb2.TimeControl(text="st=5"),
            ), metadata=md)
            kit_token, js_token = (t.token for t in created.seat_tokens)
            bots.append(subprocess.Popen(
                [sys.executable, "-m", "sample_bots.greedy_bot", "--referee", address, "--token", kit_token,
                 "--ca", str(pki.ca), *cert], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            node = shutil.which("node")
            if node and (JS_BOT.parent / "node_modules").is_dir():
                js = [node, str(JS_BOT), "--referee", address, "--token", js_token, "--ca", str(pki.ca), *cert]
            else:  # without node, the kit plays both seats (over TLS all the same)
                js = [sys.executable, "-m", "sample_bots.random_bot", "--referee", address, "--token", js_token,
                      "--tls", "--ca", str(pki.ca), *cert]
            bots.append(subprocess.Popen(js, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            for bot in bots:
                _, err = bot.communicate(timeout=RUN_HANG_S)
                assert bot.returncode == 0, err[-2000:]
            status = finished_match(ops, created.match_id, md)
            assert status.result.termination == common_pb2.TERMINATION_NORMAL, status.result.detail
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)


def test_mutual_tls_refuses_a_client_without_a_certificate(pki: Pki) -> None:
    tls = referee.ServerTLS(str(pki.cert), str(pki.key), client_ca=str(pki.ca))

    async def main() -> None:
        async with referee.open_referee(tls=tls) as ref:
            def codes() -> tuple[grpc.StatusCode, grpc.StatusCode]:
                anonymous = grpc.ssl_channel_credentials(pki.ca.read_bytes())
                known = grpc.ssl_channel_credentials(pki.ca.read_bytes(), pki.client_key.read_bytes(),
                                                     pki.client_cert.read_bytes())
                with grpc.secure_channel(ref.address, anonymous) as a, grpc.secure_channel(ref.address, known) as b:
                    return _list_code(a, ref.operator_token), _list_code(b, ref.operator_token)

            without, with_cert = await trio.to_thread.run_sync(codes)
            assert without == grpc.StatusCode.UNAVAILABLE
            assert with_cert == grpc.StatusCode.OK

    referee.run(main)


def test_an_arena_tournament_on_a_remote_tls_referee(pki: Pki, tmp_path: Path) -> None:
    address = _free_address()
    serve = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", address, "--dir", "srv",
         "--tls-cert", str(pki.cert), "--tls-key", str(pki.key)],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert "(TLS)" in _first_line(serve, "referee listening on")
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli", "tournament", "--games", "2", "--rules", "short", "--tc", "st=2",
             "--bot", 'name=greedy cmd="{python} -m sample_bots.greedy_bot"',
             "--bot", 'name=random cmd="{python} -m sample_bots.random_bot"',
             "--referee", address, "--ca", str(pki.ca), "--operator-token-file", "srv/operator-token",
             "--out", "run", "--no-progress"],
            cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        assert results["games_played"] == 2
        assert all(g["termination"] == "normal" for g in results["games"]), results["games"]
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)


def test_an_arena_tournament_over_mutual_tls_shows_the_arenas_client_certificate(pki: Pki, tmp_path: Path) -> None:
    """``arena serve --tls-client-ca``: the arena (``--tls-cert/--tls-key``) and the kit bots it
    starts (given the same certificate) are let in; without a certificate the arena is not."""
    address = _free_address()
    serve = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", address, "--dir", "srv",
         "--tls-cert", str(pki.cert), "--tls-key", str(pki.key), "--tls-client-ca", str(pki.ca)],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def tournament(out: str, *cert: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "arena.cli", "tournament", "--games", "2", "--rules", "short", "--tc", "st=2",
             "--bot", 'name=greedy cmd="{python} -m sample_bots.greedy_bot"',
             "--bot", 'name=random cmd="{python} -m sample_bots.random_bot"',
             "--referee", address, "--ca", str(pki.ca), *cert, "--operator-token-file", "srv/operator-token",
             "--out", out, "--no-progress"],
            cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=240)

    try:
        assert "(TLS)" in _first_line(serve, "referee listening on")
        done = tournament("run", "--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key))
        assert done.returncode == 0, done.stderr[-3000:]
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        assert results["games_played"] == 2
        assert all(g["termination"] == "normal" for g in results["games"]), results["games"]
        refused = tournament("anonymous")
        assert refused.returncode == 2, refused.stderr
        assert [line for line in refused.stderr.splitlines() if line.startswith("arena: ")] == [
            f"arena: the referee at {address} asks for a client certificate (mutual TLS): give --tls-cert FILE "
            "and --tls-key FILE"], refused.stderr
        assert not (tmp_path / "anonymous").exists()
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)


def test_tls_and_plaintext_mixed_up_are_one_line_each_and_leave_no_run_folder(pki: Pki, tmp_path: Path) -> None:
    """A TLS referee reached without ``--ca``, a plaintext one with ``--ca``, and a TLS one with a
    CA that did not sign its certificate: the arena finds out with a handshake of its own (not by
    waiting for the channel to give up), says what is wrong in one line and exits 2 before any
    run folder exists."""
    tls_address, plain_address = _free_address(), _free_address()
    servers = [
        subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", "--listen", address, "--dir", folder, *extra],
                         cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for address, folder, extra in (
            (tls_address, "srv-tls", ["--tls-cert", str(pki.cert), "--tls-key", str(pki.key)]),
            (plain_address, "srv-plain", []))]
    other_ca = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other_ca))

    def tournament(out: str, address: str, token: str, *tls: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "arena.cli", "tournament", "--games", "2", "--rules", "short",
             "--bot", 'name=greedy cmd="{python} -m sample_bots.greedy_bot"',
             "--bot", 'name=random cmd="{python} -m sample_bots.random_bot"',
             "--referee", address, *tls, "--operator-token-file", token, "--out", out, "--no-progress"],
            cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=RUN_HANG_S)

    try:
        for server in servers:
            assert _first_line(server, "referee listening on")
        cases = [
            ("no-ca", tls_address, "srv-tls/operator-token", (),
             f"the referee at {tls_address} speaks TLS: give --ca FILE"),
            ("plain", plain_address, "srv-plain/operator-token", ("--ca", str(pki.ca)),
             f"the referee at {plain_address} does not speak TLS (it is plaintext): leave out --tls"),
            ("wrong-ca", tls_address, "srv-tls/operator-token", ("--ca", str(other_ca)),
             f"the referee at {tls_address} speaks TLS, but its certificate is not trusted"),
        ]
        for out, address, token, tls, said in cases:
            done = tournament(out, address, token, *tls)
            assert done.returncode == 2, (out, done.stderr)
            errors = [line for line in done.stderr.splitlines() if line.startswith("arena: ")]
            assert len(errors) == 1 and errors[0].startswith(f"arena: {said}"), (out, done.stderr)
            assert "Socket closed" not in done.stderr and "Traceback" not in done.stderr
            assert not (tmp_path / out).exists(), out
    finally:
        for server in servers:
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=30)
