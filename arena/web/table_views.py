"""The tables' pages and doors (``arena.web.tables``): playing the computer, opening and joining
a table, a seat's page, its stream and its moves, the replay, and the lobby."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from html import escape
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
from arena.web.limits import WebLimits
from arena.web.table_model import (
    FORM_BYTES,
    LOBBY,
    NO_STORE,
    PREFIX,
    REPLAY_ASSETS,
    TABLES,
    Choice,
    Person,
    Seat,
    TableError,
    choices,
    target_of,
)
from arena.web.tables import Room
from referee import games


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


def _page(request: Request, title: str, body: str, *, status: int = 200, data: Mapping[str, str] | None = None,
          page: str = "table") -> HTMLResponse:
    """A table page in the request's language (``title`` and ``body`` already in it: :func:`_tr`);
    a ``?lang=`` the web does not speak gets 400 saying which it speaks."""
    choice = i18n.of_request(request)
    tr = choice.lang
    if choice.unknown is not None:
        title, page, status, data = tr._("Language"), "message", 400, None
        body = _alert(tr._("unknown language {lang}: this site speaks {languages}", lang=repr(choice.unknown),
                           languages=", ".join(i18n.LANGUAGES)))
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
    response = HTMLResponse(
        "<!DOCTYPE html>\n"
        f'<html lang="{tr.code}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, '
        f'initial-scale=1"><title>{escape(title)} — Gin Arena</title>'
        f'{pages.HEAD_LINKS}<link rel="stylesheet" href="/static/table.css"></head>\n'
        f'<body data-page="{page}"{attrs}>\n{pages.menu(request, tr)}\n'
        f'<main id="main">\n<h1>{escape(title)}</h1>\n{body}\n</main>\n'
        f'{i18n.script_block(tr)}\n'
        '<script src="/static/people.js" defer></script>\n'
        '<script src="/static/table.js" defer></script>\n</body></html>\n',
        status_code=status, headers=NO_STORE)
    return i18n.answer(response, choice, secure=request.url.scheme == "https")


def _error(request: Request, e: TableError) -> JSONResponse:
    """A refusal for the table's script: ``error`` in English (for programs), ``say`` in the
    request's language (what the page shows)."""
    return JSONResponse({"error": e.message, "say": e.say(_tr(request))}, status_code=e.status, headers=NO_STORE)


def _alert(text: str) -> str:
    return f'<p class="problem" role="alert">{escape(text)}</p>'


def _problem(request: Request, title: str, e: TableError) -> HTMLResponse:
    return _page(request, title, _alert(e.say(_tr(request))), status=e.status, page="message")


def _options(values: tuple[str, ...], default: str) -> str:
    return "".join(f'<option value="{escape(v)}"{" selected" if v == default else ""}>{escape(v)}</option>'
                   for v in values)


def _seat_options(tr: Lang, c: Choice) -> str:
    if len(c.seats) < 2:
        return ""
    return (f'<label>{escape(tr._("seats"))} <select name="seats">'
            f'{_options(tuple(str(n) for n in c.seats), str(c.default_seats))}</select></label>')


NO_GAME = N_("No game with sample bots is installed.")
"""The table forms' page when no game can be played."""


def choose_body(tr: Lang, found: list[Choice], problem: str = "") -> str:
    """The play-the-computer page: one form per game (its presets, its bots, its seat counts)."""
    if not found:
        return f'<p class="problem">{escape(tr._(NO_GAME))}</p>'
    parts = [_alert(problem)] if problem else []
    friends = f'<a href="{TABLES}/new">{escape(tr._("open a table"))}</a>'
    parts.append("<p>" + escape(tr._("No account needed: pick the computer's player and the rules, and play at "
                                     "once. There is no undo. To play friends, {open}.")).replace("{open}", friends)
                 + "</p>")
    for c in found:
        preset = "short" if "short" in c.presets else c.presets[0]
        parts.append(
            f'<form method="post" action="{PREFIX}" class="choose" data-game="{escape(c.game)}">'
            f'<h2>{escape(c.game)}</h2><input type="hidden" name="game" value="{escape(c.game)}">'
            f'<label>{escape(tr._("the computer"))} <select name="bot">{_options(c.bots, c.bots[0])}</select></label>'
            f'<label>{escape(tr._("rules"))} <select name="preset">{_options(c.presets, preset)}</select></label>'
            f'{_seat_options(tr, c)}<button type="submit">'
            f'{escape(tr._("play {game}", game=tr.game_name(c.game)))}</button></form>')
    return "\n".join(parts)


