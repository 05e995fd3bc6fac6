"""The rule test vectors (``/work/shared/vectors``, copied byte-for-byte into ``tests/vectors``).

``load(name)`` reads the shared copy next to the repository (``../shared/vectors``) when it
exists, else the copy kept in this repository, so the tests also run from a plain checkout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SHARED_DIR = Path(__file__).resolve().parents[2] / "shared" / "vectors"
"""The authoritative vectors, next to the repository."""
LOCAL_DIR = Path(__file__).resolve().parent / "vectors"
"""The copies kept in the repository."""
FILES = ("README.md", "deadwood.jsonl", "showdown.jsonl")
"""The files copied from the shared directory."""


def path(name: str) -> Path:
    """Where the vector file ``name`` is read from: the shared copy if present, else the local one."""
    shared = SHARED_DIR / name
    return shared if shared.exists() else LOCAL_DIR / name


def load(name: str) -> list[dict[str, Any]]:
    """The records of a ``.jsonl`` vector file, one per non-empty line, in file order."""
    with path(name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
