"""The rule test vectors, kept in ``tests/vectors`` (made by implementations independent of this
project; ``.ci/run`` checks that they are byte-identical to the originals where those are at hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTOR_DIR = Path(__file__).resolve().parent / "vectors"
"""The vector files kept in the repository."""


def path(name: str) -> Path:
    """The vector file ``name``."""
    return VECTOR_DIR / name


def load(name: str) -> list[dict[str, Any]]:
    """The records of a ``.jsonl`` vector file, one per non-empty line, in file order."""
    with path(name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