def new_body(tr: Lang, found: list[Choice], limits: WebLimits, problem: str = "") -> str:
    """The new-table page: one form per game."""
    if not found:
        return f'<p class="problem">{escape(tr._(NO_GAME))}</p>'
    parts = [_alert(problem)] if problem else []
    parts.append("<p>" + escape(tr._("Open a table: you get its code and a link to send your friends; fill the "
                                     "seats left with sample bots if you like, and start when everyone sits."))
                 + "</p>")
    for c in found:
        preset = "short" if "short" in c.presets else c.presets[0]
        target = target_of(games.get(c.game).game.rules_preset(preset))
        aim = (f'<label>{escape(tr._("game target"))} <input name="target" inputmode="numeric" size="5" '
               f'placeholder="{target}"></label>') if target is not None else ""
        parts.append(
            f'<form method="post" action="{TABLES}/new" class="choose" data-game="{escape(c.game)}">'
            f'<h2>{escape(c.game)}</h2><input type="hidden" name="game" value="{escape(c.game)}">'
            f'<label>{escape(tr._("rules"))} <select name="preset">{_options(c.presets, preset)}</select></label>'
            f'{_seat_options(tr, c)}{aim}'
            f'<label>{escape(tr._("seconds a move"))} <input name="move_s" inputmode="numeric" size="5" '
            f'value="{limits.table_move_s:g}"></label>'
            f'<label>{escape(tr._("who may join"))} <select name="public">'
            f'<option value="">{escape(tr._("friends with the code"))}</option>'
            f'<option value="yes">{escape(tr._("anyone (listed in the lobby)"))}</option></select></label>'
            f'<button type="submit">{escape(tr._("open a {game} table", game=tr.game_name(c.game)))}</button></form>')
    return "\n".join(parts)


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
        return _page(request, tr._("Play the computer"), choose_body(tr, choices()))
    try:
        form = await _form(request)
        seat = _room(request).play_computer(form.get("game", ""), form.get("preset", ""), form.get("bot", ""),
                                            form.get("seats", ""))
    except TableError as e:
        return _page(request, tr._("Play the computer"), choose_body(tr, choices(), e.say(tr)), status=e.status)
    return _to_seat(seat)


def _signin_needed(request: Request) -> HTMLResponse:
    tr = _tr(request)
    return _page(request, tr._("Sign in first"), _alert(tr._("Tables with friends are for people who signed in: "
                                                            "sign in, then come back.")), status=401, page="message")


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
        return _page(request, tr._("Open a table"), new_body(tr, choices(), room.limits), page="new")
    try:
        form = await _form(request)
        settings = room.settings(form.get("game", ""), form.get("preset", ""), form.get("seats", ""),
                                 form.get("move_s", ""), form.get("target", ""), form.get("public", "") == "yes")
        seat = room.open(settings, person.name, person)
    except TableError as e:
        return _page(request, tr._("Open a table"), new_body(tr, choices(), room.limits, e.say(tr)), status=e.status,
                     page="new")
    return _to_seat(seat)


def join_body(tr: Lang, code: str = "", problem: str = "") -> str:
    parts = [_alert(problem)] if problem else []
    parts.append(f'<form method="post" action="{TABLES}/join" class="choose">'
                 f'<label>{escape(tr._("table code"))} <input name="code" value="{escape(code)}" autocomplete="off" '
                 f'maxlength="32" size="16" autocapitalize="characters"></label>'
                 f'<button type="submit">{escape(tr._("sit down"))}</button></form>')
    return "\n".join(parts)


async def join_table(request: Request) -> Response:
    """``/tables/join``: GET: the code form; POST ``code``: sit at that table (signed in only)."""
    room, person = _signed(request)
    if person is None:
        return _signin_needed(request)
    tr = _tr(request)
    if request.method != "POST":
        return _page(request, tr._("Join a table"), join_body(tr), page="join")
    try:
        form = await _form(request)
        table = room.find(form.get("code", ""), _client(request))
        return _to_seat(room.join(table, person))
    except TableError as e:
        return _page(request, tr._("Join a table"), join_body(tr, "", e.say(tr)), status=e.status, page="join")


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
    st = table.settings
    who = ", ".join(p.name for p in table.places if p.kind != "empty") or tr._("nobody")
    about = tr.ngettext("{game} ({preset}), {n} seat; sitting: {who}.", "{game} ({preset}), {n} seats; sitting: {who}.",
                        st.seats, game=tr.game_name(st.game), preset=st.preset, who=who)
    return _page(request, tr._("A {game} table", game=tr.game_name(st.game)),
                 f'<p>{escape(about)}</p><form method="post" action="{TABLES}/j/{table.code}" class="choose">'
                 f'<button type="submit">{escape(tr._("sit down"))}</button></form>', page="join")


