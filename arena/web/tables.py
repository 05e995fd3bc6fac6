"""Tables: a person plays the computer in the browser, without an account (issue 21, first slice).

The browser plays through the same referee protocol as any bot. For each table the web creates a
match on the live referee (``arena serve``'s, or a tournament's embedded one) of as many seats as
the person chose (the game's seat counts), starts the chosen sample bot in every other seat, each
as its own real process with its seat's token (as tournaments do), and opens the person's
seat's session itself, with that seat's token, exactly like a bot: a ``BotService.Play`` stream.
Only that seat's messages reach the page, each as proto3 JSON (``json_format``) with the game's
description of **that seat's** view beside it (``present(match_view(match, seat))``,
:class:`referee.games.GamePresentation`), so the page can never show more than a bot in that seat
would know. The page's answers go back as the seat's ``ActionResponse``; the match is played with
``repeat_illegal``, so a forged action gets the referee's ``action_rejected`` (the request stays
open: the person chooses again).

Transport to the page: server-sent events for the stream (``/play/t/SECRET/events``, resumable
with ``Last-Event-ID``) and a POST for each move (``/play/t/SECRET/move``); the seat's secret is
in the path (≥ 192 random bits), never shown to anyone else, and every page is sent with
``Referrer-Policy: no-referrer`` and ``Cache-Control: no-store``. Computer players running at once
are bounded (``computer_players``, a :class:`~arena.web.limits.WebLimits` key): one more table
gets 503 naming it (a table of N seats runs N − 1 of them).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import subprocess
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs

import grpc
import structlog
import trio
from google.protobuf import json_format
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

import referee
from arena.replays import html as replay_html
from arena.replays import seat_lines
from arena.replays.base import Style
from arena.replays.model import ReplayModelError, load
from arena.run.play import bot_command
from arena.run.samples import demos
from arena.run.serve import PEOPLE_PREFIX
from arena.web.limits import WebLimits
from gin_arena.v2 import bot_pb2, bot_pb2_grpc
from referee import games

log = structlog.get_logger("arena")
_EOF = grpc.aio.EOF  # type: ignore[attr-defined]

PREFIX = "/play"
"""Every table address starts here (the only addresses besides the operator's door that take a POST)."""
STATIC = Path(__file__).parent / "static"
STATIC_FILES: dict[str, str] = {name: (STATIC / name).read_text(encoding="utf-8") for name in ("table.js", "table.css")}
"""The table page's script and style sheet (served by the web's ``/static/``)."""
FORM_BYTES = 4096
"""The largest new-table form or move accepted."""
PERSON = "you"
"""The person's name at the table."""
SEAT = 0
"""The person's seat."""
BOT_EXIT_S = 5.0
"""Seconds the computer's process has to exit by itself after its match, before it is killed."""
REPLAY_ASSETS = ("/static/replay.css", "/static/replay.js")
"""The replay page's style sheet and script, as the web serves them."""
NO_STORE = {"Cache-Control": "no-store"}
"""A table's pages and answers are never cached (their address is the seat's credential)."""


class StreamSlots(Protocol):
    """The web's live-update stream slots (``arena.web.server.Slots``)."""

    def refusal(self, client: str) -> Response | None: ...

    def release(self, client: str) -> None: ...


# ----- what the computer may play -----
@dataclass(frozen=True, slots=True)
class Choice:
    """A game the person may play the computer at: its presets and its sample bots."""

    game: str
    """The game's registry name."""
    presets: tuple[str, ...]
    """Its rule-set presets (the game's registration's)."""
    bots: tuple[str, ...]
    """Its sample bots' names (``sample_bots/demos.toml``)."""
    module_prefix: str
    """What its sample bots' module names start with."""
    seats: tuple[int, ...] = (2,)
    """The numbers of seats it is played by (the game's ``seat_counts``)."""
    default_seats: int = 2
    """The seat count the form offers first (its demo's, if the game allows it)."""


def choices() -> list[Choice]:
    """Every installed game with a presentation and sample bots."""
    found = []
    for game, demo in demos().items():
        try:
            reg = games.get(game)
        except ValueError:
            continue
        if reg.presentation is None:
            continue
        seats = tuple(reg.game.seat_counts())
        found.append(Choice(game, tuple(reg.game.preset_names()), demo.samples, demo.module_prefix, seats,
                            demo.seats if demo.seats in seats else seats[0]))
    return found


# ----- one table -----
@dataclass(eq=False, slots=True)
class Seat:
    """The person's seat at one table: its session's messages as the page is sent them."""

    secret: str
    """The seat's credential (in its address)."""
    table: referee.Table
    """The match on the referee."""
    bot: str
    """The computer's sample bot (in every seat but the person's)."""
    payloads: list[str] = field(default_factory=list)
    """Every message of the seat's session, as the page gets it (JSON text, numbered from 1)."""
    changed: trio.Event = field(default_factory=trio.Event)
    """Set when a payload is added (then replaced)."""
    call: Any = None
    """The seat's ``Play`` stream (``None`` before the hello and after the end)."""
    request: bot_pb2.ActionRequest | None = None
    """The seat's open request (``None``: not the seat's turn)."""
    over: bool = False
    """The session ended."""
    again: dict[str, str] = field(default_factory=dict)
    """The new-table form that opens this table again (the rematch the page offers at the end)."""

    def add(self, kind: str, message: Mapping[str, Any], view: Mapping[str, Any] | None, text: str = "") -> None:
        self.payloads.append(json.dumps({"n": len(self.payloads) + 1, "kind": kind, "message": message,
                                         "view": view, "text": text}, separators=(",", ":")))
        self.changed.set()
        self.changed = trio.Event()


class TableError(Exception):
    """A table that cannot be opened or a move that cannot be sent: its HTTP status and why."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status


class Room:
    """Every table of this web: opened on the live referee, bounded by ``computer_players``."""

    def __init__(self, ref: referee.Referee | None, limits: WebLimits, slots: StreamSlots,
                 stream: Callable[[AsyncIterator[str], Callable[[], None]], Response]) -> None:
        self.ref = ref
        self.limits = limits
        self.slots = slots
        self.stream = stream
        """The web's event-stream response (it gives its slot back however it ends)."""
        self.seats: OrderedDict[str, Seat] = OrderedDict()
        """Tables by secret, oldest first (finished ones beyond ``tables_kept`` are forgotten)."""
        self.playing = 0
        """Computer players running now."""
        self._nursery: trio.Nursery | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the tables' sessions and bot processes until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            await trio.sleep(math.inf)

    def open(self, game: str, preset: str, bot: str, seats: int = 2) -> Seat:
        """A new table of ``seats`` seats: the match, a computer's process for each seat but the
        person's, and the person's session."""
        if self.ref is None or self._nursery is None:
            raise TableError(503, "this web has no live referee: tables need `arena serve --web`")
        found = {c.game: c for c in choices()}
        choice = found.get(game)
        if choice is None:
            raise TableError(400, f"game {game!r}: choose one of {', '.join(found) or 'none installed'}")
        if preset not in choice.presets:
            raise TableError(400, f"preset {preset!r}: {game} has {', '.join(choice.presets)}")
        if bot not in choice.bots:
            raise TableError(400, f"bot {bot!r}: {game}'s sample bots are {', '.join(choice.bots)}")
        if seats not in choice.seats:
            raise TableError(400, f"seats {seats}: {game} is played by "
                             f"{', '.join(map(str, choice.seats))} players")
        if self.playing + seats - 1 > self.limits.computer_players:
            raise TableError(503, f"the server runs {self.limits.computer_players} computer players at once "
                             f"(limit computer_players; {self.playing} running, this table needs {seats - 1}); "
                             "try again later")
        rules = games.get(game).game.rules_preset(preset)
        tc = referee.TimeControl(per_move_ms=int(self.limits.table_move_s * 1000))
        bots = (bot,) if seats == 2 else tuple(f"{bot}-{n}" for n in range(1, seats))
        spec = referee.MatchSpec(players=(PERSON, *bots), game=game, rules=rules, time_control=tc,
                                 repeat_illegal=True, match_id=f"{PEOPLE_PREFIX}{secrets.token_hex(6)}")
        try:
            table = self.ref.create_match(spec)
        except referee.LimitExceeded as e:
            raise TableError(503, str(e)) from None
        seat = Seat(secrets.token_urlsafe(24), table, bot,
                    again={"game": game, "preset": preset, "bot": bot, "seats": str(seats)})
        self.playing += seats - 1
        self.seats[seat.secret] = seat
        self._forget()
        self._nursery.start_soon(self._play, seat, choice.module_prefix + bot)
        log.info("table_opened", match_id=table.match_id, game=game, preset=preset, bot=bot, seats=seats)
        return seat

    def _forget(self) -> None:
        done = [s for s, seat in self.seats.items() if seat.over]
        for secret in done[:max(0, len(done) - self.limits.tables_kept)]:
            del self.seats[secret]

    async def _play(self, seat: Seat, module: str) -> None:
        assert self.ref is not None
        ref = self.ref
        table = seat.table
        env = {**os.environ, "GIN_LOG_LEVEL": "WARNING"}
        procs: list[trio.Process] = []
        grace = 0.0  # seconds the computers' processes have to end by themselves (none when the web stops)
        try:
            for n, link in enumerate(table.links):
                if n == SEAT:
                    continue
                cmd = bot_command(argparse.Namespace(command="", bot=module), ref.address, link.token,
                                  table.spec.players[n])
                procs.append(await trio.lowlevel.open_process(
                    cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
            await self._session(seat, ref.address, table.links[SEAT].token)
            grace = BOT_EXIT_S
        except (OSError, grpc.RpcError) as e:
            grace = BOT_EXIT_S
            log.warning("table_failed", match_id=table.match_id, reason=str(e))
            seat.add("error", {"message": f"the table failed: {e}"}, None)
        finally:
            seat.over = True
            seat.call = None
            seat.request = None
            seat.changed.set()
            with trio.CancelScope(shield=True):
                with trio.move_on_after(grace):
                    for proc in procs:
                        await proc.wait()
                for proc in procs:
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
                self.playing -= len(table.links) - 1

    async def _session(self, seat: Seat, address: str, token: str) -> None:
        """The person's seat's session: a bot's ``Play`` stream, every message forwarded."""
        table = seat.table
        reg = games.get(table.spec.game)
        describe = seat_lines.describer(table.spec.game, Style())
        channel = grpc.aio.insecure_channel(address)
        try:
            stub: Any = bot_pb2_grpc.BotServiceStub(channel)
            call: Any = stub.Play()
            await referee.aio(call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(
                bot_name=PERSON, token=token, protocol_version=2, client_info="arena web table (a person)",
                games=[table.spec.game]))))
            seat.call = call
            while True:
                msg = await referee.aio(call.read())
                if msg is _EOF:
                    break
                kind = msg.WhichOneof("kind")
                seat.request = msg.action_request if kind == "action_request" else seat.request
                if kind in ("deal_finished", "game_finished", "match_finished"):
                    seat.request = None
                seat.add(kind, json_format.MessageToDict(msg, always_print_fields_with_no_presence=True),
                         self._view(reg, table), _words(msg, kind, describe))
                if kind == "match_finished":
                    seat.add("replay", {"href": f"{PREFIX}/t/{seat.secret}/replay"}, None)
                    await referee.aio(call.done_writing())
                    break
        finally:
            with trio.CancelScope(shield=True):
                await referee.aio(channel.close(None))

    @staticmethod
    def _view(reg: games.Registered, table: referee.Table) -> dict[str, Any] | None:
        """The game's description of the person's seat's view now, with where in the match it is
        (``position``: the game and deal numbers); ``None`` before the match starts."""
        match = table.match
        if reg.presentation is None or match is None:
            return None
        return {"position": {"game": match.game_number, "deal": match.deal_number},
                **reg.presentation.present(reg.presentation.match_view(match, SEAT))}

    async def move(self, seat: Seat, text: str, request_id: int) -> dict[str, Any]:
        """Send the person's answer (a legal move's id) as the seat's ``ActionResponse``; the
        referee's verdict comes in the stream (``action_rejected`` for an illegal one)."""
        req = seat.request
        if seat.call is None or seat.over:
            raise TableError(409, "the game is over")
        if req is None or (request_id and request_id != req.request_id):
            raise TableError(409, "it is not your turn (or that request was answered)")
        wire = games.get(seat.table.spec.game).wire
        try:
            action = wire.action_from_text(text)
        except ValueError as e:
            raise TableError(400, f"{text!r} is no move of this game: {e}") from None
        before = len(seat.payloads)
        seat.request = None
        await referee.aio(seat.call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
            match_id=seat.table.match_id, request_id=req.request_id, action=action))))
        with trio.move_on_after(10):
            while len(seat.payloads) == before and not seat.over:
                await seat.changed.wait()
        answer = json.loads(seat.payloads[before]) if len(seat.payloads) > before else None
        if answer is not None and answer["kind"] == "action_rejected":
            seat.request = req  # the referee keeps the request open: the person chooses again
            reason = answer["message"]["actionRejected"].get("reason", "")
            raise TableError(422, f"the referee refused {text!r}: {reason}")
        return {"sent": text}


