"""``--web HOST:PORT`` of ``arena serve`` and ``arena tournament``: the live web beside the
referee (docs/web.md)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import trio

import referee
from arena.cli.options import UsageError, address, is_loopback
from arena.web.data import StoreSource
from arena.web.limits import WebLimits
from arena.web.server import serve_web
from referee import ListenError, check_can_listen

WebStarter = Callable[..., Awaitable[None]]
"""``starter(referee_or_None, task_status=…)``: what ``serve`` and ``run_tournament`` start."""


def add_web_options(p: argparse.ArgumentParser) -> None:
    """``--web`` and ``--web-limit``."""
    g = p.add_argument_group("the live web")
    g.add_argument("--web", default="", metavar="HOST:PORT",
                   help="serve the live web here (standings, matches, a live spectator view, replays, bots, "
                   "the JSON API; port 0: a free one, printed)")
    g.add_argument("--web-limit", action="append", default=[], metavar="KEY=VALUE",
                   help="a live-web limit, e.g. sse_connections=1000, sse_per_client=8, sse_queue=64 "
                   "(repeatable; docs/web.md#limits)")
    g.add_argument("--web-behind-tls", action="store_true",
                   help="a proxy in front serves the web over https: people's session cookies are always Secure "
                   "(docs/web.md#accounts)")


def web_starter(args: argparse.Namespace, db: Path, folder: Path, title: str, operator_token: str | None = None,
                *, accounts: bool = False) -> WebStarter | None:
    """The live web for ``--web`` over the store ``db`` (``None`` without ``--web``). The operator
    token is the referee's (``arena serve``) or ``operator_token``; on an address other machines
    reach the operator's door stays shut (the web serves no TLS: a token must not cross in clear).
    ``accounts``: people sign up and their games are stored in ``db`` (``arena serve``'s own store)."""
    if not args.web:
        return None
    host, _, port = address(args.web, "--web").rpartition(":")
    try:
        check_can_listen(host or "127.0.0.1", int(port))  # before anything is created
    except ListenError:
        raise UsageError(f"--web {args.web}: the address is in use or not this machine's; choose another "
                         "(port 0: a free one)") from None
    try:
        limits = WebLimits.parse(args.web_limit)
    except ValueError as e:
        raise UsageError(f"--web-limit {e}") from None
    open_door = is_loopback(host or "127.0.0.1")

    async def start(ref: referee.Referee | None, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                    ) -> None:
        token = operator_token or (ref.operator_token if ref is not None else "")
        source = StoreSource(db, folder, title, ref)
        async with trio.open_nursery() as nursery:
            where = await nursery.start(partial(serve_web, args.web, source, limits=limits,
                                                operator_token=token if open_door else None,
                                                accounts_db=db if accounts else None,
                                                behind_tls=args.web_behind_tls))
            door = "" if open_door else " (operator sign-in off: not a loopback address and no TLS)"
            print(f"live web on {where}{door}", flush=True)
            task_status.started()

    return start
