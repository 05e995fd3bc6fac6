"""Registered bots' sessions, many in one process (``bench/hosted.py`` and ``bench/web.py`` start it):

    _sessions.py --target ADDR --tokens FILE [--presets gin/classic] [--play] [--per-connection 50]

``FILE`` holds one ``NAME TOKEN`` a line. Each bot opens its own ``Play`` stream with its own token
and says hello declaring only ``--presets``. Idle (the default: a preset the server's ladder does
not play, so it is never paired) it then waits; with ``--play`` it answers every action request
greedily (``arena._testbot``'s choice: short games) and asks for no event messages — the
leanest bot, so that many cost the machine little beside the server. Prints
``READY <welcomed> <refused>`` once every hello is answered, and holds the sessions until stdin
closes. Bots share a connection up to ``--per-connection``
streams (under the referee's ``streams_per_connection``), like the kit does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import grpc

from arena._testbot import greedy
from gin_arena.v2 import bot_pb2, bot_pb2_grpc

HELLO_TIMEOUT_S = 120.0
"""How long a session waits for its welcome before it counts as refused."""


async def session(stub: bot_pb2_grpc.BotServiceStub, name: str, token: str, presets: list[str], play: bool,
                  welcomed: asyncio.Queue[bool]) -> None:
    """One bot's session: hello, its welcome, then idle or playing until cancelled."""
    call: Any = stub.Play()  # type: ignore[call-arg]
    await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(
        bot_name=name, token=token, protocol_version=2, client_info="bench/_sessions.py",
        games=["gin"], presets=presets, skip_event_messages=play)))
    try:
        first = await asyncio.wait_for(call.read(), HELLO_TIMEOUT_S)
        await welcomed.put(first is not grpc.aio.EOF and first.WhichOneof("kind") == "welcome")  # type: ignore[attr-defined]
    except (TimeoutError, grpc.aio.AioRpcError):
        await welcomed.put(False)
        return
    choose = greedy("gin")
    while (msg := await call.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
        if play and msg.WhichOneof("kind") == "action_request":
            req = msg.action_request
            await call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                match_id=msg.match_id, request_id=req.request_id, action=choose(req))))


async def main(args: argparse.Namespace) -> None:
    with open(args.tokens, encoding="utf-8") as f:
        bots = [line.split() for line in f if line.strip()]
    presets = [p for p in args.presets.split(",") if p]
    channels = [grpc.aio.insecure_channel(args.target, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(0, len(bots), args.per_connection)]
    welcomed: asyncio.Queue[bool] = asyncio.Queue()
    tasks = [asyncio.ensure_future(session(bot_pb2_grpc.BotServiceStub(channels[i // args.per_connection]),
                                           name, token, presets, args.play, welcomed))
             for i, (name, token) in enumerate(bots)]
    answers = [await welcomed.get() for _ in bots]
    print(f"READY {sum(answers)} {len(answers) - sum(answers)}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for t in tasks:
        t.cancel()
    for ch in channels:
        await ch.close(None)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--presets", default="gin/classic")
    p.add_argument("--play", action="store_true", help="answer action requests (greedy)")
    p.add_argument("--per-connection", type=int, default=50)
    asyncio.run(main(p.parse_args()))
