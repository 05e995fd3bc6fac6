"""TLS for the referee's port and for its clients, and the one-line error of a port that cannot
be bound: a server's certificate and key (optionally a client CA: mutual TLS), a client's
``--tls`` with an optional ``--ca FILE`` (default: the system's root certificates)."""

from __future__ import annotations

import argparse
import errno
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc


class ListenError(OSError):
    """The server cannot listen on its address (in use, or not this machine's)."""


class TLSConfigError(ValueError):
    """A certificate, key or CA file that cannot be read."""


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise TLSConfigError(f"cannot read the {what} {path}: {e.strerror or e}") from None


@dataclass(frozen=True, slots=True)
class ServerTLS:
    """A TLS server's files (PEM)."""

    cert: str
    """The server's certificate chain."""
    key: str
    """The server's private key."""
    client_ca: str = ""
    """CA certificates that client certificates must chain to (mutual TLS); empty: clients
    need no certificate."""

    def credentials(self) -> grpc.ServerCredentials:
        """The gRPC server credentials (the files are read now)."""
        pair = (_read(self.key, "TLS key"), _read(self.cert, "TLS certificate"))
        ca = _read(self.client_ca, "client CA") if self.client_ca else None
        return grpc.ssl_server_credentials([pair], root_certificates=ca, require_client_auth=ca is not None)


@dataclass(frozen=True, slots=True)
class ClientTLS:
    """How a client checks the referee's certificate (and, for mutual TLS, shows its own)."""

    ca: str = ""
    """CA certificates to trust (PEM); empty: the system's root certificates."""
    cert: str = ""
    """The client's certificate chain, for a referee that asks for one (mutual TLS)."""
    key: str = ""
    """The client certificate's private key."""

    def credentials(self) -> grpc.ChannelCredentials:
        """The gRPC channel credentials (the files are read now)."""
        ca = _read(self.ca, "CA file") if self.ca else None
        key = _read(self.key, "TLS client key") if self.key else None
        cert = _read(self.cert, "TLS client certificate") if self.cert else None
        return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)


def client_tls(enabled: bool, ca: str = "", cert: str = "", key: str = "") -> ClientTLS | None:
    """A client's TLS settings from its options (``--ca`` alone implies ``--tls``)."""
    return ClientTLS(ca, cert, key) if enabled or ca or cert else None


def open_channel(target: str, tls: ClientTLS | None, options: Sequence[tuple[str, Any]] = ()) -> grpc.aio.Channel:
    """A grpc.aio channel to ``target``: plaintext, or TLS as ``tls`` says."""
    if tls is None:
        return grpc.aio.insecure_channel(target, options=list(options))
    return grpc.aio.secure_channel(target, tls.credentials(), options=list(options))


def server_tls_from_args(args: argparse.Namespace) -> ServerTLS | None:
    """``--tls-cert/--tls-key/--tls-client-ca`` as settings (``TLSConfigError`` if half given)."""
    if not args.tls_cert and not args.tls_key:
        if args.tls_client_ca:
            raise TLSConfigError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if not args.tls_cert or not args.tls_key:
        raise TLSConfigError("give both --tls-cert and --tls-key")
    return ServerTLS(str(args.tls_cert), str(args.tls_key), str(args.tls_client_ca or ""))


def add_server_tls_options(p: argparse.ArgumentParser) -> None:
    """The TLS options of ``referee serve`` and ``arena serve``."""
    g = p.add_argument_group("TLS")
    g.add_argument("--tls-cert", type=Path, default=None, metavar="FILE", help="serve TLS with this certificate (PEM)")
    g.add_argument("--tls-key", type=Path, default=None, metavar="FILE", help="the certificate's private key (PEM)")
    g.add_argument("--tls-client-ca", type=Path, default=None, metavar="FILE",
                   help="mutual TLS: clients must show a certificate signed by this CA (PEM)")


def check_can_listen(host: str, port: int) -> None:
    """Raise :class:`ListenError` if ``host:port`` is already in use (port 0: nothing to check).
    Called before a command creates anything, so that a busy port leaves nothing behind."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise ListenError(f"cannot listen on {host}:{port}: {e}") from None
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            why = "the address is already in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
            raise ListenError(f"cannot listen on {host}:{port}: {why}") from None


def bind(server: grpc.aio.Server, host: str, port: int, tls: ServerTLS | None) -> int:
    """Add the server's port; the port bound (``ListenError`` if none)."""
    address = f"{host}:{port}"
    try:
        bound = server.add_secure_port(address, tls.credentials()) if tls else server.add_insecure_port(address)
    except RuntimeError:
        bound = 0
    if not bound:
        raise ListenError(f"cannot listen on {address}: the address is in use or not this machine's")
    return bound
