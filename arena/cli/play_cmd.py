"""``arena play``: its options, and the command that starts a session (``arena.run.play``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import trio

import referee
from arena.cli.options import UsageError, game_rules_from_args, run_cancellable, tc_from_args
from arena.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE
from arena.model.schedule import PlayConfig
from arena.run.play import PlaySession, Screen, default_bot, play, sample_bots
from referee import DEFAULT_GAME, games
from referee.lowlevel import configure_logging


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``play`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "play",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="play a game against bots in the terminal",
        description="Play any installed game (arena games) against bots: you are a client of an embedded\n"
                    "referee, like any bot; every other seat is a bot. Each decision shows the game's own\n"
                    "description of the table (your hand grouped, the piles, the table, the scores) and the\n"
                    "numbered legal moves: answer with a number or a move's text as listed (words may be\n"
                    "shortened: 'd kh' for 'discard Kh'); q or end of input resigns.",
        epilog="Examples:\n  arena play --bot expert\n  arena play --rules short --rule target=50 --seat 1\n"
               "  arena play --game rummy --seats 3                # its greedy bot in the other two seats\n"
               "  arena play --command 'node my_bot.js'   # gets --referee A --token T --name N appended\n"
               "                                         # (or use {referee}, {token} and {python} in it)",
    )
    p.add_argument("--game", default=DEFAULT_GAME, metavar="NAME", help=f"the game played (default {DEFAULT_GAME})")
    p.add_argument("--seats", type=int, default=2, metavar="N", help="seats at the table, yours included (default 2)")
    p.add_argument("--bot", default="", metavar="NAME",
                   help="the game's sample bot in the other seats (the bots its registration lists, and js where "
                   "the JavaScript bot plays it; default: the game's own choice, e.g. greedy)")
    p.add_argument("--command", default="", metavar="CMD", help="any other bot's command line instead of --bot")
    p.add_argument("--rules", default="", help="rules preset (default: the game's default)")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="override one rule option, e.g. --rule target=50 (repeatable)")
    p.add_argument("--tc", default="st=600", help="time control (default st=600: 10 minutes a move)")
    p.add_argument("--seat", type=int, default=0, metavar="N", help="your seat, from 0 (default 0)")
    p.add_argument("--seed", default="", help="shuffle seed (any text; default random)")
    p.add_argument("--name", default="you", help="your name (default 'you')")
    p.add_argument("--replay-dir", default="replays", metavar="DIR", help="where the replay goes (default replays)")
    return p


def _players(args: argparse.Namespace, bot_name: str) -> tuple[str, ...]:
    """The players by seat: the human at ``--seat``, the bot (numbered when there are several) elsewhere."""
    others = args.seats - 1
    names = [bot_name if others == 1 else f"{bot_name}-{k}" for k in range(1, others + 1)]
    names = [n if n != args.name else f"{n}-bot" for n in names]
    names.insert(args.seat, args.name)
    return tuple(names)


def spec_from_args(args: argparse.Namespace) -> referee.MatchSpec:
    """The match ``arena play``'s options describe (``UsageError`` naming a wrong option); sets
    ``args.bot`` to the game's default sample bot when neither ``--bot`` nor ``--command`` is given."""
    try:
        engine = games.get(args.game).game
    except ValueError as e:
        raise UsageError(f"--game: {e}") from None
    if args.seats not in engine.seat_counts():
        counts = engine.seat_counts()
        raise UsageError(f"--seats {args.seats}: {args.game} is played by {counts.start}-{counts.stop - 1} seats")
    if not 0 <= args.seat < args.seats:
        raise UsageError(f"--seat {args.seat}: choose 0-{args.seats - 1}")
    if args.bot and args.bot not in sample_bots(args.game):
        raise UsageError(f"--bot {args.bot}: {args.game} has no such sample bot (choose from "
                         f"{', '.join(sample_bots(args.game)) or 'none: give --command CMD'})")
    if not args.command and not args.bot:
        args.bot = default_bot(args.game)
        if not args.bot:
            raise UsageError(f"--game {args.game}: no sample bot plays it by default; give --bot NAME or --command CMD")
    rules = game_rules_from_args(args.game, args.rules, args.rule)
    play = PlayConfig(game=args.game, rules=rules, time_control=tc_from_args(args.tc), reconnect_grace_ms=0)
    return play.spec(_players(args, "opponent" if args.command else args.bot),
                     seed=args.seed.encode() if args.seed else None)


def run(args: argparse.Namespace) -> int:
    """``arena play``."""
    try:
        spec = spec_from_args(args)
    except (UsageError, ValueError) as e:
        print(f"arena play: {e}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging("error", stream=sys.stderr)  # a resign is no warning here
    session = PlaySession(seat=args.seat, name=args.name, bot=args.bot, command=args.command,
                          replay_dir=Path(args.replay_dir))
    screen = Screen(sys.stdout, args.seat, args.game)

    async def go(scope: trio.CancelScope) -> int:
        with scope:
            return await play(session, spec, screen)
        screen.say("\nInterrupted.")
        return EXIT_INTERRUPTED

    try:
        return run_cancellable(go)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
