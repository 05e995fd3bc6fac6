"""Shared test set-up: quiet logs (warnings and errors still show, as JSON, on stderr); ``procs``,
the processes a test started, killed at its end if they still run; a child process's output in
the report of a test that gave up waiting on it (``subprocess.TimeoutExpired``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator, Iterator

import pytest

from arena.run.placement import WORKERS_ENV
from referee.lowlevel import configure_logging
from tests import _plugin

# The suite's many small runs play in-process (``--workers 1``) unless a test asks for workers:
# a local Dask cluster costs seconds to start. The default itself (auto) is tested explicitly.
os.environ.setdefault(WORKERS_ENV, "1")
# The plugin game toy3 is the tests' alone: on their path, not installed in the user's venv.
_plugin.activate()


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    configure_logging("warning", json=True, stream=sys.stderr)


TIMEOUT_TAIL_CHARS = 4000
"""How much of the end of each of a timed-out child's streams a report shows."""


def timed_out_output(e: subprocess.TimeoutExpired) -> str:
    """What a child that ran past its timeout had written (the end of its stdout and stderr):
    where it was stuck, for a test that gave up on it."""
    parts = []
    for name, data in (("stdout", e.stdout), ("stderr", e.stderr)):
        text = data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
        cut = "…" if len(text) > TIMEOUT_TAIL_CHARS else ""
        parts.append(f"--- {name} (its last {TIMEOUT_TAIL_CHARS} characters) ---\n{cut}{text[-TIMEOUT_TAIL_CHARS:]}"
                     if text else f"--- {name}: nothing (or not captured) ---")
    return f"{' '.join(map(str, e.cmd)) if isinstance(e.cmd, list) else e.cmd}\nran past {e.timeout} s\n" + \
        "\n".join(parts)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, object, None]:
    """A test that failed on a child's timeout shows what the child was doing (the section is
    added before the report is made of the item's sections)."""
    error = call.excinfo.value if call.excinfo is not None else None
    if isinstance(error, subprocess.TimeoutExpired):
        item.add_report_section(call.when, "child process at its timeout", timed_out_output(error))
    yield


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """The processes a test starts (append them): any still running at its end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=30)
