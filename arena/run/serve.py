"""``arena serve``: a standalone referee with the arena's bookkeeping — replays, a JSON log and a
database of every match it refereed (``serve.sqlite``, the arena's one schema) in one folder.
Other machines run ``arena tournament --referee HOST:PORT`` against it; remote bots connect to it
with their tokens."""

from __future__ import annotations

import json
import time
from pathlib import Path

import structlog
import trio

import referee
from arena.console import log_to_file
from arena.model.records import from_report
from arena.store import open_db, record_game
from referee import DEFAULT_TOKEN_FILE, resolve_operator_token

log = structlog.get_logger("arena")

FORGET_AFTER_S = 600.0
"""A finished match stays visible to GetMatch this long after it was recorded."""

async def serve(
    listen: str, folder: Path, *, ready: trio.Event | None = None, token_file: Path | None = None,
    public_watch: bool = False, tls: referee.ServerTLS | None = None, limits: referee.Limits | None = None,
) -> None:
    """Serve until cancelled, recording every finished match in ``folder/serve.sqlite``. The
    operator token comes from ``token_file``, the environment or ``folder/operator-token``;
    ``limits`` are the referee's (default :class:`referee.Limits`)."""
    folder.mkdir(parents=True, exist_ok=True)
    token = resolve_operator_token(token_file, folder / DEFAULT_TOKEN_FILE)
    log_to_file(folder / "serve.log")
    db = open_db(folder / "serve.sqlite", "serve")
    host, _, port = listen.rpartition(":")
    recorded: set[str] = {r["match_id"] for r in db.execute("SELECT match_id FROM games")}
    finished_at: dict[str, float] = {}
    try:
        async with referee.open_referee(host or "127.0.0.1", int(port or 0), folder / "replays", limits,
                                        operator_token=token.token, public_watch=public_watch, tls=tls) as ref:
            referee.tune_gc_for_server()
            print(f"referee listening on {ref.address}{' (TLS)' if tls else ''}; replays and records in {folder}",
                  flush=True)
            print(token.describe(), flush=True)
            log.info("serve_started", address=ref.address, folder=str(folder))
            if ready is not None:
                ready.set()
            while True:
                for match_id, table in list(ref.tables.items()):
                    report = table.report
                    if report is None or match_id in recorded:
                        continue
                    record_game(db, {"rules": json.dumps(table.spec.rules.to_dict()),
                                     "time_control": str(table.spec.time_control), "finished_at": time.time()},
                                from_report(report, 0.0))
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
