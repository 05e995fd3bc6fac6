"""The game-neutral envelope (``gin_arena.v2``): time controls, fault policies, match results and
the operator's ``CreateMatch`` request as protobuf messages, the hand-made encoders of protobuf's
wire format that the games' hot paths use, and the shape every game's encoder shares: the action
request (legal actions, clocks, the deal's events, the game's state in ``oneof game``), a seat's
cache of its encoded events, the envelope ``Event``. What belongs to one game (its rules, actions,
states and results) is converted by that game's wire module (``referee.<game>.wire``, a
``referee.games.GameWire``), which fills the envelope's ``oneof game``."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import Any

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from referee import games
from referee.model.spec import DEFAULT_GAME, TERMINATIONS, FaultPolicy, MatchReport, MatchSpec
from referee.model.timecontrol import TimeControl

WireError = games.WireError

FAULT_POLICY_TO_PB: dict[FaultPolicy, int] = {
    "forfeit": common_pb2.FAULT_POLICY_FORFEIT,
    "substitute": common_pb2.FAULT_POLICY_SUBSTITUTE,
}
"""The fault policies as the protocol's ``FaultPolicy`` enum (the one mapping of them)."""
FAULT_POLICY_FROM_PB: dict[int, FaultPolicy] = {
    common_pb2.FAULT_POLICY_UNSPECIFIED: "forfeit",
    **{v: k for k, v in FAULT_POLICY_TO_PB.items()},
}
"""The protocol's ``FaultPolicy`` values as fault policies (unspecified: ``forfeit``)."""


def time_control_to_proto(tc: TimeControl) -> common_pb2.TimeControl:
    """A time control as a message (with its text form)."""
    msg = common_pb2.TimeControl(text=str(tc), margin_ms=tc.margin_ms)
    if tc.is_fixed:
        msg.per_move.move_ms = tc.per_move_ms
    else:
        msg.incremental.base_ms = tc.base_ms
        msg.incremental.increment_ms = tc.increment_ms
    return msg


def time_control_from_proto(msg: common_pb2.TimeControl) -> TimeControl:
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
    """A ``SpectatorEvent`` of the match carrying the encoded envelope ``Event`` ``event``."""
    return text(_SPECTATOR["match_id"], match_id) + len_field(_SPECTATOR["event"], event)


# ----- the shape every game's encoder shares -----
def fill_rules(msg: Any, rules: Any, enums: Mapping[str, Mapping[str, int]], scalars: Iterable[str]) -> Any:
    """``msg`` (a game's ``RuleSet`` message) with every field of ``rules`` set: each field of
    ``enums`` through its table (the rule's value to the enum's number), each of ``scalars`` as
    it is; returns ``msg``. Every field filled, so a bot never needs to know the presets."""
    for name, table in enums.items():
        setattr(msg, name, table[getattr(rules, name)])
    for name in scalars:
        setattr(msg, name, getattr(rules, name))
    return msg


def rules_overrides(msg: Any, enums_back: Mapping[str, Mapping[int, str]], scalars: Iterable[str],
                    what: str) -> dict[str, object]:
    """The fields a game's ``RuleSet`` message sets (enums not UNSPECIFIED, scalars with
    presence), as the rule set's values: the overrides of the preset its ``name`` picks
    (:class:`WireError` naming ``what.field`` for an unknown enum value)."""
    overrides: dict[str, object] = {}
    for name, table in enums_back.items():
        value = getattr(msg, name)
        if value:
            if value not in table:
                raise WireError(f"{what}.{name}: unknown value {value}")
            overrides[name] = table[value]
    for name in scalars:
        if msg.HasField(name):
            overrides[name] = getattr(msg, name)
    return overrides


def game_tag(message: type, member: str) -> bytes:
    """The encoded tag of ``member`` (``gin``, ``rummy``, ``other``) of ``message``'s ``oneof game``."""
    return tags(message, {member: LEN})[member]


_AR = tags(bot_pb2.ActionRequest, {
    "request_id": VARINT, "legal_actions": LEN, "clocks": LEN, "time_for_move_ms": VARINT, "events": LEN,
})
_RM = tags(bot_pb2.RefereeMessage, {"match_id": LEN, "action_request": LEN})
_CLOCK = tags(common_pb2.Clock, {"seat": VARINT, "remaining_ms": VARINT, "increment_ms": VARINT, "running": VARINT})
_EVENT = tags(common_pb2.Event, {"seat": VARINT, "think_ms": VARINT})
_CLOCKS: dict[tuple[tuple[int, ...], int, int], bytes] = {}
_TIME_FOR_MOVE = uint_field(_AR["time_for_move_ms"])
_THINK = uint_field(_EVENT["think_ms"])


@dataclass(frozen=True, slots=True)
class GameTags:
    """The tags of one game's member of the envelope's ``oneof game``s on the hot path."""

    action: bytes
    """In ``Action``."""
    event: bytes
    """In ``Event``."""
    state: bytes
    """In ``ActionRequest``."""


