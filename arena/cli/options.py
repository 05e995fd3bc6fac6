"""What several ``arena`` commands share: the play and log options, their parsing into typed
values (once), the bots given inline or by a manifest, and running trio with Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import difflib
import ipaddress
import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import trio

import referee
import referee.lowlevel
from arena import console as console_mod
from arena.console import Console
from arena.model.manifest import BotSpec, ManifestError, load_manifest, parse_inline_bot, startup_problem
from arena.model.schedule import FAULT_POLICIES, PlayConfig
from arena.run.placement import (
    DASHBOARD,
    PORTS_PER_WORKER,
    WORKER_WAIT_S,
    WORKERS_ENV,
    ClusterSpec,
    DaskTLS,
    LocalPorts,
)
from arena.run.tournament import RemoteAccess
from referee import DEFAULT_GAME, ClientConfigError, TimeControl, TimeControlError, games
from referee.lowlevel import TokenFileError, add_limit_option, check_can_listen, client_operator_token, client_tls

T = TypeVar("T")

DEFAULT_TC = "st=1 timemargin=50"
DEFAULT_LISTEN = "127.0.0.1:0"
"""Where an embedded referee listens when no --listen is given."""


class UsageError(Exception):
    """A bad option value (exit code 2)."""


# ----- parsing values -----
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


def rule_overrides(overrides: list[str]) -> dict[str, object]:
    """``--rule KEY=VALUE`` words as option values (``true``/``false``, whole numbers, else the text)."""
    values: dict[str, object] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--rule {item!r}: expected KEY=VALUE, e.g. --rule target=50")
        values[key.strip()] = _rule_value(value.strip())
    return values


PRESET_NEAR_MISS = 0.6
"""How alike (``difflib``'s ratio, 0–1) an unknown ``--rules`` name and a preset must be for the
error to ask "did you mean …?"."""


def game_presets() -> dict[str, list[str]]:
    """Every installed game's presets, by game (a game that cannot be loaded is left out)."""
    found: dict[str, list[str]] = {}
    for name in games.names():
        try:
            found[name] = list(games.get(name).game.preset_names())
        except Exception:  # a broken plugin must not hide the other games' presets
            continue
    return found


def unknown_preset(game: str, preset: str) -> UsageError:
    """The error of ``--rules PRESET`` that is not a preset of ``game``: the presets of every
    game, which game has it (``--game NAME``) or, for a near miss, the preset meant."""
    presets = game_presets()
    listing = "; ".join(f"{g}: {', '.join(ps)}" for g, ps in presets.items())
    owners = [g for g, ps in presets.items() if preset in ps and g != game]
    if owners:
        return UsageError(f"--rules {preset}: that is a preset of {' and '.join(owners)}, not of {game}; "
                          f"add --game {owners[0]} (presets: {listing})")
    candidates = {p: g for g, ps in reversed(list(presets.items())) for p in ps}
    candidates.update({p: game for p in presets.get(game, [])})  # the game played wins a tie
    close = difflib.get_close_matches(preset, list(candidates), n=1, cutoff=PRESET_NEAR_MISS)
    hint = ""
    if close:
        owner = candidates[close[0]]
        hint = f"; did you mean {close[0]}" + ("" if owner == game else f" (--game {owner})") + "?"
    return UsageError(f"--rules {preset}: {game} has no such preset{hint} (presets: {listing})")


def game_rules_from_args(game: str, preset: str, overrides: list[str]) -> object:
    """``--rules PRESET`` (``""``: the game's default) with ``--rule KEY=VALUE`` overrides for
    ``game``, a name in ``referee.games``' registry. The overrides go through the game's own rule
    set: its plain form (``rules_to_dict``) with the values replaced, read back by the game
    (``rules_from_dict``), which refuses an unknown option or a bad value."""
    try:
        engine = games.get(game).game
    except ValueError as e:
        raise UsageError(f"--game: {e}") from None
    if preset and preset not in engine.preset_names():
        raise unknown_preset(game, preset)
    values = rule_overrides(overrides)
    try:
        rules = engine.rules_preset(preset) if preset else engine.default_rules()
    except ValueError as e:
        raise UsageError(f"--rules {preset!r}: {e}") from None
    if not values:
        return rules
    plain = engine.rules_to_dict(rules)
    unknown = sorted(set(values) - set(plain))
    if unknown:
        raise UsageError(f"--rule: unknown rule option(s) of {game}: {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(plain))}")
    try:
        return engine.rules_from_dict({**plain, **values})
    except ValueError as e:
        raise UsageError(f"rules: {e}") from None


def tc_from_args(text: str) -> TimeControl:
    """``--tc TEXT``."""
    try:
        return TimeControl.parse(text)
    except TimeControlError as e:
        raise UsageError(f"--tc {text!r}: {e}") from None


def address(text: str, what: str) -> str:
    """A ``HOST:PORT`` option's value, checked."""
    _, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"{what} {text!r}: expected HOST:PORT")
    return text


