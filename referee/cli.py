"""``referee serve``: run the referee standalone."""

from __future__ import annotations

import argparse
from pathlib import Path

import trio

from ._logging import configure_logging
from ._runtime import install_sigint_cancel, run
from ._server import open_referee, tune_gc_for_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="referee", description="The Gin Arena referee (gRPC server).")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the referee until interrupted",
                           description="Serve BotService, RefereeService, health and reflection over gRPC.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=50051, help="port (default 50051; 0 picks a free one)")
    serve.add_argument("--replays", type=Path, default=Path("replays"), help="folder for replay files")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--log-json", action="store_true", default=None, help="JSON logs even on a terminal")
    args = parser.parse_args(argv)
    configure_logging(args.log_level, json=args.log_json)

    async def serve_until_interrupted() -> None:
        with trio.CancelScope() as scope:
            token = trio.lowlevel.current_trio_token()
            install_sigint_cancel(lambda: token.run_sync_soon(scope.cancel))
            async with open_referee(args.host, args.port, args.replays) as ref:
                tune_gc_for_server()
                print(f"referee listening on {ref.address}", flush=True)
                await trio.sleep_forever()

    run(serve_until_interrupted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
