"""``arena ladder add|remove|run|show|runs|drop``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from arena.cli.options import (
    UsageError,
    check_listen_free,
    check_referee,
    cluster_spec,
    inline_text,
    listen_of,
    make_console,
    play_config,
    remote_access,
    run_cancellable,
)
from arena.exit_codes import EXIT_INTERRUPTED, EXIT_OK
from arena.model.manifest import BotSpec, ManifestError, check_name, load_manifest, parse_bot, parse_inline_bot
from arena.results.report import table
from arena.results.standings import render_standings, standings
from arena.run.ladder import DEFAULT_DB, Ladder, LadderRunResult, check_bots, render_ladder, run_ladder
from referee import games as referee_games


def _bot_from_args(args: argparse.Namespace) -> BotSpec:
    argv = list(args.argv)
    if args.command is not None:
        argv = shlex.split(args.command) + argv
    if not args.name or not argv:
        raise UsageError("ladder add: give NAME and --command 'CMD ARGS' (or -- CMD ARGS), --bot name=NAME "
                         "cmd=\"CMD\", or --manifest FILE")
    if (why := check_name(args.name)) is not None:
        raise UsageError(f"ladder add: name {why}")
    env: dict[str, str] = {}
    for item in args.env:
        k, sep, v = item.partition("=")
        if not sep:
            raise UsageError(f"--env {item!r}: expected KEY=VALUE")
        env[k] = v
    raw: dict[str, Any] = {"name": args.name, "command": argv, "env": env, "protocol": args.protocol}
    if args.cwd:
        raw["cwd"] = args.cwd
    if args.tc is not None:
        raw["tc"] = args.tc
    parsed, problems = parse_bot(raw, Path.cwd(), f"ladder add {args.name}")
    if parsed is None:
        raise ManifestError(problems)
    return parsed


def _add(ladder: Ladder, args: argparse.Namespace) -> int:
    bots: list[BotSpec] = []
    if args.manifest is not None:
        bots += load_manifest(args.manifest, minimum=1)
    bots += [parse_inline_bot(inline_text(words), Path.cwd()) for words in args.bot]
    if args.name or args.command is not None or args.argv or not bots:
        bots.append(_bot_from_args(args))
    check_bots(bots)  # a bot that cannot start never gets on the ladder
    for bot in bots:
        ladder.add(bot, replace=args.replace)
        print(f"added {bot.name}: {shlex.join(bot.command)}")
    return EXIT_OK


def _remove(ladder: Ladder, args: argparse.Namespace) -> int:
    ladder.remove(args.name)
    print(f"removed {args.name} (its games still count; `arena ladder drop --bot {args.name}` deletes them)")
    return EXIT_OK


def _run(ladder: Ladder, args: argparse.Namespace) -> int:
    console = make_console(args)
    if args.games < 1:
        raise UsageError("--games must be at least 1")
    play = play_config(args)
    counts = referee_games.get(play.game).game.seat_counts()
    seats = args.seats or min(counts)
    if seats not in counts:
        raise UsageError(f"--seats {seats}: {play.game} is played by {counts.start} to {counts.stop - 1} seats")
    access = remote_access(args)
    cluster = cluster_spec(args)
    check_listen_free(args)
    check_referee(args, access)
    started = time.monotonic()

    async def go(scope: trio.CancelScope) -> LadderRunResult:
        return await run_ladder(ladder, console, play, args.games, referee=args.referee, listen=listen_of(args),
                                seed=args.seed, cancel_scope=scope, seats=seats, access=access, cluster=cluster,
                                rating_interval=args.rating_interval)

    result = run_cancellable(go)
    print(f"{result.done} game(s) played in {time.monotonic() - started:.1f} s (run {result.run_id}); "
          f"replays and logs in {result.folder}")
    for bot in result.always_crashed:
        print(f"warning: {bot} crashed or never connected in every game it played (see {result.folder / 'logs'});"
              f" fix its command, then `arena ladder drop --run {result.run_id}` or `--bot {bot}`")
    ratings, report = ladder.standings()
    print(render_ladder(ratings, report, {b.name for b in ladder.bots()}))
    return EXIT_INTERRUPTED if result.done < -(-args.games // max(2, seats)) * max(2, seats) else EXIT_OK


def _show(ladder: Ladder, args: argparse.Namespace) -> int:
    ratings, report = ladder.standings()
    skill = standings(ladder.conn)  # the engine the hosted server's standings use
    if args.json:
        shown = {
            "ratings": [{"bot": r.bot, "elo": round(r.elo, 1), "margin": round(r.margin, 1), "pairs": r.units}
                        for r in ratings],
            "standings": report["standings"],
            "skill": [dataclasses.asdict(s) for s in skill],
        }
        print(json.dumps(shown, indent=2))
    else:
        print(f"Ladder {ladder.path}: {report['games_played']} games")
        print(render_ladder(ratings, report, {b.name for b in ladder.bots()}))
        print("\nRatings with their uncertainty (openskill, the hosted server's standings):")
        print(render_standings(skill))
    return EXIT_OK


def _runs(ladder: Ladder, args: argparse.Namespace) -> int:
    runs = ladder.runs()
    if args.json:
        print(json.dumps([{"run": r.run_id, "started_at": r.started_at, "games": r.games, "bots": list(r.bots)}
                          for r in runs], indent=2))
        return EXIT_OK
    rows = [[r.run_id, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.started_at)), r.games, ", ".join(r.bots)]
            for r in runs]
    print(table(["run", "started", "games", "bots"], rows, right=[2]) if rows else "No ladder runs yet.")
    return EXIT_OK


def _drop(ladder: Ladder, args: argparse.Namespace) -> int:
    if args.run is not None:
        n = ladder.drop_run(args.run)
        print(f"dropped run {args.run}: {n} game(s) deleted")
    else:
        n = ladder.drop_bot(args.bot)
        print(f"dropped {n} game(s) of {args.bot} (the bot stays on the ladder; `arena ladder remove` takes it off)")
    return EXIT_OK


ACTIONS: dict[str, Callable[[Ladder, argparse.Namespace], int]] = {
    "add": _add, "remove": _remove, "run": _run, "show": _show, "runs": _runs, "drop": _drop,
}


def cmd_ladder(args: argparse.Namespace) -> int:
    path = (args.db or DEFAULT_DB).expanduser()
    if args.ladder_command in ("show", "runs") and not path.exists():
        print(f"No ladder at {path} yet: add bots with `arena ladder add`.")
        return EXIT_OK
    ladder = Ladder(path)
    try:
        return ACTIONS[args.ladder_command](ladder, args)
    finally:
        ladder.close()
