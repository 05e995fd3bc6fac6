"""The live web in a process of its own (``arena serve --web``, :mod:`arena.web.process`): what
the child web knows of the live referee (:class:`Relay`: the running matches and their start
and end, pushed by the parent over the child's stdin) and how it hands the requests only the
parent can answer — the people's tables, sign-in and a signed-in person's pages — to the
parent's own web, over a private Unix socket (:func:`forward`: HTTP/1.1 with h11, streamed both
ways, server-sent events included). A running match's live view is the child's copy
(:class:`LiveCopy`): one subscription to the parent's stream of it, however many watch it here.

The parent's web trusts the client address and scheme the child names (:class:`Forwarded`):
only the child reaches its socket (in a folder of mode 0700).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import h11
import structlog
import trio
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.web.limits import WebLimits

log = structlog.get_logger("arena")

FORWARD_BODY_BYTES = 64 * 1024
"""The largest request body forwarded to the parent's web (the tables' and doors' forms are small)."""
FORWARD_READ_BYTES = 64 * 1024
"""How much of the parent's answer is read from its socket at a time."""
CLIENT_HEADER = b"x-arena-client"
"""The forwarded request's client address (the child's caller), set by the child only."""
SCHEME_HEADER = b"x-arena-scheme"
"""The forwarded request's scheme (``https`` when the child serves TLS), set by the child only."""
HOP_HEADERS = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"proxy-connection", b"te",
                         b"trailer", b"content-length", b"host", CLIENT_HEADER, SCHEME_HEADER})
"""Headers of one hop, never copied across (the forwarder sets its own)."""
SERVER_HEADERS = frozenset({b"date", b"server"})
"""Headers of the parent's answer the child's own server writes."""
LIVE_COPY_CLIENT = "live-copy:"
"""The client address the child names when it subscribes to a match's stream for its live copy
(followed by the match id: the parent's per-client limit counts each copy apart)."""


@dataclass(slots=True)
class Relay:
    """The child web's view of the parent's referee: the matches running (as
    :func:`arena.web.data.running` lists them, pushed on each start and end and while their
    positions move) and where the parent's web listens."""

    parent: str
    """The parent web's Unix socket."""
    running: list[dict[str, Any]] = field(default_factory=list)
    """The referee's matches not over yet, as last pushed."""
    running_ids: frozenset[str] = frozenset()
    """Their ids."""
    on_match: Callable[[dict[str, Any]], None] | None = None
    """Called with each match start and end (the web's hub publishes it)."""
    limits: WebLimits = field(default_factory=WebLimits)
    """The web's limits (``cached_views``: the live copies at most; ``live_first_view_s``,
    ``live_idle_s``)."""
    nursery: trio.Nursery | None = None
    """Where the subscriptions run (the child web's; ``None``: none is made, all is forwarded)."""
    copies: dict[str, LiveCopy] = field(default_factory=dict)
    """The running matches' live views kept, by match id: one subscription to the parent each."""

    def push(self, message: Mapping[str, Any]) -> None:
        """Take one message of the parent: ``{"running": [...]}`` and/or ``{"match": event}``."""
        if "running" in message:
            self.running = list(message["running"])
            self.running_ids = frozenset(str(m["match_id"]) for m in self.running)
        if "match" in message and self.on_match is not None:
            self.on_match(dict(message["match"]))

    def copy(self, match_id: str) -> LiveCopy | None:
        """The live copy of running match ``match_id``, its subscription started if need be and
        its asking noted; ``None`` if the match is not running as last pushed, or ``cached_views``
        copies are kept already (then the parent answers, as before)."""
        if match_id not in self.running_ids or self.nursery is None:
            return None
        copy = self.copies.get(match_id)
        if copy is None:
            if len(self.copies) >= self.limits.cached_views:
                return None
            game = next((str(m.get("game", "")) for m in self.running if m["match_id"] == match_id), "")
            copy = self.copies[match_id] = LiveCopy(match_id, game)
            self.nursery.start_soon(self._subscribe, copy)
        copy.asked = trio.current_time()
        return copy

    async def live(self, match_id: str) -> LiveCopy | None:
        """:meth:`copy`, once it holds a view (the first one waited for at most
        ``live_first_view_s``); ``None``: the parent answers."""
        copy = self.copy(match_id)
        if copy is None:
            return None
        with trio.move_on_after(self.limits.live_first_view_s):
            while copy.data is None and not copy.closed:
                await copy.changed.wait()
        return copy if copy.data is not None else None

    async def _subscribe(self, copy: LiveCopy) -> None:
        """Hold the parent's stream of ``copy``'s match until it ends (the match's end, the
        parent gone) or nobody watched or asked for ``live_idle_s``."""
        log.info("web_live_copy_started", match_id=copy.match_id)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._until_idle, copy, nursery.cancel_scope)
                await self._follow(copy)
                nursery.cancel_scope.cancel()
        except (h11.ProtocolError, OSError, ValueError, trio.BrokenResourceError) as e:
            log.warning("web_live_copy_broken", match_id=copy.match_id, reason=str(e))
        finally:
            log.info("web_live_copy_ended", match_id=copy.match_id, over=copy.ended is not None)
            copy.closed = True
            copy.touch()
            if self.copies.get(copy.match_id) is copy:
                del self.copies[copy.match_id]

    async def _until_idle(self, copy: LiveCopy, scope: trio.CancelScope) -> None:
        while True:
            await trio.sleep(self.limits.live_idle_s)
            if copy.watchers == 0 and trio.current_time() - copy.asked >= self.limits.live_idle_s:
                scope.cancel()
                return

    async def _follow(self, copy: LiveCopy) -> None:
        """Read the parent's ``/api/matches/{id}/events`` into ``copy`` (a view: the newest kept;
        ``end``: the copy ends)."""
        async with await trio.open_unix_socket(self.parent) as stream:
            conn = h11.Connection(h11.CLIENT)
            target = f"/api/matches/{quote(copy.match_id, safe='')}/events".encode()
            await stream.send_all(conn.send(h11.Request(method="GET", target=target, headers=[
                (b"host", b"localhost"), (b"accept", b"text/event-stream"), (b"connection", b"close"),
                (CLIENT_HEADER, f"{LIVE_COPY_CLIENT}{copy.match_id}".encode()), (SCHEME_HEADER, b"http")])) or b"")
            await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
            pending = b""
            async with contextlib.aclosing(_answer(conn, stream)) as answer:
                async for event in answer:
                    if isinstance(event, h11.Response) and event.status_code != 200:
                        log.warning("web_live_copy_refused", match_id=copy.match_id, status=event.status_code)
                        return
                    if isinstance(event, h11.Data):
                        pending += bytes(event.data)
                        *whole, pending = pending.split(b"\n\n")
                        for block in whole:
                            if copy.take(block.decode()):
                                return


