"""The bridge back: a policy runs as a bot over gRPC (sample_bots.kit.policy) through a real
referee, whole matches, and at every one of its decisions the observation it built from the
referee's messages is byte for byte the one the training environment builds from the engine, the
match replayed move for move from the referee's replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee import BotLaunch, MatchSpec, games
from tests._train_policy import digest
from tests._wait import until
from tests.test_hosted_ladder import ENV, Server, _arena, _greedy_bot
from train_env import raw_env

ROOT = Path(__file__).resolve().parent.parent
LADDER = """
[[play]]
preset = "short"
tc = "st=10"
"""
"""The ladder the hosted test serves: short Gin games, a generous clock (a loaded machine is slow)."""


def _policy_bot(record: Path, game: str, encoding: str) -> BotLaunch:
    command = [sys.executable, "-m", "sample_bots.kit.policy", "--policy", "tests._train_policy:lowest",
               "--games", game]
    if encoding:
        command += ["--encoding", encoding]
    return BotLaunch(command=tuple(command), cwd=str(ROOT), env=(("TRAIN_RECORD", str(record)),))


def _sample_bot(game: str, name: str) -> BotLaunch:
    found = next(b for b in games.get(game).bots if b.name == name)
    return BotLaunch(command=tuple(sys.executable if part == "{python}" else part for part in found.command))


@pytest.mark.parametrize(("game", "seats", "encoding", "opponent"), [
    ("gin", 2, "", "greedy"), ("gin", 2, "openspiel", "expert"), ("rummy", 3, "", "greedy"),
])
def test_the_policy_bot_sees_over_grpc_what_the_environment_shows(
        tmp_path: Path, game: str, seats: int, encoding: str, opponent: str) -> None:
    record = tmp_path / "seen.jsonl"
    me = 1
    seed = bytes(range(32))
    bots = [_sample_bot(game, opponent) for _ in range(seats)]
    bots[me] = _policy_bot(record, game, encoding)
    players = tuple(f"p{i}" for i in range(seats))
    played = referee.play_match(MatchSpec(players=players, seed=seed, game=game), bots)
    assert played.report.termination == "normal", played.report.detail
    seen = [json.loads(line) for line in record.read_text().splitlines()]

    env = raw_env(game, seats=seats, encoding=encoding)
    env.reset(options={"match_seed": seed})
    wire = games.get(game).wire
    compared = 0
    for line in played.replay.decode().splitlines():
        rec = json.loads(line)
        if rec["type"] != "action":
            continue
        agent = f"player_{rec['seat']}"
        assert env.agent_selection == agent, f"decision {compared}: the environment asks {env.agent_selection}"
        if rec["seat"] == me:
            obs = env.observe(agent)
            assert digest(obs) == seen[compared]["digest"], f"the policy's decision {compared} differs"
            compared += 1
        env.step(env.index_of(wire.action_from_text(rec["action"])))
    assert compared == len(seen) and compared >= 10
    assert all(env.terminations.values()), "the environment's match ended where the referee's did"


def test_a_policy_bot_plays_on_arena_serves_ladder_with_matches_0(tmp_path: Path,
                                                                   procs: list[subprocess.Popen[str]]) -> None:
    """The bridge back to a hosted server: registered with ``arena bots add``, the policy bot connects
    with ``--matches 0`` like any registered bot and plays game after game on the ladder."""
    (tmp_path / "ladder.toml").write_text(LADDER, encoding="utf-8")
    server = Server(tmp_path)
    server.start()
    assert server.proc is not None
    procs.append(server.proc)
    tokens = {}
    for name in ("policy", "greedy"):
        added = _arena("bots", "add", name, "--dir", str(server.dir), cwd=tmp_path)
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip()
    record = tmp_path / "seen.jsonl"
    policy = subprocess.Popen(
        [sys.executable, "-m", "sample_bots.kit.policy", "--policy", "tests._train_policy:lowest",
         "--referee", server.address, "--token", tokens["policy"], "--matches", "0", "--name", "policy",
         "--idle-backoff-max", "1"],
        cwd=ROOT, env={**ENV, "TRAIN_RECORD": str(record)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        text=True)
    procs += [policy, _greedy_bot(server.address, tokens["greedy"], "greedy")]
    until(lambda: len(server.games("policy", "normal")) >= 2, "the policy bot playing on the ladder",
          alive=server.proc)
    assert policy.poll() is None, "a --matches 0 bot plays on"
    assert len(record.read_text().splitlines()) >= 10
