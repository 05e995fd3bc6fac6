"""Replay records: a match's complete information as versioned JSON Lines with a hash chain.

Each line is one record, a JSON object written canonically (keys sorted, no spaces, UTF-8).
Every record carries ``type`` (its kind), ``seq`` (0, 1, …) and ``prev``: the SHA-256 (hex) of
the previous line's bytes (64 zeros for the first). The hash of the last line is the replay's
final hash. The file is written atomically when the match ends (temporary file, fsync, rename).

One frozen dataclass per record kind is defined here, beside the recorder that writes them; each
converts exactly to and from the JSON object of its line (``to_json`` / :func:`decode_record`):
what is read and written again is the same bytes. The records name no game: a game's own content
(Gin's deal and game results) sits in a ``content`` field, a frozen dataclass of that game's
whose fields share the record's JSON object (a game names its content classes through
:class:`referee.games.Game`). The public face of this module, with the reader and the visitor,
is :mod:`referee.replays`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, cast

from referee import games

REPLAY_FORMAT = "gin-arena-replay"
"""The ``format`` field of a replay's header record."""
REPLAY_VERSION = 1
PROTOCOL_VERSION = 2
"""The bot protocol (``gin_arena.v<N>``) the referee speaks: the seats' messages, whose digests a
replay's result keeps, are of that version's bytes (:attr:`HeaderRecord.protocol`)."""
"""The ``version`` field of a replay's header record."""
GENESIS = "0" * 64
"""The ``prev`` of the first record."""
ENVELOPE = ("type", "seq", "prev")
"""The keys every record's JSON object has besides its kind's fields."""


