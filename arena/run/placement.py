"""Where a run's games are played: this process, or Dask workers (``arena.run.cluster``, which
alone imports Dask). The values and the seam the runner needs, without Dask."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from referee import BotLaunch, MatchObserver, MatchSpec, PlayedMatch

Stalls = tuple[tuple[float, float], ...]
"""A loop's stalls: (seconds before now it woke, seconds it stalled), most recent last."""


class ClusterObserver(MatchObserver):
    """A :class:`referee.MatchObserver` that also hears where a game was played."""

    def played_on(self, worker: str, stalls: Stalls, seconds: float) -> None:
        """The game was played on ``worker``, whose loop stalled so before the game's end, in
        ``seconds`` there (its task's time: not the time it waited for the worker)."""


class GameCluster(Protocol):
    """What the runner needs of a cluster (:class:`arena.run.cluster.Cluster`)."""

    @property
    def lost(self) -> bool:
        """Whether the scheduler was lost."""

    async def play(self, spec: MatchSpec, launches: Sequence[BotLaunch], observer: ClusterObserver) -> PlayedMatch:
        """Play one game on a worker (``InfrastructureFailure`` if it cannot be)."""

    def slots(self, concurrency: int, waiting: int) -> int:
        """Games that may be submitted at once for ``concurrency`` played at once, with
        ``waiting`` games not submitted yet."""

    async def watch(self, changed: Callable[[int], None]) -> None:
        """Follow the workers while the run lasts: ``changed(count)`` when workers are lost or
        join; after ``worker_wait_s`` without any, the games waiting for one fail."""


class BotsUnreachable(Exception):
    """Bots that cannot start on the cluster's workers, checked before a run starts."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        """One line per worker and bot: ``worker ADDRESS: bot 'NAME': why``."""
        super().__init__("bots cannot start on the Dask workers (a bot's folder, program and modules must be "
                         "found on every worker at the same paths as here):\n  " + "\n  ".join(self.problems))


class InfrastructureFailure(RuntimeError):
    """A game's task failed on every retry (its workers died, or the scheduler was lost): not a
    bot's loss; the game stays pending and ``--resume`` plays it."""


class NoWorkers(InfrastructureFailure):
    """No Dask worker connected to the scheduler within ``--worker-wait`` seconds (before the
    run's first game, or after the last worker was lost)."""


AUTO_GAMES_PER_WORKER = 32
"""``--workers auto`` starts a local worker only for this many of the run's games (fewer than
two workers' worth: none, the arena's process plays them). Starting a local cluster costs about
10 s and each worker starts its own bots, while on two cores two workers play at about 1.2× the
rate of the arena's process (docs/performance.md) — a third of a second gained per game of two
seconds: break-even near 30 games per worker pair on a quiet machine, more on a busy one. Measured
(``bench/auto_workers.py``, a loaded 2-core machine): 12 games 18.4 s in the process, 50.3 s on
two workers; 48 games 31.5 s against 39.0 s."""
AUTO_CORES_PER_WORKER = 2
"""``--workers auto`` starts one local worker per this many cores: a worker's referee (one trio
loop, one process) uses up to a core and the bots it plays need the rest. On two cores that is
the arena's own process, one referee: the local tournament of ``bench/hosted.py --bots 20``
played 503–509 matches/min there against 380–404 on two workers with ``--clock wall``, and 228
against 203 with ``--clock cpu`` (docs/performance.md) — the second worker's Dask scheduler,
nannies, round-trips and second process of every bot cost more than its referee gained."""
WORKER_WAIT_S = 60.0
"""How long a run waits for a Dask worker (``--worker-wait``): before its first game, and after
its last worker was lost."""


DASHBOARD = "127.0.0.1:0"
"""Where a local cluster's dashboard listens unless ``--dask-dashboard`` says (any free port)."""
PORTS_PER_WORKER = 3
"""The ports a local worker takes from ``--dask-worker-ports LO:HI``: worker ``i`` listens on
``LO + 3i``, its nanny (the arena's side of it, which restarts it) on ``LO + 3i + 1`` and its
HTTP server (health and metrics) on ``LO + 3i + 2``."""
WORKERS_ENV = "GIN_ARENA_WORKERS"
"""The environment's default for ``--workers`` (unset: ``auto``); the test suite sets it to 1 so
that its many small runs do not each start a local cluster."""


