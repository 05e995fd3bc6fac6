"""The live web's server: a Starlette app on Hypercorn's trio worker, in the caller's trio run
(beside the referee of ``arena serve`` or a tournament's embedded one), until cancelled.

Doors: the pages and the API are read-only (GET and HEAD; the doors' and the tables' POSTs aside,
anything else is 405), and no request but a read is taken from another site (:func:`cross_site`,
on every route); the operator is the one who shows the operator token (as
``Authorization: Bearer`` or through the sign-in form, which starts a web session: an HttpOnly,
SameSite=Strict cookie holding a random token the web keeps until sign-out or
``operator_session_hours``, never the operator token, and Secure over TLS); every response carries a
strict Content-Security-Policy (no inline script or style), ``X-Content-Type-Options: nosniff``
and a ``Referrer-Policy``, and over TLS ``Strict-Transport-Security``; live-update streams are
bounded (:class:`~arena.web.limits.WebLimits`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote

import structlog
import trio
from hypercorn.config import Config
from hypercorn.middleware import ProxyFixMiddleware
from starlette.applications import Starlette
from starlette.requests import Request, cookie_parser
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import referee
import referee.lowlevel
from arena.replays import html as replay_html
from arena.replays.model import ReplayModelError, load
from arena.results.standings import RatedGames
from arena.store import resolve_replay
from arena.web import i18n, pages, table_views, tables
from arena.web.accounts import (
    NAME_CHARS,
    PASSWORD_CHARS,
    SESSION_COOKIE,
    TRIES_BY_ADDRESS,
    WINDOW_S,
    AccountError,
    Accounts,
    Person,
    Window,
    digest,
    standing_row,
)
from arena.web.bodies import BodyLimits
from arena.web.data import (
    WebSource,
    bot_page,
    finished_match,
    live_match,
    reading,
    recent_matches,
    running,
    spectator_header,
    spectator_view,
    standings,
)
from arena.web.hashing import RETRY_AFTER_S, DoorSlots, HashingRefused, Places
from arena.web.limits import WebLimits
from arena.web.listen import Connections, serve_bounded
from arena.web.pages import Page, ladder, message, people, rules
from arena.web.relay import Forwarded, LiveCopy, Relay, forward
from arena.web.views import StoreViews

log = structlog.get_logger("arena")
T = TypeVar("T")

COOKIE = "gin_arena_operator"
"""The operator's sign-in cookie: a random session token of the web's (:meth:`Web.operator_session`),
ended by sign-out or after ``operator_session_hours``."""
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
DOORS = frozenset({"/signin", "/signout", "/signup"})
"""The addresses that take a POST besides the tables' (sign-up, sign-in and sign-out)."""


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
    """The spectator's view of each watched or asked-for match, with the size of its spectator
    log when it was drawn: every watcher of a match shares one drawing per public event (at most
    ``cached_views`` kept)."""
    rated: RatedGames = field(default_factory=RatedGames)
    """The store's games rated so far: the standings and bot pages read only newer ones."""
    accounts: Accounts | None = None
    """People's accounts and games (``None``: the web has no writable store, e.g. a tournament's)."""
    secure_cookies: bool = False
    """Whether the site is served over TLS (by this server, or by a proxy in front:
    ``--web-behind-tls``): every cookie it sets is then ``Secure`` — set them all with
    :meth:`cookie_flags`."""
    kept: StoreViews | None = None
    """The store reads kept between requests (:meth:`read_kept`; made from ``limits`` if not given)."""
    relay: Relay | None = None
    """In the web's own process (:mod:`arena.web.process`): the live referee as the parent pushes
    it, and the parent's web that answers what only it can (``None``: the referee, if any, is in
    this process)."""
    operator_sessions: dict[str, float] = field(default_factory=dict)
    """The operator's web sessions: each sign-in cookie's SHA-256 digest and when it ends (epoch
    seconds): sign-out ends one, ``operator_session_hours`` each; at most ``operator_sessions``
    (the oldest ended first)."""
    operator_tries: Window | None = None
    """The operator's sign-in form's tries by client address (``operator_tries_per_minute``; made
    from ``limits`` if not given)."""
    clock: Callable[[], float] = time.time
    """The time (epoch seconds) the operator's sessions are counted in."""

    def cookie_flags(self, request: Request, samesite: str = "strict") -> dict[str, Any]:
        """The flags of every cookie the web sets or deletes (the operator's sign-in, a person's
        session): HttpOnly, the whole site, ``samesite``, and Secure over TLS (this request's
        or the site's)."""
        secure = self.secure_cookies or request.url.scheme == "https"
        return {"httponly": True, "secure": secure, "samesite": samesite, "path": "/"}

    def __post_init__(self) -> None:
        if self.kept is None:
            self.kept = StoreViews(self.limits)
        if self.operator_tries is None:
            self.operator_tries = Window(self.limits.operator_tries_per_minute, WINDOW_S, "operator_tries_per_minute")

    def running(self) -> list[dict[str, Any]]:
        """The matches not over yet (the referee's, or as the parent last pushed them)."""
        return self.relay.running if self.relay is not None else running(self.source.live)

    def relayed(self, match_id: str) -> dict[str, Any] | None:
        """In the web's own process: the running list's entry of a match the parent is playing
        (its live view comes from the parent: :class:`~arena.web.relay.LiveCopy`), else ``None``."""
        if self.relay is None or match_id not in self.relay.running_ids:
            return None
        return next((m for m in self.relay.running if m["match_id"] == match_id), None)

    def view(self, table: referee.lowlevel.HeldMatch) -> Any:
        """The spectator's view of ``table`` now (drawn once per public event)."""
        size = table.spectator_log.size
        cached = self.views.get(table.match_id)
        if cached is None or cached[0] != size:
            cached = self.views[table.match_id] = (size, spectator_view(table))
            if len(self.views) > self.limits.cached_views:
                self.forget_views()
        return cached[1]

    def forget_views(self) -> None:
        """Drop the drawings of matches over or forgotten; if that is not enough, the oldest."""
        live = self.source.live
        tables = live.tables if live is not None else {}
        for match_id in [m for m in self.views if m not in tables or tables[m].over]:
            del self.views[match_id]
        while len(self.views) > self.limits.cached_views:
            del self.views[next(iter(self.views))]

    def operator(self, request: Request) -> bool:
        """Whether the request carries the operator's token (bearer header) or sign-in cookie."""
        token = self.operator_token
        if not token:
            return False
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and given:
            return hmac.compare_digest(hashlib.sha256(given.strip().encode()).digest(),
                                       hashlib.sha256(token.encode()).digest())
        cookie = request.cookies.get(COOKIE)
        ends = self.operator_sessions.get(digest(cookie)) if cookie else None
        return ends is not None and ends > self.clock()

    def operator_session(self) -> str:
        """A new operator's web session (the operator token was shown): its token, the cookie's
        value (kept here only as its digest, ended by :meth:`end_operator_session`)."""
        now = self.clock()
        self.operator_sessions = {k: ends for k, ends in self.operator_sessions.items() if ends > now}
        while len(self.operator_sessions) >= self.limits.operator_sessions:
            del self.operator_sessions[next(iter(self.operator_sessions))]
        token = secrets.token_urlsafe(32)
        self.operator_sessions[digest(token)] = now + self.limits.operator_session_hours * 3600.0
        return token

    def end_operator_session(self, request: Request) -> None:
        """End the operator's session the request's cookie holds, if any."""
        cookie = request.cookies.get(COOKIE)
        if cookie:
            self.operator_sessions.pop(digest(cookie), None)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` on a worker thread, with a read-only connection of its own."""
        def run() -> T:
            with reading(self.source) as conn:
                return fn(conn, *args)
        return await trio.to_thread.run_sync(run)

    async def read_kept(self, key: Hashable, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read`, served from the read kept under ``key`` (what it depends on) while it is
        fresh enough (``arena.web.views``)."""
        assert self.kept is not None
        return await self.kept.get(key, lambda: self.read(fn, *args))

    async def bot_info(self, name: str, operator: bool) -> dict[str, Any] | None:
        """A bot's page (:func:`~arena.web.data.bot_page`), kept between requests."""
        return await self.read_kept(("bot", name, operator), bot_page, name, self.source.folder,
                                    self.limits.bot_games, operator, self.rated)

    def who(self, request: Request) -> tuple[str | None, bool]:
        """The signed-in person's name (``None``: nobody) and whether the request is the operator's."""
        person = self.accounts.signed_in(request) if self.accounts is not None else None
        return (person.name if person is not None else None), self.operator(request)

    def title(self) -> str:
        """What the pages are about (the corner of every page)."""
        return self.source.title

    def page(self, request: Request, drawn: Page, *, status: int = 200) -> HTMLResponse:
        """A page in the request's language (its texts already in it: :func:`_lang`), from its
        template (:func:`arena.web.pages.draw`)."""
        return pages.draw(request, drawn, status=status)


