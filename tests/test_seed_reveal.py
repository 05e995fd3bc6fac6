"""A seed dealt to more than one game is not revealed to the seats at the end of the first:
a bot that keeps what ``MatchFinished`` tells it (one process playing match after match on its
bot token) would otherwise know every card of a duplicate pair's second game. The commitment
still goes out, the replay keeps the seed, and the audit checks it."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import trio

import referee
from referee import BotLaunch, MatchSpec, TimeControl
from referee.gin import RuleSet, commitment

SEED = bytes(range(32))


def _spec(match_id: str, players: tuple[str, str], tokens: tuple[str, str], reveal: bool) -> MatchSpec:
    return MatchSpec(
        players=players, rules=RuleSet.short(), time_control=TimeControl(per_move_ms=5_000), seed=SEED,
        reveal_seed=reveal, match_id=match_id, seat_tokens=tokens, connect_timeout_ms=20_000,
    )


async def _pair_then_revealed(tmp: Path, seen: dict[str, Path]) -> list[referee.PlayedMatch]:
    """Two long-lived bots play a duplicate pair (seed withheld) and then a third game on the
    same seed with the seed revealed (so the test sees what revealing looks like)."""
    tokens = {name: secrets.token_hex(24) for name in seen}
    launch = {name: BotLaunch(remote_token=t) for name, t in tokens.items()}
    played: list[referee.PlayedMatch] = []
    async with referee.open_match_context(replay_dir=tmp / "replays") as ctx, trio.open_nursery() as nursery:
        games = [("pair-0", ("a", "b"), False), ("pair-1", ("b", "a"), False), ("after", ("a", "b"), True)]
        procs = []
        for i, (match_id, players, reveal) in enumerate(games):
            spec = _spec(match_id, players, (tokens[players[0]], tokens[players[1]]), reveal)
            done = trio.Event()

            async def play(spec: MatchSpec = spec, players: tuple[str, str] = players, done: trio.Event = done) -> None:
                played.append(await ctx.play(spec, [launch[p] for p in players]))
                done.set()

            nursery.start_soon(play)
            if i == 0:  # the bots connect once the first match knows their tokens, and stay
                while match_id not in ctx.host.referee.tables:  # type: ignore[attr-defined]
                    await trio.sleep(0.01)
                for name in seen:
                    procs.append(await trio.lowlevel.open_process([
                        sys.executable, "-m", "arena._testbot", "--referee", ctx.bot_address, "--token",
                        tokens[name], "--name", name, "--matches", str(len(games)), "--seen", str(seen[name]),
                    ]))
            await done.wait()
        for p in procs:
            assert await p.wait() == 0
    return played


def test_a_reused_bot_never_hears_a_shared_seed(tmp_path: Path) -> None:
    seen = {"a": tmp_path / "a.seen", "b": tmp_path / "b.seen"}
    played = referee.run(_pair_then_revealed, tmp_path, seen)
    want = commitment(SEED).hex()
    for name, path in seen.items():
        lines = dict((line.split(" ", 1)[0], line.split()[1:]) for line in path.read_text().splitlines())
        assert sorted(lines) == ["after", "pair-0", "pair-1"], name
        for match_id in ("pair-0", "pair-1"):
            assert lines[match_id] == [want], f"{name} heard the seed of {match_id}: {lines[match_id]}"
        assert lines["after"] == [SEED.hex(), want]  # revealed when asked to
    for p in played:
        assert p.report.seed == SEED  # the operator has it
        path = tmp_path / f"{p.report.match_id}.jsonl"
        path.write_bytes(p.replay)
        assert SEED.hex() in p.replay.decode()  # the replay keeps it for the audit
        out = subprocess.run([sys.executable, "-m", "arena.cli", "audit", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
