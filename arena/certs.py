"""A private certificate authority for a referee's TLS: ``arena certs --out DIR``.

One CA signs a server certificate (for the host names and IP addresses the clients use) and
client certificates for mutual TLS (the arena, each bot). Keys are ECDSA P-256, written mode
0600; nothing is overwritten. Made with the ``cryptography`` package.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
"""How long the CA's certificate is valid, in days (default)."""
CERT_DAYS = 825
"""How long a server or client certificate is valid, in days (default; the longest that common
TLS clients accept for a server)."""
DEFAULT_HOSTS = ("localhost", "127.0.0.1", "::1")
"""The names a server certificate covers when no ``--host`` is given: this machine only."""
CLOCK_SKEW = datetime.timedelta(minutes=5)
"""How far before now a certificate's validity starts (machines' clocks differ)."""
_CLIENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HOST_NAME = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?")


class CertError(ValueError):
    """A bad host or client name, or a file that already exists (nothing was written)."""


@dataclass(frozen=True, slots=True)
class MadeFile:
    """One file ``arena certs`` wrote."""

    path: Path
    """Where it is."""
    what: str
    """What it is for, in a few words."""
    secret: bool
    """A private key (mode 0600: keep it on the machine that uses it)."""


@dataclass(frozen=True, slots=True)
class Pki:
    """The files of one ``arena certs`` run."""

    ca: Path
    """The CA's certificate: what clients trust (``--ca``) and, for mutual TLS, what the server
    checks client certificates against (``--tls-client-ca``)."""
    ca_key: Path
    """The CA's private key (only needed to issue more certificates)."""
    server_cert: Path
    """The server's certificate (``--tls-cert``)."""
    server_key: Path
    """Its private key (``--tls-key``)."""
    clients: tuple[tuple[str, Path, Path], ...]
    """Each client's name, certificate and key (``--tls-cert``/``--tls-key`` of a client)."""
    files: tuple[MadeFile, ...]
    """Every file written, in order."""


def check_host(name: str) -> x509.GeneralName:
    """A ``--host`` as a subject alternative name: an IP address or a DNS name."""
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        pass
    if not _HOST_NAME.fullmatch(name) or len(name) > 253:
        raise CertError(f"--host {name!r}: not a host name or an IP address")
    return x509.DNSName(name.rstrip(".").lower())


def check_client(name: str) -> str:
    """A ``--client`` name (it names the files: letters, digits, ``.``, ``_``, ``-``)."""
    if not _CLIENT_NAME.fullmatch(name):
        raise CertError(f"--client {name!r}: use letters, digits, '.', '_' and '-' (at most 64), "
                        "starting with a letter or digit")
    return name


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Gin Arena"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, days: int,
             now: datetime.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - CLOCK_SKEW)
            .not_valid_after(now + datetime.timedelta(days=days)))


def _leaf(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, common: str, days: int, now: datetime.datetime,
          usage: x509.ObjectIdentifier, names: Sequence[x509.GeneralName]) -> tuple[bytes, bytes]:
    key = _key()
    b = (_builder(_name(common), ca.subject, key, days, now)
         .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                      data_encipherment=False, key_agreement=True, key_cert_sign=False,
                                      crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
         .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
         .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False))
    if names:
        b = b.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    cert = b.sign(ca_key, hashes.SHA256())
    return _pem(cert), _key_pem(key)


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write_new(path: Path, data: bytes, secret: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if secret else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    if secret:
        os.chmod(path, 0o600)  # whatever the umask


def planned(out: Path, clients: Sequence[str]) -> Pki:
    """The files a run writes into ``out`` (none written yet)."""
    pairs = tuple((c, out / f"client-{c}.pem", out / f"client-{c}.key") for c in clients)
    files = [MadeFile(out / "ca.pem", "the CA's certificate: clients trust it (--ca); with mutual TLS the "
                      "server checks clients against it (--tls-client-ca)", False),
             MadeFile(out / "ca.key", "the CA's private key: only to issue more certificates; keep it offline", True),
             MadeFile(out / "server.pem", "the referee's certificate (--tls-cert)", False),
             MadeFile(out / "server.key", "the referee's private key (--tls-key); stays on the referee's machine",
                      True)]
    for name, cert, key in pairs:
        files += [MadeFile(cert, f"client {name}'s certificate, for mutual TLS (--tls-cert)", False),
                  MadeFile(key, f"client {name}'s private key (--tls-key); stays with that client", True)]
    return Pki(out / "ca.pem", out / "ca.key", out / "server.pem", out / "server.key", pairs, tuple(files))


def make_certs(out: Path, hosts: Sequence[str] = DEFAULT_HOSTS, clients: Sequence[str] = (), *,
               days: int = CERT_DAYS, ca_days: int = CA_DAYS) -> Pki:
    """A CA, a server certificate for ``hosts`` and a certificate per client, written into
    ``out`` (created, mode 0700, if missing). :class:`CertError` before anything is written if
    a name is bad or a file exists."""
    names = [check_host(h) for h in (hosts or DEFAULT_HOSTS)]
    clients = [check_client(c) for c in clients]
    if len(set(clients)) != len(clients):
        raise CertError("--client: a name is given twice")
    if days < 1 or ca_days < days:
        raise CertError(f"--days {days}: at least 1, and at most the CA's {ca_days}")
    pki = planned(out, clients)
    if existing := [str(f.path) for f in pki.files if f.path.exists()]:
        raise CertError(f"{', '.join(existing)}: already there; nothing was written (choose another --out, "
                        "or move the old files away)")
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = _key()
    ca_name = _name("Gin Arena private CA")
    ca = (_builder(ca_name, ca_name, ca_key, ca_days, now)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    blobs = [_pem(ca), _key_pem(ca_key),
             *_leaf(ca, ca_key, str(hosts[0] if hosts else DEFAULT_HOSTS[0]), days, now,
                    ExtendedKeyUsageOID.SERVER_AUTH, names)]
    for name in clients:
        blobs += _leaf(ca, ca_key, name, days, now, ExtendedKeyUsageOID.CLIENT_AUTH, [])
    for made, data in zip(pki.files, blobs, strict=True):
        _write_new(made.path, data, made.secret)
    return pki
