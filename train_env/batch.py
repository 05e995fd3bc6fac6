"""A batch of games stepped together (docs/training.md#batches): NumPy arrays in and out, each game
reset as soon as its episode ends. Every game's seat to move acts in each step; the observations are
of the seats to move (what each was told), so one policy plays every seat of every game (self-play).
The engine runs compiled when the package was installed compiled (``GIN_ARENA_COMPILE=1``)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .aec import GameEnv

MAX_BATCH = 4096
"""Games a batch may hold (each keeps its own match and observations in memory)."""


@dataclass(frozen=True)
class BatchStep:
    """What a batch of games shows after a reset or a step."""

    observation: dict[str, npt.NDArray[Any]]
    """By key of the encoding's observation dict: the arrays of the N seats to move, stacked
    (``observation``: (N, *shape) float32; ``action_mask``: (N, actions) int8; any extras)."""
    seat: npt.NDArray[np.int64]
    """(N,): the seat to move in each game."""
    rewards: npt.NDArray[np.float32]
    """(N, seats): each seat's points from the step (the game's own), the finished episode's last
    ones for a game that was reset."""
    done: npt.NDArray[np.bool_]
    """(N,): the game's episode ended with the step (its observation is then the new episode's first)."""


class BatchEnv:
    """``n`` games of ``game``; the options are :class:`train_env.aec.GameEnv`'s."""

    def __init__(self, game: str = "gin", n: int = 16, **options: Any):
        if not 1 <= n <= MAX_BATCH:
            raise ValueError(f"n={n}: a batch holds 1-{MAX_BATCH} games (MAX_BATCH)")
        self.envs = [GameEnv(game, **options) for _ in range(n)]
        """The games (each a PettingZoo AEC environment)."""
        first = self.envs[0]
        self.seats = first.seats
        """Seats at each table."""
        self.encoding = first.encoding
        """The observation encoding."""
        self.episodes = 0
        """Episodes finished so far."""
        self._rng = random.Random()

    def reset(self, seed: int | None = None) -> BatchStep:
        """Every game anew (game ``i`` from the ``i``-th seed of ``seed``'s sequence)."""
        if seed is not None:
            self._rng = random.Random(seed)
        for env in self.envs:
            env.reset(seed=self._rng.getrandbits(63))
        zeros = np.zeros((len(self.envs), self.seats), dtype=np.float32)
        return self._gather(zeros, np.zeros(len(self.envs), dtype=np.bool_))

    def step(self, actions: npt.ArrayLike) -> BatchStep:
        """Play action ``actions[i]`` (an index) for the seat to move in game ``i``."""
        chosen = np.asarray(actions, dtype=np.int64)
        if chosen.shape != (len(self.envs),):
            raise ValueError(f"actions of shape {chosen.shape}; the batch needs ({len(self.envs)},)")
        rewards = np.zeros((len(self.envs), self.seats), dtype=np.float32)
        done = np.zeros(len(self.envs), dtype=np.bool_)
        for i, (env, action) in enumerate(zip(self.envs, chosen.tolist(), strict=True)):
            env.step(action)
            rewards[i] = [env.rewards[a] for a in env.possible_agents]
            if any(env.terminations.values()) or any(env.truncations.values()):
                done[i] = True
                self.episodes += 1
                env.reset(seed=self._rng.getrandbits(63))
        return self._gather(rewards, done)

    def _gather(self, rewards: npt.NDArray[np.float32], done: npt.NDArray[np.bool_]) -> BatchStep:
        observations = [env.observe(env.agent_selection) for env in self.envs]
        stacked = {key: np.stack([o[key] for o in observations]) for key in observations[0]}
        seat = np.array([env.possible_agents.index(env.agent_selection) for env in self.envs], dtype=np.int64)
        return BatchStep(stacked, seat, rewards, done)
