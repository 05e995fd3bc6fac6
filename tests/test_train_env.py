"""The PettingZoo AEC environment (train_env): PettingZoo's own api_test and seed_test on Gin and
rummy, rewards that are the game's own points (checked against the engine played alone), the
three terminations, refusal of an illegal action, rendering, and that nothing the environment
exposes is (or holds) the engine's state."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test  # type: ignore[import-untyped]

from referee import games
from train_env import env, raw_env
from train_env.table import seed_bytes


@pytest.mark.parametrize(("game", "options"), [
    ("gin", {}), ("gin", {"preset": "oklahoma", "encoding": "pettingzoo"}), ("gin", {"encoding": "openspiel"}),
    ("rummy", {"seats": 2}), ("rummy", {"seats": 4, "preset": "michigan"}),
])
def test_pettingzoos_api_test_passes(game: str, options: dict[str, Any]) -> None:
    api_test(env(game, **options), num_cycles=400)


@pytest.mark.parametrize(("game", "options"), [("gin", {}), ("rummy", {"seats": 3})])
def test_pettingzoos_seed_test_passes(game: str, options: dict[str, Any]) -> None:
    seed_test(lambda: env(game, **options), num_cycles=400)


def _play(e: Any, seed: int, rng: random.Random) -> tuple[dict[str, float], list[tuple[int, int]]]:
    """One episode at random: each agent's total reward, and the (seat, action index) played."""
    e.reset(seed=seed)
    totals = {a: 0.0 for a in e.possible_agents}
    played = []
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        action = rng.choice(list(np.flatnonzero(obs["action_mask"])))
        played.append((e.possible_agents.index(agent), int(action)))
        e.step(action)
    return totals, played


def _engine_points(game: str, preset: str, seats: int, seed: int, played: list[tuple[int, int]],
                   encoding: str) -> tuple[list[int], list[games.Happening]]:
    """The same actions on the engine alone: the points of the games that ended, and what happened."""
    from gin_arena.v2 import bot_pb2
    from sample_bots.kit import encodings

    reg = games.get(game)
    enc = encodings.encoding(game, encoding)
    match = reg.game.new_match(reg.game.rules_preset(preset), seed_bytes(random.Random(seed).getrandbits(63)), seats)
    caches = [reg.wire.new_seat_cache() for _ in range(seats)]
    happened: list[games.Happening] = list(match.opening())
    points = [0] * seats
    for seat, index in played:
        assert match.decider == seat
        data, _ = reg.wire.request(match, seat, "m", 1, [1] * seats, 0, 1, caches[seat])
        request = bot_pb2.RefereeMessage.FromString(data).action_request
        action = next(a for a in request.legal_actions if enc.index(a, request) == index)
        step = list(match.apply(seat, reg.wire.action_from_proto(action)))
        for h in step:
            for s in range(seats):
                reg.wire.tell(match, h, s, 0, caches[s])
            if isinstance(h, games.GameOver):
                points = [p + q for p, q in zip(points, h.ranking.points, strict=True)]
        happened += step
    return points, happened


@pytest.mark.parametrize(("game", "preset", "seats"), [("gin", "classic", 2), ("rummy", "rummy", 3)])
def test_a_games_rewards_add_up_to_its_own_points(game: str, preset: str, seats: int) -> None:
    e = env(game, preset=preset, seats=seats, termination="game")
    for seed in range(2):
        totals, played = _play(e, seed, random.Random(seed))
        points, happened = _engine_points(game, preset, seats, seed, played, "")
        assert sum(isinstance(h, games.GameOver) for h in happened) == 1
        assert isinstance(happened[-1], games.GameOver) or any(isinstance(h, games.GameOver) for h in happened[-4:])
        assert [totals[a] for a in e.possible_agents] == points and any(points)


def test_termination_by_deal_ends_the_episode_at_the_first_deals_end() -> None:
    e = env("gin", termination="deal")
    totals, played = _play(e, 5, random.Random(5))
    _, happened = _engine_points("gin", "classic", 2, 5, played, "")
    ends = [i for i, h in enumerate(happened) if isinstance(h, games.DealOver)]
    assert len(ends) == 1 and not any(isinstance(h, games.Acted) for h in happened[ends[0]:])
    assert sum(totals.values()) >= 0


def test_a_whole_match_is_one_episode_by_default() -> None:
    e = env("gin", preset="short")
    totals, played = _play(e, 7, random.Random(7))
    points, happened = _engine_points("gin", "short", 2, 7, played, "")
    assert sum(isinstance(h, games.GameOver) for h in happened) >= 1
    assert [totals[a] for a in e.possible_agents] == points


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    e = raw_env("gin")
    e.reset(seed=1)
    agent = e.agent_selection
    obs = e.observe(agent)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=f"action {illegal} is not legal now"):
        e.step(illegal)
    assert e.agent_selection == agent and np.array_equal(e.observe(agent)["observation"], obs["observation"])


