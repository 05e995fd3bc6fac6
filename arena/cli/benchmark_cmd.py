"""``arena benchmark NAME-vN``: a published benchmark (:mod:`arena.run.benchmark`) played by a
bot the user names (``--bot``, as ``arena tournament``'s) or by one of the game's reference bots
(``--reference``), on the ordinary tournament runner; prints its table and writes it as JSON and
HTML into the run folder."""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from arena.cli.commands import _play_run, default_folder
from arena.cli.options import (
    UsageError,
    add_bot_option,
    add_log_options,
    bots_from_args,
    check_startable,
    cluster_spec,
    make_console,
)
from arena.console import Console
from arena.exit_codes import EXIT_OK
from arena.model.manifest import BotSpec
from arena.run import benchmark as bm
from arena.run.placement import WORKER_WAIT_S, WORKERS_ENV, ClusterSpec
from arena.run.samples import sample_root
from arena.run.tournament import PLAINTEXT, new_bot_tokens, new_run_id, placed, where_played
from arena.store import RunStore


def add_parser(sub: Any) -> None:
    """Add ``benchmark`` to the ``arena`` command's subparsers."""
    p = sub.add_parser(
        "benchmark",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="play a published benchmark (fixed references, games, seeds, time control) with a bot",
        description="Play a named, versioned benchmark: a fixed field of reference bots (sample bots its game\n"
        "registers), a fixed count of duplicate games, fixed seeds, rules and time control. The bot given\n"
        "plays every reference (a gauntlet; every core, or a Dask cluster); the table gives its Elo against\n"
        "each reference with the 95% interval, LOS and the pentanomial counts of its duplicate pairs, and\n"
        "is written as benchmark.json and benchmark.html into the run folder. Playing it again gives the\n"
        "same deals. docs/benchmark.md.",
        epilog="Examples:\n"
        "  arena benchmark --list\n"
        "  arena benchmark gin-v1 --bot name=mine cmd='{python} my_bot.py' --quick\n"
        "  arena benchmark gin-v1 --reference mc --against expert      # one reference against another\n"
        "  arena benchmark rummy4-v1 --bot name=mine cmd='node bot.js' --workers auto\n",
    )
    p.add_argument("benchmark", nargs="?", default="", metavar="NAME-vN", help="the benchmark (see --list)")
    p.add_argument("--list", action="store_true", help="list the benchmarks and whether each can be played here")
    add_bot_option(p)
    p.add_argument("--reference", default="", metavar="NAME",
                   help="benchmark one of the game's reference (sample) bots instead of --bot; it does not play itself")
    p.add_argument("--against", action="append", default=[], metavar="NAME",
                   help="play only these references of the field (repeatable): the same games as the full field's")
    p.add_argument("--quick", action="store_true",
                   help="the benchmark's smaller budget: the first rotations of the same tables")
    p.add_argument("--sprt", default="", metavar="SPEC",
                   help="one reference (--against NAME), two seats: stop once the SPRT decides, as arena tournament's "
                        "(e.g. elo0=0,elo1=100); the games played are the full run's first ones")
    p.add_argument("--benchmarks", type=Path, default=None, metavar="FILE",
                   help="read the benchmarks from this TOML file instead of the published ones")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="run folder (default runs/benchmark-NAME-vN-<timestamp>)")
    p.add_argument("--resume", type=Path, default=None, metavar="RUN_DIR",
                   help="finish an interrupted benchmark run (after Ctrl-C, a crash) and write its table")
    g = p.add_argument_group("where the games are played")
    g.add_argument("--concurrency", type=int, default=max(1, os.cpu_count() or 1), metavar="N",
                   help="games at once (default: the cores); the bots are timed by their CPU time, so it does not "
                   "change a result")
    g.add_argument("--workers", default=os.environ.get(WORKERS_ENV, "auto"), metavar="N|auto",
                   help="local Dask workers, each with its own referee (default auto: one per core)")
    g.add_argument("--scheduler", default="", metavar="tls://HOST:8786", help="an existing Dask cluster")
    for key in ("ca", "cert", "key"):
        g.add_argument(f"--scheduler-{key}", default="", metavar="FILE",
                       help=f"with --scheduler tls://: its TLS {key} file (as arena tournament's)")
    g.add_argument("--worker-wait", type=float, default=WORKER_WAIT_S, metavar="S",
                   help=f"how long to wait for a Dask worker when there is none (default {WORKER_WAIT_S:g})")
    g.add_argument("--ship-bots", action="store_true", help="send each bot's folder to the workers")
    add_log_options(p)


