"""Password hashing off the referee's CPU, bounded (docs/security.md#password-hashing).

Every sign-in and sign-up costs one argon2id hash of 64 MiB and four threads (argon2-cffi's RFC
9106 defaults). Done on the web's worker threads, as it was, 200 tries from 40 addresses (each
within every per-address limit) held 2 GB in ``arena serve`` and took the cores the referee's
clocks count on. Here a hash runs in one of at most ``password_hashers`` worker processes of
their own (``python -m arena.web.hashing``, lowered in priority by ``HASHER_NICE``: the operating
system runs the referee first), at most ``password_queue`` more wait for one, and one client
address holds at most ``password_hashes_per_client`` of those; past them the try is refused at
once — 503 (the server is busy) or 429 (this address) naming the limit, with ``Retry-After`` — and
costs nothing. The password crosses a pipe, never a command line.

:class:`Hashers` looks like argon2's ``PasswordHasher`` to the accounts (``hash``, ``verify``,
``check_needs_rehash``, called from their worker threads) and adds :meth:`Hashers.admit` (the
bound) and :attr:`Hashers.threads` (the trio threads that may wait on a worker: one per worker).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import IO, Literal

import argon2
import trio
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.web.i18n import N_

HASHER_NICE = 19
"""How far a hashing worker lowers its own priority (``nice``; 19, the lowest): a busy sign-in
door then waits for the referee's loop, never the other way round (with 10, the bench's flood
still cost the ladder games on time: docs/security.md#password-hashing)."""
RETRY_AFTER_S = 1
"""``Retry-After`` of a try refused because every hasher and queue place is taken."""
STOP_S = 5.0
"""Seconds a worker has to end once its stdin closes (then it is killed)."""

BUSY = N_("the server is checking as many passwords as it may at once (limit {limit}); try again in {wait} s")
"""The 503 when every hasher and queue place is taken."""
BUSY_HERE = N_("this address has as many sign-ins being checked as it may at once (limit {limit}); try again in "
               "{wait} s")
"""The 429 when one address holds ``password_hashes_per_client``."""


class HashingRefused(Exception):
    """A try refused before any hashing: ``status`` (503 or 429), the msgid ``text``, the
    ``limit`` it names."""

    def __init__(self, status: int, text: str, limit: str) -> None:
        self.status, self.text, self.limit = status, text, limit
        super().__init__(text.format(limit=limit, wait=RETRY_AFTER_S))


class Places:
    """Tries in flight: at most ``hashers + waiting`` in all, ``per_client`` for one address."""

    def __init__(self, hashers: int, waiting: int, per_client: int) -> None:
        self.hashers, self.waiting, self.per_client = hashers, waiting, per_client
        self.in_flight = 0
        """Tries admitted and not done (hashing or waiting for a worker)."""
        self._by_client: dict[str, int] = {}

    def take(self, client: str) -> None:
        """Count one try of ``client``, or ``HashingRefused`` at once: 503 past ``hashers +
        waiting``, 429 past ``per_client`` (on the trio thread: nothing awaits in between)."""
        held = self._by_client.get(client, 0)
        if self.in_flight >= self.hashers + self.waiting:
            raise HashingRefused(503, BUSY, "password_hashers + password_queue")
        if held >= self.per_client:
            raise HashingRefused(429, BUSY_HERE, "password_hashes_per_client")
        self.in_flight += 1
        self._by_client[client] = held + 1

    def give(self, client: str) -> None:
        """The try of ``client`` that :meth:`take` counted is done."""
        self.in_flight -= 1
        left = self._by_client.pop(client) - 1
        if left:
            self._by_client[client] = left

    @contextlib.contextmanager
    def admit(self, client: str) -> Iterator[None]:
        """A place for one try of ``client`` while the block runs (:meth:`take`, then :meth:`give`)."""
        self.take(client)
        try:
            yield
        finally:
            self.give(client)


