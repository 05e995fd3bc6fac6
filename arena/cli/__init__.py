"""The ``arena`` command: tournaments between bot programs on a Gin Rummy referee.

Subcommands: ``demo``, ``tournament``, ``serve``, ``report``, ``ladder
add|remove|run|show|runs|drop``, ``play``, ``audit``, ``replay``, ``replay-html``, ``html``, ``games``.
Modules: ``parser`` (the options), ``options`` (what commands share), ``commands``,
``ladder_cmd``, ``play_cmd``, ``games_cmd``. Exit codes: :mod:`arena.exit_codes`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from arena.cli import games_cmd
from arena.cli.commands import cmd_demo, cmd_report, cmd_serve, cmd_tournament
from arena.cli.ladder_cmd import cmd_ladder
from arena.cli.options import UsageError
from arena.cli.parser import build_parser
from arena.cli.play_cmd import run as run_play
from arena.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from arena.replays import audit
from arena.replays import html as replay_html
from arena.replays import view as replay_view
from arena.results import page as results_page
from arena.run.ladder import LadderError
from arena.run.manifest import ManifestError
from arena.run.placement import BotsUnreachable, NoWorkers
from arena.store import StoreError
from referee._tls import ListenError

HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo,
    "tournament": cmd_tournament,
    "serve": cmd_serve,
    "report": cmd_report,
    "ladder": cmd_ladder,
    "play": run_play,
    "audit": audit.run,
    "replay": replay_view.run,
    "replay-html": replay_html.run,
    "html": results_page.run,
    "games": games_cmd.run,
}


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
    except ConnectionError as e:
        print(f"arena: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


__all__ = ["build_parser", "main"]
