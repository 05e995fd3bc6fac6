"""Operator credentials: every ``RefereeService`` call carries ``authorization: Bearer <token>``.

The operator token is a secret of whoever runs the referee (the arena, an organiser); bots never
see it. Seat and bot tokens open seats on ``BotService`` only and carry no operator rights. A
server reads its token from a file (created with 256 random bits, mode 0600, at its first start)
or from :data:`OPERATOR_TOKEN_ENV`; an embedded referee keeps a fresh one in memory. A token file
that others may read, or that git tracks (so that everyone with the source holds it), is refused
with an error naming the file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

OPERATOR_TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
"""The environment variable that may hold the operator token (instead of a token file)."""
DEFAULT_TOKEN_FILE = "operator-token"
"""The token file's name in a server's directory when no ``--operator-token-file`` is given."""
OPERATOR_SERVICE = "/gin_arena.v2.RefereeService/"
"""The method prefix of the operator service: every call under it needs the operator token."""
PUBLIC_METHODS = frozenset({OPERATOR_SERVICE + "WatchMatch"})
"""The calls ``public_watch`` opens to anyone (they carry public information only)."""


def new_operator_token() -> str:
    """256 random bits as 64 hex digits (safe on a command line and in gRPC metadata)."""
    return secrets.token_hex(32)


def operator_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata that carries an operator token."""
    return (("authorization", f"Bearer {token}"),)


@dataclass(frozen=True, slots=True)
class OperatorToken:
    """An operator token and where it came from."""

    token: str
    """The secret itself."""
    source: str
    """Where it is, for humans: a file's path, or the environment variable's name."""
    created: bool = False
    """Whether the file was created just now."""

    def describe(self) -> str:
        """One line saying where the token is (never the token)."""
        if self.created:
            return f"operator token: created {self.source} (mode 0600)"
        return f"operator token: {self.source}"


class TokenFileError(Exception):
    """A token file that cannot be read or created, is empty, is readable by others or is
    tracked by git."""


PUBLISHED_TOKEN_DIGESTS = frozenset({
    # The token that stood in this repository's history as ``operator-token`` (until 0.1.x):
    # everyone with the source has it, so no server may accept it.
    "999e9f104a9d5e3cc20c8ff97e4a79066ec0211dbed37853d7047fb71f838d8f",
})
"""SHA-256 digests (hex) of tokens known to be public: a server refuses to run with one."""


def _is_tracked_by_git(path: Path) -> bool:
    """Whether ``path`` is a file that a git checkout tracks (``False`` without git or a checkout)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(path.parent), "ls-files", "--error-unmatch", "--", path.name],
            capture_output=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def check_token_file(path: Path) -> None:
    """Refuses a token file that is not the server's secret alone: readable or writable by its
    group or others, or tracked by git (committed, so everyone with the source holds it)."""
    path = path.resolve()
    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise TokenFileError(f"cannot read the operator token file {path}: {e.strerror or e}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenFileError(
            f"the operator token file {path} has mode {stat.filemode(mode)}: others may read it; "
            f"make it the owner's alone (chmod 600 {path}) and, if anyone else has read it, "
            f"delete it so that the server creates a new token"
        )
    if _is_tracked_by_git(path):
        raise TokenFileError(
            f"the operator token file {path} is tracked by git, so everyone with the source holds "
            f"the token: remove it from the repository (git rm --cached {path.name}), delete the "
            f"file so that the server creates a new token, and keep token files out of the tree"
        )


def _check_not_published(token: str, source: str) -> None:
    if hashlib.sha256(token.encode()).hexdigest() in PUBLISHED_TOKEN_DIGESTS:
        raise TokenFileError(f"{source}: this operator token was published with the source code; make a new one")


def _read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"cannot read the operator token file {path}: {e}") from None
    if len(token) < 16 or not token.isprintable() or " " in token:
        raise TokenFileError(f"{path}: an operator token must be one word of at least 16 characters")
    _check_not_published(token, str(path))
    return token


def read_or_create_token_file(path: Path) -> OperatorToken:
    """The token in ``path``; a missing file is created with a new token, mode 0600 (the
    server's first start). An existing file must pass :func:`check_token_file`."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        check_token_file(path)
        return OperatorToken(_read_token(path), str(path.resolve()))
    except OSError as e:
        raise TokenFileError(f"cannot create the operator token file {path}: {e.strerror or e}") from None
    token = new_operator_token()
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token + "\n")
    return OperatorToken(token, str(path.resolve()), created=True)


