"""The game seam: what the referee's plumbing asks of a game, and the registry of games by name.

A game comes in two halves. Its **engine** is pure (standard library only, randomness only
from the seed it is given) and implements :class:`Game` and :class:`GameMatch`: the rule set
and its presets, the match dealt from a seed for ``n`` seats, whose decision is awaited, the
legal actions, applying one, the built-in bot, and what happened as plain
:class:`Happening` values (actions, chance steps such as a reshuffle, deals/games beginning and
ending, with each game's result as a :class:`Ranking`). Its **wire** (one module of
``referee`` beside the pure package) implements :class:`GameWire`: the protobuf messages a seat
or a spectator is sent for each of those values, and the actions read back.

The plumbing (``_table`` and the pieces it is made of) knows nothing else of a game: it never
names one and assumes no number of seats. :func:`get` finds a game by the name a
:class:`~referee.MatchSpec` gives (``MatchSpec.game``); :func:`register` adds one (a test's toy
game, a later game of the rummy family).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gin_arena.v1 import bot_pb2, game_pb2, referee_pb2


@dataclass(frozen=True, slots=True)
class Ranking:
    """A result for every seat: its place and its points."""

    places: tuple[int, ...]
    """1-based place by seat; tied seats share a place and the next place is skipped (1, 1, 3)."""
    points: tuple[int, ...]
    """Points by seat."""

    @property
    def winner(self) -> int | None:
        """The seat alone in first place, or ``None``."""
        first = [s for s, p in enumerate(self.places) if p == 1]
        return first[0] if len(first) == 1 else None

    @staticmethod
    def by_points(points: Sequence[int]) -> Ranking:
        """Places from points, highest first (equal points share a place)."""
        return Ranking(tuple(1 + sum(1 for q in points if q > p) for p in points), tuple(points))


def places_with_forfeits(places: Sequence[int], forfeited: Sequence[int]) -> tuple[int, ...]:
    """``places`` with the ``forfeited`` seats (in the order they faulted) moved to the last
    places, the latest to fault first among them; the others keep their order and ties."""
    n = len(places)
    out = [0] * n
    others = [s for s in range(n) if s not in forfeited]
    for s in others:
        out[s] = 1 + sum(1 for o in others if places[o] < places[s])
    for i, s in enumerate(reversed(forfeited)):
        out[s] = len(others) + 1 + i
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Acted:
    """A seat's action was applied."""

    seat: int
    """Who acted."""
    action: Any
    """The game's action value."""
    text: str
    """The action as the replay records it (the game's text form)."""
    revealed: str | None
    """The card (or other hidden value) the action involved, as the replay records it."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


@dataclass(frozen=True, slots=True)
class Chance:
    """A chance step after the deal (e.g. the discard pile reshuffled into a new stock)."""

    kind: str
    """The replay record's type (e.g. ``reshuffle``)."""
    record: Mapping[str, Any]
    """The replay record's fields (plain JSON values)."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


@dataclass(frozen=True, slots=True)
class DealBegun:
    """A deal was dealt."""

    record: Mapping[str, Any]
    """The ``deal`` record's fields: enough to rebuild the deal (its deck, dealer, key)."""


