"""A running match's journal: its replay on disk as it happens, so a SIGKILL loses at most the
record being written, and nothing in it tells a bot what it may not know.

Three files in the replay folder, each mode 0600 while the match runs:

- ``<id>.journal``: the replay's own lines (canonical bytes, the replay's order), appended with
  one ``write`` per record, except that the lines of a deal (from its ``deal`` record, which
  carries the deck, to its ``deal_end``) are held back and appended together when the deal
  ends. When the match completes the held lines are appended, the file is fsynced, made 0644
  and renamed to ``<id>.jsonl``: the replay, byte for byte what the recorder writes from memory.
- ``<id>.live``: the running deal as a spectator sees it, one JSON object per record (the
  record's ``type``/``seq``/``prev`` and its public fields: no deck, no key, no card an action
  drew, no fault's words); emptied when the deal's lines reach the journal.
- ``<id>.seed``: the operator's seed and the bots' nonces, so that a restarted referee can
  reveal the seed of a match it lost (that match is over); removed when the match completes.

Recovery (:func:`recover`) turns what a killed referee left into an interrupted replay: the
journal's complete lines up to the last complete deal, then a ``result`` record whose
termination is ``interrupted`` with the seed revealed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.model.replay import GENESIS, canonical, write_atomic

JOURNAL_SUFFIX = ".journal"
"""The journal of a running match: ``<id>.journal``."""
LIVE_SUFFIX = ".live"
"""The running deal's public view: ``<id>.live``."""
SEED_SUFFIX = ".seed"
"""The seed and nonces of a running match: ``<id>.seed``."""
_PUBLIC = {
    "deal": ("game", "deal", "dealer"),
    "action": ("seat", "request_id", "action", "think_us", "substitute", "clocks"),
    "fault": ("seat", "termination", "policy", "decisions", "scope"),
}
"""The fields of a running deal's records a spectator may see (kinds not named here are public
whole: a reshuffle's stock size, the deal's end)."""
_MODE = 0o600


def _open(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, _MODE)


def preview(kind: str, line: bytes) -> bytes:
    """A running deal's record as a spectator may see it (the ``.live`` line)."""
    keep = _PUBLIC.get(kind)
    if keep is None:
        return line
    obj = json.loads(line)
    return canonical({k: obj[k] for k in ("type", "seq", "prev", *keep) if k in obj})


class Journal:
    """The journal files of one running match (see the module's text)."""

    def __init__(self, folder: Path, match_id: str, seed: bytes, nonces: Sequence[bytes]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.base = folder / match_id
        """The files' path without suffix."""
        seed_fd = _open(self._path(SEED_SUFFIX))
        with os.fdopen(seed_fd, "wb") as f:
            f.write(canonical({"seed": seed.hex(), "nonces": [n.hex() for n in nonces]}) + b"\n")
        self._fd = _open(self._path(JOURNAL_SUFFIX))
        self._live = _open(self._path(LIVE_SUFFIX))
        self._deal: list[bytes] | None = None  # the running deal's lines, held back

    def _path(self, suffix: str) -> Path:
        return self.base.with_name(self.base.name + suffix)

    def append(self, kind: str, line: bytes, public: bytes | None = None) -> None:
        """Journal one record (``public``: its ``.live`` form, if the caller built it)."""
        held = self._deal
        if kind == "deal":
            held = self._deal = []
        if held is None:
            os.write(self._fd, line + b"\n")
            return
        held.append(line)
        os.write(self._live, (public if public is not None else preview(kind, line)) + b"\n")
        if kind == "deal_end":
            self._release()

    def _release(self) -> None:
        """The deal is over: its lines go to the journal (one write), the live view is emptied."""
        if self._deal:
            os.write(self._fd, b"".join(line + b"\n" for line in self._deal))
        self._deal = None
        os.ftruncate(self._live, 0)

    def complete(self, target: Path) -> None:
        """The match is over: the journal becomes the replay ``target`` (fsync, then an atomic
        rename); the live view and the seed file go."""
        self._release()
        os.fchmod(self._fd, 0o644)  # the match is over: its replay is public
        os.fsync(self._fd)
        self.close()
        os.replace(self._path(JOURNAL_SUFFIX), target)
        for suffix in (LIVE_SUFFIX, SEED_SUFFIX):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path(suffix))
        with contextlib.suppress(OSError):
            dir_fd = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def close(self) -> None:
        """Close the files (once)."""
        for fd in (self._fd, self._live):
            if fd >= 0:
                os.close(fd)
        self._fd = self._live = -1


