"""The kit's gRPC channels: one connection per :data:`STREAMS_PER_CHANNEL` sessions.

gRPC shares one connection among the channels of a process that have the same target and
options, and a referee takes at most ``streams_per_connection`` (100 by default) streams over
one connection: past it, a stream is refused (``RESOURCE_EXHAUSTED``, "limit
streams_per_connection"). So a process that runs many sessions (a harness that plays many
bots, one bot with many tokens) takes its channels from here: each session holds one stream
on a channel that carries at most :data:`STREAMS_PER_CHANNEL` of them, each channel has a
connection of its own, and a channel is closed when its last session ends.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio

STREAMS_PER_CHANNEL = 50
"""Sessions one channel (one connection) carries: half the referee's default
``streams_per_connection``."""
KEEPALIVE_MS = 30_000
"""A connection with no traffic for this long is pinged, so that a referee that vanished (its
machine, the network) is noticed by a session that waits for matches; the referee accepts a
ping every 10 s at most."""
KEEPALIVE_TIMEOUT_MS = 20_000
"""How long a keepalive ping may go unanswered before the connection counts as lost."""
CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.use_local_subchannel_pool", 1),  # a connection of its own, not shared with other channels
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
)
"""The options of every channel the kit opens."""


@dataclass
class _Shared:
    channel: grpc.aio.Channel
    users: int = 0


@dataclass
class ChannelPool:
    """The channels of one event loop, by target and credentials."""

    per_channel: int = STREAMS_PER_CHANNEL
    """Sessions one channel carries at most."""
    _open: dict[tuple[str, ...], list[_Shared]] = field(default_factory=dict)

    @asynccontextmanager
    async def session_channel(self, target: str, credentials: grpc.ChannelCredentials | None,
                              identity: tuple[str, ...] = ()) -> AsyncIterator[grpc.aio.Channel]:
        """A channel for one session's stream while the block runs. Sessions share a channel
        only with the same ``target`` and ``identity`` (what their ``credentials`` were made
        from: e.g. the CA, certificate and key files; empty for plaintext)."""
        key = (target, *identity)
        shared = self._open.setdefault(key, [])
        slot = next((s for s in shared if s.users < self.per_channel), None)
        if slot is None:
            options = list(CHANNEL_OPTIONS)
            channel = (grpc.aio.secure_channel(target, credentials, options=options) if credentials is not None
                       else grpc.aio.insecure_channel(target, options=options))
            slot = _Shared(channel)
            shared.append(slot)
        slot.users += 1
        try:
            yield slot.channel
        finally:
            slot.users -= 1
            if not slot.users:
                shared.remove(slot)
                if not shared:
                    self._open.pop(key, None)
                await slot.channel.close(None)


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ChannelPool] = weakref.WeakKeyDictionary()


def pool() -> ChannelPool:
    """The running event loop's pool (a grpc.aio channel belongs to the loop it was made on)."""
    loop = asyncio.get_running_loop()
    found = _POOLS.get(loop)
    if found is None:
        found = _POOLS[loop] = ChannelPool()
    return found
