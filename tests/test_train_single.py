"""The Gymnasium single-agent wrapper (train_env.single): Gymnasium's check_env passes; the other
seats are played in process by a sample bot, a kit bot, a ``decide`` function or a policy; an
illegal action raises, or is replaced and flagged when asked."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from gin_arena.v2 import bot_pb2
from sample_bots import greedy_bot
from sample_bots.random_bot import RandomBot
from train_env.single import PolicyOpponent, SingleAgentEnv


@pytest.mark.parametrize(("game", "options"), [
    ("gin", {"opponents": "greedy"}), ("gin", {"opponents": "random", "encoding": "pettingzoo"}),
    ("rummy", {"seats": 3, "seat": 1, "opponents": ["greedy", "hoarder"]}),
])
def test_gymnasiums_check_env_passes(game: str, options: dict[str, Any]) -> None:
    check_env(SingleAgentEnv(game, illegal="random", **options), skip_render_check=True)


def _episode(env: SingleAgentEnv, seed: int) -> tuple[float, int]:
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, steps, done = 0.0, 0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total, steps, done = total + reward, steps + 1, terminated or truncated
    return total, steps


def test_the_same_seed_gives_the_same_episode() -> None:
    first, again = (_episode(SingleAgentEnv("gin", opponents="expert"), 4) for _ in range(2))
    assert first == again


def test_a_sample_bot_plays_the_other_seat_better_than_chance() -> None:
    """A random learner scores less against the greedy sample bot than against a random one (the
    same seeds: the episodes are reproducible, the comparison is not a matter of luck)."""
    against = {name: sum(_episode(SingleAgentEnv("gin", opponents=name, termination="game"), s)[0] for s in range(3))
               for name in ("greedy", "random")}
    assert against["greedy"] < against["random"], against


def test_a_decide_function_a_kit_bot_and_a_policy_may_play_the_other_seats() -> None:
    asked: list[int] = []

    def first(request: bot_pb2.ActionRequest) -> Any:
        asked.append(request.rummy.seat)
        return request.legal_actions[0]

    env = SingleAgentEnv("rummy", seats=4, seat=0, termination="deal", opponents=[
        first, RandomBot(seed=1), PolicyOpponent(lambda obs: int(np.flatnonzero(obs["action_mask"])[-1]))])
    _, steps = _episode(env, 2)
    assert steps > 0 and asked and set(asked) == {1}
    gin_env = SingleAgentEnv("gin", opponents=greedy_bot.decide, termination="deal")
    assert _episode(gin_env, 3)[1] > 0


def test_an_illegal_action_raises_unless_asked_to_play_a_random_one() -> None:
    env = SingleAgentEnv("gin")
    obs, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="is not legal now"):
        env.step(illegal)
    lenient = SingleAgentEnv("gin", illegal="random", illegal_penalty=-5.0)
    lenient.reset(seed=1)
    _, reward, _, _, info = lenient.step(illegal)
    assert info["illegal"] is True and reward <= -5.0
    assert lenient.action_masks().dtype == bool


def test_bad_opponents_get_clear_errors() -> None:
    with pytest.raises(ValueError, match="no in-process opponent 'hoarder' for gin; known: random, greedy, expert"):
        SingleAgentEnv("gin", opponents="hoarder").reset(seed=0)
    with pytest.raises(ValueError, match="1 opponents for the 3 other seats"):
        SingleAgentEnv("rummy", seats=4, opponents=["random"])
    with pytest.raises(ValueError, match="seat 2: the table has seats 0-1"):
        SingleAgentEnv("gin", seat=2)


def test_a_batch_steps_its_games_together_and_resets_each_at_its_end() -> None:
    from train_env.batch import BatchEnv

    batch = BatchEnv("gin", n=4, termination="deal")
    first = batch.reset(seed=9)
    assert first.observation["observation"].shape == (4, *batch.encoding.shape)
    assert first.observation["action_mask"].shape == (4, batch.encoding.actions)
    again = BatchEnv("gin", n=4, termination="deal").reset(seed=9)
    assert np.array_equal(first.observation["observation"], again.observation["observation"])
    rng = np.random.default_rng(0)
    now, totals, ended = first, np.zeros((4, 2)), 0
    for _ in range(400):
        # a knock (index 56 and up) whenever one is legal, else at random: deals end by knocks
        actions = [int(legal[-1] if legal[-1] >= 56 else rng.choice(legal))
                   for legal in (np.flatnonzero(m) for m in now.observation["action_mask"])]
        now = batch.step(actions)
        totals += now.rewards
        ended += int(now.done.sum())
        assert all(m.sum() > 0 for m in now.observation["action_mask"]), "every game asks its seat to move"
    assert ended == batch.episodes and ended >= 4 and totals.sum() > 0
    with pytest.raises(ValueError, match=r"actions of shape \(3,\); the batch needs \(4,\)"):
        batch.step([0, 0, 0])
