"""Dask's doors need keys: whoever reaches a Dask scheduler runs code on its workers. A local
cluster (``--workers N``) speaks TLS with a certificate made for its run, so a client without it
(another user of the machine) is refused; an existing cluster is reached over mutual TLS with
the files its ``dask scheduler``/``dask worker`` were started with (certificates from trustme,
real ``dask`` processes)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest
import trustme
from distributed import Client
from distributed.security import Security

from arena.run.cluster import Cluster
from arena.run.placement import ClusterSpec
from tests.test_arena_cluster import audit, dask_cluster, games, tournament

pytestmark = pytest.mark.serial  # a cluster's processes


def _refused(address: str, security: Security | None) -> str:
    """What connecting to ``address`` with ``security`` raises (the test fails if it connects)."""
    with pytest.raises((OSError, TimeoutError)) as e:
        client = Client(address, timeout="3s", security=security)  # type: ignore[no-untyped-call]
        client.close()  # type: ignore[no-untyped-call]
    return repr(e.value)


def test_a_local_cluster_speaks_tls_with_a_key_only_its_run_holds(tmp_path: Path) -> None:
    cluster = Cluster(ClusterSpec(workers=1), tmp_path)
    try:
        address = str(cluster.client.scheduler.address)  # type: ignore[union-attr]
        workers = list(cluster.client.scheduler_info()["workers"])
        assert address.startswith("tls://127.0.0.1:") and workers, (address, workers)
        assert all(w.startswith("tls://127.0.0.1:") for w in workers), workers
        assert cluster.client.submit(sum, [1, 2]).result() == 3
        # In the clear, or with a certificate of its own: refused.
        _refused("tcp://" + address.removeprefix("tls://"), None)
        _refused(address, Security.temporary())  # type: ignore[no-untyped-call]
    finally:
        cluster.close()


Made = contextlib.AbstractContextManager[tuple[str, list[subprocess.Popen[bytes]]]]
"""A cluster's scheduler address and its workers' processes, while it runs."""


def _tls_cluster(tmp: Path, ca: trustme.CA) -> Made:
    """A real ``dask scheduler`` and ``dask worker`` on 127.0.0.1 that speak only mutual TLS."""
    ca.cert_pem.write_to_path(str(tmp / "ca.pem"))
    for who in ("scheduler", "worker"):
        cert = ca.issue_cert("127.0.0.1", "localhost")
        cert.cert_chain_pems[0].write_to_path(str(tmp / f"{who}.pem"))
        cert.private_key_pem.write_to_path(str(tmp / f"{who}-key.pem"))

    def tls(who: str) -> list[str]:
        return ["--tls-ca-file", str(tmp / "ca.pem"), "--tls-cert", str(tmp / f"{who}.pem"),
                "--tls-key", str(tmp / f"{who}-key.pem")]

    return dask_cluster(tmp, [dict(os.environ)], tls("scheduler"), tls("worker"), scheme="tls")


def test_a_tournament_on_a_cluster_over_mutual_tls_and_a_stranger_is_refused(tmp_path: Path) -> None:
    ca, stranger = trustme.CA(), trustme.CA()
    arena_cert = ca.issue_cert("arena")
    arena_cert.cert_chain_pems[0].write_to_path(str(tmp_path / "arena.pem"))
    arena_cert.private_key_pem.write_to_path(str(tmp_path / "arena-key.pem"))
    other = stranger.issue_cert("arena")
    other.cert_chain_pems[0].write_to_path(str(tmp_path / "other.pem"))
    other.private_key_pem.write_to_path(str(tmp_path / "other-key.pem"))
    with _tls_cluster(tmp_path, ca) as (address, _):
        run = tmp_path / "run"
        keys = ["--scheduler", address, "--scheduler-ca", str(tmp_path / "ca.pem"),
                "--scheduler-cert", str(tmp_path / "arena.pem"), "--scheduler-key", str(tmp_path / "arena-key.pem")]
        out = subprocess.run(tournament(tmp_path, run, 4, *keys), capture_output=True, text=True, timeout=240)
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"Games run on Dask ({address}" in out.stdout
        done, pending, ids = games(run)
        assert (done, pending) == (4, 0) and len(set(ids)) == 4
        audit(run)
        # A client whose certificate another CA signed, and one in the clear, get nothing.
        _refused(address, Security(tls_ca_file=str(tmp_path / "ca.pem"),  # type: ignore[no-untyped-call]
                                   tls_client_cert=str(tmp_path / "other.pem"),
                                   tls_client_key=str(tmp_path / "other-key.pem"), require_encryption=True))
        _refused("tcp://" + address.removeprefix("tls://"), None)
        # The arena without its keys: a usage error before anything runs.
        bare = subprocess.run(tournament(tmp_path, tmp_path / "bare", 2, "--scheduler", address),
                              capture_output=True, text=True, timeout=60)
        assert bare.returncode == 2 and "--scheduler-ca, --scheduler-cert and --scheduler-key" in bare.stderr, \
            bare.stderr
        assert not (tmp_path / "bare" / "run.sqlite").exists()


def test_dask_tls_options_are_checked_before_a_run(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("x")
    cases = {
        ("--scheduler", "tcp://127.0.0.1:8786", "--scheduler-ca", str(tmp_path / "ca.pem"),
         "--scheduler-cert", str(tmp_path / "ca.pem"), "--scheduler-key", str(tmp_path / "ca.pem")):
            "for a scheduler at tls://HOST:PORT",
        ("--scheduler", "tls://127.0.0.1:8786", "--scheduler-ca", str(tmp_path / "ca.pem")):
            "needs --scheduler-cert, --scheduler-key too",
        ("--scheduler", "tls://127.0.0.1:8786", "--scheduler-ca", str(tmp_path / "ca.pem"),
         "--scheduler-cert", str(tmp_path / "nope.pem"), "--scheduler-key", str(tmp_path / "ca.pem")):
            "--scheduler-cert " + str(tmp_path / "nope.pem") + ": no such file",
    }
    for extra, said in cases.items():
        out = subprocess.run(tournament(tmp_path, tmp_path / "r", 2, *extra), capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 2 and said in out.stderr, (extra, out.stderr)
        assert not (tmp_path / "r").exists()
