"""The live web's store reads, kept in memory between requests (:class:`StoreViews`).

A page or API call that reads the store (the recent matches, a bot's page) is served from what
was read for an earlier request while the store has not changed since (the store watcher counts
its changes: :attr:`StoreViews.version`). Once it has changed, a read younger than
``WebLimits.view_stale_s`` is still served — at once — and read again in the background for the
next request; an older one (or none) is read before answering. So under a busy ladder, where
games finish several times a second, a visitor never waits for the store (or for the interpreter
the matches share) behind a read: the answer is at most ``view_stale_s`` behind the store, and
the live updates (``/api/events``) stay exact. When the store changed, the store watcher reads
again what was asked for lately before it publishes the new standings (:meth:`StoreViews.refresh`),
so a page that fetches on that event is answered as of that event. A read is made again in the background only once
it is ``view_stale_s / 2`` old: on a store that changes all the time, each kept read costs at most
two reads a ``view_stale_s``, however many visitors ask.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog
import trio

from arena.web.limits import WebLimits

log = structlog.get_logger("arena")
T = TypeVar("T")


@dataclass(slots=True)
class _Kept:
    """One read kept: what it gave and when."""

    version: int
    """The store's version (:attr:`StoreViews.version`) when the read began."""
    read_at: float
    """When the read began (``trio.current_time()``)."""
    value: Any
    """What it gave."""
    read: Callable[[], Awaitable[Any]]
    """How to read it again."""
    asked_at: float
    """When a request last asked for it."""
    refreshing: bool = False
    """Whether a read of it again is under way in the background."""


class StoreViews:
    """Store reads kept between requests, keyed by what was asked (at most ``cached_views``,
    the least recently asked forgotten first)."""

    def __init__(self, limits: WebLimits) -> None:
        self.limits = limits
        self.version = 0
        """The store's version: the store watcher adds one each time it sees the store changed."""
        self.kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        self.nursery: trio.Nursery | None = None
        """Where background reads run (``None``: every stale read is done before answering)."""
        self.reads = 0
        """Reads of the store made (for tests and the bench: hits are the requests less these)."""

    def changed(self) -> None:
        """The store changed: what is kept is stale from now on."""
        self.version += 1

    async def get(self, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        """What ``read()`` gives for ``key``: kept if the store is unchanged since, or changed but
        read less than ``view_stale_s`` ago (then read again in the background once half that
        old); read now otherwise."""
        kept = self.kept.get(key)
        now = trio.current_time()
        if kept is not None:
            self.kept.move_to_end(key)
            kept.asked_at = now
            if kept.version == self.version:
                value: T = kept.value
                return value
            age = now - kept.read_at
            if age < self.limits.view_stale_s and self.nursery is not None:
                if not kept.refreshing and age >= self.limits.view_stale_s / 2:
                    kept.refreshing = True
                    self.nursery.start_soon(self._refresh, key, read, kept)
                value = kept.value
                return value
        return await self._read(key, read, now)

    async def _read(self, key: Hashable, read: Callable[[], Awaitable[T]], now: float) -> T:
        version = self.version
        self.reads += 1
        value = await read()
        current = self.kept.get(key)
        if current is None or current.read_at <= now:  # (a later read may have landed meanwhile)
            self.kept[key] = _Kept(version, now, value, read, current.asked_at if current else now)
            self.kept.move_to_end(key)
            while len(self.kept) > self.limits.cached_views:
                self.kept.popitem(last=False)
        return value

    async def refresh(self) -> None:
        """Read again, now, what was asked for in the last ``view_stale_s`` and is stale (the
        store watcher calls it when the store changed, before it publishes the new standings:
        a page that fetches on that event gets the store as the event says)."""
        now = trio.current_time()
        for key, kept in list(self.kept.items()):
            if kept.version != self.version and now - kept.asked_at < self.limits.view_stale_s:
                try:
                    await self._read(key, kept.read, trio.current_time())
                except Exception:  # the next request reads it again, and shows the error if it persists
                    log.exception("web_view_read_failed", key=repr(key))

    async def _refresh(self, key: Hashable, read: Callable[[], Awaitable[T]], kept: _Kept) -> None:
        try:
            await self._read(key, read, trio.current_time())
        except Exception:  # the next request reads it again, and shows the error if it persists
            log.exception("web_view_read_failed", key=repr(key))
        finally:
            kept.refreshing = False