@dataclass(slots=True)
class LiveCopy:
    """The web's own process's copy of one running match's live view, as the parent's stream of
    it sends it (spectator views only: public), for ``/api/matches/{id}`` and its watchers."""

    match_id: str
    """The match."""
    game: str
    """Its game (from the running list)."""
    data: dict[str, Any] | None = None
    """The newest ``view`` event's data (``None``: none came yet)."""
    text: str = ""
    """That event's data as it came (one line of JSON: each watcher is sent it as is)."""
    header: dict[str, Any] | None = None
    """The match's public header (``None``: not written yet)."""
    ended: str | None = None
    """The ``end`` event's data as it came (``None``: not over)."""
    closed: bool = False
    """The subscription ended (the match's end, nobody asking, the parent gone)."""
    changed: trio.Event = field(default_factory=trio.Event)
    """Set, and replaced, on each change."""
    watchers: int = 0
    """Streams of the child fed from it."""
    asked: float = 0.0
    """When it was last asked for (trio's clock)."""

    def touch(self) -> None:
        """Wake whoever waits for a change."""
        self.changed.set()
        self.changed = trio.Event()

    def take(self, block: str) -> bool:
        """Take one event of the parent's stream (``id:``/``event:``/``data:`` lines; comments
        are keep-alives): whether it was the end."""
        kind, data = "message", []
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            if name == "event":
                kind = value.strip()
            elif name == "data":
                data.append(value.removeprefix(" "))
        text = "\n".join(data)
        if kind == "view" and data:
            self.data = json.loads(text)
            self.text = text
            if isinstance(self.data, dict) and self.data.get("header") is not None:
                self.header = self.data["header"]
            self.touch()
        elif kind == "end":
            self.ended = text
            self.touch()
            return True
        return False

    def answer(self) -> dict[str, Any]:
        """``/api/matches/{id}`` of the match now (as the parent's web would answer it)."""
        assert self.data is not None
        out: dict[str, Any] = {"match_id": self.match_id, "game": self.game, "state": self.data["state"],
                               "players": self.data["players"]}
        if self.data.get("position") is not None:
            out["position"] = self.data["position"]
        out.update(over=self.data["over"], header=self.header, view=self.data["view"])
        return out


