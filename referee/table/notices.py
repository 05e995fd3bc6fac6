"""The game-neutral messages of one match, built as bytes for the match flow.

The match flow (:mod:`referee.table.match_flow`) names no message type: what a seat or a
spectator is sent is built here (the envelope's messages) or by the game's wire (the game's
content), always as serialised bytes. A protocol version is then one module to port."""

from __future__ import annotations

from typing import Any

from gin_arena.v2 import bot_pb2, referee_pb2
from referee import games
from referee.model.spec import MatchReport, MatchSpec
from referee.wire import envelope as wire

ERROR_NOT_YOUR_TURN = bot_pb2.ERROR_CODE_NOT_YOUR_TURN
"""``ErrorReport.code``: an answer while no request of the seat is open."""
ERROR_BAD_REQUEST_ID = bot_pb2.ERROR_CODE_BAD_REQUEST_ID
"""``ErrorReport.code``: an answer to a request that is not the open one."""
ERROR_MATCH_OVER = bot_pb2.ERROR_CODE_MATCH_OVER
"""``ErrorReport.code``: an answer after the match ended."""
ERROR_PROTOCOL_VIOLATION = bot_pb2.ERROR_CODE_PROTOCOL_VIOLATION
"""``ErrorReport.code``: the seat faulted (a built-in bot takes it)."""
ERROR_TOO_LATE = bot_pb2.ERROR_CODE_TOO_LATE
"""``ErrorReport.code``: the seat's time for its open request (the report's ``request_id``) ran
out; a built-in bot played that decision and the seat plays on (``substitute_time_faults="move"``)."""


class Notices:
    """The envelope messages of one match, serialised (deterministically: they enter the
    seats' story digests)."""

    __slots__ = ("_start", "match_id", "spec", "wire")

    def __init__(self, spec: MatchSpec, match_id: str, wire_: games.GameWire, commitment: bytes) -> None:
        self.spec = spec
        self.match_id = match_id
        self.wire = wire_
        self._start = self._start_fields(commitment)

    def _start_fields(self, commitment: bytes) -> dict[str, Any]:
        """What ``MatchStarted`` and ``SpectatorHeader`` share (per-seat clocks are left out when
        unused)."""
        spec = self.spec
        fields: dict[str, Any] = {
            "player_names": spec.players, "time_control": wire.time_control_to_proto(spec.time_control),
            "seed_commitment": commitment, "fault_policy": wire.FAULT_POLICY_TO_PB[spec.fault_policy],
            **self.wire.start_fields(spec.rules),
        }
        fields["game_name"] = spec.game
        if spec.substitute_time_faults == "move":
            fields["time_forfeit_substitutes_one_decision"] = True
        if spec.seat_time_controls:
            fields["seat_time_controls"] = [wire.time_control_to_proto(tc) for tc in spec.seat_time_controls]
        return fields

    def _bytes(self, **kind: Any) -> bytes:
        return bot_pb2.RefereeMessage(match_id=self.match_id, **kind).SerializeToString(deterministic=True)

    def match_started(self, seat: int) -> bytes:
        """``MatchStarted`` for ``seat``."""
        spec = self.spec
        return self._bytes(match_started=bot_pb2.MatchStarted(
            match_id=self.match_id, seat=seat, reconnect_grace_ms=spec.reconnect_grace_ms,
            repeat_illegal=spec.repeat_illegal, mix_bot_nonces=spec.mix_nonces, **self._start,
        ))

    def header(self) -> bytes:
        """The spectators' ``SpectatorHeader`` event."""
        return self._public(header=referee_pb2.SpectatorHeader(**self._start))

    def deal_started(self, match: games.GameMatch, seat: int) -> bytes:
        """The current deal's ``DealStarted`` for ``seat`` (a reconnecting seat's)."""
        return self._bytes(deal_started=self.wire.deal_started(match, seat, None))

    def told(self, kind: str, payload: Any) -> bytes:
        """A message of the story as the game's wire told it (``GameWire.tell``)."""
        return self._bytes(**{kind: payload})

    def error(self, code: int, message: str, request_id: int = 0) -> bytes:
        """An ``ErrorReport``."""
        return self._bytes(error=bot_pb2.ErrorReport(code=code, message=message, request_id=request_id))  # type: ignore[arg-type]

    def rejected(self, request_id: int, action: Any, reason: str) -> bytes:
        """``ActionRejected``: the action is illegal, the request stands."""
        return self._bytes(action_rejected=bot_pb2.ActionRejected(request_id=request_id, action=action, reason=reason))

    def match_result(self, report: MatchReport, operator_seed: bytes, nonces: list[bytes], game: games.Game) -> Any:
        """The finished match's ``MatchResult`` message, with the seed revealed."""
        return wire.match_result(report, operator_seed, nonces, game.result_fields(report.outcome),
                                 self.wire.game_results(report.outcome), self.spec.game)

    def finished(self, result: Any) -> tuple[bytes, bytes]:
        """``MatchFinished`` for the seats and the spectators' event."""
        return self._bytes(match_finished=bot_pb2.MatchFinished(result=result)), self._public(match_finished=result)

    def _public(self, **kind: Any) -> bytes:
        return referee_pb2.SpectatorEvent(match_id=self.match_id, **kind).SerializeToString()