def _words(msg: bot_pb2.RefereeMessage, kind: str, describe: seat_lines.Describe) -> str:
    """A move's or a result's game content in the game's words (its wire's ``describe``), or ``""``."""
    part = {"event": msg.event, "deal_finished": msg.deal_finished.result,
            "game_finished": msg.game_finished.result}.get(kind)
    return seat_lines.game_text(part, describe) if part is not None else ""


# ----- the pages -----
def _room(request: Request) -> Room:
    room: Room = request.app.state.web.tables
    return room


def _seat(request: Request) -> Seat | None:
    return _room(request).seats.get(request.path_params["secret"])


def _page(title: str, body: str, *, status: int = 200, data: Mapping[str, str] | None = None) -> HTMLResponse:
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
    return HTMLResponse(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, '
        f'initial-scale=1"><title>{escape(title)} — Gin Arena</title>'
        '<link rel="stylesheet" href="/static/table.css"></head>\n'
        f'<body data-page="table"{attrs}>\n<header><nav><a href="/">standings</a> · '
        f'<a href="{PREFIX}">play the computer</a></nav></header>\n'
        f'<main>\n<h1>{escape(title)}</h1>\n{body}\n</main>\n'
        '<script src="/static/table.js" defer></script>\n</body></html>\n',
        status_code=status, headers=NO_STORE)


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status, headers=NO_STORE)


