"""The suite holds on a busy machine (issue 34): a test that gives up on a child process shows
what the child was doing; bench/loaded_suite.py starts its load and always ends it."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._wait import until

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


def test_a_childs_timeout_shows_what_the_child_wrote(pytester: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # In a pytest of its own: run in this process, the inner session left it unable to finish a
    # later web test (tests/test_web.py's first test hung to its timeout after it, every time).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))))
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makepyfile(test_child="""
import subprocess

def test_gives_up() -> None:
    raise subprocess.TimeoutExpired(["arena", "tournament"], 300, output="progress: 2/2 games 100% | 1 running\\n",
                                    stderr=b"still writing the replays")
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "child process at its timeout" in out and "arena tournament" in out and "ran past 300 s" in out
    assert "progress: 2/2 games 100% | 1 running" in out and "still writing the replays" in out


def _gone(pid: int) -> bool:
    """Whether a process has ended (a zombie waiting for its reaper counts as ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def _loaded_suite(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """bench/loaded_suite.py with two busy processes and a "pytest" that never ends; its load's pids."""
    hang = tmp_path / "python"
    hang.write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'step.pid'}\nexec sleep 100000\n")
    hang.chmod(0o755)
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "loaded_suite.py"), "--load", "2",
                                 "--steps", "serial", "--python", str(hang)], stdout=f, stderr=subprocess.STDOUT,
                                text=True)
    # (the step's own pid file: signalled before its Popen returned, the script would leave it behind)
    until(lambda: "+ load:" in out.read_text() and (tmp_path / "step.pid").exists(), "the load and the pytest step",
          alive=proc)
    line = next(x for x in out.read_text().splitlines() if x.startswith("+ load:"))
    pids = [int(p) for p in line.split("[")[1].rstrip("]").split(",")]
    assert len(pids) == 2 and not any(_gone(p) for p in pids)
    return proc, pids


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_loaded_suite_ends_its_load_on_sigterm(tmp_path: Path) -> None:
    proc, pids = _loaded_suite(tmp_path)
    proc.terminate()
    assert proc.wait(timeout=240) == 1  # (the step did not finish: a failure)
    until(lambda: all(_gone(p) for p in pids), "the busy processes to end")
    step = int((tmp_path / "step.pid").read_text())
    until(lambda: _gone(step), "the step's process to be killed with the script's load")
    assert "interrupted (signal 15): the load is killed" in (tmp_path / "out.txt").read_text()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_loaded_suites_load_ends_when_the_script_is_killed(tmp_path: Path) -> None:
    proc, pids = _loaded_suite(tmp_path)
    proc.kill()  # no finally runs: each busy loop sees its parent gone
    proc.wait(timeout=240)
    until(lambda: (tmp_path / "step.pid").read_text().strip() != "", "the step's pid")
    os.killpg(int((tmp_path / "step.pid").read_text()), signal.SIGKILL)  # (the step's "pytest", left behind)
    until(lambda: all(_gone(p) for p in pids), "the busy processes to end by themselves")


def _loaded_suite_module() -> Any:
    spec = importlib.util.spec_from_file_location("loaded_suite", ROOT / "bench" / "loaded_suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_a_signal_while_a_step_starts_interrupts_once_it_has_started() -> None:
    """A SIGTERM that comes while the script starts a step waits until the step's process is
    known, so the script's clean-up kills it (interrupted inside ``Popen``, the step was left
    running: the SIGTERM test above hung on it once under load)."""
    suite = _loaded_suite_module()
    old = signal.signal(signal.SIGTERM, suite._on_signal)
    try:
        reached: list[str] = []
        with pytest.raises(suite.Interrupted, match="signal 15"), suite.held_signals():
            signal.raise_signal(signal.SIGTERM)
            reached.append("the block's end")
        assert reached == ["the block's end"]
        with pytest.raises(suite.Interrupted, match="signal 15"):  # held no longer: at once
            signal.raise_signal(signal.SIGTERM)
            reached.append("past the signal")
        assert reached == ["the block's end"]
    finally:
        signal.signal(signal.SIGTERM, old)
