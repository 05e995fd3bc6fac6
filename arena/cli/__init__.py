"""The ``arena`` command: tournaments between bot programs on a Gin Rummy referee.

Subcommands: ``demo``, ``tournament``, ``benchmark``, ``serve``, ``report``, ``ladder
add|remove|run|show|runs|drop``, ``play``, ``new-bot``, ``new-game``, ``proto-gen``, ``audit``, ``replay``,
``replay-html``, ``html``, ``games``, ``certs``, ``operator``, ``bots``. Modules: ``parser`` (the options),
``options`` (what commands share), ``commands``, ``ladder_cmd``, ``play_cmd``, ``games_cmd``, ``newbot_cmd``,
``newgame_cmd``, ``protogen_cmd``, ``certs_cmd``, ``operator_cmd``, ``bots_cmd``, ``replays_cmd``.
Exit codes: :mod:`arena.exit_codes`.

A command whose standard output is closed early (``arena report RUN | head``) stops quietly:
no traceback, exit status :data:`~arena.exit_codes.EXIT_STDOUT_CLOSED` (141, as a program that
SIGPIPE ended); what it was writing elsewhere (a run's database, its results files) stays whole.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import Callable

from arena.cli import benchmark_cmd, bots_cmd, certs_cmd, games_cmd, newbot_cmd, newgame_cmd, operator_cmd, protogen_cmd
from arena.cli.commands import cmd_demo, cmd_report, cmd_serve, cmd_tournament
from arena.cli.ladder_cmd import cmd_ladder
from arena.cli.options import UsageError
from arena.cli.parser import build_parser
from arena.cli.play_cmd import run as run_play
from arena.cli.replays_cmd import cmd_audit, cmd_html, cmd_replay, cmd_replay_html
from arena.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_STDOUT_CLOSED, EXIT_USAGE
from arena.model.manifest import ManifestError
from arena.run.ladder import LadderError
from arena.run.placement import BotsUnreachable, NoWorkers
from arena.store import StoreError
from referee import ListenError

HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo,
    "tournament": cmd_tournament,
    "serve": cmd_serve,
    "report": cmd_report,
    "ladder": cmd_ladder,
    "play": run_play,
    "new-bot": newbot_cmd.run,
    "new-game": newgame_cmd.run,
    "audit": cmd_audit,
    "replay": cmd_replay,
    "replay-html": cmd_replay_html,
    "html": cmd_html,
    "certs": certs_cmd.run,
    "operator": operator_cmd.run,
    "bots": bots_cmd.run,
    "games": games_cmd.run,
    "benchmark": benchmark_cmd.run,
    "proto-gen": protogen_cmd.run,
}


def _stdout_gone() -> bool:
    """Whether our standard output is a pipe whose reader has closed it (its write end polls
    as an error); a broken pipe to anything else (a bot's stdin) is not ours to swallow."""
    try:
        fd = sys.stdout.fileno()
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no real file behind sys.stdout
        return False


def _only_broken_pipes(e: BaseException) -> bool:
    """Whether ``e`` is a ``BrokenPipeError``, or an exception group of nothing else (a print
    inside a trio nursery)."""
    if isinstance(e, BaseExceptionGroup):
        return all(_only_broken_pipes(x) for x in e.exceptions)
    return isinstance(e, BrokenPipeError)


def _quiet_exit() -> int:
    """Point standard output at /dev/null, so that the interpreter's last flush at exit cannot
    fail again (the standard recipe for Python commands in pipelines), and say so by the status."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_STDOUT_CLOSED


def main(argv: list[str] | None = None) -> int:
    """``arena``: run one command; its exit status."""
    try:
        try:
            status = _main(argv)
        except SystemExit:  # argparse's --help and errors (argparse itself swallows a failed write)
            sys.stdout.flush()
            if _stdout_gone():
                return _quiet_exit()
            raise
        sys.stdout.flush()  # inside the try: a reader that left shows here, not at exit
    except BaseException as e:
        if _only_broken_pipes(e) and _stdout_gone():
            return _quiet_exit()
        raise
    return status


def _main(argv: list[str] | None) -> int:
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
    try:
        return HANDLERS[args.subcommand](args)
    except ManifestError as e:
        print(f"arena: the manifest has {len(e.problems)} problem(s):", file=sys.stderr)
        for p in e.problems:
            print(f"  {p}", file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, LadderError, StoreError) as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BotsUnreachable as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_USAGE
    except NoWorkers as e:  # (a ladder run: a tournament's says how to resume it)
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_FAILED
    except ListenError as e:
        print(f"arena: {e}; choose another address with --listen HOST:PORT", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # a ConnectionError, but ours (stdout closed): main's to handle
        raise
    except ConnectionError as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


__all__ = ["build_parser", "main"]
