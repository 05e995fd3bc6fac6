"""The run's view of its Dask workers never loses a live worker (a clean-clone CI run on a loaded
machine warned ``dask_worker_lost`` for a worker the scheduler never removed, then saw it again):
``arena.run.cluster.connected_workers`` asks the scheduler each time instead of reading the client's
cached identity, which the client's own periodic refresh overwrites with one that lists no worker.
Here that refresh is run over and over from another thread while the workers are asked for."""

from __future__ import annotations

import threading
from typing import Any

from distributed import Client, LocalCluster

from arena.run.cluster import connected_workers, scheduler_identity

ASKS = 300


def test_a_live_worker_is_always_seen_while_the_client_refreshes_its_cache() -> None:
    # (In-process workers over Dask's in-process transport: no sockets, no processes.)
    with (LocalCluster(n_workers=2, processes=False, threads_per_worker=1,  # type: ignore[no-untyped-call]
                       dashboard_address="127.0.0.1:0") as cluster,
          Client(cluster) as client):  # type: ignore[no-untyped-call, unused-ignore]
        client.wait_for_workers(2)
        stop = threading.Event()
        refreshes = [0]

        def refresh() -> None:  # what the client's periodic callback does (no workers' entries)
            while not stop.is_set():
                client.sync(client._update_scheduler_info, n_workers=0)
                refreshes[0] += 1

        other = threading.Thread(target=refresh, daemon=True)
        other.start()
        try:
            seen: list[dict[str, Any]] = [connected_workers(client) for _ in range(ASKS)]
        finally:
            stop.set()
            other.join(timeout=60)
        assert refreshes[0] > 0
        assert all(len(s) == 2 for s in seen), [len(s) for s in seen]
        assert scheduler_identity(client, 0).get("total_threads") == 2
