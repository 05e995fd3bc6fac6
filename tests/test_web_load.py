"""The web's doors under load (issue 34), against real ``arena serve --web`` processes over real
sockets: concurrent sign-ins past the password hashers' bound are refused at once (503, or 429
for one address's share), by the web's own process, while the server's memory stays bounded; a request body trickled a
byte at a time gets 408 and its connection closed after ``body_read_s``, and one address holds
at most ``bodies_per_client`` bodies at once; the computer bots of ``/play`` have no seat token on
their command line; ``arena serve``'s folder and store are its user's alone. And the hashers
themselves: their bound, their worker processes (lower in priority, at most ``hashers``)."""

from __future__ import annotations

import http.client
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import argon2
import pytest

from arena.web.hashing import BUSY, BUSY_HERE, HASHER_NICE, Hashers, HashingRefused
from tests._wait import HANG_S, until
from tests.test_web import _web_address

MIB = 1024 * 1024
PASSWORD = "correct horse battery"
"""A password that is allowed."""


@contextmanager
def arena_serve(folder: Path, *options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``arena serve --web`` as a process on free loopback ports (``options``: more of its
    options): the process and its web's address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(folder), "--web",
         "127.0.0.1:0", *options], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        yield proc, _web_address(proc)
    finally:
        proc.terminate()
        proc.wait(timeout=HANG_S)


def _limits(*items: str) -> list[str]:
    return [a for item in items for a in ("--web-limit", item)]


def _tree(pid: int) -> list[int]:
    """``pid`` and every process descended from it."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat_line.rsplit(")", 1)[1].split()[1])
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += [c for c, parent in parents.items() if parent == p]
    return found


def _rss(pids: list[int]) -> int:
    """The resident memory of ``pids`` together (bytes; a process gone counts nothing)."""
    total = 0
    for pid in pids:
        try:
            status = Path("/proc", str(pid), "status").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return total


def _sign_ins(url: str, sources: list[str], name: str) -> list[tuple[int, str, str | None]]:
    """One wrong sign-in per entry of ``sources`` (its ``X-Forwarded-For``), all sent at once
    (connected first, then released together): each answer's status, text and ``Retry-After``."""
    netloc = urllib.parse.urlsplit(url).netloc
    host, port = netloc.rsplit(":", 1)
    go = threading.Barrier(len(sources))
    answers: list[tuple[int, str, str | None]] = []

    def one(source: str) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=HANG_S)
        try:
            conn.connect()
            go.wait()
            conn.request("POST", "/signin", body=urllib.parse.urlencode({"name": name, "password": "wrong password"}),
                         headers={"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": source})
            r = conn.getresponse()
            answers.append((r.status, r.read().decode(), r.getheader("Retry-After")))
        finally:
            conn.close()

    threads = [threading.Thread(target=one, args=(s,)) for s in sources]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == len(sources)
    return answers


