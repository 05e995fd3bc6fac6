"""The live web's tests' pieces: ``arena serve`` with its web, in this process on free ports (the
real referee, the real store, Hypercorn and Starlette over real sockets), matches played on it by
in-process bots over real gRPC, and a plain HTTP client."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

import referee
from arena._testbot import greedy
from arena.run.serve import serve
from arena.web.data import StoreSource
from arena.web.limits import WebLimits
from arena.web.process import serve_web_process
from arena.web.server import serve_web
from gin_arena.v2 import bot_pb2, common_pb2
from referee.gin import RuleSet
from tests._bots import Client
from tests._wait import HANG_S, POLL_S

SHORT = RuleSet.preset("short", target=25)
"""Short matches: a few deals."""
HOSTILE = "<script>alert(1)</script>"
"""A bot name that must change nothing where it is shown."""


@dataclass(frozen=True)
class Served:
    """A running ``arena serve`` with its web."""

    url: str
    """The web's address (``http://127.0.0.1:PORT``)."""
    ref: referee.Referee
    """Its referee."""
    folder: Path
    """Its folder (``serve.sqlite``, ``replays/``)."""


@asynccontextmanager
async def served(folder: Path, limits: WebLimits | None = None, *, proxy_hops: int = 0, own_process: bool = True
                 ) -> AsyncIterator[Served]:
    """``arena serve`` (in process) with the live web, both on free ports (``proxy_hops``: the
    web's ``--web-proxy-hops``); the web, as ``arena serve --web`` serves it, from a process of
    its own (``arena.web.process``), or with ``own_process=False`` in this one (``arena
    tournament --web``'s)."""
    got: dict[str, Any] = {}

    async def web(ref: referee.Referee, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        db = folder / "serve.sqlite"
        async with trio.open_nursery() as nursery:
            if own_process:
                got["url"] = await nursery.start(partial(
                    serve_web_process, "127.0.0.1:0", db, folder, "test arena", ref, limits=limits or WebLimits(),
                    operator_token=ref.operator_token, tls=None, accounts=True, behind_tls=False,
                    proxy_hops=proxy_hops))
            else:
                got["url"] = await nursery.start(partial(
                    serve_web, "127.0.0.1:0", StoreSource(db, folder, "test arena", ref), limits=limits or WebLimits(),
                    operator_token=ref.operator_token, accounts_db=db, proxy_hops=proxy_hops))
            got["ref"] = ref
            task_status.started()

    ready = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(serve, "127.0.0.1:0", folder, ready=ready, token_file=folder / "operator-token",
                                   web=web))
        with trio.move_on_after(HANG_S):  # (a hang bound)
            await ready.wait()
        if not ready.is_set():
            raise AssertionError(f"the referee and its web did not start within {HANG_S:.0f} s")
        yield Served(got["url"], got["ref"], folder)
        nursery.cancel_scope.cancel()


def spec(players: tuple[str, ...], match_id: str, per_move_ms: int = 5000) -> referee.MatchSpec:
    return referee.MatchSpec(players=players, rules=SHORT, match_id=match_id,
                             time_control=referee.TimeControl(per_move_ms=per_move_ms))


Decide = Callable[[bot_pb2.RefereeMessage, Client], Awaitable[common_pb2.Action | None]]


def slow(seconds: float, gate: threading.Event | None = None) -> Decide:
    """A bot that thinks ``seconds`` a decision (so that a spectator sees the moves one by one)
    and plays the test bot's greedy moves (short deals: it sheds deadwood and knocks at once);
    with ``gate``, each decision also waits for it to be set (a match that cannot end before the
    test lets it, however slow the machine makes the test)."""
    pick = greedy(referee.DEFAULT_GAME)

    async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
        await asyncio.sleep(seconds)
        while gate is not None and not gate.is_set():
            await asyncio.sleep(POLL_S)
        return pick(msg.action_request)

    return decide


async def illegal(_msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
    """A bot that answers with an empty action (a fault)."""
    return common_pb2.Action()


async def play(s: Served, players: tuple[str, ...], match_id: str, *decide: Decide | None) -> referee.MatchReport:
    """Create a match on the server and play it with in-process bots to its end."""
    table = s.ref.create_match(spec(players, match_id))
    async with trio.open_nursery() as nursery:
        for seat, link in enumerate(table.links):
            how = decide[seat] if seat < len(decide) else None
            nursery.start_soon(referee.aio, Client(s.ref.address, link.token, name=players[seat]).play(how))
        with trio.move_on_after(HANG_S):  # (a hang bound: two tests sat here, or near, for 900 s once)
            await table.finished.wait()
        if not table.finished.is_set():
            links = [(link.name, link.connected.is_set()) for link in table.links]
            raise AssertionError(f"match {match_id} not over after {HANG_S:.0f} s: state {table.state!r}, "
                                 f"seats (name, connected) {links}")
    assert table.report is not None
    return table.report


@dataclass(frozen=True)
class Reply:
    """An HTTP response."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


def _fetch(url: str, method: str, headers: dict[str, str], data: bytes | None) -> Reply:
    request = urllib.request.Request(url, method=method, headers=headers, data=data)
    try:
        with urllib.request.urlopen(request, timeout=HANG_S) as r:
            return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


async def fetch(url: str, method: str = "GET", headers: dict[str, str] | None = None, data: bytes | None = None
                ) -> Reply:
    """One HTTP request (on a worker thread: the server runs on this one)."""
    return await trio.to_thread.run_sync(_fetch, url, method, headers or {}, data)


async def until(check: Callable[[], Awaitable[bool]], what: str, seconds: float = HANG_S) -> None:
    """Wait for ``check()`` (a hang bound, not a speed check)."""
    with trio.move_on_after(seconds):
        while not await check():
            await trio.sleep(0.05)
        return
    raise AssertionError(f"waited {seconds:.0f} s for {what}")
