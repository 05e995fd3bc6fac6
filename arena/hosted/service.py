"""``ArenaService``: the operator's calls on a hosted server's registered bots (gin_arena.v2's
arena.proto), served beside the referee's services and guarded like them by the operator token
(``referee.open_referee(operator_services=…)``). The registry is the server's own
(:class:`arena.hosted.registry.BotRegistry` on ``serve.sqlite``); a token leaves it only in the
responses of ``AddBot`` and ``RotateBotToken``, and is never logged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc
import structlog
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from arena.hosted.registry import BOT_STATES, BotRegistry, RegisteredBot, RegistryError
from gin_arena.v2 import arena_pb2, arena_pb2_grpc

log = structlog.get_logger("arena")

STATE_VALUES: dict[str, arena_pb2.BotState.ValueType] = {
    s: arena_pb2.BotState.Value(f"BOT_STATE_{s.upper()}") for s in BOT_STATES
}
"""A registry state's protobuf value (``enabled`` → ``BOT_STATE_ENABLED``)."""
STATE_NAMES = {v: k for k, v in STATE_VALUES.items()}
"""A protobuf state's registry name."""
_STATUS = {"invalid": grpc.StatusCode.INVALID_ARGUMENT, "unknown": grpc.StatusCode.NOT_FOUND,
           "taken": grpc.StatusCode.ALREADY_EXISTS}


def _stamp(seconds: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp


def bot_message(bot: RegisteredBot, games: int = 0) -> arena_pb2.RegisteredBot:
    """A registered bot as the protocol carries it (never its token)."""
    return arena_pb2.RegisteredBot(name=bot.name, state=STATE_VALUES[bot.state], reason=bot.reason,
                                   added_at=_stamp(bot.added_at), token_set_at=_stamp(bot.token_set_at),
                                   games=games)


class BotAdmin:
    """The service's calls as plain methods (a request in, a response out; a refusal is a
    :class:`RegistryError`): what the servicer answers over gRPC and what ``arena bots`` does on
    the server's own machine, so that both run the same code."""

    def __init__(self, registry: BotRegistry) -> None:
        self.registry = registry

    def _bot(self, name: str) -> arena_pb2.RegisteredBot:
        bot = self.registry.get(name)
        if bot is None:  # removed by another process in between
            raise RegistryError(f"no bot named {name!r} is registered", "unknown")
        return bot_message(bot, self.registry.games_played().get(name, 0))

    def AddBot(self, request: arena_pb2.AddBotRequest) -> arena_pb2.AddBotResponse:
        token = self.registry.add(request.name)
        return arena_pb2.AddBotResponse(bot=self._bot(request.name), token=token)

    def ListBots(self, request: arena_pb2.ListBotsRequest) -> arena_pb2.ListBotsResponse:
        played = self.registry.games_played()
        return arena_pb2.ListBotsResponse(bots=[bot_message(b, played.get(b.name, 0)) for b in self.registry.list()])

    def SetBotState(self, request: arena_pb2.SetBotStateRequest) -> arena_pb2.SetBotStateResponse:
        state = STATE_NAMES.get(request.state)
        if state == "enabled":
            self.registry.enable(request.name)
        elif state == "disabled":
            self.registry.disable(request.name)
        elif state == "suspended":
            self.registry.suspend(request.name, request.reason)
        else:
            raise RegistryError("the state must be enabled, disabled or suspended", "invalid")
        return arena_pb2.SetBotStateResponse(bot=self._bot(request.name))

    def RemoveBot(self, request: arena_pb2.RemoveBotRequest) -> arena_pb2.RemoveBotResponse:
        self.registry.remove(request.name)
        return arena_pb2.RemoveBotResponse()

    def RotateBotToken(self, request: arena_pb2.RotateBotTokenRequest) -> arena_pb2.RotateBotTokenResponse:
        token = self.registry.rotate_token(request.name)
        return arena_pb2.RotateBotTokenResponse(bot=self._bot(request.name), token=token)


Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)


async def _answer(
    method: Callable[[Request], Response], request: Request, context: grpc.aio.ServicerContext[Any, Any]
) -> Response:
    """``method``'s response, or the call refused with the status of its :class:`RegistryError`;
    a line in the log either way (the bot's name, never a token)."""
    name = str(getattr(request, "name", ""))
    try:
        response = method(request)
    except RegistryError as e:
        log.info("arena_call_refused", call=method.__name__, bot=name, reason=str(e))
        await context.abort(_STATUS[e.kind], str(e))
    log.info("arena_call", call=method.__name__, bot=name)
    return response


class ArenaServicer(arena_pb2_grpc.ArenaServiceServicer):
    """The registered bots of one server, for its operator (the interceptor has checked the
    operator token before a call gets here)."""

    def __init__(self, registry: BotRegistry) -> None:
        self.admin = BotAdmin(registry)

    async def AddBot(
        self, request: arena_pb2.AddBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> arena_pb2.AddBotResponse:
        return await _answer(self.admin.AddBot, request, context)

    async def ListBots(
        self, request: arena_pb2.ListBotsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> arena_pb2.ListBotsResponse:
        return await _answer(self.admin.ListBots, request, context)

    async def SetBotState(
        self, request: arena_pb2.SetBotStateRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> arena_pb2.SetBotStateResponse:
        return await _answer(self.admin.SetBotState, request, context)

    async def RemoveBot(
        self, request: arena_pb2.RemoveBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> arena_pb2.RemoveBotResponse:
        return await _answer(self.admin.RemoveBot, request, context)

    async def RotateBotToken(
        self, request: arena_pb2.RotateBotTokenRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> arena_pb2.RotateBotTokenResponse:
        return await _answer(self.admin.RotateBotToken, request, context)


def arena_service(registry: BotRegistry) -> Callable[[grpc.aio.Server], str]:
    """What ``referee.open_referee(operator_services=…)`` takes: adds the service, returns its name."""

    def add(server: grpc.aio.Server) -> str:
        arena_pb2_grpc.add_ArenaServiceServicer_to_server(ArenaServicer(registry), server)
        return str(arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name)

    return add