def resolve_operator_token(token_file: Path | None, default_file: Path) -> OperatorToken:
    """A server's operator token: ``token_file`` if given, else :data:`OPERATOR_TOKEN_ENV` if
    set, else ``default_file`` (created if missing)."""
    if token_file is not None:
        return read_or_create_token_file(token_file)
    from_env = os.environ.get(OPERATOR_TOKEN_ENV, "").strip()
    if from_env:
        if len(from_env) < 16:
            raise TokenFileError(f"{OPERATOR_TOKEN_ENV} must hold at least 16 characters")
        _check_not_published(from_env, OPERATOR_TOKEN_ENV)
        return OperatorToken(from_env, f"from the environment variable {OPERATOR_TOKEN_ENV}")
    return read_or_create_token_file(default_file)


def client_operator_token(token_file: Path | None) -> str:
    """The operator token a client (the arena's remote backend) presents: ``token_file``'s, else
    :data:`OPERATOR_TOKEN_ENV`'s; ``""`` if neither is given. A client never creates a file."""
    if token_file is not None:
        return _read_token(token_file)
    return os.environ.get(OPERATOR_TOKEN_ENV, "").strip()


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _refusal(metadata: Sequence[tuple[str, Any]] | None, expected: bytes) -> tuple[grpc.StatusCode, str] | None:
    """Why a call's metadata does not carry the operator token (``None``: it does)."""
    values = [v for k, v in (metadata or ()) if k == "authorization"]
    if not values:
        return grpc.StatusCode.UNAUTHENTICATED, "the operator service needs 'authorization: Bearer <operator token>'"
    value = values[0].decode("latin-1") if isinstance(values[0], bytes) else str(values[0])
    scheme, _, given = value.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return grpc.StatusCode.UNAUTHENTICATED, "the authorization metadata must be 'Bearer <operator token>'"
    if not hmac.compare_digest(_digest(given.strip()), expected):  # constant time, equal lengths
        return grpc.StatusCode.PERMISSION_DENIED, "this token carries no operator rights"
    return None


def _refusing_handler(
    handler: grpc.RpcMethodHandler[Any, Any], code: grpc.StatusCode, detail: str
) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same kind as ``handler`` that refuses the call."""

    async def refuse_unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(code, detail)

    async def refuse_stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(code, detail)
        yield  # pragma: no cover - abort raises

    kinds = {"request_deserializer": handler.request_deserializer, "response_serializer": handler.response_serializer}
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(refuse_stream, **kinds)
    return grpc.unary_unary_rpc_method_handler(refuse_unary, **kinds)


if TYPE_CHECKING:
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:  # not subscriptable at run time
    _Interceptor = grpc.aio.ServerInterceptor


class OperatorAuth(_Interceptor):
    """Refuses every operator call that lacks the operator token (``public_watch``: watching is
    open to anyone): the calls of ``RefereeService`` and of each service :meth:`guard` adds.
    Other services (bots, health, reflection) pass untouched."""

    def __init__(self, token: str, *, public_watch: bool = False) -> None:
        self._expected = _digest(token)
        self._public = PUBLIC_METHODS if public_watch else frozenset()
        self._guarded: tuple[str, ...] = (OPERATOR_SERVICE,)

    def guard(self, service: str) -> None:
        """Guard every call of ``service`` too (its full name, ``package.Service``)."""
        self._guarded = (*self._guarded, f"/{service}/")

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method: str = handler_call_details.method
        handler = await continuation(handler_call_details)
        if handler is None or not method.startswith(self._guarded) or method in self._public:
            return handler
        refusal = _refusal(handler_call_details.invocation_metadata, self._expected)
        return handler if refusal is None else _refusing_handler(handler, *refusal)
