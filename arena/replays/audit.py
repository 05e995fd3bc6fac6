"""``arena audit``: convince yourself (and anyone else) that a recorded match was fair.

A replay is checked in this order; the first discrepancy is reported (record ``seq``, field,
expected, found) and the audit fails:

1. **chain** — every line is a JSON object in canonical form (keys sorted, no spaces), ``seq``
   counts 0, 1, …, and ``prev`` is the SHA-256 of the previous line (64 zeros first). The hash of
   the last line is the replay's *final hash*; ``--expect-hash`` (or a run's ``results.json``)
   anchors it from outside. The records are then read by the typed reader
   (:mod:`referee.replays`): a record without exactly the fields and types of its kind fails
   check 4 (the referee never writes one).
2. **commitment** — SHA-256 of the seed revealed in the result record equals the header's
   ``seed_commitment`` (published to both seats before the first card).
3. **decks** — every ``deal`` record's deck and key are re-derived from that seed (mixed with
   the seats' nonces when ``mix_nonces``) by the documented shuffle.
4. **rerun** — the clocks are checked against the time control (a think time beyond the
   allowance must have produced a time forfeit), then the match is played again through the
   referee's own table from the seats' recorded answers (``referee.table.resim``): every record must
   come out byte for byte the same; the first differing field is named. This re-checks every
   action's legality, every card drawn, every deal result and score, faults and the match result.
5. **digests** — each seat's message digest (SHA-256 over ``u32be(len) || bytes`` of every
   message of the match's story sent to it) is recomputed from the re-run's messages.
6. **information** — every message re-derived for a seat is searched for cards; each must be one
   that seat could know at that point (its hand, face-up cards, its own draws and knock card;
   after a showdown both hands). An independent second line of defence besides the referee's
   byte-identity tests. Which cards a seat may know, and which fields of its messages hold
   cards, is the game's word (``referee.games.KnowsCards``); a plugin game's content, packed in
   ``google.protobuf.Any``, is unpacked and read the same way.

A check that cannot be made for a replay's game — a game that does not say what each seat may
know, content the audit cannot decode, a match in which it finds no card at all — is reported
*not checked* (:class:`Unchecked`), never passed: the audit fails unless ``--allow-unchecked``.

Fields nothing depends on are covered only by the hash chain (see :data:`CHAIN_ONLY`): a forger
who rewrites one and recomputes every hash is caught only by the external anchor.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from google.protobuf import any_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from arena.model.paths import find_replay
from arena.replays.page_parts import plural
from gin_arena.v2 import bot_pb2
from referee import ReplayError, Resimulation, TimeControl, games, resimulate
from referee.replays import (
    GENESIS,
    PROTOCOL_VERSION,
    RECORD_CLASSES,
    REPLAY_FORMAT,
    REPLAY_VERSION,
    ActionRecord,
    DealEndRecord,
    DealRecord,
    FaultRecord,
    GameEndRecord,
    HeaderRecord,
    Record,
    Replay,
    ReplayFormatError,
    ReplayVisitor,
    ReshuffleRecord,
    ResultRecord,
    canonical,
    decode_record,
    load_line,
)
from referee.replays import split_lines as split_lines  # the audit's callers split files too

CHECKS = ("chain", "commitment", "decks", "rerun", "digests", "information")
"""The audit's checks, in the order they run."""

RECORD_TYPES = tuple(RECORD_CLASSES)
"""The kinds of record, in the order a replay may hold them (the typed reader's)."""

STORY_KINDS = ("match_started", "deal_started", "action_request", "event", "deal_finished", "game_finished")
"""Kinds of message that make up a seat's story (and its digest)."""

CHAIN_ONLY: tuple[str, ...] = (
    "header.bots",
    "header.connect_timeout_ms (when every seat connected)",
    "header.max_actions_per_deal (when no deal came near it)",
    "result.nonces (when mix_nonces is off)",
    "result.detail (of a match the operator aborted)",
    "fault.used_us of a late answer (as long as its detail text, in whole ms, stays the same)",
)
"""What the re-run takes from the replay as given and cannot contradict: these fields are covered
by the hash chain only. Anchor the final hash (``--expect-hash``, a run's ``results.json``, the
logs) to cover them too."""


_TEXT_FIELDS = frozenset({  # the envelope's texts: never read as cards
    "match_id", "player_names", "name", "text", "detail", "reason", "message", "session_id", "referee_info",
    "match_ids", "replay_hash", "bot_name", "token", "client_info",
})


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """The first thing that does not add up."""

    check: str
    """Which check found it (one of :data:`CHECKS`, or ``anchor`` / ``results``)."""
    seq: int | None
    """The record's ``seq`` (``None`` when no single record is at fault)."""
    field: str
    """The field (``deck[13]``, ``action.card``, ``message_digests[1]``, …)."""
    expected: Any
    found: Any
    message: str = ""

    def text(self) -> str:
        where = f"record seq {self.seq}" if self.seq is not None else "the replay"
        head = f"{self.check}: {where}, field {self.field}: expected {_show(self.expected)}, found {_show(self.found)}"
        return head + (f"\n  {self.message}" if self.message else "")

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "seq": self.seq, "field": self.field, "expected": self.expected,
                "found": self.found, "message": self.message}


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


class _Stop(Exception):
    def __init__(self, d: Discrepancy) -> None:
        super().__init__(d.text())
        self.discrepancy = d


def _fail(check: str, seq: int | None, field_: str, expected: Any, found: Any, message: str = "") -> _Stop:
    return _Stop(Discrepancy(check, seq, field_, expected, found, message))


class NothingToCheck(Exception):
    """A check that has nothing to check in a replay: a match ended before any deal was dealt
    (a bot that never started), so no seat was sent a card. Reported as such — neither ✓ nor a
    failure: the check ran over every message, and none could hold a card of a deal."""


class Unchecked(Exception):
    """A check that cannot be made of a replay (its game does not say what the check needs, or
    says it in a form the audit cannot read): the audit reports it *not checked* — never ✓ — and
    fails unless ``--allow-unchecked``. The text says why."""


