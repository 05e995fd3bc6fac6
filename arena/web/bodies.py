"""Request bodies at the web's public doors: whole within ``body_read_s``, at most
``request_body_bytes``, at most ``bodies_per_client`` being sent at once by one address
(docs/web.md#slow-clients).

Hypercorn closes a connection that is idle or still sending its headers after its
``keep_alive_timeout`` (``idle_connection_s``), but once a request's headers are in, nothing bounds
how long its body may take: a POST trickled at a byte a second held its connection (and a slot of
the server) for ever. :class:`BodyLimits` reads each body before the app sees it, within those
bounds; past them it answers (408, 413 or 429, a JSON error naming the limit) without the body,
and Hypercorn then closes the connection, whose request was never read to its end.
"""

from __future__ import annotations

from typing import Any

import structlog
import trio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.web.limits import WebLimits

log = structlog.get_logger("arena")


class BodyLimits:
    """ASGI middleware: the app gets a request's body only once it has arrived whole, in time
    and within its size; ``receiving`` counts the bodies each client address is sending."""

    def __init__(self, app: ASGIApp, limits: WebLimits) -> None:
        self.app = app
        self.limits = limits
        self.receiving: dict[str, int] = {}
        """Bodies being read, by client address (an address leaves it when its last one is in)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        client = scope["client"][0] if scope.get("client") else ""
        refused = self._refusal(scope, client)
        if refused is not None:
            await refused(scope, receive, send)
            return
        self.receiving[client] = self.receiving.get(client, 0) + 1
        try:
            body = await self._read(receive)
        finally:
            left = self.receiving.pop(client) - 1
            if left:
                self.receiving[client] = left
        if isinstance(body, JSONResponse):
            log.info("web_body_refused", client=client, status=body.status_code, path=scope["path"])
            await body(scope, receive, send)
            return
        if body is None:
            return  # the client went away
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, scope: Scope, client: str) -> JSONResponse | None:
        length = _content_length(scope)
        if length is not None and length > self.limits.request_body_bytes:
            return _too_large(self.limits)
        if self.receiving.get(client, 0) >= self.limits.bodies_per_client:
            log.info("web_body_refused", client=client, status=429, path=scope["path"])
            return JSONResponse({"error": f"this address is sending {self.limits.bodies_per_client} request bodies "
                                          "at once already (limit bodies_per_client)"}, status_code=429,
                                headers={"Retry-After": str(max(1, round(self.limits.body_read_s)))})
        return None

    async def _read(self, receive: Receive) -> bytes | JSONResponse | None:
        """The whole body; a refusal (408: too slow, 413: too large); ``None``: the client left."""
        chunks: list[bytes] = []
        size = 0
        with trio.move_on_after(self.limits.body_read_s):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return None
                chunk = bytes(message.get("body", b""))
                size += len(chunk)
                if size > self.limits.request_body_bytes:
                    return _too_large(self.limits)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        return JSONResponse({"error": f"the request's body did not arrive within {self.limits.body_read_s:g} s "
                                      "(limit body_read_s)"}, status_code=408)


def _too_large(limits: WebLimits) -> JSONResponse:
    return JSONResponse({"error": f"a request body holds at most {limits.request_body_bytes} bytes "
                                  "(limit request_body_bytes)"}, status_code=413)


def _has_body(scope: Scope) -> bool:
    """Whether the request may carry a body (every method but a read; a read that says it has one;
    HTTP/2 need not say so in a header)."""
    headers = {bytes(k).lower() for k, _ in scope.get("headers", [])}
    return scope["method"] not in ("GET", "HEAD") or b"transfer-encoding" in headers or bool(_content_length(scope))


def _content_length(scope: Scope) -> int | None:
    for k, v in scope.get("headers", []):
        if bytes(k).lower() == b"content-length":
            try:
                return int(v)
            except ValueError:
                return None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` with the body already read given first, whole (then the client's own messages:
    its disconnect)."""
    given: list[Any] = []

    async def replayed() -> Message:
        if not given:
            given.append(True)
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
