"""A toy game for three (or more) seats, registered through the referee's game seam: it proves
that the plumbing names no game and assumes no number of seats.

"High cards": each game is one deal; every seat is dealt two cards from a deck 1..12 shuffled
from the seed; from the dealer's left, clockwise, each seat plays one of its cards until every
hand is empty. A seat scores the cards it played; the match is ``games`` games; places by
points. Actions travel as ``Action{kind: DISCARD, card: "7"}``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gin_arena.v1 import bot_pb2, game_pb2, referee_pb2
from referee import games

NAME = "toy-high-cards"


@dataclass(frozen=True, slots=True)
class ToyRules:
    """The toy's rule set."""

    games: int = 2
    """Games in a match."""


def _deck(seed: bytes, game: int) -> list[int]:
    return sorted(range(1, 13), key=lambda c: hashlib.sha256(seed + bytes([game, c])).digest())


@dataclass(frozen=True, slots=True)
class ToyOutcome(games.Ranking):
    """The toy match's result: the ranking by total points, and the games each seat won."""

    games_won: tuple[int, ...] = ()
    """Games won, by seat."""


@dataclass(frozen=True, slots=True)
class ToyDealEnd:
    """The toy's ``deal_end`` content: nothing beyond the record's own fields."""


@dataclass(frozen=True, slots=True)
class ToyGameEnd:
    """The toy's ``game_end`` content."""

    places: tuple[int, ...]
    """Each seat's place in the game."""
    points: tuple[int, ...]
    """Each seat's points in the game."""


class ToyMatch:
    """One match of the toy (pure)."""

    def __init__(self, rules: ToyRules, seed: bytes, seats: int) -> None:
        self.rules, self.seed, self.seats = rules, seed, seats
        self.totals = [0] * seats
        self.won = [0] * seats
        self.game = 0
        self.hands: list[list[int]] = []
        self.scores: tuple[int, ...] = ()
        self.turn: int | None = None
        self.steps = 0
        self.outcome: ToyOutcome | None = None
        self._deal()

    def _deal(self) -> None:
        self.game += 1
        deck = _deck(self.seed, self.game)
        dealer = (self.game - 1) % self.seats
        self.hands = [sorted(deck[2 * s:2 * s + 2]) for s in range(self.seats)]
        self.scores = (0,) * self.seats
        self.turn = (dealer + 1) % self.seats
        self.steps = 0
        self._record = {"game": self.game, "deal": 1, "dealer": dealer, "deck": [str(c) for c in deck],
                        "key": hashlib.sha256(self.seed + bytes([self.game])).hexdigest()}

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def decider(self) -> int | None:
        return None if self.outcome is not None else self.turn

    @property
    def game_number(self) -> int:
        return self.game

    @property
    def deal_number(self) -> int:
        return 1

    @property
    def actions_in_deal(self) -> int:
        return self.steps

    @property
    def games_won(self) -> tuple[int, ...]:
        return tuple(self.won)

    def opening(self) -> list[games.Happening]:
        return [games.DealBegun(self._record)]

    def legal(self, seat: int) -> tuple[int, ...]:
        return tuple(self.hands[seat]) if seat == self.turn else ()

    def why_illegal(self, seat: int, action: Any) -> str:
        return f"card {action} is not in seat {seat}'s hand"

    def apply(self, seat: int, action: int) -> list[games.Happening]:
        assert seat == self.turn and action in self.hands[seat]
        self.hands[seat].remove(action)
        self.steps += 1
        scores = list(self.scores)
        scores[seat] += action
        self.scores = tuple(scores)
        out: list[games.Happening] = [games.Acted(seat, action, str(action), None, action)]
        if any(self.hands):
            self.turn = (seat + 1) % self.seats
            return out
        return out + self._game_over(games.Ranking.by_points(self.scores))

    def _game_over(self, ranking: games.Ranking) -> list[games.Happening]:
        for s, p in enumerate(ranking.points):
            self.totals[s] += p
        if ranking.winner is not None:
            self.won[ranking.winner] += 1
        out: list[games.Happening] = [
            games.DealOver({"game": self.game, "deal": 1, "scores": list(self.scores)}, True),
            games.GameOver(ranking, {"game": self.game, "winner": ranking.winner, "totals": list(self.totals),
                                     "deals": 1, "forfeit": None, "places": list(ranking.places),
                                     "points": list(ranking.points)}),
        ]
        if self.game >= self.rules.games:
            self.outcome = ToyOutcome(games.Ranking.by_points(self.totals).places, tuple(self.totals),
                                      tuple(self.won))
            self.turn = None
            return out
        self._deal()
        return [*out, games.DealBegun(self._record)]

    def substitute(self, seat: int) -> int:
        return min(self.hands[seat])

    def forfeit(self, seats: Sequence[int]) -> list[games.Happening]:
        places = games.places_with_forfeits(games.Ranking.by_points(self.scores).places, seats)
        out = self._game_over(games.Ranking(places, self.scores))
        self.outcome = ToyOutcome(games.places_with_forfeits(
            games.Ranking.by_points(self.totals).places, seats), tuple(self.totals), tuple(self.won))
        self.turn = None
        return out[:2]

    def ranking(self) -> games.Ranking:
        return self.outcome or games.Ranking.by_points(self.totals)


Ranking = games.Ranking