@dataclass(slots=True)
class ReplayAudit:
    """The audit of one replay."""

    path: str
    ok: bool = False
    discrepancy: Discrepancy | None = None
    passed: list[str] = field(default_factory=list)
    """The checks passed, in order (all of :data:`CHECKS` but the ``skipped`` when ``ok``)."""
    skipped: list[str] = field(default_factory=list)
    """Checks that could not be made of this replay (a replay of an earlier bot protocol: its
    message digests cannot be re-derived); :attr:`notes` says why."""
    unchecked: dict[str, str] = field(default_factory=dict)
    """Checks that could not be made for this replay's game, with why (:class:`Unchecked`):
    never passed; the audit fails unless they are allowed (``--allow-unchecked``)."""
    empty: dict[str, str] = field(default_factory=dict)
    """Checks that had nothing to check in this replay, with why (:class:`NothingToCheck`):
    neither passed (never ✓) nor failed."""
    match_id: str = ""
    players: list[str] = field(default_factory=list)
    winner: int | None = None
    termination: str = ""
    games_won: list[int] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    records: int = 0
    games: int = 0
    deals: int = 0
    actions: int = 0
    messages: list[int] = field(default_factory=list)
    cards_checked: int = 0
    final_hash: str = ""
    expected_hash: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "ok": self.ok, "passed": self.passed, "skipped": self.skipped,
            "unchecked": self.unchecked, "empty": self.empty,
            "discrepancy": self.discrepancy.to_dict() if self.discrepancy else None,
            "match_id": self.match_id, "players": self.players, "winner": self.winner,
            "termination": self.termination, "games_won": self.games_won, "totals": self.totals,
            "records": self.records, "games": self.games, "deals": self.deals, "actions": self.actions,
            "messages": self.messages, "cards_checked": self.cards_checked, "final_hash": self.final_hash,
            "expected_hash": self.expected_hash, "notes": self.notes,
        }


# ----------------------------------------------------------------------------------------------
# 1. the chain
# ----------------------------------------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells ``1`` from ``true`` and ``1`` from ``1.0``."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def check_chain(lines: Sequence[bytes]) -> list[dict[str, Any]]:
    """Check 1; returns each line's JSON object (read by the typed reader next)."""
    if not lines:
        raise _fail("chain", None, "(file)", "a header record", "an empty file")
    objects: list[dict[str, Any]] = []
    prev = GENESIS
    for i, line in enumerate(lines):
        try:
            rec = load_line(line, i + 1)
        except ReplayFormatError as e:
            raise _fail("chain", i, "(line)", "a JSON object", e.found, f"line {i + 1}: {e.message}") from None
        canon = canonical(rec)
        if canon != line:
            at = next((j for j, (x, y) in enumerate(zip(canon, line, strict=False)) if x != y),
                      min(len(canon), len(line)))
            raise _fail("chain", i, "(canonical form)", canon[max(0, at - 20):at + 20].decode("utf-8", "replace"),
                        line[max(0, at - 20):at + 20].decode("utf-8", "replace"),
                        f"line {i + 1} is not canonical JSON (sorted keys, no spaces) from byte {at}")
        if not _same(rec.get("seq"), i):
            raise _fail("chain", i, "seq", i, rec.get("seq"), "records are numbered 0, 1, … in order")
        if rec.get("prev") != prev:
            raise _fail("chain", i, "prev", prev, rec.get("prev"),
                        "prev must be the SHA-256 of the previous line" if i else "the first record's prev is 64 zeros")
        prev = hashlib.sha256(line).hexdigest()
        objects.append(rec)
    _check_kinds(objects)
    return objects


def _check_kinds(objects: Sequence[dict[str, Any]]) -> None:
    for i, rec in enumerate(objects):
        kind = rec.get("type")
        want = "header" if i == 0 else "result" if i == len(objects) - 1 else None
        if want is not None and kind != want:
            raise _fail("chain", i, "type", want, kind, "a replay starts with a header and ends with a result record")
        if want is None and kind not in RECORD_TYPES[1:-1]:
            raise _fail("chain", i, "type", "one of " + ", ".join(RECORD_TYPES[1:-1]), kind)
    header = objects[0]
    if header.get("format") != REPLAY_FORMAT:
        raise _fail("chain", 0, "format", REPLAY_FORMAT, header.get("format"))
    if not _same(header.get("version"), REPLAY_VERSION):
        raise _fail("chain", 0, "version", REPLAY_VERSION, header.get("version"), "an unknown replay version")


def read_records(lines: Sequence[bytes], objects: Sequence[dict[str, Any]]) -> Replay:
    """The records of a chain checked by :func:`check_chain`, read by the typed reader. A record
    without the fields and types of its kind fails the re-run check: the referee never writes one."""
    records: list[Record] = []
    game = str(next(f.default for f in fields(HeaderRecord) if f.name == "game"))  # the header comes first
    for i, obj in enumerate(objects):
        try:
            record = decode_record(obj, i + 1, game)
        except ReplayFormatError as e:
            raise _fail("rerun", i, e.field, e.expected, e.found,
                        e.message or "the referee never writes such a record") from None
        if isinstance(record, HeaderRecord):
            game = record.game
        records.append(record)
    header = records[0]
    assert isinstance(header, HeaderRecord)
    return Replay(header, tuple(records), tuple(lines))


def _result(replay: Replay) -> ResultRecord:
    result = replay.result
    assert result is not None  # the chain check saw it
    return result


# ----------------------------------------------------------------------------------------------
# 2. the commitment, 3. the decks
# ----------------------------------------------------------------------------------------------
def _hex(value: str, seq: int, name: str) -> bytes:
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise _fail("commitment", seq, name, "hex text", value) from None


def check_commitment(replay: Replay) -> bytes:
    """Check 2; returns the revealed operator seed."""
    header, result, last = replay.header, _result(replay), len(replay.records) - 1
    seed = _hex(result.seed, last, "seed")
    if not seed:
        raise _fail("commitment", last, "seed", "the revealed seed", "")
    want = _game(replay, "commitment").commitment(seed).hex()
    if header.seed_commitment != want:
        raise _fail("commitment", 0, "seed_commitment", want, header.seed_commitment,
                    f"SHA-256 of the seed revealed in the result record (seq {last}) must equal the "
                    "commitment sent before the first card")
    return seed


def seed_used(replay: Replay, operator_seed: bytes) -> bytes:
    """The seed the decks come from: the operator's, mixed with the nonces if ``mix_nonces``."""
    if not replay.header.mix_nonces:
        return operator_seed
    last = len(replay.records) - 1
    nonces = _result(replay).nonces
    return _game(replay, "decks").mix_seed(operator_seed, [_hex(n, last, f"nonces[{i}]") for i, n in enumerate(nonces)])


def _game(replay: Replay, check: str) -> games.Game:
    try:
        return games.get(replay.header.game).game
    except ValueError as e:
        raise _fail(check, 0, "game", "a game the referee knows", replay.header.game, str(e)) from None


