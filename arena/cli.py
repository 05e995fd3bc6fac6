"""The ``arena`` command: tournaments between bot programs on a Gin Rummy referee.

Subcommands: ``demo``, ``tournament``, ``serve``, ``report``, ``ladder add|remove|run|show``.
Exit codes: 0 done, 1 the run failed, 2 bad command line or manifest, 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import secrets
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import trio

import referee
from referee import TimeControl, TimeControlError
from referee.gin import PRESETS, RuleSet, RuleSetError

from . import audit, play, replay_html, replay_view, results_page
from . import console as console_mod
from .console import Console
from .ladder import DEFAULT_DB, Ladder, LadderError, render_ladder, run_ladder
from .manifest import BotSpec, ManifestError, check_name, load_manifest, parse_bot
from .results import render_text
from .runner import PlaySettings, default_startup_slots
from .schedule import FORMATS, Format, RunConfig
from .serve import serve
from .stats import SprtSpec
from .store import RunStore, StoreError
from .tournament import new_bot_tokens, new_run_id, run_folder, run_tournament, summary_text, write_results

T = TypeVar("T")

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_TC = "st=1 timemargin=50"
DEMO_GAMES = 72
"""Games the demo plays in all by default (about a minute on 2 cores)."""


class UsageError(Exception):
    """A bad option value (exit code 2)."""


# ----- option parsing helpers -----
def _rule_value(text: str) -> object:
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(text)
    except ValueError:
        return text


def rules_from_args(preset: str, overrides: list[str]) -> RuleSet:
    values: dict[str, object] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--rule {item!r}: expected KEY=VALUE, e.g. --rule target=50")
        values[key.strip()] = _rule_value(value.strip())
    try:
        return RuleSet.preset(preset, **values)
    except RuleSetError as e:
        raise UsageError(f"rules: {e}") from None


def tc_from_args(text: str) -> TimeControl:
    try:
        return TimeControl.parse(text)
    except TimeControlError as e:
        raise UsageError(f"--tc {text!r}: {e}") from None


def _address(text: str, what: str) -> str:
    _, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"{what} {text!r}: expected HOST:PORT")
    return text


def add_play_options(
    p: argparse.ArgumentParser, *, rules: str = "classic", tc: str = DEFAULT_TC, concurrency: int = 2
) -> None:
    g = p.add_argument_group("how games are played")
    g.add_argument("--rules", default=rules, choices=PRESETS, help=f"rules preset (default {rules})")
    g.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one rule option, e.g. --rule target=50 --rule games=3 (repeatable)",
    )
    g.add_argument(
        "--tc",
        default=tc,
        metavar="TC",
        help=f'time control, cutechess style: "st=1" (seconds per decision) or "tc=60+0.5" '
        f'(bank+increment), with "timemargin=50" (ms forgiven) (default "{tc}")',
    )
    g.add_argument(
        "--concurrency",
        type=int,
        default=concurrency,
        metavar="N",
        help=f"games played at once (default {concurrency})",
    )
    g.add_argument(
        "--fault-policy",
        choices=["forfeit", "substitute"],
        default="forfeit",
        help="a faulting bot (time, illegal move, crash, disconnect) forfeits the game, or a "
        "built-in bot plays its seat to the end of the game (default forfeit)",
    )
    g.add_argument(
        "--connect-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds a game waits for its bots to connect (default 60)",
    )
    g.add_argument(
        "--referee",
        default="",
        metavar="HOST:PORT",
        help="use a remote referee (e.g. `arena serve`) instead of the embedded one",
    )
    g.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="where the embedded referee listens (default 127.0.0.1:0 = any free port; "
        "use 0.0.0.0:PORT to let remote bots in)",
    )
    g.add_argument("--seed", default="", help="run seed (any text; default random): every deal derives from it")


def add_log_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    g.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more log lines on stderr (-v arena info, -vv also the referee's, -vvv debug)",
    )
    g.add_argument("--log-json", action="store_true", default=None, help="JSON log lines on stderr even on a terminal")
    g.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning"],
        help="level of run.log in the run folder (default info)",
    )
    g.add_argument("--no-progress", action="store_true", help="no progress bar")


# ----- parser -----
def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="arena",
        formatter_class=fmt,
        description="Gin Arena: tournaments between Gin Rummy bots (any language) on a gRPC referee.\n"
        "Results go to a run folder: a SQLite database (resumable), JSON/CSV results, replays, logs.",
        epilog="Examples:\n"
        "  arena demo\n"
        "  arena tournament --bots bots.toml --games 20 --tc 'st=0.5 timemargin=50' --concurrency 4\n"
        "  arena tournament --resume runs/tournament-20250101-120000\n"
        "  arena tournament --bots two.toml --format gauntlet --games 400 --sprt elo0=0,elo1=20\n"
        "  arena serve --listen 0.0.0.0:50051      # then: arena tournament --referee host:50051 ...\n"
        "  arena ladder add greedy --command 'python -m sample_bots.greedy_bot'\n"
        "  arena ladder run --games 20 && arena ladder show\n",
    )
    sub = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        formatter_class=fmt,
        help="a round robin of the sample bots (about a minute)",
        description="A round robin of the sample bots (random, greedy, expert, and the JS bot when node\n"
        "and its node_modules are there) on the embedded referee, with duplicate deals, a progress\n"
        "bar, a crosstable and ratings. Replays and results go to runs/demo-<timestamp>.",
    )
    demo.add_argument(
        "--games",
        type=int,
        default=0,
        metavar="N",
        help="games per pairing, even (default: 72 games in all — 24 per pairing for 3 bots, 12 for 4)",
    )
    demo.add_argument(
        "--out", type=Path, default=None, metavar="DIR", help="run folder (default runs/demo-<timestamp>)"
    )
    demo.add_argument("--no-js", action="store_true", help="leave the JS bot out")
    add_play_options(demo, rules="short", tc="st=0.5 timemargin=100", concurrency=4)
    add_log_options(demo)

    t = sub.add_parser(
        "tournament",
        formatter_class=fmt,
        help="run a tournament from a bots manifest (or resume one)",
        description="Play a round robin or a gauntlet between the bots of a manifest (TOML; see the\n"
        "README): every pairing plays --games games in pairs with the seats (and first dealer)\n"
        "swapped; with duplicate deals both games of a pair get the same cards. Every finished game\n"
        "is committed to run.sqlite at once: after a crash or Ctrl-C, --resume RUN_DIR finishes the run.",
    )
    t.add_argument("--bots", "-b", type=Path, metavar="FILE", help="the bots manifest (TOML)")
    t.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="finish an interrupted run (its stored configuration is used; other options are ignored)",
    )
    t.add_argument(
        "--format",
        choices=FORMATS,
        default="round-robin",
        help="round-robin: everyone plays everyone; gauntlet: the challenger plays everyone else",
    )
    t.add_argument("--challenger", default="", metavar="NAME", help="gauntlet: the challenger (default the first bot)")
    t.add_argument("--games", type=int, default=10, metavar="N", help="games per pairing, even (default 10)")
    t.add_argument(
        "--duplicate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="duplicate deals: the two games of a pair are played on the same cards, seats swapped (default on)",
    )
    t.add_argument(
        "--sprt",
        default="",
        metavar="SPEC",
        help="two bots only: sequential test, stop when decided, e.g. elo0=0,elo1=10,alpha=0.05,beta=0.05",
    )
    t.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="run folder (default runs/tournament-<timestamp>)",
    )
    add_play_options(t)
    add_log_options(t)

    s = sub.add_parser(
        "serve",
        formatter_class=fmt,
        help="a standalone referee with the arena's bookkeeping",
        description="Run a referee (bot service + operator service) until interrupted. Replays,\n"
        "serve.log and serve.sqlite (every match refereed) go to --dir. Tournaments elsewhere use it with\n"
        "`arena tournament --referee HOST:PORT`; remote bots connect to it with their tokens.",
    )
    s.add_argument(
        "--listen",
        default="127.0.0.1:50051",
        metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:50051; 0.0.0.0:PORT for other machines)",
    )
    s.add_argument("--dir", type=Path, default=None, metavar="DIR", help="folder (default runs/serve-<timestamp>)")
    add_log_options(s)

    r = sub.add_parser(
        "report",
        help="print a run's results and rewrite its results files",
        description="Print the standings, crosstable and SPRT of a run folder (finished or not) "
        "and rewrite results.json and the CSV files from run.sqlite.",
    )
    r.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    r.add_argument("--json", action="store_true", help="print results.json instead of tables")

    lad = sub.add_parser(
        "ladder",
        help="a persistent local ladder (add, remove, run, show)",
        description="A local ladder kept in SQLite (default ~/.gin-arena/ladder.sqlite): bots are "
        "added once; each run plays duplicate pairs for the least-played pairs; "
        "ratings are recomputed from every stored game.",
    )
    lsub = lad.add_subparsers(dest="ladder_command", required=True, metavar="ACTION")
    la = lsub.add_parser(
        "add",
        help="add a bot (or every bot of a manifest)",
        description="Add a bot: arena ladder add NAME --command 'python -m sample_bots.greedy_bot' "
        "(or everything after --), or every bot of --manifest FILE.",
    )
    la.add_argument("name", nargs="?", help="the bot's name")
    la.add_argument("--command", default=None, metavar="CMD", help="the command line (split like a shell)")
    la.add_argument("--cwd", default="", help="working directory (default the current one)")
    la.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="environment variable (repeatable)")
    la.add_argument("--protocol", choices=["grpc", "stdio"], default="grpc")
    la.add_argument("--manifest", type=Path, default=None, metavar="FILE", help="add every bot of a manifest")
    la.add_argument("--replace", action="store_true", help="replace a bot of the same name")
    lr = lsub.add_parser("remove", help="take a bot off the ladder (its games are kept)")
    lr.add_argument("name")
    lrun = lsub.add_parser("run", help="play games for the least-played pairs")
    lrun.add_argument("--games", type=int, default=10, metavar="N", help="games to play (rounded up to even)")
    add_play_options(lrun)
    add_log_options(lrun)
    lshow = lsub.add_parser("show", help="ratings from every stored game")
    lshow.add_argument("--json", action="store_true", help="JSON instead of a table")
    for lp in (la, lr, lrun, lshow):
        lp.add_argument(
            "--db",
            type=Path,
            default=None,
            metavar="FILE",
            help="the ladder database (default ~/.gin-arena/ladder.sqlite)",
        )
    for module in (play, audit, replay_view, replay_html, results_page):
        module.add_parser(sub)
    return parser


# ----- running trio under the referee's runtime, with Ctrl-C -----
def run_cancellable(fn: Callable[[trio.CancelScope], Awaitable[T]]) -> T:
    """Run ``fn(scope)`` inside ``referee.run``; SIGINT/SIGTERM cancel ``scope``."""

    async def main() -> T:
        scope = trio.CancelScope()
        token = trio.lowlevel.current_trio_token()
        loop = asyncio.get_running_loop()
        hits = 0

        def on_signal() -> None:
            nonlocal hits
            hits += 1
            if hits == 1:
                print(
                    "\nStopping: aborting running games and ending bots (results so far are kept)...",
                    file=sys.stderr,
                    flush=True,
                )
            token.run_sync_soon(scope.cancel)

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, on_signal)
        return await fn(scope)

    return referee.run(main)


def _console(args: argparse.Namespace) -> Console:
    c = Console(progress=False if getattr(args, "no_progress", False) else None)
    console_mod.configure(
        c,
        verbose=getattr(args, "verbose", 0),
        log_json=getattr(args, "log_json", None),
        file_level=getattr(args, "log_level", "info"),
    )
    return c


def _config(
    args: argparse.Namespace,
    run_dir: Path,
    bots: list[BotSpec],
    *,
    fmt: Format = "round-robin",
    games: int = 2,
    duplicate: bool = True,
    challenger: str = "",
    sprt: str = "",
) -> RunConfig:
    if games < 2 or games % 2:
        raise UsageError(
            f"--games {games}: games per pairing must be even and at least 2 (each pair of games swaps the seats)"
        )
    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    rules = rules_from_args(args.rules, args.rule)
    tc = tc_from_args(args.tc)
    if sprt:
        try:
            SprtSpec.parse(sprt)
        except ValueError as e:
            raise UsageError(f"--sprt: {e}") from None
        if len(bots) != 2:
            raise UsageError(f"--sprt needs exactly two bots; the manifest has {len(bots)}")
    if challenger and challenger not in [b.name for b in bots]:
        raise UsageError(f"--challenger {challenger!r} is not a bot of the manifest")
    if args.referee:
        _address(args.referee, "--referee")
    _address(args.listen, "--listen")
    try:
        return RunConfig(
            run_id=new_run_id(run_dir),
            bots=tuple(b.name for b in bots),
            format=fmt,
            games=games,
            duplicate=duplicate,
            seed=args.seed or secrets.token_hex(8),
            rules=rules.to_dict(),
            time_control=str(tc),
            fault_policy=args.fault_policy,
            concurrency=args.concurrency,
            connect_timeout_ms=int(args.connect_timeout * 1000),
            challenger=challenger,
            sprt=sprt,
            referee=args.referee,
            listen=args.listen,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None


def _play_run(store: RunStore, console: Console, resumed: bool) -> int:
    cfg = store.config
    where = cfg.referee or "the embedded referee"
    print(
        f"Run {store.run_dir}: {cfg.format}, {len(cfg.bots)} bots, {cfg.games} games per pairing"
        f"{' (duplicate deals)' if cfg.duplicate else ''}, rules {cfg.rules.get('name')}, "
        f"{cfg.time_control}, "
        f"concurrency {cfg.concurrency}, on {where}",
        flush=True,
    )
    started = time.monotonic()
    try:
        result = run_cancellable(lambda scope: run_tournament(store, console, resumed=resumed, cancel_scope=scope))
    except (ConnectionError, OSError, grpc.RpcError) as e:
        print(
            f"arena: the run failed: {e}\nThe games finished so far are kept; continue with: "
            f"arena tournament --resume {store.run_dir}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print()
    print(summary_text(result, store.run_dir))
    try:
        page = results_page.write_results_page(store.run_dir)
        print(f"Results page: {page} (every game linked to its HTML replay)")
    except (OSError, ValueError) as e:  # the results files are written; the page is a bonus
        print(f"arena: could not write the results page: {e}", file=sys.stderr)
    print(f"Time: {time.monotonic() - started:.1f} s")
    return EXIT_INTERRUPTED if result.status == "interrupted" else EXIT_OK


# ----- commands -----
def sample_bots(include_js: bool) -> tuple[list[BotSpec], str]:
    """The sample bots for the demo, and a note about the JS bot."""
    spec = importlib.util.find_spec("sample_bots")
    root = Path(spec.origin).parent.parent if spec and spec.origin else Path.cwd()
    bots = [
        BotSpec(
            name=n,
            command=(sys.executable, "-m", f"sample_bots.{n}_bot"),
            cwd=str(root),
            env={"GIN_LOG_LEVEL": "WARNING"},
        )
        for n in ("random", "greedy", "expert")
    ]
    js = root / "sample_bots" / "js"
    node = shutil.which("node")
    note = ""
    if not include_js:
        note = "JS bot left out (--no-js)."
    elif node is None:
        note = "JS bot skipped: `node` is not on PATH."
    elif not (js / "node_modules").is_dir() or not (js / "bot.js").is_file():
        note = f"JS bot skipped: {js}/node_modules is missing (run `npm install` in {js})."
    else:
        bots.append(BotSpec(name="js", command=(node, str(js / "bot.js")), cwd=str(root)))
    return bots, note


def cmd_demo(args: argparse.Namespace) -> int:
    console = _console(args)
    bots, note = sample_bots(not args.no_js)
    if note:
        print(note)
    run_dir = args.out or _default_folder("demo")
    pairings = len(bots) * (len(bots) - 1) // 2
    games = args.games or max(2, round(DEMO_GAMES / pairings / 2) * 2)
    cfg = _config(args, run_dir, bots, games=games)
    store = RunStore.create(run_dir, cfg, bots, {})
    try:
        return _play_run(store, console, resumed=False)
    finally:
        store.close()


def _default_folder(name: str) -> Path:
    return run_folder(Path("runs"), name)


def cmd_tournament(args: argparse.Namespace) -> int:
    console = _console(args)
    if args.resume is not None:
        if args.bots is not None:
            print("note: --resume uses the run's stored bots and settings; --bots is ignored", file=sys.stderr)
        store = RunStore.open(args.resume, lock=True)
        try:
            status = store.meta("status")
            if store.counts()["pending"] + store.counts()["running"] == 0 or status == "stopped":
                print(f"{args.resume}: the run is already complete ({status}).")
            return _play_run(store, console, resumed=True)
        finally:
            store.close()
    if args.bots is None:
        raise UsageError("give --bots FILE (a manifest) or --resume RUN_DIR")
    bots = load_manifest(args.bots)
    run_dir = args.out or _default_folder("tournament")
    if (run_dir / "run.sqlite").exists():
        raise UsageError(f"{run_dir} already holds a run; use --resume {run_dir} or another --out")
    cfg = _config(
        args,
        run_dir,
        bots,
        fmt=args.format,
        games=args.games,
        duplicate=args.duplicate,
        challenger=args.challenger,
        sprt=args.sprt,
    )
    store = RunStore.create(run_dir, cfg, bots, new_bot_tokens(bots), args.bots.read_text(encoding="utf-8"))
    try:
        return _play_run(store, console, resumed=False)
    finally:
        store.close()


def cmd_serve(args: argparse.Namespace) -> int:
    _console(args)
    _address(args.listen, "--listen")
    folder = args.dir or _default_folder("serve")

    async def go(scope: trio.CancelScope) -> None:
        with scope:
            await serve(args.listen, folder)

    run_cancellable(go)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    store = RunStore.open(args.run_dir)
    try:
        report = write_results(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(render_text(report))
    return EXIT_OK


def _ladder_path(args: argparse.Namespace) -> Path:
    return (args.db or DEFAULT_DB).expanduser()


def cmd_ladder(args: argparse.Namespace) -> int:
    path = _ladder_path(args)
    action = args.ladder_command
    if action == "show" and not path.exists():
        print(f"No ladder at {path} yet: add bots with `arena ladder add`.")
        return EXIT_OK
    ladder = Ladder(path)
    try:
        if action == "add":
            if args.manifest is not None:
                for bot in load_manifest(args.manifest, minimum=1):
                    ladder.add(bot, replace=args.replace)
                    print(f"added {bot.name}")
                return EXIT_OK
            argv = list(args.argv)
            if args.command is not None:
                argv = shlex.split(args.command) + argv
            if not args.name or not argv:
                raise UsageError("ladder add: give NAME and --command 'CMD ARGS' (or -- CMD ARGS), or --manifest FILE")
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
            parsed, problems = parse_bot(raw, Path.cwd(), f"ladder add {args.name}")
            if parsed is None:
                raise ManifestError(problems)
            bot = parsed
            ladder.add(bot, replace=args.replace)
            print(f"added {bot.name}: {' '.join(bot.command)}")
            return EXIT_OK
        if action == "remove":
            ladder.remove(args.name)
            print(f"removed {args.name} (its games still count)")
            return EXIT_OK
        if action == "run":
            console = _console(args)
            if args.games < 1:
                raise UsageError("--games must be at least 1")
            settings = PlaySettings(
                rules=rules_from_args(args.rules, args.rule),
                time_control=tc_from_args(args.tc),
                fault_policy=args.fault_policy,
                connect_timeout_ms=int(args.connect_timeout * 1000),
                concurrency=args.concurrency,
                startup_slots=default_startup_slots(),
            )
            if args.referee:
                _address(args.referee, "--referee")
            started = time.monotonic()
            interrupted = False

            async def go(scope: trio.CancelScope) -> tuple[int, Path]:
                return await run_ladder(
                    ladder,
                    console,
                    settings,
                    args.games,
                    referee=args.referee,
                    listen=args.listen,
                    seed=args.seed,
                    cancel_scope=scope,
                )

            done, folder = run_cancellable(go)
            interrupted = done < args.games + (args.games % 2)
            print(f"{done} game(s) played in {time.monotonic() - started:.1f} s; replays and logs in {folder}")
            ratings, report = ladder.standings()
            print(render_ladder(ratings, report, {b.name for b in ladder.bots()}))
            return EXIT_INTERRUPTED if interrupted else EXIT_OK
        ratings, report = ladder.standings()
        if args.json:
            print(
                json.dumps(
                    {
                        "ratings": [
                            {
                                "bot": r.bot,
                                "elo": round(r.elo, 1),
                                "margin": round(r.margin, 1),
                                "pairs": r.units,
                            }
                            for r in ratings
                        ],
                        "standings": report["standings"],
                    },
                    indent=2,
                )
            )
        else:
            print(f"Ladder {path}: {report['games_played']} games")
            print(render_ladder(ratings, report, {b.name for b in ladder.bots()}))
        return EXIT_OK
    finally:
        ladder.close()


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    tail: list[str] = []
    if "--" in argv:  # `arena ladder add NAME -- CMD ARGS...`
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if tail and not (args.subcommand == "ladder" and args.ladder_command == "add"):
        parser.error("a command after -- is only taken by `arena ladder add NAME -- CMD ARGS`")
    args.argv = tail
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "demo": cmd_demo,
        "tournament": cmd_tournament,
        "serve": cmd_serve,
        "report": cmd_report,
        "ladder": cmd_ladder,
        "play": play.run,
        "audit": audit.run,
        "replay": replay_view.run,
        "replay-html": replay_html.run,
        "html": results_page.run,
    }
    try:
        return handlers[args.subcommand](args)
    except ManifestError as e:
        print(f"arena: the manifest has {len(e.problems)} problem(s):", file=sys.stderr)
        for p in e.problems:
            print(f"  {p}", file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, LadderError) as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ConnectionError as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
