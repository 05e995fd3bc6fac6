"""Operator credentials: every RefereeService call needs the operator token; seat and bot tokens
carry no operator rights; one bot token holds at most one seat; a cancelled match keeps the
games it played."""

from __future__ import annotations

import os
import random
import secrets
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio

import referee
import referee.lowlevel
from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2, referee_pb2_grpc
from referee import BotLaunch, MatchSpec
from referee.gin import RuleSet
from referee.play.matches import with_seat_tokens
from referee.transport.service import match_status
from tests._bots import Client, knock_first

Call = Callable[[referee_pb2_grpc.RefereeServiceStub, Any], Awaitable[object]]


async def _unary(call: Any) -> object:
    return await call


async def _stream(call: Any) -> object:
    return [ev async for ev in call]


def _calls(match_id: str) -> dict[str, Call]:
    """One call of every RefereeService method, with the given metadata."""
    two = [referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")]
    return {
        "CreateMatch": lambda ops, md: _unary(ops.CreateMatch(referee_pb2.CreateMatchRequest(seats=two), metadata=md)),
        "GetMatch": lambda ops, md: _unary(ops.GetMatch(referee_pb2.GetMatchRequest(match_id=match_id), metadata=md)),
        "ListMatches": lambda ops, md: _unary(ops.ListMatches(referee_pb2.ListMatchesRequest(), metadata=md)),
        "CancelMatch": lambda ops, md: _unary(ops.CancelMatch(
            referee_pb2.CancelMatchRequest(match_id=match_id, reason="x"), metadata=md)),
        "WatchMatch": lambda ops, md: _stream(ops.WatchMatch(
            referee_pb2.WatchMatchRequest(match_id=match_id, from_start=True), metadata=md)),
    }


async def _status(fn: Call, ops: referee_pb2_grpc.RefereeServiceStub, md: Any) -> grpc.StatusCode:
    try:
        await fn(ops, md)
    except grpc.aio.AioRpcError as e:
        return e.code()
    return grpc.StatusCode.OK


def test_every_operator_call_needs_the_operator_token() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            table = ref.create_match(MatchSpec(players=("a", "b"), match_id="m"))
            seat_token = table.links[0].token
            wrong = {
                "no metadata": (None, grpc.StatusCode.UNAUTHENTICATED),
                "not a bearer token": ((("authorization", "Basic " + ref.operator_token),),
                                       grpc.StatusCode.UNAUTHENTICATED),
                "empty bearer": ((("authorization", "Bearer "),), grpc.StatusCode.UNAUTHENTICATED),
                "a wrong token": (referee.lowlevel.operator_metadata("f" * 64), grpc.StatusCode.PERMISSION_DENIED),
                "a seat token": (referee.lowlevel.operator_metadata(seat_token), grpc.StatusCode.PERMISSION_DENIED),
                "a prefix of it": (referee.lowlevel.operator_metadata(ref.operator_token[:-1]),
                                   grpc.StatusCode.PERMISSION_DENIED),
            }
            for name, call in _calls("m").items():
                for what, (md, expected) in wrong.items():
                    got = await referee.aio(_status(call, ops, md))
                    assert got == expected, (name, what, got)
                assert table.state == "waiting", "a refused call changed nothing"
            good = referee.lowlevel.operator_metadata(ref.operator_token)
            for name in ("GetMatch", "ListMatches", "CreateMatch"):
                assert await referee.aio(_status(_calls("m")[name], ops, good)) == grpc.StatusCode.OK, name
            assert await referee.aio(_status(_calls("m")["CancelMatch"], ops, good)) == grpc.StatusCode.OK
            await table.finished.wait()
            assert await referee.aio(_status(_calls("m")["WatchMatch"], ops, good)) == grpc.StatusCode.OK

    referee.run(main)


def test_public_watch_opens_watching_only() -> None:
    async def main() -> None:
        async with referee.open_referee(public_watch=True) as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            table = ref.create_match(MatchSpec(players=("a", "b"), match_id="m"))
            table.cancel("over")
            await table.finished.wait()
            calls = _calls("m")
            assert await referee.aio(_status(calls["WatchMatch"], ops, None)) == grpc.StatusCode.OK
            for name in ("CreateMatch", "GetMatch", "ListMatches", "CancelMatch"):
                assert await referee.aio(_status(calls[name], ops, None)) == grpc.StatusCode.UNAUTHENTICATED, name

    referee.run(main)


def test_a_bot_that_tries_to_cancel_its_own_match_is_refused() -> None:
    """The bot holds its seat token and the referee's address: neither its token nor no token
    lets it cancel the match (the arena would leave the game unrated)."""
    async def main() -> None:
        async with referee.open_referee() as ref:
            spec = MatchSpec(players=("cheat", "honest"), match_id="m",
                             rules=RuleSet.preset("short", target=10))
            table = ref.create_match(spec)
            tokens = [link.token for link in table.links]
            refusals: list[grpc.StatusCode] = []
            pick = knock_first(random.Random(1))

            async def cheat(msg: bot_pb2.RefereeMessage, client: Client) -> common_pb2.Action | None:
                if not refusals:
                    async with grpc.aio.insecure_channel(ref.address) as ch:
                        ops = referee_pb2_grpc.RefereeServiceStub(ch)
                        for md in (None, referee.lowlevel.operator_metadata(client.token)):
                            refusals.append(await _status(_calls("m")["CancelMatch"], ops, md))
                return pick(msg.action_request)

            async with trio.open_nursery() as n:
                n.start_soon(referee.aio, Client(ref.address, tokens[0], "cheat").play(cheat))
                n.start_soon(referee.aio, Client(ref.address, tokens[1], "honest").play())
            assert refusals == [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED]
            assert table.report is not None and table.report.termination == "normal"

    referee.run(main)


def test_a_cancelled_match_reports_the_games_it_played() -> None:
    """GetMatch's status of a match cancelled after some games (it reported games and totals of 0)."""
    async def main() -> None:
        async with referee.open_referee() as ref:
            rules = RuleSet.preset("short", target=10, games=50)
            table = ref.create_match(MatchSpec(players=("a", "b"), match_id="m", rules=rules))
            tokens = [link.token for link in table.links]
            games_done = 0

            def stop(msg: bot_pb2.RefereeMessage) -> bool:
                nonlocal games_done
                games_done += msg.WhichOneof("kind") == "game_finished"
                return False

            async with trio.open_nursery() as n:
                n.start_soon(referee.aio, Client(ref.address, tokens[0]).play(stop=stop))
                n.start_soon(referee.aio, Client(ref.address, tokens[1]).play())
                while games_done < 4:
                    await trio.sleep(0.01)
                table.cancel("enough")  # what CancelMatch does
            await table.finished.wait()
            result = match_status(table).result  # what GetMatch answers
            assert result.termination == common_pb2.TERMINATION_ABORTED
            played = len(result.games)
            assert played >= 4
            assert sum(result.games_won) == played
            assert list(result.total_points) == [sum(g.final_totals[s] for g in result.games) for s in (0, 1)]
            assert sum(result.total_points) > 0
            report = table.report
            assert report is not None and report.outcome is not None and report.winner is None
            assert list(report.outcome.totals) == list(result.total_points)

    referee.run(main)


def test_one_bot_token_holds_at_most_one_seat() -> None:
    token = "t" * 32
    with pytest.raises(ValueError, match="at most one seat"):
        MatchSpec(players=("a", "b"), seat_tokens=(token, token))
    with pytest.raises(ValueError, match="at most one seat"):
        with_seat_tokens(MatchSpec(players=("a", "b")),
                         [BotLaunch(remote_token=token), BotLaunch(remote_token=token)])
    # One program seated twice: each instance gets its own token.
    same = BotLaunch(command=("{python}", "-m", "sample_bots.random_bot"))
    spec = with_seat_tokens(MatchSpec(players=("a", "b")), [same, same])
    assert len(set(spec.seat_tokens)) == 2

    async def main() -> None:
        async with referee.open_referee() as ref, grpc.aio.insecure_channel(ref.address) as ch:
            ops = referee_pb2_grpc.RefereeServiceStub(ch)
            request = referee_pb2.CreateMatchRequest(
                seats=[referee_pb2.SeatSpec(name="a", token=token), referee_pb2.SeatSpec(name="b", token=token)])
            call = ops.CreateMatch(request, metadata=referee.lowlevel.operator_metadata(ref.operator_token))
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await referee.aio(_unary(call))
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "at most one seat" in (e.value.details() or "")

    referee.run(main)


TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
"""(``referee.lowlevel.OPERATOR_TOKEN_ENV``, spelled out: the environment a user sets.)"""
ROOT = str(Path(__file__).resolve().parent.parent)
ENV = {**{k: v for k, v in os.environ.items() if k != TOKEN_ENV}, "PYTHONPATH": ROOT}
"""The tests' environment without an operator token."""


def _serve(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays", "r", *args],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**ENV, **(env or {})},
    )
    assert proc.stdout is not None
    return proc, [proc.stdout.readline(), proc.stdout.readline()]


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=20)


