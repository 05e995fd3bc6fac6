"""The suite's own bounds: pytest's per-test timeout is a hang catcher above every single wait."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests._wait import HANG_S

ROOT = Path(__file__).resolve().parent.parent


def test_the_per_test_timeout_is_a_hang_catcher_above_a_waits_bound() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    timeout = float(options["timeout"])
    assert timeout >= 2 * HANG_S, (timeout, HANG_S)  # a test may wait on a process twice, then fail clearly
