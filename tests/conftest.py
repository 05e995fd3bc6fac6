"""Shared test set-up: quiet logs (warnings and errors still show, as JSON, on stderr)."""

from __future__ import annotations

import sys

import pytest

from referee._logging import configure_logging


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    configure_logging("warning", json=True, stream=sys.stderr)
