"""The tables' model (``arena.web.tables``): what may be played, a table's settings, its seats
and places, the errors and the limits on guessing codes."""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog
import trio
from starlette.requests import Request
from starlette.responses import Response

import referee
import referee.lowlevel
from arena.run.samples import samples
from arena.web.i18n import N_, NS_, Lang
from gin_arena.v2 import bot_pb2
from referee import games

log = structlog.get_logger("arena")

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
    levels: tuple[tuple[str, str], ...] = ()
    """"Play the computer"'s difficulty: each level of ``referee.games.LEVELS`` one of its sample
    bots has (``SampleBot.level``), easiest first, with the first bot of that level."""


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
        levels = tuple((level, next(b.name for b in demo.bots if b.level == level))
                       for level in games.LEVELS if any(b.level == level for b in demo.bots))
        found.append(Choice(game, tuple(reg.game.preset_names()), tuple(b.name for b in demo.bots), seats,
                            demo.seats if demo.seats in seats else seats[0], levels))
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
    match: referee.lowlevel.Table | None = None
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
    def match(self) -> referee.lowlevel.Table | None:
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