class Hashers(Places):
    """At most ``hashers`` argon2 worker processes (started when first needed), ``waiting`` more
    tries waiting for one, ``per_client`` tries in flight for one address."""

    def __init__(self, hashers: int, waiting: int, per_client: int) -> None:
        super().__init__(hashers, waiting, per_client)
        self.threads = trio.CapacityLimiter(hashers)
        """Pass it to ``trio.to_thread.run_sync`` around a hash: one thread per worker waits on it."""
        self._local = argon2.PasswordHasher()  # (parameters only: check_needs_rehash hashes nothing)
        self._places: queue.Queue[_Worker | None] = queue.Queue()
        """A worker per place, ``None`` for a place whose worker is not started yet."""
        for _ in range(hashers):
            self._places.put(None)
        self._lock = threading.Lock()
        self._closed = False

    # ----- argon2's PasswordHasher, in the workers (call from a worker thread) -----
    def hash(self, password: str) -> str:
        """argon2id of ``password``, hashed by a worker."""
        return str(self._ask({"op": "hash", "password": password}))

    def verify(self, hashed: str, password: str) -> Literal[True]:
        """``True``, or argon2's ``VerifyMismatchError`` / ``InvalidHashError`` as ``PasswordHasher`` raises."""
        answer = self._ask({"op": "verify", "hash": hashed, "password": password})
        if answer == "mismatch":
            raise argon2.exceptions.VerifyMismatchError("the password does not match")
        if answer == "invalid":
            raise argon2.exceptions.InvalidHashError("not an argon2 hash")
        return True

    def check_needs_rehash(self, hashed: str) -> bool:
        """Whether ``hashed`` was made with weaker parameters than today's (reads them; no hashing)."""
        return self._local.check_needs_rehash(hashed)

    def close(self) -> None:
        """End the workers (each idle one; a busy one ends when its try gives it back)."""
        with self._lock:
            self._closed = True
        while True:
            try:
                worker = self._places.get_nowait()
            except queue.Empty:
                break
            if worker is not None:
                worker.stop()
        self._places.put(None)  # (wakes a thread still waiting for a place: it finds the hashers closed)

    def _ask(self, request: dict[str, str]) -> str:
        worker = self._places.get()  # (at most ``hashers`` threads ask at once: a place is free or soon given back)
        with self._lock:
            if self._closed:
                self._places.put(None)  # (for the next thread waiting: it ends the same way)
                if worker is not None:
                    worker.stop()
                raise RuntimeError("the password hashers are closed")
        try:
            if worker is None:
                worker = _Worker()
            answer = worker.ask(request)
        except BaseException:
            if worker is not None:
                worker.stop()  # (a worker that failed mid-answer is not trusted again: the next try starts one)
            self._places.put(None)
            raise
        with self._lock:
            if self._closed:
                worker.stop()
            else:
                self._places.put(worker)
        return answer


class _Worker:
    """One hashing process and its pipes (used by one thread at a time)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "arena.web.hashing"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, request: dict[str, str]) -> str:
        stdin, stdout = self._pipes()
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the password hasher (pid {self.proc.pid}) ended: {self.proc.poll()}")
        reply = json.loads(line)
        if "error" in reply:
            raise ValueError(f"the password hasher refused the request: {reply['error']}")
        return str(reply["answer"])

    def stop(self) -> None:
        stdin, _ = self._pipes()
        with contextlib.suppress(OSError):
            stdin.close()
        try:
            self.proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout


HASHING_DOORS = frozenset({"/signin", "/signup"})
"""The doors whose POST may cost a hash."""


class DoorSlots:
    """ASGI middleware of the web's own process (:mod:`arena.web.process`): the sign-ins and
    sign-ups it forwards to the parent at once are bounded like the parent's hashers
    (``places``), so that a flood is refused here, in this process — ``refuse(scope, receive,
    send, refused)`` draws the answer — and never reaches the loop the referee runs in; the
    parent's own bound still holds behind it."""

    def __init__(self, app: ASGIApp, places: Places,
                 refuse: Callable[[Scope, Receive, Send, HashingRefused], Awaitable[None]]) -> None:
        self.app, self.places, self.refuse = app, places, refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in HASHING_DOORS:
            await self.app(scope, receive, send)
            return
        client = scope["client"][0] if scope.get("client") else ""
        try:
            self.places.take(client)
        except HashingRefused as refused:
            await self.refuse(scope, receive, send, refused)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.places.give(client)


def answer(hasher: argon2.PasswordHasher, request: dict[str, str]) -> str:
    """A worker's answer to one request: a hash, ``ok``, ``mismatch`` or ``invalid``."""
    if request["op"] == "hash":
        return hasher.hash(request["password"])
    try:
        hasher.verify(request["hash"], request["password"])
    except argon2.exceptions.VerificationError:
        return "mismatch"
    except argon2.exceptions.InvalidHashError:
        return "invalid"
    return "ok"


def main() -> int:
    """A worker (``python -m arena.web.hashing``): one JSON request a line on stdin, one
    ``{"answer": …}`` (or ``{"error": …}``: a request it cannot answer) a line on stdout, until
    stdin closes (its parent gone, even killed)."""
    os.nice(HASHER_NICE)
    hasher = argon2.PasswordHasher()
    for line in sys.stdin:
        try:
            reply = {"answer": answer(hasher, json.loads(line))}
        except (ValueError, KeyError, TypeError) as e:  # (said to the asker; this worker serves the next)
            reply = {"error": repr(e)}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