def _options(values: tuple[str, ...], default: str) -> str:
    return "".join(f'<option value="{escape(v)}"{" selected" if v == default else ""}>{escape(v)}</option>'
                   for v in values)


def choose_body(found: list[Choice], problem: str = "") -> str:
    """The new-table page: one form per game (its presets, its bots and, if it may be played by
    more than two, how many play)."""
    if not found:
        return '<p class="problem">No game with sample bots is installed.</p>'
    parts = [f'<p class="problem" role="alert">{escape(problem)}</p>'] if problem else []
    parts.append("<p>No account needed: pick the computer's player and the rules, and play at once "
                 "(the computer plays every other seat). There is no undo.</p>")
    for c in found:
        preset = "short" if "short" in c.presets else c.presets[0]
        parts.append(
            f'<form method="post" action="{PREFIX}" class="choose" data-game="{escape(c.game)}">'
            f'<h2>{escape(c.game)}</h2><input type="hidden" name="game" value="{escape(c.game)}">'
            f'<label>the computer <select name="bot">{_options(c.bots, c.bots[0])}</select></label>'
            f'<label>rules <select name="preset">{_options(c.presets, preset)}</select></label>'
            + (f'<label>players <select name="seats">{_options(tuple(map(str, c.seats)), str(c.default_seats))}'
               '</select></label>' if len(c.seats) > 1 else f'<input type="hidden" name="seats" value="{c.seats[0]}">')
            +             f'<button type="submit">play {escape(c.game)}</button></form>')
    return "\n".join(parts)


