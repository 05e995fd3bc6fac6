"""The tables' pages and doors (``arena.web.tables``): playing the computer, opening and joining
a table, a seat's page, its stream and its moves, the replay, and the lobby."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from arena.replays import html as replay_html
from arena.replays.model import ReplayModelError, load
from arena.replays.steps import MatchView
from arena.web import i18n, pages
from arena.web.i18n import N_, Lang
from arena.web.pages import tables as table_pages
from arena.web.table_model import (
    FORM_BYTES,
    LOBBY,
    NO_STORE,
    PREFIX,
    REPLAY_ASSETS,
    TABLES,
    Person,
    Seat,
    TableError,
    choices,
)
from arena.web.tables import Room


# ----- the pages -----
def _room(request: Request) -> Room:
    room: Room = request.app.state.web.tables
    return room


def _seat(request: Request) -> Seat | None:
    return _room(request).seats.get(request.path_params["secret"])


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def _tr(request: Request) -> Lang:
    """The language of the request's page (``?lang=``, the ``lang`` cookie, ``Accept-Language``)."""
    return i18n.of_request(request).lang


def _page(request: Request, drawn: pages.Page, *, status: int = 200) -> HTMLResponse:
    """A table page (:mod:`arena.web.pages.tables`) in the site's frame, never kept by a cache."""
    return pages.draw(request, drawn, status=status, keep=False)


def _error(request: Request, e: TableError) -> JSONResponse:
    """A refusal for the table's script: ``error`` in English (for programs), ``say`` in the
    request's language (what the page shows)."""
    return JSONResponse({"error": e.message, "say": e.say(_tr(request))}, status_code=e.status, headers=NO_STORE)


def _problem(request: Request, title: str, e: TableError) -> HTMLResponse:
    return _page(request, table_pages.said(title, e.say(_tr(request))), status=e.status)


async def _form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_BYTES:
            raise TableError(413, N_("a form holds at most {n} bytes"), n=FORM_BYTES)
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = json.loads(body or b"{}")
        except ValueError as e:
            raise TableError(400, N_("not JSON: {why}"), why=str(e)) from None
        if not isinstance(data, dict):
            raise TableError(400, N_("expected a JSON object"))
        return {str(k): str(v) for k, v in data.items()}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


def _to_seat(seat: Seat) -> Response:
    return RedirectResponse(f"{PREFIX}/t/{seat.secret}", status_code=303, headers=NO_STORE)


async def new_table(request: Request) -> Response:
    """``/play``: GET: the choices; POST (``game``, ``preset``, ``bot``, ``seats``): a table against the
    computer, started at once; go to the person's seat."""
    tr = _tr(request)
    if request.method != "POST":
        return _page(request, table_pages.choose(tr, choices()))
    try:
        form = await _form(request)
        seat = _room(request).play_computer(form.get("game", ""), form.get("preset", ""), form.get("bot", ""),
                                            form.get("seats", ""), form.get("level", ""))
    except TableError as e:
        return _page(request, table_pages.choose(tr, choices(), e.say(tr)), status=e.status)
    return _to_seat(seat)


def _signin_needed(request: Request) -> HTMLResponse:
    tr = _tr(request)
    return _page(request, table_pages.said(tr._("Sign in first"), tr._(
        "Tables with friends are for people who signed in: sign in, then come back.")), status=401)


def _signed(request: Request) -> tuple[Room, Person | None]:
    room = _room(request)
    return room, room.signed_in(request)


async def open_table(request: Request) -> Response:
    """``/tables/new``: GET: the form; POST: open a table (signed in only), go to the host's seat."""
    room, person = _signed(request)
    if person is None:
        return _signin_needed(request)
    tr = _tr(request)
    if request.method != "POST":
        return _page(request, table_pages.new(tr, choices(), room.limits))
    try:
        form = await _form(request)
        settings = room.settings(form.get("game", ""), form.get("preset", ""), form.get("seats", ""),
                                 form.get("move_s", ""), form.get("target", ""), form.get("public", "") == "yes")
        seat = room.open(settings, person.name, person)
    except TableError as e:
        return _page(request, table_pages.new(tr, choices(), room.limits, e.say(tr)), status=e.status)
    return _to_seat(seat)


