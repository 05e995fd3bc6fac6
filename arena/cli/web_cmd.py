"""``--web HOST:PORT`` of ``arena serve`` and ``arena tournament``: the live web beside the
referee (docs/web.md), over TLS with ``--web-tls-cert/--web-tls-key``."""

from __future__ import annotations

import argparse
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio

import referee
from arena.cli.options import UsageError, address, is_loopback
from arena.web.data import StoreSource
from arena.web.limits import WebLimits
from arena.web.process import serve_web_process
from arena.web.server import WebTLS, serve_web
from referee import ListenError
from referee.lowlevel import check_can_listen

WebStarter = Callable[..., Awaitable[None]]
"""``starter(referee_or_None, task_status=…)``: what ``serve`` and ``run_tournament`` start."""


def add_web_options(p: argparse.ArgumentParser, *, server_tls: bool) -> None:
    """``--web``, ``--web-limit``, ``--web-tls-cert/--web-tls-key`` (``server_tls``: the command
    serves TLS itself with ``--tls-cert/--tls-key``, the web's default; else it gets its own
    ``--insecure``)."""
    g = p.add_argument_group("the live web")
    g.add_argument("--web", default="", metavar="HOST:PORT",
                   help="serve the live web here (standings, matches, a live spectator view, replays, bots, "
                   "the JSON API; port 0: a free one, printed); an address that is not loopback needs TLS "
                   "or --insecure")
    g.add_argument("--web-limit", action="append", default=[], metavar="KEY=VALUE",
                   help="a live-web limit, e.g. sse_connections=1000, sse_per_client=8, sse_queue=64, "
                   "hsts_max_age_s=31536000 (repeatable; docs/web.md#limits)")
    cert_default, key_default = (
        ("default: --tls-cert, so that one certificate serves the referee and the web", "default: --tls-key")
        if server_tls else ("no default: this command's --tls-cert is its client certificate", "no default"))
    g.add_argument("--web-tls-cert", type=Path, default=None, metavar="FILE",
                   help=f"serve the web over TLS (HTTPS, HTTP/1.1 and h2) with this certificate (PEM; {cert_default}; "
                   "arena certs makes one)")
    g.add_argument("--web-tls-key", type=Path, default=None, metavar="FILE",
                   help=f"the web certificate's private key (PEM; {key_default})")
    g.add_argument("--web-behind-tls", action="store_true",
                   help="a proxy in front serves the web over https: people's session cookies are always Secure "
                   "(docs/web.md#accounts)")
    g.add_argument("--web-proxy-hops", type=int, default=0, metavar="N",
                   help="the web is reached through N proxies of your own (e.g. 1: an nginx in front): the client "
                   "address that rate limits and stream bounds count is the one the nearest proxy was given "
                   "(X-Forwarded-For), and X-Forwarded-Proto says https (default 0: the connection's own "
                   "address; never set it when clients can reach the web directly, they could forge the header)")
    if not server_tls:
        g.add_argument("--insecure", action="store_true",
                       help="serve the live web in clear on a --web address that is not loopback (without it, "
                       "such an address needs --web-tls-cert/--web-tls-key: the operator's token and sign-in "
                       "cookie cross the network)")


@dataclass(frozen=True, slots=True)
class _Files:
    """The web's certificate and key, with the options they came from (for the errors)."""

    cert: Path
    """The certificate chain (PEM)."""
    key: Path
    """Its private key (PEM)."""
    cert_flag: str
    """The option that named the certificate."""
    key_flag: str
    """The option that named the key."""


