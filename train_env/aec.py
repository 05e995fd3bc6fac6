"""The PettingZoo AEC environment of any registered game that has an observation encoding
(docs/training.md): Gin's presets, rummy's variants for 2-6 seats, a plugin game that registers an
encoding (:func:`sample_bots.kit.encodings.register`).

Observations are what the seat is told: the ``ActionRequest`` the referee would send it, built by
the game's own wire, read by an encoding of :mod:`sample_bots.kit.encodings` (the same one a bot
uses over gRPC). Rewards are the game's own points (:class:`train_env.table.Step`).
"""

from __future__ import annotations

import importlib
import random
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

from gin_arena.v2 import bot_pb2, common_pb2
from referee import games
from sample_bots.kit import encodings

from .render import rgb_image, text_of
from .table import TERMINATIONS, Table, Termination, seed_bytes

RENDER_MODES = ("ansi", "human", "rgb_array")
"""What :meth:`GameEnv.render` draws: the presentation's text (returned, or printed), or an image
of the cards."""


def game_encoding(reg: games.Registered, name: str = "") -> encodings.Encoding:
    """The encoding ``name`` (``""``: the default) of a registered game: the kit's own, or those of
    the module its registration declares (``games.Capabilities.encodings``, imported here)."""
    game = reg.game.name
    if not encodings.names(game) and reg.capabilities.encodings:
        importlib.import_module(reg.capabilities.encodings)
    if not encodings.names(game):
        raise ValueError(f"{game} has no observation encoding: its registration declares none "
                         "(games.Capabilities(encodings='its_package.encode'), docs/training.md)")
    return encodings.encoding(game, name)


def observation_space(encoding: encodings.Encoding) -> spaces.Dict:
    """The observation dict's space of an encoding."""
    low, high = encoding.bounds
    parts: dict[str, spaces.Space[Any]] = {
        "observation": spaces.Box(low=low, high=high, shape=encoding.shape, dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(encoding.actions,), dtype=np.int8),
    }
    for key, shape in encoding.extra_shapes().items():
        parts[key] = spaces.Box(low=low, high=high, shape=shape, dtype=np.float32)
    return spaces.Dict(parts)


