"""``arena play``: its options, and the command that starts a session (``arena.run.play``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import trio

import referee
from arena.cli.options import UsageError, rules_from_args, run_cancellable, tc_from_args
from arena.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE
from arena.run.play import BOTS, Screen, play
from referee import configure_logging


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``play`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "play",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="play a game against a bot in the terminal",
        description="Play Gin Rummy against a bot: you are a client of an embedded referee, like any bot.\n"
                    "Answer each decision with the move's number or its text (stock, pile, pass, take,\n"
                    "d Kh, k 2c, gin); q or end of input resigns.",
        epilog="Examples:\n  arena play --bot expert\n  arena play --rules short --rule target=50 --seat 1\n"
               "  arena play --command 'node my_bot.js'   # gets --referee A --token T --name N appended\n"
               "                                         # (or use {referee} and {token} in the command)",
    )
    p.add_argument("--bot", default="greedy", choices=BOTS, help="the sample bot to play (default greedy)")
    p.add_argument("--command", default="", metavar="CMD", help="any other bot's command line instead of --bot")
    p.add_argument("--rules", default="classic", help="rules preset (default classic)")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="override one rule option, e.g. --rule target=50 (repeatable)")
    p.add_argument("--tc", default="st=600", help="time control (default st=600: 10 minutes a move)")
    p.add_argument("--seat", type=int, default=0, choices=(0, 1), help="your seat (default 0)")
    p.add_argument("--seed", default="", help="shuffle seed (any text; default random)")
    p.add_argument("--name", default="you", help="your name (default 'you')")
    p.add_argument("--replay-dir", default="replays", metavar="DIR", help="where the replay goes (default replays)")
    return p


def run(args: argparse.Namespace) -> int:
    """``arena play``."""
    try:
        rules = rules_from_args(args.rules, args.rule)
        tc = tc_from_args(args.tc)
        bot_name = "opponent" if args.command else args.bot
        players = [args.name, bot_name if bot_name != args.name else f"{bot_name}-bot"]
        if args.seat == 1:
            players.reverse()
        spec = referee.MatchSpec(
            players=tuple(players), rules=rules, time_control=tc, reconnect_grace_ms=0,
            seed=args.seed.encode() if args.seed else None,
        )
    except (UsageError, ValueError) as e:
        print(f"arena play: {e}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging("error", stream=sys.stderr)  # a resign is no warning here
    screen = Screen(sys.stdout, args.seat)

    async def go(scope: trio.CancelScope) -> int:
        with scope:
            return await play(args, spec, screen)
        screen.say("\nInterrupted.")
        return EXIT_INTERRUPTED

    try:
        return run_cancellable(go)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
