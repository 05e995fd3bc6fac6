"""A minimal bot with fault modes, for the arena's own tests and for checking an installation:
``python -m arena._testbot --referee HOST:PORT --token T [--mode MODE]``.

Modes: ``greedy`` (short games: the game wire's ``hasty`` choice — Gin's sheds deadwood and
knocks at once —, else the first legal action), ``random`` (a legal action at
random), ``first`` (always the first legal action), ``slow`` (greedy, but sleeps ``--delay``
seconds before every answer), ``crash`` (exits with code 3 at once), ``hang`` (never connects),
``quit-after`` (exits abruptly after ``--after`` answers), ``burn`` (spins on the CPU at its first
request, for ever), ``hog`` (at its first request, allocates memory 1 MiB at a time until it
fails). ``random`` and ``first`` play any
game; it declares the games of ``--games`` (the arena's ``GIN_GAMES``) in its Hello.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from collections.abc import Callable

import grpc

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2
from referee import DEFAULT_GAME, games

MODES = ("greedy", "random", "first", "slow", "crash", "hang", "quit-after", "burn", "hog")
def greedy(game: str) -> Callable[[bot_pb2.ActionRequest], common_pb2.Action]:
    """How ``greedy`` answers in a match of ``game``: the game's declared ``hasty`` choice
    (``referee.games.Capabilities``), or the first legal action (a game not installed here, or
    without one)."""
    try:
        hasty = games.get(game).capabilities.hasty
    except ValueError:
        hasty = None
    if hasty is None:
        return lambda req: req.legal_actions[0]
    return hasty


async def play(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed if args.seed is not None else args.token)
    answered = 0
    finished = 0
    choose = greedy(DEFAULT_GAME)
    async with grpc.aio.insecure_channel(args.referee) as channel:
        call = bot_pb2_grpc.BotServiceStub(channel).Play(None)
        await call.write(
            bot_pb2.BotMessage(
                hello=bot_pb2.Hello(
                    bot_name=args.name, token=args.token, protocol_version=2, client_info="arena._testbot",
                    games=[g for g in args.games.split(",") if g],
                )
            )
        )
        async for msg in call:
            kind = msg.WhichOneof("kind")
            if kind == "match_started":
                choose = greedy(msg.match_started.game_name or DEFAULT_GAME)
            elif kind == "action_request":
                req = msg.action_request
                if args.mode == "quit-after" and answered >= args.after:
                    print(f"testbot: quitting abruptly after {answered} answers", file=sys.stderr, flush=True)
                    os._exit(4)
                if args.mode == "slow":
                    await asyncio.sleep(args.delay)
                if args.mode == "burn":
                    print("testbot: burning CPU", file=sys.stderr, flush=True)
                    while True:
                        answered += 1
                if args.mode == "hog":
                    print("testbot: allocating memory", file=sys.stderr, flush=True)
                    hoard = []
                    while True:
                        hoard.append(bytearray(1 << 20))
                legal = list(req.legal_actions)
                if args.mode == "first":
                    action = legal[0]
                elif args.mode == "random":
                    action = legal[rng.randrange(len(legal))]
                else:
                    action = choose(req)
                await call.write(
                    bot_pb2.BotMessage(
                        action=bot_pb2.ActionResponse(
                            match_id=msg.match_id, request_id=req.request_id, action=action
                        )
                    )
                )
                answered += 1
            elif kind == "match_finished":
                r = msg.match_finished.result
                finished += 1
                if args.seen:  # what a bot that keeps the revealed seeds would remember
                    with open(args.seen, "a", encoding="utf-8") as f:
                        f.write(f"{r.match_id} {r.seed.hex()} {r.seed_commitment.hex()}\n")
                print(
                    f"testbot: match {r.match_id} over, winner seat {r.winner}, {answered} answers",
                    file=sys.stderr,
                    flush=True,
                )
                if args.matches and finished >= args.matches:
                    await call.done_writing()
                    return 0
            elif kind == "error":
                print(f"testbot: referee error: {msg.error.message}", file=sys.stderr, flush=True)
    print("testbot: the stream ended before the match did", file=sys.stderr, flush=True)
    return 1


def main(argv: list[str] | None = None) -> int:
    env = os.environ
    p = argparse.ArgumentParser(
        prog="python -m arena._testbot",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--referee", default=env.get("GIN_REFEREE", "localhost:50051"))
    p.add_argument("--token", default=env.get("GIN_TOKEN", ""))
    p.add_argument("--name", default=env.get("GIN_BOT_NAME", "testbot"))
    p.add_argument("--mode", choices=MODES, default="greedy")
    p.add_argument("--delay", type=float, default=1.0, help="slow: seconds to sleep before each answer")
    p.add_argument("--after", type=int, default=5, help="quit-after: answers before exiting")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--games", default=env.get("GIN_GAMES", ""),
                   help="the games to declare in Hello, comma-separated (default: $GIN_GAMES, which the "
                        "arena sets from the manifest; empty: the default game only)")
    p.add_argument("--matches", type=int, default=int(env.get("GIN_MATCHES", "1")),
                   help="exit after N matches (0: never)")
    p.add_argument("--seen", default="", help="append each finished match's id, revealed seed and commitment here")
    args = p.parse_args(argv)
    if args.mode == "crash":
        print("testbot: crashing at start as asked", file=sys.stderr, flush=True)
        return 3
    if args.mode == "hang":
        print("testbot: hanging without connecting", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    try:
        return asyncio.run(play(args))
    except grpc.aio.AioRpcError as e:
        print(f"testbot: {e.code().name}: {e.details()}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