@dataclass(frozen=True, slots=True)
class Interrupted:
    """A match a killed referee left behind, made into a replay by :func:`recover`."""

    match_id: str
    """The match's id."""
    replay_path: Path
    """The interrupted replay written."""
    header: dict[str, Any] | None
    """The replay's header record (``None``: the journal held none)."""
    seed: bytes
    """The operator's seed, revealed."""
    nonces: tuple[bytes, ...]
    """The bots' nonces, by seat."""
    deals: int
    """Complete deals the replay holds."""
    lines: int
    """Lines the replay holds before its result record."""
    result: dict[str, Any]
    """The result record appended (its JSON object)."""
    final_hash: str
    """SHA-256 (hex) of the interrupted replay's last line."""


def _complete_prefix(data: bytes) -> list[bytes]:
    """The journal's lines that chain, up to the end of the last complete deal (a deal's
    lines reach the journal together; a torn write leaves a deal without its end)."""
    lines: list[bytes] = []
    keep = 0
    prev = GENESIS
    in_deal = False
    for raw in data.split(b"\n")[:-1]:  # the last piece has no newline: the record being written
        try:
            obj = json.loads(raw)
        except ValueError:
            break
        if not isinstance(obj, dict) or obj.get("prev") != prev or obj.get("seq") != len(lines):
            break
        lines.append(raw)
        prev = hashlib.sha256(raw).hexdigest()
        kind = obj.get("type")
        in_deal = (in_deal or kind == "deal") and kind != "deal_end"
        if not in_deal:
            keep = len(lines)
    return lines[:keep]


def _result(records: list[dict[str, Any]], seats: int, seed: bytes, nonces: Sequence[bytes],
            detail: str) -> dict[str, Any]:
    games_won, totals, think = [0] * seats, [0] * seats, [0] * seats
    substituted: set[int] = set()
    decisions = 0
    for r in records:
        kind = r.get("type")
        if kind == "game_end":
            if r.get("winner") is not None:
                games_won[r["winner"]] += 1
            totals = [a + b for a, b in zip(totals, r.get("totals", [0] * seats), strict=False)]
        elif kind == "action":
            decisions += 1
            think[r["seat"]] += r["think_us"]
        elif kind == "fault" and r.get("policy") == "substitute":
            substituted.add(r["seat"])
    return {
        "type": "result", "winner": None, "termination": "interrupted", "faulting_seat": None, "detail": detail,
        "games_won": games_won, "totals": totals, "seed": seed.hex(), "nonces": [n.hex() for n in nonces],
        "substituted_seats": sorted(substituted), "decisions": decisions, "think_us": think,
        "message_digests": [""] * seats, "messages": [0] * seats,
    }


def recover(journal: Path) -> Interrupted:
    """Make the journal a killed referee left into an interrupted replay (``<id>.jsonl`` beside
    it, mode 0644: the match is over and its seed revealed); the journal's files go."""
    match_id = journal.name[: -len(JOURNAL_SUFFIX)]
    base = journal.with_name(match_id)
    seed_file = base.with_name(match_id + SEED_SUFFIX)
    keys: dict[str, Any] = json.loads(seed_file.read_text()) if seed_file.exists() else {"seed": "", "nonces": []}
    seed, nonces = bytes.fromhex(keys["seed"]), tuple(bytes.fromhex(n) for n in keys["nonces"])
    lines = _complete_prefix(journal.read_bytes())
    records = [json.loads(x) for x in lines]
    header = records[0] if records and records[0].get("type") == "header" else None
    seats = len(header["players"]) if header is not None else len(nonces)
    deals = sum(1 for r in records if r.get("type") == "deal_end")
    detail = (f"the referee stopped while the match ran; this replay holds {deals} complete deal(s) "
              f"and stops after line {len(lines)}")
    result = _result(records, seats, seed, nonces, detail)
    result["seq"] = len(lines)
    result["prev"] = hashlib.sha256(lines[-1]).hexdigest() if lines else GENESIS
    target = base.with_name(match_id + ".jsonl")
    last = canonical(result)
    write_atomic(target, b"".join(x + b"\n" for x in lines) + last + b"\n")
    for suffix in (JOURNAL_SUFFIX, LIVE_SUFFIX, SEED_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(base.with_name(match_id + suffix))
    return Interrupted(match_id, target, header, seed, nonces, deals, len(lines), result,
                       hashlib.sha256(last).hexdigest())


def journals(folder: Path) -> list[Path]:
    """The journals a referee left in ``folder`` (matches it did not complete), oldest first."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*" + JOURNAL_SUFFIX), key=lambda p: p.stat().st_mtime)