def _get_code(address: str, token: str) -> grpc.StatusCode:
    with grpc.insecure_channel(address) as ch:
        ops = referee_pb2_grpc.RefereeServiceStub(ch)
        try:
            ops.ListMatches(referee_pb2.ListMatchesRequest(), metadata=referee.lowlevel.operator_metadata(token))
        except grpc.RpcError as e:
            return e.code()
    return grpc.StatusCode.OK


def test_referee_serve_creates_reads_and_tells_where_its_token_is(tmp_path: Path) -> None:
    # Default: a file in the server's directory, created with 256 random bits, mode 0600.
    proc, lines = _serve([], tmp_path)
    try:
        path = tmp_path / "operator-token"
        assert lines[1].strip() == f"operator token: created {path} (mode 0600)", lines
        token = path.read_text().strip()
        assert len(token) == 64 and int(token, 16) >= 0
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert token not in "".join(lines)
        address = lines[0].split()[-1]
        assert _get_code(address, token) == grpc.StatusCode.OK
        assert _get_code(address, "0" * 64) == grpc.StatusCode.PERMISSION_DENIED
    finally:
        _stop(proc)
    # An explicit file is read as it is; the environment variable is the other way.
    given = tmp_path / "mine"
    given.write_text("my-operator-secret-123\n")
    given.chmod(0o600)
    for args, extra, expect, secret in (
        (["--operator-token-file", str(given)], {}, f"operator token: {given}", "my-operator-secret-123"),
        ([], {TOKEN_ENV: "from-env-secret-4567"},
         f"operator token: from the environment variable {TOKEN_ENV}", "from-env-secret-4567"),
    ):
        proc, lines = _serve(args, tmp_path, extra)
        try:
            assert lines[1].strip() == expect, lines
            assert _get_code(lines[0].split()[-1], secret) == grpc.StatusCode.OK
        finally:
            _stop(proc)
    # An unusable token file: one line, exit 2.
    (tmp_path / "short").write_text("abc\n")
    (tmp_path / "short").chmod(0o600)
    bad = subprocess.run([sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0",
                          "--operator-token-file", str(tmp_path / "short")],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env=ENV)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "at least 16 characters" in bad.stderr


