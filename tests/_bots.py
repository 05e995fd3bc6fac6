"""In-process bot clients for referee tests: real gRPC streams, scripted behaviour."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2
from gin_arena.v2.games import gin_pb2

Decide = Callable[[bot_pb2.RefereeMessage, "Client"], Awaitable[common_pb2.Action | None]]


def knock_first(rng: random.Random) -> Callable[[bot_pb2.ActionRequest], common_pb2.Action]:
    """Knock or go gin when allowed, else a random legal action: short deals."""

    def pick(req: bot_pb2.ActionRequest) -> common_pb2.Action:
        legal = list(req.legal_actions)
        ends = [a for a in legal if a.gin.kind in (gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_BIG_GIN)]
        if ends:
            return ends[0]
        draws = [a for a in legal if a.gin.kind == gin_pb2.ACTION_KIND_DRAW_STOCK]
        if draws and rng.random() < 0.7:
            return draws[0]
        return rng.choice(legal)

    return pick


@dataclass
class Client:
    """One bot connection."""

    address: str
    token: str
    name: str = "bot"
    protocol_version: int = 2
    nonce: bytes = b""
    games: tuple[str, ...] = ()
    received: list[bot_pb2.RefereeMessage] = field(default_factory=list)
    status: grpc.StatusCode | None = None
    details: str = ""
    call: Any = None

    def kinds(self) -> list[str]:
        return [str(m.WhichOneof("kind")) for m in self.received]

    def errors(self) -> list[bot_pb2.ErrorReport]:
        return [m.error for m in self.received if m.WhichOneof("kind") == "error"]

    async def send_action(self, match_id: str, request_id: int, action: common_pb2.Action) -> None:
        await self.call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
            match_id=match_id, request_id=request_id, action=action)))

    async def play(
        self,
        decide: Callable[[bot_pb2.RefereeMessage, Client], Awaitable[common_pb2.Action | None]] | None = None,
        *,
        stop: Callable[[bot_pb2.RefereeMessage], bool] | None = None,
        first: bot_pb2.BotMessage | None = None,
    ) -> None:
        """Connect, say hello, answer requests with ``decide`` (``None`` answers nothing), and
        return on match_finished, on ``stop(msg)``, or when the stream ends (status kept)."""
        rng = random.Random(hash(self.token) & 0xFFFF)
        pick = knock_first(rng)

        async def default(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
            return pick(msg.action_request)

        decide = decide or default
        async with grpc.aio.insecure_channel(self.address) as channel:
            self.call = bot_pb2_grpc.BotServiceStub(channel).Play(None)
            hello = first or bot_pb2.BotMessage(hello=bot_pb2.Hello(
                bot_name=self.name, token=self.token, protocol_version=self.protocol_version, nonce=self.nonce,
                games=self.games))
            try:
                await self.call.write(hello)
                async for msg in self.call:
                    self.received.append(msg)
                    if stop is not None and stop(msg):
                        self.call.cancel()
                        return
                    kind = msg.WhichOneof("kind")
                    if kind == "action_request":
                        action = await decide(msg, self)
                        if action is not None:
                            await self.send_action(msg.match_id, msg.action_request.request_id, action)
                    elif kind == "match_finished":
                        await self.call.done_writing()
                        return
            except grpc.aio.AioRpcError as e:
                self.status = e.code()
                self.details = e.details() or ""
                return
            self.status = await self.call.code()
            self.details = await self.call.details() or ""
