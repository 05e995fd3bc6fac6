"""The referee's limits: every resource a client can make the server spend, bounded by one
named, documented setting with a safe default (``referee serve --limit KEY=VALUE``).

A request that asks for more than a bound allows is refused with ``INVALID_ARGUMENT`` naming
the field; a client that uses more than its share (streams, queued bytes, messages) is cut off
with ``RESOURCE_EXHAUSTED`` and a status text that says which limit it hit. docs/protocol.md
has the table of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from referee.model.spec import MatchSpec

WIRE_MS_MAX = 2**32 - 1
"""The largest value of the protocol's millisecond fields (``uint32``)."""


class LimitExceeded(Exception):
    """A server-wide limit refuses a request (gRPC ``RESOURCE_EXHAUSTED``)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one referee. Every field is a positive integer."""

    streams_per_connection: int = 100
    """Default 100. Concurrent ``Play``, ``WatchMatch`` and ``WatchMatches`` streams one connection
    may hold (a bot needs one); the next is refused ``RESOURCE_EXHAUSTED`` naming this limit, so a
    client opens another connection. HTTP/2 SETTINGS announce twice as many
    (``grpc.max_concurrent_streams``), and gRPC's overload protection holds a connection to that,
    reset streams included: the bound on what one connection's rapid resets can hold."""
    streams_per_server: int = 2_000
    """Default 2000. Concurrent ``Play``, ``WatchMatch`` and ``WatchMatches`` streams over all
    connections; the next is refused ``RESOURCE_EXHAUSTED``. Room for 200 matches of six seats
    plus spectators."""
    outbound_bytes: int = 1 << 20
    """Default 1 MiB. Bytes queued for one stream that its client has not read yet; past it the
    stream ends ``RESOURCE_EXHAUSTED`` (a match's messages are a few KB at a time, so only a
    client that stopped reading reaches it — and it never slows the match, whose sends only
    queue)."""
    inbound_burst: int = 200
    """Default 200. Messages of any kind (actions, pings, empty or unknown-match messages) a
    stream may send beyond those it was asked for: each request the referee sends pays for one
    answer; the budget refills at ``inbound_per_second``. Past it the stream ends
    ``RESOURCE_EXHAUSTED``."""
    inbound_per_second: int = 20
    """Default 20. How fast the inbound budget refills (pings of an idle bot, ~1 a second, stay
    well inside it)."""
    waiting_matches: int = 1_000
    """Default 1000. Matches created but not yet started (waiting for their seats); the next
    ``CreateMatch`` is refused ``RESOURCE_EXHAUSTED``. Each holds ~13 KB until it starts or its
    connect timeout ends it."""
    connect_timeout_ms: int = 600_000
    """Default 10 minutes. The longest ``connect_timeout_ms`` a match may ask for (the arena's
    default is 60 s); it bounds how long a waiting match is held."""
    reconnect_grace_ms: int = 600_000
    """Default 10 minutes. The longest ``reconnect_grace_ms`` a match may ask for."""
    time_control_ms: int = 86_400_000
    """Default 24 hours. The largest time-control field (per move, base, increment, margin) in
    ms; at most the wire's ``uint32`` range, which every clock value must fit."""
    games: int = 1_000
    """Default 1000. The most games a match may ask for (the game's rules' game count)."""
    target: int = 100_000
    """Default 100000. The largest points target a match may ask for (a game's or a match's;
    tournaments play to 500 or 1000)."""
    actions_per_deal: int = 100_000
    """Default 100000. The largest ``max_actions_per_deal`` a match may ask for."""
    name_length: int = 64
    """Default 64. The longest player name, bot name (hello) and match id, in characters: a
    status lists them all, and ``ListMatches`` must stay inside a client's 4 MiB."""
    text_length: int = 256
    """Default 256. The longest seat token, cancel reason and ``Resign`` reason (a bot's is cut,
    not refused), in characters."""
    spectator_queue_bytes: int = 1 << 20
    """Default 1 MiB. Events queued for one spectator that it has not read; past it the
    spectator is dropped (``RESOURCE_EXHAUSTED``), the match is not slowed."""
    finished_matches: int = 1_000
    """Default 1000. Finished matches kept for ``GetMatch``/``ListMatches``/``WatchMatch``; the
    oldest are forgotten first (their replays stay on disk)."""
    list_bytes: int = 1 << 20
    """Default 1 MiB. The largest ``ListMatches`` reply (a default gRPC client takes 4 MiB):
    matches past it are left off, newest first; the reply's trailing metadata
    ``gin-arena-left-off`` says how many, and a call with the request metadata
    ``gin-arena-after: <the last match id it got>`` lists the next page."""
    match_events_queue: int = 1_000
    """Default 1000. Match events (a match started, a match finished) queued for one subscriber
    (``Referee.open_match_events``) that it has not read; past it the subscriber is dropped with
    that reason, the matches are not slowed."""
    match_events_backlog: int = 1_000
    """Default 1000. The latest match events the referee keeps so that a ``WatchMatches`` client
    that lost its stream resumes after the last event it got; one that asks for an older event
    gets ``MatchEvent.lost`` first (and re-reads ``ListMatches``)."""
    finished_bytes: int = 64 << 20
    """Default 64 MiB. What the kept finished matches may hold (their packed spectator logs);
    past it the oldest are forgotten."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"limit {f.name} must be a positive integer; got {value!r}")
        for name in ("connect_timeout_ms", "reconnect_grace_ms", "time_control_ms"):
            if getattr(self, name) > WIRE_MS_MAX:
                raise ValueError(f"limit {name} must be at most {WIRE_MS_MAX} (the wire's ms fields)")

    @classmethod
    def parse(cls, items: Iterable[str]) -> Limits:
        """Limits from ``KEY=VALUE`` words (``ValueError`` names a bad one), the rest default."""
        known = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, int] = {}
        for item in items:
            key, sep, text = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in known:
                raise ValueError(f"{item!r}: expected KEY=VALUE with KEY one of {', '.join(sorted(known))}")
            try:
                values[key] = int(text.replace("_", ""))
            except ValueError:
                raise ValueError(f"{item!r}: {text!r} is not an integer") from None
        return cls(**values)

    def check(self, field: str, value: int, limit: str) -> None:
        """``ValueError`` naming ``field`` if ``value`` exceeds the limit named ``limit``."""
        bound = getattr(self, limit)
        if value > bound:
            raise ValueError(f"{field}: {value} is more than the referee's limit {bound} ({limit})")

    def check_length(self, field: str, text: str | bytes, limit: str) -> None:
        """``ValueError`` naming ``field`` if ``text`` is longer than the limit named ``limit``."""
        bound = getattr(self, limit)
        if len(text) > bound:
            raise ValueError(f"{field}: {len(text)} characters is more than the referee's limit {bound} ({limit})")


def check_spec(spec: MatchSpec, limits: Limits) -> None:
    """``ValueError`` naming the ``CreateMatch`` field of ``spec`` that a limit refuses."""
    for i, name in enumerate(spec.players):
        limits.check_length(f"seats[{i}].name", name, "name_length")
    for i, token in enumerate(spec.seat_tokens):
        limits.check_length(f"seats[{i}].token", token, "text_length")
    for i, bot in enumerate(spec.seat_bots):
        limits.check_length(f"seat_bots[{i}]", bot, "name_length")
    limits.check_length("match_id", spec.match_id, "name_length")
    limits.check("connect_timeout_ms", spec.connect_timeout_ms, "connect_timeout_ms")
    limits.check("reconnect_grace_ms", spec.reconnect_grace_ms, "reconnect_grace_ms")
    limits.check("max_actions_per_deal", spec.max_actions_per_deal, "actions_per_deal")
    controls = [("time_control", spec.time_control)]
    controls += [(f"seat_time_controls[{i}]", tc) for i, tc in enumerate(spec.seat_time_controls)]
    for where, tc in controls:
        for part in ("per_move_ms", "base_ms", "increment_ms", "margin_ms"):
            limits.check(f"{where}.{part}", getattr(tc, part), "time_control_ms")
    for field, kind, value in spec.game_entry.game.match_size(spec.rules):
        limits.check(field, value, kind)
