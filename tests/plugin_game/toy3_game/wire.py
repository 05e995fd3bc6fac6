"""High cards' protobuf messages: a card travels as ``Action{kind: DISCARD, card: "7"}``; a seat
is asked with its own cards as the legal actions and told every card played."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

from gin_arena.v1 import bot_pb2, game_pb2, referee_pb2
from referee import games
from toy3_game.engine import ToyGame, ToyMatch, ToyRules
from toy3_game.present import ToyPresentation


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



REGISTERED = games.Registered(ToyGame(), ToyWire(), ToyPresentation())
"""High cards, as ``referee.games`` finds it."""
