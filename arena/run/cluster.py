"""Games on Dask distributed: ``--workers N`` (a ``LocalCluster`` of N worker processes, with
the threads that play ``--concurrency`` games at once between them: ``ClusterSpec.threads``)
or ``--scheduler tcp://HOST:8786`` (a cluster started with ``dask scheduler`` and ``dask
worker``). Each worker holds one long-lived match context (an embedded referee and its
pool of reused bots), opened by the :class:`MatchWorker` plugin; each game is one task
(``pure=False``, key = the match id, retried on another worker if its worker dies) built from
the picklable :class:`referee.MatchSpec` and :class:`referee.BotLaunch` values. The task
returns the report and the replay's bytes; the arena writes the replay atomically into the run
folder and records the result in its run store — the one source of truth. Bots are started on
the worker from the manifest: a bot's folder, program and modules must be found there at the
same paths as on the arena's machine (a shared or identical file system; ``{python}`` is the
worker's interpreter), or with ``--ship-bots`` each bot's folder (its ``cwd``) is zipped and
sent to every worker (:class:`BotFolders`); :meth:`Cluster.check_bots` verifies on every
worker that it can start every bot before the run starts."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import trio
from distributed import Client, LocalCluster, Nanny, WorkerPlugin, get_worker
from distributed.security import Security

import referee
import referee.lowlevel
from arena.console import file_level, log_only_to_file, log_to_file
from arena.model.manifest import BotSpec, startup_problem
from arena.run import shipping
from arena.run.placement import (
    DASHBOARD,
    PORTS_PER_WORKER,
    BotsUnreachable,
    ClusterObserver,
    ClusterSpec,
    DaskTLS,
    InfrastructureFailure,
    NoWorkers,
    Stalls,
)
from arena.run.runner import StallMonitor
from referee import BotLaunch, MatchSpec, PlayedMatch

log = structlog.get_logger("arena")

PLUGIN = "gin-arena-match-context"
"""The name of the worker plugin (each worker's match context)."""
FOLDERS = "gin-arena-bot-folders"
"""The name of the worker plugin carrying shipped bot folders (``--ship-bots``)."""
RETRIES = 2
"""A game whose worker died is run again on another at most this often."""
REFRESH_S = 2.0
"""The workers' threads are counted again at most this often (as games end)."""
PROFILER_CALLBACKS = ("profile", "profile-cycle")
"""A Dask worker's periodic callbacks of its statistical profiler (stopped on a game worker)."""
TICK_MS = 1000
"""How often a game worker's Dask loop ticks (Dask's default: every 20 ms)."""
STALL_HORIZON_S = 30.0
"""A game's task returns its worker's loop stalls of this many seconds before the game's end."""
WATCH_S = 1.0
"""How often the arena asks the scheduler which workers it has (a lost worker is reported)."""


class MatchWorker(WorkerPlugin):
    """A Dask ``WorkerPlugin``: a trio run in a thread of the worker holding one match context
    (referee and reused bots) for as long as the worker lives, and a stall monitor watching
    that run's loop (where the worker's referee times the bots' answers)."""

    name = PLUGIN

    def __init__(self, limits: referee.Limits | None = None, log_dir: str = "", log_level: str = "info",
                 clock: str = "cpu") -> None:
        self.limits = limits
        """The worker's referee's limits (the arena's ``--limit``; ``None``: the defaults)."""
        self.clock = clock
        """How the worker's referee times the bots it starts (the arena's ``--clock``)."""
        self.log_dir = log_dir
        """The run's log folder (``""``: the worker's log lines stay where its process writes them)."""
        self.log_level = log_level
        """The level of those lines (the arena's ``--log-level``)."""
        self.context: referee.MatchContext | None = None
        self.stalls: StallMonitor | None = None
        self._ready: threading.Event | None = None  # (made on the worker: the plugin is pickled)
        self._stop: trio.Event | None = None
        self._token: Any = None
        self._thread: threading.Thread | None = None

    def setup(self, worker: Any) -> None:
        # Dask's own profiler samples the task thread's stack 100 times a second, for its
        # dashboard; a game's task only waits there for the match context's run, and the
        # sampling took ~1.5% of a core per worker from the bots and the referee, which share
        # the cores. Its loop's tick (a warning when that loop was unresponsive for seconds)
        # every 20 ms took ~1% more: once a second does as well for that.
        if self.log_dir:  # (not on the arena's stdout: its referee's lines go to the run's log folder)
            name = worker_log_name(str(worker.address))
            try:
                log_only_to_file(Path(self.log_dir) / name, self.log_level)
            except OSError:  # (not writable here: the bots' check says so; the lines stay on this machine)
                log_only_to_file(Path(worker.local_directory) / name, self.log_level)
        for name in PROFILER_CALLBACKS:
            if (callback := worker.periodic_callbacks.pop(name, None)) is not None:
                callback.stop()
        if (tick := worker.periodic_callbacks.get("tick")) is not None:
            tick.callback_time = max(tick.callback_time, TICK_MS)
        self._ready = ready = threading.Event()
        self._thread = threading.Thread(target=referee.run, args=(self._hold,), name="gin-arena-context", daemon=True)
        self._thread.start()
        ready.wait(30)

    async def _hold(self) -> None:
        self._stop = trio.Event()
        self._token = trio.lowlevel.current_trio_token()
        self.stalls = StallMonitor(keep_s=STALL_HORIZON_S)
        async with (referee.open_match_context(limits=self.limits, clock=self.clock) as ctx,
                    trio.open_nursery() as nursery):
            nursery.start_soon(self.stalls.run)
            self.context = ctx
            assert self._ready is not None
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    async def play(self, spec: MatchSpec, launches: tuple[BotLaunch, ...]) -> tuple[PlayedMatch, Stalls]:
        """(On the context's trio run.) One game, and the loop's stalls before its end."""
        assert self.context is not None and self.stalls is not None, "the worker has no match context"
        played = await self.context.play(spec, launches)
        return played, self.stalls.recent(STALL_HORIZON_S)

    def teardown(self, worker: Any) -> None:
        if self._stop is not None and self._token is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        if self._thread is not None:
            self._thread.join(10)
        if self.log_dir:
            log_to_file(None)


def worker_log_name(address: str) -> str:
    """The file a worker's log lines go to in the run's log folder: ``worker-HOST-PORT.log``."""
    return "worker-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", address.split("://")[-1]).strip("-") or "unknown") + ".log"