@dataclass(frozen=True, slots=True)
class DaskTLS:
    """The arena's side of a Dask cluster's mutual TLS (``--scheduler tls://…``): the files
    Dask's own ``--tls-ca-file``/``--tls-cert``/``--tls-key`` name on its scheduler and workers."""

    ca: str
    """CA certificates (PEM) the scheduler's certificate must chain to."""
    cert: str
    """The arena's client certificate (PEM), signed by a CA the scheduler trusts."""
    key: str
    """Its private key (PEM)."""

    @staticmethod
    def parse(scheduler: str, ca: str, cert: str, key: str) -> DaskTLS | None:
        """The TLS files given for ``scheduler`` (``None``: none given); a usage error names a
        missing one or files given for a scheduler reached in the clear."""
        given = {"--scheduler-ca": ca, "--scheduler-cert": cert, "--scheduler-key": key}
        if not any(given.values()):
            if scheduler.startswith("tls://"):
                raise ValueError(f"--scheduler {scheduler} takes --scheduler-ca, --scheduler-cert and "
                                 "--scheduler-key (the arena's side of the cluster's mutual TLS)")
            return None
        missing = [flag for flag, value in given.items() if not value]
        if missing:
            raise ValueError(f"Dask TLS needs {', '.join(missing)} too")
        if not scheduler.startswith("tls://"):
            raise ValueError(f"--scheduler-ca/-cert/-key are for a scheduler at tls://HOST:PORT; got "
                             f"{scheduler or 'no --scheduler'!r}")
        for flag, value in given.items():
            if not Path(value).is_file():
                raise ValueError(f"{flag} {value}: no such file")
        return DaskTLS(ca, cert, key)