def canonical(record: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a record's JSON object (what is hashed and written)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class ReplayFormatError(ValueError):
    """A replay that is not what the referee writes: not JSON Lines, an unknown version or kind, a
    missing or extra field, a field of the wrong type. Names the line (from 1) and the field."""

    def __init__(self, line: int | None, field: str, expected: str, found: Any, message: str = "") -> None:
        self.line = line
        """The line of the file (1 is the header), ``None`` for the file as a whole."""
        self.field = field
        """The field: ``type``, ``action.card``, ``deal_end.hands[1][3]``, ``(line)``, …"""
        self.expected = expected
        """What the field should hold, in words."""
        self.found = found
        """What it holds (``"(missing)"`` when absent)."""
        self.message = message
        """More on why, or empty."""
        where = f"line {line}" if line is not None else "the replay"
        text = f"{where}: field {field}: expected {expected}, found {_short(found)}"
        super().__init__(text + (f" ({message})" if message else ""))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# ----------------------------------------------------------------------------------------------
# field codecs: a record field's annotation says what its JSON value may be
# ----------------------------------------------------------------------------------------------
class _Bad(Exception):
    def __init__(self, path: str, expected: str, found: Any) -> None:
        super().__init__(path)
        self.path, self.expected, self.found = path, expected, found


Decoder = Callable[[Any, str], Any]


def _scalar(kind: type, text: str) -> Decoder:
    def decode(value: Any, path: str) -> Any:
        if type(value) is not kind:  # exact: true is not 1, 1.0 is not 1
            raise _Bad(path, text, value)
        return value
    return decode


def _optional(inner: Decoder) -> Decoder:
    def decode(value: Any, path: str) -> Any:
        if value is None:
            return None
        try:
            return inner(value, path)
        except _Bad as e:
            raise _Bad(e.path, f"{e.expected} or null" if e.path == path else e.expected, e.found) from None
    return decode


def _tuple(inner: Decoder, text: str) -> Decoder:
    def decode(value: Any, path: str) -> Any:
        if type(value) is not list:
            raise _Bad(path, text, value)
        return tuple(inner(v, f"{path}[{i}]") for i, v in enumerate(value))
    return decode


def _object(value: Any, path: str) -> Any:
    if type(value) is not dict:
        raise _Bad(path, "a JSON object", value)
    return value


_INT, _STR, _BOOL = _scalar(int, "an integer"), _scalar(str, "text"), _scalar(bool, "true or false")
_DECODERS: dict[str, Decoder] = {
    "int": _INT, "str": _STR, "bool": _BOOL,
    "int | None": _optional(_INT), "str | None": _optional(_STR),
    "tuple[int, ...]": _tuple(_INT, "a list of integers"), "tuple[str, ...]": _tuple(_STR, "a list of texts"),
    "tuple[bool, ...]": _tuple(_BOOL, "a list of true/false"),
    "tuple[tuple[str, ...], ...]": _tuple(_tuple(_STR, "a list of texts"), "a list of lists of texts"),
    "tuple[int, ...] | None": _optional(_tuple(_INT, "a list of integers")),
    "tuple[bool, ...] | None": _optional(_tuple(_BOOL, "a list of true/false")),
    "dict[str, Any]": _object,
}
"""The annotations a record (or content) field may have, and how its JSON value is checked.
Lists become tuples; everything else is kept as read, so that encoding gives the same JSON."""
_DESCRIPTIONS = {
    "int": "an integer", "str": "text", "bool": "true or false", "int | None": "an integer or null",
    "str | None": "text or null", "tuple[int, ...]": "a list of integers", "tuple[str, ...]": "a list of texts",
    "tuple[bool, ...]": "a list of true/false", "tuple[tuple[str, ...], ...]": "a list of lists of texts",
    "dict[str, Any]": "a JSON object",
}
"""What a required field of each annotation holds, in words (for a missing field)."""

OMITTED = {"omitted": True}
"""``field(metadata=OMITTED)``: the key is left out of the JSON object while the field has its
default (a field added to the format later, absent from older replays)."""


def _plain_json(value: Any) -> Any:
    if type(value) is tuple:
        return [_plain_json(v) for v in value]
    return value


def _fields_json(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name == "content":
            out.update(_fields_json(value))
        elif not (f.metadata.get("omitted") and value == f.default):
            out[f.name] = _plain_json(value)
    return out


def _decode_fields(cls: type, obj: Mapping[str, Any], taken: set[str],
                   content: Callable[[], Any] | None = None) -> dict[str, Any]:
    """The constructor arguments of dataclass ``cls`` from ``obj`` (marks the keys used)."""
    args: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name == "content":
            assert content is not None
            args["content"] = content()
            continue
        if f.name not in obj:
            if f.metadata.get("omitted"):
                continue
            raise _Bad(f.name, _DESCRIPTIONS[str(f.type)], "(missing)")
        taken.add(f.name)
        value = args[f.name] = _DECODERS[str(f.type)](obj[f.name], f.name)
        if f.metadata.get("omitted") and value == f.default:  # it would not be written back
            raise _Bad(f.name, "no such key (the default is left out)", obj[f.name])
    return args


# ----------------------------------------------------------------------------------------------
# the records
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Record:
    KIND: ClassVar[str]
    """The record's ``type``."""

    def to_json(self) -> dict[str, Any]:
        """The record's JSON object, without ``seq`` and ``prev`` (the recorder adds them)."""
        out = _fields_json(self)
        out["type"] = self.KIND
        return out

    def accept(self, visitor: ReplayVisitor) -> None:
        """Call the visitor's ``visit_record``, then its ``visit_<kind>`` method, with this record."""
        visitor.visit_record(cast("Record", self))
        getattr(visitor, f"visit_{self.KIND}")(self)


@dataclass(frozen=True, slots=True)
class HeaderRecord(_Record):
    """The first record: who plays, under which rules, clock and policy (``format``/``version``
    are written and checked by the codec, not kept here)."""

    KIND: ClassVar[str] = "header"
    match_id: str
    """The match's id."""
    players: tuple[str, ...]
    """The player names, by seat."""
    bots: tuple[str, ...]
    """The names the bots gave in their hello, by seat (empty: the seat never connected)."""
    rules: dict[str, Any]
    """Game content: the game's rule set in its JSON form (Gin: ``RuleSet.to_dict()``). Not to be
    changed (it is the replay's own object)."""
    time_control: str
    """The time control, as text (``st=0.5 timemargin=100``)."""
    fault_policy: str
    """``forfeit`` or ``substitute``."""
    seed_commitment: str
    """SHA-256 (hex) of the operator's seed, revealed in the result record."""
    mix_nonces: bool
    """Whether the decks come from the seed mixed with the bots' nonces."""
    repeat_illegal: bool
    """Whether an illegal answer is refused and asked again (instead of a fault)."""
    reconnect_grace_ms: int
    """How long a disconnected seat may take to come back."""
    connect_timeout_ms: int
    """How long the seats had to connect."""
    max_actions_per_deal: int
    """Moves after which a deal is stopped as stalled."""
    event_messages: tuple[bool, ...] | None = field(default=None, metadata=OMITTED)
    """Whether each seat asked for ``event`` messages; ``None`` in replays older than the field
    (every seat got them)."""
    game: str = field(default="gin", metadata=OMITTED)
    """The game played; written only for a game other than the default (version 1 replays have
    no such key)."""
    seat_time_controls: tuple[str, ...] = field(default=(), metadata=OMITTED)
    """Each seat's own time control (cutechess-style text), when the seats' differ; empty: every
    seat played under ``time_control``."""
    substitute_time_faults: str = field(default="game", metadata=OMITTED)
    """``MatchSpec.substitute_time_faults``: ``move`` when a time forfeit under ``substitute``
    handed the built-in bot only the decision that timed out; written only then (``game``, the
    default, is what every replay older than the field did)."""
    protocol: int = field(default=1, metadata=OMITTED)
    """The bot protocol the seats' messages were sent in (:data:`PROTOCOL_VERSION` when
    written); 1 in replays older than protocol v2, which have no such key. The message digests
    of a replay of another protocol cannot be re-derived by this referee."""

    def to_json(self) -> dict[str, Any]:
        out = _Record.to_json(self)
        out["format"], out["version"] = REPLAY_FORMAT, REPLAY_VERSION
        return out

    @property
    def seats(self) -> int:
        """The number of seats."""
        return len(self.players)

    def events_for(self, seat: int) -> bool:
        """Whether ``seat`` was sent ``event`` messages."""
        return True if self.event_messages is None else self.event_messages[seat]


@dataclass(frozen=True, slots=True)
class DealRecord(_Record):
    """A deal starts: its deck and key (complete information)."""

    KIND: ClassVar[str] = "deal"
    game: int
    """The game's number, from 1."""
    deal: int
    """The deal's number within the game, from 1."""
    dealer: int
    """The dealer's seat."""
    deck: tuple[str, ...]
    """The shuffled deck, top first, in the game's card notation."""
    key: str
    """The deal's key (hex), derived from the seed."""


@dataclass(frozen=True, slots=True)
class ActionRecord(_Record):
    """One decision: the move a seat made (the one record of every decision)."""

    KIND: ClassVar[str] = "action"
    seat: int
    """The seat that moved."""
    request_id: int
    """The request it answered (0: the built-in substitute moved)."""
    action: str
    """The move in the game's notation (``discard Ts``)."""
    card: str | None
    """The card the move drew, took or discarded (complete information), if any."""
    think_us: int
    """Microseconds the answer took."""
    substitute: bool
    """The built-in substitute played it."""
    clocks: tuple[int, ...]
    """Each seat's clock shown after the move (ms)."""
    fallback: bool = field(default=False, metadata=OMITTED)
    """The bot marked its answer as a fallback (``ActionResponse.fallback``: its own code failed
    and its client answered for it); written only when true."""


@dataclass(frozen=True, slots=True)
class ReshuffleRecord(_Record):
    """A chance step within a deal: the discards were shuffled into a new stock."""

    KIND: ClassVar[str] = "reshuffle"
    stock_size: int
    """The stock's size after it."""


@dataclass(frozen=True, slots=True)
class DealEndRecord(_Record):
    """A deal ends."""

    KIND: ClassVar[str] = "deal_end"
    game: int
    """The game's number."""
    deal: int
    """The deal's number within the game."""
    scores: tuple[int, ...]
    """Each seat's score in the game after the deal."""
    content: Any
    """Game content: how the deal ended, in the game's terms (Gin: ``GinDealEnd``)."""


@dataclass(frozen=True, slots=True)
class GameEndRecord(_Record):
    """A game ends."""

    KIND: ClassVar[str] = "game_end"
    game: int
    """The game's number."""
    winner: int | None
    """The winning seat, if any."""
    totals: tuple[int, ...]
    """Each seat's points for the game."""
    deals: int
    """Deals played in the game."""
    forfeit: int | None
    """The seat that forfeited the game, if any."""
    content: Any
    """Game content: the game's own result details (Gin: ``GinGameEnd``)."""


@dataclass(frozen=True, slots=True)
class FaultRecord(_Record):
    """A seat faulted; with what a re-run needs to reproduce the fault (the optional fields)."""

    KIND: ClassVar[str] = "fault"
    seat: int
    """The faulting seat."""
    termination: str
    """What happened (``time_forfeit``, ``illegal_action``, ``crashed``, …)."""
    detail: str
    """In words."""
    policy: str
    """The policy applied: ``forfeit`` or ``substitute``."""
    decisions: int
    """Decisions made in the match before the fault."""
    request_id: int | None = field(default=None, metadata=OMITTED)
    """The request the fault answered or left open."""
    raw_kind: int | None = field(default=None, metadata=OMITTED)
    """The answer's action kind as received (the protobuf enum's number)."""
    raw_card: str | None = field(default=None, metadata=OMITTED)
    """The answer's card as received."""
    raw_action: str | None = field(default=None, metadata=OMITTED)
    """The answer's ``Action`` as received, serialised and in base64 (rummy's: more than a kind
    and a card)."""
    used_us: int | None = field(default=None, metadata=OMITTED)
    """Microseconds the answer took."""
    after_request: int | None = field(default=None, metadata=OMITTED)
    """A crash: the request open when it was reported (0: none)."""
    missing: tuple[int, ...] | None = field(default=None, metadata=OMITTED)
    """Failed to connect: the seats that did not."""
    scope: str = field(default="game", metadata=OMITTED)
    """What policy ``substitute`` handed the built-in bot: ``game`` — the seat to the end of the
    game; ``move`` — only the decision the seat lost on time (the seat's later actions are its
    own: :attr:`ActionRecord.substitute` false). Written only when ``move``: a reader older than
    the field refuses such a record (an unknown key) rather than read it as the seat's game."""

    @property
    def applied(self) -> str:
        """The policy as applied, in words (``forfeit``, ``substitute``, ``substitute for this
        decision only``)."""
        return self.policy + (" for this decision only" if self.scope == "move" else "")


@dataclass(frozen=True, slots=True)
class ResultRecord(_Record):
    """The last record: the match's result, the revealed seed and the digests."""

    KIND: ClassVar[str] = "result"
    winner: int | None
    """The winning seat, if any."""
    termination: str
    """How the match ended (``normal``, ``time_forfeit``, ``aborted``, …)."""
    faulting_seat: int | None
    """The seat whose fault ended the match, if any."""
    detail: str
    """In words."""
    games_won: tuple[int, ...]
    """Games won, by seat."""
    totals: tuple[int, ...]
    """Points over the match, by seat."""
    seed: str
    """The operator's seed (hex), revealed."""
    nonces: tuple[str, ...]
    """The bots' nonces (hex), by seat."""
    substituted_seats: tuple[int, ...]
    """Seats the built-in substitute played for, ascending."""
    decisions: int
    """Decisions made in the match."""
    think_us: tuple[int, ...]
    """Microseconds each seat spent thinking."""
    message_digests: tuple[str, ...]
    """SHA-256 (hex) of each seat's messages (``u32be(len) || bytes`` of each)."""
    messages: tuple[int, ...]
    """How many messages each seat was sent."""
    fallbacks: tuple[int, ...] = field(default=(), metadata=OMITTED)
    """By seat: the answers marked as fallbacks (:attr:`ActionRecord.fallback`); written only
    when a seat sent one."""


Record = HeaderRecord | DealRecord | ActionRecord | ReshuffleRecord | DealEndRecord | GameEndRecord \
    | FaultRecord | ResultRecord
"""Any record."""

RECORD_CLASSES: dict[str, type[Record]] = {cls.KIND: cls for cls in (
    HeaderRecord, DealRecord, ActionRecord, ReshuffleRecord, DealEndRecord, GameEndRecord, FaultRecord,
    ResultRecord)}
"""Record kind (``type``) → class, in the order a replay may hold them. A kind not here is an error:
the format has no extension records (a new kind is a new version)."""


class ReplayVisitor:
    """Walks a replay's records: ``Replay.accept`` (or a record's ``accept``) calls
    :meth:`visit_record` with each record (a hook for what every record needs, e.g. counting),
    then the ``visit_<kind>`` method of its kind. Every method does nothing unless overridden."""

    def visit_record(self, record: Record) -> None:
        """Called for every record before its kind's method; does nothing."""

    def visit_header(self, record: HeaderRecord) -> None:
        """The header."""

    def visit_deal(self, record: DealRecord) -> None:
        """A deal starts."""

    def visit_action(self, record: ActionRecord) -> None:
        """A decision."""

    def visit_reshuffle(self, record: ReshuffleRecord) -> None:
        """A reshuffle."""

    def visit_deal_end(self, record: DealEndRecord) -> None:
        """A deal ends."""

    def visit_game_end(self, record: GameEndRecord) -> None:
        """A game ends."""

    def visit_fault(self, record: FaultRecord) -> None:
        """A fault."""

    def visit_result(self, record: ResultRecord) -> None:
        """The result."""


def content_classes(game: str) -> tuple[type[Any], type[Any]]:
    """The content classes (deal end, game end) of ``game``'s records, as the game gives them
    through the seam (:class:`referee.games.Game`)."""
    try:
        entry = games.get(game)
    except ValueError:
        raise ReplayFormatError(1, "header.game", "one of " + ", ".join(games.names()), game) from None
    classes = entry.game.deal_end_content, entry.game.game_end_content
    for cls in classes:
        check_annotations(cls)
    return classes


def check_annotations(cls: type) -> None:
    """Fail at once on a record or content field the codec cannot read or write."""
    for f in dataclasses.fields(cls):
        if f.name != "content" and (str(f.type) not in _DECODERS or not (
                f.metadata.get("omitted") or str(f.type) in _DESCRIPTIONS)):
            raise TypeError(f"{cls.__qualname__}.{f.name}: a replay field cannot be {f.type!r}; "
                            f"one of {', '.join(_DECODERS)}")


for _cls in RECORD_CLASSES.values():
    check_annotations(_cls)


def _check_header_keys(obj: Mapping[str, Any]) -> None:
    if obj.get("format") != REPLAY_FORMAT:
        raise _Bad("format", repr(REPLAY_FORMAT), obj.get("format", "(missing)"))
    version = obj.get("version", "(missing)")
    if type(version) is not int or version != REPLAY_VERSION:
        raise _Bad("version", f"{REPLAY_VERSION} (the version this code reads)", version)


def decode_record(obj: Mapping[str, Any], line: int | None = None, game: str = "gin") -> Record:
    """The record a JSON object holds (``seq`` and ``prev`` are checked for type only: the order
    and the chain are the reader's and the audit's). ``game``: whose content the record may hold
    (the header's). Raises :class:`ReplayFormatError` naming ``line`` and the field."""
    kind = obj.get("type")
    cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ReplayFormatError(line, "type", "one of " + ", ".join(RECORD_CLASSES), kind if "type" in obj
                                else "(missing)", "an unknown kind of record")
    taken = set(ENVELOPE)
    try:
        for name, decode in (("seq", _INT), ("prev", _STR)):
            if name not in obj:
                raise _Bad(name, _DESCRIPTIONS["int" if name == "seq" else "str"], "(missing)")
            decode(obj[name], name)
        if cls is HeaderRecord:
            _check_header_keys(obj)
            taken.update(("format", "version"))
        content = _content_decoder(cls, obj, line, game, taken)
        args = _decode_fields(cls, obj, taken, content)
    except _Bad as e:
        raise ReplayFormatError(line, f"{kind}.{e.path}", e.expected, e.found) from None
    extra = sorted(set(obj) - taken)
    if extra:
        raise ReplayFormatError(line, f"{kind}.{extra[0]}", "no such field", obj[extra[0]],
                                f"a {kind} record has no field {extra[0]!r}")
    return cls(**args)


def _content_decoder(cls: type, obj: Mapping[str, Any], line: int | None, game: str,
                     taken: set[str]) -> Callable[[], Any] | None:
    if cls is not DealEndRecord and cls is not GameEndRecord:
        return None
    content_cls = content_classes(game)[0 if cls is DealEndRecord else 1]

    def decode() -> Any:
        return content_cls(**_decode_fields(content_cls, obj, taken))
    return decode


# ----------------------------------------------------------------------------------------------
# the recorder
# ----------------------------------------------------------------------------------------------
def _plain(text: str) -> bool:
    """Whether JSON writes ``text`` as it is between quotes."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


_EMPTY = zlib.compressobj(1, zlib.DEFLATED, -10, 2)  # what a cleared recorder holds (never fed)
_BATCH = 16
"""Lines deflated together (one call per line cost more than the line's hash)."""


class LineSink(Protocol):
    """Where a recorder's lines go instead of memory (a running match's journal)."""

    def append(self, kind: str, line: bytes, public: bytes | None = None) -> None:
        """Take a record's line (``public``: its spectator form, when the caller built it)."""


class ReplayRecorder:
    """Collects a match's records, chaining their hashes. The lines are kept deflated until
    the match ends (a few hundred bytes per decision otherwise, for every running match), or,
    with a :attr:`sink`, handed to it as they come (the journal of ``referee.table.journal``)."""

    def __init__(self) -> None:
        self.last_hash = GENESIS
        self.count = 0
        self.sink: LineSink | None = None
        """Where the lines go instead of memory (set before the first record)."""
        self._deflate = zlib.compressobj(1, zlib.DEFLATED, -10, 2)  # ~6 KB of state, ~2.7x on replays
        self._chunks: list[bytes] = []
        self._pending: list[bytes] = []  # lines not yet deflated (deflated in batches: fewer calls)

    def add_record(self, record: Record) -> str:
        """Append a record; returns its hash. An :class:`ActionRecord` takes the fast path of
        :meth:`add_action`."""
        if type(record) is ActionRecord:
            return self.add_action(record.seat, record.request_id, record.action, record.card, record.think_us,
                                   record.substitute, record.clocks)
        obj = record.to_json()
        obj["seq"], obj["prev"] = self.count, self.last_hash
        return self._append(canonical(obj), record.KIND)

    def add_action(self, seat: int, request_id: int, action: str, card: str | None, think_us: int,
                   substitute: bool, clocks: list[int] | tuple[int, ...], fallback: bool = False) -> str:
        """Append an :class:`ActionRecord` given as its fields (the one record of every decision):
        the same bytes as the canonical encoder's, written without it (a fallback, rare, takes
        the encoder's path)."""
        if fallback or not (_plain(action) and (card is None or _plain(card))):
            obj = ActionRecord(seat=seat, request_id=request_id, action=action, card=card, think_us=think_us,
                               substitute=substitute, clocks=tuple(clocks), fallback=fallback).to_json()
            obj["seq"], obj["prev"] = self.count, self.last_hash
            return self._append(canonical(obj), "action")
        card_json = "null" if card is None else f'"{card}"'
        rest = (
            f'"clocks":[{",".join(map(str, clocks))}],"prev":"{self.last_hash}","request_id":{request_id:d},'
            f'"seat":{seat:d},"seq":{self.count:d},"substitute":{"true" if substitute else "false"},'
            f'"think_us":{think_us:d},"type":"action"}}'
        )
        line = f'{{"action":"{action}","card":{card_json},{rest}'.encode()
        sink = self.sink
        if sink is not None:  # the journal's spectator form: the card left out
            sink.append("action", line, f'{{"action":"{action}",{rest}'.encode())
            return self._count(line)
        return self._append(line, "action")

    def _append(self, line: bytes, kind: str) -> str:
        if self.sink is not None:
            self.sink.append(kind, line)
            return self._count(line)
        pending = self._pending
        pending.append(line)
        if len(pending) >= _BATCH:
            self._deflate_pending()
        return self._count(line)

    def _count(self, line: bytes) -> str:
        self.count += 1
        self.last_hash = hashlib.sha256(line).hexdigest()
        return self.last_hash

    def _deflate_pending(self) -> None:
        if self._deflate is _EMPTY:  # recording again after clear(): a fresh stream
            self._deflate = zlib.compressobj(1, zlib.DEFLATED, -10, 2)
        self._pending.append(b"")
        chunk = self._deflate.compress(b"\n".join(self._pending))
        if chunk:
            self._chunks.append(chunk)
        self._pending = []

    @property
    def lines(self) -> list[bytes]:
        """Every record so far, in order (canonical bytes, no newline); those kept in memory
        (none went to a :attr:`sink`)."""
        if self._pending:
            self._deflate_pending()
        data = zlib.decompress(b"".join(self._chunks) + self._deflate.copy().flush(), -10)
        return data.split(b"\n")[:-1]

    def clear(self) -> None:
        """Drop the lines (once written); the count and the final hash stay."""
        self._chunks = []
        self._pending = []
        self._deflate = _EMPTY

    def write(self, path: Path) -> None:
        """Write every record to ``path`` atomically."""
        write_atomic(path, b"".join(line + b"\n" for line in self.lines))


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
