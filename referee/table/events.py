"""The referee's event source: an in-process, multi-subscriber publication of its matches'
starts and ends (:class:`referee.model.events.MatchEvent`).

Publishing never waits: each subscriber has a bounded queue (the limit ``match_events_queue``);
one that lets it fill is dropped — its queue is closed, it reads what was queued and then gets
:class:`MatchEventsDropped` saying why — and every match goes on at full speed.

Every published event is numbered (``sequence``, 1, 2, … within the hub's ``instance``, new at
each referee start) and the latest are kept in a bounded backlog (the limit
``match_events_backlog``), so a subscriber that lost its stream resumes after the last event it
got (:meth:`MatchEventHub.held_after`) while the backlog still reaches back that far."""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

import trio

from referee.model.events import DROPPED_REASON, MatchEvent, MatchEventsDropped
from referee.table.finished import HeldMatch


class EventSink(Protocol):
    """One subscriber's bounded queue, as the hub feeds it (trio's :class:`MatchEvents`, or the
    gRPC ``WatchMatches`` stream's on the asyncio side)."""

    def offer(self, event: MatchEvent) -> bool:
        """Queue ``event`` without waiting; ``False`` when the queue is full."""

    def end(self, dropped: str = "") -> None:
        """No more events: the referee closed (``dropped`` empty) or dropped it (why)."""


def table_event(table: HeldMatch) -> MatchEvent:
    """The event a table's state calls for: ``finished`` once it has its report, else ``started``."""
    if table.report is None:
        return MatchEvent.started(table.spec, table.match_id, table.state)
    return MatchEvent.finished(table.spec, table.report, table.state, table.game.result_fields(table.report.outcome),
                               table.operator_seed, tuple(table.nonces))


class MatchEvents:
    """One subscription: ``async for event in events`` (or :meth:`receive`) yields the events
    published since it opened, in order. It ends when the referee closes, and raises
    :class:`MatchEventsDropped` (after the events queued before) if it was dropped."""

    def __init__(self, receive: trio.MemoryReceiveChannel[MatchEvent]) -> None:
        self._receive = receive
        self.dropped = ""
        """Why this subscription was dropped (empty while it is not)."""

    async def receive(self) -> MatchEvent:
        """The next event; ``trio.EndOfChannel`` once the referee closed, :class:`MatchEventsDropped`
        once a dropped subscription's queue is read."""
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            if self.dropped:
                raise MatchEventsDropped(self.dropped) from None
            raise

    def __aiter__(self) -> AsyncIterator[MatchEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[MatchEvent]:
        while True:
            try:
                yield await self.receive()
            except trio.EndOfChannel:
                return


class _TrioSink:
    """A :class:`MatchEvents` subscription's sending side."""

    def __init__(self, events: MatchEvents, send: trio.MemorySendChannel[MatchEvent]) -> None:
        self.events = events
        self.send = send

    def offer(self, event: MatchEvent) -> bool:
        try:
            self.send.send_nowait(event)
        except trio.WouldBlock:
            return False
        return True

    def end(self, dropped: str = "") -> None:
        if dropped:
            self.events.dropped = dropped
        self.send.close()


class MatchEventHub:
    """Every subscription of one referee; :meth:`publish` numbers an event, keeps it in the
    backlog and hands it to each subscriber without waiting."""

    def __init__(self, queue: int, backlog: int = 1_000, instance: str = "") -> None:
        if queue < 1:
            raise ValueError(f"a subscriber's queue must hold at least one event; got {queue}")
        if backlog < 1:
            raise ValueError(f"the backlog must hold at least one event; got {backlog}")
        self.queue = queue
        """How many unread events one subscriber may have (the limit ``match_events_queue``)."""
        self.instance = instance or secrets.token_hex(8)
        """This referee process's name for its numbering (new at each start)."""
        self.sequence = 0
        """The number of the last event published (0: none yet)."""
        self._backlog: deque[MatchEvent] = deque(maxlen=backlog)
        self._subscribers: dict[EventSink, None] = {}
        self._closed = False

    @property
    def subscribers(self) -> int:
        """Subscriptions open now."""
        return len(self._subscribers)

    def publish(self, event: MatchEvent) -> MatchEvent:
        """Number ``event``, keep it in the backlog and queue it for every subscriber (one whose
        queue is full is dropped); returns the numbered event."""
        self.sequence += 1
        event = dataclasses.replace(event, sequence=self.sequence, time_ms=time.time_ns() // 1_000_000)
        self._backlog.append(event)
        for sink in list(self._subscribers):
            if not sink.offer(event):
                del self._subscribers[sink]
                sink.end(DROPPED_REASON.format(queue=self.queue))
        return event

    def held_after(self, sequence: int) -> list[MatchEvent] | None:
        """The published events after ``sequence`` (of this instance), oldest first; ``None``
        when the backlog no longer holds them all (or ``sequence`` is not yet published)."""
        if not 0 <= sequence <= self.sequence:
            return None
        if sequence == self.sequence:
            return []
        if not self._backlog or self._backlog[0].sequence > sequence + 1:
            return None
        return [e for e in self._backlog if e.sequence > sequence]

    def attach(self, sink: EventSink) -> None:
        """Feed ``sink`` every event published from now on (until :meth:`detach` or a drop);
        after :meth:`close` it is ended at once."""
        if self._closed:
            sink.end()
        else:
            self._subscribers[sink] = None

    def detach(self, sink: EventSink) -> None:
        """Stop feeding ``sink`` (nothing if it was dropped already)."""
        self._subscribers.pop(sink, None)

    @asynccontextmanager
    async def subscribe(self, past: Sequence[MatchEvent] = ()) -> AsyncIterator[MatchEvents]:
        """A subscription for the body of the ``async with``; it first yields ``past`` (its queue
        holds them all, on top of :attr:`queue`)."""
        send, receive = trio.open_memory_channel[MatchEvent](self.queue + len(past))
        events = MatchEvents(receive)
        sink = _TrioSink(events, send)
        for event in past:
            send.send_nowait(event)
        self.attach(sink)
        try:
            yield events
        finally:
            self.detach(sink)
            send.close()
            receive.close()

    def close(self) -> None:
        """The referee is closing: every subscription ends (after the events queued for it)."""
        self._closed = True
        for sink in self._subscribers:
            sink.end()
        self._subscribers.clear()