async def forward(parent: str, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer the request of ``scope`` with the parent web's answer (status, headers, body
    streamed as it comes); 502 if the parent's web cannot be reached, 413 past
    ``FORWARD_BODY_BYTES``. Ends when the parent's answer ends or the caller goes away."""
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if len(body) > FORWARD_BODY_BYTES:
            await _refuse(send, 413, f"a request body forwarded here holds at most {FORWARD_BODY_BYTES} bytes")
            return
        if not message.get("more_body", False):
            break
    try:
        stream = await trio.open_unix_socket(parent)
    except OSError as e:
        log.warning("web_forward_failed", path=scope["path"], reason=str(e))
        await _refuse(send, 502, "the arena's own web is not answering (it restarts with the server); try again")
        return
    async with stream:
        conn = h11.Connection(h11.CLIENT)
        request = (conn.send(h11.Request(method=scope["method"], target=_target(scope),
                                         headers=_headers(scope, len(body)))) or b"")
        request += (conn.send(h11.Data(data=body)) or b"") if body else b""
        request += conn.send(h11.EndOfMessage()) or b""
        try:
            await stream.send_all(request)
        except (trio.BrokenResourceError, OSError) as e:
            # The parent may answer before it reads a body it refuses (a 404 for an unknown seat)
            # and close: its answer is still there to relay.
            log.info("web_forward_cut", path=scope["path"], reason=str(e))
        answered: list[bool] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_until_gone, receive, nursery.cancel_scope)
            answered.append(await _relay_answer(conn, stream, send, scope["path"]))
            nursery.cancel_scope.cancel()
    # (the last message outside the caller's watch: it ends the exchange, and the server's closing
    # of the connection must not be cancelled by the disconnect it announces)
    if answered == [True]:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    elif answered == [False]:
        await _refuse(send, 502, "the arena's own web closed without a whole answer; try again")


async def _until_gone(receive: Receive, scope: trio.CancelScope) -> None:
    """Cancel ``scope`` when the caller goes away (a stream forwarded ends with its reader)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _relay_answer(conn: h11.Connection, stream: trio.SocketStream, send: Send, path: str) -> bool:
    """Relay the parent's answer but its end: whether its head was sent (the caller ends it),
    else nothing was (the caller refuses)."""
    started = False
    try:
        async with contextlib.aclosing(_answer(conn, stream)) as answer:
            async for event in answer:
                if isinstance(event, h11.Response):
                    headers = [(k, v) for k, v in event.headers if k not in HOP_HEADERS and k not in SERVER_HEADERS]
                    await send({"type": "http.response.start", "status": event.status_code, "headers": headers})
                    started = True
                else:
                    await send({"type": "http.response.body", "body": bytes(event.data), "more_body": True})
    except (h11.RemoteProtocolError, trio.BrokenResourceError, OSError) as e:
        log.warning("web_forward_broken", path=path, reason=str(e))
    return started


async def _answer(conn: h11.Connection, stream: trio.SocketStream) -> AsyncGenerator[h11.Response | h11.Data, None]:
    """The parent's answer on ``stream``: its head, then its body as it comes, until it ends."""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(FORWARD_READ_BYTES))
        elif isinstance(event, (h11.Response, h11.Data)):
            yield event
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
            return


def _target(scope: Scope) -> bytes:
    raw = scope.get("raw_path") or scope["path"].encode()
    query = scope.get("query_string") or b""
    return bytes(raw) + (b"?" + bytes(query) if query else b"")


def _headers(scope: Scope, length: int) -> list[tuple[bytes, bytes]]:
    """The caller's headers (one hop's and pseudo-headers left out) and the forwarder's own."""
    given = [(bytes(k).lower(), bytes(v)) for k, v in scope["headers"]]
    host = next((v for k, v in given if k in (b"host", b":authority")), b"")
    if not host and scope.get("server"):
        server_host, server_port = scope["server"]
        host = f"{server_host}:{server_port}".encode()
    client = scope.get("client")
    out = [(k, v) for k, v in given if k not in HOP_HEADERS and not k.startswith(b":")]
    out += [(b"host", host or b"localhost"), (b"content-length", str(length).encode()), (b"connection", b"close"),
            (CLIENT_HEADER, (client[0] if client else "").encode()), (SCHEME_HEADER, scope["scheme"].encode())]
    return out


async def _refuse(send: Send, status: int, text: str) -> None:
    data = json.dumps({"error": text}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data, "more_body": False})


class Forwarded:
    """The parent web's side (its Unix socket): a request's client address and scheme are the
    ones the child names (``x-arena-client``, ``x-arena-scheme``), so that the per-client limits,
    the doors' rate limits and the cookies' ``Secure`` flag see the real caller."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict((bytes(k).lower(), bytes(v)) for k, v in scope["headers"])
            scope = dict(scope)
            scope["client"] = (headers.get(CLIENT_HEADER, b"").decode("latin-1"), 0)
            if headers.get(SCHEME_HEADER) in (b"http", b"https"):
                scope["scheme"] = headers[SCHEME_HEADER].decode()
        await self.app(scope, receive, send)
