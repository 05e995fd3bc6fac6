"""The spectator log of one match: every public event, serialised once, shown to live
spectators and kept (deflated once the match is over) for those who come later."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

from gin_arena.v2 import referee_pb2

Sink = Callable[[referee_pb2.SpectatorEvent], None]


class SpectatorLog:
    """The public events of a match and the spectators watching it."""

    __slots__ = ("_log", "_packed", "sinks")

    def __init__(self) -> None:
        self.sinks: list[Sink] = []
        """The live spectators."""
        self._log = bytearray()  # serialised events, each after its 4-byte length (a bytes
        # object per event costs ~50 bytes more; a message object ~30x)
        self._packed = b""  # the log once the match is over, deflated

    def add(self, data: bytes) -> None:
        """Add a serialised ``SpectatorEvent`` and show it to the spectators."""
        self._log += len(data).to_bytes(4, "big")
        self._log += data
        if self.sinks:
            ev = referee_pb2.SpectatorEvent.FromString(data)
            for sink in list(self.sinks):
                sink(ev)

    def events(self) -> list[bytes]:
        """The events so far, serialised."""
        data = zlib.decompress(self._packed) if self._packed else bytes(self._log)
        out, i = [], 0
        while i < len(data):
            (n,) = struct.unpack_from(">I", data, i)
            out.append(data[i + 4:i + 4 + n])
            i += 4 + n
        return out

    def first(self) -> bytes | None:
        """The first event (the match's header), serialised, without splitting the whole log
        (``None``: no event yet)."""
        data = zlib.decompress(self._packed) if self._packed else self._log
        if len(data) < 4:
            return None
        (n,) = struct.unpack_from(">I", data, 0)
        return bytes(data[4:4 + n])

    def watch(self, sink: Sink, from_start: bool, over: bool) -> None:
        """Add a spectator; with ``from_start`` it first gets everything so far, else the header
        (and the result if the match is ``over``)."""
        log = self.events()
        if from_start:
            for data in log:
                sink(referee_pb2.SpectatorEvent.FromString(data))
        elif log:
            sink(referee_pb2.SpectatorEvent.FromString(log[0]))
            if over and len(log) > 1:
                sink(referee_pb2.SpectatorEvent.FromString(log[-1]))
        self.sinks.append(sink)

    @property
    def size(self) -> int:
        """The bytes the log holds."""
        return len(self._log) + len(self._packed)

    def pack(self) -> None:
        """The match is over: keep the log deflated (~60 bytes per decision otherwise)."""
        self._packed = zlib.compress(self._log)
        self._log = bytearray()
