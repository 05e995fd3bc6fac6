"""The game-neutral envelope: time controls, fault policies, match results and the operator's
``CreateMatch`` request as protobuf messages, and the hand-made encoders of protobuf's wire
format that the games' hot paths use. What belongs to one game (its rules, actions, states and
results) is converted by that game's wire module (``referee.games.GameWire``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import FunctionType
from typing import Any

from gin_arena.v1 import game_pb2, referee_pb2
from referee import games
from referee.model.spec import DEFAULT_GAME, TERMINATIONS, FaultPolicy, MatchReport, MatchSpec
from referee.model.timecontrol import TimeControl

WireError = games.WireError

FAULT_POLICY_TO_PB: dict[FaultPolicy, int] = {
    "forfeit": game_pb2.FAULT_POLICY_FORFEIT,
    "substitute": game_pb2.FAULT_POLICY_SUBSTITUTE,
}
"""The fault policies as the protocol's ``FaultPolicy`` enum (the one mapping of them)."""
FAULT_POLICY_FROM_PB: dict[int, FaultPolicy] = {
    game_pb2.FAULT_POLICY_UNSPECIFIED: "forfeit",
    **{v: k for k, v in FAULT_POLICY_TO_PB.items()},
}
"""The protocol's ``FaultPolicy`` values as fault policies (unspecified: ``forfeit``)."""


def time_control_to_proto(tc: TimeControl) -> game_pb2.TimeControl:
    """A time control as a message (with its text form)."""
    msg = game_pb2.TimeControl(text=str(tc), margin_ms=tc.margin_ms)
    if tc.is_fixed:
        msg.per_move.move_ms = tc.per_move_ms
    else:
        msg.incremental.base_ms = tc.base_ms
        msg.incremental.increment_ms = tc.increment_ms
    return msg


def time_control_from_proto(msg: game_pb2.TimeControl) -> TimeControl:
    """A message as a time control: the structured fields if set, else the text."""
    try:
        which = msg.WhichOneof("kind")
        if which == "per_move":
            return TimeControl(per_move_ms=msg.per_move.move_ms, margin_ms=msg.margin_ms)
        if which == "incremental":
            return TimeControl(
                base_ms=msg.incremental.base_ms, increment_ms=msg.incremental.increment_ms,
                margin_ms=msg.margin_ms,
            )
        return TimeControl.parse(msg.text)
    except ValueError as e:
        raise WireError(f"time_control: {e}") from None


# The messages that go out on every decision (the action request and the information state in
# it) are encoded straight to protobuf bytes: building them as message objects cost ~170 µs a
# request, more than gRPC's own round trip. The encoding is the one protobuf's deterministic
# serialisation gives (fields in number order, proto3 defaults left out, packed repeated
# scalars); tests/test_wire_encoding.py checks it against message objects on thousands of
# states. Field numbers come from the descriptors, so the encoder follows the .proto.
def varint(n: int) -> bytes:
    """``n`` as a protobuf varint (negative numbers as int64: ten bytes)."""
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


COMPILED: bool = not isinstance(varint, FunctionType)
"""Whether the byte encoders (this module and the games' wire modules) run compiled by mypyc."""

_SMALL = tuple(varint(i) for i in range(256))


def v(n: int) -> bytes:
    """:func:`varint`, from a table for the small numbers."""
    return _SMALL[n] if 0 <= n < 256 else varint(n)


VARINT, LEN = 0, 2
"""Protobuf wire types."""


def tags(message: type, wire_types: dict[str, int]) -> dict[str, bytes]:
    """The encoded tag of each named field of ``message`` (numbers from its descriptor)."""
    fields = message.DESCRIPTOR.fields_by_name  # type: ignore[attr-defined]
    return {name: varint(fields[name].number << 3 | wt) for name, wt in wire_types.items()}


def len_field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag + v(len(payload)) + payload


def uint(tag: bytes, n: int) -> bytes:
    """An integer field (nothing for 0, the proto3 default)."""
    return tag + v(n) if n else b""


def uint_field(tag: bytes) -> Callable[[int], bytes]:
    """An encoder of one integer field, remembering the values it has seen (a few hundred)."""
    cache: dict[int, bytes] = {}

    def encode(n: int) -> bytes:
        out = cache.get(n)
        if out is None:
            out = tag + varint(n) if n else b""
            if len(cache) < 4096:
                cache[n] = out
        return out

    return encode


def packed(tag: bytes, values: Iterable[int]) -> bytes:
    """A packed repeated integer field (nothing when empty)."""
    payload = b"".join([v(x) for x in values])
    return tag + v(len(payload)) + payload if payload else b""