def web_tls(args: argparse.Namespace, default: referee.ServerTLS | None = None) -> WebTLS | None:
    """The web's TLS from ``--web-tls-cert/--web-tls-key``, else ``default`` (the referee's
    ``--tls-cert/--tls-key``), checked now: both files readable, a certificate and its key
    (a :class:`UsageError` of one line otherwise); ``None``: clear HTTP."""
    cert, key = args.web_tls_cert, args.web_tls_key
    if cert is None and key is None:
        if default is None:
            return None
        files = _Files(Path(default.cert), Path(default.key), "--tls-cert", "--tls-key")
    elif cert is None or key is None:
        raise UsageError("give both --web-tls-cert and --web-tls-key (the live web's certificate and its key)")
    else:
        files = _Files(cert, key, "--web-tls-cert", "--web-tls-key")
    for flag, path in ((files.cert_flag, files.cert), (files.key_flag, files.key)):
        try:
            path.read_bytes()
        except OSError as e:
            raise UsageError(f"{flag} {path}: cannot read the file ({e.strerror or e})") from None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(files.cert, files.key)
    except ssl.SSLError as e:
        why = ("the key does not belong to the certificate" if "KEY_VALUES_MISMATCH" in str(e)
               else f"not a PEM certificate and its private key ({e.reason or e})")
        raise UsageError(f"{files.cert_flag} {files.cert}, {files.key_flag} {files.key}: {why}") from None
    return WebTLS(str(files.cert), str(files.key))


def web_starter(args: argparse.Namespace, db: Path, folder: Path, title: str, operator_token: str | None = None,
                default_tls: referee.ServerTLS | None = None, *, accounts: bool = False,
                own_process: bool = False) -> WebStarter | None:
    """The live web for ``--web`` over the store ``db`` (``None`` without ``--web``), checked
    before anything is created. The operator token is the referee's (``arena serve``) or
    ``operator_token``. Its TLS: :func:`web_tls`; an address other machines reach refuses clear
    HTTP unless ``--insecure``, and even then keeps the operator's door shut (a token must not
    cross in clear). ``accounts``: people sign up and their games are stored in ``db``
    (``arena serve``'s own store). ``own_process``: the web serves from a process of its own beside
    the referee's (:mod:`arena.web.process`; ``arena serve``: its requests then never wait behind
    the matches on the referee's loop)."""
    if not args.web:
        return None
    host, _, port = address(args.web, "--web").rpartition(":")
    try:
        check_can_listen(host or "127.0.0.1", int(port))  # before anything is created
    except ListenError:
        raise UsageError(f"--web {args.web}: the address is in use or not this machine's; choose another "
                         "(port 0: a free one)") from None
    try:
        limits = WebLimits.parse(args.web_limit)
    except ValueError as e:
        raise UsageError(f"--web-limit {e}") from None
    if args.web_proxy_hops < 0:
        raise UsageError(f"--web-proxy-hops {args.web_proxy_hops}: give 0 (clients reach the web directly) or the "
                         "number of your proxies in front of it")
    tls = web_tls(args, default_tls)
    loopback = is_loopback(host or "127.0.0.1")
    if tls is None and not loopback and not args.insecure:
        raise UsageError(f"--web {args.web} is not a loopback address: the operator's token and sign-in cookie "
                         "would cross the network in clear; serve TLS (--web-tls-cert FILE --web-tls-key FILE; "
                         "arena certs makes them) or, on a network you trust, add --insecure")
    open_door = tls is not None or loopback

    async def start(ref: referee.Referee | None, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                    ) -> None:
        token = operator_token or (ref.operator_token if ref is not None else "")
        door_token = token if open_door else None
        async with trio.open_nursery() as nursery:
            if own_process and ref is not None:
                where = await nursery.start(partial(serve_web_process, args.web, db, folder, title, ref,
                                                    limits=limits, operator_token=door_token, tls=tls,
                                                    accounts=accounts, behind_tls=args.web_behind_tls,
                                                    proxy_hops=args.web_proxy_hops))
            else:
                where = await nursery.start(partial(serve_web, args.web, StoreSource(db, folder, title, ref),
                                                    limits=limits, operator_token=door_token, tls=tls,
                                                    accounts_db=db if accounts else None,
                                                    behind_tls=args.web_behind_tls,
                                                    proxy_hops=args.web_proxy_hops))
            door = "" if open_door else " (operator sign-in off: not a loopback address and no TLS)"
            print(f"live web on {where}{door}", flush=True)
            task_status.started()

    return start
