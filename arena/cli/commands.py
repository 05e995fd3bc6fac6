"""The ``arena`` commands that run or read tournaments: ``demo``, ``tournament``, ``serve``, ``report``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import secrets
import shutil
import sys
import time
from pathlib import Path

import grpc
import trio

import referee
from arena.cli.options import (
    UsageError,
    address,
    bots_from_args,
    check_listen_free,
    check_referee,
    check_startable,
    cluster_spec,
    is_loopback,
    listen_of,
    make_console,
    play_config,
    remote_access,
    run_cancellable,
)
from arena.cli.web_cmd import WebStarter, web_starter
from arena.competition.formats import DEFAULT_FORMAT
from arena.console import Console
from arena.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from arena.hosted.ladder import HostedLadder, split_limits
from arena.hosted.ladder_file import LadderFileError, load_ladder
from arena.hosted.registry import BotRegistry
from arena.hosted.service import arena_service
from arena.model.manifest import BotSpec, ManifestError, not_playing
from arena.model.schedule import RunConfig
from arena.results import page as results_page
from arena.results.report import render_text
from arena.results.stats import SprtSpec
from arena.run.placement import BotsUnreachable, ClusterSpec, NoWorkers
from arena.run.samples import JS_BOT, js_games, sample_root, samples
from arena.run.serve import serve
from arena.run.tournament import (
    RemoteAccess,
    new_bot_tokens,
    new_run_id,
    placed,
    run_folder,
    run_tournament,
    summary_text,
    where_played,
    write_results,
)
from arena.store import DB_NAME, RunStore, open_db
from referee import DEFAULT_GAME, ListenError, TLSConfigError
from referee import games as referee_games
from referee.lowlevel import TokenFileError, check_can_listen, client_operator_token, server_tls_from_args

DEMO_GAMES = 72
"""Games the demo plays in all by default (about a minute on 2 cores)."""


def network_failure(e: BaseException) -> str | None:
    """What a failure of the referee's connection (or the network), possibly inside a task
    group's exception group, says in one line; ``None`` for any other error."""
    if isinstance(e, BaseExceptionGroup):
        found = [network_failure(x) for x in e.exceptions]
        return next((w for w in found if w is not None), None)
    if isinstance(e, grpc.RpcError) and hasattr(e, "code"):
        return f"the referee answered {e.code().name}: {e.details()}"
    if isinstance(e, (ConnectionError, OSError, grpc.RpcError)):
        return " ".join(str(e).split())
    return None

def default_folder(name: str) -> Path:
    return run_folder(Path("runs"), name)


def run_config(
    args: argparse.Namespace,
    run_dir: Path,
    bots: list[BotSpec],
    *,
    fmt: str = DEFAULT_FORMAT,
    games: int = 2,
    duplicate: bool = True,
    challenger: str = "",
    sprt: str = "",
) -> RunConfig:
    """A new run's configuration from its command line (checked and parsed once)."""
    play = play_config(args)
    counts = referee_games.get(play.game).game.seat_counts()
    seats = getattr(args, "seats", 0) or min(counts)
    if seats not in counts:
        raise UsageError(f"--seats {seats}: {play.game} is played by {counts.start} to {counts.stop - 1} seats")
    if seats == 2 and (games < 2 or games % 2):
        raise UsageError(
            f"--games {games}: games per pairing must be even and at least 2 (each pair of games swaps the seats)"
        )
    if games < seats or games % seats:
        raise UsageError(f"--games {games}: games per table must be a multiple of --seats {seats} (each rotation "
                         "seats every bot at every seat once)")
    if sprt:
        try:
            SprtSpec.parse(sprt)
        except ValueError as e:
            raise UsageError(f"--sprt: {e}") from None
        if len(bots) != 2:
            raise UsageError(f"--sprt compares two bots, one against the other; this run has {len(bots)} (rank more "
                             "bots by the standings and ratings)")
        if seats != 2:
            raise UsageError(f"--sprt needs tables of two seats (it compares one bot against the other); --seats "
                             f"{seats}")
    if challenger and challenger not in [b.name for b in bots]:
        raise UsageError(f"--challenger {challenger!r} is not a bot of the manifest")
    try:
        return RunConfig(
            run_id=new_run_id(run_dir),
            bots=tuple(b.name for b in bots),
            format=fmt,
            games=games,
            duplicate=duplicate,
            seed=args.seed or secrets.token_hex(8),
            play=play,
            challenger=challenger,
            sprt=sprt,
            referee=args.referee,
            listen=listen_of(args),
            seats=seats,
            tables=getattr(args, "tables", 0),
            instances=getattr(args, "instances", 1),
            raters=tuple(getattr(args, "rater", None) or ()),
            rounds=getattr(args, "rounds", 0),
        )
    except ValueError as e:
        raise UsageError(str(e)) from None


