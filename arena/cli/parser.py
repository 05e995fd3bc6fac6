"""The ``arena`` command line: one function per subcommand's options."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from arena.cli import benchmark_cmd, bots_cmd, certs_cmd, games_cmd, newbot_cmd, newgame_cmd, operator_cmd, protogen_cmd
from arena.cli.options import add_bot_option, add_log_options, add_play_options, add_rating_interval_option
from arena.cli.play_cmd import add_parser as add_play_parser
from arena.cli.web_cmd import add_web_options
from arena.competition.formats import DEFAULT_FORMAT, FORMATS
from arena.competition.ratings import RATERS
from arena.replays import audit
from arena.replays import html as replay_html
from arena.replays import view as replay_view
from arena.results import page as results_page
from referee import DEFAULT_GAME
from referee.lowlevel import add_limit_option, add_operator_options, add_server_tls_options

_FMT = argparse.RawDescriptionHelpFormatter
DB_HELP = "the ladder database (default ~/.gin-arena/ladder.sqlite)"


def arena_version() -> str:
    """The installed gin-arena's version."""
    try:
        return version("gin-arena")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_text() -> str:
    """Which build of each game's engine (the games that ship with the referee as a package
    ``referee.<name>`` with a ``COMPILED`` flag), their shared card core and the byte encoders
    is running: compiled (mypyc) or pure Python."""
    import importlib
    import importlib.util

    from referee import cardcore, games
    from referee.lowlevel import ENCODERS_COMPILED

    def kind(compiled: bool) -> str:
        return "compiled (mypyc)" if compiled else "pure Python"

    parts = []
    for name in games.names():
        if name.isidentifier() and importlib.util.find_spec(f"referee.{name}") is not None:
            module = importlib.import_module(f"referee.{name}")
            if hasattr(module, "COMPILED"):
                parts.append(f"{name} engine {kind(bool(module.COMPILED))}")
    return ", ".join([*parts, f"card core {kind(cardcore.COMPILED)}", f"wire encoders {kind(ENCODERS_COMPILED)}"])