class BotFolders(WorkerPlugin):
    """A Dask ``WorkerPlugin`` carrying the bots' folders, zipped (``--ship-bots``): each worker
    unpacks them into its local directory; its bots start from there."""

    name = FOLDERS

    def __init__(self, folders: dict[str, bytes]) -> None:
        self.folders = folders
        self.places: dict[str, str] = {}
        """(On a worker.) Each shipped folder's copy there."""

    def setup(self, worker: Any) -> None:
        self.places = shipping.unpack(self.folders, Path(worker.local_directory) / "gin-arena-bots")
        self.folders = {}  # (unpacked: the bytes are not needed any more)


def _worker_plugins(dask_scheduler: Any) -> list[str]:
    """(On the scheduler.) The names of the worker plugins registered there."""
    return list(dask_scheduler.worker_plugins)


def _places(worker: Any) -> dict[str, str]:
    """(On a worker.) Where the shipped bot folders are (none shipped: ``{}``)."""
    plugin = worker.plugins.get(FOLDERS)
    return plugin.places if isinstance(plugin, BotFolders) else {}


@dataclass(frozen=True, slots=True)
class TaskResult:
    """What a game's task sends back to the arena."""

    played: PlayedMatch
    """The game's report and replay bytes."""
    worker: str
    """The worker's address."""
    stalls: Stalls
    """The worker's loop stalls before the game's end."""
    started: float
    """When the task started on the worker (``time.time()``: the arena's clock on this machine)."""
    ended: float
    """When it ended there."""


