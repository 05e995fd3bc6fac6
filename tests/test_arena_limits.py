"""The referee's limits reach every referee the arena runs: ``arena serve --limit KEY=VALUE``,
the embedded referee of ``arena tournament``/``demo``/``ladder run`` (``--limit``) and
``referee.open_match_context(limits=…)``; a bad ``--limit`` is one line and exit 2."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
import trio

import referee
import referee.lowlevel
from arena.cli.options import UsageError, remote_access
from arena.cli.parser import build_parser
from arena.run.tournament import open_context
from gin_arena.v2 import referee_pb2, referee_pb2_grpc
from referee.transport.server import ANNOUNCED_STREAMS_FACTOR

ROOT = Path(__file__).resolve().parent.parent
TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
ENV = {**{k: v for k, v in os.environ.items() if k != TOKEN_ENV}, "PYTHONPATH": str(ROOT)}


def _announced_streams(address: str) -> int:
    """SETTINGS_MAX_CONCURRENT_STREAMS the server at ``address`` announces, divided by the factor it
    announces beyond its ``streams_per_connection``: that limit."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        buf = b""
        while True:
            while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
                chunk = s.recv(65536)
                assert chunk, "the server closed the connection"
                buf += chunk
            length, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            payload, buf = buf[9:9 + length], buf[9 + length:]
            if kind == 0x4 and not flags & 1:
                settings = dict(struct.unpack_from(">HI", payload, i) for i in range(0, length, 6))
                return int(settings[0x3]) // ANNOUNCED_STREAMS_FACTOR


def test_the_tournaments_limit_option_reaches_its_embedded_referee(tmp_path: Path) -> None:
    args = build_parser().parse_args(["tournament", "--bot", "name=a cmd=x", "--limit", "streams_per_connection=7",
                                      "--limit", "waiting_matches=3"])
    access = remote_access(args)
    assert access.limits == referee.Limits(streams_per_connection=7, waiting_matches=3)

    async def main() -> int:
        async with open_context("", "127.0.0.1:0", tmp_path, access) as ctx:
            return await trio.to_thread.run_sync(_announced_streams, ctx.bot_address)

    assert referee.run(main) == 7


def test_open_match_context_takes_limits_for_its_embedded_referee_only() -> None:
    async def main() -> int:
        async with referee.open_match_context(limits=referee.Limits(streams_per_connection=5)) as ctx:
            return await trio.to_thread.run_sync(_announced_streams, ctx.bot_address)

    assert referee.run(main) == 5

    async def remote() -> None:
        async with referee.open_match_context(referee="127.0.0.1:1", limits=referee.Limits()):
            pass

    with pytest.raises(ValueError, match="remote referee"):
        referee.run(remote)


@pytest.mark.parametrize(("words", "says"), [
    (["--limit", "no_such=1"], "no_such"),
    (["--limit", "games=lots"], "not an integer"),
    (["--limit", "games=5", "--referee", "127.0.0.1:50051"], "remote referee has its own"),
    (["--tls-cert", "cert.pem", "--referee", "127.0.0.1:50051"], "--tls-cert"),
])
def test_a_bad_limit_or_a_half_client_certificate_is_a_usage_error(words: list[str], says: str) -> None:
    args = build_parser().parse_args(["tournament", "--bot", "name=a cmd=x", *words])
    with pytest.raises(UsageError, match=says):
        remote_access(args)


def test_arena_serve_enforces_its_limit_options(tmp_path: Path) -> None:
    bad = subprocess.run([sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", "bad",
                          "--limit", "waiting=2"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "waiting_matches" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad").exists()
    serve = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", "srv",
         "--limit", "waiting_matches=2", "--limit", "name_length=8"],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()
        assert line.startswith("referee listening on"), line
        address = line.split()[3].rstrip(";")
        md = referee.lowlevel.operator_metadata((tmp_path / "srv" / "operator-token").read_text().strip())
        with grpc.insecure_channel(address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)

            def create(name: str) -> grpc.StatusCode:
                try:
                    ops.CreateMatch(referee_pb2.CreateMatchRequest(seats=[
                        referee_pb2.SeatSpec(name=name), referee_pb2.SeatSpec(name="b")]), metadata=md, timeout=10)
                except grpc.RpcError as e:
                    assert ("name_length" if len(name) > 8 else "waiting_matches") in str(e.details())
                    code: grpc.StatusCode = e.code()
                    return code
                return grpc.StatusCode.OK

            assert create("ninechars") == grpc.StatusCode.INVALID_ARGUMENT
            assert [create("a"), create("a"), create("a")] == [grpc.StatusCode.OK, grpc.StatusCode.OK,
                                                               grpc.StatusCode.RESOURCE_EXHAUSTED]
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=30)


def _worker_referee_streams(dask_worker: object) -> int:
    """(On a Dask worker.) What the worker's own referee announces."""
    from arena.run.cluster import PLUGIN

    plugin = dask_worker.plugins[PLUGIN]  # type: ignore[attr-defined]
    return _announced_streams(plugin.context.bot_address)


def test_the_limit_option_reaches_the_referees_of_dask_workers(tmp_path: Path) -> None:
    from arena.run.cluster import Cluster
    from arena.run.placement import ClusterSpec

    cluster = Cluster(ClusterSpec(workers=2), tmp_path, referee.Limits(streams_per_connection=9))
    try:
        answers = cluster.client.run(_worker_referee_streams)
    finally:
        cluster.close()
    assert sorted(answers.values()) == [9, 9]