class _Version(argparse.Action):
    """``--version``: the version and the build, worked out only when asked for (it imports
    every game's engine)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"arena (gin-arena) {arena_version()}; {build_text()}")
        parser.exit()


def _demo(sub: Any) -> None:
    demo = sub.add_parser(
        "demo",
        formatter_class=_FMT,
        help="a round robin of the sample bots (about a minute)",
        description="A round robin of a game's sample bots (the bots its registration lists — Gin's random,\n"
        "greedy and expert — and the JS bot, for the games it plays, when node and its node_modules are\n"
        "there) on the embedded referee, with duplicate deals, a progress bar, a crosstable and ratings.\n"
        "A game whose demo seats more than two plays tables of that many, the seats rotated. Replays\n"
        "and results go to runs/demo-<timestamp>.",
    )
    demo.add_argument("--games", type=int, default=0, metavar="N",
                      help="games per pairing, even (default: 72 games in all — 24 per pairing for 3 bots, 12 for 4);"
                      " a game of more seats: games per table, a multiple of its seats (default: its demo's)")
    demo.add_argument("--out", type=Path, default=None, metavar="DIR",
                      help="run folder (default runs/demo-<timestamp>)")
    demo.add_argument("--no-js", action="store_true", help="leave the JS bot out")
    demo.add_argument("--game", default=DEFAULT_GAME, metavar="NAME",
                      help=f"the game (default {DEFAULT_GAME}): any installed game with sample bots (arena games)")
    add_play_options(demo, rules="short", tc="st=1 timemargin=200", concurrency=4)
    add_log_options(demo)


def _tournament(sub: Any) -> None:
    t = sub.add_parser(
        "tournament",
        formatter_class=_FMT,
        help="run a tournament from a bots manifest or inline bots (or resume one)",
        description="Play a round robin or a gauntlet between the bots of a manifest (TOML; see the\n"
        "README) and/or --bot options: every pairing plays --games games in pairs with the seats (and\n"
        "first dealer) swapped; with duplicate deals both games of a pair get the same cards. Tables of\n"
        "--seats N rotate the seats over N games instead (duplicate: the same deck each time). Every\n"
        "finished game is committed to run.sqlite at once: after a crash or Ctrl-C, --resume RUN_DIR\n"
        "finishes the run.",
    )
    t.add_argument("--bots", "-b", type=Path, metavar="FILE", help="the bots manifest (TOML)")
    add_bot_option(t)
    t.add_argument("--resume", type=Path, metavar="RUN_DIR",
                   help="finish an interrupted run (its stored configuration is used; other options are ignored)")
    t.add_argument("--format", choices=list(FORMATS), default=DEFAULT_FORMAT,
                   help="round-robin: everyone plays everyone; gauntlet: the challenger plays everyone else; "
                   "swiss: rounds paired by score, no rematch while avoidable; knockout: a seeded bracket, the "
                   "loser of a tie out (each round planned from the results so far)")
    t.add_argument("--rounds", type=int, default=0, metavar="N",
                   help="swiss: the rounds to play (default: enough for a sole winner, ceil(log2 bots))")
    add_rater_option(t)
    t.add_argument("--challenger", default="", metavar="NAME", help="gauntlet: the challenger (default the first bot)")
    t.add_argument("--games", type=int, default=10, metavar="N",
                   help="games per table, a multiple of --seats (default 10; 2 seats: games per pairing, even)")
    t.add_argument("--game", default=DEFAULT_GAME, metavar="NAME", help=f"the game played (default {DEFAULT_GAME})")
    t.add_argument("--seats", type=int, default=0, metavar="N",
                   help="seats of every table (default: the game's smallest, 2 for Gin)")
    t.add_argument("--tables", type=int, default=0, metavar="K",
                   help="play K tables drawn at random from every combination of --seats bots (default: every "
                   "combination)")
    t.add_argument("--instances", type=int, default=1, metavar="K",
                   help="a bot may fill up to K seats of one table, as separate instances (name#2, …) rated as "
                   "the one bot (default 1)")
    t.add_argument("--duplicate", action=argparse.BooleanOptionalAction, default=True,
                   help="duplicate deals: the two games of a pair are played on the same cards, seats swapped "
                   "(default on)")
    t.add_argument("--sprt", default="", metavar="SPEC",
                   help="two bots only: sequential test, stop when decided, e.g. elo0=0,elo1=10,alpha=0.05,beta=0.05")
    t.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="run folder (default runs/tournament-<timestamp>)")
    add_rating_interval_option(t)
    add_play_options(t)
    add_web_options(t, server_tls=False)
    add_log_options(t)


def _serve(sub: Any) -> None:
    s = sub.add_parser(
        "serve",
        formatter_class=_FMT,
        help="a standalone referee with the arena's bookkeeping",
        description="Run a referee (bot service + operator service) until interrupted. Replays,\n"
        "serve.log and serve.sqlite (every match refereed) go to --dir. Tournaments elsewhere use it with\n"
        "`arena tournament --referee HOST:PORT`; remote bots connect to it with their tokens.",
    )
    s.add_argument("--listen", default="127.0.0.1:50051", metavar="HOST:PORT",
                   help="address to listen on (default 127.0.0.1:50051; 0.0.0.0:PORT for other machines)")
    s.add_argument("--dir", type=Path, default=None, metavar="DIR", help="folder (default runs/serve-<timestamp>)")
    add_operator_options(s, "DIR")
    add_server_tls_options(s)
    s.add_argument("--ladder", type=Path, default=None, metavar="LADDER.toml",
                   help="what the continuous ladder pairs the registered bots online for, and how (docs/hosted.md); "
                   "default: the default game's default preset, its fewest seats, the default time control")
    s.add_argument("--insecure", action="store_true",
                   help="serve plaintext on a non-loopback --listen or --web address (without it, such an address "
                   "needs TLS: bot and operator tokens, and the web's sign-in cookie, cross the network)")
    add_limit_option(s)
    add_web_options(s, server_tls=True)
    add_log_options(s)


def add_rater_option(p: argparse.ArgumentParser) -> None:
    """``--rater NAME`` (repeatable): the raters of the results, the first ordering the standings."""
    p.add_argument("--rater", action="append", choices=list(RATERS), default=None, metavar="NAME",
                   help=f"rate the results with this method ({', '.join(RATERS)}); repeat for several, the "
                   "first orders the standings (default: elo and bt, for more than two seats elo and openskill)")


def _report(sub: Any) -> None:
    r = sub.add_parser(
        "report",
        help="print a run's results and rewrite its results files",
        description="Print the standings, crosstable and SPRT of a run folder (finished or not) "
        "and rewrite results.json and the CSV files from run.sqlite.",
    )
    r.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    r.add_argument("--json", action="store_true", help="print results.json instead of tables")
    add_rater_option(r)


def _ladder(sub: Any) -> None:
    lad = sub.add_parser(
        "ladder",
        help="a persistent local ladder (add, remove, run, show, runs, drop)",
        description="A local ladder kept in SQLite (default ~/.gin-arena/ladder.sqlite): bots are "
        "added once; each run plays duplicate pairs for the least-played pairs; "
        "ratings are recomputed from every stored game.",
    )
    lsub = lad.add_subparsers(dest="ladder_command", required=True, metavar="ACTION")
    la = lsub.add_parser(
        "add",
        help="add a bot (or every bot of a manifest, or inline bots)",
        description="Add a bot: arena ladder add NAME --command '{python} -m sample_bots.greedy_bot' "
        "(or everything after --), every bot of --manifest FILE, or --bot name=NAME cmd=\"CMD\". "
        "A bot whose program cannot start is refused.",
    )
    la.add_argument("name", nargs="?", help="the bot's name")
    la.add_argument("--command", default=None, metavar="CMD", help="the command line (split like a shell)")
    la.add_argument("--cwd", default="", help="working directory (default the current one)")
    la.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment variable (repeatable)")
    la.add_argument("--protocol", choices=["grpc", "stdio"], default="grpc")
    la.add_argument("--tc", default=None, metavar="TC", help="the bot's own time control (default: the run's --tc)")
    la.add_argument("--manifest", type=Path, default=None, metavar="FILE", help="add every bot of a manifest")
    add_bot_option(la)
    la.add_argument("--replace", action="store_true", help="replace a bot of the same name")
    lr = lsub.add_parser("remove", help="take a bot off the ladder (its games are kept)")
    lr.add_argument("name")
    lrun = lsub.add_parser("run", help="play games for the least-played pairs")
    lrun.add_argument("--games", type=int, default=10, metavar="N",
                      help="games to play (rounded up to even; to a multiple of --seats)")
    lrun.add_argument("--game", default=DEFAULT_GAME, metavar="NAME",
                      help=f"the game played (default {DEFAULT_GAME}; one per ladder)")
    lrun.add_argument("--seats", type=int, default=0, metavar="N",
                      help="seats of every table (default: the game's smallest, 2 for Gin)")
    add_rating_interval_option(lrun)
    add_play_options(lrun)
    add_log_options(lrun)
    lshow = lsub.add_parser("show", help="ratings from every stored game")
    lshow.add_argument("--json", action="store_true", help="JSON instead of a table")
    lruns = lsub.add_parser("runs", help="the ladder's runs (id, time, games, bots)")
    lruns.add_argument("--json", action="store_true", help="JSON instead of a table")
    ldrop = lsub.add_parser("drop", help="delete the games of one run (--run) or of one bot (--bot)")
    which = ldrop.add_mutually_exclusive_group(required=True)
    which.add_argument("--run", default=None, metavar="RUN_ID", help="delete this run's games (see `ladder runs`)")
    which.add_argument("--bot", default=None, metavar="NAME", help="delete every game this bot played")
    for lp in (la, lr, lrun, lshow, lruns, ldrop):
        lp.add_argument("--db", type=Path, default=None, metavar="FILE", help=DB_HELP)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        formatter_class=_FMT,
        description="Gin Arena: tournaments between Gin Rummy bots (any language) on a gRPC referee.\n"
        "Results go to a run folder: a SQLite database (resumable), JSON/CSV results, replays, logs.",
        epilog="Examples:\n"
        "  arena demo\n"
        "  arena tournament --bots bots.toml --games 20 --tc 'st=0.5 timemargin=50' --concurrency 4\n"
        "  arena tournament --bot name=a cmd='{python} -m sample_bots.greedy_bot' \\\n"
        "                   --bot name=b cmd='{python} -m sample_bots.random_bot' tc=st=0.2\n"
        "  arena tournament --resume runs/tournament-20250101-120000\n"
        "  arena tournament --bots two.toml --format gauntlet --games 400 --sprt elo0=0,elo1=20\n"
        "  arena serve --listen 0.0.0.0:50051      # then: arena tournament --referee host:50051 ...\n"
        "  arena ladder add greedy --command '{python} -m sample_bots.greedy_bot'\n"
        "  arena ladder run --games 20 && arena ladder show\n",
    )
    parser.add_argument("--version", action=_Version, help="show the version and which build runs, and exit")
    sub = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND")
    for add in (_demo, _tournament, _serve, _report, _ladder):
        add(sub)
    benchmark_cmd.add_parser(sub)
    add_play_parser(sub)
    certs_cmd.add_parser(sub)
    operator_cmd.add_parser(sub)
    bots_cmd.add_parser(sub)
    for module in (audit, replay_view, replay_html, results_page, games_cmd, newbot_cmd, newgame_cmd, protogen_cmd):
        module.add_parser(sub)
    return parser
