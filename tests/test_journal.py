"""Journaled matches: the replay reaches the disk as the match goes (``referee.table.journal``).

A finished replay is byte for byte what the in-memory recorder writes; while a deal runs, the
journal's files (mode 0600) hold only what a spectator may see of it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
import trio.testing

import referee
import referee.lowlevel
from arena.cli import main as arena_main
from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2, referee_pb2_grpc
from gin_arena.v2.games import gin_pb2
from referee import MatchSpec
from referee.gin import DECK
from referee.lowlevel import Table
from tests._bots import Client, knock_first
from tests._wait import HANG_S
from tests.test_audit import Answer, Behaviour, _Session, greedy, small_run


def _run(spec: MatchSpec, behaviours: tuple[Behaviour, Behaviour], replay_dir: Path | None) -> list[bytes]:
    """Play the match on a mock clock (the same answers at the same times, every run); the
    lines the recorder kept in memory (none when it journaled)."""

    async def main() -> list[bytes]:
        table = Table(spec, replay_dir, lambda t: None, quiet=True)
        async with trio.open_nursery() as nursery:
            for link, behave in zip(table.links, behaviours, strict=True):
                s = _Session(f"{link.name}-v1", bytes([link.seat + 1]) * 8, behave,
                             random.Random(link.seat), table, link, nursery)
                assert link.attach(s) is None
            await table.run()
            nursery.cancel_scope.cancel()
        return list(table._replay.lines)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_journaled_replay_is_byte_identical_to_the_replay_kept_in_memory(tmp_path: Path) -> None:
    for name, spec, behaviours in small_run():
        in_memory = _run(spec, behaviours, None)
        assert in_memory, name
        folder = tmp_path / name
        assert _run(spec, behaviours, folder) == [], f"{name}: a journaled match keeps no lines in memory"
        replay = folder / f"{spec.match_id}.jsonl"
        assert replay.read_bytes() == b"".join(line + b"\n" for line in in_memory), name
        assert stat.S_IMODE(replay.stat().st_mode) == 0o644, "a finished replay is public, as before"
        assert sorted(p.name for p in folder.iterdir()) == [replay.name], "the journal's files are gone"


_CARD = re.compile(r"\b(?:" + "|".join(re.escape(str(c)) for c in DECK) + r")\b")


def test_while_a_deal_runs_its_journal_holds_only_what_a_spectator_sees(tmp_path: Path) -> None:
    spec = small_run()[0][1]
    snapshots: list[dict[str, bytes]] = []

    def snooping(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        if n in (3, 9, 17) or (req.gin.deal_number == 2 and len(snapshots) < 4):
            snap = {}
            for p in sorted(tmp_path.iterdir()):
                if p.suffix in (".journal", ".live"):
                    assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name
                    snap[p.suffix] = p.read_bytes()
            snapshots.append(snap)
        return greedy(n, req, rng)

    _run(spec, (snooping, greedy), tmp_path)
    assert len(snapshots) >= 4
    replay = [json.loads(line) for line in (tmp_path / f"{spec.match_id}.jsonl").read_bytes().splitlines()]
    deals = [r for r in replay if r["type"] == "deal"]
    for snap in snapshots:
        journal = [json.loads(line) for line in snap[".journal"].splitlines()]
        live = [json.loads(line) for line in snap[".live"].splitlines()]
        assert live and live[0]["type"] == "deal", "a deal is running"
        running = next(d for d in deals if d["seq"] == live[0]["seq"])
        assert all(r["seq"] < running["seq"] for r in journal), "no line of the running deal in the journal"
        assert [r["seq"] for r in journal + live] == list(range(len(journal) + len(live))), "nothing lost"
        for r in live:
            assert not {"deck", "key", "card", "detail", "raw_card"} & set(r), r
            for card in _CARD.findall(json.dumps({k: v for k, v in r.items() if k not in ("prev",)})):
                assert r["type"] == "action" and card in r["action"], (card, r)
        text = (snap[".journal"] + snap[".live"]).decode()
        assert running["key"] not in text and ",".join(running["deck"]) not in text
        assert json.dumps(running["deck"]) not in text


# ----------------------------------------------------------------------------------------------
# real processes: `referee serve` killed with SIGKILL mid-match, then started again
# ----------------------------------------------------------------------------------------------
TOKEN = "journal-test-operator-token-0123456789"
"""The operator token the test's referees and arenas share (through the environment)."""
ENV = {**os.environ, "GIN_ARENA_OPERATOR_TOKEN": TOKEN}
OPS = referee.lowlevel.operator_metadata(TOKEN)


