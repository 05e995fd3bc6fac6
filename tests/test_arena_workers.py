"""``--workers``: ``auto`` (the cores) is the default of ``arena tournament``, ``arena demo`` and
``arena ladder run``; ``auto`` never starts more workers than games can run at once, and none for
a remote referee; ``--workers 1`` plays in this process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.options import UsageError, cluster_spec
from arena.cli.parser import build_parser
from arena.run.placement import AUTO_GAMES_PER_WORKER, WORKERS_ENV, ClusterSpec
from tests._wait import RUN_HANG_S

COMMANDS = (["tournament", "--bots", "bots.toml"], ["demo"], ["ladder", "run"])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_auto_is_the_default_of_every_command_that_plays(command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    spec = cluster_spec(build_parser().parse_args(command))
    cores = os.cpu_count() or 1
    assert spec == ClusterSpec(cores, auto=True)
    assert spec.distributed == (cores > 1)
    one = cluster_spec(build_parser().parse_args([*command, "--workers", "1"]))
    assert one == ClusterSpec(1) and not one.distributed


def test_the_environment_sets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert cluster_spec(build_parser().parse_args(["demo"])) == ClusterSpec(3)


def test_auto_is_sized_for_the_run() -> None:
    auto = ClusterSpec(16, auto=True)  # (16 cores: a worker per two, eight)
    assert auto.sized(concurrency=4, games=1000) == ClusterSpec(4, auto=True)  # at most the concurrency
    assert auto.sized(concurrency=16, games=1000) == ClusterSpec(8, auto=True, threads=2)  # a worker per two cores
    # two cores: one referee (the arena's process) and a core for the bots beat two workers (issue 29:
    # bench/hosted.py --bots 20, 503-509 against 380-404 matches/min)
    assert not ClusterSpec(2, auto=True).sized(concurrency=10, games=1140).distributed
    assert ClusterSpec(4, auto=True).sized(concurrency=10, games=1140) == ClusterSpec(2, auto=True, threads=5)
    per = AUTO_GAMES_PER_WORKER
    assert auto.sized(concurrency=16, games=3 * per) == ClusterSpec(3, auto=True, threads=6)  # a worker per PER games
    assert auto.sized(concurrency=16, games=3 * per - 1) == ClusterSpec(2, auto=True, threads=8)
    assert not auto.sized(concurrency=16, games=2 * per - 1).distributed  # too small to gain: in this process
    assert not auto.sized(concurrency=16, games=3).distributed
    assert not auto.sized(concurrency=1, games=100).distributed  # one game at a time: in this process
    assert not auto.sized(concurrency=8, games=100, referee="host:50051").distributed  # played there
    explicit = ClusterSpec(8)
    assert explicit.sized(concurrency=2, games=1) == explicit  # what the user asked for
    # The workers play the concurrency between them (issue 29: one thread each played two games
    # at once on two workers, whatever the concurrency; the runner's other games waited in Dask).
    assert ClusterSpec(2).sized(concurrency=10, games=1) == ClusterSpec(2, threads=5)
    assert ClusterSpec(3).sized(concurrency=10, games=1) == ClusterSpec(3, threads=4)
    remote = ClusterSpec(8, "tcp://h:8786", auto=True)
    assert remote.sized(concurrency=1, games=1) == remote


def test_bad_workers_and_a_remote_referee_with_workers_are_usage_errors() -> None:
    for bad in ("0", "-2", "many"):
        with pytest.raises(UsageError, match="--workers must be auto or a whole number"):
            cluster_spec(build_parser().parse_args(["demo", "--workers", bad]))
    for extra in (["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:8786"]):
        with pytest.raises(UsageError, match="give one of them"):
            cluster_spec(build_parser().parse_args(["demo", "--referee", "127.0.0.1:50051", *extra]))
    plain = cluster_spec(build_parser().parse_args(["demo", "--referee", "127.0.0.1:50051", "--workers", "auto"]))
    assert not plain.sized(concurrency=4, games=10, referee="127.0.0.1:50051").distributed


def test_a_small_run_with_auto_is_played_in_the_arenas_process(tmp_path: Path) -> None:
    """A run of 4 games with ``--workers auto`` starts no local cluster (its start-up would cost
    more than the workers gain, bench/auto_workers.py) and its header says so."""
    env = {k: v for k, v in os.environ.items() if k != WORKERS_ENV}
    bot = 'name={} cmd="{{python}} -m arena._testbot"'
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--bot", bot.format("a"), "--bot",
                          bot.format("b"), "--games", "4", "--rules", "short", "--concurrency", "4",
                          "--workers", "auto", "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=RUN_HANG_S, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0].endswith(", on the embedded referee"), out.stdout
    assert "Games run on Dask" not in out.stdout
    assert not list((tmp_path / "run" / "logs").glob("worker-*.log"))