def test_concurrent_sign_ins_past_the_hashers_bound_are_refused_and_memory_stays_bounded(tmp_path: Path) -> None:
    hashers, queue = 1, 2
    with arena_serve(tmp_path, "--web-proxy-hops", "1",
                     *_limits(f"password_hashers={hashers}", f"password_queue={queue}", "password_hashes_per_client=1",
                              "signin_tries_per_minute=1000", "bodies_per_client=100")) as (proc, url):
        # (bodies_per_client out of the way: six bodies from one address are being read at once,
        # and that limit's 429 came first for some of them, naming it rather than the hashers')
        made = _sign_ins_up(url)
        assert made == 303
        pids = _tree(proc.pid)
        before = _rss(pids)
        peak = [before]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _rss(_tree(proc.pid)))
                time.sleep(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            # 16 wrong sign-ins at once, each from its own address (192.0.2.0/24: documentation
            # addresses, never contacted: the proxy header names them), each within every per-address limit.
            answers = _sign_ins(url, [f"192.0.2.{i}" for i in range(1, 17)], "victim")
            # And 6 at once from one address.
            mine = _sign_ins(url, ["192.0.2.100"] * 6, "victim")
        finally:
            done.set()
            sampler.join()
    # The flood was refused in the web's own process, never reaching the referee's loop.
    refused_there = [line for line in (tmp_path / "serve.log").read_text().splitlines()
                     if "web_person_refused" in line and "own process" in line]
    assert refused_there, "no sign-in refused by the web's own process"
    statuses = sorted(s for s, _, _ in answers)
    assert set(statuses) <= {403, 503}, statuses
    assert 403 in statuses and 503 in statuses, statuses  # (some checked; the rest refused at once)
    for status, text, retry in answers:
        if status == 503:
            assert "password_hashers + password_queue" in text and retry == "1", (text, retry)
    assert {s for s, _, _ in mine} <= {403, 429, 503} and 429 in {s for s, _, _ in mine}, mine
    assert all("password_hashes_per_client" in text for s, text, _ in mine if s == 429), mine
    # One hasher holds one argon2 hash's 64 MiB at a time: the whole server (the referee, the
    # web's process, the hasher) grows by far less than the 16 hashes' 1 GiB it took before.
    grew = peak[0] - before
    assert grew < 64 * MIB * hashers + 128 * MIB, f"the server's processes grew by {grew / MIB:.0f} MiB"


def _sign_ins_up(url: str) -> int:
    netloc = urllib.parse.urlsplit(url).netloc
    host, port = netloc.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=HANG_S)
    try:
        conn.request("POST", "/signup", body=urllib.parse.urlencode({"name": "victim", "password": PASSWORD}),
                     headers={"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": "192.0.2.200"})
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_hashers_bound_their_tries_and_hash_in_lower_priority_processes_of_their_own() -> None:
    hashers = Hashers(2, 1, 1)
    with hashers.admit("a"), hashers.admit("b"), hashers.admit("c"):
        with pytest.raises(HashingRefused) as busy, hashers.admit("d"):
            pass
        assert (busy.value.status, busy.value.text) == (503, BUSY)
        assert busy.value.limit == "password_hashers + password_queue"
        assert hashers.in_flight == 3
    with hashers.admit("a"):
        with pytest.raises(HashingRefused) as mine, hashers.admit("a"):
            pass
        assert (mine.value.status, mine.value.text, mine.value.limit) == (429, BUSY_HERE, "password_hashes_per_client")
    assert hashers.in_flight == 0
    hashed: list[str] = []
    try:
        threads = [threading.Thread(target=lambda: hashed.append(hashers.hash(PASSWORD))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(hashed) == 4 and len(set(hashed)) == 4  # (each with its own salt)
        for h in hashed:
            assert argon2.PasswordHasher().verify(h, PASSWORD)
        assert hashers.verify(hashed[0], PASSWORD) is True
        with pytest.raises(argon2.exceptions.VerifyMismatchError):
            hashers.verify(hashed[0], "another password")
        with pytest.raises(argon2.exceptions.InvalidHashError):
            hashers.verify("not a hash", PASSWORD)
        with pytest.raises(ValueError, match="refused"):  # (no UTF-8 for a lone surrogate: said, not a dead worker)
            hashers.hash("\ud800" * 8)
        assert hashers.verify(hashed[1], PASSWORD) is True
        workers = _workers()
        assert 1 <= len(workers) <= 2, workers  # (four hashes at once, never more than ``hashers`` processes)
        mine_nice = os.getpriority(os.PRIO_PROCESS, 0)
        for pid in workers:
            assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine_nice + HASHER_NICE)
    finally:
        hashers.close()
    until(lambda: not _workers(), "the hashers to end once closed")


def _workers() -> list[int]:
    """This process's hashing workers."""
    return [pid for pid in _tree(os.getpid())[1:] if b"arena.web.hashing" in _cmdline(pid)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path("/proc", str(pid), "cmdline").read_bytes()
    except OSError:
        return b""


def _connect(url: str) -> socket.socket:
    netloc = urllib.parse.urlsplit(url).netloc
    host, port = netloc.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=HANG_S)


def _trickle_until_closed(sock: socket.socket, head: bytes) -> bytes:
    """Send ``head``, then a byte every half second until the server closes the connection
    (bounded by ``HANG_S``): what the server answered."""
    sock.sendall(head)
    got = b""
    deadline = time.monotonic() + HANG_S
    sock.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            try:
                sock.sendall(b"a")
            except OSError:  # (closed under our feet: read what it said)
                sock.settimeout(HANG_S)
                return got + _rest(sock)
            continue
        except OSError:
            return got
        if not chunk:
            return got
        got += chunk
    raise AssertionError(f"the connection stayed open {HANG_S:.0f} s while its request trickled in; got {got!r}")


def _rest(sock: socket.socket) -> bytes:
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except OSError:
        pass
    return got


def test_a_trickled_body_gets_408_and_its_connection_closed_after_body_read_s(tmp_path: Path) -> None:
    with arena_serve(tmp_path, *_limits("body_read_s=2", "idle_connection_s=2")) as (_proc, url):
        host = urllib.parse.urlsplit(url).netloc
        with _connect(url) as sock:
            said = _trickle_until_closed(sock, (
                f"POST /signin HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                "Content-Length: 1000\r\n\r\nname=").encode())
        assert said.startswith(b"HTTP/1.1 408 "), said
        assert b"body_read_s" in said, said
        # Headers trickled in are cut off too (Hypercorn's keep-alive timeout, idle_connection_s).
        with _connect(url) as sock:
            said = _trickle_until_closed(sock, f"GET / HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode())
        assert not said.startswith(b"HTTP/1.1 200"), said
        # A body larger than request_body_bytes is refused before it is read.
        with _connect(url) as sock:
            sock.sendall(f"POST /signin HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-"
                         "urlencoded\r\nContent-Length: 1000000\r\n\r\nname=".encode())
            said = _rest(sock)
        assert said.startswith(b"HTTP/1.1 413 ") and b"request_body_bytes" in said, said
        # And the web still answers.
        with _connect(url) as sock:
            sock.sendall(f"GET /api/standings HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            assert _rest(sock).startswith(b"HTTP/1.1 200 ")


def test_one_address_sends_at_most_bodies_per_client_bodies_at_once(tmp_path: Path) -> None:
    with arena_serve(tmp_path, *_limits("body_read_s=600", "bodies_per_client=2")) as (_proc, url):
        host = urllib.parse.urlsplit(url).netloc
        head = (f"POST /signin HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                "Content-Length: 1000\r\n\r\nname=").encode()
        slow = [_connect(url), _connect(url)]
        try:
            for sock in slow:
                sock.sendall(head)
            answers: list[bytes] = []

            def third_refused() -> bool:
                with _connect(url) as sock:  # (a whole request, which no rate limit counts: answered, never held)
                    body = b"x=1"
                    sock.sendall(f"POST /signout HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/"
                                 f"x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                    answers.append(_rest(sock))
                return answers[-1].startswith(b"HTTP/1.1 429 ") and b"bodies_per_client" in answers[-1]

            until(third_refused, "a third body from the address to be refused while two are held")
        finally:
            for sock in slow:
                sock.close()


def test_play_computer_bots_have_no_token_in_argv_and_the_store_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "serve"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    (folder / "serve.sqlite").touch(mode=0o644)  # (as an older arena left them)
    (folder / "serve.sqlite").chmod(0o644)
    with arena_serve(folder) as (proc, url):
        host, port = urllib.parse.urlsplit(url).netloc.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=HANG_S)
        try:
            conn.request("POST", "/play", body="game=gin&preset=short&bot=random",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert conn.getresponse().status == 303
        finally:
            conn.close()
        bots: list[int] = []

        def bot_running() -> bool:
            bots[:] = [pid for pid in _tree(proc.pid) if b"sample_bots." in _cmdline(pid)]
            return bool(bots)

        until(bot_running, "the table's computer bot to start", alive=proc)
        (pid,) = bots
        argv = _cmdline(pid).split(b"\0")
        environ = dict(e.split(b"=", 1) for e in Path("/proc", str(pid), "environ").read_bytes().split(b"\0") if e)
        token = environ[b"GIN_TOKEN"]
        assert len(token) >= 16 and b"--token" not in argv and not any(token in a for a in argv), argv
        assert os.getpgid(pid) == pid  # (started as every bot is: its own process group, ended whole)
        assert stat.S_IMODE(Path("/proc", str(pid), "environ").stat().st_mode) & 0o077 == 0
        for path, mode in ((folder, 0o700), (folder / "replays", 0o700), (folder / "serve.sqlite", 0o600)):
            assert stat.S_IMODE(path.stat().st_mode) == mode, (path.name, oct(path.stat().st_mode))
        for sidecar in (folder / "serve.sqlite-wal", folder / "serve.sqlite-shm"):
            if sidecar.exists():
                assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600, sidecar.name


def _answer(url: str, source: str = "127.0.0.1") -> bytes:
    """What a ``GET /api/standings`` from ``source`` (a loopback address) gets: the response's
    first bytes, or ``b""`` when the connection is closed unanswered."""
    netloc = urllib.parse.urlsplit(url).netloc
    host, port = netloc.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=HANG_S, source_address=(source, 0)) as sock:
        try:
            sock.sendall(f"GET /api/standings HTTP/1.1\r\nHost: {netloc}\r\nConnection: close\r\n\r\n".encode())
            return _rest(sock)
        except OSError:
            return b""


def test_one_address_holds_at_most_connections_per_address(tmp_path: Path) -> None:
    """Slowloris by many connections: each sends nothing (or trickles), and each is ended by
    ``idle_connection_s`` in time, but one address may hold only ``connections_per_address`` at
    once: the next is closed unread while another address is still served, and once one of the
    held ones ends the address is served again."""
    with arena_serve(tmp_path, *_limits("connections_per_address=5", "idle_connection_s=600")) as (_proc, url):
        held = [_connect(url) for _ in range(5)]
        try:
            until(lambda: _answer(url) == b"", "the sixth connection from 127.0.0.1 closed unread")
            assert _answer(url, "127.0.0.2").startswith(b"HTTP/1.1 200 "), "another address is still served"
            held.pop().close()
            until(lambda: _answer(url).startswith(b"HTTP/1.1 200 "), "127.0.0.1 served again after one closed")
        finally:
            for sock in held:
                sock.close()


def test_the_web_holds_at_most_connections_in_all(tmp_path: Path) -> None:
    """Past ``connections`` open at once over every address, one more is closed unread."""
    with arena_serve(tmp_path, *_limits("connections=4", "idle_connection_s=600")) as (_proc, url):
        held = [_connect(url) for _ in range(4)]
        try:
            until(lambda: _answer(url, "127.0.0.3") == b"", "a connection past connections=4 closed unread")
            held.pop().close()
            until(lambda: _answer(url, "127.0.0.3").startswith(b"HTTP/1.1 200 "), "served again after one closed")
        finally:
            for sock in held:
                sock.close()
