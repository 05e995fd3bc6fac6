"""Tables: people play each other and the computer in the browser (issue 21).

A **table** has the game's number of seats (``seat_counts()``: Gin 2, Rummy 2–6); each seat is a
person, a sample bot or empty until someone sits down. ``/play`` (no account) is a table with the
person in seat 0 and sample bots in the others, started at once. ``/tables/new`` (signed in) opens
a table with a **code** (13 base32 characters from :mod:`secrets`, 65 bits) and a join link
(``/tables/j/CODE``); friends join by code or link, the host fills empty seats with sample bots
and starts the game. ``/lobby`` lists the open public tables and the running ones to watch.

The browser plays through the same referee protocol as any bot. When a table starts, the web
creates its match on the live referee (``arena serve``'s, or a tournament's embedded one), starts
each sample bot as a real process with its seat's token (as tournaments do), and opens each
person's seat's session itself, with that seat's token, exactly like a bot: a ``BotService.Play``
stream. Only that seat's messages reach its page, each as proto3 JSON (``json_format``) with the
game's description of **that seat's** view beside it (``present(match_view(match, seat))``), so
the page can never show more than a bot in that seat would know. The page's answers go back as
the seat's ``ActionResponse``; the match is played with ``repeat_illegal``, so a forged action
gets the referee's ``action_rejected``.

Transport to a page: server-sent events for the stream (``/play/t/SECRET/events``, resumable with
``Last-Event-ID``) and a POST for each move; the seat's secret is in the path (≥ 192 random bits),
never shown to anyone else; every page is sent with ``Referrer-Policy: no-referrer`` and
``Cache-Control: no-store``. A person's page gone for ``person_away_s`` closes the seat's session
(the referee sees the disconnect); their link reopens it with the same token (the referee sends
the match, the deal and the open request again). People's tables are played with
``fault_policy="substitute"`` and a reconnect grace of ``person_grace_s`` counted from the moment
the page left: after it, the computer plays the seat to the end of the game, and every page says
so. Computer players running at once are bounded (``computer_players``): one more gets 503 naming it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import secrets
import subprocess
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Literal, Protocol
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
from arena.replays.steps import MatchView
from arena.run.samples import command, samples
from arena.run.serve import PEOPLE_PREFIX
from arena.web import i18n, pages
from arena.web.i18n import N_, NS_, Lang
from arena.web.limits import WebLimits
from gin_arena.v2 import bot_pb2, bot_pb2_grpc
from referee import games
from referee.cardcore.present import Words

log = structlog.get_logger("arena")
_EOF = grpc.aio.EOF  # type: ignore[attr-defined]

PREFIX = "/play"
"""Play the computer, and every seat's address (``/play/t/SECRET``)."""
TABLES = "/tables"
"""Tables with friends: ``/tables/new``, ``/tables/join``, ``/tables/j/CODE``."""
LOBBY = "/lobby"
"""The open public tables and the running ones."""
STATIC = Path(__file__).parent / "static"
STATIC_FILES: dict[str, str] = {name: (STATIC / name).read_text(encoding="utf-8")
                                for name in ("table.js", "table.css", "people.js")}
"""The table pages' scripts and style sheet (served by the web's ``/static/``)."""
FORM_BYTES = 4096
"""The largest form or move accepted."""
PERSON = "you"
"""The name of the person who plays the computer without an account."""
SEAT = 0
"""The seat of the person who plays the computer (``/play``), and of a table's host."""
BOT_EXIT_S = 5.0
"""Seconds the computer's process has to exit by itself after its match, before it is killed."""
REPLAY_ASSETS = ("/static/replay.css", "/static/replay.js")
"""The replay page's style sheet and script, as the web serves them."""
NO_STORE = {"Cache-Control": "no-store"}
"""A table's pages and answers are never cached (their address is the seat's credential)."""
CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
"""Base32's letters: a table code's."""
CODE_LENGTH = 13
"""A table code's characters (13 × 5 = 65 random bits)."""
CODE_WINDOW_S = 60.0
"""The window ``table_code_tries_per_minute`` counts wrong codes in."""
CLIENTS_TRACKED = 100_000
"""Client addresses whose wrong codes are counted at once (beyond: the count starts afresh)."""
TIME_RAN_OUT = NS_("your time ran out; the computer played that move")
"""What a person's page says when their clock ran out (the referee's ``ERROR_CODE_TOO_LATE``)."""
NOTICES = ("seats", "notice", "rematch", "closed")
"""The kinds of payload that are the table's own news, not the seat's session's messages."""
GONE_KEPT = 10_000
"""Seat links and table codes that stopped working before a start (a person left, the host closed
the table) remembered, to answer 410 saying why; the oldest are forgotten first (then 404)."""
LEFT = N_("You left this table before it started; your seat is free again.")
"""What a seat's link answers after its person left (410)."""
CLOSED = N_("The host closed this table before it started.")
"""What the others' pages say, and their links and the table's code answer (410), once the host left."""
MOVE_WAIT_S = 10.0
"""Seconds a move's POST waits for the referee's verdict in the stream (and the table's end for a
session reading the match's last messages)."""
WATCH_S = 1.0
"""Seconds between looks at a running table's seats when no public event wakes the web."""
SESSION_RETRY_S = 1.0
"""Seconds before a person's seat's session is opened again after the referee closed it."""


