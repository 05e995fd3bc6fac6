"""``arena bots``: the bots registered on a hosted server (``arena serve``), managed on the
server's machine, on its folder — ``add NAME``, ``list [--json]``, ``disable|enable|remove|rotate-token
NAME``, ``suspend NAME --reason TEXT``, each with ``--dir DIR``. ``arena operator bots …`` does the
same from another machine through the server's ``ArenaService``; both build the same request here,
run the same code on the server (:class:`arena.hosted.service.BotAdmin`) and print the answer here.

``add`` and ``rotate-token`` print the token alone on standard output (everything else goes to
standard error): it is shown this once, the server keeps only its digest. Exit status: 0 done,
1 refused (no such bot, a name taken), 2 a bad command line (a bad name, a folder without a
server database).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from arena.cli.options import UsageError
from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from arena.hosted.registry import REASON_LENGTH, BotRegistry, RegistryError
from arena.hosted.service import STATE_NAMES, STATE_VALUES, BotAdmin
from arena.store import open_db
from gin_arena.v2 import arena_pb2

DB_FILE = "serve.sqlite"
"""The server's database in its folder (``arena serve --dir DIR``)."""
BOT_ACTIONS = {
    "add": "register a bot and print its token (alone on stdout, shown once)",
    "list": "the registered bots: name, state, games, when added, why suspended",
    "disable": "refuse a bot's token until it is enabled again",
    "enable": "let a bot play again (also lifts a suspension)",
    "suspend": "refuse a bot's token, saying why (--reason)",
    "remove": "forget a bot and its token (its games stay in the database)",
    "rotate-token": "give a bot a new token (printed alone on stdout); the old one stops working at once",
}
"""Each action and its help, for ``arena bots`` and ``arena operator bots``."""
_STATE_OF = {"disable": "disabled", "enable": "enabled", "suspend": "suspended"}


def add_action_options(a: argparse.ArgumentParser, action: str, *, json: bool = True) -> None:
    """One action's own arguments: the bot's name, ``--reason``, and ``--json`` for ``list``
    (unless the caller adds it: ``arena operator``'s connection options have it)."""
    if action == "list":
        if json:
            a.add_argument("--json", action="store_true",
                           help="print the answer in protobuf's JSON mapping (as grpcurl prints it)")
    else:
        a.add_argument("name", metavar="NAME", help="the bot's name")
    if action == "suspend":
        a.add_argument("--reason", required=True, metavar="TEXT",
                       help=f"why (one line, shown with the bot; at most {REASON_LENGTH} characters kept)")


def bots_request(args: argparse.Namespace) -> tuple[str, Message]:
    """The ``ArenaService`` method and request of an action's command line."""
    action: str = args.bots_action
    if action == "list":
        return "ListBots", arena_pb2.ListBotsRequest()
    if action == "add":
        return "AddBot", arena_pb2.AddBotRequest(name=args.name)
    if action == "remove":
        return "RemoveBot", arena_pb2.RemoveBotRequest(name=args.name)
    if action == "rotate-token":
        return "RotateBotToken", arena_pb2.RotateBotTokenRequest(name=args.name)
    state = STATE_VALUES[_STATE_OF[action]]
    return "SetBotState", arena_pb2.SetBotStateRequest(name=args.name, state=state, reason=getattr(args, "reason", ""))


def _when(stamp: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(stamp.seconds)) if stamp.seconds else "-"


def bots_table(bots: Sequence[arena_pb2.RegisteredBot]) -> str:
    """The registered bots as a table: name, state, games played, when added (UTC), reason."""
    rows = [("BOT", "STATE", "GAMES", "ADDED", "REASON")]
    rows += [(b.name, STATE_NAMES.get(b.state, "?"), str(b.games), _when(b.added_at), b.reason) for b in bots]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def show_reply(args: argparse.Namespace, reply: Any, where: str) -> int:
    """Print an action's answer (``where``: the server, for the bot's next step)."""
    action: str = args.bots_action
    if action == "list":
        if getattr(args, "json", False):
            print(json_format.MessageToJson(reply, indent=2, ensure_ascii=False,
                                            always_print_fields_with_no_presence=True))
        else:
            print(bots_table(reply.bots) if reply.bots else "no bots are registered")
        return EXIT_OK
    if action in ("add", "rotate-token"):
        print(reply.token, flush=True)
        did = "registered" if action == "add" else "new token for"
        print(f"{did} bot {reply.bot.name!r}: its token is on stdout, shown this once (the server keeps only "
              f"its digest); the bot connects with --referee {where} --token TOKEN", file=sys.stderr)
        return EXIT_OK
    if action == "remove":
        print(f"removed bot {args.name!r} (its games stay in the database)")
        return EXIT_OK
    bot = reply.bot
    print(f"bot {bot.name!r} is {STATE_NAMES.get(bot.state, '?')}" + (f": {bot.reason}" if bot.reason else ""))
    return EXIT_OK


def add_parser(sub: Any) -> None:
    """Add ``bots`` to the ``arena`` command's subparsers."""
    p = sub.add_parser(
        "bots",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="the bots registered on a hosted server (add, list, disable, enable, suspend, remove, rotate-token)",
        description="Manage the bots registered on a hosted server (arena serve), on the server's machine and\n"
        "folder. A bot connects from anywhere with its token; from another machine, use arena operator bots.\n"
        "Exit status: 0 done, 1 refused (no such bot, a name taken), 2 a bad command line.",
        epilog="Examples:\n"
        "  arena bots add alice --dir runs/serve > alice.token\n"
        "  arena bots list --dir runs/serve\n"
        "  arena bots disable alice --dir runs/serve\n"
        "  arena bots rotate-token alice --dir runs/serve > alice.token\n",
    )
    actions = p.add_subparsers(dest="bots_action", required=True, metavar="ACTION")
    for name, text in BOT_ACTIONS.items():
        a = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        add_action_options(a, name)
        a.add_argument("--dir", type=Path, required=True, metavar="DIR",
                       help=f"the server's folder (arena serve --dir DIR; its {DB_FILE})")


def _open(folder: Path, create: bool) -> BotRegistry:
    path = folder / DB_FILE
    if not create and not path.exists():
        raise UsageError(f"{folder} holds no server database ({DB_FILE}): give the folder of arena serve --dir")
    folder.mkdir(parents=True, exist_ok=True)
    return BotRegistry(open_db(path, "serve"))


def run(args: argparse.Namespace) -> int:
    """``arena bots ACTION … --dir DIR``."""
    method, request = bots_request(args)
    registry = _open(args.dir, create=args.bots_action == "add")
    try:
        reply = getattr(BotAdmin(registry), method)(request)
    except RegistryError as e:
        hint = f" (arena bots list --dir {args.dir} shows them)" if e.kind == "unknown" else ""
        print(f"arena bots {args.bots_action}: {e}{hint}", file=sys.stderr)
        return EXIT_USAGE if e.kind == "invalid" else EXIT_FAILED
    finally:
        registry.db.close()
    return show_reply(args, reply, "HOST:PORT")
