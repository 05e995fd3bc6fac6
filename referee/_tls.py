"""TLS for the referee's port and for its clients, and the one-line error of a port that cannot
be bound: a server's certificate and key (optionally a client CA: mutual TLS), a client's
``--tls`` with an optional ``--ca FILE`` (default: the system's root certificates)."""

from __future__ import annotations

import argparse
import errno
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc


class ListenError(OSError):
    """The server cannot listen on its address (in use, or not this machine's)."""


class TLSConfigError(ValueError):
    """A certificate, key or CA file that cannot be read."""


class ClientConfigError(ConnectionError):
    """The referee was reached and refuses how the client came (TLS or not, its certificate, a
    client certificate, the operator token): the client's command line must change."""


PROBE_TIMEOUT_S = 3.0
"""How long :func:`tls_probe` waits for a connection, a handshake, or a TLS alert after it."""

ProbeAnswer = str
"""What :func:`tls_probe` found: ``tls``, ``tls-untrusted: WHY``, ``tls-needs-client-cert``,
``plain`` or ``""`` (nothing answered: the server may not be up yet)."""


def tls_probe(target: str, tls: ClientTLS | None = None, timeout_s: float = PROBE_TIMEOUT_S) -> ProbeAnswer:
    """Whether the server at ``target`` (``HOST:PORT``) speaks TLS, found with a TLS handshake of
    our own: a plaintext server answers a ClientHello with bytes that are no TLS record (or hangs
    up); a TLS server completes it, or sends an alert. With ``tls`` (the client's own settings):
    whether its ``ca`` verifies the server's certificate, and whether the server asks for a client
    certificate the client does not show (mutual TLS: an alert right after the handshake)."""
    host, _, port = target.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout_s)
    except (OSError, ValueError):
        return ""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    if tls is not None:  # (as the client's channel checks the certificate)
        context.check_hostname = True
        context.verify_mode = ssl.CERT_REQUIRED
        try:
            context.load_verify_locations(tls.ca) if tls.ca else context.load_default_certs()
            if tls.cert and tls.key:
                context.load_cert_chain(tls.cert, tls.key)
        except (OSError, ssl.SSLError):  # (unreadable files: the channel says so itself)
            sock.close()
            return ""
    try:
        with context.wrap_socket(sock, server_hostname=host) as wrapped:
            # An HTTP/2 server speaks first (its SETTINGS); one that hangs up (or sends an alert)
            # right after the handshake did not take the client's certificate, or its lack of one.
            try:
                first = wrapped.recv(1)
            except ssl.SSLError as e:
                return "tls-needs-client-cert" if "CERTIFICATE" in str(e).upper() else "tls"
            except OSError:  # (a timeout: it waits for our preface)
                return "tls"
            return "tls" if first else "tls-needs-client-cert"
    except ssl.SSLCertVerificationError as e:
        return f"tls-untrusted: {e.verify_message}"
    except ssl.SSLError as e:
        reason = str(getattr(e, "reason", "") or e).upper()
        if "CERTIFICATE_REQUIRED" in reason:
            return "tls-needs-client-cert"
        return "tls" if "ALERT" in reason else "plain"
    except OSError:  # (hung up on the ClientHello)
        return "plain"
    finally:
        sock.close()


def tls_mismatch(target: str, tls: ClientTLS | None, answer: ProbeAnswer) -> str:
    """Why a client with ``tls`` cannot talk to the server at ``target`` that :func:`tls_probe`
    found ``answer`` (``""``: nothing wrong with TLS found)."""
    where = f"the referee at {target}"
    if tls is None and answer.startswith("tls"):
        return (f"{where} speaks TLS: give --ca FILE (the CA certificate that signed its certificate), or --tls "
                "if a CA this system trusts signed it")
    if tls is not None and answer == "plain":
        return f"{where} does not speak TLS (it is plaintext): leave out --tls, --ca and --tls-cert/--tls-key"
    if tls is not None and answer.startswith("tls-untrusted"):
        return (f"{where} speaks TLS, but its certificate is not trusted ({answer.partition(': ')[2]}): give "
                "--ca FILE with the CA certificate that signed it")
    if tls is not None and answer == "tls-needs-client-cert":
        if not tls.cert:
            return f"{where} asks for a client certificate (mutual TLS): give --tls-cert FILE and --tls-key FILE"
        return (f"{where} hung up after the TLS handshake: it does not accept the client certificate "
                f"{tls.cert} (mutual TLS: it must be signed by the CA the referee trusts)")
    return ""


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