class StreamSlots(Protocol):
    """The web's live-update stream slots (``arena.web.server.Slots``)."""

    def refusal(self, client: str) -> Response | None: ...

    def release(self, client: str) -> None: ...


class Person(Protocol):
    """A signed-in person (``arena.web.accounts.Person``)."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...


SignedIn = Callable[[Request], "Person | None"]
"""Who signed in, from a request (``arena.web.accounts.signed_in``)."""


def nobody(_request: Request) -> Person | None:
    """Nobody signs in (a web without accounts)."""
    return None


# ----- what may be played -----
@dataclass(frozen=True, slots=True)
class Choice:
    """A game people may play at a table: its presets, seat counts and sample bots."""

    game: str
    """The game's registry name."""
    presets: tuple[str, ...]
    """Its rule-set presets (the game's registration's)."""
    bots: tuple[str, ...]
    """Its sample bots' names (as its registration lists them, ``Registered.bots``)."""
    seats: tuple[int, ...]
    """The numbers of seats it is played by (``seat_counts()``)."""
    default_seats: int
    """The seat count the forms offer first (its demo's, if the game allows it)."""


def choices() -> list[Choice]:
    """Every installed game with a presentation and sample bots (each as its registration lists
    them: a plugin's too, with no file of the arena touched)."""
    found = []
    for game in games.names():
        try:
            reg, demo = games.get(game), samples(game)
        except ValueError:
            continue
        if reg.presentation is None or not demo.bots:
            continue
        seats = tuple(reg.game.seat_counts())
        found.append(Choice(game, tuple(reg.game.preset_names()), tuple(b.name for b in demo.bots), seats,
                            demo.seats if demo.seats in seats else seats[0]))
    return found