@dataclass(frozen=True, slots=True)
class Timing:
    """When one game went where (``time.time()`` of the arena and of its worker: a remote
    worker's clock skew adds to the differences)."""

    worker: str
    """The worker that played it."""
    submitted: float
    """The arena submitted its task."""
    started: float
    """The task started on the worker."""
    ended: float
    """The task ended there."""
    held: float
    """The arena held the result."""
    recorded: float
    """The arena had written the replay and handed the result to the run store (the game's
    slot is free)."""


def overhead_parts(timings: Sequence[Timing]) -> dict[str, float]:
    """The scheduling overhead per game, in ms (medians and means): ``dispatch``, how long a
    worker that could play the game sat idle before it started — from its submission, or from
    the end of that worker's previous game if that was later (a game queued on a busy worker
    waits for no one); ``return``, from the task's end to the arena holding the result;
    ``bookkeeping``, from then until its replay is written and its result handed to the run
    store. With a game queued on every worker (:meth:`Cluster.slots`) only ``dispatch`` keeps
    a worker from playing; ``return`` and ``bookkeeping`` overlap its next game."""
    parts: dict[str, list[float]] = {"dispatch": [], "return": [], "bookkeeping": []}
    last_end: dict[str, float] = {}
    for t in sorted(timings, key=lambda t: t.started):
        parts["dispatch"].append(max(0.0, t.started - max(t.submitted, last_end.get(t.worker, t.submitted))))
        last_end[t.worker] = t.ended
        parts["return"].append(t.held - t.ended)
        parts["bookkeeping"].append(t.recorded - t.held)
    out: dict[str, float] = {}
    for name, values in parts.items():
        out[f"{name}_median_ms"] = round(1000 * statistics.median(values), 2)
        out[f"{name}_mean_ms"] = round(1000 * statistics.fmean(values), 2)
    out["total_median_ms"] = round(sum(out[f"{n}_median_ms"] for n in parts), 2)
    return out


def play_task(spec: MatchSpec, launches: tuple[BotLaunch, ...]) -> TaskResult | referee.BotFailed:
    """One game on this worker's match context; a bot that gets no more games there comes back
    as its :class:`referee.BotFailed` (a value: a raised one would be retried on other workers as
    if the worker had failed)."""
    started = time.time()
    worker = get_worker()
    plugin = worker.plugins[PLUGIN]
    assert isinstance(plugin, MatchWorker) and plugin._token is not None, "the worker has no match context"
    if places := _places(worker):
        launches = tuple(shipping.relocated(b, places) for b in launches)
    try:
        played, stalls = trio.from_thread.run(plugin.play, spec, launches, trio_token=plugin._token)
    except referee.BotFailed as e:
        return e
    return TaskResult(played, str(worker.address), stalls, started, time.time())


def _startup_problems(bots: Sequence[BotSpec], log_dir: str, dask_worker: Any) -> list[str]:
    """(On a worker.) Why bots cannot start there: the checks the arena makes before a run
    (folder, program, a ``python -m`` module and its imports), made with the worker's own file
    system, ``PATH`` and interpreter (a shipped folder: its copy there); and the bots' log folder
    must be writable there."""
    places = _places(dask_worker)
    problems = [why for why in (startup_problem(shipping.relocated(b, places)) for b in bots) if why]
    try:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        problems.append(f"the bots' log folder {log_dir!r} cannot be made: {e.strerror or e}")
    return problems


async def _outcome(future: Any) -> TaskResult | referee.BotFailed:
    """A task's result, waited for without holding a thread (trio's threads are limited: a
    thread per running game would cap the games in flight), then fetched in one."""
    token = trio.lowlevel.current_trio_token()
    finished = trio.Event()

    def wake(_: Any) -> None:  # (on Dask's callback thread)
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(finished.set)

    future.add_done_callback(wake)
    await finished.wait()
    # Done, the result is usually there at once; but a worker that dies after finishing and
    # before its result is gathered leaves Dask rescheduling the task, and the fetch then waits
    # for a worker. Abandoned on cancel, so that giving up on the cluster (--worker-wait) is not
    # held up by a thread that never returns.
    result: TaskResult | referee.BotFailed = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
    return result