async def _form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_BYTES:
            raise TableError(413, f"a form holds at most {FORM_BYTES} bytes")
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = json.loads(body or b"{}")
        except ValueError as e:
            raise TableError(400, f"not JSON: {e}") from None
        if not isinstance(data, dict):
            raise TableError(400, "expected a JSON object")
        return {str(k): str(v) for k, v in data.items()}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


async def new_table(request: Request) -> Response:
    """GET: the choices; POST (``game``, ``preset``, ``bot``, ``seats``: 2 if left out): open a
    table, go to its seat's page."""
    if request.method != "POST":
        return _page("Play the computer", choose_body(choices()))
    try:
        form = await _form(request)
        seats = form.get("seats", "2")
        if not seats.isdigit():
            raise TableError(400, f"seats={seats!r}: expected a whole number")
        seat = _room(request).open(form.get("game", ""), form.get("preset", ""), form.get("bot", ""), int(seats))
    except TableError as e:
        return _page("Play the computer", choose_body(choices(), str(e)), status=e.status)
    return RedirectResponse(f"{PREFIX}/t/{seat.secret}", status_code=303, headers=NO_STORE)


def table_body() -> str:
    """The table (the script draws it from the stream)."""
    return (
        '<div id="status" role="status" aria-live="polite">connecting…</div>'
        '<section id="opponent" class="seat"></section>'
        '<section id="middle"><div id="piles"></div><div id="last"></div></section>'
        '<section id="me" class="seat"></section>'
        '<div id="clocks"><span id="my-clock"></span> <span id="their-clock"></span></div>'
        '<p id="problem" class="problem" role="alert"></p>'
        '<div id="selection" aria-live="polite"></div>'
        '<section id="moves" aria-label="your moves"></section>'
        '<section id="end" hidden></section>'
        '<section id="sheet"><h2>Score sheet</h2><table id="scores"><thead></thead><tbody></tbody></table></section>'
        '<section id="their-moves"><h2>Their moves</h2><ol id="log"></ol></section>'
        '<p id="replay" hidden></p>')


