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
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

import trio
from starlette.responses import Response

import referee
from arena.model.schedule import PlayConfig
from arena.run.serve import PEOPLE_PREFIX
from arena.web.i18n import N_
from arena.web.limits import WebLimits
from arena.web.table_model import (
    CLOSED,
    GONE_KEPT,
    LEFT,
    LOBBY,
    NOTICES,
    PERSON,
    PREFIX,
    SEAT,
    STATIC_FILES,
    TABLES,
    TIME_RAN_OUT,
    CodeTries,
    Person,
    Place,
    Seat,
    Settings,
    SignedIn,
    StreamSlots,
    Table,
    TableError,
    choices,
    clean_code,
    log,
    new_code,
    nobody,
    target_of,
)
from arena.web.table_session import SeatSessions
from referee import games

__all__ = ["LOBBY", "NOTICES", "PERSON", "PREFIX", "SEAT", "STATIC_FILES", "TABLES", "TIME_RAN_OUT", "Room", "Seat",
           "Table", "TableError", "nobody"]
"""The tables' names the web and its tests use (the pages and doors are ``arena.web.table_views``)."""


class Room(SeatSessions):
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

    def play_computer(self, game: str, preset: str, bot: str, seats: str = "", level: str = "") -> Seat:
        """``/play``: a table with the person in seat 0 and ``bot`` in every other, started at once;
        no ``bot``: the game's first sample bot of difficulty ``level`` (``Choice.levels``)."""
        settings = self.settings(game, preset, seats)
        if not bot:
            bot = self._of_level(game, level)
        if bot not in settings.bots:
            raise TableError(400, N_("bot {bot}: {game}'s sample bots are {bots}"), bot=repr(bot), game=game,
                             bots=", ".join(settings.bots))
        self._computers(settings.seats - 1)
        seat = self.open(settings, PERSON)
        for i in range(1, settings.seats):
            self._place_bot(seat.table, i, bot)
        self._start_or_drop(seat)
        return seat

    @staticmethod
    def _of_level(game: str, level: str) -> str:
        """The sample bot of ``game`` that plays at difficulty ``level`` (400 naming the levels)."""
        levels = dict(next((c.levels for c in choices() if c.game == game), ()))
        if level not in levels:
            raise TableError(400, N_("difficulty {level}: {game} offers {levels}"), level=repr(level), game=game,
                             levels=", ".join(levels) or "-")
        return levels[level]

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
    def _unique(table: Table, name: str, sep: str = " ") -> str:
        """``name``, or ``name`` ``sep`` 2, 3, … if a place of ``table`` has it already."""
        taken = {p.name for p in table.places if p.kind != "empty"}
        found, n = name, 2
        while found in taken:
            found, n = f"{name}{sep}{n}", n + 1
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
        # the bot's name at any seat count; numbered (greedy-2, greedy-3) only when it takes another seat
        place.kind, place.name, place.seat, place.bot = "bot", self._unique(table, bot, "-"), None, bot
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
        try:  # (a person's table: an illegal move is asked again, a time loss hands the computer that move only)
            tc = referee.TimeControl(per_move_ms=int(st.move_s * 1000))
            play = PlayConfig(game=st.game, rules=rules, time_control=tc,
                              fault_policy="substitute", substitute_time_faults="move", repeat_illegal=True,
                              reconnect_grace_ms=int(grace * 1000))
            spec = play.spec(table.names(), match_id=f"{PEOPLE_PREFIX}{secrets.token_hex(6)}")
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