def table_body(tr: Lang) -> str:
    """The table (the script draws it from the stream), with its waiting room."""
    return (
        '<section id="waiting" hidden><p id="invite"></p><ol id="seat-list"></ol>'
        '<p id="host-tools"></p></section>'
        '<p id="notice" class="notice" role="status"></p>'
        f'<div id="status" role="status" aria-live="polite">{escape(tr._("connecting…"))}</div>'
        '<section id="opponent" class="seat"></section>'
        '<section id="middle"><div id="piles"></div><div id="last"></div></section>'
        '<section id="me" class="seat"></section>'
        '<div id="clocks"><span id="my-clock"></span> <span id="their-clock"></span></div>'
        '<p id="problem" class="problem" role="alert"></p>'
        '<div id="selection" aria-live="polite"></div>'
        '<p id="hint" aria-live="polite"></p><div id="actions"></div>'
        f'<details id="list" open><summary>{escape(tr._("All legal moves"))}</summary>'
        f'<section id="moves" aria-label="{escape(tr._("your moves"))}"></section></details>'
        '<p id="prefs"></p>'
        '<section id="end" hidden></section>'
        f'<section id="sheet"><h2>{escape(tr._("Score sheet"))}</h2>'
        '<table id="scores"><thead></thead><tbody></tbody></table></section>'
        f'<section id="their-moves"><h2>{escape(tr._("Their moves"))}</h2><ol id="log"></ol></section>'
        '<p id="replay" hidden></p><p id="rematch" hidden></p>')


def _gone_why(request: Request) -> str | None:
    """Why the request's seat link stopped working before a start (a msgid), if it did."""
    return _room(request).gone.get(request.path_params["secret"])


async def table_page(request: Request) -> Response:
    seat = _seat(request)
    tr = _tr(request)
    why = _gone_why(request) if seat is None else None
    if why is not None:
        return _page(request, tr._("This seat is free"), _alert(tr._(why))
                     + f'<p><a href="{LOBBY}">{escape(tr._("the tables"))}</a></p>', status=410, page="message")
    if seat is None:
        return _page(request, tr._("No such table"), '<p class="problem">'
                     + escape(tr._("No table here (it ended long ago, or the link is wrong).")) + "</p>", status=404)
    base = f"{PREFIX}/t/{seat.secret}"
    table = seat.table
    room = _room(request)
    players = tr._(" vs ").join(p.name or "…" for p in table.places)
    return _page(request, f"{tr.game_name(table.settings.game)}: {players}",
                 table_body(tr),
                 data={"events": f"{base}/events", "move": f"{base}/move", "seat": str(seat.index),
                       "game": table.settings.game, "fields": json.dumps(_result_words(table.settings.game)),
                       "fill": f"{base}/fill", "start": f"{base}/start", "rematch": f"{base}/rematch",
                       "leave": f"{base}/leave",
                       "join": f"{TABLES}/j/{table.code}", "bots": json.dumps(list(table.settings.bots)),
                       "signed": "yes" if room.signed_in(request) is not None else "",
                       "players": json.dumps(list(table.names()))})


def _result_words(game: str) -> list[str]:
    """The game's words for its result fields (``games.Capabilities.result_words``), for the
    table's script; none for a game that is not installed here."""
    try:
        return list(games.get(game).capabilities.result_words)
    except ValueError:
        return []


async def table_replay(request: Request) -> Response:
    """The finished table's replay page (the HTML replay of ``arena replay --html``)."""
    seat = _seat(request)
    tr = _tr(request)
    report = seat.match.report if seat is not None and seat.match is not None else None
    if seat is None or report is None or not report.replay_path:
        return _page(request, tr._("No replay"), f'<p class="problem">{escape(tr._("No replay here (yet)."))}</p>',
                     status=404)
    try:
        view = await trio.to_thread.run_sync(load, Path(report.replay_path))
    except (OSError, ReplayModelError) as e:
        return _page(request, tr._("No replay"),
                     f'<p class="problem">{escape(tr._("the replay cannot be shown: {why}", why=e))}</p>', status=404)
    return replay_response(request, view, PREFIX, N_("play again"), NO_STORE)


def replay_response(request: Request, view: MatchView, back_link: str, back_text: str,
                    headers: Mapping[str, str] | None = None) -> Response:
    """A replay's page (``arena.replays.html``, its assets served as files) in the request's
    language: its frame and its script's words, and ``back_text`` (a msgid) on the link back."""
    choice = i18n.of_request(request)
    tr = choice.lang
    page = replay_html.replay_page(view, back_link=back_link, back_text=tr._(back_text), assets=REPLAY_ASSETS,
                                   words=tr)
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
    tr = _tr(request)
    return _page(request, tr._("Tables"),
                 f'<p><a href="{TABLES}/new">{escape(tr._("open a table"))}</a> · '
                 f'<a href="{TABLES}/join">{escape(tr._("join by code"))}</a></p>'
                 f'<h2>{escape(tr._("Open tables"))}</h2><ul id="lobby-open"></ul>'
                 f'<h2>{escape(tr._("Being played"))}</h2><ul id="lobby-running"></ul>', page="lobby",
                 data={"lobby": f"{LOBBY}.json", "refresh": f"{room.limits.lobby_refresh_s:g}",
                       "initial": json.dumps(lobby_data(room))})


async def lobby_json(request: Request) -> Response:
    return JSONResponse(lobby_data(_room(request)), headers=NO_STORE)