def check_decks(replay: Replay, seed: bytes) -> int:
    """Check 3; returns the number of deals."""
    deals = 0
    engine = _game(replay, "decks")
    for seq, rec in enumerate(replay.records):
        if not isinstance(rec, DealRecord):
            continue
        deals += 1
        g, d = rec.game, rec.deal
        if not (1 <= g < 2**32 and 1 <= d < 2**32):
            raise _fail("decks", seq, "game/deal", "game and deal numbers from 1", [g, d])
        expected, key_bytes = engine.deal_deck(seed, g, d)
        if len(rec.deck) != len(expected):
            raise _fail("decks", seq, "deck", f"{len(expected)} cards", list(rec.deck))
        for i, (want, got) in enumerate(zip(expected, rec.deck, strict=True)):
            if want != got:
                raise _fail("decks", seq, f"deck[{i}]", want, got,
                            f"game {g} deal {d}: the deck re-derived from the revealed seed differs")
        key = key_bytes.hex()
        if rec.key != key:
            raise _fail("decks", seq, "key", key, rec.key, f"game {g} deal {d}: the deal key")
    return deals


# ----------------------------------------------------------------------------------------------
# 4. the clocks, and the re-run
# ----------------------------------------------------------------------------------------------
class _Clocks:
    """The referee's integer-microsecond accounting of a time control, seat by seat."""

    def __init__(self, tc: TimeControl, seats: int) -> None:
        self.tc, self.seats = tc, seats
        self.remaining = [tc.base_ms * 1000] * seats

    def limit_us(self, seat: int) -> int:
        tc = self.tc
        if tc.is_fixed:
            return (tc.per_move_ms + tc.margin_ms) * 1000
        return self.remaining[seat] + tc.margin_ms * 1000

    def charge(self, seat: int, used: int) -> bool:
        tc = self.tc
        if tc.is_fixed:
            return used <= (tc.per_move_ms + tc.margin_ms) * 1000
        self.remaining[seat] -= used
        ok = self.remaining[seat] + tc.margin_ms * 1000 >= 0
        self.remaining[seat] += tc.increment_ms * 1000
        return ok

    def refund(self, seat: int, used: int) -> None:
        """Undo a charge that lost on time: the seat plays on (fault scope ``move``)."""
        if not self.tc.is_fixed:
            self.remaining[seat] += used - self.tc.increment_ms * 1000

    def shown(self) -> list[int]:
        tc = self.tc
        return [tc.per_move_ms] * self.seats if tc.is_fixed else [r // 1000 for r in self.remaining]

    def allowance_text(self, seat: int) -> str:
        tc = self.tc
        ms = tc.per_move_ms if tc.is_fixed else max(0, self.remaining[seat] // 1000)
        return f"allowance {ms} ms + margin {tc.margin_ms} ms ({tc})"

    def new_game(self) -> None:
        if not self.tc.is_fixed:
            self.remaining = [self.tc.base_ms * 1000] * self.seats


def check_clocks(replay: Replay) -> None:
    """Every bot answer within its allowance (else it must be a time forfeit), every clock shown right.
    The same integer-microsecond accounting as the referee's table."""
    header = replay.header
    try:
        tc = TimeControl.parse(header.time_control)
    except ValueError as e:
        raise _fail("rerun", 0, "time_control", "a time control (st=S or tc=BASE+INC)", header.time_control,
                    str(e)) from None
    seats = header.seats
    clocks = _Clocks(tc, seats)
    for seq, rec in enumerate(replay.records):
        if isinstance(rec, ActionRecord):
            _check_action_clock(rec, seq, clocks)
        elif isinstance(rec, FaultRecord) and rec.termination == "time_forfeit" and rec.used_us is not None:
            seat, used = rec.seat, rec.used_us
            if not 0 <= seat < seats:
                raise _fail("rerun", seq, "used_us", "a seat and microseconds", [seat, used])
            if clocks.charge(seat, used):
                raise _fail("rerun", seq, "used_us", f"more than {clocks.limit_us(seat)} µs "
                            f"({clocks.allowance_text(seat)})", used,
                            "a time forfeit needs a think time beyond the allowance")
            if rec.scope == "move":  # the seat played on, its clock as before that decision
                clocks.refund(seat, used)
        elif isinstance(rec, GameEndRecord):
            clocks.new_game()


def _check_action_clock(rec: ActionRecord, seq: int, clocks: _Clocks) -> None:
    seat, used = rec.seat, rec.think_us
    if not 0 <= seat < clocks.seats:
        raise _fail("rerun", seq, "seat", f"a seat 0..{clocks.seats - 1}", seat)
    if used < 0:
        raise _fail("rerun", seq, "think_us", "microseconds (an integer >= 0)", used)
    if rec.request_id and not rec.substitute:
        limit, text = clocks.limit_us(seat), clocks.allowance_text(seat)
        if not clocks.charge(seat, used):
            raise _fail("rerun", seq, "think_us", f"at most {limit} µs ({text})", used,
                        f"seat {seat} answered after {used / 1000:.1f} ms: a think time beyond the "
                        "allowance must end in a time forfeit, not in a move")
    if list(rec.clocks) != clocks.shown():
        raise _fail("rerun", seq, "clocks", clocks.shown(), list(rec.clocks),
                    "the clocks shown after this move, by the time control and the think times before it")


def check_header(replay: Replay) -> None:
    """The header describes the seats it names (its fields' types the typed reader checked)."""
    header = replay.header
    flags = header.event_messages
    if flags is not None and len(flags) != header.seats:  # absent before it existed: all true
        raise _fail("rerun", 0, "event_messages", "one true or false per seat", list(flags),
                    "the header cannot describe a match")


def first_difference(expected: Any, found: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first field (in key order, ``type`` first) where two JSON values differ."""
    if _same(expected, found):
        return None
    if isinstance(expected, dict) and isinstance(found, dict):
        keys = sorted(set(expected) | set(found), key=lambda k: (k != "type", k))
        for k in keys:
            if k not in expected:
                return (f"{path}.{k}" if path else k), "(no such field)", found[k]
            if k not in found:
                return (f"{path}.{k}" if path else k), expected[k], "(missing)"
            d = first_difference(expected[k], found[k], f"{path}.{k}" if path else k)
            if d is not None:
                return d
    if isinstance(expected, list) and isinstance(found, list) and len(expected) == len(found):
        for i, (a, b) in enumerate(zip(expected, found, strict=True)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d is not None:
                return d
    return path or "(record)", expected, found


_HINTS = {
    "type": "the re-run reaches a different event here (a move the rules refuse, a think time beyond the "
            "allowance, a deal or game that ends elsewhere)",
    "card": "the card this move draws, takes or discards does not follow from the deck and the moves before",
    "clocks": "the clocks do not follow from the time control and the think times",
    "scores": "the scores do not follow from the deal results",
    "points": "the points do not follow from the hands (RULES §9)",
    "message_digests": "the messages the referee sends the seats differ (see check 5)",
}


def check_rerun(replay: Replay) -> Resimulation:
    """Check 4: the header, the time control, then the match played again; returns the re-run."""
    check_header(replay)
    check_clocks(replay)
    try:
        again = resimulate(replay)
    except ReplayError as e:
        raise _fail("rerun", None, "(replay)", "a replay the referee can play again", str(e)) from None
    except Exception as e:  # a field of a value the re-run does not expect
        raise _fail("rerun", None, "(replay)", "a replay the referee can play again",
                    f"the replay cannot be played again: {e!r}") from None
    rerun, lines, records = again.lines, replay.lines, replay.records
    if _result(replay).termination == "interrupted":  # the referee stopped: the re-run agrees up to there
        lines = lines[:-1]
        rerun = rerun[:len(lines)]
    for i in range(max(len(rerun), len(lines))):
        if i >= len(rerun):
            raise _fail("rerun", i, "(record)", "no record: the re-run of the match ends before it", records[i].KIND)
        if i >= len(lines):
            raise _fail("rerun", i, "(record)", load_line(rerun[i], i + 1).get("type"), "no record: the replay ends")
        if rerun[i] != lines[i]:
            want = load_line(rerun[i], i + 1)
            found = load_line(lines[i], i + 1)
            if _other_protocol(replay) and want.get("type") == "result" == found.get("type") \
                    and {**want, "message_digests": None} == {**found, "message_digests": None}:
                continue  # digests of another protocol's bytes: see check 5
            diff = first_difference(want, found)
            assert diff is not None
            where, exp, got = diff
            root = where.split(".")[0].split("[")[0]
            hint = _HINTS.get(root, "the referee, playing the same answers on the same cards, writes a different "
                                    "record")
            raise _fail("rerun", i, f"{want.get('type')}.{where}", exp, got, hint)
    return again


# ----------------------------------------------------------------------------------------------
# 5. the digests
# ----------------------------------------------------------------------------------------------
def story(messages: Sequence[bot_pb2.RefereeMessage]) -> list[bot_pb2.RefereeMessage]:
    """The messages of the match's story (what the digest covers)."""
    return [m for m in messages if m.WhichOneof("kind") in STORY_KINDS]


def digest(messages: Sequence[bot_pb2.RefereeMessage]) -> str:
    """SHA-256 over ``u32be(len) || bytes`` of each message's deterministic serialization."""
    h = hashlib.sha256()
    for m in messages:
        data = m.SerializeToString(deterministic=True)
        h.update(struct.pack(">I", len(data)) + data)
    return h.hexdigest()


def _other_protocol(replay: Replay) -> bool:
    """Whether the replay's seats were sent another bot protocol's messages than this referee's
    (a replay from before protocol v2): their digests cannot be re-derived."""
    return replay.header.protocol != PROTOCOL_VERSION


def check_digests(replay: Replay, seat_messages: Sequence[Sequence[bot_pb2.RefereeMessage]],
                  notes: list[str]) -> list[int]:
    """Check 5; returns the number of messages per seat."""
    result = _result(replay)
    if _other_protocol(replay):
        notes.append(f"recorded under bot protocol {replay.header.protocol}: the message digests are of that "
                     f"protocol's bytes and this referee speaks {PROTOCOL_VERSION}; the messages re-derived in "
                     f"protocol {PROTOCOL_VERSION} are checked for what each seat may know (check 6)")
        return [len(story(msgs)) for msgs in seat_messages]
    seq = len(replay.records) - 1
    digests, counts = result.message_digests, result.messages
    seats = len(seat_messages)
    if len(digests) != seats:
        raise _fail("digests", seq, "message_digests", f"{seats} digests", list(digests))
    if len(counts) != seats:
        raise _fail("digests", seq, "messages", f"{seats} counts", list(counts))
    out = []
    for s, msgs in enumerate(seat_messages):
        told = story(msgs)
        out.append(len(told))
        if len(told) != counts[s]:
            # The re-run delivers nothing to a seat whose session ended (disconnected); its digest
            # is still the referee's own, compared with the re-run's in check 4.
            notes.append(f"seat {s}: the re-run's session received {len(told)} of {counts[s]} messages (the seat "
                         "disconnected); its digest is checked through the re-run's result record")
            continue
        got = digest(told)
        if got != digests[s]:
            raise _fail("digests", seq, f"message_digests[{s}]", got, digests[s],
                        f"SHA-256 over the {len(told)} messages re-derived for seat {s}")
    return out


# ----------------------------------------------------------------------------------------------
# 6. the information each seat was given
# ----------------------------------------------------------------------------------------------
@dataclass(slots=True)
class _DealTruth:
    seq: int
    game: int
    deal: int
    dealer: int
    deck: tuple[str, ...]
    key: str = ""
    moves: list[tuple[int, str, str | None, int, int]] = field(default_factory=list)
    """(actor, kind, card, seq, request_id); actor -1 for a reshuffle, request 0 for a
    substitute's move."""
    texts: list[str] = field(default_factory=list)
    """Each move's action text (empty for a reshuffle)."""
    end_seq: int | None = None
    known: Sequence[Sequence[Collection[str]]] | None = None
    """What each seat may know after k moves (``known[k][seat]``; last: after the deal's end),
    as the game says (``referee.games.KnowsCards``), built once."""


class _Truths(ReplayVisitor):
    """Each deal's deck, moves and end, by (game, deal)."""

    def __init__(self) -> None:
        self.deals: dict[tuple[int, int], _DealTruth] = {}
        self.cur: _DealTruth | None = None
        self.seq = -1

    def visit_record(self, record: Record) -> None:
        self.seq += 1

    def visit_deal(self, record: DealRecord) -> None:
        self.cur = _DealTruth(self.seq, record.game, record.deal, record.dealer, record.deck, record.key)
        self.deals[(record.game, record.deal)] = self.cur

    def visit_action(self, record: ActionRecord) -> None:
        if self.cur is not None:
            self.cur.moves.append((record.seat, record.action.split()[0], record.card, self.seq, record.request_id))
            self.cur.texts.append(record.action)

    def visit_reshuffle(self, record: ReshuffleRecord) -> None:
        if self.cur is not None:
            self.cur.moves.append((-1, "reshuffle", None, self.seq, 0))
            self.cur.texts.append("")

    def visit_deal_end(self, record: DealEndRecord) -> None:
        if self.cur is not None:
            self.cur.end_seq = self.seq


_ANY = any_pb2.Any.DESCRIPTOR.full_name
_MESSAGE, _STRING = FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING
_INTEGERS = frozenset({FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT32,
                       FieldDescriptor.CPPTYPE_UINT64})


def _unpacked(packed: Message) -> Message:
    """A game's message packed in ``google.protobuf.Any`` (a plugin game's content, ``other``),
    decoded by the descriptor the game's generated module put in protobuf's default pool
    (:class:`Unchecked` if there is none, or if its bytes do not parse)."""
    assert isinstance(packed, any_pb2.Any)
    name = packed.TypeName()
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(name)
    except KeyError:
        raise Unchecked(f"a message holds a {name or '(typeless)'!r} packed in google.protobuf.Any, a type the "
                        "game's modules did not register in protobuf's default pool: its cards cannot be "
                        "read") from None
    inner = message_factory.GetMessageClass(descriptor)()
    try:
        inner.ParseFromString(packed.value)
    except DecodeError as e:
        raise Unchecked(f"a packed {name} does not parse ({e}): its cards cannot be read") from None
    return inner


@dataclass(slots=True)
class _Cards:
    """How the audit reads cards in a seat's messages: as the game says (``KnowsCards``)."""

    fields: Collection[str]
    """The game's fields that hold cards (``KnowsCards.card_fields``)."""
    text: Callable[[str], str | None]
    """The game's ``card_text``."""
    count: int = 0
    """Cards read so far."""
    unreadable: str | None = None
    """The first part of a message the audit could not read (the check is then *not checked*,
    unless it finds a leak elsewhere)."""

    def first_unknown(self, msg: Message, knowledge: Collection[str]) -> tuple[str, str] | None:
        """The first card of ``msg`` not in ``knowledge``, as (field path, text); counts the cards
        read. The game's card fields are cards by name (a text or a number), a plugin's content
        packed in ``Any`` is unpacked, and any other string field that reads as a card is checked.
        Paths are built only for a failure."""
        for fd, value in msg.ListFields():
            kind = fd.type
            name = fd.name
            if kind == _MESSAGE:
                packed = fd.message_type is not None and fd.message_type.full_name == _ANY
                for i, v in enumerate(value if fd.is_repeated else (value,)):
                    bad = self._packed(v, knowledge) if packed else self.first_unknown(v, knowledge)
                    if bad is not None:
                        return (f"{name}[{i}]" if fd.is_repeated else name) + ("" if packed else ".") + bad[0], bad[1]
            elif kind == _STRING and (name in self.fields or name not in _TEXT_FIELDS):
                card_field, text = name in self.fields, self.text  # (the hot path: Gin's and Rummy's cards)
                for i, v in enumerate(value if fd.is_repeated else (value,)):
                    canon = text(v)
                    if canon is None and not card_field:
                        continue  # a text that is no card
                    self.count += 1
                    if canon is None or canon not in knowledge:
                        return (f"{name}[{i}]" if fd.is_repeated else name), v
            elif name in self.fields:
                for i, v in enumerate(value if fd.is_repeated else (value,)):
                    number = self._card(fd, v)
                    if number is False:
                        continue
                    self.count += 1
                    if number is None or number not in knowledge:
                        return (f"{name}[{i}]" if fd.is_repeated else name), str(v)
        return None

    def _packed(self, value: Message, knowledge: Collection[str]) -> tuple[str, str] | None:
        """:meth:`first_unknown` of a message packed in ``Any``, its path ``<type>.field``."""
        try:
            inner = _unpacked(value)
        except Unchecked as e:
            self.unreadable = self.unreadable or str(e)
            return None
        bad = self.first_unknown(inner, knowledge)
        return None if bad is None else (f"<{inner.DESCRIPTOR.full_name}>.{bad[0]}", bad[1])

    def _card(self, fd: FieldDescriptor, value: Any) -> str | bool | None:
        """A card field's value that is not a string: its card (canonical text) if an integer
        (``None``: no card), else ``False`` (not read: the check is then not made)."""
        if fd.cpp_type in _INTEGERS:
            return self.text(str(value))
        self.unreadable = self.unreadable or (
            f"the game names {fd.full_name} a card field, but it holds neither a string nor an integer: "
            "the audit reads cards as text or numbers")
        return False


def _knows_cards(name: str) -> games.KnowsCards:
    """The game's declared ``KnowsCards`` (:class:`Unchecked` if it declares none)."""
    knows = games.get(name).capabilities.knows_cards
    if knows is None:
        raise Unchecked(f"the game {name!r} does not say what each seat may know (it declares no "
                        "referee.games.Capabilities.knows_cards: card_fields, card_text, known_cards)")
    return knows


def check_information(replay: Replay, seat_messages: Sequence[Sequence[bot_pb2.RefereeMessage]]) -> int:
    """Check 6; returns the number of cards checked. What a seat may know, and where its messages
    hold cards, is the game's word (``referee.games.KnowsCards``). The check fails closed: a game
    without it, content it cannot read or no card found at all raise :class:`Unchecked` (a leak
    found elsewhere still fails the audit first)."""
    engine = _game(replay, "information")
    knows = _knows_cards(replay.header.game)
    visitor = _Truths()
    replay.accept(visitor)
    truths = visitor.deals
    header = replay.header
    rules = engine.rules_from_dict(dict(header.rules))
    cards = _Cards(frozenset(knows.card_fields), knows.card_text)

    def knowledge_of(cur: _DealTruth, seat: int, k: int, ended: bool) -> Collection[str]:
        if cur.known is None:
            cur.known = knows.known_cards(rules, {"game": cur.game, "deal": cur.deal, "dealer": cur.dealer,
                                                  "deck": list(cur.deck), "key": cur.key},
                                          [(m[0], t) for m, t in zip(cur.moves, cur.texts, strict=True)], header.seats)
        return cur.known[-1 if ended else min(k, len(cur.known) - 2)][seat]

    for seat, msgs in enumerate(seat_messages):
        _check_seat(replay, truths, seat, story(msgs), knowledge_of, cards)
    if cards.unreadable is not None:
        raise Unchecked(cards.unreadable)
    told = sum(len(story(m)) for m in seat_messages)
    if cards.count == 0 and not truths:
        raise NothingToCheck(f"no deal was dealt, so none of the {plural(told, 'message')} sent to the seats "
                             "could hold a card of one")
    if cards.count == 0:
        raise Unchecked(f"no card found in the {plural(told, 'message')} sent to the seats"
                        + (" (no deal was dealt)" if not truths else
                           f": the game {header.game!r} names no field of its messages that holds one "
                           "(KnowsCards.card_fields) the audit could read"))
    return cards.count


def _check_seat(replay: Replay, truths: Mapping[tuple[int, int], _DealTruth], seat: int,
                msgs: Sequence[bot_pb2.RefereeMessage],
                knowledge_of: Callable[[_DealTruth, int, int, bool], Collection[str]], cards: _Cards) -> None:
    """Check 6 for one seat's story."""
    header = replay.header
    # A seat that asked for no event messages learns a deal's moves from its requests: the
    # state of a request comes after every move before the one answering it.
    lean = not header.events_for(seat) if seat < header.seats else False
    answered = False  # a lean seat's last request was answered by the move at index k
    cur: _DealTruth | None = None
    k, ended = 0, False
    for i, msg in enumerate(msgs):
        kind = str(msg.WhichOneof("kind"))
        where = f"seat {seat} message #{i} ({kind})"
        seq: int | None = cur.seq if cur is not None else 0
        if kind == "deal_started":
            g, d = msg.deal_started.game_number, msg.deal_started.deal_number
            cur = truths.get((g, d))
            if cur is None:
                raise _fail("information", None, where, "a deal of the replay", f"game {g} deal {d}")
            k, ended, seq, answered = 0, False, cur.seq, False
        elif kind == "event":
            if cur is None:
                raise _fail("information", None, where, "an event within a deal", "an event before any deal")
            k += 1
            if k > len(cur.moves):
                raise _fail("information", cur.seq, where, f"at most {len(cur.moves)} events in this deal", k)
            seq = cur.moves[k - 1][3]
        elif kind == "action_request":
            ar = msg.action_request
            if lean and cur is not None:
                k = _moves_before_request(cur, seat, k + 1 if answered else k, ar.request_id)
                answered = k < len(cur.moves) and cur.moves[k][4] == ar.request_id
                seq = cur.moves[k - 1][3] if k else cur.seq
            # a game that sends a deal's events with each request sends exactly those so far
            if cur is None or (ar.events and len(ar.events) != k):
                raise _fail("information", seq, where, f"a request after {k} events of the current deal",
                            "no deal" if cur is None else f"a request after {len(ar.events)} events")
        elif kind == "deal_finished":
            ended = True
            if lean and cur is not None:
                k = len(cur.moves)
            if cur is not None and cur.end_seq is not None:
                seq = cur.end_seq
        knowledge: Collection[str]
        if cur is None or kind in ("match_started", "game_finished"):
            knowledge = ()
        else:
            knowledge = knowledge_of(cur, seat, k, ended)
        bad = cards.first_unknown(msg, knowledge)
        if bad is not None:
            path, text = bad
            card = cards.text(text)
            if card is None:
                raise _fail("information", seq, f"{where} {path}", "a card", text)
            raise _fail("information", seq, f"{where} {path}", f"a card seat {seat} could know", card,
                        f"{card} is hidden from seat {seat} at this point: not in its hand, never face up, "
                        "not drawn by it, not shown at a showdown")


def _moves_before_request(truth: _DealTruth, seat: int, after: int, request_id: int) -> int:
    """How many moves of the deal came before ``seat``'s request ``request_id``: the index of
    the move answering it, or — for a request never answered (a fault) — of the seat's next move
    from index ``after`` on (a substitute's), or the end of the deal's moves."""
    moves = truth.moves
    for j, move in enumerate(moves):
        if move[4] == request_id and move[0] == seat:
            return j
    for j in range(after, len(moves)):
        if moves[j][0] == seat:
            return j
    return len(moves)


# ----------------------------------------------------------------------------------------------
# putting it together
# ----------------------------------------------------------------------------------------------
def audit_lines(lines: Sequence[bytes], *, path: str = "", expect_hash: str | None = None,
                allow_unchecked: bool = False) -> ReplayAudit:
    """Audit one replay given as its lines (without newlines). A check that cannot be made for
    the replay's game (:class:`Unchecked`) is reported in :attr:`ReplayAudit.unchecked`, never
    passed, and the audit is not ``ok`` unless ``allow_unchecked``."""
    a = ReplayAudit(path=path, expected_hash=expect_hash.lower() if expect_hash else None)
    try:
        objects = check_chain(lines)
        a.records = len(objects)
        a.final_hash = hashlib.sha256(lines[-1]).hexdigest()
        if a.expected_hash is not None and a.final_hash != a.expected_hash:
            raise _fail("anchor", len(objects) - 1, "(final hash)", a.expected_hash, a.final_hash,
                        "the SHA-256 of the last line must equal the hash published for this match")
        a.passed.append("chain")
        replay = read_records(lines, objects)
        _describe(a, replay)
        seed = check_commitment(replay)
        a.passed.append("commitment")
        a.deals = check_decks(replay, seed_used(replay, seed))
        a.passed.append("decks")
        again = check_rerun(replay)
        a.passed.append("rerun")
        if a.termination == "interrupted":
            a.notes.append(_stops_at(replay))
            a.ok = True
            return a
        a.messages = check_digests(replay, again.seat_messages, a.notes)
        (a.skipped if _other_protocol(replay) else a.passed).append("digests")
        try:
            a.cards_checked = check_information(replay, again.seat_messages)
            a.passed.append("information")
        except Unchecked as e:
            a.unchecked["information"] = str(e)
        except NothingToCheck as e:
            a.empty["information"] = str(e)
        a.ok = allow_unchecked or not a.unchecked
    except _Stop as stop:
        a.discrepancy = stop.discrepancy
    except Exception as e:  # a record the checks did not expect: still a failed audit, never a crash
        nxt = next((c for c in CHECKS if c not in a.passed and c not in a.unchecked), "chain")
        a.discrepancy = Discrepancy(nxt, None, "(record)", "well-formed records", repr(e),
                                    "a record has a value the checks did not expect")
    return a


def _stops_at(replay: Replay) -> str:
    """Where an interrupted replay stops (the checks after the re-run need a whole match)."""
    ends = [r for r in replay.records if isinstance(r, DealEndRecord)]
    where = f"after game {ends[-1].game} deal {ends[-1].deal}" if ends else "before its first deal ended"
    return (f"interrupted: the referee stopped during the match; chain, commitment, decks and rules verified "
            f"up to line {len(replay.lines) - 1} ({where}, {len(ends)} complete deal(s)); the message digests "
            f"and what each seat was told cannot be checked")


def _describe(a: ReplayAudit, replay: Replay) -> None:
    """What the audit reports of the match besides the checks."""
    header, result = replay.header, _result(replay)
    a.match_id = header.match_id
    a.players = list(header.players)
    a.winner = result.winner
    a.termination = result.termination
    a.games_won = list(result.games_won)
    a.totals = list(result.totals)
    a.games = sum(1 for r in replay.records if isinstance(r, GameEndRecord))
    a.actions = sum(1 for r in replay.records if isinstance(r, ActionRecord))


def audit_file(path: Path, *, expect_hash: str | None = None, allow_unchecked: bool = False) -> ReplayAudit:
    """Audit one replay file (``allow_unchecked``: see :func:`audit_lines`)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        a = ReplayAudit(path=str(path))
        a.discrepancy = Discrepancy("chain", None, "(file)", "a readable replay file", str(e.strerror or e))
        return a
    return audit_lines(split_lines(data), path=str(path), expect_hash=expect_hash, allow_unchecked=allow_unchecked)


@dataclass(slots=True)
class RunCheck:
    """What a run folder's results file says about its replays."""

    results_file: str | None = None
    expected: dict[Path, str] = field(default_factory=dict)
    """Replay file → final hash listed in the results."""
    missing: list[Discrepancy] = field(default_factory=list)
    """Games listed with a replay that is not there."""
    unlisted: list[str] = field(default_factory=list)


def results_file_for(run_dir: Path) -> Path | None:
    """``results.json`` of a run folder (given the folder or its ``replays/``)."""
    for cand in (run_dir / "results.json", run_dir.parent / "results.json"):
        if cand.is_file():
            return cand
    return None


def _resolve_replay(entry: dict[str, Any], run_dir: Path, found: dict[str, Path]) -> Path | None:
    """The replay a results entry lists: inside the audited folder first (a copied run's
    results name its own files, not the original's), then among the files audited by name."""
    raw = str(entry.get("replay") or entry.get("replay_path") or "")
    mid = str(entry.get("match_id") or "")
    hit = find_replay(raw, run_dir, mid)
    if hit is not None:
        return hit.resolve()
    return found.get(Path(raw).name) if raw else found.get(f"{mid}.jsonl") if mid else None


def run_expectations(run_dir: Path, files: Sequence[Path]) -> RunCheck:
    """Read the run's results (leniently: a missing or unreadable file checks nothing)."""
    rc = RunCheck()
    rf = results_file_for(run_dir)
    if rf is None:
        return rc
    try:
        data = json.loads(rf.read_text())
    except (OSError, ValueError):
        rc.results_file = f"{rf} (unreadable: not checked)"
        return rc
    rc.results_file = str(rf)
    games = data.get("games") if isinstance(data, dict) else data
    if not isinstance(games, list):
        return rc
    found = {f.name: f.resolve() for f in files}
    for i, g in enumerate(games):
        if not isinstance(g, dict):
            continue
        want = g.get("replay_hash")
        if not want or not (g.get("replay") or g.get("replay_path") or g.get("match_id")):
            continue
        p = _resolve_replay(g, run_dir, found)
        if p is None:
            if g.get("replay") or g.get("replay_path"):
                rc.missing.append(Discrepancy(
                    "results", None, f"games[{i}].replay_path", "an existing replay file",
                    g.get("replay") or g.get("replay_path"), f"{rf.name} lists match {g.get('match_id', '?')} "
                    "with a replay that is not in the run folder"))
            continue
        rc.expected[p] = str(want).lower()
    listed = set(rc.expected)
    rc.unlisted = [str(f) for f in files if f.resolve() not in listed]
    return rc


def replay_files(target: Path) -> list[Path]:
    """The replays under a folder (``*.jsonl``, hidden temporary files left out)."""
    return sorted(p for p in target.rglob("*.jsonl") if p.is_file() and not p.name.startswith("."))


# ----------------------------------------------------------------------------------------------
# the command
# ----------------------------------------------------------------------------------------------
def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``audit`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "audit",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="verify replays: hash chain, seed commitment, decks, a full re-run, digests, hidden information",
        description=(
            "Check that recorded matches were played fairly. For each replay, in order:\n"
            "  1 chain        canonical JSON lines, seq 0,1,…, each prev = SHA-256 of the previous line\n"
            "  2 commitment   SHA-256(revealed seed) = the seed_commitment sent before the first card\n"
            "  3 decks        every deal's deck re-derived from the seed (and the bots' nonces)\n"
            "  4 rerun        clocks against the time control; the match played again through the\n"
            "                 referee from the recorded answers must write the same replay byte for byte\n"
            "  5 digests      each seat's message digest recomputed from the re-run's messages\n"
            "  6 information  no message to a seat shows a card that seat could not know\n"
            "The first discrepancy is reported (record seq, field, expected, found) and the exit code is 1.\n"
            "A check the replay's game gives the audit no means to make (e.g. a game that does not say\n"
            "what each seat may know, or whose messages the audit cannot read) is reported NOT CHECKED,\n"
            "never passed, and the exit code is 1 unless --allow-unchecked.\n"
            "A RUN_DIR is searched for *.jsonl; the final hashes listed in its results.json are checked."
        ),
        epilog=(
            "Examples:\n"
            "  arena audit runs/demo-20250101-120000             # every replay of a run\n"
            "  arena audit runs/demo-20250101-120000/replays/m1.jsonl --expect-hash 3fa2…\n"
            "  arena audit replay.jsonl --json\n"
            "Exit codes: 0 every replay passed, 1 a discrepancy or a check not made, 2 nothing to audit.\n"
            "Covered by the hash chain only (anchor the final hash with --expect-hash):\n  "
            + "\n  ".join(CHAIN_ONLY)
        ),
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="REPLAY|RUN_DIR",
                   help="replay files (.jsonl) and/or run folders (searched for *.jsonl)")
    p.add_argument("--expect-hash", default=None, metavar="HEX",
                   help="the final hash published for the match (one replay only): an external anchor")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON object)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only failures and the summary line")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="audit N replays at a time in separate processes (default 1)")
    p.add_argument("--allow-unchecked", action="store_true",
                   help="exit 0 even if a check could not be made for a replay's game (it is still reported "
                        "NOT CHECKED, never passed)")
    return p


def _summary_line(a: ReplayAudit) -> str:
    names = " vs ".join(a.players) or "?"
    if a.winner is not None and 0 <= a.winner < len(a.players):
        res = f"{a.players[a.winner]} wins ({a.termination})"
    else:
        res = f"no winner ({a.termination})"
    score = ""
    if len(a.games_won) == 2 and len(a.totals) == 2:
        score = f", games {a.games_won[0]}-{a.games_won[1]}, points {a.totals[0]}-{a.totals[1]}"
    return f"{a.match_id}: {names}: {res}{score}"


def _passed_lines(a: ReplayAudit) -> list[str]:
    """An audit without a discrepancy: its checks passed — and those not made, never marked ✓
    (nor an information check that read no card: it was not made)."""
    unchecked = dict(a.unchecked)
    if "information" in a.passed and a.cards_checked == 0:
        unchecked["information"] = "no card was read"
    cards = ("cards not checked" if "information" in unchecked else "no card to check" if "information" in a.empty
             else f"{plural(a.cards_checked, 'card')} checked")
    out = [f"{'OK' if not unchecked else 'OK, NOT CHECKED' if a.ok else 'NOT CHECKED'}  {a.path}",
           f"      {_summary_line(a)}",
           f"      {plural(a.games, 'game')}, {plural(a.deals, 'deal')}, {plural(a.actions, 'action')}, "
           f"{plural(a.records, 'record')}; messages {'/'.join(map(str, a.messages))}, {cards}"]
    marks = ({c: " ✓" for c in a.passed} | {c: " – (not comparable, see the note)" for c in a.skipped}
             | {c: " – (nothing to check)" for c in a.empty} | {c: " ✗ NOT CHECKED" for c in unchecked})
    out.append("      " + "  ".join(c.replace("rerun", "re-run") + marks[c] for c in CHECKS if c in marks))
    out.extend(f"      not checked: {c}: {why}" + (" (allowed: --allow-unchecked)" if a.ok else "")
               for c, why in unchecked.items())
    out.extend(f"      nothing to check: {c}: {why}" for c, why in a.empty.items())
    out.append(f"      final hash {a.final_hash}" + (" (as expected)" if a.expected_hash else ""))
    return out


def render(audits: Sequence[ReplayAudit], run_checks: Sequence[RunCheck], quiet: bool = False) -> str:
    out: list[str] = []
    for a in audits:
        if a.discrepancy is None:
            if quiet and not a.unchecked:
                continue
            out.extend(_passed_lines(a))
        else:
            out.append(f"FAIL  {a.path}")
            if a.match_id:
                out.append(f"      {_summary_line(a)}")
            if a.passed:
                out.append("      passed: " + ", ".join(a.passed))
            assert a.discrepancy is not None
            out.extend("      " + line for line in a.discrepancy.text().splitlines())
            if a.final_hash:
                out.append(f"      final hash {a.final_hash}")
        out.extend(f"      note: {n}" for n in a.notes)
    for rc in run_checks:
        if rc.results_file:
            out.append(f"Results file {rc.results_file}: {len(rc.expected)} listed replay hash(es) checked")
        for d in rc.missing:
            out.append("FAIL  " + d.text().replace("\n", "\n      "))
        if rc.unlisted and not quiet and rc.results_file:
            out.append(f"      note: {len(rc.unlisted)} replay(s) not listed in the results: "
                       + ", ".join(Path(u).name for u in rc.unlisted[:5]) + (" …" if len(rc.unlisted) > 5 else ""))
    ok = sum(1 for a in audits if a.ok)
    failed = len(audits) - ok + sum(len(rc.missing) for rc in run_checks)
    deals = sum(a.deals for a in audits)
    actions = sum(a.actions for a in audits)
    verdict = "all checks passed" if failed == 0 else f"{failed} FAILED"
    older = sum(1 for a in audits if a.ok and a.skipped)
    if older and failed == 0:
        verdict += f" ({older} of an earlier bot protocol: message digests not comparable)"
    unchecked = sum(1 for a in audits if a.unchecked and a.discrepancy is None)
    if unchecked:
        allowed = all(a.ok for a in audits if a.unchecked)
        verdict = ("all checks made passed" if failed == 0 else verdict) + (
            f"; {unchecked} NOT fully CHECKED" + (" (allowed: --allow-unchecked)" if allowed
                                                  else " (fails the audit unless --allow-unchecked)"))
    out.append(f"Audited {plural(len(audits), 'match', 'matches')}: {ok} passed, {verdict}; "
               f"{plural(deals, 'deal')}, {plural(actions, 'action')}.")
    return "\n".join(out)


def _audit_one(target: tuple[Path, str | None, bool]) -> ReplayAudit:
    return audit_file(target[0], expect_hash=target[1], allow_unchecked=target[2])


def run(paths: Sequence[Path], *, expect_hash: str = "", allow_unchecked: bool = False, jobs: int = 1,
        as_json: bool = False, quiet: bool = False) -> int:
    """``arena audit PATH…`` (replays, or run folders: every replay in one, checked against its
    results); ``expect_hash``: one replay's final hash; ``jobs``: processes; the exit code."""
    targets: list[tuple[Path, str | None]] = []
    run_checks: list[RunCheck] = []
    for p in paths:
        if p.is_dir():
            files = replay_files(p)
            rc = run_expectations(p, files)
            run_checks.append(rc)
            targets.extend((f, rc.expected.get(f.resolve())) for f in files)
        elif p.is_file():
            targets.append((p, None))
        else:
            print(f"arena audit: {p}: no such file or folder", file=sys.stderr)
            return EXIT_USAGE
    if not targets:
        print("arena audit: no replay (*.jsonl) found in " + ", ".join(map(str, paths)), file=sys.stderr)
        return EXIT_USAGE
    if expect_hash:
        if len(targets) != 1:
            print("arena audit: --expect-hash needs exactly one replay", file=sys.stderr)
            return EXIT_USAGE
        targets[0] = (targets[0][0], expect_hash)
    work = [(path, expected, allow_unchecked) for path, expected in targets]
    if jobs > 1 and len(targets) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            audits = list(pool.map(_audit_one, work))
    else:
        audits = [_audit_one(t) for t in work]
    failed = any(not a.ok for a in audits) or any(rc.missing for rc in run_checks)
    if as_json:
        print(json.dumps({
            "ok": not failed,
            "checks": list(CHECKS),
            "replays": [a.to_dict() for a in audits],
            "runs": [{"results_file": rc.results_file, "hashes_checked": len(rc.expected),
                      "missing": [d.to_dict() for d in rc.missing], "unlisted": rc.unlisted} for rc in run_checks],
            "summary": {"matches": len(audits), "passed": sum(1 for a in audits if a.ok),
                        "unchecked": sum(1 for a in audits if a.unchecked),
                        "deals": sum(a.deals for a in audits), "actions": sum(a.actions for a in audits),
                        "final_hashes": {a.path: a.final_hash for a in audits}},
            "chain_only": list(CHAIN_ONLY),
        }, indent=2, ensure_ascii=False))
    else:
        print(render(audits, run_checks, quiet=quiet))
    return EXIT_FAILED if failed else EXIT_OK
