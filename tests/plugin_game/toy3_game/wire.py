"""High cards' protobuf messages: the game's own (``toy3_game/toy3.proto``) packed in the
envelope's ``google.protobuf.Any`` (member ``other`` of each ``oneof game``): a card travels as
``Action{other: toy3.v1.Play{card: 7}}``; a seat is asked with its own cards as the legal actions
and told every card played. The referee's gRPC reflection serves ``toy3.v1``'s descriptors (they
are in protobuf's default pool once this module is imported)."""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any

from google.protobuf import any_pb2, text_format

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from referee import games
from referee.cardcore.present import T, Words
from toy3_game import toy3_pb2
from toy3_game.engine import ToyGame, ToyMatch, ToyRules
from toy3_game.present import ToyPresentation


def _packed(msg: toy3_pb2.Play | toy3_pb2.Played) -> any_pb2.Any:
    out = any_pb2.Any()
    out.Pack(msg)
    return out


def _action(card: int) -> common_pb2.Action:
    return common_pb2.Action(other=_packed(toy3_pb2.Play(card=card)))


def _card(msg: common_pb2.Action) -> int:
    """The card an envelope ``Action`` plays (:class:`games.WireError` if it is not a toy play)."""
    play = toy3_pb2.Play()
    if msg.WhichOneof("game") != "other" or not msg.other.Unpack(play):
        raise games.WireError(f"not a toy3.v1.Play in action.other: {msg.other.type_url or msg.WhichOneof('game')!r}")
    return play.card


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

    def action_from_proto(self, msg: common_pb2.Action) -> int:
        return _card(msg)

    def raw_action(self, msg: common_pb2.Action) -> dict[str, Any]:
        return {"raw_action": msg.SerializeToString(deterministic=True).hex()}

    def raw_action_from_record(self, record: Mapping[str, Any]) -> common_pb2.Action:
        return common_pb2.Action.FromString(bytes.fromhex(record["raw_action"]))

    def action_from_text(self, text: str) -> common_pb2.Action:
        return _action(int(text))

    def deal_started(self, match: games.GameMatch, seat: int, cache: Any) -> bot_pb2.DealStarted:
        return bot_pb2.DealStarted(game_number=match.game_number, deal_number=1)

    def tell(self, match: games.GameMatch, happening: games.Happening, seat: int, think_ms: int,
             cache: Any) -> tuple[str, Any] | None:
        if isinstance(happening, games.Acted):
            return "event", common_pb2.Event(seat=happening.seat, think_ms=think_ms,
                                             other=_packed(toy3_pb2.Played(card=int(happening.text))))
        if isinstance(happening, games.DealBegun):
            return "deal_started", self.deal_started(match, seat, cache)
        if isinstance(happening, games.GameOver):
            return "game_finished", bot_pb2.GameFinished(result=self._game_result(happening))
        return None

    def _game_result(self, h: games.GameOver) -> common_pb2.GameResult:
        return common_pb2.GameResult(game_number=h.record["game"], winner=h.ranking.winner if h.ranking.winner
                                     is not None else -1, final_totals=h.ranking.points, places=h.ranking.places)

    def show(self, match: games.GameMatch, happening: games.Happening, match_id: str, think_ms: int) -> bytes:
        told = self.tell(match, happening, 0, think_ms, None)
        if told is None or told[0] == "deal_started":
            return referee_pb2.SpectatorEvent(match_id=match_id).SerializeToString()
        kind = told[1] if told[0] == "event" else told[1].result
        return referee_pb2.SpectatorEvent(match_id=match_id, **{told[0]: kind}).SerializeToString()

    def describe(self, content: Any, card: Callable[[str], str]) -> str:
        """A message's game content (``other``, a packed ``toy3.v1`` message) in the game's words,
        for ``arena replay --seat N`` (``card`` writes a card)."""
        for kind, words in ((toy3_pb2.Play, "play {card}"), (toy3_pb2.Played, "plays {card}")):
            msg = kind()
            if isinstance(content, any_pb2.Any) and content.Unpack(msg):
                return words.format(card=card(str(msg.card)))
        return text_format.MessageToString(content, as_one_line=True)

    def event_words(self, content: Any, say: Words) -> str:
        """An ``Event``'s content (a card played, as the others are told it) in the presentation's
        words, for the table page's log of moves."""
        played = toy3_pb2.Played()
        if not (isinstance(content, any_pb2.Any) and content.Unpack(played)):
            raise games.WireError(f"not a toy3.v1.Played: {content}")
        return say("plays {card}", card=played.card)

    def game_results(self, outcome: Any) -> list[common_pb2.GameResult]:
        return []

    def outcome_from_result(self, result: common_pb2.MatchResult, termination_normal: bool) -> Any:
        return None



BOTS = (games.SampleBot("high", ("{python}", "-m", "toy3_game.bot", "--strategy", "high")),
        games.SampleBot("low", ("{python}", "-m", "toy3_game.bot", "--strategy", "low")))
"""Its sample bots (:mod:`toy3_game.bot`): the arena's demo, ``arena play`` and the web's tables offer them."""
_ENGINE, _CONVERSION = ToyGame(), ToyWire()
REGISTERED = games.Registered(_ENGINE, _CONVERSION, ToyPresentation(), bots=BOTS, demo=games.Demo(seats=3, games=3),
                              capabilities=games.Capabilities(knows_cards=_ENGINE, describe=_CONVERSION.describe,
                                                              event_words=_CONVERSION.event_words,
                                                              encodings="toy3_game.encode"),
                              display_name=T("High cards"))
"""High cards, as ``referee.games`` finds it."""
