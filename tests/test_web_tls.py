"""The live web over TLS, as users run it: ``arena serve --web`` as a real process with the
certificates of ``arena certs`` (the referee's by default, or the web's own), fetched with the
stdlib's ``ssl`` and ``urllib`` trusting the CA: HTTPS answers with ``Strict-Transport-Security``,
HTTP/2 is offered, the operator's cookie is ``Secure``, clear HTTP to that port and a client that
does not trust the CA fail; and the refusals (one line, exit 2, nothing created): a non-loopback
``--web`` without TLS unless ``--insecure``, half a pair of files, an unreadable file, a key
that is not the certificate's."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from arena.certs import make_certs
from arena.web.limits import WebLimits
from referee.lowlevel import OPERATOR_TOKEN_ENV
from tests._wait import HANG_S

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != OPERATOR_TOKEN_ENV}, "PYTHONPATH": str(ROOT)}
ARENA = [sys.executable, "-m", "arena.cli"]
READ_S = 30.0
"""How long one request may take (a socket timeout, not an assertion on speed)."""


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two PKIs from ``arena certs``' code (the names of this machine): the one served, and
    another whose key belongs to no certificate of the first."""
    root = tmp_path_factory.mktemp("certs")
    make_certs(root / "a")
    make_certs(root / "b")
    return root / "a", root / "b"


def _start(cwd: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """``arena serve`` with ``args``; the process and the line it prints once its live web
    serves, from the address on (``URL`` and what it says of the operator's door)."""
    proc = subprocess.Popen([*ARENA, "serve", "--listen", "127.0.0.1:0", "--dir", "srv", *args], cwd=cwd, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("live web on "):
            return proc, line.removeprefix("live web on ").strip()
    raise AssertionError(f"arena serve ended (exit {proc.wait()}) without serving its web")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=HANG_S)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_: object) -> None:
        return None


def _get(url: str, context: ssl.SSLContext | None, data: bytes | None = None) -> http.client.HTTPResponse:
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _NoRedirect())
    try:
        reply: http.client.HTTPResponse = opener.open(urllib.request.Request(url, data=data), timeout=READ_S)
    except urllib.error.HTTPError as e:  # (a 303 not followed)
        return e  # type: ignore[return-value]
    return reply


