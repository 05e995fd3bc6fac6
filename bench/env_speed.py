"""Training-environment steps per CPU-second on one core (docs/performance.md#training-environment):
random legal actions, the observation and the action mask built at every step, for our PettingZoo
AEC environment and our batch environment (Gin, default encoding), and — in the same run, when
installed — RLCard's ``gin-rummy`` environment and OpenSpiel's ``gin_rummy`` driven from Python with
``observation_tensor`` and ``legal_actions_mask`` at every decision (``pip install rlcard
open-spiel``; a missing peer is skipped and said so).

    python bench/env_speed.py [--seconds 5] [--batch 64] [--cpu 0] [--profile]

A step is one decision of one seat. Time is the process's CPU time (``time.process_time``), the
process pinned to one CPU (``--cpu``; -1: not pinned). ``--profile`` prints where the AEC
environment's time goes (cProfile, the top functions by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from train_env import raw_env
from train_env.batch import BatchEnv

Runner = Callable[[float], int]
"""Runs for about that many CPU seconds; returns the steps taken."""


def ours_aec(seconds: float) -> int:
    env = raw_env("gin")
    rng = np.random.default_rng(0)
    steps, seed = 0, 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        env.reset(seed=seed)
        seed += 1
        while not any(env.terminations.values()) and not any(env.truncations.values()):
            obs = env.observe(env.agent_selection)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    return steps


def ours_batch(seconds: float, n: int = 64) -> int:
    batch = BatchEnv("gin", n=n)
    now = batch.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        masks = now.observation["action_mask"].astype(np.float64)
        # a random legal index per game: the argmax of random numbers where the mask is 1
        now = batch.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        steps += n
    return steps


def rlcard_env(seconds: float) -> int:
    import rlcard  # type: ignore[import-not-found,import-untyped,unused-ignore]

    env = rlcard.make("gin-rummy", config={"seed": 0})
    rng = random.Random(0)
    steps = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(rng.choice(list(state["legal_actions"])))
            steps += 1
    return steps


def openspiel_env(seconds: float) -> int:
    import pyspiel  # type: ignore[import-not-found,import-untyped,unused-ignore]

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(0)
    steps = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, probs)[0])
                continue
            player = state.current_player()
            state.observation_tensor(player)
            state.legal_actions_mask(player)
            state.apply_action(rng.choice(state.legal_actions(player)))
            steps += 1
    return steps


def measure(name: str, run: Runner, seconds: float) -> float | None:
    start = time.process_time()
    try:
        steps = run(seconds)
    except ImportError as e:
        print(f"{name:<28} skipped: not installed ({e.name}; pip install rlcard open-spiel)")
        return None
    rate = steps / (time.process_time() - start)
    print(f"{name:<28} {rate:>10,.0f} steps per CPU-second ({steps:,} steps)")
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per environment")
    parser.add_argument("--batch", type=int, default=64, help="games in the batch environment")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU to pin to (-1: none)")
    parser.add_argument("--profile", action="store_true", help="profile the AEC environment")
    args = parser.parse_args()
    if args.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; pinned to CPU {args.cpu}")
    rates = {
        "ours: AEC": measure("ours: AEC (PettingZoo)", ours_aec, args.seconds),
        "ours: batch": measure(f"ours: batch of {args.batch}", lambda s: ours_batch(s, args.batch), args.seconds),
        "RLCard": measure("RLCard gin-rummy", rlcard_env, args.seconds),
        "OpenSpiel": measure("OpenSpiel gin_rummy", openspiel_env, args.seconds),
    }
    for ours in ("ours: AEC", "ours: batch"):
        for peer in ("RLCard", "OpenSpiel"):
            a, b = rates[ours], rates[peer]
            if a and b:
                print(f"{ours} / {peer}: {a / b:.2f}x")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(ours_aec, args.seconds)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
