"""Typed replays: read a replay file into records, walk them with a visitor.

A replay is JSON Lines, one record per line (see :mod:`referee.model.replay` for the format and the
hash chain): a header, then deals, actions, reshuffles, faults, deal and game ends, and a result
last. :func:`read_replay` turns a file (or its bytes, or its lines) into a :class:`Replay` of
frozen records, checking the form as it goes: every line a JSON object, the header first with the
format and the version this code reads, every record of a known kind with exactly its fields and
their types, ``seq`` counting 0, 1, … Anything else raises :class:`ReplayFormatError`, naming the
line and the field. An unknown kind of record is an error too: the format has no extension
records, a new kind is a new version. The hash chain and everything the records claim (the
decks, the moves, the digests) is what ``arena audit`` checks.

Each record converts back to its JSON object exactly (``record.to_json()`` plus ``seq`` and
``prev``): reading a replay and writing its records again gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model.replay import (
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
    ReplayFormatError,
    ReplayRecorder,
    ReplayVisitor,
    ReshuffleRecord,
    ResultRecord,
    canonical,
    decode_record,
)

__all__ = [
    "GENESIS",
    "PROTOCOL_VERSION",
    "RECORD_CLASSES",
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "ActionRecord",
    "DealEndRecord",
    "DealRecord",
    "FaultRecord",
    "GameEndRecord",
    "HeaderRecord",
    "Record",
    "Replay",
    "ReplayFormatError",
    "ReplayRecorder",
    "ReplayVisitor",
    "ReshuffleRecord",
    "ResultRecord",
    "canonical",
    "decode_record",
    "encode_record",
    "load_line",
    "read_replay",
    "split_lines",
]


@dataclass(frozen=True, slots=True)
class Replay:
    """A replay read: its records in order and the lines they came from."""

    header: HeaderRecord
    """The first record."""
    records: tuple[Record, ...]
    """Every record, the header first: ``records[i]`` is the record of ``seq`` i (line i + 1)."""
    lines: tuple[bytes, ...]
    """The lines as read (without newlines): what the hash chain covers."""

    @property
    def result(self) -> ResultRecord | None:
        """The last record if it is the result (a whole replay always ends with one)."""
        last = self.records[-1]
        return last if isinstance(last, ResultRecord) else None

    def accept(self, visitor: ReplayVisitor) -> None:
        """Visit every record in order."""
        for record in self.records:
            record.accept(visitor)


def encode_record(record: Record, seq: int, prev: str) -> bytes:
    """The canonical line of ``record`` at position ``seq`` after a line hashing to ``prev``."""
    obj = record.to_json()
    obj["seq"], obj["prev"] = seq, prev
    return canonical(obj)


def split_lines(data: bytes) -> list[bytes]:
    """A replay file's lines (a final newline is optional)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def load_line(line: bytes, number: int) -> dict[str, Any]:
    """The JSON object of line ``number`` (from 1); :class:`ReplayFormatError` if it is none."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        text = line[:80].decode("utf-8", "replace")
        raise ReplayFormatError(number, "(line)", "a JSON object", text,
                                f"not JSON: {e}" + (" (an empty line)" if not line.strip() else
                                                    " (a truncated line?)" if not line.rstrip().endswith(b"}")
                                                    else "")) from None
    if type(obj) is not dict:
        raise ReplayFormatError(number, "(line)", "a JSON object", obj)
    return obj


def read_replay(source: Path | str | bytes | Iterable[bytes | str]) -> Replay:
    """Read a replay: a file's path, its bytes, or its lines. Checks the form (see the module's
    text); raises :class:`ReplayFormatError`, or ``OSError`` for a file that cannot be read."""
    if isinstance(source, (Path, str)):
        lines = split_lines(Path(source).read_bytes())
    elif isinstance(source, (bytes, bytearray, memoryview)):
        lines = split_lines(bytes(source))
    else:
        lines = [line.encode() if isinstance(line, str) else bytes(line) for line in source]
        lines = [line[:-1] if line.endswith(b"\n") else line for line in lines]
    if not lines:
        raise ReplayFormatError(None, "(file)", "a header record", "an empty file")
    records = _decode_all(lines)
    header = records[0]
    assert isinstance(header, HeaderRecord)
    return Replay(header, tuple(records), tuple(lines))


def _decode_all(lines: Sequence[bytes]) -> list[Record]:
    records: list[Record] = []
    game = "gin"
    last = len(lines) - 1
    for i, line in enumerate(lines):
        obj = load_line(line, i + 1)
        record = decode_record(obj, i + 1, game)
        if isinstance(record, HeaderRecord):
            if i:
                raise ReplayFormatError(i + 1, "type", "a record after the header", "header")
            game = record.game
        elif not i:
            raise ReplayFormatError(1, "type", "header", record.KIND, "a replay starts with its header")
        if isinstance(record, ResultRecord) and i != last:
            raise ReplayFormatError(i + 2, "type", "no record after the result", lines[i + 1][:80].decode(
                "utf-8", "replace"), "the result record ends a replay")
        if obj["seq"] != i:
            raise ReplayFormatError(i + 1, f"{record.KIND}.seq", str(i), obj["seq"], "records count 0, 1, … in order")
        records.append(record)
    return records