def _port(flag: str, text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise ValueError(f"{flag} must be a port number 0-65535; got {text!r}")
    return int(text)


@dataclass(frozen=True, slots=True)
class LocalPorts:
    """Where a local cluster (``--workers N``) listens, all on 127.0.0.1 (by default every port
    is any free one: another run, or anything else, may hold a fixed one)."""

    scheduler: int = 0
    """The scheduler's port (``--dask-scheduler-port``; 0: any free port)."""
    dashboard: str = DASHBOARD
    """The dashboard's ``HOST:PORT`` (``--dask-dashboard``; ``""``: no dashboard, its HTTP
    server (health, metrics) then on any free port of 127.0.0.1)."""
    workers: tuple[int, int] | None = None
    """The first and last port the workers may take (``--dask-worker-ports LO:HI``,
    :data:`PORTS_PER_WORKER` each); ``None``: any free ports."""

    @property
    def pinned(self) -> bool:
        """Whether any of them was given."""
        return self != LocalPorts()

    @staticmethod
    def parse(scheduler: str = "0", dashboard: str = DASHBOARD, workers: str = "") -> LocalPorts:
        """``--dask-scheduler-port PORT``, ``--dask-dashboard HOST:PORT|PORT|off`` and
        ``--dask-worker-ports LO:HI`` (``""``: any)."""
        where = "" if dashboard == "off" else dashboard if ":" in dashboard else f"127.0.0.1:{dashboard}"
        if where:
            host, _, port = where.rpartition(":")
            _port("--dask-dashboard", port)
            if not host:
                raise ValueError(f"--dask-dashboard must be HOST:PORT, PORT or off; got {dashboard!r}")
        span = None
        if workers:
            lo, sep, hi = workers.partition(":")
            if not (sep and lo.isdigit() and hi.isdigit()):
                raise ValueError(f"--dask-worker-ports must be LO:HI, two ports with 0 < LO <= HI; got {workers!r}")
            span = (_port("--dask-worker-ports", lo), _port("--dask-worker-ports", hi))
            if not 0 < span[0] <= span[1]:
                raise ValueError(f"--dask-worker-ports must be LO:HI, two ports with 0 < LO <= HI; got {workers!r}")
        return LocalPorts(_port("--dask-scheduler-port", scheduler), where, span)

    def check(self, workers: int) -> None:
        """``ValueError`` if ``workers`` local workers do not fit in the range of ports."""
        if self.workers is not None and self.workers[1] - self.workers[0] + 1 < PORTS_PER_WORKER * workers:
            lo, hi = self.workers
            raise ValueError(f"--dask-worker-ports {lo}:{hi} has {hi - lo + 1} ports; {workers} workers take "
                             f"{PORTS_PER_WORKER * workers} ({PORTS_PER_WORKER} each: the worker, its nanny, its "
                             "HTTP server)")


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """Where the games run: this process (``workers == 1``, no scheduler), a local cluster, or
    an existing one."""

    workers: int = 1
    """Local worker processes (``--workers``; ``auto``: the cores, of which :meth:`sized` makes a
    worker per :data:`AUTO_CORES_PER_WORKER`)."""
    scheduler: str = ""
    """An existing cluster's scheduler (``tcp://HOST:8786``); empty: none."""
    auto: bool = False
    """Whether ``workers`` came from ``auto`` (then :meth:`sized` trims it to what a run can use)."""
    ship_bots: bool = False
    """Whether each bot's folder is sent to the workers (else it must be at the same path there)."""
    tls: DaskTLS | None = None
    """The arena's TLS files for ``scheduler`` (``tls://``); a local cluster always makes its own."""
    worker_wait_s: float = WORKER_WAIT_S
    """Seconds the run waits for a worker when there is none (``--worker-wait``), then exits 1."""
    ports: LocalPorts = LocalPorts()
    """The local cluster's ports (``--dask-scheduler-port``, ``--dask-dashboard``,
    ``--dask-worker-ports``)."""
    threads: int = 1
    """Games each local worker plays at once (its Dask threads; :meth:`sized` sets it so that
    the workers play ``--concurrency`` games at once). An existing cluster's workers have
    their own (``dask worker --nthreads``)."""

    @property
    def distributed(self) -> bool:
        """Whether the games run on Dask workers."""
        return bool(self.scheduler) or self.workers > 1

    @staticmethod
    def parse(text: str, scheduler: str = "", ship_bots: bool = False) -> ClusterSpec:
        """``--workers`` (``auto``: the cores; or a whole number >= 1), ``--scheduler`` and
        ``--ship-bots``."""
        if text == "auto":
            return ClusterSpec(max(1, os.cpu_count() or 1), scheduler, auto=True, ship_bots=ship_bots)
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"--workers must be auto or a whole number >= 1; got {text!r}")
        return ClusterSpec(int(text), scheduler, ship_bots=ship_bots)

    def sized(self, *, concurrency: int, games: int, referee: str = "") -> ClusterSpec:
        """The cluster a run of ``games`` games, ``concurrency`` at once, uses: ``auto`` starts a
        worker per :data:`AUTO_CORES_PER_WORKER` cores, never more than games can run at once,
        nor more than the run has
        :data:`AUTO_GAMES_PER_WORKER` games for (a worker's start-up and its own bots cost more
        than a few games gain), and none at all for a remote ``referee`` (its games are played
        there) or when fewer than two would be started (the arena's process plays the games).
        Local workers get the :attr:`threads` that play ``concurrency`` games at once between
        them (issue 29: with one thread each, two workers played two games at once whatever
        the concurrency, and the other games the runner started waited in Dask's queue)."""
        spec = self
        if self.auto and not self.scheduler:
            workers = 1 if referee else min(self.workers // AUTO_CORES_PER_WORKER, concurrency,
                                            games // AUTO_GAMES_PER_WORKER)
            spec = dataclasses.replace(self, workers=workers if workers >= 2 else 1)
        if spec.scheduler or not spec.distributed:
            return spec
        return dataclasses.replace(spec, threads=max(1, -(-concurrency // spec.workers)))