async def join_table(request: Request) -> Response:
    """``/tables/join``: GET: the code form; POST ``code``: sit at that table (signed in only)."""
    room, person = _signed(request)
    if person is None:
        return _signin_needed(request)
    tr = _tr(request)
    if request.method != "POST":
        return _page(request, table_pages.join(tr))
    try:
        form = await _form(request)
        table = room.find(form.get("code", ""), _client(request))
        return _to_seat(room.join(table, person))
    except TableError as e:
        return _page(request, table_pages.join(tr, "", e.say(tr)), status=e.status)


async def join_link(request: Request) -> Response:
    """``/tables/j/CODE``: GET: the table's invitation (a button to sit down); POST: sit down."""
    room = _room(request)
    tr = _tr(request)
    try:
        table = room.find(request.path_params["code"], _client(request))
    except TableError as e:
        return _problem(request, tr._("Join a table"), e)
    person = room.signed_in(request)
    if person is None:
        return _signin_needed(request)
    if request.method == "POST":
        try:
            return _to_seat(room.join(table, person))
        except TableError as e:
            return _problem(request, tr._("Join a table"), e)
    return _page(request, table_pages.invite(tr, table))


def _gone_why(request: Request) -> str | None:
    """Why the request's seat link stopped working before a start (a msgid), if it did."""
    return _room(request).gone.get(request.path_params["secret"])


async def table_page(request: Request) -> Response:
    seat = _seat(request)
    tr = _tr(request)
    why = _gone_why(request) if seat is None else None
    if why is not None:
        return _page(request, table_pages.said(tr._("This seat is free"), tr._(why), (LOBBY, tr._("the tables"))),
                     status=410)
    if seat is None:
        return _page(request, table_pages.said(tr._("No such table"),
                                               tr._("No table here (it ended long ago, or the link is wrong).")),
                     status=404)
    signed = _room(request).signed_in(request) is not None
    return _page(request, table_pages.seat(tr, seat.table, seat.secret, seat.index, signed))


async def table_replay(request: Request) -> Response:
    """The finished table's replay page (the HTML replay of ``arena replay --html``)."""
    seat = _seat(request)
    tr = _tr(request)
    report = seat.match.report if seat is not None and seat.match is not None else None
    if seat is None or report is None or not report.replay_path:
        return _page(request, table_pages.said(tr._("No replay"), tr._("No replay here (yet).")), status=404)
    try:
        view = await trio.to_thread.run_sync(load, Path(report.replay_path))
    except (OSError, ReplayModelError) as e:
        return _page(request, table_pages.said(tr._("No replay"), tr._("the replay cannot be shown: {why}", why=e)),
                     status=404)
    return replay_response(request, view, PREFIX, N_("play again"), NO_STORE)


def replay_response(request: Request, view: MatchView, back_link: str, back_text: str,
                    headers: Mapping[str, str] | None = None) -> Response:
    """A replay's page (``arena.replays.html``, its assets served as files) in the request's
    language: its frame and its script's words, and ``back_text`` (a msgid) on the link back; the
    site's one menu on top, its style sheet and icon."""
    choice = i18n.of_request(request)
    tr = choice.lang
    page = replay_html.replay_page(view, back_link=back_link, back_text=tr._(back_text), assets=REPLAY_ASSETS,
                                   words=tr, frame=pages.menu(request, tr), head=pages.HEAD_LINKS)
    return i18n.answer(HTMLResponse(page, headers=dict(headers or {})), choice, secure=request.url.scheme == "https")


NO_SEAT = N_("no seat has this link (it ended long ago, or the link is wrong)")
"""A seat's POST or event stream at an address that is no seat's."""


async def _seat_post(request: Request, act: Callable[[Room, Seat, dict[str, str]], Any]) -> Response:
    seat = _seat(request)
    why = _gone_why(request) if seat is None else None
    if why is not None:
        return _error(request, TableError(410, why))
    if seat is None:
        return _error(request, TableError(404, NO_SEAT))
    try:
        form = await _form(request)
        answer = act(_room(request), seat, form)
        if isinstance(answer, dict):
            return JSONResponse(answer, headers=NO_STORE)
        return JSONResponse(await answer, headers=NO_STORE)
    except TableError as e:
        return _error(request, e)