class GameEnv(AECEnv):  # type: ignore[misc]
    """One match at a time of ``game`` (a registered game's name)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "gin_arena_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False}

    def __init__(self, game: str = "gin", *, preset: str = "", seats: int = 0, encoding: str = "",
                 termination: Termination = "match", render_mode: str | None = None,
                 render_audience: games.Audience = games.SPECTATOR):
        super().__init__()
        reg = games.get(game)
        if termination not in TERMINATIONS:
            raise ValueError(f"termination {termination!r}: one of {', '.join(TERMINATIONS)}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r}: one of {', '.join(RENDER_MODES)}")
        counts = reg.game.seat_counts()
        self.seats = seats or counts[0]
        """Seats at the table."""
        if self.seats not in counts:
            raise ValueError(f"{game} is played by {counts[0]}-{counts[-1]} seats, not {self.seats}")
        self.game = game
        """The game's registry name."""
        self.__reg = reg
        self.__rules = reg.game.rules_preset(preset) if preset else reg.game.default_rules()
        self.encoding = game_encoding(reg, encoding)
        """The observation encoding."""
        self.termination: Termination = termination
        """When an episode ends."""
        self.render_mode = render_mode
        self.render_audience = render_audience
        """Whose view :meth:`render` draws (a seat, ``spectator`` or ``everyone``)."""
        self.possible_agents = [f"player_{i}" for i in range(self.seats)]
        self.observation_spaces = {a: observation_space(self.encoding) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.encoding.actions) for a in self.possible_agents}
        self.__rng = random.Random()
        self.__table: Table | None = None
        self.__last: dict[str, dict[str, Any]] = {}
        self.__legal: list[Any] = []
        self.__indices: list[int] = []
        self.__request: bot_pb2.ActionRequest | None = None
        self.__telling: frozenset[int] = frozenset()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match: from ``seed`` (the same seed, the same match), else from the environment's
        own sequence (itself seeded by the last seed given). ``options={"match_seed": bytes}``: the
        match a referee plays from that seed (a ``MatchSpec.seed``; a replay's revealed ``seed``)."""
        if seed is not None:
            self.__rng = random.Random(seed)
        match_seed = (options or {}).get("match_seed")
        if match_seed is not None and not isinstance(match_seed, bytes):
            raise ValueError(f"options['match_seed'] is {type(match_seed).__name__}, not bytes")
        self.__table = Table(self.__reg, self.__rules, self.seats,
                             match_seed or seed_bytes(self.__rng.getrandbits(63)), self.termination,
                             self.__telling)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.__last = {}
        self.__request = None
        self.__ask()

    def __ask(self) -> None:
        table = self.__table
        assert table is not None
        seat = table.decider
        if seat is None:
            return
        request = table.request()
        encoded = encodings.encode(self.encoding, request)
        agent = self.possible_agents[seat]
        self.agent_selection = agent
        self.__last[agent] = encoded.observation
        self.__request = request
        self.__legal = list(request.legal_actions)
        self.__indices = encoded.legal
        self.infos[agent] = {"legal": list(encoded.legal)}

    def current_request(self) -> bot_pb2.ActionRequest:
        """The ``ActionRequest`` of the agent to move: what the referee would send that seat now (a
        copy; ``ValueError`` once the episode has ended)."""
        if self.__request is None or self.__table is None or self.__table.decider is None:
            raise ValueError("no agent decides: the episode has ended (or not begun)")
        copy = bot_pb2.ActionRequest()
        copy.CopyFrom(self.__request)
        return copy

    def tell(self, seats: frozenset[int]) -> None:
        """From the next :meth:`reset` on, keep what the referee would tell these seats besides
        their requests, for :meth:`told` (a bot process playing a seat is sent it)."""
        self.__telling = seats

    def told(self, agent: str) -> list[tuple[str, Any]]:
        """What the referee told the agent (a seat of :meth:`tell`) since the last call: each a
        ``RefereeMessage`` field and its value."""
        return self.__table.take_told(self.possible_agents.index(agent)) if self.__table is not None else []

    def match_started(self, agent: str, match_id: str) -> bot_pb2.MatchStarted:
        """The ``MatchStarted`` the referee would send the agent's seat for this match."""
        assert self.__table is not None
        return self.__table.match_started(self.possible_agents.index(agent), match_id, self.possible_agents)

    def match_result(self, match_id: str) -> common_pb2.MatchResult:
        """The ``MatchResult`` the seats are sent when the episode ends (:meth:`train_env.table.Table.match_result`)."""
        assert self.__table is not None
        return self.__table.match_result(match_id, self.possible_agents)

    def index_of(self, action: common_pb2.Action) -> int:
        """The action index of one of the current request's legal actions."""
        for legal, index in zip(self.__legal, self.__indices, strict=True):
            if legal == action:
                return index
        raise ValueError(f"not a legal action now: {action}")

    def observe(self, agent: str) -> dict[str, Any]:
        """The agent's observation: its current request's while it decides; otherwise the last
        one it decided on, its mask all 0 (zeros before its first decision)."""
        current = self.__last.get(agent)
        deciding = self.__table is not None and self.__table.decider is not None and agent == self.agent_selection
        if current is not None and deciding:
            return current
        if current is None:
            current = {k: np.zeros(s.shape, dtype=s.dtype) for k, s in self.observation_spaces[agent].items()}
        else:
            current = dict(current, action_mask=np.zeros_like(current["action_mask"]))
        return current

    def step(self, action: Any) -> None:
        """Play the action index ``action`` for the agent to move (``ValueError`` if not legal)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        table = self.__table
        assert table is not None
        index = int(action)
        if index not in self.__indices:
            raise ValueError(f"{agent}: action {index} is not legal now (legal: {sorted(self.__indices)})")
        self._cumulative_rewards[agent] = 0.0
        seat = self.possible_agents.index(agent)
        result = table.play(seat, self.__legal[self.__indices.index(index)])
        for a, points in zip(self.possible_agents, result.points, strict=True):
            self.rewards[a] = float(points)
        if result.ended or table.truncated:
            flags = self.terminations if result.ended else self.truncations
            for a in self.agents:
                flags[a] = True
        else:
            self.__ask()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> Any:
        """The game's presentation of the match for :attr:`render_audience`: its text (``ansi``;
        ``human`` prints it) or an image of the cards (``rgb_array``)."""
        if self.render_mode is None or self.__table is None:
            return None
        described = self.__table.describe(self.render_audience)
        if self.render_mode == "rgb_array":
            return rgb_image(described)
        text = text_of(described)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def state(self) -> Any:
        """Not provided: the environment shows no seat more than it may know."""
        raise NotImplementedError("the environment has no global state view: each seat observes its own")

    def close(self) -> None:
        """Nothing to release."""


def raw_env(game: str = "gin", **options: Any) -> GameEnv:
    """The environment without PettingZoo's wrappers."""
    return GameEnv(game, **options)


def env(game: str = "gin", **options: Any) -> Any:
    """The environment in PettingZoo's usual wrappers (actions checked, call order enforced):
    ``env("gin", preset="oklahoma")``, ``env("rummy", seats=4, preset="michigan")``."""
    wrapped: Any = wrappers.AssertOutOfBoundsWrapper(raw_env(game, **options))
    return wrappers.OrderEnforcingWrapper(wrapped)
