"""``referee serve``: run the referee standalone."""

from __future__ import annotations

import argparse
from pathlib import Path

import trio

from ._limits import Limits
from ._logging import configure_logging
from ._runtime import install_sigint_cancel, run
from ._server import open_referee, tune_gc_for_server


def _listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (the spelling of every address option of ``referee`` and ``arena``)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOST:PORT, e.g. 127.0.0.1:50051")
    return host, int(port)


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
    serve.add_argument("--limit", action="append", default=[], metavar="KEY=VALUE",
                       help="change one of the referee's limits (repeatable; the keys and defaults are in "
                       "docs/protocol.md, e.g. --limit waiting_matches=200)")
    args = parser.parse_args(argv)
    host, port = args.listen
    try:
        limits = Limits.parse(args.limit)
    except ValueError as e:
        parser.error(f"--limit {e}")
    configure_logging(args.log_level, json=args.log_json)

    async def serve_until_interrupted() -> None:
        with trio.CancelScope() as scope:
            token = trio.lowlevel.current_trio_token()
            install_sigint_cancel(lambda: token.run_sync_soon(scope.cancel))
            async with open_referee(host, port, args.replays, limits) as ref:
                tune_gc_for_server()
                print(f"referee listening on {ref.address}", flush=True)
                await trio.sleep_forever()

    run(serve_until_interrupted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