def _candidate(args: argparse.Namespace, bench: bm.Benchmark, cwd: str) -> tuple[BotSpec, dict[str, Any]]:
    """The bot benchmarked, as the run's :data:`~arena.run.benchmark.CANDIDATE`, and how the
    report names it."""
    if bool(args.bot) == bool(args.reference):
        raise UsageError('give the bot to benchmark: --bot name=NAME cmd="CMD", or --reference NAME (one of '
                         f"{bench.game}'s sample bots)")
    if args.reference:
        bots = bm.registered_bots(bench.game)
        if args.reference not in bots:
            raise UsageError(f"--reference {args.reference}: {bench.game} registers no such bot (it registers: "
                             f"{', '.join(bots)})")
        spec = bm.reference_spec(bots[args.reference], bm.CANDIDATE, bench.game, cwd)
        return spec, {"name": args.reference, "reference": True, "command": " ".join(spec.command)}
    given = bots_from_args(argparse.Namespace(bots=None, bot=args.bot), minimum=1)
    if len(given) != 1:
        raise UsageError(f"benchmark one bot at a time; got {len(given)} --bot options")
    if given[0].time_control is not None:
        raise UsageError(f"--bot {given[0].name}: a benchmark fixes every seat's time control ({bench.tc}); "
                         "leave out tc=")
    spec = dataclasses.replace(given[0], name=bm.CANDIDATE, games=(bench.game,))
    return spec, {"name": given[0].name, "reference": False, "command": " ".join(spec.command)}


def _resume(args: argparse.Namespace) -> int:
    """``arena benchmark --resume RUN_DIR``: the run's stored games played to the end, then its table."""
    console = make_console(args)
    cluster = cluster_spec(args)
    store = RunStore.open(args.resume, lock=True)
    try:
        try:
            bench, label, quick = bm.recall(store)
        except bm.BenchmarkError as e:
            raise UsageError(str(e)) from None
        counts = store.counts()
        if counts["pending"] + counts["running"]:
            check_startable(store.bots())
        return _finish(store, console, bench, label, quick, cluster, resumed=True)
    finally:
        store.close()


def _finish(store: RunStore, console: Console, bench: bm.Benchmark, label: dict[str, Any], quick: bool,
            cluster: ClusterSpec, *, resumed: bool) -> int:
    """Play the run's pending games, then print and write the benchmark's table."""
    where = f"{where_played('', placed(store, cluster))}, {store.config.play.concurrency} games at once, " \
            f"{os.cpu_count()} cores"
    started = time.monotonic()
    code = _play_run(store, console, resumed=resumed, access=PLAINTEXT, cluster=cluster, replay_pages=False)
    report = bm.benchmark_report(store, bench, label, quick=quick, seconds=time.monotonic() - started, cores=where)
    js, page = bm.write_files(store.run_dir, report)
    print()
    print(bm.render_text(report))
    print(f"Written: {js} and {page}")
    decided = (report.get("sprt") or {}).get("decision")
    if report["games_played"] < report["games_scheduled"] and not decided:
        print(f"arena: {report['games_scheduled'] - report['games_played']} game(s) of the benchmark are not played; "
              f"the table counts the ones that are. Finish it with: arena benchmark --resume {store.run_dir}")
    return code


def run(args: argparse.Namespace) -> int:
    """``arena benchmark``."""
    if args.resume is not None:
        return _resume(args)
    try:
        benchmarks = bm.load_benchmarks(args.benchmarks)
        if args.list:
            print(bm.listing(benchmarks))
            return EXIT_OK
        if not args.benchmark:
            raise UsageError("name the benchmark to play (arena benchmark --list)")
        bench = bm.find(benchmarks, args.benchmark)
        found = bm.check_field(bench)
        root = str(sample_root() or Path.cwd())
        candidate, label = _candidate(args, bench, root)
        references = bm.pick_references(bench, args.against, args.reference)
        bm.check_sprt(bench, references, args.sprt)
    except bm.BenchmarkError as e:
        raise UsageError(str(e)) from None
    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    console = make_console(args)
    bots = [candidate, *(bm.reference_spec(found[r], r, bench.game, root) for r in references)]
    check_startable(bots)
    cluster = cluster_spec(args)
    run_dir = args.out or default_folder(f"benchmark-{bench.id}")
    if (run_dir / "run.sqlite").exists():
        raise UsageError(f"{run_dir} already holds a run; give another --out")
    cfg = bm.run_config(bench, new_run_id(run_dir), references, quick=args.quick, concurrency=args.concurrency,
                        sprt=args.sprt)
    store = RunStore.create(run_dir, cfg, bots, new_bot_tokens(bots))
    try:
        bm.remember(store, bench, label, args.quick)
        return _finish(store, console, bench, label, args.quick, cluster, resumed=False)
    finally:
        store.close()
