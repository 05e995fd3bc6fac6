"""Per-bot resource limits (issue 22): ``[bot.limits] memory_mb, cpu_seconds`` in the manifest
(or ``memory_mb=`` / ``cpu_seconds=`` of ``--bot``) are set with ``setrlimit`` in the bot's
process before its program runs. A real bot that allocates memory or burns CPU dies, and its
game ends with a crash fault that names the limit — in results.json, the printed report and
the results page. Bad values are one line each and exit 2."""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arena.model.manifest import ManifestError, parse_inline_bot, parse_manifest
from referee import ProcessLimits
from referee.play.pool import renew_cpu_limit
from tests._wait import RUN_HANG_S

TESTBOT = '["{python}", "-m", "arena._testbot", "--mode", '


def arena(*args: str, timeout: float = RUN_HANG_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_a_bot_over_its_limits_dies_with_a_fault_naming_the_limit(tmp_path: Path) -> None:
    # hog: a process per game (the hard limits of a process started for one match);
    # burn: one process for match after match (its CPU limit renewed before each match).
    (tmp_path / "bots.toml").write_text(
        f'[[bot]]\nname = "hog"\ncommand = {TESTBOT}"hog"]\nrestart = "always"\n'
        "[bot.limits]\nmemory_mb = 200\n\n"
        f'[[bot]]\nname = "burn"\ncommand = {TESTBOT}"burn"]\n'
        "[bot.limits]\ncpu_seconds = 2\n")
    run = tmp_path / "run"
    out = arena("tournament", "--bots", str(tmp_path / "bots.toml"), "--games", "2", "--rules", "short",
                "--tc", "st=120 timemargin=1000", "--out", str(run))
    assert out.returncode == 0, out.stderr
    report = json.loads((run / "results.json").read_text())
    faults = {g["players"][g["faulting_seat"]]: g for g in report["games"]}
    assert faults["hog"]["termination"] == "crashed"
    assert faults["hog"]["detail"].endswith("before its match ended: memory_mb=200 exceeded (MemoryError)")
    assert faults["burn"]["termination"] == "crashed"
    assert "killed by SIGXCPU before its match ended: cpu_seconds=2 exceeded" in faults["burn"]["detail"]
    assert "memory_mb=200 exceeded (MemoryError)" in out.stdout and "cpu_seconds=2 exceeded" in out.stdout
    page = (run / "index.html").read_text()
    assert "memory_mb=200 exceeded (MemoryError)" in page and "cpu_seconds=2 exceeded" in page


def test_a_bot_within_its_limits_plays_normally(tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = arena("tournament", "--games", "2", "--rules", "short", "--tc", "st=30 timemargin=1000", "--out", str(run),
                "--bot", 'name=a cmd="{python} -m arena._testbot" memory_mb=400 cpu_seconds=60',
                "--bot", 'name=b cmd="{python} -m arena._testbot --mode random"')
    assert out.returncode == 0, out.stderr
    report = json.loads((run / "results.json").read_text())
    assert report["terminations"] == {"normal": 2}


@pytest.mark.parametrize(("limits", "why"), [
    ("memory_mb = -5", "memory_mb: must be a whole number of MiB >= 1; got -5"),
    ('cpu_seconds = "lots"', "cpu_seconds: must be a whole number of seconds >= 1; got 'lots'"),
    ("cpu_seconds = 1.5", "cpu_seconds: must be a whole number of seconds >= 1; got 1.5"),
    ("stack_mb = 8", "'stack_mb': unknown limit (known: memory_mb, cpu_seconds)"),
])
def test_bad_limits_in_a_manifest(tmp_path: Path, limits: str, why: str) -> None:
    text = f'[[bot]]\nname = "a"\ncommand = {TESTBOT}"first"]\n[bot.limits]\n{limits}\n'
    with pytest.raises(ManifestError) as e:
        parse_manifest(text, tmp_path / "bots.toml", minimum=1)
    assert e.value.problems == [f"{tmp_path / 'bots.toml'}: bot 'a' (#1): field 'limits': {why}"]
    (tmp_path / "bots.toml").write_text(text + f'\n[[bot]]\nname = "b"\ncommand = {TESTBOT}"first"]\n')
    out = arena("tournament", "--bots", str(tmp_path / "bots.toml"), "--out", str(tmp_path / "run"))
    assert out.returncode == 2, out.stderr  # the one problem, on one line under the heading
    assert out.stderr.strip().splitlines()[1:] == [f"  {tmp_path / 'bots.toml'}: bot 'a' (#1): field 'limits': {why}"]
    assert not (tmp_path / "run").exists()


def test_limits_of_inline_and_remote_bots(tmp_path: Path) -> None:
    bot = parse_inline_bot('name=a cmd="{python} -m arena._testbot" memory_mb=512 cpu_seconds=60', tmp_path)
    assert bot.limits == ProcessLimits(memory_mb=512, cpu_seconds=60)
    assert type(bot).from_dict(bot.to_dict()).limits == bot.limits  # (stored with the run)
    with pytest.raises(ManifestError, match="memory_mb: must be a whole number of MiB >= 1; got 'lots'"):
        parse_inline_bot('name=a cmd="{python} -m arena._testbot" memory_mb=lots', tmp_path)
    with pytest.raises(ManifestError, match="a remote bot's process is not the arena's to limit"):
        parse_manifest('[[bot]]\nname = "r"\nremote = true\nlimits = { cpu_seconds = 5 }\n', tmp_path / "m.toml",
                       minimum=1)


def test_what_the_limits_say_about_an_ended_process() -> None:
    limits = ProcessLimits(memory_mb=64, cpu_seconds=1)
    assert limits.exceeded(-signal.SIGXCPU) == "cpu_seconds=1 exceeded"
    assert limits.exceeded(1, b"Traceback ...\nMemoryError\n") == "memory_mb=64 exceeded (MemoryError)"
    assert limits.exceeded(-signal.SIGABRT, b"terminate called after throwing an instance of 'std::bad_alloc'") \
        == "memory_mb=64 exceeded (std::bad_alloc)"
    assert limits.exceeded(3, b"some other failure") == ""
    assert ProcessLimits().exceeded(-signal.SIGXCPU) == "" and not ProcessLimits()
    assert ProcessLimits().wrap(["bot"]) == ["bot"] and str(limits) == "memory_mb=64, cpu_seconds=1"
    with pytest.raises(ValueError, match="memory_mb must be a whole number >= 0"):
        ProcessLimits(memory_mb=-1)


def test_the_limits_are_those_of_the_started_process() -> None:
    """The wrapper sets the limits and execs the program: the process that runs (same pid)
    has them; a reused process's CPU limit has no hard end, and is renewed per match."""

    async def main() -> None:
        for reused, hard in ((False, 3 + 1), (True, resource.RLIM_INFINITY)):
            argv = ProcessLimits(memory_mb=300, cpu_seconds=3).wrap(["sleep", "30"], reused=reused)
            proc = await trio.lowlevel.open_process(argv)
            try:
                for _ in range(200):  # until it has exec'd
                    if Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(b"sleep"):
                        break
                    await trio.sleep(0.05)
                assert resource.prlimit(proc.pid, resource.RLIMIT_DATA) == (300 << 20, 300 << 20)
                assert resource.prlimit(proc.pid, resource.RLIMIT_CPU) == (3, hard)
                if reused:  # the CPU used so far (the wrapper's, before the exec) plus 3 seconds
                    stat = Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()
                    used = math.ceil((int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"))
                    renew_cpu_limit(proc.pid, 3)
                    assert resource.prlimit(proc.pid, resource.RLIMIT_CPU) == (used + 3, resource.RLIM_INFINITY)
            finally:
                proc.kill()
                await proc.wait()

    trio.run(main)