def _lang(request: Request) -> i18n.Lang:
    """The language to write the request's page in (``?lang=``, the ``lang`` cookie, ``Accept-Language``)."""
    return i18n.of_request(request).lang


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
    recent, next_before = await web.read_kept(("recent", limit, before), recent_matches, limit, before)
    return {"running": web.running(), "recent": recent, "next_before": next_before}


# ----- pages -----
async def front(request: Request) -> Response:
    web = _web(request)
    tr = _lang(request)
    limit = web.limits.recent_matches
    recent, _ = await web.read_kept(("recent", limit, None), recent_matches, limit, None)
    return web.page(request, ladder.home(tr, web.hub.standings, web.running(), recent))


async def standings_page(request: Request) -> Response:
    web = _web(request)
    return web.page(request, ladder.standings(_lang(request), web.hub.standings))


async def matches_page(request: Request) -> Response:
    web = _web(request)
    tr = _lang(request)
    try:
        found = await _matches(request)
    except ValueError as e:
        return web.page(request, message(tr._("Matches"), str(e)), status=400)
    return web.page(request, ladder.matches(tr, found["running"], found["recent"], found["next_before"]))


async def match_page(request: Request) -> Response:
    web = _web(request)
    match_id = request.path_params["match_id"]
    tr = _lang(request)
    if web.relay is not None and (entry := web.relayed(match_id)) is not None:
        web.relay.copy(match_id)  # (its stream comes next: the copy's subscription is under way)
        return web.page(request, ladder.live(tr, entry))
    found = await web.read(finished_match, match_id, web.source.folder)
    if found is not None and "withheld" in found[0]:
        return web.page(request, message(tr._("Match"), f"{match_id}: {found[0]['withheld']}"), status=403)
    if found is not None:
        try:
            view = await trio.to_thread.run_sync(load, Path(found[1]))
        except (OSError, ReplayModelError) as e:
            return _unshown(request, web, e)
        return table_views.replay_response(request, view, "/", i18n.N_("standings"))
    people = await _people_replay(request, web, match_id)
    if people is not None:
        return people
    if web.relay is not None:  # (a match started since the last push, or none: the parent knows)
        return ToParent(web.relay.parent)
    live = live_match(web.source.live, match_id, web.view)
    if live is None:
        return web.page(request, message(tr._("Match"), tr._("no match {id} here", id=repr(match_id))), status=404)
    return web.page(request, ladder.live(tr, live))


