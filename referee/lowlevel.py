"""The referee's plumbing that the arena shares: the second layer of its public surface.

``referee`` (the package) holds what a game author, a bot author or the arena relies on and keeps
it stable; this module holds what the arena needs to *host* the referee beside it: command-line
option helpers (``--limit``, the operator token, TLS), the operator token's file and metadata,
GC tuning for a server process, logging set-up, the protobuf enum maps and request builders, the
match flow a people's table drives seat by seat, the presence directory of hosted bots, atomic
file writes. These may change together with the arena; docs/referee-api.md lists them and
tests/test_referee_exports.py pins the list.

Loaded lazily, like ``referee``: ``import referee.lowlevel`` pulls in no grpc, trio or structlog.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cli import add_limit_option as add_limit_option
    from .cli import add_operator_options as add_operator_options
    from .model.presence import BotDirectory as BotDirectory
    from .model.presence import BotPresence as BotPresence
    from .model.replay import write_atomic as write_atomic
    from .play.launch import RESTART_HELP as RESTART_HELP
    from .play.launch import restart_after as restart_after
    from .play.pool import MAX_CRASHES as MAX_CRASHES
    from .play.pool import BotPool as BotPool
    from .table.events import MatchEvents as MatchEvents
    from .table.faults import GOODBYE as GOODBYE
    from .table.faults import is_goodbye as is_goodbye
    from .table.finished import FinishedMatch as FinishedMatch
    from .table.finished import HeldMatch as HeldMatch
    from .table.flow import Table as Table
    from .transport.auth import DEFAULT_TOKEN_FILE as DEFAULT_TOKEN_FILE
    from .transport.auth import OPERATOR_TOKEN_ENV as OPERATOR_TOKEN_ENV
    from .transport.auth import TokenFileError as TokenFileError
    from .transport.auth import client_operator_token as client_operator_token
    from .transport.auth import operator_metadata as operator_metadata
    from .transport.auth import resolve_operator_token as resolve_operator_token
    from .transport.logs import configure_logging as configure_logging
    from .transport.server import tune_gc_for_server as tune_gc_for_server
    from .transport.service import LIST_AFTER_KEY as LIST_AFTER_KEY
    from .transport.service import LIST_LEFT_OFF_KEY as LIST_LEFT_OFF_KEY
    from .transport.tls import add_server_tls_options as add_server_tls_options
    from .transport.tls import check_can_listen as check_can_listen
    from .transport.tls import client_tls as client_tls
    from .transport.tls import server_tls_from_args as server_tls_from_args
    from .wire.envelope import FAULT_POLICY_FROM_PB as FAULT_POLICY_FROM_PB
    from .wire.envelope import FAULT_POLICY_TO_PB as FAULT_POLICY_TO_PB
    from .wire.envelope import create_match_request as create_match_request
    from .wire.envelope import match_report_from_proto as match_report_from_proto

    ENCODERS_COMPILED: bool
    """Whether the byte encoders run compiled by mypyc (``referee.wire.envelope.COMPILED``)."""

_LAZY = {
    "add_limit_option": "cli", "add_operator_options": "cli",
    "BotDirectory": "model.presence", "BotPresence": "model.presence",
    "write_atomic": "model.replay",
    "RESTART_HELP": "play.launch", "restart_after": "play.launch",
    "BotPool": "play.pool", "MAX_CRASHES": "play.pool",
    "MatchEvents": "table.events",
    "GOODBYE": "table.faults", "is_goodbye": "table.faults",
    "FinishedMatch": "table.finished", "HeldMatch": "table.finished",
    "Table": "table.flow",
    "DEFAULT_TOKEN_FILE": "transport.auth", "OPERATOR_TOKEN_ENV": "transport.auth",
    "TokenFileError": "transport.auth", "client_operator_token": "transport.auth",
    "operator_metadata": "transport.auth", "resolve_operator_token": "transport.auth",
    "configure_logging": "transport.logs",
    "tune_gc_for_server": "transport.server",
    "LIST_AFTER_KEY": "transport.service", "LIST_LEFT_OFF_KEY": "transport.service",
    "add_server_tls_options": "transport.tls", "check_can_listen": "transport.tls", "client_tls": "transport.tls",
    "server_tls_from_args": "transport.tls",
    "ENCODERS_COMPILED": "wire.envelope:COMPILED", "FAULT_POLICY_FROM_PB": "wire.envelope",
    "FAULT_POLICY_TO_PB": "wire.envelope", "create_match_request": "wire.envelope",
    "match_report_from_proto": "wire.envelope",
}
"""Each plumbing name: the module that defines it (``module:attribute`` where the name differs)."""
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'referee.lowlevel' has no attribute {name!r}")
    module, _, attribute = module.partition(":")
    value = getattr(importlib.import_module(f"referee.{module}"), attribute or name)
    globals()[name] = value
    return value
