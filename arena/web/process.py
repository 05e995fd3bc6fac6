"""The live web of ``arena serve --web`` in a process of its own, so that the operating system,
not the referee's loop, schedules its requests (docs/web.md, "The web's own process").

The parent (:func:`serve_web_process`, in ``arena serve``'s trio run) serves its full web on a
private Unix socket (a folder of mode 0700) and starts the child, ``python -m
arena.web.process``, which serves ``--web``'s address. Over the child's stdin, one JSON object a
line: first the configuration (the operator token among it: never in argv or the environment),
then the live part, all public — ``{"running": [...]}`` (the referee's matches not over yet: on
each start and end, and every ``store_check_s`` while their positions move) and ``{"match":
event}`` (a start or end, for ``/api/events``). The child reads the store itself (read-only, as
every web does) for the standings, matches, bots and people, and hands the rest to the parent's
web (:mod:`arena.web.relay`; a running match's live view: one subscription to the parent's
stream of it, copied and fanned out in the child). The child ends when its stdin closes (the parent gone, even
killed); a child that ends otherwise is started again on the same address after
``web_restart_s``, the reason logged (``web_process_ended``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

import referee
import referee.lowlevel
from arena import console
from arena.web.data import StoreSource, running
from arena.web.limits import WebLimits
from arena.web.relay import Relay
from arena.web.server import WebTLS, match_event, serve_web

log = structlog.get_logger("arena")

ADDRESS_LINE = "live web on "
"""What the child prints on its stdout once it listens, followed by its address."""
STOP_S = 5.0
"""Seconds the child has to end once its stdin is closed (the server stopping) before it is killed."""
LINE_BYTES = 16 * 1024 * 1024
"""The longest line the child takes from its stdin (the running list of every match at once)."""


@dataclass(frozen=True, slots=True)
class ChildConfig:
    """What the child web is told before anything else (the first line of its stdin)."""

    listen: str
    """``HOST:PORT`` to serve on (a restarted child: the port the first one got)."""
    parent: str
    """The parent web's Unix socket."""
    db: str
    """The store (read-only here; the people's accounts are read from it too)."""
    folder: str
    """The folder of its replays and logs."""
    title: str
    """What the pages are about."""
    limits: dict[str, int | float]
    """The web's limits (:class:`~arena.web.limits.WebLimits`' fields)."""
    operator_token: str | None
    """The operator's secret (``None``: nobody signs in as the operator)."""
    tls: tuple[str, str] | None
    """The certificate and key files to serve TLS with (``None``: clear HTTP)."""
    accounts: bool
    """Whether the store keeps people's accounts (``arena serve``'s)."""
    behind_tls: bool
    """A proxy in front serves the site over TLS."""
    proxy_hops: int
    """Proxies of the operator's own in front (``--web-proxy-hops``: the child, facing them, reads
    their ``X-Forwarded-For``)."""


async def serve_web_process(listen: str, db: Path, folder: Path, title: str, ref: referee.Referee, *,
                            limits: WebLimits, operator_token: str | None, tls: WebTLS | None, accounts: bool,
                            behind_tls: bool, proxy_hops: int = 0,
                            task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the live web on ``listen`` from a child process until cancelled (see the module);
    ``task_status.started`` gets the child's address once it listens. The first child's failure
    to start is raised; a later child's ending is logged and it is started again."""
    private = tempfile.mkdtemp(prefix="arena-web-")  # (mode 0700: only this user reaches the socket)
    sock = os.path.join(private, "parent.sock")
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve_web, f"unix:{sock}", StoreSource(db, folder, title, ref), limits=limits,
                                        operator_token=operator_token, accounts_db=db if accounts else None,
                                        behind_tls=behind_tls or tls is not None, forwarded=True))
            config = ChildConfig(listen, sock, str(db), str(folder), title, asdict(limits), operator_token,
                                 (tls.cert, tls.key) if tls is not None else None, accounts, behind_tls,
                                 proxy_hops)
            address = await nursery.start(_supervise, config, ref, limits)
            task_status.started(address)
    finally:
        shutil.rmtree(private, ignore_errors=True)


async def _supervise(config: ChildConfig, ref: referee.Referee, limits: WebLimits,
                     task_status: trio.TaskStatus[str]) -> None:
    first: list[str] = []

    def listening(address: str) -> None:
        if not first:
            first.append(address)
            task_status.started(address)

    while True:
        if first:  # (the same address again: the port the first child was given)
            config = ChildConfig(**{**asdict(config), "listen": f"{config.listen.rpartition(':')[0]}:"
                                                                f"{first[0].rsplit(':', 1)[1]}"})
        code, pid = await _run_child(config, ref, limits, listening)
        why = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        if not first:
            raise RuntimeError(f"the live web's process ended before it listened on {config.listen} ({why}; "
                               "serve.log says why)")
        log.warning("web_process_ended", pid=pid, reason=why, restart_in_s=limits.web_restart_s)
        await trio.sleep(limits.web_restart_s)


