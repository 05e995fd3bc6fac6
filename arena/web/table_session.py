"""A table's seats at the referee (``arena.web.tables``): each person's seat session, the
computer players' processes, the watch on a running match, and what each seat's page is sent
(its view, its end view, the game's words of each message)."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import grpc
import trio
from google.protobuf import json_format

import referee
import referee.lowlevel
from arena.replays import seat_lines
from arena.replays.base import Style
from arena.run.samples import launch, samples
from arena.web.i18n import N_, NS_
from arena.web.limits import WebLimits
from arena.web.table_model import (
    BOT_EXIT_S,
    MOVE_WAIT_S,
    NOTICES,
    PREFIX,
    SESSION_RETRY_S,
    TIME_RAN_OUT,
    WATCH_S,
    Seat,
    Table,
    TableError,
    log,
)
from gin_arena.v2 import bot_pb2, bot_pb2_grpc
from referee import games
from referee.cardcore.present import Words

_EOF = grpc.aio.EOF  # type: ignore[attr-defined]


class SeatSessions:
    """A :class:`~arena.web.tables.Room`'s running tables: each person's seat session at the referee,
    the computers' processes (the sample bots' launcher), the watch on each match, and the
    views and words each seat's page is sent. The lobby (``Room``) holds the state below."""

    ref: referee.Referee | None
    """The live referee (``None``: no tables)."""
    limits: WebLimits
    """The web's limits."""
    playing: int
    """Computer players running now (and promised to tables starting)."""
    record: Callable[[Table], None] | None
    """Called when a table with a signed-in person finishes."""
    seats: OrderedDict[str, Seat]
    """People's seats by secret."""
    tables: OrderedDict[str, Table]
    """Tables by code."""
    _nursery: trio.Nursery | None

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
        match = table.match
        sample = samples(table.settings.game).bot(bot)
        assert sample is not None  # (the table's settings offer only the game's own)
        try:  # (its own process group, its token in GIN_TOKEN only: ps shows argv; ended with the web at once)
            await referee.run_bot(launch(sample, name), self.ref.address, match.links[index].token, match.finished,
                                  label=f"{match.match_id} seat {index}", exit_grace_s=BOT_EXIT_S)
        except OSError as e:
            log.warning("table_bot_failed", match_id=match.match_id, reason=str(e))
            why = {"why": str(e)}
            self._notice(table, lambda _s: (NS_("the computer's player could not start: {why}"), why))
        finally:
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
                         view or self._view(reg, match, seat.index),
                         *_words(msg, kind, describe, reg.capabilities.event_words))
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
    def _view(reg: games.Registered, table: referee.lowlevel.Table, seat: int) -> dict[str, Any] | None:
        """The game's description of the seat's view now, with where in the match it is
        (``position``: the game and deal numbers); ``None`` before the match starts."""
        match = table.match
        if reg.presentation is None or match is None:
            return None
        return {"position": {"game": match.game_number, "deal": match.deal_number},
                **reg.presentation.present(reg.presentation.match_view(match, seat))}

    @staticmethod
    def _end_view(reg: games.Registered, table: referee.lowlevel.Table, seat: int,
                  at: tuple[int, int] | None) -> dict[str, Any] | None:
        """The game's description of the seat's view of the deal its stream is in (``at``) when the
        match has dealt the next one already — the stream lags the match: the deal's last moves and
        its end arrive after it — from the presentation's ``deal_end_view``; ``None``: the match is
        still in that deal (or the game cannot tell), the view now is the one."""
        match = table.match
        ended = reg.capabilities.deal_end_view
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


def _words(msg: bot_pb2.RefereeMessage, kind: str, describe: seat_lines.Describe,
           event_words: games.EventWords | None) -> tuple[str, dict[str, list[object]]]:
    """A move's or a result's game content in the game's words, or ``""``; with the texts that
    make it translatable (``t.game``): a move in the presentation's words where the game declares
    ``event_words`` (``games.Capabilities``), any other content in its ``describe``'s line (English)."""
    member = msg.event.WhichOneof("game") if kind == "event" else None
    if event_words is not None and member is not None:  # a plugin's ``other`` as Gin's and Rummy's own
        say = Words()
        try:
            return str(event_words(getattr(msg.event, member), say)), say.texts
        except ValueError as e:  # (the referee's own event: never expected; its plain line instead)
            log.warning("event_words_failed", game=msg.event.WhichOneof("game"), error=str(e))
    part = {"event": msg.event, "deal_finished": msg.deal_finished.result,
            "game_finished": msg.game_finished.result}.get(kind)
    return (seat_lines.game_text(part, describe) if part is not None else ""), {}