@dataclass(frozen=True, slots=True)
class DealOver:
    """A deal ended."""

    record: Mapping[str, Any]
    """The ``deal_end`` record's fields."""
    game_over: bool
    """Whether the game ended with it."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


@dataclass(frozen=True, slots=True)
class GameOver:
    """A game of the match ended."""

    ranking: Ranking
    """The game's result by seat."""
    record: Mapping[str, Any]
    """The ``game_end`` record's fields."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


Happening = Acted | Chance | DealBegun | DealOver | GameOver
"""What a game reports back to the plumbing, in order."""


class GameMatch(Protocol):
    """One match of a game in progress (pure: plain values only)."""

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""

    @property
    def decider(self) -> int | None:
        """The seat whose decision is awaited: the player to move, or another seat asked a
        question (e.g. whether to call "stop" on a discard); ``None`` once the match is over.
        A seat may decide several times in a row."""

    @property
    def game_number(self) -> int:
        """The current game, from 1."""

    @property
    def deal_number(self) -> int:
        """The current deal of the current game, from 1."""

    @property
    def actions_in_deal(self) -> int:
        """Steps played in the current deal (the stalling guard counts them)."""

    @property
    def scores(self) -> tuple[int, ...]:
        """The current game's points by seat."""

    @property
    def games_won(self) -> tuple[int, ...]:
        """Games won so far, by seat."""

    @property
    def outcome(self) -> Any:
        """The game's own match result (``MatchReport.outcome``): once over, the final one;
        before (a match cut short), the games finished so far, or ``None``."""

    def opening(self) -> Sequence[Happening]:
        """What happened when the match was set up (the first deal)."""

    def why_illegal(self, seat: int, action: Any) -> str:
        """Why ``action`` is not legal for ``seat`` now."""

    def apply(self, seat: int, action: Any) -> Sequence[Happening]:
        """Play a legal action of the deciding seat; returns what followed, in order (the action,
        chance steps, deal and game ends, the next deal)."""

    def substitute(self, seat: int) -> Any:
        """The built-in bot's action for ``seat`` (the decider), chosen from that seat's view."""

    def forfeit(self, seats: Sequence[int]) -> Sequence[Happening]:
        """End the match now: the game in progress is lost by ``seats`` (in the order they
        faulted). Returns the game's end."""

    def ranking(self) -> Ranking:
        """The match's result by seat (so far, while it is not over)."""


class Game(Protocol):
    """A game's engine as the referee reaches it (pure)."""

    name: str
    """The registry name (``MatchSpec.game``)."""
    @property
    def deal_end_content(self) -> type:
        """The frozen dataclass of a ``deal_end`` replay record's game content (standard library
        only; its fields share the record's JSON object — see :mod:`referee.replays`)."""

    @property
    def game_end_content(self) -> type:
        """The same for a ``game_end`` record."""

    def seat_counts(self) -> range:
        """The numbers of seats the game is played by."""

    def default_rules(self) -> Any:
        """The rule set a match gets when its spec names none."""

    def rules_preset(self, name: str) -> Any:
        """The rule set a preset names (``ValueError`` naming the presets otherwise)."""

    def rules_presets(self) -> Sequence[str]:
        """The names :meth:`rules_preset` takes, the default's first (for help and errors)."""

    def check_rules(self, rules: Any) -> None:
        """``ValueError`` unless ``rules`` is this game's rule-set type."""

    def rules_to_dict(self, rules: Any) -> dict[str, Any]:
        """A rule set as plain JSON values (the replay header's ``rules``)."""

    def match_size(self, rules: Any) -> Sequence[tuple[str, str, int]]:
        """The rule set's numbers that bound how long a match runs, for the referee's limits:
        each as (the ``CreateMatch`` field that sets it, ``"games"`` — games in a match — or
        ``"target"`` — points that end a game or match —, its value)."""

    def rules_from_dict(self, data: Mapping[str, Any]) -> Any:
        """The rule set a replay header's ``rules`` describes (``ValueError`` if it cannot)."""

    def commitment(self, seed: bytes) -> bytes:
        """The seed's commitment, sent before the first deal."""

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        """The seed with the bots' nonces mixed in."""

    def new_match(self, rules: Any, seed: bytes, seats: int) -> GameMatch:
        """A match for ``seats`` seats, every deck derived from ``seed``."""

    def deal_from_deck(self, rules: Any, deck: Sequence[str], dealer: int, seats: int, key: bytes) -> Any:
        """One deal rebuilt from a ``deal`` record's deck order and dealer (for audits and
        viewers; ``key`` seeds its chance steps): the game's own deal value."""

    def result_fields(self, outcome: Any) -> dict[str, Any]:
        """The game's part of the replay's ``result`` record and of the finish log line (plain
        values) for a match ``outcome`` (``None``: no match was played)."""


class WireError(ValueError):
    """A message that does not describe a valid domain value; the text says what is wrong."""