def failure_text(e: BaseException) -> str:
    """A task's failure as a sentence (its kind in words, then its message), not a repr."""
    kind = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", type(e).__name__).lower()
    return f"{kind}: {e}" if str(e) else kind


def client_security(tls: DaskTLS | None) -> Security | None:
    """The arena's side of an existing cluster's mutual TLS (``None``: Dask's own configuration,
    e.g. ``distributed.comm.tls`` in a Dask config file, or none)."""
    if tls is None:
        return None
    return Security(tls_ca_file=tls.ca, tls_client_cert=tls.cert, tls_client_key=tls.key,  # type: ignore[no-untyped-call]
                    require_encryption=True)


def pinned_nanny(first: int) -> type[Nanny]:
    """A local cluster's worker class (a :class:`distributed.Nanny`, in the arena's process, which
    starts and restarts one worker process) whose ``i``-th instance listens on ``first + 3i + 1``
    and has its worker listen on ``first + 3i`` and serve HTTP on ``first + 3i + 2``
    (:data:`PORTS_PER_WORKER`, ``--dask-worker-ports``)."""
    made = itertools.count()

    class PinnedNanny(Nanny):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            base = first + PORTS_PER_WORKER * next(made)
            kwargs.update(worker_port=base, port=base + 1, dashboard_address=f"127.0.0.1:{base + 2}")
            super().__init__(*args, **kwargs)

    return PinnedNanny


def scheduler_identity(client: Any, n_workers: int = -1) -> dict[str, Any]:
    """(Blocking: in a thread.) The scheduler's identity, asked now, with ``n_workers`` workers'
    entries (-1: all). Not ``Client.scheduler_info``: that updates the client's cached identity and
    returns the cache, which the client's own periodic refresh (asking for no workers) may have
    overwritten in between — under load a run then saw every worker gone for a moment and warned
    that a live worker was lost."""
    return dict(client.sync(client.scheduler.identity, n_workers=n_workers))


def connected_workers(client: Any) -> dict[str, Any]:
    """(Blocking: in a thread.) The workers connected now, by address."""
    return dict(scheduler_identity(client).get("workers", {}))