def target_of(rules: Any) -> int | None:
    """The rules' game target, if they have one a table may set (an ``int`` field ``target``)."""
    if not dataclasses.is_dataclass(rules):
        return None
    value = getattr(rules, "target", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def new_code() -> str:
    """A table code: 13 base32 characters from :mod:`secrets` (65 bits)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def clean_code(text: str) -> str:
    """A typed code as stored: upper case, without spaces or dashes."""
    return "".join(c for c in text.upper() if c not in " -\t")


# ----- one table -----
@dataclass(frozen=True, slots=True)
class Settings:
    """What a table is played with (the host's choices; a rematch copies them)."""

    game: str
    """The game's registry name."""
    preset: str
    """The rules' preset."""
    target: int | None
    """The game target set (``None``: the preset's)."""
    seats: int
    """The number of seats."""
    move_s: float
    """Seconds for each decision."""
    public: bool
    """Listed in the lobby."""
    bots: tuple[str, ...]
    """The game's sample bots."""


PlaceKind = Literal["empty", "person", "bot"]


@dataclass(eq=False, slots=True)
class Place:
    """One seat of a table, before and while it is played."""

    kind: PlaceKind = "empty"
    """Empty, a person, or a sample bot."""
    name: str = ""
    """The name shown (a person's, or the bot's)."""
    person_id: int | None = None
    """The signed-in person's id (``None``: a guest or a bot)."""
    seat: Seat | None = None
    """A person's session at the table."""
    person: Any = None
    """The signed-in person (``arena.web.accounts.Person``), for recording the game."""
    bot: str = ""
    """A sample bot's name (one of the game's ``Registered.bots``)."""


@dataclass(eq=False, slots=True)
class Table:
    """A table of this web: its settings, its seats and, once started, its match."""

    code: str
    """The table's code (the join link's; private tables are found by it only)."""
    settings: Settings
    """What it is played with."""
    places: list[Place]
    """Its seats, by seat number."""
    match: referee.Table | None = None
    """The match on the referee (``None`` until the host starts it)."""
    substituted: set[int] = field(default_factory=set)
    """Seats the computer has been announced to play for (this game)."""
    rematch: str = ""
    """The code of the rematch's table, once a person asked for one."""
    over: bool = False
    """The match ended (or failed)."""
    started_at: float | None = None
    """When the host started it (``time.time()``)."""
    opened_at: float = field(default_factory=time.monotonic)
    """When it was opened (an open table not started within ``open_table_s`` is dropped)."""
    host_seat: int = SEAT
    """The host's seat: the opener's, until the host of the table a rematch follows accepts it."""
    host_of: int | None = None
    """A rematch's: the seat of the host of the table it follows (``None``: no rematch)."""

    @property
    def host(self) -> Seat | None:
        return self.places[self.host_seat].seat

    @property
    def open(self) -> bool:
        """Waiting for people or the host's start."""
        return self.match is None and not self.over

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.places)

    def seat_list(self) -> list[dict[str, Any]]:
        """What every page at the table is shown of its seats (no one's link)."""
        return [{"seat": i, "kind": p.kind, "name": p.name} for i, p in enumerate(self.places)]


@dataclass(eq=False, slots=True)
class Seat:
    """A person's seat at one table: its session's messages as the page is sent them."""

    secret: str
    """The seat's credential (in its address)."""
    table: Table
    """The table."""
    index: int
    """The seat's number."""
    payloads: list[str] = field(default_factory=list)
    """Every message of the seat's session, and the table's notices, as the page gets them (JSON
    text, numbered from 1)."""
    changed: trio.Event = field(default_factory=trio.Event)
    """Set when a payload is added (then replaced)."""
    call: Any = None
    """The seat's ``Play`` stream (``None`` while it has none)."""
    request: bot_pb2.ActionRequest | None = None
    """The seat's open request (``None``: not the seat's turn)."""
    over: bool = False
    """The table ended (the page's stream ends when it has sent everything)."""
    readers: int = 0
    """The seat's page's event streams open now."""
    left: int = 0
    """How many times the page's last stream ended (a close waits for the page's latest absence)."""
    away: trio.CancelScope | None = None
    """The seat's session while it runs (cancelled when the page has been gone ``person_away_s``)."""
    back: trio.Event = field(default_factory=trio.Event)
    """Set when the page comes back while the session is closed."""
    rematch_seat: Seat | None = None
    """The person's seat at the rematch's table."""
    ended: bool = False
    """The seat's page was sent the match's end (and the replay's link)."""

    def add(self, kind: str, message: Mapping[str, Any], view: Mapping[str, Any] | None, text: str = "",
            texts: Mapping[str, Any] | None = None) -> None:
        """Add a payload: the message, the view beside it, and ``text``, the message's game content
        in words (with ``texts``, its templates and fields, where the game made it translatable)."""
        payload = {"n": len(self.payloads) + 1, "kind": kind, "message": message, "view": view, "text": text}
        if texts:
            payload["texts"] = texts
        self.payloads.append(json.dumps(payload, separators=(",", ":")))
        self.changed.set()
        self.changed = trio.Event()

    @property
    def match(self) -> referee.Table | None:
        return self.table.match


class TableError(Exception):
    """A table that cannot be opened, joined or played: its HTTP status and why (``message`` in
    English: the JSON API's ``error``, the logs; :meth:`say` in a person's language: the msgid
    ``text``, its ``{fields}`` from ``values``, numbers in the language's digits)."""

    def __init__(self, status: int, text: str, **values: Any) -> None:
        self.status = status
        self.text = text
        """The msgid (English)."""
        self.values = values
        """Its fields."""
        self.message = text.format(**{k: f"{v:g}" if isinstance(v, float) else v for k, v in values.items()})
        """The English text."""
        super().__init__(self.message)

    def say(self, tr: Lang) -> str:
        """The message in ``tr``'s language (a number field in its digits; what the person typed,
        echoed, is a text field and stays as typed)."""
        return tr._(self.text, **{k: _local(tr, v) for k, v in self.values.items()})


def _local(tr: Lang, value: Any) -> Any:
    """A message field in ``tr``'s language: a number in its digits, anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return tr.number(value, "#,##0.###")


class CodeTries:
    """Wrong table codes by client address in the last minute (``table_code_tries_per_minute``)."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self.wrong: dict[str, deque[float]] = {}

    def refusal(self, client: str) -> TableError | None:
        """429 when ``client`` tried ``limit`` wrong codes in the last minute, else ``None``."""
        tries = self.wrong.get(client)
        now = self.clock()
        while tries and tries[0] <= now - CODE_WINDOW_S:
            tries.popleft()
        if tries is not None and not tries:
            del self.wrong[client]
        if tries and len(tries) >= self.limit:
            return TableError(429, N_("more than {limit} wrong table codes in a minute from this address "
                                      "(limit table_code_tries_per_minute); wait a minute"), limit=self.limit)
        return None

    def failed(self, client: str) -> None:
        if len(self.wrong) > CLIENTS_TRACKED:  # (a flood of addresses cannot grow this for ever)
            self.wrong.clear()
        self.wrong.setdefault(client, deque()).append(self.clock())


class Room:
    """Every table of this web: opened on the live referee, bounded by ``computer_players``."""

    def __init__(self, ref: referee.Referee | None, limits: WebLimits, slots: StreamSlots,
                 stream: Callable[[AsyncIterator[str], Callable[[], None]], Response],
                 signed_in: SignedIn = nobody) -> None:
        self.ref = ref
        self.limits = limits
        self.slots = slots
        self.stream = stream
        """The web's event-stream response (it gives its slot back however it ends)."""
        self.signed_in = signed_in
        """Who signed in (the accounts' ``signed_in``)."""
        self.seats: OrderedDict[str, Seat] = OrderedDict()
        """People's seats by secret, oldest first (finished ones beyond ``tables_kept`` tables are forgotten)."""
        self.tables: OrderedDict[str, Table] = OrderedDict()
        """Tables by code, oldest first."""
        self.playing = 0
        """Computer players running now (and promised to tables starting)."""
        self.tries = CodeTries(limits.table_code_tries_per_minute)
        self.gone: OrderedDict[str, str] = OrderedDict()
        """Seat secrets and ``code:CODE`` keys that stopped working before a start, with why (a msgid)."""
        self.record: Callable[[Table], None] | None = None
        """Called when a table with a signed-in person finishes (the accounts' ``record_game``)."""
        self._nursery: trio.Nursery | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the tables' sessions and bot processes until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            await trio.sleep(math.inf)

    # --- opening, joining, filling, starting ---
    def settings(self, game: str, preset: str, seats: str = "", move_s: str = "", target: str = "",
                 public: bool = False) -> Settings:
        """The table's settings from a form's texts (400 naming what is wrong)."""
        found = {c.game: c for c in choices()}
        choice = found.get(game)
        if choice is None and not found:
            raise TableError(400, N_("game {game}: no game with sample bots is installed"), game=repr(game))
        if choice is None:
            raise TableError(400, N_("game {game}: choose one of {games}"), game=repr(game), games=", ".join(found))
        if preset not in choice.presets:
            raise TableError(400, N_("preset {preset}: {game} has {presets}"), preset=repr(preset), game=game,
                             presets=", ".join(choice.presets))
        n = _number(seats, "seats", choice.seats[0])
        if n not in choice.seats:
            raise TableError(400, N_("seats={n}: {game} is played by {counts} players"), n=str(n), game=game,
                             counts=", ".join(map(str, choice.seats)))
        most = self.limits.table_move_s
        move = _number(move_s, "move_s", most, float)
        if not 1 <= move <= most:
            raise TableError(400, N_("move_s={move}: seconds per move are 1 to {most} (limit table_move_s)"),
                             move=f"{move:g}", most=most)
        goal: int | None = None
        if target.strip():
            base = target_of(games.get(game).game.rules_preset(preset))
            if base is None:
                raise TableError(400, N_("{game}'s {preset} rules have no game target to set"), game=game,
                                 preset=preset)
            goal = _number(target, "target", base)
            if not 1 <= goal <= self.limits.table_target_max:
                raise TableError(400, N_("target={target}: 1 to {most} (limit table_target_max)"), target=str(goal),
                                 most=self.limits.table_target_max)
        return Settings(game, preset, goal, n, move, public, choice.bots)

    def open(self, settings: Settings, host: str, person: Person | None = None) -> Seat:
        """A new table with ``host`` in seat 0 and the other seats empty."""
        self._live()
        now = time.monotonic()
        for code in [c for c, t in self.tables.items() if t.open and now - t.opened_at > self.limits.open_table_s]:
            for p in self.tables.pop(code).places:
                if p.seat is not None:
                    self.seats.pop(p.seat.secret, None)
        waiting = sum(1 for t in self.tables.values() if t.open)
        if waiting >= self.limits.open_tables:
            raise TableError(503, N_("the server holds {limit} tables waiting to start (limit open_tables); "
                                     "try again later"), limit=self.limits.open_tables)
        code = new_code()
        while code in self.tables:
            code = new_code()
        table = Table(code, settings, [Place() for _ in range(settings.seats)])
        self.tables[code] = table
        seat = self._sit(table, SEAT, host, person)
        self._forget()
        log.info("table_opened", code=code, game=settings.game, preset=settings.preset, seats=settings.seats)
        return seat

    def play_computer(self, game: str, preset: str, bot: str, seats: str = "") -> Seat:
        """``/play``: a table with the person in seat 0 and ``bot`` in every other, started at once."""
        settings = self.settings(game, preset, seats)
        if bot not in settings.bots:
            raise TableError(400, N_("bot {bot}: {game}'s sample bots are {bots}"), bot=repr(bot), game=game,
                             bots=", ".join(settings.bots))
        self._computers(settings.seats - 1)
        seat = self.open(settings, PERSON)
        for i in range(1, settings.seats):
            self._place_bot(seat.table, i, bot)
        self._start_or_drop(seat)
        return seat

    def _start_or_drop(self, seat: Seat) -> None:
        """Start a table nobody else will sit at; if it cannot start, it is gone."""
        try:
            self.start(seat)
        except TableError:
            del self.tables[seat.table.code], self.seats[seat.secret]
            raise

    def find(self, code: str, client: str) -> Table:
        """The table of a code (404 counting a wrong try; 429 after too many)."""
        refused = self.tries.refusal(client)
        if refused is not None:
            raise refused
        table = self.tables.get(clean_code(code))
        if table is None and "code:" + clean_code(code) in self.gone:
            raise TableError(410, self.gone["code:" + clean_code(code)])
        if table is None:
            self.tries.failed(client)
            raise TableError(404, N_("no table has that code (check it, or ask the host for the link)"))
        return table

    def join(self, table: Table, person: Person) -> Seat:
        """``person`` sits at the first empty seat (their seat again if they sat down already)."""
        for p in table.places:
            if p.kind == "person" and p.person_id == person.id and p.seat is not None:
                return p.seat
        if not table.open:
            raise TableError(409, N_("this table has started (watch it from the lobby)"))
        empty = [i for i, p in enumerate(table.places) if p.kind == "empty"]
        if not empty:
            raise TableError(409, N_("this table is full"))
        return self._sit(table, empty[0], person.name, person)

    def _sit(self, table: Table, index: int, name: str, person: Person | None) -> Seat:
        seat = Seat(secrets.token_urlsafe(24), table, index)
        place = table.places[index]
        place.kind, place.name, place.seat, place.person = "person", self._unique(table, name), seat, person
        place.person_id = person.id if person is not None else None
        self.seats[seat.secret] = seat
        self._told_seats(table)
        return seat

    @staticmethod
    def _unique(table: Table, name: str) -> str:
        taken = {p.name for p in table.places if p.kind != "empty"}
        found, n = name, 2
        while found in taken:
            found, n = f"{name} {n}", n + 1
        return found

    def fill(self, seat: Seat, index: int, bot: str) -> None:
        """The host puts sample bot ``bot`` in empty seat ``index``."""
        table = seat.table
        self._host(seat)
        if not table.open:
            raise TableError(409, N_("the table has started"))
        if not 0 <= index < len(table.places) or table.places[index].kind != "empty":
            raise TableError(400, N_("seat {seat} is not an empty seat of this table"), seat=index)
        if bot not in table.settings.bots:
            raise TableError(400, N_("bot {bot}: the sample bots are {bots}"), bot=repr(bot),
                             bots=", ".join(table.settings.bots))
        self._place_bot(table, index, bot)

    def leave(self, seat: Seat) -> None:
        """The person leaves the table before it starts: their seat is empty again and its link
        stops working (410); the host leaving closes the table (every page is told; the code and
        every seat's link stop working). After the start a seat is not left: the page closes and
        the computer plays it after the grace (409 says so)."""
        table = seat.table
        if not table.open:
            raise TableError(409, N_("the game has started: close the page and the computer plays your seat "
                                     "after the grace") if table.match is not None else N_("the table is closed"))
        if seat.index == table.host_seat:
            self.tables.pop(table.code, None)
            self._remember("code:" + table.code, CLOSED)
            for p in table.places:
                if p.seat is not None:
                    self._unseat(p.seat, CLOSED, "host" if p.seat is not seat else "left")
            table.over = True
            log.info("table_closed", code=table.code)
            return
        place = table.places[seat.index]
        place.kind, place.name, place.seat, place.person, place.person_id, place.bot = "empty", "", None, None, None, ""
        self._unseat(seat, LEFT, "left")
        self._told_seats(table)
        log.info("table_left", code=table.code, seat=seat.index)

    def _unseat(self, seat: Seat, why: str, how: str) -> None:
        """The seat's link stops working (410 with ``why``); its page is told (``how``: ``left``, it
        left; ``host``: the host closed the table) and its stream ends."""
        self.seats.pop(seat.secret, None)
        self._remember(seat.secret, why)
        seat.add("closed", {"message": why, "how": how}, None)
        seat.over = True

    def _remember(self, key: str, why: str) -> None:
        self.gone[key] = why
        while len(self.gone) > GONE_KEPT:
            self.gone.popitem(last=False)

    def _place_bot(self, table: Table, index: int, bot: str) -> None:
        place = table.places[index]
        name = bot if len(table.places) == 2 else f"{bot}-{index}"  # (at more seats: which seat's bot)
        place.kind, place.name, place.seat, place.bot = "bot", self._unique(table, name), None, bot
        place.person_id = place.person = None
        self._told_seats(table)

    def _host(self, seat: Seat) -> None:
        if seat.index != seat.table.host_seat:
            raise TableError(403, N_("only the table's host may do that"))

    def _live(self) -> None:
        if self.ref is None or self._nursery is None:
            raise TableError(503, N_("this web has no live referee: tables need `arena serve --web`"))

    def _computers(self, n: int) -> None:
        if n and self.playing + n > self.limits.computer_players:
            raise TableError(503, N_("the server runs {limit} computer players at once (limit computer_players; "
                                     "{running} running, this table needs {n}); try again later"),
                             limit=self.limits.computer_players, running=self.playing, n=n)

    def start(self, seat: Seat) -> None:
        """The host starts the table: the match, the bots' processes and the people's sessions."""
        self._host(seat)
        self._live()
        assert self.ref is not None and self._nursery is not None
        table = seat.table
        if not table.open:
            raise TableError(409, N_("the table has started already"))
        if any(p.kind == "empty" for p in table.places):
            raise TableError(409, N_("every seat needs a person or a sample bot first"))
        bots = [i for i, p in enumerate(table.places) if p.kind == "bot"]
        self._computers(len(bots))
        st = table.settings
        reg = games.get(st.game)
        rules = reg.game.rules_preset(st.preset)
        if st.target is not None:
            rules = dataclasses.replace(rules, target=st.target)
        people = any(p.person_id is not None for p in table.places)
        grace = self.limits.person_grace_s - self.limits.person_away_s
        spec = referee.MatchSpec(
            players=table.names(), game=st.game, rules=rules,
            time_control=referee.TimeControl(per_move_ms=int(st.move_s * 1000)), repeat_illegal=True,
            fault_policy="substitute", substitute_time_faults="move", reconnect_grace_ms=int(grace * 1000),
            match_id=f"{PEOPLE_PREFIX}{secrets.token_hex(6)}")
        try:
            match = self.ref.create_match(spec)
        except (referee.LimitExceeded, ValueError) as e:
            raise TableError(503 if isinstance(e, referee.LimitExceeded) else 400,
                             N_("the referee cannot start this table: {why}"), why=str(e)) from None
        table.match = match
        table.started_at = time.time()
        self.playing += len(bots)
        for i in bots:
            place = table.places[i]
            self._nursery.start_soon(self._bot, table, i, place.bot, place.name)
        for p in table.places:
            if p.seat is not None:
                self._nursery.start_soon(self._person, p.seat)
        self._nursery.start_soon(self._watch, table, people)
        self._told_seats(table)
        log.info("table_started", code=table.code, match_id=match.match_id, players=list(spec.players))

    def ask_rematch(self, seat: Seat) -> Seat:
        """The person asks for (or accepts) a rematch: a new table with the same settings and seats.
        The first to ask opens it (with the same bots); the others join it by clicking. Its host is
        the finished table's host once they ask or accept (while it has not started), else the
        first to ask. A table of one person and bots (``/play``'s) starts at once."""
        old = seat.table
        if not old.over:
            raise TableError(409, N_("the game is not over yet"))
        place = old.places[seat.index]
        if old.rematch and old.rematch in self.tables:
            table = self.tables[old.rematch]
            mine = seat.rematch_seat
            if mine is not None and mine.secret in self.seats:  # (not if they left it since)
                return mine
            if not table.open:
                raise TableError(409, N_("the rematch has started without you"))
            empty = [i for i, p in enumerate(table.places) if p.kind == "empty"]
            if not empty:
                raise TableError(409, N_("the rematch's table is full"))
            seat.rematch_seat = self._sit(table, empty[0], place.name, place.person)
            if seat.index == table.host_of and table.host_seat != empty[0]:  # the host is back: host again
                table.host_seat = empty[0]
                self._told_seats(table)
                log.info("table_host_back", code=table.code, seat=empty[0])
            return seat.rematch_seat
        self._live()
        new = self.open(old.settings, place.name, place.person)
        new.table.host_of = old.host_seat
        for p in old.places:
            if p.kind == "bot":
                free = next(i for i, q in enumerate(new.table.places) if q.kind == "empty")
                self._place_bot(new.table, free, p.bot)
        if not any(p.kind == "empty" for p in new.table.places):  # nobody to wait for (``/play``'s): at once
            self._start_or_drop(new)
        old.rematch = new.table.code
        seat.rematch_seat = new
        for p in old.places:
            if p.seat is not None:
                p.seat.add("rematch", {"code": new.table.code, "href": f"{TABLES}/j/{new.table.code}",
                                       "by": place.name}, None)
        return new

    def _forget(self) -> None:
        done = [c for c, t in self.tables.items() if t.over]
        for code in done[:max(0, len(done) - self.limits.tables_kept)]:
            for p in self.tables.pop(code).places:
                if p.seat is not None:
                    self.seats.pop(p.seat.secret, None)

    def _told_seats(self, table: Table) -> None:
        """Every person at the table gets its seats now (who sat down, whether it started)."""
        info = {"seats": table.seat_list(), "started": table.match is not None, "code": table.code,
                "open": table.open}
        for p in table.places:
            if p.seat is not None:
                p.seat.add("seats", {**info, "host": p.seat.index == table.host_seat}, None)

    def _notice(self, table: Table, text_for: Callable[[int], tuple[str, dict[str, str]]]) -> None:
        """Every person at the table gets a notice: ``text_for(seat)``'s msgid and fields."""
        for p in table.places:
            if p.seat is not None:
                msgid, values = text_for(p.seat.index)
                _tell(p.seat, msgid, **values)

    # --- running ---
    async def _bot(self, table: Table, index: int, bot: str, name: str) -> None:
        assert self.ref is not None and table.match is not None
        link = table.match.links[index]
        sample = samples(table.settings.game).bot(bot)
        assert sample is not None  # (the table's settings offer only the game's own)
        cmd = command(sample, self.ref.address, name)
        env = {**os.environ, "GIN_LOG_LEVEL": "WARNING", "GIN_TOKEN": link.token}  # (not in argv: ps shows argv)
        proc: trio.Process | None = None
        grace = 0.0  # seconds the computer's process has to end by itself (none when the web stops)
        try:
            proc = await trio.lowlevel.open_process(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                    stderr=subprocess.DEVNULL, env=env)
            await table.match.finished.wait()
            grace = BOT_EXIT_S
        except OSError as e:
            grace = BOT_EXIT_S
            log.warning("table_bot_failed", match_id=table.match.match_id, reason=str(e))
            why = {"why": str(e)}
            self._notice(table, lambda _s: (NS_("the computer's player could not start: {why}"), why))
        finally:
            with trio.CancelScope(shield=True):
                if proc is not None:
                    with trio.move_on_after(grace):
                        await proc.wait()
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
                self.playing -= 1

    async def _watch(self, table: Table, people: bool) -> None:
        """Tell every page when the computer takes a seat, and end the table with its match."""
        match = table.match
        assert match is not None
        changed = [trio.Event()]

        def sink(_event: object) -> None:
            changed[0].set()

        match.spectators.append(sink)
        game = 0
        try:
            while not match.over:
                current = match.match.game_number if match.match is not None else 0
                if current != game:
                    game, table.substituted = current, set()
                for i, link in enumerate(match.links):
                    if link.state.substituted and i not in table.substituted:
                        table.substituted.add(i)
                        self._substituted(table, i)
                changed[0] = trio.Event()
                with trio.move_on_after(WATCH_S):
                    await changed[0].wait()
            await match.finished.wait()
        finally:
            if sink in match.spectators:
                match.spectators.remove(sink)
        report = match.report
        for i in (report.substituted_seats if report is not None else ()):
            if i not in table.substituted:
                table.substituted.add(i)
                self._substituted(table, i)
        table.over = True
        for p in table.places:
            if p.seat is not None:
                if p.seat.away is not None:  # (its session is reading the match's end now)
                    with trio.move_on_after(MOVE_WAIT_S):
                        while p.seat.away is not None and not p.seat.ended:
                            await p.seat.changed.wait()
                if not p.seat.ended:  # the page was gone at the end: the result and the replay
                    if report is not None:
                        _tell(p.seat, NS_("the game is over ({detail})"), detail=report.detail)
                    else:
                        _tell(p.seat, NS_("the game is over"))
                    p.seat.add("replay", {"href": f"{PREFIX}/t/{p.seat.secret}/replay"}, None)
                    p.seat.ended = True
                p.seat.over = True
                p.seat.changed.set()
        if people and self.record is not None and report is not None:
            try:
                self.record(table)
            except Exception as e:  # (a failed record must not end the web)
                log.warning("table_record_failed", match_id=match.match_id, reason=repr(e))
        self._forget()

    def _substituted(self, table: Table, index: int) -> None:
        name = table.places[index].name
        log.info("table_seat_substituted", code=table.code, seat=index)
        self._notice(table, lambda s: (NS_("the computer plays for you to the end of the game"), {}) if s == index
                     else (NS_("the computer plays for {name} to the end of the game"), {"name": name}))

    async def _person(self, seat: Seat) -> None:
        """The person's seat's sessions: open at the start, closed while the page is gone, reopened
        (same token) when it comes back, until the match ends."""
        assert self.ref is not None
        match = seat.match
        assert match is not None
        if seat.readers == 0:
            self._gone(seat)
        try:
            while not match.over:
                with trio.CancelScope() as scope:
                    seat.away = scope
                    try:
                        if await self._session(seat, self.ref.address, match.links[seat.index].token):
                            return
                    except grpc.RpcError as e:
                        log.info("table_session_closed", match_id=match.match_id, seat=seat.index, reason=str(e))
                        if match.over:
                            return
                seat.away = None
                seat.call = seat.request = None
                if not scope.cancelled_caught:
                    await trio.sleep(SESSION_RETRY_S)  # (the referee closed it: not in a loop)
                while seat.readers == 0 and not match.over:
                    seat.back = trio.Event()
                    with trio.move_on_after(SESSION_RETRY_S):
                        await seat.back.wait()
                if seat.readers == 0:
                    return
        finally:
            seat.away = None
            seat.call = seat.request = None
            seat.changed.set()

    def _gone(self, seat: Seat) -> None:
        """The seat's page has no stream now: close its session after ``person_away_s`` unless it
        comes back first."""
        seat.left += 1
        if self._nursery is not None and seat.match is not None and not seat.over:
            self._nursery.start_soon(self._close_later, seat, seat.left)

    async def _close_later(self, seat: Seat, left: int) -> None:
        await trio.sleep(self.limits.person_away_s)
        if seat.readers == 0 and seat.left == left and seat.away is not None:
            log.info("table_person_away", code=seat.table.code, seat=seat.index)
            seat.away.cancel()

    async def _session(self, seat: Seat, address: str, token: str) -> bool:
        """One session of a person's seat: a bot's ``Play`` stream, every message forwarded;
        True when the match finished in it."""
        match = seat.match
        assert match is not None
        reg = games.get(match.spec.game)
        describe = seat_lines.describer(match.spec.game, Style())
        channel = grpc.aio.insecure_channel(address)
        try:
            stub: Any = bot_pb2_grpc.BotServiceStub(channel)
            call: Any = stub.Play()
            at: tuple[int, int] | None = None  # the deal the stream is in (its game and deal numbers)
            await referee.aio(call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(
                bot_name=seat.table.places[seat.index].name, token=token, protocol_version=2,
                client_info="arena web table (a person)", games=[match.spec.game]))))
            seat.call = call
            while True:
                msg = await referee.aio(call.read())
                if msg is _EOF:
                    return False
                kind = msg.WhichOneof("kind")
                seat.request = msg.action_request if kind == "action_request" else seat.request
                if kind in ("deal_finished", "game_finished", "match_finished"):
                    seat.request = None
                if kind == "deal_started":
                    at = (msg.deal_started.game_number, msg.deal_started.deal_number)
                elif kind == "deal_finished":
                    at = (msg.deal_finished.result.game_number, msg.deal_finished.result.deal_number)
                view = self._end_view(reg, match, seat.index, at)
                seat.add(kind, json_format.MessageToDict(msg, always_print_fields_with_no_presence=True),
                         view or self._view(reg, match, seat.index), *_words(msg, kind, describe, reg.wire))
                if kind == "error" and msg.error.code == bot_pb2.ERROR_CODE_TOO_LATE:
                    seat.request = None  # the computer played it; the person plays on from the next request
                    _tell(seat, TIME_RAN_OUT)
                if kind == "match_finished":
                    seat.add("replay", {"href": f"{PREFIX}/t/{seat.secret}/replay"}, None)
                    seat.ended = True
                    await referee.aio(call.done_writing())
                    return True
        finally:
            seat.call = None
            with trio.CancelScope(shield=True):
                await referee.aio(channel.close(None))

    @staticmethod
    def _view(reg: games.Registered, table: referee.Table, seat: int) -> dict[str, Any] | None:
        """The game's description of the seat's view now, with where in the match it is
        (``position``: the game and deal numbers); ``None`` before the match starts."""
        match = table.match
        if reg.presentation is None or match is None:
            return None
        return {"position": {"game": match.game_number, "deal": match.deal_number},
                **reg.presentation.present(reg.presentation.match_view(match, seat))}

    @staticmethod
    def _end_view(reg: games.Registered, table: referee.Table, seat: int,
                  at: tuple[int, int] | None) -> dict[str, Any] | None:
        """The game's description of the seat's view of the deal its stream is in (``at``) when the
        match has dealt the next one already — the stream lags the match: the deal's last moves and
        its end arrive after it — from the presentation's ``deal_end_view``; ``None``: the match is
        still in that deal (or the game cannot tell), the view now is the one."""
        match = table.match
        ended = getattr(reg.presentation, "deal_end_view", None)
        if at is None or ended is None or match is None or (match.game_number, match.deal_number) == at:
            return None
        view = ended(match, seat, *at)
        if view is None or reg.presentation is None:
            return None
        return {"position": {"game": at[0], "deal": at[1]}, **reg.presentation.present(view)}

    async def move(self, seat: Seat, text: str, request_id: int) -> dict[str, Any]:
        """Send the person's answer (a legal move's id) as the seat's ``ActionResponse``; the
        referee's verdict comes in the stream (``action_rejected`` for an illegal one)."""
        req = seat.request
        match = seat.match
        if match is None:
            raise TableError(409, N_("the table has not started"))
        if seat.call is None or seat.over:
            raise TableError(409, N_("the game is over") if seat.over else N_("your seat's session is not open"))
        if req is None or (request_id and request_id != req.request_id):
            raise TableError(409, N_("it is not your turn (or that request was answered)"))
        wire = games.get(match.spec.game).wire
        try:
            action = wire.action_from_text(text)
        except ValueError as e:
            raise TableError(400, N_("{move} is no move of this game: {why}"), move=repr(text), why=str(e)) from None
        before = len(seat.payloads)
        seat.request = None
        await referee.aio(seat.call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
            match_id=match.match_id, request_id=req.request_id, action=action))))
        with trio.move_on_after(MOVE_WAIT_S):
            while not _answered(seat, before) and not seat.over:
                await seat.changed.wait()
        answer = _answered(seat, before)
        if answer is not None and answer["kind"] == "action_rejected":
            seat.request = req  # the referee keeps the request open: the person chooses again
            reason = answer["message"]["actionRejected"].get("reason", "")
            raise TableError(422, N_("the referee refused {move}: {reason}"), move=repr(text), reason=reason)
        return {"sent": text}