class GameWire(Protocol):
    """A game's protobuf conversion: what a seat or spectator is sent, what a bot sends back."""

    def start_fields(self, rules: Any) -> dict[str, Any]:
        """The game's fields of ``MatchStarted``, ``SpectatorHeader`` and ``CreateMatchRequest``
        (its rule set)."""

    def rules_from_request(self, request: referee_pb2.CreateMatchRequest) -> Any | None:
        """The rule set a ``CreateMatch`` request asks for, or ``None`` for the default
        (:class:`WireError` if malformed)."""

    def new_seat_cache(self) -> Any:
        """What a seat's messages repeat within a deal, kept encoded (one per seat)."""

    def request(
        self, match: GameMatch, seat: int, match_id: str, request_id: int, clocks: Sequence[int],
        increment_ms: int, allowance_ms: int, cache: Any,
    ) -> tuple[bytes, Container[Any]]:
        """The serialised ``RefereeMessage`` asking ``seat`` for a decision, and its legal
        actions."""

    def action_from_proto(self, msg: game_pb2.Action) -> Any:
        """A bot's action as the game's value (:class:`WireError` naming what is malformed)."""

    def raw_action(self, msg: game_pb2.Action) -> dict[str, Any]:
        """A bot's action as plain values, for a fault record (a re-run sends it again)."""

    def raw_action_from_record(self, record: Mapping[str, Any]) -> game_pb2.Action:
        """The action :meth:`raw_action` recorded."""

    def action_from_text(self, text: str) -> game_pb2.Action:
        """The action a replay's ``action`` record names, as a bot would send it."""

    def deal_started(self, match: GameMatch, seat: int, cache: Any) -> bot_pb2.DealStarted:
        """The current deal's start for ``seat`` (also sent again to a reconnecting seat)."""

    def tell(
        self, match: GameMatch, happening: Happening, seat: int, think_ms: int, cache: Any
    ) -> tuple[str, Any] | None:
        """What ``seat`` is told of ``happening``: a ``RefereeMessage`` field and its value
        (``event`` messages go only to seats that want them), or ``None``. An ``Acted`` or a
        ``Chance`` is told as an ``event`` (or not at all): the referee asks only the seats
        that want events about them."""

    def show(self, match: GameMatch, happening: Happening, match_id: str, think_ms: int) -> bytes:
        """The serialised ``SpectatorEvent`` showing ``happening`` to spectators."""

    def game_results(self, outcome: Any) -> list[game_pb2.GameResult]:
        """A match outcome's games, for ``MatchResult.games``."""

    def outcome_from_result(self, result: game_pb2.MatchResult, termination_normal: bool) -> Any:
        """A remote referee's ``MatchResult`` as the game's match outcome (or ``None``)."""


@dataclass(frozen=True, slots=True)
class Registered:
    """A game and its wire, as the registry holds them."""

    game: Game
    """The engine's side."""
    wire: GameWire
    """The protobuf conversion."""


_LOADERS: dict[str, Callable[[], Registered]] = {}
_LOADED: dict[str, Registered] = {}
_BUILT_IN = {"gin": "referee._gin_wire", "rummy": "referee._rummy_wire"}
"""Games that come with the referee: name → the module whose ``REGISTERED`` holds it (loaded
when first asked for, so that a pure engine is never imported with protobuf needlessly)."""


def register(name: str, loader: Callable[[], Registered]) -> None:
    """Add a game under ``name`` (``loader`` is called once, when the game is first needed)."""
    if name in _LOADERS or name in _BUILT_IN:
        raise ValueError(f"a game named {name!r} is registered already")
    _LOADERS[name] = loader


def get(name: str) -> Registered:
    """The game registered as ``name`` (``ValueError`` naming the known games otherwise)."""
    found = _LOADED.get(name)
    if found is not None:
        return found
    if name in _BUILT_IN:
        found = importlib.import_module(_BUILT_IN[name]).REGISTERED
    elif name in _LOADERS:
        found = _LOADERS[name]()
    else:
        raise ValueError(f"unknown game {name!r}; known: {', '.join(names())}")
    assert found is not None
    _LOADED[name] = found
    return found


def names() -> list[str]:
    """Every registered game's name."""
    return sorted({*_BUILT_IN, *_LOADERS})
