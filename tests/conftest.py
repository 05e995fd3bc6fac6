"""Shared test set-up: quiet logs (warnings and errors still show, as JSON, on stderr)."""

from __future__ import annotations

import os
import sys

import pytest

from arena.run.placement import WORKERS_ENV
from referee import configure_logging

# The suite's many small runs play in-process (``--workers 1``) unless a test asks for workers:
# a local Dask cluster costs seconds to start. The default itself (auto) is tested explicitly.
os.environ.setdefault(WORKERS_ENV, "1")


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    configure_logging("warning", json=True, stream=sys.stderr)