async def _run_child(config: ChildConfig, ref: referee.Referee, limits: WebLimits,
                     listening: Any) -> tuple[int, int]:
    """One child, from its start to its end: its exit code (negative: the signal) and pid."""
    proc = await trio.lowlevel.open_process([sys.executable, "-m", "arena.web.process"], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    try:
        async with trio.open_nursery() as nursery:
            lock = trio.Lock()

            async def say(message: dict[str, Any]) -> None:
                async with lock:
                    await stdin.send_all(json.dumps(message, separators=(",", ":")).encode() + b"\n")

            async def read_stdout() -> None:
                async for line in _lines(stdout):
                    text = line.decode("utf-8", "replace")
                    if text.startswith(ADDRESS_LINE):
                        address = text.removeprefix(ADDRESS_LINE).strip()
                        log.info("web_process_listening", pid=proc.pid, address=address)
                        listening(address)
                        nursery.start_soon(_push_live, ref, say, limits)

            async def ended() -> None:
                await proc.wait()
                nursery.cancel_scope.cancel()

            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):  # (ended at once: its code)
                await stdin.send_all(json.dumps(asdict(config)).encode() + b"\n")
            nursery.start_soon(read_stdout)
            nursery.start_soon(ended)
    finally:
        with trio.CancelScope(shield=True):  # (its stdin closed: it ends its streams and goes; else killed)
            await stdin.aclose()
            with trio.move_on_after(STOP_S):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, proc.pid


async def _push_live(ref: referee.Referee, say: Any, limits: WebLimits) -> None:
    """Push the running matches and each start and end to the child (see the module) until it
    stops reading."""
    try:
        async with trio.open_nursery() as nursery:
            last: list[Any] = [None]

            async def push_running() -> None:
                now = running(ref)
                if now != last[0]:
                    last[0] = now
                    await say({"running": now})

            async def every_while() -> None:
                while True:
                    await push_running()
                    await trio.sleep(limits.store_check_s)

            nursery.start_soon(every_while)
            while True:
                try:
                    async with ref.open_match_events() as events:
                        await push_running()
                        async for event in events:
                            now = running(ref)
                            last[0] = now
                            await say({"match": match_event(event), "running": now})
                    nursery.cancel_scope.cancel()
                    return
                except referee.MatchEventsDropped as e:
                    log.warning("web_events_dropped", reason=str(e))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the child went away (its supervisor starts the next)


async def _lines(stream: trio.abc.ReceiveStream) -> AsyncIterator[bytes]:
    """The lines of ``stream`` (without their newline) until it ends."""
    buffer = bytearray()
    while True:
        at = buffer.find(b"\n")
        if at >= 0:
            line = bytes(buffer[:at])
            del buffer[:at + 1]
            yield line
            continue
        if len(buffer) > LINE_BYTES:
            raise ValueError(f"a line longer than {LINE_BYTES} bytes")
        chunk = await stream.receive_some(65536)
        if not chunk:
            return
        buffer += chunk


# ----- the child -----
async def _child() -> None:
    stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    lines = _lines(stdin)
    config = ChildConfig(**json.loads(await anext(lines)))
    console.log_to_file(Path(config.folder) / "serve.log")
    tls = WebTLS(*config.tls) if config.tls is not None else None
    relay = Relay(config.parent)
    source = StoreSource(Path(config.db), Path(config.folder), config.title, None)
    async with trio.open_nursery() as nursery:
        where = await nursery.start(partial(
            serve_web, config.listen, source, limits=WebLimits(**config.limits),  # type: ignore[arg-type]
            operator_token=config.operator_token, accounts_db=Path(config.db) if config.accounts else None,
            behind_tls=config.behind_tls, tls=tls, relay=relay, proxy_hops=config.proxy_hops))
        print(f"{ADDRESS_LINE}{where}", flush=True)
        # (a server's entry point: what exists now is frozen, out of every collection)
        referee.lowlevel.tune_gc_for_server()
        async for line in lines:
            relay.push(json.loads(line))
        nursery.cancel_scope.cancel()  # the parent is gone: so is its web


def main() -> int:
    """The child's entry point (``python -m arena.web.process``; its configuration on stdin)."""
    console.configure(console.Console(stream=sys.stderr, progress=False), log_json=True)
    try:
        trio.run(_child)
    except KeyboardInterrupt:
        return 130
    finally:
        console.log_to_file(None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