async def table_page(request: Request) -> Response:
    seat = _seat(request)
    if seat is None:
        return _page("No such table", '<p class="problem">No table here (it ended long ago, or the link is wrong).</p>',
                     status=404)
    base = f"{PREFIX}/t/{seat.secret}"
    players = " vs ".join(seat.table.spec.players)
    return _page(f"{seat.table.spec.game}: {players}", table_body(),
                 data={"events": f"{base}/events", "move": f"{base}/move", "seat": str(SEAT),
                       "players": json.dumps(list(seat.table.spec.players)),
                       "rematch": json.dumps(seat.again), "rematch-to": PREFIX})


async def table_replay(request: Request) -> Response:
    """The finished table's replay page (the HTML replay of ``arena replay --html``)."""
    seat = _seat(request)
    report = seat.table.report if seat is not None else None
    if seat is None or report is None or not report.replay_path:
        return _page("No replay", '<p class="problem">No replay here (yet).</p>', status=404)
    try:
        view = await trio.to_thread.run_sync(load, Path(report.replay_path))
    except (OSError, ReplayModelError) as e:
        return _page("No replay", f'<p class="problem">The replay cannot be shown: {escape(str(e))}</p>', status=404)
    return HTMLResponse(replay_html.replay_page(view, back_link=PREFIX, back_text="play again",
                                                assets=REPLAY_ASSETS), headers=NO_STORE)


async def table_move(request: Request) -> Response:
    """POST ``{"action": ID, "request_id": N}``: the person's move."""
    seat = _seat(request)
    if seat is None:
        return _error(404, "no table here")
    try:
        form = await _form(request)
        rid = form.get("request_id", "0")
        if not rid.isdigit():
            raise TableError(400, f"request_id={rid!r}: expected a whole number")
        return JSONResponse(await _room(request).move(seat, form.get("action", ""), int(rid)), headers=NO_STORE)
    except TableError as e:
        return _error(e.status, str(e))


async def table_events(request: Request) -> Response:
    """``text/event-stream``: every payload of the seat's session (``Last-Event-ID`` resumes)."""
    seat = _seat(request)
    if seat is None:
        return _error(404, "no table here")
    room = _room(request)
    client = request.client.host if request.client else ""
    refused = room.slots.refusal(client)
    if refused is not None:
        return refused
    last = request.headers.get("last-event-id", "0")
    start = int(last) if last.isdigit() else 0
    return room.stream(_events(seat, start, room.limits.sse_keepalive_s), lambda: room.slots.release(client))


async def _events(seat: Seat, start: int, keepalive_s: float) -> AsyncIterator[str]:
    sent = start
    while True:
        while sent < len(seat.payloads):
            sent += 1
            yield f"id: {sent}\nevent: table\ndata: {seat.payloads[sent - 1]}\n\n"
        if seat.over:
            yield "event: over\ndata: {}\n\n"
            return
        with trio.move_on_after(keepalive_s) as waited:
            await seat.changed.wait()
        if waited.cancelled_caught:
            yield ": keep-alive\n\n"