def test_bad_settings_get_clear_errors() -> None:
    with pytest.raises(ValueError, match="gin is played by 2-2 seats, not 3"):
        raw_env("gin", seats=3)
    with pytest.raises(ValueError, match="termination 'hand': one of deal, game, match"):
        raw_env("gin", termination="hand")
    with pytest.raises(ValueError, match="unknown game 'nope'"):
        raw_env("nope")


def test_render_shows_the_games_presentation_as_text_and_as_an_image() -> None:
    e = raw_env("gin", render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert "player_0" in text and "stock: 31 face down" in text and "hidden" in text
    seen = raw_env("gin", render_mode="ansi", render_audience=games.EVERYONE)
    seen.reset(seed=2)
    assert "hidden" not in seen.render()
    image = raw_env("rummy", seats=4, render_mode="rgb_array")
    image.reset(seed=2)
    picture = image.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3 and len(np.unique(picture)) > 2


ENGINE_MODULES = ("referee.gin", "referee.rummy", "referee.cardcore", "toy3_game")


def _reachable(root: Any, depth: int = 4) -> list[tuple[str, Any]]:
    """Every value reachable from ``root`` through public attributes, dict values and sequence items."""
    out: list[tuple[str, Any]] = []
    stack = [("env", root, depth)]
    seen: set[int] = set()
    while stack:
        path, value, left = stack.pop()
        if id(value) in seen or left < 0:
            continue
        seen.add(id(value))
        out.append((path, value))
        if isinstance(value, dict):
            stack += [(f"{path}[{k!r}]", v, left - 1) for k, v in value.items()]
        elif isinstance(value, list | tuple | set):
            stack += [(f"{path}[{i}]", v, left - 1) for i, v in enumerate(value)]
        elif not isinstance(value, str | bytes | int | float | np.ndarray | type) and not callable(value):
            for name in dir(value):
                if not name.startswith("_"):
                    try:
                        attr = getattr(value, name)
                    except (AttributeError, NotImplementedError):
                        continue
                    if not callable(attr):
                        stack.append((f"{path}.{name}", attr, left - 1))
    return out


def test_the_environment_never_exposes_the_engines_state() -> None:
    e = env("gin")
    e.reset(seed=3)
    for _ in range(25):
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    last = e.last()
    found = [(p, type(v).__module__) for p, v in _reachable(e) + _reachable(last) + _reachable(e.infos)
             if type(v).__module__.startswith(ENGINE_MODULES)]
    assert not found, f"engine objects reachable from the environment: {found}"
    with pytest.raises(NotImplementedError):
        e.unwrapped.state()
    public = [n for n in vars(e.unwrapped) if not n.startswith("_")]
    assert "match" not in " ".join(public) and "table" not in " ".join(public)


def test_the_reachability_walk_finds_an_engine_object_when_one_is_exposed() -> None:
    class Holder:
        def __init__(self, match: Any) -> None:
            self.info = {"state": [match]}

    match = games.get("gin").game.new_match(games.get("gin").game.default_rules(), b"s", 2)
    found = [p for p, v in _reachable(Holder(match)) if type(v).__module__.startswith(ENGINE_MODULES)]
    assert "env.info['state'][0]" in found and any(p.startswith("env.info['state'][0].match") for p in found)


def test_a_plugin_game_that_declares_encodings_is_an_environment() -> None:
    api_test(env("toy3", seats=3), num_cycles=200)
    seed_test(lambda: env("toy3", seats=5), num_cycles=200)
    totals, played = _play(env("toy3", seats=4), 1, random.Random(1))
    points, _ = _engine_points("toy3", "standard", 4, 1, played, "")
    assert [totals[f"player_{i}"] for i in range(4)] == points and sum(points) > 0


def test_a_game_without_encodings_is_refused_by_name() -> None:
    from toy3_game.engine import ToyGame
    from toy3_game.present import ToyPresentation
    from toy3_game.wire import ToyWire

    class Plain(ToyGame):
        name = "toy3-plain"

    games.register("toy3-plain", lambda: games.Registered(Plain(), ToyWire(), ToyPresentation()))
    try:
        with pytest.raises(ValueError, match="toy3-plain has no observation encoding: its registration declares"):
            raw_env("toy3-plain", seats=2)
    finally:
        games.unregister("toy3-plain")
