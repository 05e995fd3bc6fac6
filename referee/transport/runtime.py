"""One thread, two event loops: asyncio hosts grpc.aio, trio runs our code as a guest.

grpcio has no trio support; its asyncio API needs a real asyncio loop. Trio's documented
guest mode (``trio.lowlevel.start_guest_run``) runs trio on the same thread, so trio tasks and
gRPC handlers share state with plain function calls — no thread hops, no locks. (Waking a trio
task from the asyncio side costs a guest tick through trio's I/O thread, so the referee runs a
decision's step straight from the gRPC handler and keeps trio for deadlines.) Measured in
``bench/protocol.py``; the figures are in the README.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import trio

T = TypeVar("T")


def run(async_fn: Callable[..., Awaitable[T]], *args: Any, clock: trio.abc.Clock | None = None) -> T:
    """Run ``async_fn(*args)`` under trio as a guest of a fresh asyncio loop, and return its
    result. Everything that uses the referee's gRPC server or client runs inside this."""

    async def host() -> T:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def on_done(outcome: Any) -> None:
            if not done.done():
                done.set_result(outcome)

        trio.lowlevel.start_guest_run(
            async_fn,
            *args,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=on_done,
            host_uses_signal_set_wakeup_fd=True,
            clock=clock,
        )
        outcome = await done
        return outcome.unwrap()  # type: ignore[no-any-return]

    return asyncio.run(host())


async def aio(coro: Coroutine[Any, Any, T]) -> T:
    """From trio, run an asyncio coroutine on the host loop and wait for its result.
    Cancelling the trio side cancels the asyncio task."""
    task = asyncio.ensure_future(coro)
    finished = trio.Event()
    task.add_done_callback(lambda _t: finished.set())
    try:
        await finished.wait()
    except BaseException:
        task.cancel()
        raise
    return task.result()


def install_sigint_cancel(cancel: Callable[[], None]) -> None:
    """Make SIGINT/SIGTERM call ``cancel`` (on the host loop) instead of raising at random."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # non-main thread / Windows
            loop.add_signal_handler(sig, cancel)
