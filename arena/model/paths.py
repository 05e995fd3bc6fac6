"""Paths inside a run folder, as its results files write them and as every reader finds them.

A run's ``results.json`` and ``games.csv`` name each replay relative to the run folder
(``replays/<match>.jsonl``), so that the folder can be copied or moved and still be read,
reported and audited. Runs of earlier versions named them as the referee wrote them: absolute,
or relative to the folder where the run was started; :func:`find_replay` reads both, and looks
inside the folder first (a copy must not be checked against its original).
"""

from __future__ import annotations

from pathlib import Path

REPLAYS_DIR = "replays"
"""The run folder's folder of replays."""
DISCARDED_DIR = "discarded"
"""Under :data:`REPLAYS_DIR`: replays of games that were played again (kept for inspection)."""


def in_folder(path: str, folder: Path) -> str:
    """``path`` relative to ``folder`` (POSIX separators) when the file is inside it; otherwise
    (a remote referee's replay elsewhere, no path) unchanged."""
    if not path:
        return path
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except (OSError, ValueError):
        return path


def replay_candidates(raw: str, folder: Path, match_id: str = "") -> list[Path]:
    """Where a listed replay may be, best first: relative to the run folder (the current form;
    ``folder`` may be the run's ``replays/``), the folder's replays by file name, then ``raw`` as
    given (an older run's absolute or start-folder-relative path), then by match id."""
    run = folder.parent if folder.name == REPLAYS_DIR else folder
    out: list[Path] = []
    if raw:
        p = Path(raw)
        if not p.is_absolute():
            out.append(run / p)
        out += [run / REPLAYS_DIR / p.name, run / REPLAYS_DIR / DISCARDED_DIR / p.name, p]
    if match_id:
        out.append(run / REPLAYS_DIR / f"{match_id}.jsonl")
    return out


def find_replay(raw: str, folder: Path, match_id: str = "") -> Path | None:
    """The replay file that ``raw`` (a listed path) or ``match_id`` names for the run in
    ``folder`` (``None``: none of :func:`replay_candidates` exists)."""
    return next((c for c in replay_candidates(raw, folder, match_id) if c.is_file()), None)