def _alone(e: BaseException) -> BaseException:
    """The one exception inside (nested) exception groups of one, else ``e``."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


def _play_run(store: RunStore, console: Console, resumed: bool, access: RemoteAccess,
              cluster: ClusterSpec | None = None, rating_interval: int = 0, web: WebStarter | None = None,
              replay_pages: bool = True) -> int:
    """Play a run's pending games and print its results (``replay_pages``: the results page's
    HTML replay of every game too; without, it links the replays themselves: ``arena html``)."""
    cfg = store.config
    cluster = placed(store, cluster or ClusterSpec())
    where = where_played(cfg.referee, cluster)
    print(
        f"Run {store.run_dir}: {cfg.play.game}, {cfg.format}, {len(cfg.bots)} bots, {cfg.seats} seats, "
        f"{cfg.games} games per {'pairing' if cfg.seats == 2 else 'table'}"
        f"{' (duplicate deals)' if cfg.duplicate else ''}, rules {cfg.play.rules_name}, "
        f"{cfg.play.time_control}, concurrency {cfg.play.concurrency}, on {where}",
        flush=True,
    )
    started = time.monotonic()
    try:
        result = run_cancellable(lambda scope: run_tournament(store, console, resumed=resumed, cancel_scope=scope,
                                                              access=access, cluster=cluster,
                                                              rating_interval=rating_interval, web=web))
    except BaseException as raised:  # a failure inside the run's nursery comes as a group of one
        e = _alone(raised)
        if isinstance(e, ListenError):
            raise e from None
        if isinstance(e, BotsUnreachable):
            print(f"arena: {e}\nNo game was played; once the bots start there, play the run with: "
                  f"arena tournament --resume {store.run_dir}", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(e, NoWorkers):
            print(f"arena: {e}\nNo game was played; once a worker is connected, play the run with: "
                  f"arena tournament --resume {store.run_dir}", file=sys.stderr)
            return EXIT_FAILED
        why = network_failure(e)
        if why is None:
            raise
        print(f"arena: the run stopped: {why}; the games finished so far are kept, continue with: "
              f"arena tournament --resume {store.run_dir}", file=sys.stderr)
        return EXIT_FAILED
    print()
    print(summary_text(result, store.run_dir))
    try:
        page = results_page.write_results_page(store.run_dir, replays=replay_pages)
        print(f"Results page: {page} (every game linked to its "
              f"{'HTML replay' if replay_pages else f'replay; arena html {store.run_dir} makes their pages'})")
    except (OSError, ValueError) as e:  # the results files are written; the page is a bonus
        print(f"arena: could not write the results page: {e}", file=sys.stderr)
    print(f"Time: {time.monotonic() - started:.1f} s")
    if result.infrastructure_failures:
        lost = next((f for f in result.infrastructure_failures
                     if "scheduler was lost" in f or "no Dask worker" in f), "")
        if lost:
            why = "no Dask worker was left" if "no Dask worker" in lost else "the Dask scheduler was lost"
            print(f"arena: {why}; the games finished so far are kept.", file=sys.stderr)
        print(f"arena: {len(result.infrastructure_failures)} game(s) could not be played on the cluster (the "
              f"first: {result.infrastructure_failures[0]}); they are not anyone's loss. Play them with: "
              f"arena tournament --resume {store.run_dir}", file=sys.stderr)
        return EXIT_FAILED
    for name, why in result.failed_bots.items():
        print(f"arena: bot {name!r}: its games were stopped: {why}. Fix it, then play them with: "
              f"arena tournament --resume {store.run_dir}", file=sys.stderr)
    if result.failed_bots:
        return EXIT_FAILED
    return EXIT_INTERRUPTED if result.status == "interrupted" else EXIT_OK


def sample_bots(include_js: bool, game: str = DEFAULT_GAME) -> tuple[list[BotSpec], str]:
    """The sample bots for ``game``'s demo (as the game registers them), and a note about the JS bot."""
    root = sample_root() or Path.cwd()
    bots = [
        BotSpec(name=b.name, command=b.command, cwd=str(root), env={"GIN_LOG_LEVEL": "WARNING"}, games=(game,))
        for b in samples(game).bots
    ]
    js = root / "sample_bots" / "js"
    node = shutil.which("node")
    note = ""
    if game not in js_games():  # (it plays only the games its package.json lists)
        return bots, note
    if not include_js:
        note = "JS bot left out (--no-js)."
    elif node is None:
        note = "JS bot skipped: `node` is not on PATH."
    elif not (js / "node_modules").is_dir() or not (js / "bot.js").is_file():
        note = f"JS bot skipped: {js}/node_modules is missing (run `npm install` in {js})."
    else:
        bots.append(BotSpec(name=JS_BOT, command=(node, str(js / "bot.js")), cwd=str(root), games=(game,)))
    return bots, note


