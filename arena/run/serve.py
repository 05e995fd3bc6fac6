"""``arena serve``: a standalone referee with the arena's bookkeeping — replays, a JSON log and a
database of every match it refereed (``serve.sqlite``, the arena's one schema) in one folder.
Other machines run ``arena tournament --referee HOST:PORT`` against it; remote bots connect to it
with their tokens."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
import structlog
import trio

import referee
from arena.console import log_to_file
from arena.model.records import from_report
from arena.store import open_db, play_columns, record_game
from referee import DEFAULT_TOKEN_FILE, resolve_operator_token

log = structlog.get_logger("arena")

async def serve(
    listen: str, folder: Path, *, ready: trio.Event | None = None, token_file: Path | None = None,
    public_watch: bool = False, tls: referee.ServerTLS | None = None, limits: referee.Limits | None = None,
    operator_services: Sequence[Callable[[grpc.aio.Server], str]] = (),
) -> None:
    """Serve until cancelled, recording every finished match in ``folder/serve.sqlite``. The
    operator token comes from ``token_file``, the environment or ``folder/operator-token``;
    ``limits`` are the referee's (default :class:`referee.Limits`); ``operator_services`` are
    served beside the referee's, behind the operator token (the registered bots' ``ArenaService``)."""
    folder.mkdir(parents=True, exist_ok=True)
    token = resolve_operator_token(token_file, folder / DEFAULT_TOKEN_FILE)
    log_to_file(folder / "serve.log")
    db = open_db(folder / "serve.sqlite", "serve")
    host, _, port = listen.rpartition(":")
    recorded: set[str] = {r["match_id"] for r in db.execute("SELECT match_id FROM games")}
    try:
        async with referee.open_referee(host or "127.0.0.1", int(port or 0), folder / "replays", limits,
                                        operator_token=token.token, public_watch=public_watch, tls=tls,
                                        operator_services=operator_services) as ref:
            referee.tune_gc_for_server()
            print(f"referee listening on {ref.address}{' (TLS)' if tls else ''}; replays and records in {folder}",
                  flush=True)
            print(token.describe(), flush=True)
            log.info("serve_started", address=ref.address, folder=str(folder))
            if ready is not None:
                ready.set()
            await _record_matches(ref, db, recorded)
    finally:
        db.close()
        log_to_file(None)


async def _record_matches(ref: referee.Referee, db: sqlite3.Connection, recorded: set[str]) -> None:
    """Record every match the referee finishes, as its ``finished`` event arrives (the finished
    matches it already holds first: those a killed referee left). A subscription dropped for
    falling behind is opened again with the held matches; ``recorded`` keeps each match once.
    The referee forgets old finished matches on its own (its ``finished_matches`` limit)."""
    while True:
        try:
            async with ref.open_match_events(past=True) as events:
                async for event in events:
                    if event.report is not None and event.match_id not in recorded:
                        record_match(db, event)
                        recorded.add(event.match_id)
            return  # the referee closed
        except referee.MatchEventsDropped as e:
            log.warning("serve_events_dropped", reason=str(e))


def record_match(db: sqlite3.Connection, event: referee.MatchEvent) -> None:
    """Store a finished match's event in ``serve.sqlite``: its game, its rules (through the game),
    its time control and its outcome."""
    assert event.report is not None
    record_game(db, {"finished_at": time.time(), **play_columns(event.spec.game, event.spec.rules,
                                                                 event.spec.time_control)},
                from_report(event.report, 0.0))