def text(tag: bytes, value: str) -> bytes:
    """A string field (nothing when empty)."""
    return len_field(tag, value.encode()) if value else b""


_SPECTATOR = tags(referee_pb2.SpectatorEvent, {"match_id": LEN, "event": LEN})


def spectator_event_bytes(match_id: str, event: bytes) -> bytes:
    """A ``SpectatorEvent`` of the match carrying the encoded ``PublicEvent`` ``event``."""
    return text(_SPECTATOR["match_id"], match_id) + len_field(_SPECTATOR["event"], event)


def create_match_request(spec: MatchSpec) -> referee_pb2.CreateMatchRequest:
    """A match spec as the operator service's ``CreateMatch`` request (for a remote referee)."""
    game = spec.game_entry
    msg = referee_pb2.CreateMatchRequest(
        seats=[referee_pb2.SeatSpec(name=name, token=spec.seat_tokens[i] if spec.seat_tokens else "")
               for i, name in enumerate(spec.players)],
        time_control=time_control_to_proto(spec.time_control),
        fault_policy=FAULT_POLICY_TO_PB[spec.fault_policy],  # type: ignore[arg-type]
        reconnect_grace_ms=spec.reconnect_grace_ms,
        repeat_illegal=spec.repeat_illegal,
        seed=spec.seed or b"",
        withhold_seed=not spec.reveal_seed,
        match_id=spec.match_id,
        mix_bot_nonces=spec.mix_nonces,
        connect_timeout_ms=spec.connect_timeout_ms,
        max_actions_per_deal=spec.max_actions_per_deal,
        seat_time_controls=[time_control_to_proto(tc) for tc in spec.seat_time_controls],
        **game.wire.start_fields(spec.rules),
    )
    if not spec.default_game:
        msg.game = spec.game
    return msg


def match_report_from_proto(result: game_pb2.MatchResult, replay_path: str = "", game: str = "") -> MatchReport:
    """A remote referee's ``MatchResult`` as a report (it does not carry deal counts or think
    times: those are 0). The seed is the revealed operator seed, mixed with the nonces when they
    were mixed in. ``game``: the match's game (the spec's default if empty)."""
    entry = games.get(game or DEFAULT_GAME)
    index = int(result.termination) - 1
    termination = TERMINATIONS[index] if 0 <= index < len(TERMINATIONS) else "internal_error"
    winner = None if result.winner < 0 else int(result.winner)
    faulting = None if result.faulting_seat < 0 else int(result.faulting_seat)
    outcome = entry.wire.outcome_from_result(result, termination == "normal")
    seed = result.seed if not any(result.nonces) else entry.game.mix_seed(result.seed, list(result.nonces))
    n = len(result.player_names)
    places = tuple(result.places) or tuple(1 if winner is None or s == winner else 2 for s in range(n))
    return MatchReport(
        match_id=result.match_id, players=tuple(result.player_names), winner=winner, termination=termination,
        faulting_seat=faulting, detail=result.detail, outcome=outcome,
        substituted_seats=tuple(int(s) for s in result.substituted_seats), seed=seed,
        seed_commitment=result.seed_commitment, replay_path=replay_path, replay_hash=result.replay_hash,
        decisions=0, think_ms=(0,) * n, places=places,
        points=tuple(int(t) for t in result.points) or tuple(int(t) for t in result.total_points) or (0,) * n,
        fallbacks=tuple(int(f) for f in result.fallbacks),
    )


def match_result(report: MatchReport, operator_seed: bytes, nonces: Sequence[bytes],
                 summary: Mapping[str, Any], game_results: Sequence[game_pb2.GameResult]) -> game_pb2.MatchResult:
    """The end of a match, with the seed revealed. ``summary``: the game's ``result_fields``
    (``games_won`` and ``totals`` by seat, empty if no match was played); ``game_results``: the
    games as the game's wire converts them."""
    n = len(report.players)
    return game_pb2.MatchResult(
        winner=-1 if report.winner is None else report.winner,
        termination=TERMINATIONS.index(report.termination) + 1,  # type: ignore[arg-type]
        faulting_seat=-1 if report.faulting_seat is None else report.faulting_seat,
        detail=report.detail,
        games_won=summary.get("games_won") or [0] * n,
        total_points=summary.get("totals") or [0] * n,
        games=game_results,
        seed=operator_seed,
        seed_commitment=report.seed_commitment,
        replay_hash=report.replay_hash,
        substituted_seats=report.substituted_seats,
        match_id=report.match_id,
        player_names=report.players,
        nonces=nonces,
        places=report.places,
        points=report.points,
        fallbacks=report.fallbacks,
    )