def cmd_demo(args: argparse.Namespace) -> int:
    console = make_console(args)
    try:
        demo = samples(args.game)
    except ValueError as e:
        raise UsageError(f"--game: {e}") from None
    bots, note = sample_bots(not args.no_js, args.game)
    if len(bots) < 2:
        raise UsageError(f"--game {args.game}: its registration lists {len(bots)} sample bot(s); a demo needs two "
                         "(docs/adding-a-game.md, sample bots)")
    if note:
        print(note)
    run_dir = args.out or default_folder("demo")
    if demo.seats == 2:
        pairings = len(bots) * (len(bots) - 1) // 2
        games = args.games or demo.games or max(2, round(DEMO_GAMES / pairings / 2) * 2)
    else:  # one table of them all (two if a bot must fill two seats of it), the seats rotated
        args.seats = demo.seats
        args.instances = 1 if len(bots) >= demo.seats else 2
        args.tables = 0 if len(bots) >= demo.seats else 2
        games = args.games or demo.games or demo.seats
    cfg = run_config(args, run_dir, bots, games=games)
    access = remote_access(args)
    cluster = cluster_spec(args)
    check_listen_free(args)
    check_referee(args, access)
    store = RunStore.create(run_dir, cfg, bots, {})
    try:
        return _play_run(store, console, resumed=False, access=access, cluster=cluster)
    finally:
        store.close()


def _resume(args: argparse.Namespace, console: Console) -> int:
    if args.bots is not None or args.bot:
        print("note: --resume uses the run's stored bots and settings; --bots/--bot are ignored", file=sys.stderr)
    cluster = cluster_spec(args)
    store = RunStore.open(args.resume, lock=True)
    try:
        if args.listen is not None and args.listen != store.config.listen:  # a new address for the referee
            address(args.listen, "--listen")
            store.replace_config(dataclasses.replace(store.config, listen=args.listen))
        args.referee = store.config.referee
        access = remote_access(args)
        check_listen_free(args)
        check_referee(args, access)
        status = store.meta("status")
        counts = store.counts()
        if counts["pending"] + counts["running"] == 0 or status == "stopped":
            print(f"{args.resume}: the run is already complete ({status}).")
        else:
            check_startable(store.bots())
        return _play_run(store, console, resumed=True, access=access, cluster=cluster,
                         rating_interval=args.rating_interval, web=_tournament_web(args, store.run_dir))
    finally:
        store.close()


