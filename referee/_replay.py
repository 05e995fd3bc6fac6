"""Replay records: a match's complete information as versioned JSON Lines with a hash chain.

Each line is one record, a JSON object written canonically (keys sorted, no spaces, UTF-8).
Every record carries ``seq`` (0, 1, …) and ``prev``: the SHA-256 (hex) of the previous line's
bytes (64 zeros for the first). The hash of the last line is the replay's final hash. The
file is written atomically when the match ends (temporary file, fsync, rename).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

REPLAY_FORMAT = "gin-arena-replay"
"""The ``format`` field of a replay's header record."""
REPLAY_VERSION = 1
"""The ``version`` field of a replay's header record."""
GENESIS = "0" * 64
"""The ``prev`` of the first record."""


def canonical(record: dict[str, Any]) -> bytes:
    """The canonical bytes of a record (what is hashed and written)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _plain(text: str) -> bool:
    """Whether JSON writes ``text`` as it is between quotes."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


_EMPTY = zlib.compressobj(1, zlib.DEFLATED, -10, 2)  # what a cleared recorder holds (never fed)
_BATCH = 16
"""Lines deflated together (one call per line cost more than the line's hash)."""


class ReplayRecorder:
    """Collects a match's records, chaining their hashes. The lines are kept deflated until
    the match ends (a few hundred bytes per decision otherwise, for every running match)."""

    def __init__(self) -> None:
        self.last_hash = GENESIS
        self.count = 0
        self._deflate = zlib.compressobj(1, zlib.DEFLATED, -10, 2)  # ~6 KB of state, ~2.7x on replays
        self._chunks: list[bytes] = []
        self._pending: list[bytes] = []  # lines not yet deflated (deflated in batches: fewer calls)

    def add(self, record_type: str, /, **fields: Any) -> str:
        """Append a record of type ``record_type``; returns its hash."""
        record = {"type": record_type, "seq": self.count, "prev": self.last_hash, **fields}
        return self._append(canonical(record))

    def add_action(self, seat: int, request_id: int, action: str, card: str | None, think_us: int,
                   substitute: bool, clocks: list[int]) -> str:
        """Append an ``action`` record (the one record of every decision): the same bytes as
        ``add("action", ...)``, written without the general JSON encoder."""
        if not (_plain(action) and (card is None or _plain(card))):
            return self.add("action", seat=seat, request_id=request_id, action=action, card=card,
                            think_us=think_us, substitute=substitute, clocks=clocks)
        card_json = "null" if card is None else f'"{card}"'
        line = (
            f'{{"action":"{action}","card":{card_json},'
            f'"clocks":[{",".join(map(str, clocks))}],"prev":"{self.last_hash}","request_id":{request_id:d},'
            f'"seat":{seat:d},"seq":{self.count:d},"substitute":{"true" if substitute else "false"},'
            f'"think_us":{think_us:d},"type":"action"}}'
        ).encode()
        return self._append(line)

    def _append(self, line: bytes) -> str:
        pending = self._pending
        pending.append(line)
        if len(pending) >= _BATCH:
            self._deflate_pending()
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
        """Every record so far, in order (canonical bytes, no newline)."""
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


def read_replay(path: Path) -> list[dict[str, Any]]:
    """The records of a replay file, in order (no checking: see the audit)."""
    with open(path, "rb") as f:
        return [json.loads(line) for line in f if line.strip()]
