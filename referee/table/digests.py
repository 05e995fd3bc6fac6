"""Each seat's story digest: SHA-256 over every message of the match's story sent to the seat
(each after its 4-byte length), what ``arena audit`` re-derives from the replay."""

from __future__ import annotations

import hashlib


class StoryDigests:
    """The digests and message counts by seat."""

    __slots__ = ("_digests", "told")

    def __init__(self, seats: int) -> None:
        self._digests = [hashlib.sha256() for _ in range(seats)]
        self.told = [0] * seats
        """Messages of the story sent, by seat."""

    def add(self, seat: int, data: bytes) -> None:
        """A serialised message of the story was sent to ``seat``."""
        digest = self._digests[seat]
        digest.update(len(data).to_bytes(4, "big"))
        digest.update(data)
        self.told[seat] += 1

    def hexdigests(self) -> list[str]:
        """The digests so far, by seat."""
        return [d.hexdigest() for d in self._digests]