async def table_move(request: Request) -> Response:
    """POST ``{"action": ID, "request_id": N}``: the person's move."""
    def act(room: Room, seat: Seat, form: dict[str, str]) -> Any:
        rid = form.get("request_id", "0")
        if not rid.isdigit():
            raise TableError(400, N_("{name}={value}: expected a whole number"), name="request_id", value=repr(rid))
        return room.move(seat, form.get("action", ""), int(rid))
    return await _seat_post(request, act)


async def table_fill(request: Request) -> Response:
    """POST ``{"seat": N, "bot": NAME}``: the host fills an empty seat with a sample bot."""
    def act(room: Room, seat: Seat, form: dict[str, str]) -> dict[str, Any]:
        index = form.get("seat", "")
        if not index.isdigit():
            raise TableError(400, N_("seat={value}: expected a seat number"), value=repr(index))
        room.fill(seat, int(index), form.get("bot", ""))
        return {"seats": seat.table.seat_list()}
    return await _seat_post(request, act)


async def table_start(request: Request) -> Response:
    """POST: the host starts the game."""
    def act(room: Room, seat: Seat, _form: dict[str, str]) -> dict[str, Any]:
        room.start(seat)
        return {"started": True}
    return await _seat_post(request, act)


async def table_leave(request: Request) -> Response:
    """POST: leave the table before it starts (the host: close it); answers where to go."""
    def act(room: Room, seat: Seat, _form: dict[str, str]) -> dict[str, Any]:
        room.leave(seat)
        return {"left": True, "href": LOBBY}
    return await _seat_post(request, act)


async def table_rematch(request: Request) -> Response:
    """POST: ask for (or accept) a rematch; answers the new seat's address."""
    def act(room: Room, seat: Seat, _form: dict[str, str]) -> dict[str, Any]:
        new = room.ask_rematch(seat)
        return {"href": f"{PREFIX}/t/{new.secret}"}
    return await _seat_post(request, act)


async def table_events(request: Request) -> Response:
    """``text/event-stream``: every payload of the seat (``Last-Event-ID`` resumes)."""
    seat = _seat(request)
    why = _gone_why(request) if seat is None else None
    if why is not None:
        return _error(request, TableError(410, why))
    if seat is None:
        return _error(request, TableError(404, NO_SEAT))
    room = _room(request)
    client = _client(request)
    refused = room.slots.refusal(client)
    if refused is not None:
        return refused
    last = request.headers.get("last-event-id", "0")
    start = int(last) if last.isdigit() else 0
    return room.stream(_events(room, seat, start, room.limits.sse_keepalive_s), lambda: room.slots.release(client))


async def _events(room: Room, seat: Seat, start: int, keepalive_s: float) -> AsyncIterator[str]:
    seat.readers += 1
    seat.back.set()
    try:
        sent = start
        while True:
            while sent < len(seat.payloads):
                sent += 1
                yield f"id: {sent}\nevent: table\ndata: {seat.payloads[sent - 1]}\n\n"
            if seat.over and seat.call is None:
                yield "event: over\ndata: {}\n\n"
                return
            with trio.move_on_after(keepalive_s) as waited:
                await seat.changed.wait()
            if waited.cancelled_caught:
                yield ": keep-alive\n\n"
    finally:
        seat.readers -= 1
        if seat.readers == 0:
            room._gone(seat)


# ----- the lobby -----
def lobby_data(room: Room) -> dict[str, Any]:
    """The open public tables (to join) and the running public ones (to watch), without anyone's link."""
    open_, running = [], []
    for t in room.tables.values():
        st = t.settings
        row = {"game": st.game, "preset": st.preset, "seats": t.seat_list()}
        if t.open and st.public and any(p.kind == "empty" for p in t.places):
            open_.append({**row, "join": f"{TABLES}/j/{t.code}"})
        elif t.match is not None and not t.over and st.public:
            running.append({**row, "watch": f"/matches/{t.match.match_id}"})
    return {"open": open_, "running": running}


async def lobby(request: Request) -> Response:
    """``/lobby``: the open public tables and the running ones (the script refreshes them)."""
    room = _room(request)
    return _page(request, table_pages.lobby(_tr(request), lobby_data(room), room.limits.lobby_refresh_s))


async def lobby_json(request: Request) -> Response:
    return JSONResponse(lobby_data(_room(request)), headers=NO_STORE)
