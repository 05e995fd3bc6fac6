"""The Gymnasium single-agent wrapper (docs/training.md#one-seat-gymnasium): one seat is the
learner, every other seat is played by an opponent — in process, a sample bot, any kit bot or
``decide`` function, or a policy on observations; or a bot process over gRPC, the same bots the
arena runs (:class:`train_env.remote.BotProcess`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

import gymnasium
import numpy as np

from gin_arena.v2 import bot_pb2, common_pb2
from sample_bots import expert_bot, greedy_bot, rummy_greedy_bot, rummy_hoarder_bot
from sample_bots.kit import Bot, RummyBot, encodings
from sample_bots.kit.games import to_action

from .aec import GameEnv
from .remote import BotProcess, BotProcessError, BotSeats

Policy = Callable[[dict[str, Any]], int]
"""A policy: from an observation dict (``observation``, ``action_mask``, ...) to a legal action index."""
Decide = Callable[[bot_pb2.ActionRequest], Any]
"""A kit bot's ``decide``: from the seat's request to an ``Action`` (or its text)."""
Illegal = Literal["raise", "random"]
"""What an illegal action index does: raise ``ValueError``, or play a random legal action instead
(``info["illegal"]`` says so, and :attr:`SingleAgentEnv.illegal_penalty` is added to the reward)."""
IN_PROCESS: dict[str, dict[str, Callable[[], Bot | Decide]]] = {
    "gin": {"greedy": lambda: greedy_bot.decide, "expert": lambda: expert_bot.decide},
    "rummy": {"greedy": lambda: RummyBot(rummy_greedy_bot.choose),
              "hoarder": lambda: RummyBot(rummy_hoarder_bot.choose)},
}
"""The sample bots an opponent may name, by game (``"random"`` plays any game)."""


class PolicyOpponent:
    """An opponent that plays a policy on observations of an encoding (another trained policy)."""

    def __init__(self, policy: Policy, encoding: str = ""):
        self.policy = policy
        """The policy."""
        self.encoding = encoding
        """The encoding's name (``""``: the game's default)."""


Opponent = str | Bot | Decide | PolicyOpponent | BotProcess
"""``"random"`` or a sample bot's name (:data:`IN_PROCESS`), a kit :class:`Bot`, a ``decide``
function, a :class:`PolicyOpponent`, or a :class:`train_env.remote.BotProcess` (a bot process
over gRPC, started once per environment and reused by every episode)."""


class _Seat:
    """One opponent seat, ready to answer a request."""

    def __init__(self, opponent: Opponent, game: str, rng: random.Random):
        self.rng = rng
        self.bot: Bot | None = None
        self.decide: Decide | None = None
        self.policy: tuple[Policy, encodings.Encoding] | None = None
        if isinstance(opponent, str):
            made = None if opponent == "random" else IN_PROCESS.get(game, {}).get(opponent)
            if opponent != "random" and made is None:
                known = ", ".join(["random", *IN_PROCESS.get(game, {})])
                raise ValueError(f"no in-process opponent {opponent!r} for {game}; known: {known}")
            self.decide = (lambda r: self.rng.choice(list(r.legal_actions))) if made is None else None
            opponent = made() if made is not None else opponent
        if isinstance(opponent, Bot):
            self.bot = opponent
        elif isinstance(opponent, PolicyOpponent):
            self.policy = (opponent.policy, encodings.encoding(game, opponent.encoding))
        elif callable(opponent):
            self.decide = opponent

    def answer(self, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        if self.policy is not None:
            policy, encoding = self.policy
            encoded = encodings.encode(encoding, request)
            index = int(policy(encoded.observation))
            return request.legal_actions[encoded.legal.index(index)]
        if self.bot is not None:
            return to_action(self.bot.decide_in_match("train-env", request), request)
        assert self.decide is not None
        return to_action(self.decide(request), request)


class SingleAgentEnv(gymnasium.Env[dict[str, Any], int]):
    """``game`` (a registered game's name) as a Gymnasium environment for the seat ``seat``; the other
    seats are played by ``opponents`` (one for all, or one per other seat in seat order). The
    remaining options are :class:`train_env.aec.GameEnv`'s (preset, seats, encoding, termination,
    render_mode). The reward is the learner's own points (the game's); ``info["points"]`` holds every
    seat's points since the learner's last action (the opponents' too: a zero-sum reward is
    ``points[seat] - sum(others)``)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human", "rgb_array"]}  # noqa: RUF012

    def __init__(self, game: str = "gin", *, seat: int = 0, opponents: Opponent | Sequence[Opponent] = "random",
                 illegal: Illegal = "raise", illegal_penalty: float = 0.0, **options: Any):
        self._aec = GameEnv(game, **options)
        if not 0 <= seat < self._aec.seats:
            raise ValueError(f"seat {seat}: the table has seats 0-{self._aec.seats - 1}")
        if illegal not in ("raise", "random"):
            raise ValueError(f"illegal {illegal!r}: raise or random")
        self.seat = seat
        """The learner's seat."""
        self.illegal: Illegal = illegal
        """What an illegal action does."""
        self.illegal_penalty = illegal_penalty
        """Added to the reward of an illegal action played at random (``illegal="random"``)."""
        self.render_mode = options.get("render_mode")
        others = self._aec.seats - 1
        listed: list[Opponent] = list(opponents) if isinstance(opponents, list | tuple) \
            else [cast(Opponent, opponents)] * others
        if len(listed) != others:
            raise ValueError(f"{len(listed)} opponents for the {others} other seats")
        self._opponent_specs = listed
        agents = [a for a in self._aec.possible_agents if a != self._aec.possible_agents[seat]]
        self._remote = {self._aec.possible_agents.index(a): o for a, o in zip(agents, listed, strict=True)
                        if isinstance(o, BotProcess)}
        self._aec.tell(frozenset(self._remote))
        self._bots: BotSeats | None = None
        self._match_id = ""
        self._matches = 0
        self._rng = random.Random()
        self._seats: dict[str, _Seat] = {}
        self._me = self._aec.possible_agents[seat]
        self._points: list[float] = []
        self.observation_space = self._aec.observation_space(self._me)
        self.action_space = self._aec.action_space(self._me)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new match (from ``seed``); the opponents play until the learner must decide."""
        super().reset(seed=seed)
        if seed is not None:
            self._rng = random.Random(seed)
        others = [a for a in self._aec.possible_agents if a != self._me]
        seat_rngs = [random.Random(self._rng.getrandbits(63)) for _ in others]  # (every seat draws one:
        # the match is the same whichever kind of opponent plays a seat)
        self._seats = {a: _Seat(o, self._aec.game, r)
                       for a, o, r in zip(others, self._opponent_specs, seat_rngs, strict=True)
                       if not isinstance(o, BotProcess)}
        self._finish_match()
        self._aec.reset(seed=self._rng.getrandbits(63))
        self._points = [0.0] * self._aec.seats
        self._start_match()
        self._advance()
        return self._aec.observe(self._me), self._info()

    def _info(self) -> dict[str, Any]:
        return dict(self._aec.infos.get(self._me, {}))

    def _done(self) -> bool:
        return any(self._aec.terminations.values()) or any(self._aec.truncations.values())

    def _scored(self) -> None:
        for i, agent in enumerate(self._aec.possible_agents):
            self._points[i] += self._aec.rewards[agent]

    def _start_match(self) -> None:
        """Start the bot processes (the first time) and tell them a new match begins."""
        if not self._remote:
            return
        if self._bots is None:
            bots = BotSeats(self._remote)
            bots.check_game(self._aec.game)
            self._bots = bots
        self._matches += 1
        self._match_id = f"train-env-{self._matches}"
        for seat in self._remote:
            agent = self._aec.possible_agents[seat]
            self._bots.send(seat, self._match_id, match_started=self._aec.match_started(agent, self._match_id))
        self._tell_bots()

    def _tell_bots(self) -> None:
        """Send the bot processes what the referee would have told them since the last time."""
        if self._bots is None or not self._match_id:
            return
        for seat in self._remote:
            wants_events = self._bots.wants_events(seat)
            for kind, value in self._aec.told(self._aec.possible_agents[seat]):
                if kind != "event" or wants_events:
                    self._bots.send(seat, self._match_id, **{kind: value})

    def _finish_match(self) -> None:
        """Tell the bot processes the episode's match is over (once)."""
        if self._bots is None or not self._match_id:
            return
        self._tell_bots()
        result = self._aec.match_result(self._match_id)
        for seat in self._remote:
            self._bots.send(seat, self._match_id, match_finished=bot_pb2.MatchFinished(result=result))
        self._match_id = ""

    def _advance(self) -> None:
        """Let the opponents play until the learner decides or the episode ends."""
        while not self._done() and self._aec.agent_selection != self._me:
            agent = self._aec.agent_selection
            request = self._aec.current_request()
            seat = self._aec.possible_agents.index(agent)
            if seat in self._remote:
                assert self._bots is not None
                self._tell_bots()
                action = self._bots.ask(seat, self._match_id, request)
                try:
                    index = self._aec.index_of(action)
                except ValueError as e:
                    raise BotProcessError(f"the bot process of seat {seat} answered an illegal action: {e}") from e
            else:
                index = self._aec.index_of(self._seats[agent].answer(request))
            self._aec.step(index)
            self._scored()
        if self._done():
            self._finish_match()

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Play the learner's action index; then the opponents until the learner decides again."""
        index = int(action)
        legal = np.flatnonzero(self._aec.observe(self._me)["action_mask"])
        illegal = index not in legal
        if illegal and self.illegal == "random":
            index = int(self._rng.choice(list(legal)))
        self._points = [0.0] * self._aec.seats
        self._aec.step(index)
        self._scored()
        self._advance()
        reward = self._points[self.seat] + (self.illegal_penalty if illegal else 0.0)
        info = self._info()
        info["points"] = list(self._points)
        if illegal:
            info["illegal"] = True
        terminated = any(self._aec.terminations.values())
        return self._aec.observe(self._me), float(reward), terminated, any(self._aec.truncations.values()), info

    def action_masks(self) -> Any:
        """The learner's legal actions now (the name sb3-contrib's MaskablePPO asks for)."""
        return self._aec.observe(self._me)["action_mask"].astype(bool)

    def render(self) -> Any:
        """The AEC environment's rendering."""
        return self._aec.render()

    def close(self) -> None:
        """End the bot processes (their whole process groups) and their server; an environment
        that is collected, or left open when the interpreter exits, ends them too."""
        if self._bots is not None:
            self._bots.close()
            self._bots = None
        self._match_id = ""
        self._aec.close()
        super().close()