@pytest.mark.parametrize("own_files", [False, True], ids=["the-referee-certificate", "web-tls-cert"])
def test_arena_serve_web_over_tls(tmp_path: Path, certs: tuple[Path, Path], own_files: bool) -> None:
    pki, _ = certs
    files = (["--web-tls-cert", str(pki / "server.pem"), "--web-tls-key", str(pki / "server.key")] if own_files
             else ["--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key")])
    proc, url = _start(tmp_path, "--web", "127.0.0.1:0", *files)
    try:
        assert url.startswith("https://127.0.0.1:")
        port = int(url.rsplit(":", 1)[1])
        trusting = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        reply = _get(url + "/api/standings", trusting)
        assert reply.status == 200 and json.loads(reply.read()) == {"standings": []}
        assert reply.headers["Strict-Transport-Security"] == f"max-age={WebLimits().hsts_max_age_s}"
        assert reply.headers["Content-Security-Policy"]  # (the other security headers as before)

        # The operator's sign-in over TLS: the cookie is Secure (and still HttpOnly, SameSite=Strict).
        token = (tmp_path / "srv" / "operator-token").read_text().strip()
        signed = _get(url + "/signin", trusting, f"token={token}".encode())
        assert signed.status == 303
        cookie = signed.headers["Set-Cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie and token not in cookie
        assert signed.headers["Strict-Transport-Security"]

        # HTTP/2 is offered (ALPN), as Hypercorn serves it over TLS.
        alpn = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        alpn.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection(("127.0.0.1", port), timeout=READ_S) as raw, \
                alpn.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.selected_alpn_protocol() == "h2"

        # Clear HTTP to that port gets no answer; a client that does not trust the CA refuses it.
        with pytest.raises((http.client.HTTPException, ConnectionError, urllib.error.URLError)):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/standings", timeout=READ_S)
        with pytest.raises(urllib.error.URLError) as untrusted:
            _get(url + "/api/standings", ssl.create_default_context())
        assert isinstance(untrusted.value.reason, ssl.SSLCertVerificationError)
    finally:
        _stop(proc)
    assert proc.returncode == 0


def test_arena_serve_web_off_loopback_needs_tls_or_insecure(tmp_path: Path, certs: tuple[Path, Path]) -> None:
    pki, _ = certs
    refused = subprocess.run([*ARENA, "serve", "--dir", "srv", "--web", "0.0.0.0:0"], cwd=tmp_path, env=ENV,
                             capture_output=True, text=True, timeout=HANG_S)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "arena: --web 0.0.0.0:0 is not a loopback address: the operator's token and sign-in cookie would cross the "
        "network in clear; serve TLS (--web-tls-cert FILE --web-tls-key FILE; arena certs makes them) or, on a "
        "network you trust, add --insecure"]
    assert not (tmp_path / "srv").exists()
    tournament = subprocess.run(
        [*ARENA, "tournament", "--bot", 'name=a cmd="{python} -m sample_bots.random_bot"', "--bot",
         'name=b cmd="{python} -m sample_bots.random_bot"', "--games", "2", "--out", "run", "--web", "0.0.0.0:0"],
        cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=HANG_S)
    assert tournament.returncode == 2 and refused.stderr in tournament.stderr
    assert not (tmp_path / "run").exists()

    proc, said = _start(tmp_path, "--web", "0.0.0.0:0", "--insecure")  # clear, on a network the operator trusts
    try:
        url, _, door = said.partition(" ")
        assert url.startswith("http://0.0.0.0:") and door == "(operator sign-in off: not a loopback address and no TLS)"
        reply = _get(f"http://127.0.0.1:{url.rsplit(':', 1)[1]}/api/standings", None)
        assert reply.status == 200 and "Strict-Transport-Security" not in reply.headers
    finally:
        _stop(proc)
    proc, url = _start(tmp_path, "--web", "0.0.0.0:0", "--web-tls-cert", str(pki / "server.pem"),
                       "--web-tls-key", str(pki / "server.key"))
    try:
        assert url.startswith("https://0.0.0.0:") and " " not in url  # (the door open: TLS)
        reply = _get(f"https://127.0.0.1:{url.rsplit(':', 1)[1]}/api/standings",
                     ssl.create_default_context(cafile=str(pki / "ca.pem")))
        assert reply.status == 200 and reply.headers["Strict-Transport-Security"]
    finally:
        _stop(proc)


def test_bad_web_tls_files_are_one_line_before_anything_starts(tmp_path: Path, certs: tuple[Path, Path]) -> None:
    pki, other = certs
    cert, key = str(pki / "server.pem"), str(pki / "server.key")
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    cases = [
        (["--web-tls-cert", cert], "arena: give both --web-tls-cert and --web-tls-key (the live web's certificate "
                                    "and its key)"),
        (["--web-tls-cert", "missing.pem", "--web-tls-key", key],
         "arena: --web-tls-cert missing.pem: cannot read the file (No such file or directory)"),
        (["--web-tls-cert", cert, "--web-tls-key", str(other / "server.key")],
         f"arena: --web-tls-cert {cert}, --web-tls-key {other / 'server.key'}: the key does not belong to the "
         "certificate"),
        (["--tls-cert", cert, "--tls-key", str(other / "server.key")],
         f"arena: --tls-cert {cert}, --tls-key {other / 'server.key'}: the key does not belong to the certificate"),
        (["--web-tls-cert", "junk.pem", "--web-tls-key", key], "arena: --web-tls-cert junk.pem, --web-tls-key "
                                                               f"{key}: not a PEM certificate and its private key"),
    ]
    for extra, said in cases:
        done = subprocess.run([*ARENA, "serve", "--dir", "srv", "--web", "127.0.0.1:0", *extra], cwd=tmp_path,
                              env=ENV, capture_output=True, text=True, timeout=HANG_S)
        assert done.returncode == 2, (extra, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(said), (extra, lines)
        assert not (tmp_path / "srv").exists()
