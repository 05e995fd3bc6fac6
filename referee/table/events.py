"""The referee's event source: an in-process, multi-subscriber publication of its matches'
starts and ends (:class:`referee.model.events.MatchEvent`).

Publishing never waits: each subscriber has a bounded queue (the limit ``match_events_queue``);
one that lets it fill is dropped — its queue is closed, it reads what was queued and then gets
:class:`MatchEventsDropped` saying why — and every match goes on at full speed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import trio

from referee.model.events import MatchEvent, MatchEventsDropped
from referee.table.flow import Table


def table_event(table: Table) -> MatchEvent:
    """The event a table's state calls for: ``finished`` once it has its report, else ``started``."""
    if table.report is None:
        return MatchEvent.started(table.spec, table.match_id, table.state)
    return MatchEvent.finished(table.spec, table.report, table.state, table.game.result_fields(table.report.outcome))


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


class MatchEventHub:
    """Every subscription of one referee; :meth:`publish` hands an event to each without waiting."""

    def __init__(self, queue: int) -> None:
        if queue < 1:
            raise ValueError(f"a subscriber's queue must hold at least one event; got {queue}")
        self.queue = queue
        """How many unread events one subscriber may have (the limit ``match_events_queue``)."""
        self._subscribers: dict[MatchEvents, trio.MemorySendChannel[MatchEvent]] = {}
        self._closed = False

    @property
    def subscribers(self) -> int:
        """Subscriptions open now."""
        return len(self._subscribers)

    def publish(self, event: MatchEvent) -> None:
        """Queue ``event`` for every subscriber; one whose queue is full is dropped."""
        for events, send in list(self._subscribers.items()):
            try:
                send.send_nowait(event)
            except trio.WouldBlock:
                events.dropped = (f"dropped: {self.queue} match events were not read "
                                  "(limit match_events_queue); subscribe again")
                del self._subscribers[events]
                send.close()

    @asynccontextmanager
    async def subscribe(self, past: Sequence[MatchEvent] = ()) -> AsyncIterator[MatchEvents]:
        """A subscription for the body of the ``async with``; it first yields ``past`` (its queue
        holds them all, on top of :attr:`queue`)."""
        send, receive = trio.open_memory_channel[MatchEvent](self.queue + len(past))
        events = MatchEvents(receive)
        for event in past:
            send.send_nowait(event)
        if self._closed:
            send.close()
        else:
            self._subscribers[events] = send
        try:
            yield events
        finally:
            self._subscribers.pop(events, None)
            send.close()
            receive.close()

    def close(self) -> None:
        """The referee is closing: every subscription ends (after the events queued for it)."""
        self._closed = True
        for send in self._subscribers.values():
            send.close()
        self._subscribers.clear()
