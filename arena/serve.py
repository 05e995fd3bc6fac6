"""``arena serve``: a standalone referee with the arena's bookkeeping — replays, a JSON log and a
database of every match it refereed in one folder. Other machines run ``arena tournament
--referee HOST:PORT`` against it; remote bots connect to it with their tokens."""

from __future__ import annotations

import json
import time
from pathlib import Path

import structlog
import trio

import referee

from .console import log_to_file
from .records import from_report
from .store import connect, outcome_columns, transaction

log = structlog.get_logger("arena")

FORGET_AFTER_S = 600.0
"""A finished match stays visible to GetMatch this long after it was recorded."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL, rules TEXT NOT NULL,
    time_control TEXT NOT NULL, finished_at REAL NOT NULL,
    winner INTEGER, termination TEXT, faulting_seat INTEGER, detail TEXT,
    points0 INTEGER, points1 INTEGER, games_won0 INTEGER, games_won1 INTEGER, deals INTEGER,
    decisions INTEGER, think0 INTEGER, think1 INTEGER, substituted TEXT,
    replay_path TEXT, replay_hash TEXT, revealed_seed TEXT, duration REAL
);
"""


async def serve(listen: str, folder: Path, *, ready: trio.Event | None = None) -> None:
    """Serve until cancelled, recording every finished match in ``folder/serve.sqlite``."""
    folder.mkdir(parents=True, exist_ok=True)
    log_to_file(folder / "serve.log")
    db = connect(folder / "serve.sqlite")
    db.executescript(_SCHEMA)
    host, _, port = listen.rpartition(":")
    recorded: set[str] = {r["match_id"] for r in db.execute("SELECT match_id FROM matches")}
    finished_at: dict[str, float] = {}
    try:
        async with referee.open_referee(host or "127.0.0.1", int(port or 0), folder / "replays") as ref:
            referee.tune_gc_for_server()
            print(f"referee listening on {ref.address}; replays and records in {folder}", flush=True)
            log.info("serve_started", address=ref.address, folder=str(folder))
            if ready is not None:
                ready.set()
            while True:
                for match_id, table in list(ref.tables.items()):
                    report = table.report
                    if report is None or match_id in recorded:
                        continue
                    cols = outcome_columns(from_report(report, 0.0))
                    names = ", ".join(cols)
                    marks = ", ".join(f":{k}" for k in cols)
                    with transaction(db):
                        db.execute(
                            "INSERT OR REPLACE INTO matches"
                            f" (seat0, seat1, rules, time_control, finished_at, {names})"
                            f" VALUES (:seat0, :seat1, :rules, :tc, :at, {marks})",
                            {
                                **cols,
                                "seat0": report.players[0],
                                "seat1": report.players[1],
                                "rules": json.dumps(table.spec.rules.to_dict()),
                                "tc": str(table.spec.time_control),
                                "at": time.time(),
                            },
                        )
                    recorded.add(match_id)
                    finished_at[match_id] = time.monotonic()
                # Forget recorded matches after a while (operators poll GetMatch until they see the
                # end; the referee itself never drops a table, so a long service would grow).
                for match_id, at in list(finished_at.items()):
                    if time.monotonic() - at > FORGET_AFTER_S:
                        ref.tables.pop(match_id, None)
                        del finished_at[match_id]
                await trio.sleep(0.5)
    finally:
        db.close()
        log_to_file(None)
