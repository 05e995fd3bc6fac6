"""The live web's store reads kept between requests (``arena.web.views.StoreViews``): served
from memory while the store is unchanged, stale for at most ``view_stale_s`` once it changed
(read again in the background), bounded in number. Time is trio's mock clock."""

from __future__ import annotations

import trio
import trio.testing

from arena.web.limits import WebLimits
from arena.web.views import StoreViews


class Store:
    """A store whose reads are counted and give its current contents."""

    def __init__(self) -> None:
        self.contents = "v0"
        self.reads = 0

    async def read(self) -> str:
        self.reads += 1
        await trio.sleep(0.01)  # (a read takes time: a request meanwhile is served what is kept)
        return self.contents


def run(fn: object) -> None:
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[arg-type]


def test_an_unchanged_store_is_read_once_then_a_change_is_seen_within_view_stale_s() -> None:
    async def main() -> None:
        store, views = Store(), StoreViews(WebLimits(view_stale_s=1.0))
        async with trio.open_nursery() as nursery:
            views.nursery = nursery
            assert [await views.get("k", store.read) for _ in range(5)] == ["v0"] * 5
            assert store.reads == 1 and views.reads == 1

            store.contents = "v1"
            views.changed()
            assert await views.get("k", store.read) == "v0"  # young: served at once, not read again yet
            await trio.sleep(0.5)  # half view_stale_s old: served at once and read again behind it
            assert await views.get("k", store.read) == "v0"
            await trio.sleep(0.05)
            assert store.reads == 2
            assert await views.get("k", store.read) == "v1"
            assert await views.get("k", store.read) == "v1" and store.reads == 2  # unchanged since

            store.contents = "v2"
            views.changed()
            await trio.sleep(1.5)  # older than view_stale_s: read before answering
            assert await views.get("k", store.read) == "v2" and store.reads == 3
            nursery.cancel_scope.cancel()

    run(main)


def test_without_a_nursery_a_stale_read_is_made_before_answering_and_keys_are_apart() -> None:
    async def main() -> None:
        store, views = Store(), StoreViews(WebLimits())
        assert await views.get(("bot", "a", False), store.read) == "v0"
        store.contents = "v1"
        assert await views.get(("bot", "a", True), store.read) == "v1"  # another key: its own read
        views.changed()
        assert await views.get(("bot", "a", False), store.read) == "v1" and store.reads == 3

    run(main)


def test_at_most_cached_views_are_kept_the_least_recently_asked_forgotten() -> None:
    async def main() -> None:
        store, views = Store(), StoreViews(WebLimits(cached_views=2))
        for key in ("a", "b", "a", "c"):  # "b" is the least recently asked when "c" comes
            await views.get(key, store.read)
        assert list(views.kept) == ["a", "c"] and store.reads == 3
        await views.get("b", store.read)
        assert store.reads == 4

    run(main)


def test_a_background_read_that_fails_is_logged_and_the_next_request_reads_again() -> None:
    async def main() -> None:
        views = StoreViews(WebLimits(view_stale_s=1.0))
        calls = 0

        async def flaky() -> str:
            nonlocal calls
            calls += 1
            if calls == 2:
                raise OSError("disk gone")
            return f"r{calls}"

        async with trio.open_nursery() as nursery:
            views.nursery = nursery
            assert await views.get("k", flaky) == "r1"
            views.changed()
            await trio.sleep(0.6)
            assert await views.get("k", flaky) == "r1"  # its background read fails
            await trio.sleep(0.01)
            assert calls == 2 and not views.kept["k"].refreshing
            assert await views.get("k", flaky) == "r1"  # still young: kept, read again behind it
            await trio.sleep(0.01)
            assert await views.get("k", flaky) == "r3"
            nursery.cancel_scope.cancel()

    run(main)


def test_the_spectator_drawings_requests_add_are_bounded_by_cached_views() -> None:
    """``/api/matches/{id}`` draws a match's view through ``Web.view`` (kept per public event):
    past ``cached_views`` the drawings of matches no longer running are dropped."""
    from pathlib import Path
    from types import SimpleNamespace
    from typing import Any

    import referee
    from arena.web.server import Hub, Slots, Web

    limits = WebLimits(cached_views=2)
    source: Any = SimpleNamespace(live=None, folder=Path("."), title="t", read=None)
    web = Web(source, limits, None, Hub(limits), Slots(limits))
    for i in range(5):
        table: Any = SimpleNamespace(match_id=f"m{i}", spectator_log=SimpleNamespace(size=1), match=None,
                                     spec=SimpleNamespace(game=referee.DEFAULT_GAME),
                                     spectator_presentation=lambda: None)  # (before its first deal)
        assert web.view(table) is None
        assert len(web.views) <= 2


def test_refresh_reads_again_what_was_asked_lately_so_a_fetch_after_the_event_is_exact() -> None:
    """The store watcher calls ``refresh()`` after a change, before it publishes the standings:
    a page that fetches on that event must get the changed store, not the kept read."""
    async def main() -> None:
        store, views = Store(), StoreViews(WebLimits(view_stale_s=1.0))
        async with trio.open_nursery() as nursery:
            views.nursery = nursery
            assert await views.get("lately", store.read) == "v0"
            await trio.sleep(2)
            assert await views.get("other", store.read) == "v0"  # (another key, asked now)
            assert await views.get("lately", store.read) == "v0" and store.reads == 2
            await trio.sleep(0.2)
            store.contents = "v1"
            views.changed()
            await views.refresh()
            assert store.reads == 4  # both were asked within view_stale_s
            assert await views.get("lately", store.read) == "v1"
            assert await views.get("other", store.read) == "v1" and store.reads == 4

            await trio.sleep(1.5)  # nobody asks for 1.5 s
            store.contents = "v2"
            views.changed()
            await views.refresh()
            assert store.reads == 4  # not asked lately: not read again
            assert await views.get("lately", store.read) == "v2" and store.reads == 5  # (read when asked)
            nursery.cancel_scope.cancel()

    run(main)
