"""The web's listening sockets with a bound on connections: per client address and in all.

Hypercorn's ``serve`` accepts every connection it is offered; its keep-alive timeout ends one
that sends nothing or trickles its headers (``idle_connection_s``) and :mod:`arena.web.bodies`
one whose body trickles (``body_read_s``), but until then each holds a socket and a task, and one
address could open thousands. Here a connection past ``connections_per_address`` from its
address, or past ``connections`` in all, is closed as soon as it is accepted, before a byte of it
is read (and before a TLS handshake): it costs the server an accept and a close, nothing more.

This is Hypercorn's trio worker (``hypercorn.trio.run.worker_serve``, 0.18) for TCP sockets,
with the connection handler wrapped; the rest of its parts are used as they are. Behind proxies
of the operator's own (``--web-proxy-hops``), every connection comes from a proxy: the per-address
bound is not applied there (the proxy bounds its clients), the bound in all still is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import structlog
import trio
from hypercorn.config import Config
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState, LifespanState
from hypercorn.utils import repr_socket_addr, wrap_app

log = structlog.get_logger("web")


class Connections:
    """The connections open now, by client address; a new one past a bound is refused."""

    def __init__(self, per_address: int | None, total: int) -> None:
        self.per_address = per_address
        """The most one address may hold at once (``connections_per_address``); ``None``: no
        such bound (behind proxies)."""
        self.total = total
        """The most held at once over all addresses (``connections``)."""
        self.by_address: dict[str, int] = {}
        """Open connections per client address (an address with none has no entry)."""
        self.open = 0
        """Open connections in all."""
        self.refused = 0
        """Connections refused so far (for the logs and the tests)."""

    def take(self, address: str) -> str | None:
        """Count a new connection from ``address`` in, or say which bound refuses it."""
        if self.open >= self.total:
            return "connections"
        held = self.by_address.get(address, 0)
        if self.per_address is not None and held >= self.per_address:
            return "connections_per_address"
        self.open += 1
        self.by_address[address] = held + 1
        return None

    def give_back(self, address: str) -> None:
        """A connection counted in by :meth:`take` has ended."""
        self.open -= 1
        left = self.by_address[address] - 1
        if left:
            self.by_address[address] = left
        else:
            del self.by_address[address]


def _peer(stream: trio.abc.Stream) -> str:
    """The client address of an accepted stream (TLS or not); ``""`` for a Unix socket."""
    inner: Any = getattr(stream, "transport_stream", stream)
    try:
        name = inner.socket.getpeername()
    except OSError:
        return ""
    return name[0] if isinstance(name, tuple) else ""


EOF_GRACE_S = 1.0
"""Seconds a connection's handling may go on after its client closed it (Hypercorn has then
closed its side too, and nothing more can be sent): then it is ended. Hypercorn alone keeps a
connection that was closed unused until its keep-alive timeout. A closed connection stops
counting against the bounds at once: a client that opens and closes connections one after
another is never refused for those it has closed."""


class _Watched:
    """An accepted stream as Hypercorn sees it, which notices when its client has closed it."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self._inner = inner
        self.closed_by_client = trio.Event()
        """Set once a read found the end of the stream (or a broken one)."""

    def __getattr__(self, name: str) -> Any:  # (TLS or not: what the inner stream has, and only that)
        return getattr(self._inner, name)

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        """The inner stream's ``receive_some``, noting its end."""
        try:
            data = await self._inner.receive_some(max_bytes)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.closed_by_client.set()
            raise
        if not data:
            self.closed_by_client.set()
        return data


async def _handle(connections: Connections, serve_one: Callable[[Any], Any], stream: trio.abc.Stream) -> None:
    address = _peer(stream)
    refused = connections.take(address)
    if refused is not None:
        connections.refused += 1
        if connections.refused in (1, 10, 100) or connections.refused % 1000 == 0:
            log.warning("connection_refused", limit=refused, address=address, refused=connections.refused)
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)
        return
    watched = _Watched(stream)
    counted = True
    try:
        async with trio.open_nursery() as nursery:
            async def serve() -> None:
                await serve_one(watched)
                nursery.cancel_scope.cancel()

            nursery.start_soon(serve)
            await watched.closed_by_client.wait()
            connections.give_back(address)  # (its socket is closed now; what is left ends soon)
            counted = False
            nursery.cancel_scope.deadline = trio.current_time() + EOF_GRACE_S
    finally:
        if counted:
            connections.give_back(address)


async def serve_bounded(app: Any, config: Config, connections: Connections, *,
                        task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the ASGI ``app`` on ``config``'s binds (TCP, TLS when ``config`` has a certificate,
    or ``unix:PATH``) until cancelled, each connection counted against ``connections``;
    ``task_status.started`` gets the binds' URLs, as Hypercorn's ``serve`` does."""
    wrapped = wrap_app(app, config.wsgi_max_body_size, "asgi")
    lifespan_state: LifespanState = {}
    lifespan = Lifespan(wrapped, config, lifespan_state)
    context = WorkerContext(None)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as server_nursery:
            listeners, binds = _listeners(config)
            task_status.started(binds)
            serve_one = partial(TCPServer, wrapped, config, context, ConnectionState(lifespan_state.copy()))
            try:
                await trio.serve_listeners(partial(_handle, connections, serve_one), listeners,
                                           handler_nursery=server_nursery)
            finally:
                await context.terminated.set()
                server_nursery.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()


def _listeners(config: Config) -> tuple[list[trio.abc.Listener[Any]], list[str]]:
    sockets = config.create_sockets()
    ssl_context = config.create_ssl_context()
    listeners: list[trio.abc.Listener[Any]] = []
    binds: list[str] = []
    for secure, group in ((True, sockets.secure_sockets), (False, sockets.insecure_sockets)):
        for sock in group:
            sock.listen(config.backlog)
            listener: trio.abc.Listener[Any] = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
            if secure:
                listener = trio.SSLListener(listener, ssl_context, https_compatible=True)  # type: ignore[arg-type]
            listeners.append(listener)
            where = repr_socket_addr(sock.family, sock.getsockname())
            binds.append(f"{'https' if secure else 'http'}://{where}")
    return listeners, binds
