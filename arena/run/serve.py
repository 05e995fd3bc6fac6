"""``arena serve``: a standalone referee with the arena's bookkeeping — replays, a JSON log and a
database of every match it refereed (``serve.sqlite``, the arena's one schema) in one folder.
Other machines run ``arena tournament --referee HOST:PORT`` against it; remote bots connect to it
with their tokens."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import grpc
import structlog
import trio

import referee
import referee.lowlevel
from arena.console import log_to_file
from arena.model.records import from_report
from arena.store import open_db, play_columns, record_game
from referee.lowlevel import DEFAULT_TOKEN_FILE, resolve_operator_token

log = structlog.get_logger("arena")


class Hosting(Protocol):
    """What ``arena serve`` hosts beside its referee: ``arena.hosted``'s continuous ladder."""

    @property
    def directory(self) -> referee.lowlevel.BotDirectory:
        """Who a registered bot's token is (the server's registry)."""

    def columns(self, event: referee.MatchEvent) -> Mapping[str, Any]:
        """The ``games`` columns a finished match of its own is stored with (its pair, …)."""

    def recorded(self, event: referee.MatchEvent) -> None:
        """A finished match was stored (committed)."""

    async def run(self, ref: referee.Referee) -> None:
        """Host until cancelled (pair the connected bots)."""


async def serve(
    listen: str, folder: Path, *, ready: trio.Event | None = None, token_file: Path | None = None,
    public_watch: bool = False, tls: referee.ServerTLS | None = None, limits: referee.Limits | None = None,
    operator_services: Sequence[Callable[[grpc.aio.Server], str]] = (), hosting: Hosting | None = None,
    web: Callable[..., Awaitable[object]] | None = None,
) -> None:
    """Serve until cancelled, recording every finished match in ``folder/serve.sqlite``. The
    operator token comes from ``token_file``, the environment or ``folder/operator-token``;
    ``limits`` are the referee's (default :class:`referee.Limits`); ``operator_services`` are
    served beside the referee's, behind the operator token (the registered bots' ``ArenaService``);
    ``hosting`` runs beside the referee and accepts registered bots (the continuous ladder);
    ``web(referee, task_status=…)``, if given, is started beside the referee once it listens (the
    live web)."""
    private_folder(folder)
    private_folder(folder / "replays")
    token = resolve_operator_token(token_file, folder / DEFAULT_TOKEN_FILE)
    log_to_file(folder / "serve.log")
    db = open_db(folder / "serve.sqlite", "serve")
    private_store(folder / "serve.sqlite")
    host, _, port = listen.rpartition(":")
    recorded: set[str] = {r["match_id"] for r in db.execute("SELECT match_id FROM games")}
    try:
        async with referee.open_referee(host or "127.0.0.1", int(port or 0), folder / "replays", limits,
                                        operator_token=token.token, public_watch=public_watch, tls=tls,
                                        operator_services=operator_services,
                                        bot_directory=hosting.directory if hosting is not None else None) as ref:
            referee.lowlevel.tune_gc_for_server()
            print(f"referee listening on {ref.address}{' (TLS)' if tls else ''}; replays and records in {folder}",
                  flush=True)
            print(token.describe(), flush=True)
            log.info("serve_started", address=ref.address, folder=str(folder))
            async with trio.open_nursery() as nursery:
                if web is not None:
                    await nursery.start(web, ref)
                if ready is not None:
                    ready.set()
                if hosting is not None:
                    nursery.start_soon(hosting.run, ref)
                await _record_matches(ref, db, recorded, hosting)
                nursery.cancel_scope.cancel()
    finally:
        db.close()
        log_to_file(None)


FOLDER_MODE = 0o700
"""``arena serve``'s folder and its ``replays/``: only the server's user may list or read them
(the replays of a duplicate group still being played tell its games to come)."""
STORE_MODE = 0o600
"""``serve.sqlite`` and its ``-wal``/``-shm`` (people's password hashes, bots' token digests)."""


def private_folder(path: Path) -> None:
    """Make ``path`` if missing, and leave it ``FOLDER_MODE`` whatever it was."""
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    path.chmod(FOLDER_MODE)


def private_store(db: Path) -> None:
    """Leave the store and its sidecars ``STORE_MODE`` (SQLite makes new sidecars with the
    database file's mode)."""
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if path.exists():
            path.chmod(STORE_MODE)


PEOPLE_PREFIX = "table-"
"""Match ids of people's games at the live web's tables (``arena.web.tables``): not recorded with
the bots' games nor rated with them; the live web's accounts store and rate them apart
(``people_games``, ``arena.web.accounts.Accounts.record_game``)."""


async def _record_matches(ref: referee.Referee, db: sqlite3.Connection, recorded: set[str],
                          hosting: Hosting | None) -> None:
    """Record every match the referee finishes, as its ``finished`` event arrives (the finished
    matches it already holds first: those a killed referee left). A subscription dropped for
    falling behind is opened again with the held matches; ``recorded`` keeps each match once.
    The referee forgets old finished matches on its own (its ``finished_matches`` limit).
    A match's ``started`` event gives its ``started_at`` and duration (a match held from before a
    restart has neither)."""
    started: dict[str, float] = {}
    while True:
        try:
            async with ref.open_match_events(past=True) as events:
                async for event in events:
                    if event.match_id.startswith(PEOPLE_PREFIX):  # a person's game at the web's tables
                        if event.kind == "finished":
                            log.info("serve_people_table_finished", match_id=event.match_id,
                                     recorded="apart, by the live web's accounts (people_games)")
                        continue  # not the bots' ladder
                    if event.kind == "started":
                        started[event.match_id] = time.time()
                    if event.report is not None and event.match_id not in recorded:
                        began = started.pop(event.match_id, None)
                        record_match(db, event, hosting.columns(event) if hosting is not None else {}, began)
                        recorded.add(event.match_id)
                        if hosting is not None:
                            hosting.recorded(event)
            return  # the referee closed
        except referee.MatchEventsDropped as e:
            log.warning("serve_events_dropped", reason=str(e))


def record_match(db: sqlite3.Connection, event: referee.MatchEvent, columns: Mapping[str, Any],
                 started_at: float | None = None) -> None:
    """Store a finished match's event in ``serve.sqlite``: its game, its rules (through the game),
    its time control, its outcome, ``columns`` (its pair on the hosted ladder) and, when its start
    was seen (``started_at``, epoch seconds), when it started and how long it took."""
    assert event.report is not None
    now = time.time()
    record_game(db, {"started_at": started_at, "finished_at": now,
                     **play_columns(event.spec.game, event.spec.rules, event.spec.time_control), **columns},
                from_report(event.report, now - started_at if started_at is not None else 0.0))
