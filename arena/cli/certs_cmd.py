"""``arena certs``: a private CA, the referee's certificate and client certificates for mutual
TLS, with what each file is for and the options that use them."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from arena.certs import CA_DAYS, CERT_DAYS, DEFAULT_HOSTS, CertError, Pki, make_certs
from arena.cli.options import UsageError
from arena.exit_codes import EXIT_OK


def add_parser(sub: Any) -> None:
    """Add ``certs`` to the ``arena`` command's subparsers."""
    p = sub.add_parser(
        "certs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="make a private CA, a TLS certificate for the referee and client certificates (mutual TLS)",
        description="Make the files a referee needs for TLS: a private CA (ca.pem, ca.key), a server\n"
        "certificate for the names the clients use (server.pem, server.key) and, for mutual TLS, one\n"
        "certificate per client (client-NAME.pem, client-NAME.key). Private keys are mode 0600;\n"
        "existing files are never overwritten. Prints what each file is for and the options to use.",
        epilog="Examples:\n"
        "  arena certs --out certs --host referee.example.org --host 203.0.113.7\n"
        "  arena certs --out certs --host 127.0.0.1 --client arena --client alice-bot\n",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the files (created if missing)")
    p.add_argument("--host", action="append", default=[], metavar="NAME",
                   help="a DNS name or IP address the clients use to reach the referee (repeatable; default "
                   f"{', '.join(DEFAULT_HOSTS)}: this machine only)")
    p.add_argument("--client", action="append", default=[], metavar="NAME",
                   help="make a client certificate for mutual TLS (repeatable: the arena, each remote bot)")
    p.add_argument("--days", type=int, default=CERT_DAYS, metavar="N",
                   help=f"validity of the server and client certificates (default {CERT_DAYS}; the CA's: {CA_DAYS})")
    p.set_defaults(handler=run)


def _q(path: Path) -> str:
    return shlex.quote(str(path))


def usage_text(pki: Pki, hosts: list[str]) -> str:
    """What each file is for, and the options of the server and its clients that use them."""
    width = max(len(str(f.path)) for f in pki.files)
    lines = ["Wrote:"]
    lines += [f"  {f.path!s:<{width}}  {'(0600) ' if f.secret else ''}{f.what}" for f in pki.files]
    host = next((h for h in hosts if h not in ("::1",)), "localhost")
    mutual = f" --tls-client-ca {_q(pki.ca)}" if pki.clients else ""
    lines += ["", "The referee (the certificate names " + ", ".join(hosts) + "):",
              f"  arena serve --listen 0.0.0.0:50051 --tls-cert {_q(pki.server_cert)} --tls-key {_q(pki.server_key)}"
              + mutual,
              "  (or referee serve with the same options)", "", "Its clients trust the CA:"]
    cert = ""
    if pki.clients:
        name, c, k = pki.clients[0]
        cert = f" --tls-cert {_q(c)} --tls-key {_q(k)}"
        lines.append(f"  (mutual TLS: each shows its own certificate; shown here with {name}'s)")
    lines += [f"  arena tournament --referee {host}:50051 --ca {_q(pki.ca)}{cert} --operator-token-file FILE …",
              f"  arena operator --referee {host}:50051 --ca {_q(pki.ca)}{cert} --operator-token-file FILE list",
              f"  a Python kit bot: --referee {host}:50051 --ca {_q(pki.ca)}{cert} --token TOKEN",
              "Copy ca.pem to every client; a private key stays on the machine that uses it."]
    if not pki.clients:
        lines.append("For mutual TLS, make the set again in a new folder with --client NAME for each client.")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``arena certs``."""
    hosts = list(args.host) or list(DEFAULT_HOSTS)
    try:
        pki = make_certs(args.out, hosts, args.client, days=args.days)
    except CertError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"--out {args.out}: {e.strerror or e}") from None
    print(usage_text(pki, hosts))
    return EXIT_OK