class ToyGame:
    """The toy's engine side."""

    name = NAME
    deal_end_content = ToyDealEnd
    game_end_content = ToyGameEnd

    def seat_counts(self) -> range:
        return range(2, 7)

    def default_rules(self) -> ToyRules:
        return ToyRules()

    def rules_preset(self, name: str) -> ToyRules:
        if name != "short":
            raise ValueError(f"unknown preset {name!r}; the toy has: short")
        return ToyRules(games=1)

    def rules_presets(self) -> Sequence[str]:
        return ("short",)

    def check_rules(self, rules: Any) -> None:
        if not isinstance(rules, ToyRules):
            raise ValueError("the toy needs ToyRules")

    def rules_to_dict(self, rules: ToyRules) -> dict[str, Any]:
        return {"games": rules.games}

    def match_size(self, rules: ToyRules) -> Sequence[tuple[str, str, int]]:
        return (("rules.games", "games", rules.games),)

    def rules_from_dict(self, data: Mapping[str, Any]) -> ToyRules:
        return ToyRules(games=int(data["games"]))

    def commitment(self, seed: bytes) -> bytes:
        return hashlib.sha256(seed).digest()

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        return hashlib.sha256(seed + b"".join(nonces)).digest()

    def new_match(self, rules: ToyRules, seed: bytes, seats: int) -> ToyMatch:
        return ToyMatch(rules, seed, seats)

    def deal_from_deck(self, rules: ToyRules, deck: Sequence[str], dealer: int, seats: int,
                       key: bytes) -> list[list[int]]:
        return [sorted(int(c) for c in deck[2 * s:2 * s + 2]) for s in range(seats)]

    def result_fields(self, outcome: ToyOutcome | None) -> dict[str, Any]:
        return {"games_won": list(outcome.games_won) if outcome else [],
                "totals": list(outcome.points) if outcome else []}


def _action(card: int) -> game_pb2.Action:
    return game_pb2.Action(kind=game_pb2.ACTION_KIND_DISCARD, card=str(card))


class ToyWire:
    """The toy's messages."""

    def start_fields(self, rules: ToyRules) -> dict[str, Any]:
        return {}

    def rules_from_request(self, request: referee_pb2.CreateMatchRequest) -> ToyRules | None:
        return None

    def new_seat_cache(self) -> None:
        return None

    def request(self, match: games.GameMatch, seat: int, match_id: str, request_id: int, clocks: Sequence[int],
                increment_ms: int, allowance_ms: int, cache: Any) -> tuple[bytes, Container[Any]]:
        assert isinstance(match, ToyMatch)
        legal = match.legal(seat)
        msg = bot_pb2.RefereeMessage(match_id=match_id, action_request=bot_pb2.ActionRequest(
            request_id=request_id, legal_actions=[_action(c) for c in legal], time_for_move_ms=allowance_ms))
        return msg.SerializeToString(deterministic=True), legal

    def action_from_proto(self, msg: game_pb2.Action) -> int:
        if msg.kind != game_pb2.ACTION_KIND_DISCARD or not msg.card.isdigit():
            raise games.WireError(f"not a toy card: {msg.card!r}")
        return int(msg.card)

    def raw_action(self, msg: game_pb2.Action) -> dict[str, Any]:
        return {"raw_kind": int(msg.kind), "raw_card": msg.card}

    def raw_action_from_record(self, record: Mapping[str, Any]) -> game_pb2.Action:
        return game_pb2.Action(kind=record["raw_kind"], card=record["raw_card"])

    def action_from_text(self, text: str) -> game_pb2.Action:
        return _action(int(text))

    def deal_started(self, match: games.GameMatch, seat: int, cache: Any) -> bot_pb2.DealStarted:
        return bot_pb2.DealStarted(game_number=match.game_number, deal_number=1)

    def tell(self, match: games.GameMatch, happening: games.Happening, seat: int, think_ms: int,
             cache: Any) -> tuple[str, Any] | None:
        if isinstance(happening, games.Acted):
            return "event", game_pb2.PublicEvent(seat=happening.seat, kind=game_pb2.ACTION_KIND_DISCARD,
                                                 card=happening.text, think_ms=think_ms)
        if isinstance(happening, games.DealBegun):
            return "deal_started", self.deal_started(match, seat, cache)
        if isinstance(happening, games.GameOver):
            return "game_finished", bot_pb2.GameFinished(result=self._game_result(happening))
        return None

    def _game_result(self, h: games.GameOver) -> game_pb2.GameResult:
        return game_pb2.GameResult(game_number=h.record["game"], winner=h.ranking.winner if h.ranking.winner
                                   is not None else -1, final_totals=h.ranking.points)

    def show(self, match: games.GameMatch, happening: games.Happening, match_id: str, think_ms: int) -> bytes:
        told = self.tell(match, happening, 0, think_ms, None)
        if told is None or told[0] == "deal_started":
            return referee_pb2.SpectatorEvent(match_id=match_id).SerializeToString()
        kind = told[1] if told[0] == "event" else told[1].result
        return referee_pb2.SpectatorEvent(match_id=match_id, **{told[0]: kind}).SerializeToString()

    def game_results(self, outcome: Any) -> list[game_pb2.GameResult]:
        return []

    def outcome_from_result(self, result: game_pb2.MatchResult, termination_normal: bool) -> Any:
        return None


def register() -> None:
    """Register the toy once per process."""
    if NAME not in games.names():
        games.register(NAME, lambda: games.Registered(ToyGame(), ToyWire()))