def game_tags(member: str) -> GameTags:
    """The tags of the game member ``member`` (the game's field name in every ``oneof game``)."""
    return GameTags(action=game_tag(common_pb2.Action, member), event=game_tag(common_pb2.Event, member),
                    state=game_tag(bot_pb2.ActionRequest, member))


def clocks_bytes(remaining_ms: Sequence[int], increment_ms: int, seat: int) -> bytes:
    """Every seat's ``Clock`` as entries of ``ActionRequest.clocks`` (``seat``'s running)."""
    key = (tuple(remaining_ms), increment_ms, seat)
    out = _CLOCKS.get(key)
    if out is None:
        c = _CLOCK
        out = b"".join([
            len_field(_AR["clocks"], uint(c["seat"], s) + uint(c["remaining_ms"], r)
                      + uint(c["increment_ms"], increment_ms) + uint(c["running"], int(s == seat)))
            for s, r in enumerate(remaining_ms)
        ])
        if len(_CLOCKS) > 4096:
            _CLOCKS.clear()
        _CLOCKS[key] = out
    return out


def event_bytes(seat: int, think_ms: int, game: bytes, payload: bytes) -> bytes:
    """An envelope ``Event`` encoded: ``seat``, ``think_ms`` and the game's event ``payload``
    under the tag ``game`` (the game's ``GameTags.event``)."""
    return uint(_EVENT["seat"], seat) + _THINK(think_ms) + len_field(game, payload)


def event_entry(seat: int, game: bytes, payload: bytes) -> bytes:
    """One entry of ``ActionRequest.events`` (no think time)."""
    return len_field(_AR["events"], uint(_EVENT["seat"], seat) + len_field(game, payload))


def action_entry(game: bytes, payload: bytes) -> bytes:
    """One entry of ``ActionRequest.legal_actions``: an envelope ``Action`` holding the game's
    encoded action ``payload`` under the tag ``game`` (the game's ``GameTags.action``)."""
    return len_field(_AR["legal_actions"], len_field(game, payload))


def action_request_bytes(match_id: str, request_id: int, legal: bytes, clocks: bytes, time_for_move_ms: int,
                         events: bytes, state_tag: bytes, state: bytes) -> bytes:
    """``RefereeMessage{match_id, action_request}`` encoded from its encoded parts: the legal
    actions (:func:`action_entry`), the clocks (:func:`clocks_bytes`), the deal's events
    (:func:`event_entry`) and the game's state under ``state_tag`` (``GameTags.state``)."""
    request = b"".join([
        uint(_AR["request_id"], request_id), legal, clocks, _TIME_FOR_MOVE(time_for_move_ms), events,
        len_field(state_tag, state),
    ])
    return text(_RM["match_id"], match_id) + len_field(_RM["action_request"], request)


class SeatEvents:
    """A seat's events of the current deal as entries of ``ActionRequest.events``, encoded once:
    a deal's events only grow, so each request encodes just the new ones (the games' seat
    caches hold one)."""

    __slots__ = ("count", "deal", "joined")

    def __init__(self) -> None:
        self.deal: Hashable = None
        """The deal (and seat) the entries are of."""
        self.count = 0
        """How many events are encoded."""
        self.joined = b""
        """The entries, encoded."""

    def update(self, deal: Hashable, events: Sequence[Any], entry: Callable[[Any], bytes]) -> bool:
        """Bring the entries to ``events`` of ``deal``, encoding each new one with ``entry``;
        returns whether they were started afresh (another deal, or fewer events)."""
        fresh = deal != self.deal or self.count > len(events)
        if fresh:
            self.deal, self.count, self.joined = deal, 0, b""
        if self.count < len(events):
            self.joined += b"".join([entry(ev) for ev in events[self.count:]])
            self.count = len(events)
        return fresh


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
        time_forfeit_substitutes_one_decision=spec.substitute_time_faults == "move",
        match_id=spec.match_id,
        mix_bot_nonces=spec.mix_nonces,
        connect_timeout_ms=spec.connect_timeout_ms,
        max_actions_per_deal=spec.max_actions_per_deal,
        seat_time_controls=[time_control_to_proto(tc) for tc in spec.seat_time_controls],
        **game.wire.start_fields(spec.rules),
    )
    if not spec.default_game:
        msg.game_name = spec.game
    return msg


def match_report_from_proto(result: common_pb2.MatchResult, replay_path: str = "", game: str = "") -> MatchReport:
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
                 summary: Mapping[str, Any], game_results: Sequence[common_pb2.GameResult],
                 game_name: str = "") -> common_pb2.MatchResult:
    """The end of a match, with the seed revealed. ``summary``: the game's ``result_fields``
    (``games_won`` and ``totals`` by seat, empty if no match was played); ``game_results``: the
    games as the game's wire converts them; ``game_name``: the match's game."""
    n = len(report.players)
    return common_pb2.MatchResult(
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
        game_name=game_name,
    )