def _tell(seat: Seat, msgid: str, **values: str) -> None:
    """A notice of the table's own on the seat's page: its English ``message``, and its msgid
    (marked ``NS_``: in the page's block) and fields for the page to show in its language."""
    seat.add("notice", {"message": msgid.format(**values), "msgid": msgid, "values": values}, None)


def _answered(seat: Seat, before: int) -> dict[str, Any] | None:
    """The first payload of the seat's session since ``before`` (the table's own notices aside)."""
    for text in seat.payloads[before:]:
        p: dict[str, Any] = json.loads(text)
        if p["kind"] not in NOTICES:
            return p
    return None


def _number(text: str, name: str, default: Any, kind: Callable[[str], Any] = int) -> Any:
    if not text.strip():
        return default
    try:
        value = kind(text.strip())
    except ValueError:
        raise TableError(400, N_("{name}={value}: expected a whole number") if kind is int
                         else N_("{name}={value}: expected a number"), name=name, value=repr(text)) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise TableError(400, N_("{name}={value}: expected a number"), name=name, value=repr(text))
    return value


def _words(msg: bot_pb2.RefereeMessage, kind: str, describe: seat_lines.Describe,
           wire: games.GameWire) -> tuple[str, dict[str, list[object]]]:
    """A move's or a result's game content in the game's words, or ``""``; with the texts that
    make it translatable (``t.game``): a move in the presentation's words where the wire has
    ``event_words``, any other content in its ``describe``'s line (English)."""
    event_words = getattr(wire, "event_words", None)
    member = msg.event.WhichOneof("game") if kind == "event" else None
    if event_words is not None and member not in (None, "other"):
        say = Words()
        try:
            return str(event_words(getattr(msg.event, member), say)), say.texts
        except ValueError as e:  # (the referee's own event: never expected; its plain line instead)
            log.warning("event_words_failed", game=msg.event.WhichOneof("game"), error=str(e))
    part = {"event": msg.event, "deal_finished": msg.deal_finished.result,
            "game_finished": msg.game_finished.result}.get(kind)
    return (seat_lines.game_text(part, describe) if part is not None else ""), {}


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
            f'{_seat_options(tr, c)}<button type="submit">{escape(tr._("play {game}", game=c.game))}</button></form>')
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
            f'<button type="submit">{escape(tr._("open a {game} table", game=c.game))}</button></form>')
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
                        st.seats, game=st.game, preset=st.preset, who=who)
    return _page(request, tr._("A {game} table", game=st.game),
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
        f'<section id="moves" aria-label="{escape(tr._("your moves"))}"></section>'
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
    return _page(request, f"{table.settings.game}: {tr._(' vs ').join(p.name or '…' for p in table.places)}",
                 table_body(tr),
                 data={"events": f"{base}/events", "move": f"{base}/move", "seat": str(seat.index),
                       "game": table.settings.game,
                       "fill": f"{base}/fill", "start": f"{base}/start", "rematch": f"{base}/rematch",
                       "leave": f"{base}/leave",
                       "join": f"{TABLES}/j/{table.code}", "bots": json.dumps(list(table.settings.bots)),
                       "signed": "yes" if room.signed_in(request) is not None else "",
                       "players": json.dumps(list(table.names()))})


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