def cmd_tournament(args: argparse.Namespace) -> int:
    console = make_console(args)
    if args.resume is not None:
        return _resume(args, console)
    if args.bots is None and not args.bot:
        raise UsageError('give --bots FILE (a manifest), --bot name=NAME cmd="CMD" (repeatable) or --resume RUN_DIR')
    bots = bots_from_args(args, minimum=2)
    run_dir = args.out or default_folder("tournament")
    if (run_dir / "run.sqlite").exists():
        raise UsageError(f"{run_dir} already holds a run; use --resume {run_dir} or another --out")
    cfg = run_config(args, run_dir, bots, fmt=args.format, games=args.games, duplicate=args.duplicate,
                     challenger=args.challenger, sprt=args.sprt)
    if problems := not_playing(bots, cfg.play.game):
        raise ManifestError(problems)
    check_startable(bots)
    access = remote_access(args)
    cluster = cluster_spec(args)
    check_listen_free(args)
    check_referee(args, access)
    web = _tournament_web(args, run_dir)  # (checks --web before the run folder is made)
    manifest = args.bots.read_text(encoding="utf-8") if args.bots is not None else ""
    store = RunStore.create(run_dir, cfg, bots, new_bot_tokens(bots, cfg.instances), manifest)
    try:
        return _play_run(store, console, resumed=False, access=access, cluster=cluster,
                         rating_interval=args.rating_interval, web=web)
    finally:
        store.close()


def _tournament_web(args: argparse.Namespace, run_dir: Path) -> WebStarter | None:
    """``--web``: the run's live web (the operator: whoever holds the token of the environment)."""
    return web_starter(args, run_dir / DB_NAME, run_dir, f"tournament {run_dir.name}",  # (no machine path)
                       client_operator_token(None))


def cmd_serve(args: argparse.Namespace) -> int:
    make_console(args)
    host, _, port = address(args.listen, "--listen").rpartition(":")
    folder = args.dir or default_folder("serve")
    try:
        tls = server_tls_from_args(args)
        referee_limits, hosted_limits = split_limits(args.limit)
        limits = referee.Limits.parse(referee_limits)
        ladder = load_ladder(args.ladder)
        if tls is not None and any(p.bosses for p in ladder.plays):
            raise LadderFileError(f"--ladder {args.ladder}: bosses connect to the server over loopback in plaintext; "
                                  "a TLS server (--tls-cert) cannot start them yet (docs/hosted.md)")
        check_can_listen(host or "127.0.0.1", int(port))  # before the folder is created
    except (TLSConfigError, LadderFileError) as e:
        raise UsageError(str(e)) from None
    except ValueError as e:
        raise UsageError(f"--limit {e}") from None
    if tls is None and not args.insecure and not is_loopback(host or "127.0.0.1"):
        raise UsageError(f"--listen {args.listen} is not a loopback address: bot and operator tokens would cross "
                         "the network in clear; serve TLS (--tls-cert FILE --tls-key FILE; arena certs makes them) "
                         "or, on a network you trust, add --insecure")
    web = web_starter(args, folder / "serve.sqlite", folder, f"ladder {folder.resolve().name}",  # (checks --web first)
                      default_tls=tls, accounts=True, own_process=True)
    folder.mkdir(parents=True, exist_ok=True)
    registry = BotRegistry(open_db(folder / "serve.sqlite", "serve"))  # the operator's ArenaService

    async def go(scope: trio.CancelScope) -> None:
        with scope:
            await serve(args.listen, folder, token_file=args.operator_token_file, public_watch=args.public_watch,
                        tls=tls, limits=limits, operator_services=[arena_service(registry)],
                        hosting=HostedLadder(registry, ladder, hosted_limits, boss_logs=folder / "logs"), web=web)

    try:
        run_cancellable(go)
    except TokenFileError as e:
        raise UsageError(str(e)) from None
    finally:
        registry.db.close()
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    store = RunStore.open(args.run_dir)
    try:
        report = write_results(store, tuple(args.rater or ()))
    finally:
        store.close()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(render_text(report))
    return EXIT_OK
