"""Shared test set-up: quiet logs (warnings and errors still show, as JSON, on stderr); ``procs``,
the processes a test started, killed at its end if they still run."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from arena.run.placement import WORKERS_ENV
from referee import configure_logging
from tests import _plugin

# The suite's many small runs play in-process (``--workers 1``) unless a test asks for workers:
# a local Dask cluster costs seconds to start. The default itself (auto) is tested explicitly.
os.environ.setdefault(WORKERS_ENV, "1")
# The plugin game toy3 is the tests' alone: on their path, not installed in the user's venv.
_plugin.activate()


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    configure_logging("warning", json=True, stream=sys.stderr)


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """The processes a test starts (append them): any still running at its end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=30)