def _serve_fails(args: list[str], cwd: Path) -> str:
    """``referee serve`` that must refuse to start: exit 2 and one line on stderr, which is returned."""
    bad = subprocess.run([sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0", *args],
                         capture_output=True, text=True, timeout=60, cwd=cwd, env=ENV)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, (bad.returncode, bad.stderr)
    return bad.stderr.strip()


def test_a_token_file_others_may_read_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "operator-token"
    path.write_text(secrets.token_hex(32) + "\n")
    for mode in (0o644, 0o640, 0o604, 0o620):
        path.chmod(mode)
        line = _serve_fails([], tmp_path)
        assert str(path) in line and "others may read it" in line and "chmod 600" in line, line
    path.chmod(0o600)
    proc, lines = _serve([], tmp_path)
    _stop(proc)
    assert lines[1].strip() == f"operator token: {path}", lines


def test_a_token_file_tracked_by_git_is_refused(tmp_path: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    path = tmp_path / "operator-token"
    path.write_text(secrets.token_hex(32) + "\n")
    path.chmod(0o600)
    subprocess.run([*git, "-C", str(tmp_path), "add", "operator-token"], check=True)
    line = _serve_fails([], tmp_path)
    assert str(path) in line and "tracked by git" in line and "git rm --cached" in line, line
    # Also as an explicit --operator-token-file from another folder.
    line = _serve_fails(["--operator-token-file", str(path)], tmp_path.parent)
    assert "tracked by git" in line, line
    # Untracked (removed from the index), the same file is the server's secret again.
    subprocess.run([*git, "-C", str(tmp_path), "rm", "-q", "--cached", "operator-token"], check=True)
    proc, lines = _serve([], tmp_path)
    _stop(proc)
    assert lines[1].strip() == f"operator token: {path}", lines


def test_the_token_once_published_with_the_source_is_refused(tmp_path: Path) -> None:
    published = "d22b01ab4e87f415446d93c83223928f99faa96d3d9fe1c99b321274f1b0a080"
    path = tmp_path / "operator-token"
    path.write_text(published + "\n")
    path.chmod(0o600)
    assert "published with the source" in _serve_fails([], tmp_path)
    path.unlink()
    env_line = subprocess.run([sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path,
                              env={**ENV, TOKEN_ENV: published})
    assert env_line.returncode == 2 and "published with the source" in env_line.stderr, env_line.stderr
