"""``referee serve``: run the referee standalone."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio

from .model.limits import Limits
from .transport.auth import DEFAULT_TOKEN_FILE, OPERATOR_TOKEN_ENV, TokenFileError, resolve_operator_token
from .transport.logs import configure_logging
from .transport.runtime import install_sigint_cancel, run
from .transport.server import open_referee, tune_gc_for_server
from .transport.tls import ListenError, TLSConfigError, add_server_tls_options, check_can_listen, server_tls_from_args

EXIT_USAGE = 2
"""A bad option, a busy port, an unreadable token or certificate file: nothing was started."""


def _listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (the spelling of every address option of ``referee`` and ``arena``)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOST:PORT, e.g. 127.0.0.1:50051")
    return host, int(port)


def add_operator_options(p: argparse.ArgumentParser, default_dir: str) -> None:
    """The operator-credential options of ``referee serve`` and ``arena serve``."""
    g = p.add_argument_group("operator credentials")
    g.add_argument("--operator-token-file", type=Path, default=None, metavar="PATH",
                   help="the operator token (read, or created with 256 random bits, mode 0600, if missing); "
                   f"default: ${OPERATOR_TOKEN_ENV} if set, else {default_dir}/{DEFAULT_TOKEN_FILE}")
    g.add_argument("--public-watch", action="store_true",
                   help="let anyone call WatchMatch (public information only; every other operator call "
                   "still needs the token)")


def add_limit_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, what: str = "the referee's") -> None:
    """``--limit KEY=VALUE`` (repeatable), read with ``Limits.parse(args.limit)``."""
    p.add_argument("--limit", action="append", default=[], metavar="KEY=VALUE",
                   help=f"change one of {what} limits (repeatable; the keys and defaults are in "
                   "docs/security.md, e.g. --limit waiting_matches=200)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="referee", description="The Gin Arena referee (gRPC server).")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the referee until interrupted",
                           description="Serve BotService, RefereeService, health and reflection over gRPC.")
    serve.add_argument("--listen", default="127.0.0.1:50051", metavar="HOST:PORT", type=_listen_address,
                       help="address to listen on (default 127.0.0.1:50051; port 0 picks a free one; "
                       "0.0.0.0:PORT for other machines)")
    serve.add_argument("--replays", type=Path, default=Path("replays"), help="folder for replay files")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--log-json", action="store_true", default=None, help="JSON logs even on a terminal")
    add_limit_option(serve)
    add_operator_options(serve, "the current directory")
    add_server_tls_options(serve)
    args = parser.parse_args(argv)
    host, port = args.listen
    try:
        limits = Limits.parse(args.limit)
    except ValueError as e:
        parser.error(f"--limit {e}")
    try:
        tls = server_tls_from_args(args)
        check_can_listen(host, port)
        operator = resolve_operator_token(args.operator_token_file, Path(DEFAULT_TOKEN_FILE))
    except ListenError as e:
        print(f"referee: {e}; choose another address with --listen HOST:PORT", file=sys.stderr)
        return EXIT_USAGE
    except (TLSConfigError, TokenFileError) as e:
        print(f"referee: {e}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(args.log_level, json=args.log_json)

    async def serve_until_interrupted() -> None:
        with trio.CancelScope() as scope:
            token = trio.lowlevel.current_trio_token()
            install_sigint_cancel(lambda: token.run_sync_soon(scope.cancel))
            async with open_referee(host, port, args.replays, limits, operator_token=operator.token,
                                    public_watch=args.public_watch, tls=tls) as ref:
                tune_gc_for_server()
                print(f"referee listening on {ref.address}{' (TLS)' if tls else ''}", flush=True)
                print(operator.describe(), flush=True)
                await trio.sleep_forever()

    try:
        run(serve_until_interrupted)
    except ListenError as e:  # the port was taken meanwhile
        print(f"referee: {e}; choose another address with --listen HOST:PORT", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
