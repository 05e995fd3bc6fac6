"""A raw HTTP/2 client that speaks just enough gRPC to misbehave: it opens ``Play`` streams,
writes gRPC messages, never reads (so flow control stops the server's writes), and can reset
streams as fast as it likes (rapid reset). For the limits tests and bench/attack.py."""

from __future__ import annotations

import socket

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS = 0x0, 0x1, 0x3, 0x4
END_HEADERS = 0x4
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


class RawConnection:
    """One TCP connection with the HTTP/2 preface sent; the caller writes frames."""

    def __init__(self, host: str, port: int, stream_window: int | None = None) -> None:
        """``stream_window``: the streams' flow-control window (``None``: HTTP/2's 65,535
        bytes); a small one stops the server's writes on a stream after that many bytes, not
        after the connection's 64 KiB."""
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # keep little for us unread
        self.authority = f"{host}:{port}"
        self.next_stream = 1
        settings = b"" if stream_window is None else INITIAL_WINDOW_SIZE.to_bytes(2, "big") + stream_window.to_bytes(
            4, "big")
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))

    def open_stream(self, messages: list[bytes], path: str = "/gin_arena.v2.BotService/Play") -> int:
        """Open a stream of the method ``path`` and write ``messages`` (serialised) on it; its id."""
        stream = self.next_stream
        self.next_stream += 2
        out = frame(HEADERS, END_HEADERS, stream, play_headers(self.authority, path))
        for m in messages:
            out += frame(DATA, 0, stream, grpc_message(m))
        self.sock.sendall(out)
        return stream

    def rapid_reset(self, count: int) -> None:
        """Open ``count`` streams, each reset at once (HEADERS + RST_STREAM CANCEL)."""
        out = bytearray()
        for _ in range(count):
            stream = self.next_stream
            self.next_stream += 2
            out += frame(HEADERS, END_HEADERS, stream, play_headers(self.authority))
            out += frame(RST_STREAM, 0, stream, (0x8).to_bytes(4, "big"))
        self.sock.sendall(bytes(out))

    def write(self, stream: int, messages: list[bytes]) -> None:
        """Write more messages on an open stream."""
        self.sock.sendall(b"".join(frame(DATA, 0, stream, grpc_message(m)) for m in messages))

    def close(self) -> None:
        self.sock.close()
