"""The live web's server: a Starlette app on Hypercorn's trio worker, in the caller's trio run
(beside the referee of ``arena serve`` or a tournament's embedded one), until cancelled.

Doors: the pages and the API are read-only (GET and HEAD; the operator's sign-in and sign-out are
the only POSTs, anything else is 405); the operator is the one who shows the operator token (as
``Authorization: Bearer`` or through the sign-in form, which sets an HttpOnly, SameSite=Strict
cookie holding an HMAC of it, never the token, and Secure over TLS); every response carries a
strict Content-Security-Policy (no inline script or style), ``X-Content-Type-Options: nosniff``
and a ``Referrer-Policy``, and over TLS ``Strict-Transport-Security``; live-update streams are
bounded (:class:`~arena.web.limits.WebLimits`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs

import structlog
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import referee
from arena.replays import html as replay_html
from arena.replays.model import ReplayModelError, load
from arena.results.standings import RatedGames
from arena.web import pages, tables
from arena.web.data import (
    WebSource,
    bot_page,
    finished_match,
    live_match,
    reading,
    recent_matches,
    running,
    spectator_view,
    standings,
)
from arena.web.limits import WebLimits

log = structlog.get_logger("arena")
T = TypeVar("T")

COOKIE = "gin_arena_operator"
"""The operator's sign-in cookie (its value: :func:`cookie_value`)."""
COOKIE_CONTEXT = b"gin-arena live web operator cookie v1"
"""What the cookie's HMAC signs (keyed by the operator token)."""
SIGNIN_BODY_BYTES = 4096
"""The largest sign-in form accepted."""
STATIC = Path(__file__).parent / "static"
"""The pages' own script and style sheet."""
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The Content-Security-Policy of every response: nothing inline, nothing from elsewhere."""
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
"""Sent with every response."""
READ_METHODS = frozenset({"GET", "HEAD"})
"""What the public may do: read."""
DOORS = frozenset({"/signin", "/signout"})
"""The only addresses that take a POST (the operator's sign-in and sign-out)."""
REPLAY_ASSETS = tables.REPLAY_ASSETS
"""The replay page's style sheet and script, served as files (arena.replays.html's own)."""


@dataclass(frozen=True, slots=True)
class WebTLS:
    """The web's TLS files (PEM), given to Hypercorn (HTTP/1.1 and h2 over TLS)."""

    cert: str
    """The certificate chain."""
    key: str
    """Its private key."""


def hsts(limits: WebLimits) -> tuple[bytes, bytes]:
    """The ``Strict-Transport-Security`` header of a web served over TLS."""
    return b"strict-transport-security", f"max-age={limits.hsts_max_age_s}".encode()


def cookie_value(token: str) -> str:
    """The sign-in cookie for an operator token: an HMAC of a fixed context, keyed by the token."""
    return hmac.new(token.encode(), COOKIE_CONTEXT, hashlib.sha256).hexdigest()


# ----- live updates -----
@dataclass(eq=False, slots=True)
class _Subscriber:
    """One ``/api/events`` stream: the events waiting to be sent to it."""

    send: trio.MemorySendChannel[str]
    """Where the hub puts its events (bounded by ``sse_queue``)."""
    receive: trio.MemoryReceiveChannel[str]
    """Where its stream takes them."""


class Hub:
    """The events of ``/api/events`` (standings and matches), numbered, fanned out without
    waiting: a subscriber whose queue is full is dropped, the others go on."""

    def __init__(self, limits: WebLimits) -> None:
        self.limits = limits
        self.subscribers: set[_Subscriber] = set()
        self.instance = secrets.token_hex(4)
        """Numbers the events of this server's run (``Last-Event-ID`` from another run starts afresh)."""
        self.sequence = 0
        self.backlog: deque[tuple[int, str]] = deque(maxlen=limits.sse_backlog)
        self.standings: list[dict[str, Any]] = []
        """The latest standings published (what ``/api/standings`` and the front page serve: the
        store watcher recomputes them when the store changes, not each request)."""
        self.dropped = 0
        """Subscribers dropped for not reading."""

    def publish(self, event: str, data: Mapping[str, Any]) -> None:
        self.sequence += 1
        text = sse(event, data, self.event_id(self.sequence))
        self.backlog.append((self.sequence, text))
        for sub in list(self.subscribers):
            try:
                sub.send.send_nowait(text)
            except trio.WouldBlock:
                self.drop(sub)

    def drop(self, sub: _Subscriber) -> None:
        self.subscribers.discard(sub)
        sub.send.close()
        self.dropped += 1
        log.info("web_reader_dropped", reason=f"{self.limits.sse_queue} events unread (limit sse_queue)")

    def subscribe(self) -> _Subscriber:
        send, receive = trio.open_memory_channel[str](self.limits.sse_queue)
        sub = _Subscriber(send, receive)
        self.subscribers.add(sub)
        return sub

    def since(self, last_id: str | None) -> list[str] | None:
        """The events after ``last_id`` (this hub's ``INSTANCE.N``) if the backlog still holds
        them all, else ``None`` (the stream starts with the standings afresh)."""
        instance, _, seq = (last_id or "").partition(".")
        if instance != self.instance or not seq.isdigit() or int(seq) > self.sequence:
            return None
        n = int(seq)
        if n < self.sequence and (not self.backlog or self.backlog[0][0] > n + 1):
            return None
        return [text for at, text in self.backlog if at > n]

    def event_id(self, sequence: int) -> str:
        return f"{self.instance}.{sequence}"


def sse(event: str, data: Mapping[str, Any], event_id: str | None = None) -> str:
    """One server-sent event (its data one line of JSON)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


@dataclass(slots=True)
class Slots:
    """The live-update streams held, in all and by client address."""

    limits: WebLimits
    """Their bounds."""
    total: int = 0
    """Streams open."""
    by_client: dict[str, int] = field(default_factory=dict)
    """Streams open by client address."""

    def refusal(self, client: str) -> Response | None:
        """Why one more stream for ``client`` is refused (503: the server is full; 429: this
        client holds its share), or ``None`` (then the slot is taken: :meth:`release` it)."""
        if self.total >= self.limits.sse_connections:
            return _error(503, f"the server holds {self.limits.sse_connections} live-update streams "
                          "(limit sse_connections); try again later", {"Retry-After": "5"})
        if self.by_client.get(client, 0) >= self.limits.sse_per_client:
            return _error(429, f"this address holds {self.limits.sse_per_client} live-update streams "
                          "(limit sse_per_client); close one first", {"Retry-After": "5"})
        self.total += 1
        self.by_client[client] = self.by_client.get(client, 0) + 1
        return None

    def release(self, client: str) -> None:
        self.total -= 1
        left = self.by_client.get(client, 1) - 1
        if left:
            self.by_client[client] = left
        else:
            self.by_client.pop(client, None)


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response that gives its slot back however it ends."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], None]) -> None:
        super().__init__(content, media_type="text/event-stream",
                         headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except OSError:  # the reader went away
            pass
        finally:
            self._release()


# ----- the app -----
@dataclass(slots=True)
class Web:
    """What the handlers share."""

    source: WebSource
    """Where the data comes from."""
    limits: WebLimits
    """The bounds."""
    operator_token: str | None
    """The operator's secret (``None``: nobody signs in)."""
    hub: Hub
    """The ``/api/events`` fan-out."""
    slots: Slots
    """The live-update streams held."""
    store_changed: trio.Event = field(default_factory=trio.Event)
    """Set to make the store watcher look at once (a match finished)."""
    tables: tables.Room | None = None
    """The tables where people play the computer (``arena.web.tables``)."""
    views: dict[str, tuple[int, Any]] = field(default_factory=dict)
    """The spectator's view of each watched match, with the size of its spectator log when it
    was drawn: every watcher of a match shares one drawing per public event."""
    rated: RatedGames = field(default_factory=RatedGames)
    """The store's games rated so far: the standings and bot pages read only newer ones."""
    secure_cookies: bool = False
    """Whether the web is served over TLS: every cookie it sets (the operator's sign-in, a
    person's session) is then ``Secure`` — set them all with :meth:`cookie_flags`."""

    def cookie_flags(self) -> dict[str, Any]:
        """The flags of every cookie the web sets or deletes: HttpOnly, SameSite=Strict, the whole
        site, and Secure over TLS."""
        return {"httponly": True, "secure": self.secure_cookies, "samesite": "strict", "path": "/"}

    def view(self, table: referee.Table) -> Any:
        """The spectator's view of ``table`` now (drawn once per public event)."""
        size = table.spectator_log.size
        cached = self.views.get(table.match_id)
        if cached is None or cached[0] != size:
            cached = self.views[table.match_id] = (size, spectator_view(table))
        return cached[1]

    def operator(self, request: Request) -> bool:
        """Whether the request carries the operator's token (bearer header) or sign-in cookie."""
        token = self.operator_token
        if not token:
            return False
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and given:
            return hmac.compare_digest(hashlib.sha256(given.strip().encode()).digest(),
                                       hashlib.sha256(token.encode()).digest())
        return hmac.compare_digest(request.cookies.get(COOKIE, ""), cookie_value(token))

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` on a worker thread, with a read-only connection of its own."""
        def run() -> T:
            with reading(self.source) as conn:
                return fn(conn, *args)
        return await trio.to_thread.run_sync(run)

    def page(self, request: Request, title: str, body: str, *, page: str, status: int = 200,
             data: Mapping[str, str] | None = None) -> HTMLResponse:
        return HTMLResponse(pages.layout(title, body, page=page, operator=self.operator(request),
                                         source=self.source.title, data=data), status_code=status)


def _error(status: int, text: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status, headers=dict(headers or {}))


def _web(request: Request) -> Web:
    web: Web = request.app.state.web
    return web


def _int(request: Request, key: str, default: int | None) -> int | None:
    text = request.query_params.get(key)
    if text is None:
        return default
    if not text.isdigit():
        raise ValueError(f"{key}={text!r}: expected a whole number")
    return int(text)


async def _matches(request: Request) -> dict[str, Any]:
    web = _web(request)
    limit = min(_int(request, "limit", web.limits.recent_matches) or 1, web.limits.page_size)
    before = _int(request, "before", None)
    recent, next_before = await web.read(recent_matches, limit, before)
    return {"running": running(web.source.live), "recent": recent, "next_before": next_before}


# ----- pages -----
async def front(request: Request) -> Response:
    web = _web(request)
    recent, _ = await web.read(recent_matches, web.limits.recent_matches, None)
    return web.page(request, "Standings", pages.front_page(web.hub.standings, running(web.source.live), recent),
                    page="front")


async def matches_page(request: Request) -> Response:
    web = _web(request)
    try:
        found = await _matches(request)
    except ValueError as e:
        return web.page(request, "Matches", pages.message_body(str(e)), page="message", status=400)
    return web.page(request, "Matches", pages.matches_page(found["running"], found["recent"], found["next_before"]),
                    page="matches")


async def match_page(request: Request) -> Response:
    web = _web(request)
    match_id = request.path_params["match_id"]
    found = await web.read(finished_match, match_id, web.source.folder)
    if found is not None and "withheld" in found[0]:
        return web.page(request, "Match", pages.message_body(f"{match_id}: {found[0]['withheld']}"), page="message",
                        status=403)
    if found is not None:
        try:
            view = await trio.to_thread.run_sync(load, Path(found[1]))
        except (OSError, ReplayModelError) as e:
            return web.page(request, "Match", pages.message_body(f"the replay cannot be shown: {e}"), page="message",
                            status=404)
        return HTMLResponse(replay_html.replay_page(view, back_link="/", back_text="standings", assets=REPLAY_ASSETS))
    live = live_match(web.source.live, match_id)
    if live is None:
        return web.page(request, "Match", pages.message_body(f"no match {match_id!r} here"), page="message",
                        status=404)
    return web.page(request, f"Match {match_id}", pages.live_page(live), page="live", data={"match": match_id})


async def bot_html(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    operator = web.operator(request)
    info = await web.read(bot_page, name, web.source.folder, web.limits.bot_games, operator, web.rated)
    if info is None:
        return web.page(request, "Bot", pages.message_body(f"no bot {name!r} here"), page="message", status=404)
    return web.page(request, name, pages.bot_body(info, operator), page="bot")


async def signin(request: Request) -> Response:
    web = _web(request)
    if request.method in READ_METHODS:
        return web.page(request, "Operator sign-in", pages.signin_body(False), page="signin")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > SIGNIN_BODY_BYTES:
            return _error(413, f"a sign-in form holds at most {SIGNIN_BODY_BYTES} bytes")
    given = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
    token = web.operator_token
    if not token or not hmac.compare_digest(hashlib.sha256(given.encode()).digest(),
                                            hashlib.sha256(token.encode()).digest()):
        log.info("web_signin_refused", client=request.client.host if request.client else "")
        return web.page(request, "Operator sign-in", pages.signin_body(True), page="signin", status=403)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, cookie_value(token), **web.cookie_flags())
    return response


async def signout(request: Request) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, **_web(request).cookie_flags())
    return response


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    content = STATIC_FILES.get(name)
    if content is None:
        return _error(404, f"no static file {name!r}")
    kind = "text/css" if name.endswith(".css") else "text/javascript"
    return Response(content, media_type=f"{kind}; charset=utf-8", headers={"Cache-Control": "max-age=300"})


STATIC_FILES: dict[str, str] = {
    "web.js": (STATIC / "web.js").read_text(encoding="utf-8"),
    "web.css": (STATIC / "web.css").read_text(encoding="utf-8"),
    "replay.js": replay_html.JS,
    "replay.css": replay_html.PAGE_CSS,
    **tables.STATIC_FILES,
}
"""Everything ``/static/`` serves (read once)."""


# ----- the API -----
async def api_standings(request: Request) -> Response:
    return JSONResponse({"standings": _web(request).hub.standings})


async def api_matches(request: Request) -> Response:
    try:
        return JSONResponse(await _matches(request))
    except ValueError as e:
        return _error(400, str(e))


async def api_match(request: Request) -> Response:
    web = _web(request)
    match_id = request.path_params["match_id"]
    live = live_match(web.source.live, match_id)
    if live is not None and not live["over"]:
        return JSONResponse(live)
    found = await web.read(finished_match, match_id, web.source.folder)
    if found is not None:
        return JSONResponse({**found[0], "replay": None if "withheld" in found[0] else pages.match_href(match_id)})
    if live is not None:
        return JSONResponse(live)
    return _error(404, f"no match {match_id!r} here")


async def api_bot(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    info = await web.read(bot_page, name, web.source.folder, web.limits.bot_games, web.operator(request), web.rated)
    return JSONResponse(info) if info is not None else _error(404, f"no bot {name!r} here")


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


async def api_events(request: Request) -> Response:
    web = _web(request)
    client = _client(request)
    refused = web.slots.refusal(client)
    if refused is not None:
        return refused
    hub = web.hub
    sub = hub.subscribe()
    missed = hub.since(request.headers.get("last-event-id"))

    async def stream() -> AsyncIterator[str]:
        try:
            if missed is None:
                yield sse("standings", {"standings": hub.standings}, hub.event_id(hub.sequence))
            else:
                for text in missed:
                    yield text
            while True:
                with trio.move_on_after(web.limits.sse_keepalive_s):
                    try:
                        text = await sub.receive.receive()
                    except trio.EndOfChannel:  # dropped for not reading
                        return
                    yield text
                    continue
                yield ": keep-alive\n\n"
        finally:
            hub.subscribers.discard(sub)

    return EventStream(stream(), lambda: web.slots.release(client))


async def api_match_events(request: Request) -> Response:
    web = _web(request)
    match_id = request.path_params["match_id"]
    ref = web.source.live
    table = ref.tables.get(match_id) if ref is not None else None
    if table is None:
        return _error(404, f"no match {match_id!r} is being played here")
    client = _client(request)
    refused = web.slots.refusal(client)
    if refused is not None:
        return refused
    return EventStream(_match_stream(web, table), lambda: web.slots.release(client))


async def _match_stream(web: Web, table: referee.Table) -> AsyncIterator[str]:
    """The spectator's view after each public event of the match (coalesced: a reader that is
    slow gets the view as it is when it is ready, never a queue), then ``end``."""
    changed = [trio.Event()]

    def sink(_event: object) -> None:
        changed[0].set()

    table.spectators.append(sink)
    sent: Any = None
    n = 0
    try:
        while True:
            changed[0] = trio.Event()
            match = table.match
            view = web.view(table)
            if view != sent:
                n += 1
                position = {"game": match.game_number, "deal": match.deal_number} if match is not None else None
                yield sse("view", {"match_id": table.match_id, "state": table.state, "over": table.over,
                                   "players": list(table.spec.players), "position": position, "view": view}, str(n))
                sent = view
            if table.over:
                yield sse("end", {"match_id": table.match_id, "state": table.state}, str(n + 1))
                return
            with trio.move_on_after(web.limits.sse_keepalive_s) as waited:
                await changed[0].wait()
            if waited.cancelled_caught:
                yield ": keep-alive\n\n"
    finally:
        if sink in table.spectators:
            table.spectators.remove(sink)
        tables = web.source.live.tables if web.source.live is not None else {}
        for match_id in [m for m in web.views if m not in tables or tables[m].over]:
            del web.views[match_id]  # (the matches over, or forgotten: nobody streams them any more)


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


# ----- the routes and their OpenAPI document -----
@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route of the web: its address, handler and what the OpenAPI document says of it."""

    path: str
    """The address, Starlette's form (``{name:path}``: a bot's name may hold a ``/``)."""
    handler: Callable[[Request], Awaitable[Response]]
    """The handler."""
    summary: str
    """What it serves."""
    media: str = "application/json"
    """Its response's media type."""
    methods: tuple[str, ...] = ("GET",)
    """Its methods (HEAD comes with GET)."""


ENDPOINTS = (
    Endpoint("/", front, "the standings, the running and the recent matches (updated live)", "text/html"),
    Endpoint("/matches", matches_page, "running matches and a page of finished ones", "text/html"),
    Endpoint("/matches/{match_id}", match_page, "a running match's live spectator view, a finished one's replay",
             "text/html"),
    Endpoint("/bots/{name:path}", bot_html, "a bot's games, rating over time and faults", "text/html"),
    Endpoint("/signin", signin, "the operator's sign-in form (POST: the token; sets the cookie)", "text/html",
             ("GET", "POST")),
    Endpoint("/signout", signout, "the operator signs out (POST)", "text/html", ("POST",)),
    Endpoint(tables.PREFIX, tables.new_table, "play the computer: the choices (POST: open a table)", "text/html",
             ("GET", "POST")),
    Endpoint(tables.PREFIX + "/t/{secret}", tables.table_page, "a person's seat at a table", "text/html"),
    Endpoint(tables.PREFIX + "/t/{secret}/events", tables.table_events, "the seat's messages with its view",
             "text/event-stream"),
    Endpoint(tables.PREFIX + "/t/{secret}/move", tables.table_move, "the person's move (POST)", methods=("POST",)),
    Endpoint(tables.PREFIX + "/t/{secret}/replay", tables.table_replay, "a finished table's replay", "text/html"),
    Endpoint("/static/{name}", static, "the pages' script and style sheets", "text/javascript"),
    Endpoint("/api/standings", api_standings, "the standings"),
    Endpoint("/api/matches", api_matches, "running matches and a page of finished ones (limit, before)"),
    Endpoint("/api/matches/{match_id}", api_match, "one match: the spectator's view while it runs, its result after"),
    Endpoint("/api/matches/{match_id}/events", api_match_events, "a running match's spectator views as they change",
             "text/event-stream"),
    Endpoint("/api/bots/{name:path}", api_bot, "a bot's games, rating history and faults (details: operator only)"),
    Endpoint("/api/events", api_events, "standings and match updates (Last-Event-ID resumes)", "text/event-stream"),
    Endpoint("/api/openapi.json", openapi, "this document"),
)
"""Every route of the web."""


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route."""
    paths: dict[str, Any] = {}
    for e in ENDPOINTS:
        path = openapi_path(e.path)
        params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                  for p in _path_params(path)]
        if e.path == "/api/matches":
            params += [{"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                       {"name": "before", "in": "query", "schema": {"type": "integer"}}]
        responses = {"200": {"description": e.summary, "content": {e.media: {}}},
                     "404": {"description": "not found"}}
        if e.media == "text/event-stream":
            responses["429"] = {"description": "this client holds its live-update streams (limit sse_per_client)"}
            responses["503"] = {"description": "the server holds its live-update streams (limit sse_connections)"}
        paths[path] = {m.lower(): {"summary": e.summary, "parameters": params, "responses": responses}
                         for m in e.methods}
    return {"openapi": "3.1.0",
            "info": {"title": "Gin Arena live web", "version": "1",
                     "description": "Read-only: every path answers GET and HEAD (the operator's sign-in and the "
                                    "tables' POSTs aside: a table's seat link is its credential)."},
            "paths": paths}


def openapi_path(path: str) -> str:
    """A route's address as OpenAPI writes it (``{name}``, without Starlette's converter)."""
    return re.sub(r":\w+}", "}", path)


def _path_params(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


class Guard:
    """The doors of every response: the security headers (with ``extra``: over TLS, HSTS), and
    405 for anything but a read (the operator's sign-in and sign-out aside)."""

    def __init__(self, app: ASGIApp, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        self.app = app
        self.headers = (*SECURITY_HEADERS, *extra)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers]
            await send(message)

        if scope["method"] not in READ_METHODS and scope["path"] not in DOORS and not _table_door(scope["path"]):
            refused = _error(405, f"{scope['method']} is not allowed here: the web is read-only",
                             {"Allow": "GET, HEAD"})
            await refused(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


def _table_door(path: str) -> bool:
    return path == tables.PREFIX or path.startswith(tables.PREFIX + "/")


def make_app(web: Web) -> Starlette:
    """The Starlette app of the web."""
    app = Starlette(routes=[Route(e.path, e.handler, methods=list(e.methods)) for e in ENDPOINTS])
    app.state.web = web
    app.add_middleware(Guard, extra=(hsts(web.limits),) if web.secure_cookies else ())
    return app


# ----- the watchers -----
async def watch_referee(web: Web, ref: referee.Referee) -> None:
    """Publish each match's start and end as the referee announces them (and make the store
    watcher look at once when one finishes)."""
    while True:
        try:
            async with ref.open_match_events() as events:
                async for event in events:
                    web.hub.publish("match", {
                        "kind": event.kind, "match_id": event.match_id, "game": event.game,
                        "players": list(event.players), "state": event.state, "termination": event.termination,
                        "places": list(event.places), "points": list(event.points)})
                    if event.kind == "finished":
                        web.store_changed.set()
            return
        except referee.MatchEventsDropped as e:
            log.warning("web_events_dropped", reason=str(e))


async def watch_store(web: Web) -> None:
    """Publish the standings whenever they change: looked up after a match finishes, and every
    ``store_check_s`` (games recorded by another process)."""
    conn = web.source.read()
    version: int | None = None
    try:
        while True:
            now = await trio.to_thread.run_sync(lambda: int(conn.execute("PRAGMA data_version").fetchone()[0]))
            if now != version:
                version = now
                rows = await web.read(standings, web.rated)
                if rows != web.hub.standings:
                    web.hub.standings = rows
                    web.hub.publish("standings", {"standings": rows})
            with trio.move_on_after(web.limits.store_check_s):
                await web.store_changed.wait()
            web.store_changed = trio.Event()
    finally:
        conn.close()


async def serve_web(listen: str, source: WebSource, *, limits: WebLimits, operator_token: str | None,
                    tls: WebTLS | None = None, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the live web on ``listen`` (``HOST:PORT``; port 0: a free one) until cancelled, in
    the caller's trio run, over TLS with ``tls`` (only: clear HTTP to that port fails the
    handshake); ``task_status.started`` gets its address (``http://HOST:PORT`` or ``https://…``)."""
    web = Web(source, limits, operator_token, Hub(limits), Slots(limits), secure_cookies=tls is not None)
    web.tables = tables.Room(source.live, limits, web.slots, EventStream)
    files: dict[str, Any] = {"certfile": tls.cert, "keyfile": tls.key} if tls is not None else {}
    config = Config.from_mapping({"bind": [listen], "accesslog": None, "errorlog": None, "graceful_timeout": 0.5,
                                  **files})
    async with trio.open_nursery() as nursery:
        web.hub.standings = await web.read(standings, web.rated)
        nursery.start_soon(watch_store, web)
        await nursery.start(web.tables.run)
        if source.live is not None:
            nursery.start_soon(watch_referee, web, source.live)
        binds = await nursery.start(_serve, make_app(web), config)
        address = binds[0]
        log.info("web_listening", address=address)
        task_status.started(address)


async def _serve(app: Starlette, config: Config, task_status: trio.TaskStatus[list[str]]) -> None:
    await serve(app, config, shutdown_trigger=_never, task_status=task_status)  # type: ignore[arg-type]


async def _never() -> None:
    await trio.sleep(math.inf)