class Cluster:
    """A Dask client and, for ``--workers N``, the local cluster it talks to."""

    def __init__(self, spec: ClusterSpec, replay_dir: Path, limits: referee.Limits | None = None,
                 log_dir: Path | None = None, clock: str = "cpu") -> None:
        self.replay_dir = replay_dir
        self.scheduler = spec.scheduler
        self.worker_wait_s = spec.worker_wait_s
        self.gave_up = ""
        """Why the run stopped waiting for a worker (``""``: it did not)."""
        self._no_workers = trio.Event()
        self._local: Any = None
        if spec.scheduler:
            self.client = Client(spec.scheduler, timeout="10s", security=client_security(spec.tls))  # type: ignore[no-untyped-call]
        else:
            # Anyone who reaches a Dask scheduler runs code as us: the local cluster speaks TLS
            # with a certificate made for this run (other users of the machine hold no key).
            security = Security.temporary()  # type: ignore[no-untyped-call]
            ports = spec.ports
            pinned: dict[str, Any] = {"worker_class": pinned_nanny(ports.workers[0])} if ports.workers else {}
            self._local = LocalCluster(n_workers=spec.workers, processes=True, threads_per_worker=spec.threads,
                                       protocol="tls://", security=security, host="127.0.0.1",
                                       scheduler_port=ports.scheduler, dashboard_address=ports.dashboard or DASHBOARD,
                                       scheduler_kwargs={"dashboard": bool(ports.dashboard)}, silence_logs=40,
                                       **pinned)  # type: ignore[no-untyped-call]
            self.client = Client(self._local, security=security)  # type: ignore[no-untyped-call]
        self.client.register_plugin(MatchWorker(limits, str(log_dir or ""), file_level(), clock), name=PLUGIN)
        # An earlier run's shipped folders must not be used by this one.
        if FOLDERS in self.client.run_on_scheduler(_worker_plugins):  # type: ignore[no-untyped-call]
            self.client.unregister_worker_plugin(FOLDERS)  # type: ignore[no-untyped-call]
        self.dashboard = str(self.client.dashboard_link or "") if spec.scheduler or spec.ports.dashboard else ""
        """The dashboard's link (``""``: none, ``--dask-dashboard off``)."""
        self.timings: list[Timing] = []
        self.threads = 0
        """The workers' threads (:meth:`refresh`): games that can be played at once."""
        self._refreshed = 0.0

    @property
    def scheduler_address(self) -> str:
        """The scheduler's address (``--scheduler``, or the local cluster's)."""
        return self.scheduler or str(self._local.scheduler_address)

    def listening(self) -> dict[str, dict[str, Any]]:
        """(Blocking: in a thread.) Each worker's address, with its nanny's (``""``: none) and
        its HTTP server's port."""
        workers = connected_workers(self.client)
        return {address: {"nanny": str(info.get("nanny") or ""), "http": info.get("services", {}).get("dashboard")}
                for address, info in sorted(workers.items())}

    def workers(self) -> int:
        """Workers connected now."""
        return len(self.addresses())

    def refresh(self) -> None:
        """(Blocking: in a thread.) Count the workers' threads again."""
        self._refreshed = time.monotonic()
        self.threads = int(scheduler_identity(self.client, 0).get("total_threads", 0))

    def slots(self, concurrency: int, waiting: int) -> int:
        """Games that may be submitted at once for ``concurrency`` games played at once, with
        ``waiting`` games not submitted yet: with at least as many games at once as threads, one
        more per thread, queued on a worker so that it starts its next game as soon as one ends
        (no round-trip through the arena and the scheduler in between); with fewer,
        ``concurrency`` (a queued game would start on an idle worker and more games would be
        played at once than asked for); and no game queued for the run's last games (fewer
        waiting than threads): each goes to the first worker free, not behind a long game."""
        if concurrency < self.threads or waiting < self.threads:
            return concurrency
        return max(concurrency, 2 * self.threads)

    def ship(self, bots: Sequence[BotSpec]) -> None:
        """Send every bot's folder to the workers (and to workers that join later)."""
        try:
            folders = shipping.archives(bots)
        except shipping.ShippingError as e:
            raise BotsUnreachable([str(e)]) from None
        self.client.register_plugin(BotFolders(folders), name=FOLDERS)

    def check_bots(self, bots: Sequence[BotSpec], log_dir: Path) -> None:
        """:class:`BotsUnreachable` naming every worker and bot that cannot start there."""
        answers = self.client.run(_startup_problems, [b for b in bots if not b.remote], str(log_dir))
        problems = [f"worker {w}: {why}" for w, found in sorted(answers.items()) for why in found]
        if problems:
            raise BotsUnreachable(problems)

    @property
    def lost(self) -> bool:
        """Whether the client lost its scheduler (it gave up reconnecting), or the run gave up
        waiting for a worker (:attr:`gave_up`)."""
        return bool(self.gave_up) or str(getattr(self.client.status, "value", self.client.status)) not in (
            "running", "connecting", "newly-created")

    def addresses(self) -> set[str]:
        """(Blocking: in a thread.) The workers connected now."""
        return set(connected_workers(self.client))

    def _none_for(self, seconds: float) -> str:
        where = f"the scheduler at {self.scheduler}" if self.scheduler else "the local cluster"
        return (f"no Dask worker connected to {where} for {seconds:g} s (--worker-wait); start one with: "
                f"dask worker {self.scheduler or 'SCHEDULER'} --nthreads 1")

    async def wait_for_workers(self) -> None:
        """Return once a worker is connected; :class:`NoWorkers` after ``worker_wait_s`` without one."""
        deadline = time.monotonic() + self.worker_wait_s
        told = False
        while not await trio.to_thread.run_sync(self.addresses):
            if time.monotonic() >= deadline:
                raise NoWorkers(self._none_for(self.worker_wait_s))
            if not told:
                told = True
                print(f"Waiting up to {self.worker_wait_s:g} s for a Dask worker to connect to "
                      f"{self.scheduler or 'the local cluster'} …", flush=True)
            await trio.sleep(min(WATCH_S, max(0.0, deadline - time.monotonic())))

    async def watch(self, changed: Callable[[int], None]) -> None:
        """Follow the workers while the run lasts (a task of the runner): a lost worker and a
        joining one are logged (a lost one as a warning, on the console) and ``changed(count)``
        is called; after ``worker_wait_s`` without a worker the run gives up (:attr:`gave_up`):
        the games waiting for one end as :class:`NoWorkers` and no more are submitted."""
        known = await trio.to_thread.run_sync(self.addresses)
        alone_since: float | None = None
        while True:
            await trio.sleep(WATCH_S)
            try:
                now = await trio.to_thread.run_sync(self.addresses)
            except Exception as e:  # (a lost scheduler: the games' tasks say so)
                log.debug("cluster_watch_failed", detail=failure_text(e))
                continue
            for address in sorted(known - now):
                log.warning("dask_worker_lost", worker=address, workers_left=len(now))
            for address in sorted(now - known):
                log.info("dask_worker_joined", worker=address, workers=len(now))
            if now != known:
                known = now
                changed(len(now))
            if now:
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
                log.warning("dask_no_workers", waiting_s=self.worker_wait_s)
            elif time.monotonic() - alone_since >= self.worker_wait_s:
                self.gave_up = self._none_for(self.worker_wait_s)
                log.error("dask_no_workers_gave_up", detail=self.gave_up)
                self._no_workers.set()
                return

    async def play(self, spec: MatchSpec, launches: Sequence[BotLaunch], observer: ClusterObserver) -> PlayedMatch:
        """Run one game as a task; write its replay into the run folder; tell ``observer`` (the
        worker, its stalls and the game's time there first, then the end of the game)."""
        if self.lost:
            raise InfrastructureFailure(self.gave_up or "the Dask scheduler was lost")
        submitted = time.time()
        future = self.client.submit(play_task, spec, tuple(launches), key=spec.match_id, pure=False,
                                    retries=RETRIES)
        observer.settled()  # the start-up is the worker's business
        outcome: list[TaskResult | referee.BotFailed] = []
        failure: list[Exception] = []
        try:
            async with trio.open_nursery() as nursery:

                async def wait() -> None:
                    try:
                        outcome.append(await _outcome(future))
                    except Exception as e:  # KilledWorker after the retries, a lost scheduler, …
                        failure.append(e)
                    nursery.cancel_scope.cancel()

                async def give_up() -> None:  # (no worker for worker_wait_s)
                    await self._no_workers.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(wait)
                nursery.start_soon(give_up)
        except BaseException:
            future.cancel()  # type: ignore[no-untyped-call]
            raise
        if failure:
            e = failure[0]
            if self.lost:
                raise InfrastructureFailure(f"the Dask scheduler was lost ({failure_text(e)})") from e
            raise InfrastructureFailure(f"game {spec.match_id} could not be played on the cluster: "
                                        f"{failure_text(e)}") from e
        if not outcome:
            future.cancel()  # type: ignore[no-untyped-call]
            raise NoWorkers(self.gave_up)
        done = outcome[0]
        if isinstance(done, referee.BotFailed):
            raise done
        held = time.time()
        played = done.played
        path = self.replay_dir / f"{played.report.match_id}.jsonl"
        if played.replay:
            await trio.to_thread.run_sync(referee.lowlevel.write_atomic, path, played.replay)
        report = dataclasses.replace(played.report, replay_path=str(path) if played.replay else "")
        observer.played_on(done.worker, done.stalls, done.ended - done.started)
        observer.finished(report)
        self.timings.append(Timing(done.worker, submitted, done.started, done.ended, held, time.time()))
        if time.monotonic() - self._refreshed >= REFRESH_S:
            await trio.to_thread.run_sync(self.refresh)
        return dataclasses.replace(played, report=report)

    def close(self) -> None:
        if self.timings:
            log.info("cluster_overhead", games=len(self.timings), **overhead_parts(self.timings))
        self.client.close()  # type: ignore[no-untyped-call]
        if self._local is not None:
            self._local.close()
