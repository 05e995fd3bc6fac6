"""Matches a killed referee left behind: on restart each journal becomes an interrupted replay
(``referee.table.journal.recover``) and a table that lists the match as ``interrupted``, its seed revealed."""

from __future__ import annotations

from pathlib import Path

import structlog

from referee.model.spec import DEFAULT_GAME, MatchReport, MatchSpec
from referee.table.flow import Table
from referee.table.journal import Interrupted, journals, recover

log = structlog.get_logger("referee")


def interrupted_table(found: Interrupted) -> Table:
    """A table for GetMatch/ListMatches/WatchMatch that shows the match as over: interrupted,
    no winner, the seed revealed, the interrupted replay's path and final hash."""
    header = found.header or {}
    players = tuple(header.get("players") or ["?"] * max(len(found.nonces), 2))
    spec = MatchSpec(players=players, match_id=found.match_id, seed=found.seed or None,
                     game=header.get("game", DEFAULT_GAME))
    table = Table(spec, None, lambda t: None, quiet=True)
    if found.nonces:
        table.nonces = list(found.nonces)
    result = found.result
    table.state = "interrupted"
    table.report = MatchReport(
        match_id=found.match_id, players=players, winner=None, termination="interrupted", faulting_seat=None,
        detail=result["detail"], outcome=None, substituted_seats=tuple(result["substituted_seats"]),
        seed=table.operator_seed, seed_commitment=table.commitment, replay_path=str(found.replay_path),
        replay_hash=found.final_hash, decisions=result["decisions"],
        think_ms=tuple(t // 1000 for t in result["think_us"]),
    )
    table.finished.set()
    return table


def recover_folder(folder: Path) -> list[Table]:
    """Every journal in ``folder`` made into an interrupted replay and its table, oldest first
    (a journal that cannot be read is left where it is, and logged)."""
    tables = []
    for path in journals(folder):
        try:
            found = recover(path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.error("journal_unreadable", journal=str(path), error=repr(e))
            continue
        log.warning("match_interrupted", match_id=found.match_id, deals=found.deals, replay=str(found.replay_path))
        tables.append(interrupted_table(found))
    return tables