def _unshown(request: Request, web: Web, e: Exception) -> Response:
    """The 404 page of a stored replay that cannot be read."""
    tr = _lang(request)
    return web.page(request, message(tr._("Match"), tr._("the replay cannot be shown: {why}", why=e)), status=404)


async def bot_html(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    operator = web.operator(request)
    tr = _lang(request)
    info = await web.bot_info(name, operator)
    if info is None:
        return web.page(request, message(tr._("Bot"), tr._("no bot {name} here", name=repr(name))), status=404)
    return web.page(request, ladder.bot(tr, name, info, operator))


async def _form(request: Request) -> dict[str, str] | Response:
    """A POSTed form's fields (first value of each), or the refusal: 413 past ``SIGNIN_BODY_BYTES``
    (a form from another site never gets here: :class:`Guard`)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > SIGNIN_BODY_BYTES:
            return _error(413, f"a sign-in form holds at most {SIGNIN_BODY_BYTES} bytes")
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


async def signin(request: Request) -> Response:
    """GET: the forms. POST ``name`` and ``password``: a person signs in (their session cookie);
    POST ``token``: the operator (the operator's cookie)."""
    web = _web(request)
    tr = _lang(request)
    if request.method in READ_METHODS:
        return web.page(request, people.signin(tr, False))
    form = await _form(request)
    if isinstance(form, Response):
        return form
    if "token" not in form:
        return await _person_door(request, web, form, signing_up=False)
    tried = _operator_tries(web, request)
    if tried is not None:
        page = web.page(request, people.signin(tr, False, tried.say(tr)), status=429)
        page.headers["Retry-After"] = str(tried.retry_after)
        return page
    given = form["token"].strip()
    token = web.operator_token
    if not token or not hmac.compare_digest(hashlib.sha256(given.encode()).digest(),
                                            hashlib.sha256(token.encode()).digest()):
        log.info("web_signin_refused", client=_client(request))
        return web.page(request, people.signin(tr, True), status=403)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, web.operator_session(), max_age=int(web.limits.operator_session_hours * 3600),
                        **web.cookie_flags(request))
    return response


def _operator_tries(web: Web, request: Request) -> AccountError | None:
    """Count one try of the operator's form from the request's address: the refusal (429) past
    ``operator_tries_per_minute``, or ``None``."""
    assert web.operator_tries is not None
    client = _client(request)
    wait = web.operator_tries.take(client, time.monotonic())
    if wait is None:
        return None
    log.info("web_signin_refused", client=client, limit=web.operator_tries.name)
    return AccountError(429, TRIES_BY_ADDRESS, wait, count=web.operator_tries.limit, client=client,
                        limit=web.operator_tries.name, wait=wait)


async def signup(request: Request) -> Response:
    """GET: the form; POST ``name`` and ``password``: make an account and sign it in."""
    web = _web(request)
    tr = _lang(request)
    if request.method in READ_METHODS:
        if web.accounts is None:
            return web.page(request, message(tr._("Sign up"), tr._(NO_ACCOUNTS)), status=503)
        return web.page(request, _signup_page(tr))
    form = await _form(request)
    if isinstance(form, Response):
        return form
    return await _person_door(request, web, form, signing_up=True)


NO_ACCOUNTS = i18n.N_("people's accounts are off here: this web has no store it may write (only arena serve's "
                     "web keeps accounts)")
"""Why sign-up and sign-in answer 503 on a web without a writable store."""


def _signup_page(tr: i18n.Lang, problem: str = "", name: str = "") -> Page:
    return people.signup(tr, problem, name, names=NAME_CHARS, passwords=PASSWORD_CHARS)


async def _person_door(request: Request, web: Web, form: Mapping[str, str], *, signing_up: bool) -> Response:
    """A person's sign-up or sign-in: the session cookie and back to the front page, or the form
    again with why not (its status: 400, 403, 409, 429 with ``Retry-After``, 503)."""
    name, password = form.get("name", ""), form.get("password", "")
    tr = _lang(request)

    def again(status: int, problem: str, headers: Mapping[str, str] | None = None) -> Response:
        drawn = _signup_page(tr, problem, name) if signing_up else people.signin(tr, False, problem, name)
        response = web.page(request, drawn, status=status)
        response.headers.update(headers or {})
        return response

    accounts = web.accounts
    if accounts is None:
        return again(503, tr._(NO_ACCOUNTS))
    try:
        if signing_up:
            person, token = await accounts.sign_up(name, password, _client(request))
        else:
            person, token = await accounts.sign_in(name, password, _client(request))
    except AccountError as e:
        log.info("web_person_refused", door="sign up" if signing_up else "sign in", status=e.status,
                 client=_client(request))
        return again(e.status, e.say(tr), {"Retry-After": str(e.retry_after)} if e.retry_after else None)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(SESSION_COOKIE, token, max_age=int(web.limits.person_session_days * 86400),
                        **web.cookie_flags(request, "lax"))
    log.info("web_person_signed_in", person=person.id)
    return response


async def signout(request: Request) -> Response:
    """Sign out (POST): the person's session ends in the store too; the operator's cookie goes."""
    web = _web(request)
    form = await _form(request)
    if isinstance(form, Response):
        return form
    response = RedirectResponse("/", status_code=303)
    if web.accounts is not None:
        await web.accounts.sign_out(request)
        response.delete_cookie(SESSION_COOKIE, **web.cookie_flags(request, "lax"))
    web.end_operator_session(request)
    response.delete_cookie(COOKIE, **web.cookie_flags(request))
    return response


async def _ask(web: Web, call: Callable[[Accounts], T]) -> T | None:
    """``call(accounts)`` on a worker thread (``None``: this web keeps no accounts)."""
    accounts = web.accounts
    return None if accounts is None else await trio.to_thread.run_sync(call, accounts)


async def _people_replay(request: Request, web: Web, match_id: str) -> Response | None:
    """A people's game's replay page (``None``: no such people's game)."""
    stored = await _ask(web, lambda a: a.replay_path(match_id))
    if stored is None:
        return None
    try:
        view = await trio.to_thread.run_sync(load, Path(resolve_replay(stored, web.source.folder)))
    except (OSError, ReplayModelError) as e:
        return _unshown(request, web, e)
    return table_views.replay_response(request, view, "/people", i18n.N_("people"))


async def _people_standings(web: Web) -> list[dict[str, Any]] | None:
    """The people's standings: those who played a people's game (an account alone is not shown:
    the site does not tell which names have one)."""
    found = await _ask(web, Accounts.standings)
    return None if found is None else [standing_row(i + 1, s) for i, s in enumerate(x for x in found if x.games)]


async def _person(web: Web, name: str, viewer: Person | None) -> dict[str, Any] | None:
    """A person's standing and recent people's games (``None``: nobody of that name, or a person
    who has played no people's game and is not the ``viewer``: answered alike, so that the names
    with an account do not enumerate, as sign-in does not tell them)."""
    person = await _ask(web, lambda a: a.person(name))
    if person is None:
        return None
    games = await _ask(web, lambda a: a.person_games(person, web.limits.bot_games)) or []
    if not games and person != viewer:
        return None
    rows = await _people_standings(web) or []
    standing = next((r for r in rows if r["name"] == person.name), None)
    return {"name": person.name, "standing": standing,
            "games": [{**g, "replay": pages.match_href(g["match_id"])} for g in games]}


def _viewer(web: Web, request: Request) -> Person | None:
    """The person the request's session says it is (``None``: nobody, or no accounts here)."""
    return web.accounts.signed_in(request) if web.accounts is not None else None


async def people_page(request: Request) -> Response:
    web = _web(request)
    tr = _lang(request)
    rows = await _people_standings(web)
    if rows is None:
        return web.page(request, message(tr._("People"), tr._(NO_ACCOUNTS)), status=503)
    return web.page(request, people.people(tr, rows))


async def person_page(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    info = await _person(web, name, _viewer(web, request))
    tr = _lang(request)
    if info is None:
        return web.page(request, message(tr._("Person"), tr._("nobody called {name} here", name=repr(name))),
                        status=404 if web.accounts is not None else 503)
    return web.page(request, people.person(tr, info["name"], info["standing"], info["games"]))


async def api_people(request: Request) -> Response:
    rows = await _people_standings(_web(request))
    return JSONResponse({"people": rows}) if rows is not None else _error(503, NO_ACCOUNTS)


async def api_person(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    info = await _person(web, name, _viewer(web, request))
    if info is None:
        return _error(404, f"nobody called {name!r} here") if web.accounts is not None else _error(503, NO_ACCOUNTS)
    return JSONResponse(info)


async def rules_index(request: Request) -> Response:
    return _web(request).page(request, rules.index(_lang(request)))


async def rules_page(request: Request) -> Response:
    web = _web(request)
    tr = _lang(request)
    game = request.path_params["game"]
    found = rules.rules(game, tr.code)
    if found is None:
        return web.page(request, message(tr._("Rules"), tr._("no rules page for {game} here", game=repr(game))),
                        status=404)
    return web.page(request, rules.page(tr, found))


MEDIA = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
"""What ``/static/`` serves, by the file's ending."""


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    content = STATIC_FILES.get(name)
    if content is None:
        return _error(404, f"no static file {name!r}")
    return Response(content, media_type=MEDIA[Path(name).suffix], headers={"Cache-Control": "max-age=300"})


async def favicon(request: Request) -> Response:
    """The icon a browser asks for at ``/favicon.ico`` (the pages name ``/static/favicon.svg``)."""
    return Response(STATIC_FILES["favicon.svg"], media_type=MEDIA[".svg"], headers={"Cache-Control": "max-age=3600"})


STATIC_FILES: dict[str, str] = {
    "web.js": (STATIC / "web.js").read_text(encoding="utf-8"),
    "i18n.js": (STATIC / "i18n.js").read_text(encoding="utf-8"),
    "web.css": (STATIC / "web.css").read_text(encoding="utf-8"),
    "site.css": (STATIC / "site.css").read_text(encoding="utf-8"),
    "favicon.svg": (STATIC / "favicon.svg").read_text(encoding="utf-8"),
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
    if web.relay is not None and web.relayed(match_id) is not None:
        copy = await web.relay.live(match_id)
        if copy is None:
            return ToParent(web.relay.parent)
        if copy.ended is None and not (copy.data or {}).get("over"):
            return JSONResponse(copy.answer())
        # (over: the finished record, as below)
    live = live_match(web.source.live, match_id, web.view)
    if live is not None and not live["over"]:
        return JSONResponse(live)
    found = await web.read_kept(("finished", match_id), finished_match, match_id, web.source.folder)
    if found is not None:
        return JSONResponse({**found[0], "replay": None if "withheld" in found[0] else pages.match_href(match_id)})
    if web.relay is not None:  # (a match started since the last push, or none: the parent knows)
        return ToParent(web.relay.parent)
    if live is not None:
        return JSONResponse(live)
    return _error(404, f"no match {match_id!r} here")


async def api_bot(request: Request) -> Response:
    web = _web(request)
    name = request.path_params["name"]
    info = await web.bot_info(name, web.operator(request))
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
    if web.relay is not None:
        return await _relayed_match_events(request, web, web.relay, match_id)
    ref = web.source.live
    table = ref.tables.get(match_id) if ref is not None else None
    if table is None:
        return _error(404, f"no match {match_id!r} is being played here")
    client = _client(request)
    refused = web.slots.refusal(client)
    if refused is not None:
        return refused
    return EventStream(_match_stream(web, table), lambda: web.slots.release(client))


_UNSENT = object()
"""No view sent yet (the first is sent even if it is ``None``: before the first deal)."""


async def _relayed_match_events(request: Request, web: Web, relay: Relay, match_id: str) -> Response:
    """In the web's own process: a running match's stream fed from its live copy (one
    subscription to the parent for all its watchers here); else, or if no view came in
    ``live_first_view_s``, the parent's own stream."""
    if web.relayed(match_id) is None:
        return ToParent(relay.parent)
    client = _client(request)
    refused = web.slots.refusal(client)
    if refused is not None:
        return refused
    copy = await relay.live(match_id)
    if copy is None:
        web.slots.release(client)
        return ToParent(relay.parent)
    return EventStream(_copy_stream(web, copy), lambda: web.slots.release(client))


async def _copy_stream(web: Web, copy: LiveCopy) -> AsyncIterator[str]:
    """A match's stream from its live copy, as :func:`_match_stream` sends it: the newest view
    (a slow reader skips those it missed, never a queue), then ``end``."""
    copy.watchers += 1
    sent = ""
    n = 0
    try:
        while True:
            changed = copy.changed
            if copy.text and copy.text is not sent:
                n += 1
                yield f"id: {n}\nevent: view\ndata: {copy.text}\n\n"
                sent = copy.text
            if copy.ended is not None:
                yield f"id: {n + 1}\nevent: end\ndata: {copy.ended}\n\n"
                return
            if copy.closed:  # (the parent gone: the reader's reconnection finds what is there then)
                return
            with trio.move_on_after(web.limits.sse_keepalive_s) as waited:
                await changed.wait()
            if waited.cancelled_caught:
                yield ": keep-alive\n\n"
    finally:
        copy.watchers -= 1
        copy.asked = trio.current_time()


async def _match_stream(web: Web, table: referee.lowlevel.HeldMatch) -> AsyncIterator[str]:
    """The spectator's view after each public event of the match (coalesced: a reader that is
    slow gets the view as it is when it is ready, never a queue), then ``end``; the first view
    sent once the match's header is written carries it (``header``)."""
    changed = [trio.Event()]

    def sink(_event: object) -> None:
        changed[0].set()

    table.spectators.append(sink)
    sent: Any = _UNSENT
    header: dict[str, Any] | None = None
    n = 0
    try:
        while True:
            changed[0] = trio.Event()
            match = table.match
            view = web.view(table)
            new_header = spectator_header(table) if header is None else None  # (written once, then fixed)
            if view != sent or new_header is not None:
                n += 1
                position = {"game": match.game_number, "deal": match.deal_number} if match is not None else None
                data = {"match_id": table.match_id, "game": table.spec.game, "state": table.state, "over": table.over,
                        "players": list(table.spec.players), "position": position, "view": view}
                if new_header is not None:  # (the first view after the header is written carries it)
                    data["header"] = header = new_header
                yield sse("view", data, str(n))
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
        web.forget_views()  # (the matches over, or forgotten: nobody streams them any more)


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
    Endpoint("/", front, "the home page: play the computer, the tables, the rules; the standings, the running and "
             "the recent matches (updated live)", "text/html"),
    Endpoint("/standings", standings_page, "the bots' standings (updated live)", "text/html"),
    Endpoint("/rules", rules_index, "the installed games' rules and help pages", "text/html"),
    Endpoint("/rules/{game}", rules_page, "a game's rules, tips and questions answered (the game's own text)",
             "text/html"),
    Endpoint("/favicon.ico", favicon, "the site's icon (SVG)", "image/svg+xml"),
    Endpoint("/matches", matches_page, "running matches and a page of finished ones", "text/html"),
    Endpoint("/matches/{match_id}", match_page, "a running match's live spectator view, a finished one's replay",
             "text/html"),
    Endpoint("/bots/{name:path}", bot_html, "a bot's games, rating over time and faults", "text/html"),
    Endpoint("/signup", signup, "a person's sign-up form (POST: name and password; signs in)", "text/html",
             ("GET", "POST")),
    Endpoint("/signin", signin, "the sign-in forms (POST: a person's name and password, or the operator's token; "
             "sets the session cookie)", "text/html", ("GET", "POST")),
    Endpoint("/signout", signout, "sign out, the session ended in the store too (POST)", "text/html", ("POST",)),
    Endpoint("/people", people_page, "the people's standings (people's games only, apart from the bots')",
             "text/html"),
    Endpoint("/people/{name:path}", person_page, "a person's rating and games, each with its replay", "text/html"),
    Endpoint(tables.PREFIX, table_views.new_table, "play the computer: the choices (POST: open a table)", "text/html",
             ("GET", "POST")),
    Endpoint(tables.PREFIX + "/t/{secret}", table_views.table_page, "a person's seat at a table", "text/html"),
    Endpoint(tables.PREFIX + "/t/{secret}/events", table_views.table_events, "the seat's messages with its view",
             "text/event-stream"),
    Endpoint(tables.PREFIX + "/t/{secret}/move", table_views.table_move, "the person's move (POST)", methods=("POST",)),
    Endpoint(tables.PREFIX + "/t/{secret}/replay", table_views.table_replay, "a finished table's replay", "text/html"),
    Endpoint(tables.PREFIX + "/t/{secret}/fill", table_views.table_fill,
             "the host fills an empty seat with a sample bot (POST)", methods=("POST",)),
    Endpoint(tables.PREFIX + "/t/{secret}/start", table_views.table_start, "the host starts the table (POST)",
             methods=("POST",)),
    Endpoint(tables.PREFIX + "/t/{secret}/leave", table_views.table_leave,
             "leave the table before it starts (the host: close it; POST)", methods=("POST",)),
    Endpoint(tables.PREFIX + "/t/{secret}/rematch", table_views.table_rematch, "ask for or accept a rematch (POST)",
             methods=("POST",)),
    Endpoint(tables.TABLES + "/new", table_views.open_table, "open a table with friends (signed in; POST: open it)",
             "text/html", ("GET", "POST")),
    Endpoint(tables.TABLES + "/join", table_views.join_table, "join a table by its code (signed in; POST: sit down)",
             "text/html", ("GET", "POST")),
    Endpoint(tables.TABLES + "/j/{code}", table_views.join_link, "a table's join link (POST: sit down)", "text/html",
             ("GET", "POST")),
    Endpoint(tables.LOBBY, table_views.lobby, "the open public tables and the running ones", "text/html"),
    Endpoint(tables.LOBBY + ".json", table_views.lobby_json, "the lobby's tables"),
    Endpoint("/static/{name}", static, "the pages' script and style sheets", "text/javascript"),
    Endpoint("/api/standings", api_standings, "the standings"),
    Endpoint("/api/matches", api_matches, "running matches and a page of finished ones (limit, before)"),
    Endpoint("/api/matches/{match_id}", api_match, "one match: the spectator's view while it runs, its result after"),
    Endpoint("/api/matches/{match_id}/events", api_match_events, "a running match's spectator views as they change",
             "text/event-stream"),
    Endpoint("/api/bots/{name:path}", api_bot, "a bot's games, rating history and faults (details: operator only)"),
    Endpoint("/api/people", api_people, "the people's standings"),
    Endpoint("/api/people/{name:path}", api_person, "a person's rating and recent games"),
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
        if e.path in ("/signup", "/signin"):
            responses |= {"303": {"description": "signed in: the session cookie is set"},
                          "400": {"description": "a name or password that is not allowed (sign-up)"},
                          "403": {"description": "a wrong name or password, or a form from another site"},
                          "409": {"description": "the name is taken (sign-up)"},
                          "429": {"description": "too many tries (limits signin_tries_per_minute, signups_per_hour; "
                                                 "Retry-After)"},
                          "503": {"description": "this web keeps no accounts (no writable store)"}}
        paths[path] = {m.lower(): {"summary": e.summary, "parameters": params, "responses": responses}
                         for m in e.methods}
    return {"openapi": "3.1.0",
            "info": {"title": "Gin Arena live web", "version": "1",
                     "description": "Read-only: every path answers GET and HEAD (the sign-up, sign-in and sign-out "
                                    "forms and the tables' POSTs aside: a table's seat link is its credential)."},
            "paths": paths}


def openapi_path(path: str) -> str:
    """A route's address as OpenAPI writes it (``{name}``, without Starlette's converter)."""
    return re.sub(r":\w+}", "}", path)


def _path_params(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


class Guard:
    """The doors of every response: the security headers (with ``extra``: over TLS, HSTS), 405 for
    anything but a read (the doors' and the tables' addresses aside), and 403 for anything but a
    read from another site (:func:`cross_site`: every route, whatever its method)."""

    def __init__(self, app: ASGIApp, extra: tuple[tuple[bytes, bytes], ...] = (), *, https: bool = False) -> None:
        self.app = app
        self.headers = (*SECURITY_HEADERS, *extra)
        self.https = https
        """The site is served over TLS (its own, or a proxy's in front: its pages' origin is https)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":  # (a forwarded answer has them already)
                have = {bytes(k).lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in self.headers if h[0] not in have)]
            await send(message)

        if scope["method"] not in READ_METHODS and scope["path"] not in DOORS and not _table_door(scope["path"]):
            refused = _error(405, f"{scope['method']} is not allowed here: the web is read-only",
                             {"Allow": "GET, HEAD"})
            await refused(scope, receive, secured)
            return
        forged = cross_site(scope, https=self.https) if scope["method"] not in READ_METHODS else None
        if forged is not None:
            log.info("web_cross_site_request", path=scope["path"], method=scope["method"], origin=forged)
            await _error(403, f"a form from another site ({forged}) is refused here")(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


async def _door_busy(web: Web, scope: Scope, receive: Receive, send: Send, refused: HashingRefused) -> None:
    """The sign-in or sign-up form again, saying the password hashers are full (503) or this
    address's share is (429), with ``Retry-After``: drawn in the web's own process."""
    request = Request(scope, receive)
    tr = _lang(request)
    problem = tr._(refused.text, limit=refused.limit, wait=RETRY_AFTER_S)
    drawn = _signup_page(tr, problem) if scope["path"] == "/signup" else people.signin(tr, False, problem)
    response = web.page(request, drawn, status=refused.status)
    response.headers["Retry-After"] = str(RETRY_AFTER_S)
    log.info("web_person_refused", door=drawn.page, status=refused.status, client=_client(request), where="own process")
    await response(scope, receive, send)


def cross_site(scope: Scope, *, https: bool = False) -> str | None:
    """Where a request that may change something came from when that is another site (the
    ``Origin`` or ``Sec-Fetch-Site`` a browser sends with a form or a fetch: a forged one, from a
    page on another port or a sibling subdomain, which SameSite cookies let through, being per
    site), else ``None``. Under this site's ``Referrer-Policy: no-referrer`` a browser's own
    form says ``Origin: null``: its ``Sec-Fetch-Site`` tells. A client that is no browser sends
    neither header, and is no forged form. ``https``: the site is served over TLS (behind a proxy
    of its own the request itself may come in clear: its pages' origin is still https)."""
    headers = {bytes(k).lower(): bytes(v).decode("latin-1") for k, v in scope["headers"]}
    origin = headers.get(b"origin")
    site = headers.get(b"sec-fetch-site")
    host = headers.get(b"host", "")
    here = {f"{scope.get('scheme', 'http')}://{host}", *((f"https://{host}",) if https else ())}
    if origin == "null" and site == "same-origin":  # (every page is no-referrer: Chrome's forms then say null)
        origin = None
    if (origin is not None and origin not in here) or (site is not None and site not in ("same-origin", "none")):
        return origin or site
    return None


def _table_door(path: str) -> bool:
    return path == tables.PREFIX or path.startswith((tables.PREFIX + "/", tables.TABLES + "/"))


class ToParent(Response):
    """The parent web's answer to this request (:func:`arena.web.relay.forward`)."""

    def __init__(self, parent: str) -> None:
        super().__init__()
        self.parent = parent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await forward(self.parent, scope, receive, send)


class ParentsRoutes:
    """In the web's own process: the requests only the parent's web answers go there — the
    people's tables and lobby, the sign-up, sign-in and sign-out doors, anything a signed-in
    person or the signed-in operator asks (their sessions live in the parent's web)."""

    def __init__(self, app: ASGIApp, parent: str) -> None:
        self.app = app
        self.parent = parent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _parents(scope):
            await forward(self.parent, scope, receive, send)
            return
        await self.app(scope, receive, send)


def _parents(scope: Scope) -> bool:
    path: str = scope["path"]
    if _table_door(path) or path in DOORS or path == tables.LOBBY or path.startswith(tables.LOBBY + "."):
        return True
    if path.startswith("/static/"):
        return False
    return any(bytes(k).lower() == b"cookie" and not {SESSION_COOKIE, COOKIE}.isdisjoint(
        cookie_parser(bytes(v).decode("latin-1"))) for k, v in scope["headers"])


class Slashes:
    """An address with a trailing slash that a route serves without it: a redirect there, as a
    path of this site (Starlette's own redirect wrote the request's ``Host`` into an absolute
    address: a forged ``Host`` sent the visitor off-site)."""

    def __init__(self, app: ASGIApp, routes: list[Route]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = unslashed(scope, self.routes) if scope["type"] == "http" else None
        if target is not None:
            await RedirectResponse(target, status_code=307)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def unslashed(scope: Scope, routes: list[Route]) -> str | None:
    """Where to send a request whose address no route serves but for its trailing slashes: the
    address without them, one slash first (never ``//host``: another site), its query kept;
    ``None``: no such route, or one serves it as it is."""
    path: str = scope["path"]
    if path == "/" or not path.endswith("/") or any(r.matches(scope)[0] is not Match.NONE for r in routes):
        return None
    bare = "/" + path.strip("/")
    if not any(r.matches({**scope, "path": bare})[0] is not Match.NONE for r in routes):
        return None
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    return quote(bare) + (f"?{query}" if query else "")


def make_app(web: Web, *, forwarded: bool = False) -> Starlette:
    """The Starlette app of the web (``forwarded``: the parent's, behind the web's own process:
    the client and scheme are the ones that process names)."""
    routes = [Route(e.path, e.handler, methods=list(e.methods)) for e in ENDPOINTS]
    app = Starlette(routes=routes)  # (its router's own slash redirect never comes into play: :class:`Slashes`)
    app.state.web = web
    if web.relay is not None:
        app.add_middleware(ParentsRoutes, parent=web.relay.parent)
        app.add_middleware(DoorSlots, places=Places(web.limits.password_hashers, web.limits.password_queue,
                                                    web.limits.password_hashes_per_client),
                           refuse=partial(_door_busy, web))
    if not forwarded:  # (the public doors; the parent's socket gets bodies the web's own process read whole)
        app.add_middleware(BodyLimits, limits=web.limits)
    app.add_middleware(Slashes, routes=routes)
    app.add_middleware(Guard, extra=(hsts(web.limits),) if web.secure_cookies else (), https=web.secure_cookies)
    if forwarded:
        app.add_middleware(Forwarded)
    return app


# ----- the watchers -----
async def watch_referee(web: Web, ref: referee.Referee) -> None:
    """Publish each match's start and end as the referee announces them (and make the store
    watcher look at once when one finishes)."""
    while True:
        try:
            async with ref.open_match_events() as events:
                async for event in events:
                    web.hub.publish("match", match_event(event))
                    if event.kind == "finished":
                        web.store_changed.set()
            return
        except referee.MatchEventsDropped as e:
            log.warning("web_events_dropped", reason=str(e))


def match_event(event: referee.MatchEvent) -> dict[str, Any]:
    """A match's start or end as ``/api/events`` publishes it."""
    return {"kind": event.kind, "match_id": event.match_id, "game": event.game, "players": list(event.players),
            "state": event.state, "termination": event.termination, "places": list(event.places),
            "points": list(event.points)}


def relayed_match(web: Web, event: dict[str, Any]) -> None:
    """A match's start or end the parent pushed (the web's own process): published, and the
    store looked at at once when it finished."""
    web.hub.publish("match", event)
    if event.get("kind") == "finished":
        web.store_changed.set()


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
                assert web.kept is not None
                web.kept.changed()
                await web.kept.refresh()  # (before the standings event: pages fetch on it)
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
                    accounts_db: Path | None = None, behind_tls: bool = False, tls: WebTLS | None = None,
                    relay: Relay | None = None, forwarded: bool = False, proxy_hops: int = 0,
                    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the live web on ``listen`` (``HOST:PORT``; port 0: a free one) until cancelled, in
    the caller's trio run, over TLS with ``tls`` (only: clear HTTP to that port fails the
    handshake); ``task_status.started`` gets its address (``http://HOST:PORT`` or ``https://…``).
    ``accounts_db``: the writable store of people's accounts and games (``arena serve``'s; without
    it nobody signs up); ``behind_tls``: a proxy in front serves the site over TLS (session cookies
    are ``Secure``); ``proxy_hops``: how many proxies of the operator's own stand in front
    (:func:`behind_proxies`). ``relay``: this is the web's own process (:mod:`arena.web.process`),
    the live referee is the parent's; ``forwarded``: this is the parent's web behind it (on a Unix
    socket: ``listen`` ``unix:PATH``)."""
    if proxy_hops < 0:
        raise ValueError(f"proxy_hops {proxy_hops}: give 0 (clients reach the web directly) or more")
    accounts = (await trio.to_thread.run_sync(partial(Accounts.open, accounts_db, limits, behind_tls=behind_tls))
                if accounts_db is not None else None)
    try:
        await _serve_web(listen, source, limits, operator_token, accounts, tls, behind_tls, proxy_hops, relay,
                         forwarded, task_status)
    finally:
        if accounts is not None:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(accounts.close)


async def _serve_web(listen: str, source: WebSource, limits: WebLimits, operator_token: str | None,
                     accounts: Accounts | None, tls: WebTLS | None, behind_tls: bool, proxy_hops: int,
                     relay: Relay | None, forwarded: bool, task_status: trio.TaskStatus[str]) -> None:
    web = Web(source, limits, operator_token, Hub(limits), Slots(limits), accounts=accounts,
              secure_cookies=tls is not None or behind_tls, relay=relay)
    if relay is not None:
        relay.on_match = partial(relayed_match, web)
        relay.limits = limits
    web.tables = tables.Room(source.live, limits, web.slots, EventStream,
                             accounts.signed_in if accounts is not None else tables.nobody)
    if accounts is not None:
        web.tables.record = partial(_record_table, accounts)
    files: dict[str, Any] = {"certfile": tls.cert, "keyfile": tls.key} if tls is not None else {}
    config = Config.from_mapping({"bind": [listen], "accesslog": None, "errorlog": None, "graceful_timeout": 0.5,
                                  "keep_alive_timeout": limits.idle_connection_s, **files})
    async with trio.open_nursery() as nursery:
        assert web.kept is not None
        web.kept.nursery = nursery
        if relay is not None:
            relay.nursery = nursery
        web.hub.standings = await web.read(standings, web.rated)
        nursery.start_soon(watch_store, web)
        await nursery.start(web.tables.run)
        if source.live is not None:
            nursery.start_soon(watch_referee, web, source.live)
        per_address = None if proxy_hops or forwarded else limits.connections_per_address
        app = behind_proxies(make_app(web, forwarded=forwarded), proxy_hops)
        binds = await nursery.start(partial(serve_bounded, app, config, Connections(per_address, limits.connections)))
        address = binds[0]
        log.info("web_listening", address=address)
        task_status.started(address)


def _record_table(accounts: Accounts, table: tables.Table) -> None:
    """Store a finished table with a signed-in person among the people's games."""
    match = table.match
    if match is None or match.report is None:
        return
    seats = [p.person if p.person is not None else p.name for p in table.places]
    accounts.record_game(match_id=match.match_id, game=table.settings.game, preset=table.settings.preset,
                         seats=seats, report=match.report, started_at=table.started_at)


def behind_proxies(app: ASGIApp, hops: int) -> ASGIApp:
    """``app`` as seen through ``hops`` proxies of the operator's own (``--web-proxy-hops``):
    a request's client is the address the nearest trusted proxy was given (the ``hops``-th entry
    of ``X-Forwarded-For`` from the right; what a client writes further left is ignored) and its
    scheme ``X-Forwarded-Proto``'s, so the rate limits and stream bounds count people, not the
    proxy, and cookies are Secure when the proxy serves https. With 0 the headers are ignored
    (Hypercorn's ``ProxyFixMiddleware``, legacy mode)."""
    if hops == 0:
        return app
    return ProxyFixMiddleware(app, mode="legacy", trusted_hops=hops)  # type: ignore[arg-type,return-value]