def is_loopback(host: str) -> bool:
    """Whether a listening address's host reaches this machine only (``127.0.0.0/8``, ``::1``,
    ``localhost``); any other name or address may be reached from the network."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def listen_of(args: argparse.Namespace) -> str:
    """``--listen``, or the default."""
    return str(args.listen or DEFAULT_LISTEN)


def check_client_tls_files(args: argparse.Namespace) -> None:
    """A client's ``--ca``, ``--tls-cert`` and ``--tls-key``: readable, the last two together."""
    for flag, path in (("--ca", args.ca), ("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key)):
        if path and not os.access(path, os.R_OK):
            raise UsageError(f"{flag} {path}: cannot read the file")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("give both --tls-cert and --tls-key (mutual TLS with the referee)")


def remote_access(args: argparse.Namespace) -> RemoteAccess:
    """How a remote referee is reached: its operator token (``--operator-token-file`` or the
    environment) and TLS (``--tls``, ``--ca``, and ``--tls-cert/--tls-key`` for mutual TLS);
    or, without ``--referee``, the embedded referee's ``--limit``s."""
    check_client_tls_files(args)
    try:
        limits = referee.Limits.parse(args.limit) if args.limit else None
    except ValueError as e:
        raise UsageError(f"--limit {e}") from None
    if limits is not None and args.referee:
        raise UsageError("--limit sets the embedded referee's limits; a remote referee has its own "
                         "(arena serve --limit KEY=VALUE)")
    try:
        token = client_operator_token(args.operator_token_file)
    except TokenFileError as e:
        raise UsageError(str(e)) from None
    return RemoteAccess(token, client_tls(args.tls, args.ca, args.tls_cert, args.tls_key), limits)


def check_referee(args: argparse.Namespace, access: RemoteAccess) -> None:
    """Reach a remote referee (``--referee``) once before anything is created: refused TLS, a
    missing ``--ca`` or client certificate, or a refused operator token is a usage error (exit 2);
    an unreachable referee a :class:`ConnectionError` (exit 1); either way no run folder is left."""
    if not args.referee:
        return

    async def reach() -> None:
        async with referee.open_match_context(referee=args.referee, operator_token=access.operator_token,
                                              tls=access.tls):
            pass

    try:
        referee.run(reach)
    except ClientConfigError as e:
        raise UsageError(str(e)) from None


def check_listen_free(args: argparse.Namespace) -> None:
    """Refuse (one line, exit 2) an embedded referee's busy address before anything is created."""
    if not args.referee:
        host, _, port = listen_of(args).rpartition(":")
        check_can_listen(host or "127.0.0.1", int(port))


def play_config(args: argparse.Namespace) -> PlayConfig:
    """The play options of a command line, parsed once into the typed value that is stored."""
    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if args.referee:
        address(args.referee, "--referee")
    address(listen_of(args), "--listen")
    game = getattr(args, "game", DEFAULT_GAME)
    try:
        return PlayConfig(
            game=game,
            rules=game_rules_from_args(game, args.rules or (args.default_rules if game == DEFAULT_GAME else ""),
                                       args.rule),
            time_control=tc_from_args(args.tc),
            fault_policy=args.fault_policy,
            concurrency=args.concurrency,
            connect_timeout_ms=int(args.connect_timeout * 1000),
            clock=args.clock,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None


def bots_from_args(args: argparse.Namespace, *, minimum: int) -> list[BotSpec]:
    """The bots of ``--bots FILE`` and of every ``--bot name=… cmd="…"``, in that order."""
    bots = load_manifest(args.bots, minimum=0) if args.bots is not None else []
    bots += [parse_inline_bot(inline_text(words), Path.cwd()) for words in args.bot]
    names = [b.name for b in bots]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ManifestError([f"bot name {n!r} is given twice" for n in dups])
    if len(bots) < minimum:
        raise UsageError(f"give at least {minimum} bots (--bots FILE and/or --bot name=NAME cmd=\"CMD\"); "
                         f"got {len(bots)}")
    return bots


def check_startable(bots: list[BotSpec]) -> None:
    """Fail (exit 2) before any game is played if a bot's command cannot start."""
    problems = [p for p in (startup_problem(b) for b in bots) if p]
    if problems:
        raise ManifestError(problems)


# ----- options -----
def add_play_options(
    p: argparse.ArgumentParser, *, rules: str = "classic", tc: str = DEFAULT_TC, concurrency: int = 2
) -> None:
    g = p.add_argument_group("how games are played")
    g.add_argument("--rules", default="", metavar="PRESET",
                   help=f"rules preset of the game played (`arena games` lists them; default: the game's "
                   f"default, {rules} for the default game)")
    p.set_defaults(default_rules=rules)
    g.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="override one option of the game's rules, e.g. --rule target=50 --rule games=3 "
                   "(repeatable)")
    g.add_argument("--tc", default=tc, metavar="TC",
                   help=f'time control, cutechess style: "st=1" (seconds per decision) or "tc=60+0.5" '
                   f'(bank+increment), with "timemargin=50" (ms forgiven) (default "{tc}"); a bot\'s own '
                   'tc (manifest or --bot) wins')
    g.add_argument("--concurrency", type=int, default=concurrency, metavar="N",
                   help=f"games played at once (default {concurrency})")
    g.add_argument("--clock", choices=referee.SEAT_CLOCKS, default="cpu",
                   help="how the bots the arena starts are timed: cpu = their process tree's CPU time (a bot "
                   "waiting for a CPU on a loaded machine is not charged; Linux, embedded referee; else wall), "
                   "wall = wall time; neither charges a stall of the referee's own loop (default cpu)")
    g.add_argument("--fault-policy", choices=FAULT_POLICIES, default="forfeit",
                   help="a faulting bot (time, illegal move, crash, disconnect) forfeits the game, or a "
                   "built-in bot plays its seat to the end of the game (default forfeit)")
    g.add_argument("--connect-timeout", type=float, default=60.0, metavar="S",
                   help="seconds a game waits for its bots to connect (default 60)")
    g.add_argument("--referee", default="", metavar="HOST:PORT",
                   help="use a remote referee (e.g. `arena serve`) instead of the embedded one")
    g.add_argument("--listen", default=None, metavar="HOST:PORT",
                   help=f"where the embedded referee listens (default {DEFAULT_LISTEN} = any free port; "
                   "use 0.0.0.0:PORT to let remote bots in; with --resume: a new address)")
    g.add_argument("--operator-token-file", type=Path, default=None, metavar="PATH",
                   help="with --referee: the remote referee's operator token (its token file; default "
                   f"${referee.lowlevel.OPERATOR_TOKEN_ENV})")
    g.add_argument("--tls", action="store_true", help="with --referee: reach the remote referee over TLS")
    g.add_argument("--ca", default="", metavar="FILE",
                   help="with --referee: trust the CA certificates in FILE for its certificate (implies --tls)")
    g.add_argument("--tls-cert", default="", metavar="FILE",
                   help="with --referee: mutual TLS, the arena's client certificate (PEM; implies --tls); the bots "
                   "the arena starts for that referee show it too")
    g.add_argument("--tls-key", default="", metavar="FILE", help="with --tls-cert: its private key (PEM)")
    add_limit_option(g, "the embedded referee's")
    g.add_argument("--seed", default="", help="run seed (any text; default random): every deal derives from it")
    g.add_argument("--workers", default=os.environ.get(WORKERS_ENV, "auto"), metavar="N|auto",
                   help="worker processes on this machine (Dask distributed), each with its own referee and "
                   "reused bots; auto (default, or $" + WORKERS_ENV + "): one per two cores, at most --concurrency; "
                   "1: this process plays the games")
    g.add_argument("--scheduler", default="", metavar="tls://HOST:8786",
                   help="play the games on an existing Dask cluster (`dask scheduler`, `dask worker`); "
                   "tls:// with --scheduler-ca/-cert/-key (tcp:// only on a private network)")
    g.add_argument("--scheduler-ca", default="", metavar="FILE",
                   help="with --scheduler tls://: the CA certificates (PEM) the cluster's certificates chain to")
    g.add_argument("--scheduler-cert", default="", metavar="FILE",
                   help="with --scheduler tls://: the arena's client certificate (PEM), signed by that CA")
    g.add_argument("--scheduler-key", default="", metavar="FILE", help="with --scheduler-cert: its private key (PEM)")
    g.add_argument("--worker-wait", type=float, default=WORKER_WAIT_S, metavar="S",
                   help="with workers: how long the run waits for a Dask worker when there is none (before its "
                   f"first game, and after its last worker was lost), then exits 1 (default {WORKER_WAIT_S:g})")
    g.add_argument("--dask-scheduler-port", default="0", metavar="PORT",
                   help="with --workers N: the local cluster's scheduler port on 127.0.0.1 (default 0: any free one)")
    g.add_argument("--dask-dashboard", default=DASHBOARD, metavar="HOST:PORT|PORT|off",
                   help=f"with --workers N: where the local cluster's dashboard listens (default {DASHBOARD}: any "
                   "free port of 127.0.0.1; the arena prints its link); off: no dashboard")
    g.add_argument("--dask-worker-ports", default="", metavar="LO:HI",
                   help=f"with --workers N: the local workers' ports, {PORTS_PER_WORKER} each from LO (the worker, "
                   "its nanny, its HTTP server; default: any free ones)")
    g.add_argument("--ship-bots", action="store_true",
                   help="with workers: send each bot's folder (its cwd) to every worker and start it from the "
                   "copy (default: a bot must be at the same path on every worker)")


def inline_text(words: list[str]) -> str:
    """One ``--bot``'s words as one text: cutechess-style separate words (``--bot name=greedy
    cmd="PROGRAM ARGS"``, as a shell splits them) or everything quoted as one word."""
    return words[0] if len(words) == 1 else shlex.join(words)


def add_bot_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bot", action="append", nargs="+", type=str, default=[], metavar='name=NAME cmd="CMD"',
                   help='a bot without a manifest, e.g. --bot name=greedy cmd="{python} -m sample_bots.greedy_bot" '
                   "(repeatable; optional tc=TC, protocol=stdio, cwd=DIR, games=G1,G2, memory_mb=N, cpu_seconds=N)")


def _interval(text: str) -> int:
    """``--rating-interval N``: a whole number >= 0."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of games") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n}: give a number of games >= 1 (0: only at the end)")
    return n


def add_rating_interval_option(p: argparse.ArgumentParser) -> None:
    """``--rating-interval N``: the standings every N finished games (cutechess-cli's
    ``-ratinginterval``)."""
    p.add_argument("--rating-interval", type=_interval, default=0, metavar="N",
                   help="print the standings every N finished games, above the progress bar (default 0: only at "
                   "the end)")


def add_log_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    g.add_argument("-v", "--verbose", action="count", default=0,
                   help="more log lines on stderr (-v arena info, -vv also the referee's, -vvv debug)")
    g.add_argument("--log-json", action="store_true", default=None,
                   help="log lines on stderr as JSON (default: in words; run.log has them as JSON)")
    g.add_argument("--log-level", default="info", choices=["debug", "info", "warning"],
                   help="level of run.log in the run folder (default info)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")


def make_console(args: argparse.Namespace) -> Console:
    """The console of a command, with logging configured from its options."""
    c = Console(progress=False if getattr(args, "no_progress", False) else None)
    console_mod.configure(
        c,
        verbose=getattr(args, "verbose", 0),
        log_json=getattr(args, "log_json", None),
        file_level=getattr(args, "log_level", "info"),
    )
    return c


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
                print("\nStopping: aborting running games and ending bots (results so far are kept)...",
                      file=sys.stderr, flush=True)
            token.run_sync_soon(scope.cancel)

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, on_signal)
        return await fn(scope)

    return referee.run(main)


def local_ports(args: argparse.Namespace, spec: ClusterSpec) -> LocalPorts:
    """``--dask-scheduler-port``, ``--dask-dashboard`` and ``--dask-worker-ports``: for a local
    cluster only (an existing one's ports are set where it is started)."""
    try:
        ports = LocalPorts.parse(str(getattr(args, "dask_scheduler_port", "0")),
                                 str(getattr(args, "dask_dashboard", DASHBOARD)),
                                 str(getattr(args, "dask_worker_ports", "")))
        ports.check(spec.workers)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if ports.pinned and spec.scheduler:
        raise UsageError("--dask-scheduler-port/--dask-dashboard/--dask-worker-ports are the ports of the local "
                         f"cluster of --workers N; the cluster at --scheduler {spec.scheduler} has its own (dask "
                         "scheduler --port/--dashboard-address, dask worker --worker-port/--nanny-port/"
                         "--dashboard-address)")
    return ports


def cluster_spec(args: argparse.Namespace) -> ClusterSpec:
    scheduler = str(getattr(args, "scheduler", ""))
    try:
        spec = ClusterSpec.parse(str(getattr(args, "workers", "1")), scheduler, bool(getattr(args, "ship_bots", False)))
        tls = DaskTLS.parse(scheduler, *(str(getattr(args, f"scheduler_{k}", "") or "") for k in ("ca", "cert", "key")))
        spec = dataclasses.replace(spec, tls=tls)
    except ValueError as e:
        raise UsageError(str(e)) from None
    wait = float(getattr(args, "worker_wait", WORKER_WAIT_S))
    if not wait > 0:
        raise UsageError(f"--worker-wait must be a number of seconds > 0; got {wait:g}")
    spec = dataclasses.replace(spec, worker_wait_s=wait, ports=local_ports(args, spec))
    referee = str(getattr(args, "referee", "") or "")
    if referee and (spec.scheduler or (spec.workers > 1 and not spec.auto)):
        raise UsageError(f"--workers {spec.workers}/--scheduler play the games on Dask workers' own referees, "
                         f"--referee {referee} on that referee: give one of them")
    return spec