def _start_referee(replays: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays", str(replays)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("referee listening on "), line
    return proc, line.split()[-1]


SEED = hashlib.sha256(b"killed mid-match").digest()


async def _play_until_deal(address: str, deal: int, replays: Path) -> tuple[str, dict[str, bytes]]:
    """Create a match, play it with two in-process bots until seat 1's first request of game 1
    deal ``deal``; there, read the journal's files (what a bot on the machine could try)."""
    async with grpc.aio.insecure_channel(address) as channel:
        created = await referee_pb2_grpc.RefereeServiceStub(channel).CreateMatch(referee_pb2.CreateMatchRequest(
            seats=[referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")],
            gin=gin_pb2.RuleSet(name="classic"), time_control=common_pb2.TimeControl(text="st=30"),
            seed=SEED, mix_bot_nonces=True), metadata=OPS)
    paused = asyncio.Event()
    snap: dict[str, bytes] = {}
    pick = knock_first(random.Random(7))

    async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
        req = msg.action_request
        if req.gin.deal_number >= deal and not paused.is_set():
            for p in replays.iterdir():
                assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name
                snap[p.suffix] = p.read_bytes()
            paused.set()
            await asyncio.sleep(3600)  # until the referee is killed
        return pick(req)

    bots = [Client(address, t.token, name=f"bot{t.seat}", nonce=bytes([t.seat + 1]) * 8) for t in created.seat_tokens]
    tasks = [asyncio.ensure_future(bots[0].play()), asyncio.ensure_future(bots[1].play(decide))]
    reached = asyncio.ensure_future(paused.wait())
    # A bound that only catches a hang; a bot that ended first says why (its exception, or the end).
    await asyncio.wait([reached, *tasks], timeout=HANG_S, return_when=asyncio.FIRST_COMPLETED)
    for task in (reached, *tasks):
        if not task.done():
            task.cancel()
    if not paused.is_set():
        ended = [f"bot{i}: {t.exception() or t.result()!r}" for i, t in enumerate(tasks)
                 if t.done() and not t.cancelled()]
        raise AssertionError(f"deal {deal} not reached within {HANG_S:.0f} s; ended first: {ended or 'none (a hang)'}")
    return created.match_id, snap


def test_a_referee_killed_mid_match_lists_it_interrupted_after_restart_and_its_replay_audits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replays = tmp_path / "replays"
    proc, address = _start_referee(replays)
    try:
        match_id, snap = asyncio.run(_play_until_deal(address, 3, replays))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert sorted(snap) == [".journal", ".live", ".seed"]
    live = [json.loads(line) for line in snap[".live"].splitlines()]
    assert live[0]["type"] == "deal" and live[0]["deal"] == 3 and "deck" not in live[0]
    assert all("card" not in r for r in live)

    proc, address = _start_referee(replays)
    try:
        with grpc.insecure_channel(address) as channel:
            ops = referee_pb2_grpc.RefereeServiceStub(channel)
            listed = ops.ListMatches(referee_pb2.ListMatchesRequest(), metadata=OPS)
            fetched = ops.GetReplay(referee_pb2.GetReplayRequest(match_id=match_id), metadata=OPS).replay
            with pytest.raises(grpc.RpcError) as unknown:
                ops.GetReplay(referee_pb2.GetReplayRequest(match_id="no-such-match"), metadata=OPS)
            assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    (status,) = [m for m in listed.matches if m.match_id == match_id]
    assert status.state == referee_pb2.MATCH_STATE_INTERRUPTED
    assert status.result.termination == common_pb2.TERMINATION_INTERRUPTED
    assert status.result.seed == SEED, "the seed of an interrupted match is revealed"
    assert sorted(p.name for p in replays.iterdir()) == [f"{match_id}.jsonl"]
    replay = replays / f"{match_id}.jsonl"
    assert Path(status.replay_path) == replay
    assert fetched == replay.read_bytes(), "GetReplay hands out the interrupted replay"
    records = [json.loads(line) for line in replay.read_bytes().splitlines()]
    assert [r["deal"] for r in records if r["type"] == "deal_end"] == [1, 2], "up to the last complete deal"
    assert records[-1]["termination"] == "interrupted"
    assert arena_main(["audit", str(replay)]) == 0
    out = capsys.readouterr().out
    assert "interrupted" in out and "after game 1 deal 2" in out, out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _referee_at(address: str, replays: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--listen", address, "--replays",
                             str(replays)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV)
    assert proc.stdout is not None and proc.stdout.readline().startswith("referee listening on ")
    return proc


def test_creating_a_match_on_a_killed_referee_says_it_went_away_and_a_landed_retry_is_kept(tmp_path: Path) -> None:
    """A ``CreateMatch`` that meets an unreachable referee is tried again (a first attempt that
    landed answers ``ALREADY_EXISTS`` and the match is kept), then stops with one clear error."""
    from referee.play.hosts import RemoteHost

    address = f"127.0.0.1:{_free_port()}"
    proc = _referee_at(address, tmp_path / "srv")
    spec = MatchSpec(players=("a", "b"), match_id="m-landed", seed=b"s" * 32)

    async def landed() -> str:
        host = RemoteHost(address, address, TOKEN, retries=2)
        await host.open()
        try:
            await host.create(spec)
            real = host.stub.CreateMatch
            calls: list[str] = []

            def flaky(request: Any, **kw: Any) -> Any:  # the first call "fails" after it landed
                calls.append("x")
                if len(calls) == 1:
                    raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                               "Stream removed", None)
                return real(request, **kw)

            host.stub.CreateMatch = flaky  # type: ignore[assignment]
            match: Any = await host.create(spec)
            assert len(calls) == 2
            return str(match.match_id)
        finally:
            await host.close()

    async def gone() -> str:
        host = RemoteHost(address, address, TOKEN, retries=2)
        await host.open()
        try:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            with pytest.raises(ConnectionError) as e:
                await host.create(MatchSpec(players=("a", "b"), match_id="m-after", seed=b"s" * 32))
            return str(e.value)
        finally:
            await host.close()

    try:
        assert referee.run(landed) == "m-landed"
        said = referee.run(gone)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert said.startswith(f"the referee at {address} went away (UNAVAILABLE"), said


def test_a_replay_the_killed_referee_can_no_longer_hand_out_stops_the_match_instead_of_losing_it(
        tmp_path: Path) -> None:
    """The race behind a resumed run auditing 15 of its 16 replays: the arena saw a match over,
    then the referee was killed before ``GetReplay``. The fetch must say the referee went away
    (the game is then played again on ``--resume``), not record the result without its replay."""
    from referee.play.hosts import RemoteHost

    address, fetched = f"127.0.0.1:{_free_port()}", tmp_path / "fetched"
    fetched.mkdir()
    proc = _referee_at(address, tmp_path / "srv")

    async def main() -> str:
        host = RemoteHost(address, address, TOKEN, replay_dir=fetched, retries=1)
        await host.open()
        try:
            matches = []
            for mid in ("m-kept", "m-lost"):  # both cancelled before a bot connects: over at once
                match = await host.create(MatchSpec(players=("a", "b"), match_id=mid, seed=SEED))
                await host.cancel_match(mid, "the test is over")
                await match.follow()
                matches.append(match)
            kept, lost = matches
            assert await kept.replay(), "a referee that is up hands the replay out"
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            with pytest.raises(ConnectionError) as gone:
                await lost.replay()
            return str(gone.value)
        finally:
            await host.close()

    try:
        said = referee.run(main)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert said.startswith(f"the referee at {address} went away (UNAVAILABLE"), said
    assert sorted(p.name for p in fetched.iterdir()) == ["m-kept.jsonl"]


GAMES = 8
"""The killed run's games, two at a time: the referee goes after two replays, with three rounds
of games still to play (however late this test notices the second replay)."""


def test_a_remote_run_says_one_line_when_its_referee_is_killed_and_resumes(tmp_path: Path) -> None:
    address, replays, run = f"127.0.0.1:{_free_port()}", tmp_path / "srv", tmp_path / "run"
    (tmp_path / "bots.toml").write_text(
        '[[bot]]\nname = "a"\ncommand = ["{python}", "-m", "arena._testbot"]\n\n'
        '[[bot]]\nname = "b"\ncommand = ["{python}", "-m", "arena._testbot"]\n')
    proc = _referee_at(address, replays)
    try:
        tour = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(tmp_path / "bots.toml"), "--games",
             str(GAMES), "--concurrency", "2", "--rules", "short", "--tc", "st=1", "--referee", address, "--out",
             str(run), "--no-progress", "--log-json"],  # (the log's lines as JSON: told apart from what it says)
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        while len(list(replays.glob("*.jsonl"))) < 2 and tour.poll() is None:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    _, err = tour.communicate(timeout=HANG_S)
    said = [line for line in err.splitlines() if not line.startswith(("{", "progress: "))]
    assert tour.returncode == 1 and "Traceback" not in err, err[-3000:]
    assert len(said) == 1 and said[0].startswith(f"arena: the run stopped: the referee at {address} went away"), said
    assert f"arena tournament --resume {run}" in said[0]

    proc = _referee_at(address, replays)
    try:
        resumed = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--resume", str(run),
                                  "--no-progress"], capture_output=True, text=True, timeout=HANG_S, env=ENV)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads((run / "results.json").read_text())["games_played"] == GAMES
    audited = subprocess.run([sys.executable, "-m", "arena.cli", "audit", str(run)], capture_output=True, text=True,
                             timeout=HANG_S)
    assert audited.returncode == 0 and f"{GAMES} passed" in audited.stdout, audited.stdout[-2000:]
